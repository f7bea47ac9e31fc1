//! What moved the cursor at the end of an iteration: the one vocabulary
//! route resolution, the session and its record share.

use serde::{Deserialize, Serialize};

/// What moved the cursor at the end of an iteration (or that nothing did).
/// Route resolution answers `route` or `stay`; a session adds `model`, the
/// pending pick, and `rule`, a start rule at the start of a turn.
///
/// ```
/// use skill_core::MoveBy;
///
/// assert_eq!(serde_json::to_string(&MoveBy::Route)?, r#""route""#);
/// assert_eq!(MoveBy::Stay.as_str(), "stay");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum MoveBy {
    /// A deterministic route fired on a result.
    Route,
    /// The model's accepted pick.
    Model,
    /// A start rule matched the turn's message (SPEC §13.2).
    Rule,
    /// A tool's result proposed the move, and the session accepted it
    /// (SPEC §15.6).
    Tool,
    /// Nothing: the cursor stays.
    Stay,
}

impl MoveBy {
    /// `route`, `model`, `rule`, `tool` or `stay`, as the record spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            MoveBy::Route => "route",
            MoveBy::Model => "model",
            MoveBy::Rule => "rule",
            MoveBy::Tool => "tool",
            MoveBy::Stay => "stay",
        }
    }
}
