//! `skillgraph explain RECORD`: read a session's record and say where the
//! cursor ended and why, as text, JSON or a mermaid chart. The reasoning is
//! the library's (`skillgraph::skill_explain::explain`); this module reads the file and
//! picks the output.

use std::path::Path;
use std::process::ExitCode;

use clap::ValueEnum;
use skillgraph::skill_explain::explain;
use skillgraph::skill_session::read_record;

use super::{Failure, output};

/// How `explain` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum ExplainFormat {
    /// For a person, in one read.
    Text,
    /// The same content as JSON.
    Json,
    /// The declared map with the path taken drawn over it.
    Mermaid,
    /// One self-contained HTML page: the map with the path, the timeline
    /// with every cause, the active skills (no network, no script).
    Html,
}

/// Explain the record in `file` to its end, or to the end of `iteration`.
pub(super) fn explain_command(
    file: &Path,
    iteration: Option<u64>,
    format: ExplainFormat,
) -> Result<ExitCode, Failure> {
    let text = std::fs::read_to_string(file).map_err(|err| {
        Failure::unusable(
            "unreadable",
            format!(
                "{}: cannot be read as UTF-8 text: {err}; pass the file `play --record` or a host wrote",
                file.display()
            ),
        )
    })?;
    let record = read_record(&text)
        .map_err(|err| Failure::unusable(err.code(), format!("{}: {err}", file.display())))?;
    if let Some(warning) = record.warning() {
        output::warn(&format!("warning: {}: {warning}", file.display()));
    }
    let explanation = explain(&record, iteration)
        .map_err(|err| Failure::unusable(err.code(), format!("{}: {err}", file.display())))?;
    match format {
        ExplainFormat::Text => output::print(&explanation.to_text())?,
        ExplainFormat::Json => output::print_json(&explanation)?,
        ExplainFormat::Mermaid => output::print(&explanation.to_mermaid())?,
        ExplainFormat::Html => {
            let page = skillgraph::skill_explain::page(&record, iteration).map_err(|err| {
                Failure::unusable(err.code(), format!("{}: {err}", file.display()))
            })?;
            output::print(&page)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
