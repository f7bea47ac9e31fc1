//! A record file: one event a line, flushed per event, so that a killed
//! process loses at most the event in flight. `play` and the MCP server
//! write their records through it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use skill_session::Event;

/// A record file that could not be created or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordFileError {
    /// The file could not be created (or truncated).
    #[error("--record {}: cannot be created: {source}; pass a path in a folder that exists and that you may write to", path.display())]
    Create {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A line could not be written.
    #[error("--record {}: cannot be written: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
}

impl RecordFileError {
    /// The stable code of the error: `unwritable`.
    pub fn code(&self) -> &'static str {
        "unwritable"
    }
}

/// The record file, one event a line, flushed per event.
#[derive(Debug)]
pub struct RecordWriter {
    path: PathBuf,
    file: BufWriter<File>,
}

impl RecordWriter {
    /// Create (or truncate) the file at `path`.
    ///
    /// # Errors
    ///
    /// [`RecordFileError::Create`] naming the file and the system's reason.
    pub fn create(path: &Path) -> Result<Self, RecordFileError> {
        let file = File::create(path).map_err(|source| RecordFileError::Create {
            path: path.to_owned(),
            source,
        })?;
        Ok(RecordWriter {
            path: path.to_owned(),
            file: BufWriter::new(file),
        })
    }

    /// Append `events`, one line each, flushing after each.
    ///
    /// # Errors
    ///
    /// [`RecordFileError::Write`] at the first line that cannot be written.
    pub fn write(&mut self, events: Vec<Event>) -> Result<(), RecordFileError> {
        for event in events {
            self.write_line(&event.to_line())?;
        }
        Ok(())
    }

    /// Append one event's `line` and flush it.
    ///
    /// # Errors
    ///
    /// [`RecordFileError::Write`] naming the file and the system's reason.
    pub fn write_line(&mut self, line: &str) -> Result<(), RecordFileError> {
        writeln!(self.file, "{line}")
            .and_then(|()| self.file.flush())
            .map_err(|source| RecordFileError::Write {
                path: self.path.clone(),
                source,
            })
    }
}
