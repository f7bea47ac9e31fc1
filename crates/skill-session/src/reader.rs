//! Reading a record back: JSON Lines text in, typed events out. Pure: it
//! takes text, never a file. Another version or a broken line is refused by
//! its line number; a record cut off in the middle of its last line (a host
//! that stopped while writing) is read up to the cut, with a warning.

use serde_json::Value;

use crate::record::{Event, RECORD_VERSION};

/// A record that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// A line's `"v"` is not this reader's version.
    #[error(
        "line {line}: the record is version {found}, and this reader reads version {RECORD_VERSION} only; \
         read it with the skillgraph release that wrote it"
    )]
    Version {
        /// The line number, from 1.
        line: usize,
        /// The `"v"` the line carries, as JSON.
        found: String,
    },
    /// A line that is not one event of the record.
    #[error(
        "line {line}: not an event of a skillgraph record ({reason}); each line must be one JSON object with \"v\", \"event\" and \"iteration\""
    )]
    BadLine {
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The record does not open with a `start` event.
    #[error(
        "line {line}: a record opens with a \"start\" event, and this line is \"{found}\"; the record's beginning is missing"
    )]
    MissingStart {
        /// The line number of the first event, from 1.
        line: usize,
        /// The kind that line holds.
        found: String,
    },
}

impl RecordError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            RecordError::Version { .. } => "record-version",
            RecordError::BadLine { .. } => "record-bad-line",
            RecordError::MissingStart { .. } => "record-missing-start",
        }
    }
}

/// A record read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Its events, in order.
    pub events: Vec<Event>,
    /// The line each event was read from, from 1 (blank lines are
    /// skipped, so these can differ from the events' positions).
    pub lines: Vec<usize>,
    /// When the last line was cut off mid-line: its number, from 1. The
    /// events stop before it.
    pub cut_at_line: Option<usize>,
}

impl Record {
    /// The warning for a record cut off mid-line, naming the line.
    pub fn warning(&self) -> Option<String> {
        self.cut_at_line.map(|line| {
            format!(
                "line {line} is cut off mid-line (the writer stopped before finishing it); \
                 the record was read up to line {}",
                line - 1
            )
        })
    }
}

/// Read a record from its JSON Lines text. Blank lines are skipped.
///
/// # Errors
///
/// [`RecordError`] naming the first line that carries another version, is
/// not an event, or (for the first event) is not `start`.
///
/// ```
/// use skill_session::read_record;
///
/// let text = "{\"v\":1,\"event\":\"turn\",\"iteration\":1,\"user_message\":\"hi\"}\n";
/// assert_eq!(read_record(text).unwrap_err().code(), "record-missing-start");
/// let newer = "{\"v\":2,\"event\":\"start\"}\n";
/// assert!(read_record(newer).unwrap_err().to_string().starts_with("line 1: the record is version 2"));
/// ```
pub fn read_record(text: &str) -> Result<Record, RecordError> {
    let mut events = Vec::new();
    let mut numbers = Vec::new();
    let ends_whole = text.is_empty() || text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    for (at, raw) in lines.iter().enumerate() {
        let line = at + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(raw) {
            Ok(value) => value,
            Err(error) if error.is_eof() && !ends_whole && line == lines.len() => {
                return Ok(Record {
                    events,
                    lines: numbers,
                    cut_at_line: Some(line),
                });
            }
            Err(error) => {
                return Err(RecordError::BadLine {
                    line,
                    reason: error.to_string(),
                });
            }
        };
        let event = event_of(line, value)?;
        if events.is_empty() && !matches!(event, Event::Start(_)) {
            return Err(RecordError::MissingStart {
                line,
                found: event.kind().to_owned(),
            });
        }
        events.push(event);
        numbers.push(line);
    }
    Ok(Record {
        events,
        lines: numbers,
        cut_at_line: None,
    })
}

