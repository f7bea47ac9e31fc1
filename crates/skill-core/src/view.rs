//! The guard view: the six hop keys a guard reads, for one tool result; and
//! the tool result a host records for one call.

use serde::{Deserialize, Serialize};

/// One tool call's outcome, as the host saw it: the JSON a host or the CLI
/// passes to route resolution (`{ "toolName", "result", "status"? }`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolResult {
    /// The tool that was called.
    pub tool_name: String,
    /// The result text the model read.
    pub result: String,
    /// The status the tool's envelope declared, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

impl ToolResult {
    /// The guard view of this result at `iteration`, for `user_message`, with
    /// the cursor on `current_skill_id`.
    pub fn view<'a>(
        &'a self,
        iteration: f64,
        user_message: &'a str,
        current_skill_id: Option<&'a str>,
    ) -> GuardView<'a> {
        GuardView {
            tool_name: &self.tool_name,
            result: &self.result,
            status: self.status.as_deref(),
            iteration,
            user_message,
            current_skill_id,
        }
    }
}

/// One tool result and its iteration context, as a guard reads it.
///
/// The field names are the guard grammar's hop keys in Rust spelling:
/// `toolName`, `result`, `status`, `iteration`, `userMessage`,
/// `currentSkillId`. Any other guard key reads the top-level field of that
/// name in `result` parsed as JSON.
///
/// ```
/// use skill_core::GuardView;
///
/// let view = GuardView::new("lookup_order", r#"{"riskLevel":"high"}"#)
///     .with_status("success")
///     .with_iteration(3.0)
///     .with_current_skill("triage");
/// assert_eq!(view.status, Some("success"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GuardView<'a> {
    /// The name of the tool that returned.
    pub tool_name: &'a str,
    /// The result text the model read.
    pub result: &'a str,
    /// The status the tool's envelope declared, when it declared one.
    pub status: Option<&'a str>,
    /// The iteration number (a JavaScript number, hence `f64`).
    pub iteration: f64,
    /// The user's message for this turn.
    pub user_message: &'a str,
    /// The skill the cursor stands on, when there is one.
    pub current_skill_id: Option<&'a str>,
}

impl<'a> GuardView<'a> {
    /// A view of one result: no status, iteration 0, an empty user message and
    /// no current skill.
    pub fn new(tool_name: &'a str, result: &'a str) -> Self {
        GuardView {
            tool_name,
            result,
            status: None,
            iteration: 0.0,
            user_message: "",
            current_skill_id: None,
        }
    }

    /// The same view with a declared status.
    pub fn with_status(self, status: &'a str) -> Self {
        GuardView {
            status: Some(status),
            ..self
        }
    }

    /// The same view at another iteration.
    pub fn with_iteration(self, iteration: f64) -> Self {
        GuardView { iteration, ..self }
    }

    /// The same view with a user message.
    pub fn with_user_message(self, user_message: &'a str) -> Self {
        GuardView {
            user_message,
            ..self
        }
    }

    /// The same view with the cursor's skill.
    pub fn with_current_skill(self, current_skill_id: &'a str) -> Self {
        GuardView {
            current_skill_id: Some(current_skill_id),
            ..self
        }
    }
}
