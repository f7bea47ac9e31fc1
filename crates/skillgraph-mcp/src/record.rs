//! The record of a served session: kept whole for the resource
//! `skillgraph://record`, and written to `--record FILE` one event a line,
//! flushed per event. A file that stops taking writes is reported once on
//! standard error; the record goes on in memory. In memory the record is
//! its events, written out as lines when it is read: a run's `start` event
//! shares the declared map with the graph, so an idle run holds no copy of
//! the map's text (SPEC §9.9: at most 4 KiB). Each event is shared, so a
//! span's facts can be made from a request's events later, off the
//! answering path, without copying them.

use std::sync::Arc;

use skillgraph::skill_session::Event;

use crate::warn;
use skillgraph::RecordWriter;

/// Where a served session's events go.
pub(crate) struct RecordSink {
    file: Option<RecordWriter>,
    events: Vec<Arc<Event>>,
}

impl RecordSink {
    /// A record kept in memory, and in `file` when one is given.
    pub(crate) fn new(file: Option<RecordWriter>) -> Self {
        RecordSink {
            file,
            events: Vec::new(),
        }
    }

    /// Append `events`.
    pub(crate) fn append(&mut self, events: Vec<Event>) {
        for event in events {
            if let Some(file) = self.file.as_mut()
                && let Err(failure) = file.write_line(&event.to_line())
            {
                warn(&format!(
                    "error[{}]: {}; the record goes on in the resource skillgraph://record only",
                    failure.code(),
                    failure
                ));
                self.file = None;
            }
            self.events.push(Arc::new(event));
        }
    }

    /// How many events the record holds.
    pub(crate) fn len(&self) -> usize {
        self.events.len()
    }

    /// The record's events from the `from`th on (none when `from` is past
    /// the end).
    pub(crate) fn since(&self, from: usize) -> &[Arc<Event>] {
        self.events.get(from..).unwrap_or_default()
    }

    /// The whole record, one event a line.
    pub(crate) fn text(&self) -> String {
        let mut text = String::new();
        for event in &self.events {
            text.push_str(&event.to_line());
            text.push('\n');
        }
        text
    }
}
