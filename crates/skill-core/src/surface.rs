//! Surface modes: the channel a skill's body reaches the model through, and how
//! a declared `auto` resolves for a provider and model.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::skill::Skill;

/// The channel a skill's body is delivered through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SurfaceMode {
    /// Let the runtime decide (the default).
    #[default]
    Auto,
    /// The body lands in the system prompt.
    SystemPrompt,
    /// The body is returned only as the `read_skill` tool result.
    ToolOnly,
    /// Both: system prompt and tool result.
    Both,
}

impl SurfaceMode {
    /// Every surface mode, in the order the SPEC lists them.
    pub const ALL: [SurfaceMode; 4] = [
        SurfaceMode::Auto,
        SurfaceMode::SystemPrompt,
        SurfaceMode::ToolOnly,
        SurfaceMode::Both,
    ];

    /// The mode as JSON spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SurfaceMode::Auto => "auto",
            SurfaceMode::SystemPrompt => "system-prompt",
            SurfaceMode::ToolOnly => "tool-only",
            SurfaceMode::Both => "both",
        }
    }

    /// Whether this is [`SurfaceMode::Auto`].
    pub fn is_auto(&self) -> bool {
        *self == SurfaceMode::Auto
    }

    /// Whether `read_skill` returns the body for a skill in this mode.
    pub fn delivers_by_read(self) -> bool {
        matches!(self, SurfaceMode::ToolOnly | SurfaceMode::Both)
    }
}

impl fmt::Display for SurfaceMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What `auto` becomes for a provider and model: only [`SurfaceMode::Both`] or
/// [`SurfaceMode::ToolOnly`].
///
/// `Both` when the provider, lower-cased (not trimmed), is `anthropic` and the
/// model names, case-insensitively and anywhere, `claude-3-5`, `claude-3.5`, or
/// `claude-` then optionally `opus-`/`sonnet-`/`haiku-` then a digit 4–9.
///
/// ```
/// use skill_core::{resolve_surface_mode, SurfaceMode};
///
/// assert_eq!(resolve_surface_mode("Anthropic", Some("claude-sonnet-4-5")), SurfaceMode::Both);
/// assert_eq!(resolve_surface_mode("anthropic", Some("claude-3-7-sonnet")), SurfaceMode::ToolOnly);
/// assert_eq!(resolve_surface_mode("openai", Some("claude-opus-4")), SurfaceMode::ToolOnly);
/// ```
pub fn resolve_surface_mode(provider: &str, model: Option<&str>) -> SurfaceMode {
    let model = model.unwrap_or("");
    if provider.to_lowercase() == "anthropic" && names_a_body_reading_claude(model) {
        SurfaceMode::Both
    } else {
        SurfaceMode::ToolOnly
    }
}

/// Whether a model name matches the families that read a body from a tool
/// result. Case is folded for ASCII only, as a JavaScript `/i` pattern without
/// the `u` flag does for these ASCII literals.
fn names_a_body_reading_claude(model: &str) -> bool {
    let lower = model.to_ascii_lowercase();
    if lower.contains("claude-3-5") || lower.contains("claude-3.5") {
        return true;
    }
    lower.match_indices("claude-").any(|(at, prefix)| {
        let rest = &lower[at + prefix.len()..];
        let rest = ["opus-", "sonnet-", "haiku-"]
            .iter()
            .find_map(|family| rest.strip_prefix(family))
            .unwrap_or(rest);
        matches!(rest.as_bytes().first(), Some(b'4'..=b'9'))
    })
}

/// `resolved_surface_mode_of(skill, provider?, model?)` as SPEC §3 names it:
/// [`Skill::resolved_surface_mode`].
pub fn resolved_surface_mode_of(
    skill: &Skill,
    provider: Option<&str>,
    model: Option<&str>,
) -> SurfaceMode {
    skill.resolved_surface_mode(provider, model)
}

/// `activates_by_read(skill)` as SPEC §3 names it: [`Skill::activates_by_read`].
pub fn activates_by_read(skill: &Skill) -> bool {
    skill.activates_by_read()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(provider: &str, model: &str) -> bool {
        resolve_surface_mode(provider, Some(model)) == SurfaceMode::Both
    }

    #[test]
    fn families_that_read_bodies() {
        assert!(both("anthropic", "claude-3-5-sonnet-20240620"));
        assert!(both("anthropic", "us.anthropic.claude-3.5-haiku"));
        assert!(both("ANTHROPIC", "claude-sonnet-4-5-20250929"));
        assert!(both("anthropic", "CLAUDE-OPUS-9"));
        assert!(both("anthropic", "claude-4"));
        assert!(both("anthropic", "x-claude-y claude-haiku-5"));
    }

    #[test]
    fn everything_else_is_tool_only() {
        assert!(!both("anthropic", "claude-3-7-sonnet"));
        assert!(!both("anthropic", "claude-10"));
        assert!(!both("anthropic", "claude-sonnet-3"));
        assert!(!both("anthropic", "claude-opus-sonnet-4"));
        assert!(!both("anthropic ", "claude-3-5-sonnet"));
        assert!(!both("bedrock", "claude-haiku-4-5"));
        assert!(!both("anthropic", ""));
        assert_eq!(
            resolve_surface_mode("anthropic", None),
            SurfaceMode::ToolOnly
        );
    }
}
