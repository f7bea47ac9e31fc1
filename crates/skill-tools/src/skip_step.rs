//! `skip_step`: the tool a model calls to pass over the current step of a
//! skill's procedure, with its reason (SPEC §15.2). It is listed only
//! while a procedure is in progress; the session judges and answers the
//! call (`Session::skip_step`), never a host.

use serde_json::{Value, json};

use crate::descriptor::{Execute, InputError, ToolDescriptor, arguments};

/// The tool's name.
pub const SKIP_STEP: &str = "skip_step";

/// A `skip_step` call's input, read: the reason given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SkipStepCall;

impl SkipStepCall {
    /// The reason `input` gives, trimmed; empty when it gives none (which
    /// the session refuses as `skip-needs-reason`, and records).
    ///
    /// # Errors
    ///
    /// An [`InputError`] when the input is not an object, takes another
    /// argument, or gives a reason that is not a string.
    pub fn call(self, input: &Value) -> Result<String, InputError> {
        let example = r#"{"reason": "the order was already checked by phone"}"#;
        let given = arguments(SKIP_STEP, input, &["reason"], example)?;
        match given.and_then(|given| given.get("reason")) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(reason)) => Ok(reason.trim().to_owned()),
            Some(_) => Err(InputError::MissingArgument {
                tool: SKIP_STEP,
                argument: "reason",
                example,
            }),
        }
    }
}

/// The `skip_step` descriptor.
///
/// ```
/// use skill_tools::{SKIP_STEP, skip_step};
///
/// let tool = skip_step();
/// assert_eq!(tool.name, SKIP_STEP);
/// assert_eq!(tool.execute.call(&serde_json::json!({"reason": " done by phone "}))?, "done by phone");
/// assert_eq!(tool.execute.call(&serde_json::json!({}))?, "");
/// # Ok::<(), skill_tools::InputError>(())
/// ```
pub fn skip_step() -> ToolDescriptor {
    ToolDescriptor {
        name: SKIP_STEP.to_owned(),
        description: "Passes over the current step of the procedure in progress, when it cannot or need not be done. Give the reason in a sentence: the record keeps it. What the skill does next (moving on, or keeping the step current) is said in the answer.".to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "reason": {
                    "type": "string",
                    "description": "Why this step is passed over."
                }
            },
            "required": ["reason"],
            "additionalProperties": false
        }),
        execute: Execute::SkipStep(SkipStepCall),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_that_is_no_string_or_another_argument_is_an_input_error() {
        assert!(SkipStepCall.call(&json!({"reason": 5})).is_err());
        assert!(SkipStepCall.call(&json!({"why": "x"})).is_err());
        assert!(SkipStepCall.call(&json!("x")).is_err());
        assert_eq!(SkipStepCall.call(&Value::Null).ok().as_deref(), Some(""));
    }
}
