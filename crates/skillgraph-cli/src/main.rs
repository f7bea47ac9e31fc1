//! `skillgraph`: check, inspect and run a skill map from the command line.
//!
//! Commands:
//! - `check PATH [--format text|json]` — every problem of the map;
//! - `tools PATH [--cursor ID] [--hide ID]... [--offer FILE] [--format …]` —
//!   the `read_skill` and `list_skills` tools for a position, in a host's
//!   format;
//! - `route PATH --cursor ID --results FILE [--iteration N] [--message TEXT]`
//!   — where a batch of tool results moves the cursor, with guard evidence;
//! - `draw PATH` — the map as a mermaid flowchart;
//! - `guard --guard JSON --view JSON [--format text|json]` — one guard's
//!   evidence for one hop;
//! - `play PATH [--posture P] [--record FILE]` — a session driven by JSON
//!   lines on standard input, one answer a line, its record kept;
//! - `explain RECORD [--iteration N] [--format text|json|mermaid]` — where a
//!   recorded session's cursor ended, and why.
//!
//! Exit codes: 0 success (warnings allowed), 1 the map or guard has errors,
//! 2 the input cannot be used (missing file, bad JSON or YAML, unknown key).

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("error[{}]: {}", failure.code, failure.message);
            ExitCode::from(failure.exit)
        }
    }
}
