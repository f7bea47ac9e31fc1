//! The formats hosts speak (Anthropic, OpenAI chat, MCP), and the tool name
//! rule they share: a descriptor becomes a host's JSON tool definition only
//! under a name every one of them accepts.

use std::fmt;

use serde_json::{Value, json};

use crate::descriptor::ToolDescriptor;

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

/// The longest name the hosts accept.
const MAX_NAME: usize = 64;

/// What breaks the hosts' naming rule, `^[a-zA-Z0-9_-]{1,64}$`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolNameFault {
    /// The name is empty.
    #[error("it is empty")]
    Empty,
    /// The name holds a character other than ASCII letters, digits, `_` and
    /// `-`: the first one.
    #[error("it contains {0:?}")]
    BadCharacter(char),
    /// The name is longer than 64 characters.
    #[error("it is {length} characters long, more than 64")]
    TooLong {
        /// The name's length.
        length: usize,
    },
}

/// A tool name the host formats reject. Names are never renamed silently.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tool name \"{name}\" is not accepted by Anthropic, OpenAI or MCP hosts: {fault}; use 1 to 64 ASCII letters, digits, `_` or `-`, e.g. \"{suggestion}\""
)]
pub struct ToolNameError {
    /// The name as given.
    pub name: String,
    /// What breaks the rule.
    pub fault: ToolNameFault,
    /// A name that would be accepted.
    pub suggestion: String,
}

impl ToolNameError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        "invalid-tool-name"
    }
}

/// Whether a host accepts `c` in a tool name.
fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Check a tool name against `^[a-zA-Z0-9_-]{1,64}$`.
///
/// # Errors
///
/// A [`ToolNameError`] saying what breaks the rule, with a suggestion.
pub fn validate_tool_name(name: &str) -> Result<(), ToolNameError> {
    let fault = if name.is_empty() {
        ToolNameFault::Empty
    } else if let Some(c) = name.chars().find(|&c| !allowed(c)) {
        ToolNameFault::BadCharacter(c)
    } else if name.len() > MAX_NAME {
        // Every character is ASCII here, so bytes are characters.
        ToolNameFault::TooLong { length: name.len() }
    } else {
        return Ok(());
    };
    Err(ToolNameError {
        name: name.to_owned(),
        fault,
        suggestion: suggestion(name),
    })
}

/// The nearest accepted spelling of `name`: each refused character becomes
/// `_`, cut at 64; `tool` for an empty name.
fn suggestion(name: &str) -> String {
    let spelled: String = name
        .chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .take(MAX_NAME)
        .collect();
    if spelled.is_empty() {
        "tool".to_owned()
    } else {
        spelled
    }
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

    fn fault(name: &str) -> Option<ToolNameFault> {
        validate_tool_name(name).err().map(|err| err.fault)
    }

    #[test]
    fn names_follow_the_hosts_rule() {
        assert_eq!(fault("read_skill"), None);
        assert_eq!(fault(&"a".repeat(64)), None);
        assert_eq!(fault(""), Some(ToolNameFault::Empty));
        assert_eq!(
            fault(&"a".repeat(65)),
            Some(ToolNameFault::TooLong { length: 65 })
        );
        assert_eq!(fault("é"), Some(ToolNameFault::BadCharacter('é')));
        // A bad character is named before the length.
        assert_eq!(
            fault(&format!("{}!", "a".repeat(70))),
            Some(ToolNameFault::BadCharacter('!'))
        );
    }

    #[test]
    fn the_message_names_the_fault_and_a_valid_spelling() {
        let err = validate_tool_name("read skill!").unwrap_err();
        assert_eq!(err.suggestion, "read_skill_");
        assert_eq!(
            err.to_string(),
            "tool name \"read skill!\" is not accepted by Anthropic, OpenAI or MCP hosts: it contains ' '; use 1 to 64 ASCII letters, digits, `_` or `-`, e.g. \"read_skill_\""
        );
        let err = validate_tool_name("").unwrap_err();
        assert_eq!(err.suggestion, "tool");
        assert!(err.to_string().contains(": it is empty;"), "{err}");
        let err = validate_tool_name(&"b".repeat(65)).unwrap_err();
        assert_eq!(err.suggestion, "b".repeat(64));
        assert!(
            err.to_string()
                .contains(": it is 65 characters long, more than 64;"),
            "{err}"
        );
    }
}
