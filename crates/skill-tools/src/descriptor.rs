//! The host-neutral tool descriptor and its pure `Execute`. A host wraps a
//! descriptor in its own tool type (`host_format.rs` writes the JSON the
//! hosts speak); the graph never builds a framework's tool object.

use serde_json::{Map, Value};

use crate::list_skills::ListSkillsCall;
use crate::read_skill::ReadSkillCall;
use crate::skip_step::SkipStepCall;

/// A tool as any host can wrap it: a name, a description, a JSON Schema for
/// its input, and a pure, synchronous [`Execute`].
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDescriptor {
    /// The tool's name.
    pub name: String,
    /// What the model reads about the tool.
    pub description: String,
    /// The JSON Schema of the tool's input.
    pub input_schema: Value,
    /// What calling the tool answers.
    pub execute: Execute,
}

/// What a descriptor's tool does when called. Pure and synchronous: the same
/// input always gives the same text, and nothing else happens.
#[derive(Debug, Clone, PartialEq)]
pub enum Execute {
    /// `read_skill`.
    ReadSkill(ReadSkillCall),
    /// `list_skills`.
    ListSkills(ListSkillsCall),
    /// `skip_step`: its answer is the reason given, which the session
    /// judges (SPEC §15.2).
    SkipStep(SkipStepCall),
}

impl Execute {
    /// Answer one call with its JSON input.
    ///
    /// # Errors
    ///
    /// An [`InputError`] when the input does not match the tool's schema.
    pub fn call(&self, input: &Value) -> Result<String, InputError> {
        match self {
            Execute::ReadSkill(call) => call.call(input),
            Execute::ListSkills(call) => call.call(input),
            Execute::SkipStep(call) => call.call(input),
        }
    }
}

/// An input a tool's schema would reject.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The input is not a JSON object.
    #[error("{tool} takes a JSON object as input, not {found}; call it with {example}")]
    NotAnObject {
        /// The tool.
        tool: &'static str,
        /// What the input was, as JSON.
        found: String,
        /// A valid input.
        example: &'static str,
    },
    /// A required argument is missing or not a string.
    #[error("{tool} needs a string argument `{argument}`; call it with {example}")]
    MissingArgument {
        /// The tool.
        tool: &'static str,
        /// The argument.
        argument: &'static str,
        /// A valid input.
        example: &'static str,
    },
    /// An argument the schema does not declare.
    #[error("{tool} takes no argument `{argument}`; call it with {example}")]
    UnexpectedArgument {
        /// The tool.
        tool: &'static str,
        /// The argument given.
        argument: String,
        /// A valid input.
        example: &'static str,
    },
}

impl InputError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            InputError::NotAnObject { .. } => "input-not-an-object",
            InputError::MissingArgument { .. } => "missing-argument",
            InputError::UnexpectedArgument { .. } => "unexpected-argument",
        }
    }
}

/// The arguments of a call, checked against `allowed` names.
pub(crate) fn arguments<'v>(
    tool: &'static str,
    input: &'v Value,
    allowed: &[&str],
    example: &'static str,
) -> Result<Option<&'v Map<String, Value>>, InputError> {
    match input {
        Value::Null => Ok(None),
        Value::Object(arguments) => {
            if let Some(extra) = arguments
                .keys()
                .find(|key| !allowed.contains(&key.as_str()))
            {
                return Err(InputError::UnexpectedArgument {
                    tool,
                    argument: echoed(extra),
                    example,
                });
            }
            Ok(Some(arguments))
        }
        other => Err(InputError::NotAnObject {
            tool,
            found: echoed(&other.to_string()),
            example,
        }),
    }
}

/// The most characters of its input an [`InputError`] repeats.
const MAX_ECHO: usize = 64;

/// `text` as an error may repeat it: whole up to [`MAX_ECHO`] characters,
/// else its length, since a model or a client can send anything.
fn echoed(text: &str) -> String {
    if text.chars().count() <= MAX_ECHO {
        text.to_owned()
    } else {
        format!("<{} bytes>", text.len())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_input_error_never_repeats_a_long_input() {
        let long = "k".repeat(5_000);
        let unexpected = arguments("t", &json!({ long.clone(): 1 }), &[], "{}").unwrap_err();
        let not_object = arguments("t", &json!(long), &[], "{}").unwrap_err();
        for error in [unexpected, not_object] {
            let text = error.to_string();
            assert!(text.len() < 200, "{text}");
            assert!(
                text.contains("<5000 bytes>") || text.contains("<5002 bytes>"),
                "{text}"
            );
        }
    }
}
