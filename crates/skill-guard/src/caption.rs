//! How a guard draws: one grammar for naming a guard back to its author, and
//! the same caption escaped for a mermaid edge label.

use std::fmt::Write as _;

use crate::data::{ConditionValue, GuardData, Operator};

/// One condition as `key OP value`, with OP one of `= ≠ > ≥ < ≤ in not in`
/// and the value as JavaScript's `String(v)` prints it (a list as `[a, b]`):
/// the one way a condition is printed.
///
/// ```
/// use skill_guard::{ConditionValue, GuardValue, Operator, condition_caption};
///
/// let value = ConditionValue::Scalar(GuardValue::from(1.0));
/// assert_eq!(condition_caption("iteration", Operator::Gte, &value), "iteration ≥ 1");
/// ```
pub fn condition_caption(key: &str, op: Operator, value: &ConditionValue) -> String {
    format!("{key} {} {value}", op.symbol())
}

/// One condition's evidence in words: what the key read, then the
/// condition it met or missed — `amount = 240 ≥ 100` when it passed,
/// `amount = 30, not ≥ 100` when it failed (an `eq` that passed says only
/// what was read).
///
/// ```
/// use skill_guard::{ConditionValue, GuardValue, Operator, evidence_caption};
///
/// let bound = ConditionValue::Scalar(GuardValue::from(100));
/// assert_eq!(evidence_caption("amount", Operator::Gte, &bound, "240", true), "amount = 240 ≥ 100");
/// assert_eq!(evidence_caption("amount", Operator::Gte, &bound, "30", false), "amount = 30, not ≥ 100");
/// ```
pub fn evidence_caption(
    key: &str,
    op: Operator,
    value: &ConditionValue,
    actual: &str,
    passed: bool,
) -> String {
    let mut out = format!("{key} = {actual}");
    match (passed, op) {
        (true, Operator::Eq) => {}
        (true, _) => {
            let _ = write!(out, " {} {value}", op.symbol());
        }
        (false, _) => {
            let _ = write!(out, ", not {} {value}", op.symbol());
        }
    }
    out
}

/// The plain caption: each condition as `key OP value`, joined by ` AND `,
/// with OP one of `= ≠ > ≥ < ≤ in not in`.
///
/// ```
/// use serde_json::json;
/// use skill_guard::{plain_caption, Guard};
///
/// let guard = Guard::compile(&json!({"riskLevel": {"in": ["high", "critical"]}, "iteration": {"lte": 5}}))?;
/// assert_eq!(plain_caption(guard.data()), "riskLevel in [high, critical] AND iteration ≤ 5");
/// # Ok::<(), skill_guard::CompileError>(())
/// ```
pub fn plain_caption(data: &GuardData) -> String {
    let mut out = String::new();
    for (index, condition) in data.conditions.iter().enumerate() {
        if index > 0 {
            out.push_str(" AND ");
        }
        out.push_str(&condition_caption(
            &condition.key,
            condition.op,
            &condition.value,
        ));
    }
    out
}

/// The caption for a mermaid `|…|` edge label: `when ` and the plain caption,
/// with `|` written `#124;` and `"` written `#quot;`.
pub fn mermaid_caption(data: &GuardData) -> String {
    format!("when {}", plain_caption(data))
        .replace('|', "#124;")
        .replace('"', "#quot;")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Guard;

    #[test]
    fn mermaid_escapes_pipes_and_quotes() {
        let guard = Guard::compile(&json!({"note": {"eq": "a|\"b\""}, "n": {"ne": null}})).unwrap();
        assert_eq!(plain_caption(guard.data()), "note = a|\"b\" AND n ≠ null");
        assert_eq!(
            mermaid_caption(guard.data()),
            "when note = a#124;#quot;b#quot; AND n ≠ null"
        );
    }
}
