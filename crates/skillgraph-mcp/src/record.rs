//! The record of a served session: kept whole for the resource
//! `skillgraph://record`, and written to `--record FILE` one event a line,
//! flushed per event. A file that stops taking writes is reported once on
//! standard error; the record goes on in memory.

use skillgraph::skill_session::Event;

use crate::warn;
use skillgraph::RecordWriter;

/// Where a served session's events go.
pub(crate) struct RecordSink {
    file: Option<RecordWriter>,
    text: String,
}

impl RecordSink {
    /// A record kept in memory, and in `file` when one is given.
    pub(crate) fn new(file: Option<RecordWriter>) -> Self {
        RecordSink {
            file,
            text: String::new(),
        }
    }

    /// Append `events`.
    pub(crate) fn append(&mut self, events: Vec<Event>) {
        for event in events {
            let line = event.to_line();
            if let Some(file) = self.file.as_mut()
                && let Err(failure) = file.write_line(&line)
            {
                warn(&format!(
                    "error[{}]: {}; the record goes on in the resource skillgraph://record only",
                    failure.code(),
                    failure
                ));
                self.file = None;
            }
            self.text.push_str(&line);
            self.text.push('\n');
        }
    }

    /// The whole record, one event a line.
    pub(crate) fn text(&self) -> String {
        self.text.clone()
    }
}