/// Read the events of a part of a record that does not begin it (a run's
/// continuation, as a run store hands it out): every non-blank line an
/// event of this version, no `start` required.
///
/// # Errors
///
/// [`RecordError`] naming the first line (from 1, in `text`) that carries
/// another version or is not an event.
///
/// ```
/// use skill_session::read_events;
///
/// let turn = "{\"v\":1,\"event\":\"turn\",\"iteration\":2,\"user_message\":\"hi\"}\n";
/// assert_eq!(read_events(turn).unwrap().len(), 1);
/// assert!(read_events("{}\n").is_err());
/// ```
pub fn read_events(text: &str) -> Result<Vec<Event>, RecordError> {
    let mut events = Vec::new();
    for (at, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let line = at + 1;
        let value: Value = serde_json::from_str(raw).map_err(|error| RecordError::BadLine {
            line,
            reason: error.to_string(),
        })?;
        events.push(event_of(line, value)?);
    }
    Ok(events)
}

/// One line's event, after its version is checked.
fn event_of(line: usize, value: Value) -> Result<Event, RecordError> {
    match value.get("v") {
        Some(v) if v.as_u64() == Some(RECORD_VERSION) => {}
        Some(v) => {
            return Err(RecordError::Version {
                line,
                found: v.to_string(),
            });
        }
        None => {
            return Err(RecordError::BadLine {
                line,
                reason: "it has no \"v\"".to_owned(),
            });
        }
    }
    serde_json::from_value(value).map_err(|error| RecordError::BadLine {
        line,
        reason: error.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = r#"{"v":1,"event":"start","iteration":1,"cursor":"triage","posture":"assist","map":{"skills":[{"id":"triage"}],"entries":["triage"],"routes":[]}}"#;
    const TURN: &str = r#"{"v":1,"event":"turn","iteration":1,"user_message":"hi"}"#;

    #[test]
    fn a_whole_record_reads_back() {
        let record = read_record(&format!("{START}\n\n{TURN}\n")).unwrap();
        assert_eq!(record.events.len(), 2);
        assert_eq!(record.cut_at_line, None);
        assert_eq!(record.events[1].kind(), "turn");
    }

    #[test]
    fn a_record_cut_mid_line_reads_up_to_the_cut_with_a_warning() {
        let text = format!("{START}\n{TURN}\n{}", &TURN[..20]);
        let record = read_record(&text).unwrap();
        assert_eq!(record.events.len(), 2);
        assert_eq!(record.cut_at_line, Some(3));
        assert!(record.warning().unwrap().starts_with("line 3 is cut off"));
        // A last line that is whole but lacks its newline is no cut.
        assert_eq!(
            read_record(&format!("{START}\n{TURN}"))
                .unwrap()
                .events
                .len(),
            2
        );
    }

    #[test]
    fn a_broken_line_is_refused_by_number() {
        let broken = read_record(&format!("{START}\n{{\"v\":1,\n{TURN}\n")).unwrap_err();
        assert_eq!(
            (broken.code(), broken.to_string().starts_with("line 2:")),
            ("record-bad-line", true)
        );
        let unknown = read_record(&format!(
            "{START}\n{{\"v\":1,\"event\":\"dance\",\"iteration\":1}}\n"
        ))
        .unwrap_err();
        assert!(
            matches!(unknown, RecordError::BadLine { line: 2, .. }),
            "{unknown}"
        );
        let versionless = read_record("{\"event\":\"start\"}\n").unwrap_err();
        assert!(
            versionless.to_string().contains("no \"v\""),
            "{versionless}"
        );
    }

    #[test]
    fn another_version_is_refused_by_name() {
        let error = read_record(&format!(
            "{START}\n{}\n",
            TURN.replace("\"v\":1", "\"v\":\"2\"")
        ))
        .unwrap_err();
        assert_eq!(error.code(), "record-version");
        assert!(
            error
                .to_string()
                .contains("line 2: the record is version \"2\""),
            "{error}"
        );
    }
}
