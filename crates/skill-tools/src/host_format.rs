//! The formats hosts speak (Anthropic, OpenAI chat, MCP): a descriptor
//! becomes a host's JSON tool definition only under a name every one of them
//! accepts (the rule they share lives in `skill-core`, where the check-up
//! reads it too).

use std::fmt;

use serde_json::{Value, json};

use skill_core::{ToolNameError, validate_tool_name};

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
    use skill_core::{Skill, ToolNameFault};

    use super::*;
    use crate::list_skills;

    #[test]
    fn a_descriptor_goes_out_only_under_an_accepted_name() {
        let mut tool = list_skills(&[Skill::new("faq")]).unwrap();
        for format in HostFormat::ALL {
            assert!(tool.to_host(format).is_ok(), "{format}");
        }
        tool.name = "list skills".to_owned();
        for format in HostFormat::ALL {
            let refused = tool.to_host(format).unwrap_err();
            assert_eq!(refused.fault, ToolNameFault::BadCharacter(' '));
            assert_eq!(refused.suggestion, "list_skills");
        }
    }
}
