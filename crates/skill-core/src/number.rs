//! Numbers as JSON and JavaScript print them: a JavaScript number is a
//! double, and an integral one prints without a fraction (`5`, not `5.0`).

/// The largest magnitude below which every integer is a double exactly
/// (2^53).
const EXACT: f64 = 9_007_199_254_740_992.0;

/// `n` as an `i64` when it is an integer a double holds exactly (at most
/// 2^53 in magnitude), so that it can be written as JavaScript writes it;
/// `None` for fractions, larger magnitudes, infinities and NaN. Negative
/// zero reads as `0`, as JavaScript prints it.
///
/// ```
/// use skill_core::exact_integer;
///
/// assert_eq!(exact_integer(5.0), Some(5));
/// assert_eq!(exact_integer(-0.0), Some(0));
/// assert_eq!(exact_integer(0.5), None);
/// assert_eq!(exact_integer(1e21), None);
/// assert_eq!(exact_integer(f64::NAN), None);
/// ```
pub fn exact_integer(n: f64) -> Option<i64> {
    // The cast is exact: the value is integral and within ±2^53.
    #[allow(clippy::cast_possible_truncation)]
    (n.fract() == 0.0 && n.abs() <= EXACT).then_some(n as i64)
}

/// Serialize `n` as `JSON.stringify` writes a JavaScript number: an
/// integral one without a fraction (`1`, not `1.0`), another finite one as
/// it is, and NaN or an infinity as `null`. For `#[serde(serialize_with)]`
/// (serde passes the field by reference).
///
/// ```
/// #[derive(serde::Serialize)]
/// struct View {
///     #[serde(serialize_with = "skill_core::js_number")]
///     iteration: f64,
/// }
/// assert_eq!(serde_json::to_string(&View { iteration: 1.0 })?, r#"{"iteration":1}"#);
/// assert_eq!(serde_json::to_string(&View { iteration: 2.5 })?, r#"{"iteration":2.5}"#);
/// assert_eq!(serde_json::to_string(&View { iteration: f64::INFINITY })?, r#"{"iteration":null}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes fields by reference
pub fn js_number<S: serde::Serializer>(n: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    match exact_integer(*n) {
        Some(int) => serializer.serialize_i64(int),
        None if n.is_finite() => serializer.serialize_f64(*n),
        None => serializer.serialize_unit(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edges_of_exactness() {
        assert_eq!(exact_integer(EXACT), Some(9_007_199_254_740_992));
        assert_eq!(exact_integer(-EXACT), Some(-9_007_199_254_740_992));
        assert_eq!(exact_integer(EXACT * 2.0), None);
        assert_eq!(exact_integer(f64::INFINITY), None);
        assert_eq!(exact_integer(f64::NEG_INFINITY), None);
        assert_eq!(exact_integer(-3.0), Some(-3));
    }
}
