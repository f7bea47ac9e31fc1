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
