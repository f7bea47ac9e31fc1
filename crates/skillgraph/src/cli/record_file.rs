//! The record file of `play` and `serve`: one event a line, flushed per
//! event, so that a killed process loses at most the event in flight.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use skill_session::Event;

use super::Failure;

/// The record file, one event a line, flushed per event.
pub(super) struct RecordWriter {
    path: PathBuf,
    file: BufWriter<File>,
}

impl RecordWriter {
    /// Create (or truncate) the file at `path`.
    pub(super) fn create(path: &Path) -> Result<Self, Failure> {
        let file = File::create(path).map_err(|err| {
            Failure::unusable(
                "unwritable",
                format!("--record {}: cannot be created: {err}", path.display()),
            )
        })?;
        Ok(RecordWriter {
            path: path.to_owned(),
            file: BufWriter::new(file),
        })
    }

    /// Append `events`, one line each, flushing after each.
    pub(super) fn write(&mut self, events: Vec<Event>) -> Result<(), Failure> {
        for event in events {
            self.write_line(&event.to_line())?;
        }
        Ok(())
    }

    /// Append one event's `line` and flush it.
    pub(super) fn write_line(&mut self, line: &str) -> Result<(), Failure> {
        writeln!(self.file, "{line}")
            .and_then(|()| self.file.flush())
            .map_err(|err| {
                Failure::unusable(
                    "unwritable",
                    format!("--record {}: cannot be written: {err}", self.path.display()),
                )
            })
    }
}
