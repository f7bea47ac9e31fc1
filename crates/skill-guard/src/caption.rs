//! How a guard draws: one grammar for naming a guard back to its author, and
//! the same caption escaped for a mermaid edge label.

use crate::data::GuardData;

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
        out.push_str(&condition.key);
        out.push(' ');
        out.push_str(condition.op.symbol());
        out.push(' ');
        out.push_str(&condition.value.to_string());
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
