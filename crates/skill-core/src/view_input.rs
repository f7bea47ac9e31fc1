//! The guard view as a host, a file or a test vector writes it: owned, read
//! from JSON, and lent to the guard as a [`GuardView`].

use serde::{Deserialize, Serialize};

use crate::GuardView;

/// A guard view in its JSON form (SPEC §2), owned:
/// `{ "toolName", "result", "status"?, "iteration", "userMessage",
/// "currentSkillId"? }`. [`view`](Self::view) lends it to a guard.
///
/// Any other key is refused, so a misspelt key is not silently read as
/// missing. `toolName`, `result` and `userMessage` left out read as the empty
/// string; `status` and `currentSkillId` left out (or `null`) are absent, as
/// the SPEC allows.
///
/// **A missing `iteration` reads as NaN.** The SPEC lets only `status` and
/// `currentSkillId` be absent (every `guard.evaluate` vector gives an
/// iteration), so this is the answer for views written by hand. An absent
/// hop key reads *undefined* (SPEC §4.2), and NaN is the number a guard
/// judges exactly as it judges undefined: `eq` and `in` fail, `ne` and
/// `notIn` pass, and every ordered bound fails. A default of `0` would
/// instead pass `{"iteration": {"lt": 3}}` on a view that never named an
/// iteration. The one difference from undefined is the evidence: its
/// `actual_summary` reads `NaN`, not `undefined`.
///
/// ```
/// use skill_core::GuardViewInput;
///
/// let input: GuardViewInput = serde_json::from_str(
///     r#"{"toolName": "lookup_order", "result": "{}", "status": "success"}"#,
/// )?;
/// let view = input.view();
/// assert_eq!((view.tool_name, view.status, view.user_message), ("lookup_order", Some("success"), ""));
/// assert!(view.iteration.is_nan());
/// assert!(serde_json::from_str::<GuardViewInput>(r#"{"tool": "x"}"#).is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuardViewInput {
    /// The name of the tool that returned (empty when left out).
    #[serde(default)]
    pub tool_name: String,
    /// The result text the model read (empty when left out).
    #[serde(default)]
    pub result: String,
    /// The status the tool's envelope declared, when it declared one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The iteration number; NaN when left out (see the type's notes), and
    /// left out when written if NaN, so a written view reads back the same.
    #[serde(
        default = "missing_iteration",
        skip_serializing_if = "is_nan",
        serialize_with = "crate::js_number"
    )]
    pub iteration: f64,
    /// The user's message for this turn (empty when left out).
    #[serde(default)]
    pub user_message: String,
    /// The skill the cursor stands on, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_skill_id: Option<String>,
}

/// Whether a written view leaves `iteration` out (serde passes a reference).
fn is_nan(iteration: &f64) -> bool {
    iteration.is_nan()
}

/// What a view that leaves `iteration` out reads (see [`GuardViewInput`]).
fn missing_iteration() -> f64 {
    f64::NAN
}

impl GuardViewInput {
    /// The view a guard reads, borrowing from this input.
    pub fn view(&self) -> GuardView<'_> {
        GuardView {
            tool_name: &self.tool_name,
            result: &self.result,
            status: self.status.as_deref(),
            iteration: self.iteration,
            user_message: &self.user_message,
            current_skill_id: self.current_skill_id.as_deref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<GuardViewInput, serde_json::Error> {
        serde_json::from_str(text)
    }

    #[test]
    fn every_key_lends_to_its_field() {
        let input = read(
            r#"{"toolName":"t","result":"r","status":"success","iteration":3,
                "userMessage":"m","currentSkillId":"triage"}"#,
        )
        .expect("a whole view");
        let view = input.view();
        assert_eq!(
            view,
            GuardView::new("t", "r")
                .with_status("success")
                .with_iteration(3.0)
                .with_user_message("m")
                .with_current_skill("triage")
        );
    }

    #[test]
    fn left_out_keys_read_their_documented_defaults() {
        let input = read("{}").expect("an empty view");
        let view = input.view();
        assert_eq!(
            (view.tool_name, view.result, view.user_message),
            ("", "", "")
        );
        assert_eq!((view.status, view.current_skill_id), (None, None));
        assert!(view.iteration.is_nan());
        let nulls = read(r#"{"status":null,"currentSkillId":null}"#).expect("nulls");
        assert_eq!((nulls.status, nulls.current_skill_id), (None, None));
    }

    #[test]
    fn a_written_view_reads_back_the_same() {
        let whole = read(r#"{"toolName":"t","result":"{}","status":"success","iteration":2,"userMessage":"m","currentSkillId":"c"}"#)
            .expect("a whole view");
        let written = serde_json::to_string(&whole).expect("a view writes");
        assert_eq!(read(&written).expect("it reads back"), whole);
        let bare = read("{}").expect("an empty view");
        let written = serde_json::to_string(&bare).expect("a view writes");
        assert_eq!(written, r#"{"toolName":"","result":"","userMessage":""}"#);
        assert!(read(&written).expect("it reads back").iteration.is_nan());
    }

    #[test]
    fn unknown_keys_and_wrong_types_are_refused() {
        assert!(read(r#"{"tool":"x"}"#).is_err());
        assert!(read(r#"{"iteration":"3"}"#).is_err());
        assert!(read(r#"{"iteration":null}"#).is_err());
        assert!(read(r#"{"toolName":1}"#).is_err());
    }
}
