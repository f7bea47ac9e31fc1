//! The tool name rule hosts share: Anthropic, OpenAI and MCP accept a tool
//! only under a name matching `^[a-zA-Z0-9_-]{1,64}$`. One home for the rule
//! and its suggestion, so the descriptors a host is sent (`skill-tools`) and
//! the check-up of a declaration (`skill-checkup`) judge a name alike.

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
#[non_exhaustive]
pub struct ToolNameError {
    /// The name as given.
    pub name: String,
    /// What breaks the rule.
    pub fault: ToolNameFault,
    /// The nearest name that would be accepted.
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
/// ```
/// use skill_core::{validate_tool_name, ToolNameFault};
///
/// assert!(validate_tool_name("lookup_order").is_ok());
/// let refused = validate_tool_name("lookup order").unwrap_err();
/// assert_eq!(refused.fault, ToolNameFault::BadCharacter(' '));
/// assert_eq!(refused.suggestion, "lookup_order");
/// ```
///
/// # Errors
///
/// A [`ToolNameError`] saying what breaks the rule, with the nearest
/// accepted spelling.
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
        // A multi-byte character is one `_`, and the cut counts characters.
        let err = validate_tool_name(&format!("é{}", "c".repeat(70))).unwrap_err();
        assert_eq!(err.suggestion, format!("_{}", "c".repeat(63)));
    }
}
