//! Comparing an answer with the reference's: numbers by value, everything
//! else exactly.

use serde_json::Value;

/// Whether two JSON values are equal, comparing numbers by numeric value
/// (`5` equals `5.0`) and objects as key sets regardless of order.
pub fn json_equal(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Number(a), Value::Number(b)) => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, x)| b.get(key).is_some_and(|y| json_equal(x, y)))
        }
        _ => expected == actual,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn numbers_compare_by_value_and_nothing_else_does() {
        assert!(json_equal(
            &json!({"a": [5, {"b": 0.5}]}),
            &json!({"a": [5.0, {"b": 0.5}]})
        ));
        assert!(!json_equal(&json!({"a": 5}), &json!({"a": "5"})));
        assert!(!json_equal(&json!({"a": 5}), &json!({"a": 5, "b": null})));
        assert!(!json_equal(&json!([1, 2]), &json!([2, 1])));
    }
}
