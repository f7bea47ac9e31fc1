//! A typed way for Rust authors to write a guard. It produces exactly the
//! JSON form an author would write by hand, so it compiles through the same
//! path and is refused for the same reasons.

use serde_json::{Map, Value};

use crate::compile::{CompileError, Guard};
use crate::data::{GuardValue, Operator};

/// Builds a guard condition by condition.
///
/// ```
/// use serde_json::json;
/// use skill_guard::GuardBuilder;
///
/// let builder = GuardBuilder::new()
///     .is_in("riskLevel", ["high", "critical"])
///     .gte("score", 0.8)
///     .eq("status", "success");
/// assert_eq!(builder.to_json(), json!({
///     "riskLevel": { "in": ["high", "critical"] },
///     "score": { "gte": 0.8 },
///     "status": { "eq": "success" }
/// }));
/// let guard = builder.compile()?;
/// assert_eq!(guard.data().conditions().len(), 3);
/// # Ok::<(), skill_guard::CompileError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuardBuilder {
    guard: Map<String, Value>,
}

impl GuardBuilder {
    /// An empty guard (which compiles only once a condition is added).
    pub fn new() -> Self {
        GuardBuilder::default()
    }

    /// Add `key op value`. A second use of one operator on one key replaces
    /// the first, as a repeated JSON key does.
    pub fn condition(mut self, key: &str, op: Operator, value: Value) -> Self {
        let ops = self
            .guard
            .entry(key.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(ops) = ops {
            ops.insert(op.as_str().to_owned(), value);
        }
        self
    }

    fn scalar(self, key: &str, op: Operator, value: impl Into<GuardValue>) -> Self {
        self.condition(key, op, value.into().into())
    }

    fn list<V: Into<GuardValue>>(
        self,
        key: &str,
        op: Operator,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        let list = values.into_iter().map(|v| Value::from(v.into())).collect();
        self.condition(key, op, Value::Array(list))
    }

    /// `key` strictly equals `value`.
    pub fn eq(self, key: &str, value: impl Into<GuardValue>) -> Self {
        self.scalar(key, Operator::Eq, value)
    }

    /// `key` does not strictly equal `value`.
    pub fn ne(self, key: &str, value: impl Into<GuardValue>) -> Self {
        self.scalar(key, Operator::Ne, value)
    }

    /// `key > value`.
    pub fn gt(self, key: &str, value: impl Into<GuardValue>) -> Self {
        self.scalar(key, Operator::Gt, value)
    }

    /// `key >= value`.
    pub fn gte(self, key: &str, value: impl Into<GuardValue>) -> Self {
        self.scalar(key, Operator::Gte, value)
    }

    /// `key < value`.
    pub fn lt(self, key: &str, value: impl Into<GuardValue>) -> Self {
        self.scalar(key, Operator::Lt, value)
    }

    /// `key <= value`.
    pub fn lte(self, key: &str, value: impl Into<GuardValue>) -> Self {
        self.scalar(key, Operator::Lte, value)
    }

    /// `key` is one of `values`.
    pub fn is_in<V: Into<GuardValue>>(
        self,
        key: &str,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        self.list(key, Operator::In, values)
    }

    /// `key` is none of `values` (or missing).
    pub fn not_in<V: Into<GuardValue>>(
        self,
        key: &str,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        self.list(key, Operator::NotIn, values)
    }

    /// The guard's JSON form.
    pub fn to_json(&self) -> Value {
        Value::Object(self.guard.clone())
    }

    /// Compile the guard.
    ///
    /// # Errors
    ///
    /// The refusals of [`Guard::compile`]: an empty guard, an empty or
    /// oversized list, a reserved key.
    pub fn compile(&self) -> Result<Guard, CompileError> {
        Guard::compile(&self.to_json())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_what_the_json_form_compiles_to() {
        let built = GuardBuilder::new()
            .lt("iteration", 5)
            .not_in("tier", ["gold"])
            .compile()
            .unwrap();
        let written = Guard::compile(
            &serde_json::json!({"iteration": {"lt": 5}, "tier": {"notIn": ["gold"]}}),
        )
        .unwrap();
        assert_eq!(built, written);
    }

    #[test]
    fn refuses_what_the_json_form_refuses() {
        let err = GuardBuilder::new().compile().unwrap_err();
        assert_eq!(err.code(), "empty");
        let err = GuardBuilder::new()
            .is_in::<&str>("a", [])
            .compile()
            .unwrap_err();
        assert_eq!(err.code(), "needs-non-empty-list");
    }
}
