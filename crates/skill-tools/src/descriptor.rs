//! The host-neutral tool descriptor, and the formats hosts speak: Anthropic,
//! OpenAI chat and MCP. A host wraps a descriptor in its own tool type; the
//! graph never builds a framework's tool object.

use std::fmt;

use serde_json::{Map, Value, json};

use crate::list_skills::ListSkillsCall;
use crate::read_skill::ReadSkillCall;

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
                    argument: extra.clone(),
                    example,
                });
            }
            Ok(Some(arguments))
        }
        other => Err(InputError::NotAnObject {
            tool,
            found: other.to_string(),
            example,
        }),
    }
}

/// A host's tool format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostFormat {
    /// Anthropic Messages: `{ name, description, input_schema }`.
    Anthropic,
    /// OpenAI chat completions: `{ type: "function", function: { name,
    /// description, parameters, strict } }`.
    OpenAi,
    /// Model Context Protocol: `{ name, description, inputSchema }`.
    Mcp,
}

impl HostFormat {
    /// Every format.
    pub const ALL: [HostFormat; 3] = [HostFormat::Anthropic, HostFormat::OpenAi, HostFormat::Mcp];

    /// The format's name: `anthropic`, `openai`, `mcp`.
    pub fn as_str(self) -> &'static str {
        match self {
            HostFormat::Anthropic => "anthropic",
            HostFormat::OpenAi => "openai",
            HostFormat::Mcp => "mcp",
        }
    }
}

impl fmt::Display for HostFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool name the host formats reject. Names are never renamed silently.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tool name \"{name}\" is not accepted by Anthropic, OpenAI or MCP hosts: {why}; use 1 to 64 ASCII letters, digits, `_` or `-`, e.g. \"{suggestion}\""
)]
pub struct ToolNameError {
    /// The name as given.
    pub name: String,
    /// What breaks the rule.
    pub why: String,
    /// A name that would be accepted.
    pub suggestion: String,
}

impl ToolNameError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        "invalid-tool-name"
    }
}

/// Check a tool name against `^[a-zA-Z0-9_-]{1,64}$`.
///
/// # Errors
///
/// A [`ToolNameError`] saying what breaks the rule, with a suggestion.
pub fn validate_tool_name(name: &str) -> Result<(), ToolNameError> {
    let bad = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'));
    let why = if name.is_empty() {
        "it is empty".to_owned()
    } else if let Some(c) = bad {
        format!("it contains {c:?}")
    } else if name.len() > 64 {
        format!("it is {} characters long, more than 64", name.len())
    } else {
        return Ok(());
    };
    let mut suggestion: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if suggestion.is_empty() {
        suggestion.push_str("tool");
    }
    Err(ToolNameError {
        name: name.to_owned(),
        why,
        suggestion,
    })
}

impl ToolDescriptor {
    /// The descriptor as `format`'s JSON tool definition.
    ///
    /// # Errors
    ///
    /// A [`ToolNameError`] when the name breaks the hosts' naming rule.
    pub fn to_host(&self, format: HostFormat) -> Result<Value, ToolNameError> {
        validate_tool_name(&self.name)?;
        Ok(match format {
            HostFormat::Anthropic => json!({
                "name": self.name, "description": self.description, "input_schema": self.input_schema,
            }),
            HostFormat::OpenAi => json!({
                "type": "function",
                "function": {
                    "name": self.name, "description": self.description,
                    "parameters": self.input_schema, "strict": true,
                },
            }),
            HostFormat::Mcp => json!({
                "name": self.name, "description": self.description, "inputSchema": self.input_schema,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_hosts_rule() {
        assert!(validate_tool_name("read_skill").is_ok());
        assert!(validate_tool_name(&"a".repeat(64)).is_ok());
        let err = validate_tool_name("read skill!").unwrap_err();
        assert_eq!(err.suggestion, "read_skill_");
        assert_eq!(
            err.to_string(),
            "tool name \"read skill!\" is not accepted by Anthropic, OpenAI or MCP hosts: it contains ' '; use 1 to 64 ASCII letters, digits, `_` or `-`, e.g. \"read_skill_\""
        );
        assert!(validate_tool_name("").is_err());
        assert!(validate_tool_name(&"a".repeat(65)).is_err());
        assert!(validate_tool_name("é").is_err());
    }
}
