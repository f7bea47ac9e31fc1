//! The closed vocabulary of result statuses a tool envelope can declare.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A result status. The set is closed: a status outside it is one no tool can
/// ever declare, which is what lets the check-up prove a guard on `status`
/// unsatisfiable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultStatus {
    /// The tool did what was asked.
    Success,
    /// The tool tried and failed.
    Failure,
    /// The tool refused: not permitted.
    Denied,
    /// The call's input was not acceptable.
    Invalid,
    /// Part of the work was done.
    Partial,
    /// The work was accepted and is not done yet.
    Pending,
    /// Nothing was found.
    Absent,
}

impl ResultStatus {
    /// The whole closed set, in its canonical order.
    pub const ALL: [ResultStatus; 7] = [
        ResultStatus::Success,
        ResultStatus::Failure,
        ResultStatus::Denied,
        ResultStatus::Invalid,
        ResultStatus::Partial,
        ResultStatus::Pending,
        ResultStatus::Absent,
    ];

    /// The status as a tool envelope spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ResultStatus::Success => "success",
            ResultStatus::Failure => "failure",
            ResultStatus::Denied => "denied",
            ResultStatus::Invalid => "invalid",
            ResultStatus::Partial => "partial",
            ResultStatus::Pending => "pending",
            ResultStatus::Absent => "absent",
        }
    }

    /// The status spelt exactly `text` (case-sensitive), if it is one.
    pub fn parse(text: &str) -> Option<ResultStatus> {
        ResultStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
    }

    /// Whether `text` is a status of the closed set.
    pub fn is_status(text: &str) -> bool {
        ResultStatus::parse(text).is_some()
    }

    /// The closed set as one comma-separated line, for messages.
    pub fn listed() -> &'static str {
        "success, failure, denied, invalid, partial, pending, absent"
    }
}

impl fmt::Display for ResultStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a string that is not a result status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "\"{value}\" is not a result status; a tool envelope declares one of: {}. Use one of those, spelt in lower case",
    ResultStatus::listed()
)]
#[non_exhaustive]
pub struct UnknownStatus {
    /// The text that was not a status.
    pub value: String,
}

impl UnknownStatus {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        "unknown-status"
    }
}

impl FromStr for ResultStatus {
    type Err = UnknownStatus;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        ResultStatus::parse(text).ok_or_else(|| UnknownStatus {
            value: text.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_set_round_trips_in_order() {
        let names: Vec<_> = ResultStatus::ALL.iter().map(|s| s.to_string()).collect();
        assert_eq!(names.join(", "), ResultStatus::listed());
        for status in ResultStatus::ALL {
            assert_eq!(status.as_str().parse::<ResultStatus>(), Ok(status));
        }
        assert!(ResultStatus::ALL.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn outside_the_set_is_an_error_that_lists_it() {
        let err = "Success".parse::<ResultStatus>().unwrap_err();
        assert_eq!(err.code(), "unknown-status");
        let text = err.to_string();
        assert!(
            text.contains("\"Success\"") && text.contains("pending"),
            "{text}"
        );
    }
}
