//! `skillgraph`: check, inspect, run, replay, explain and serve a skill map
//! from the command line. This crate owns arguments, files and exit codes;
//! every decision is the libraries' (`skillgraph`, `skillgraph-mcp`).
//!
//! Commands:
//! - `check PATH [--format text|json]` — every problem of the map;
//! - `tools PATH [--cursor ID] [--hide ID]... [--offer FILE] [--format …]` —
//!   the `read_skill` and `list_skills` tools for a position, in a host's
//!   format;
//! - `route PATH --cursor ID --results FILE [--iteration N] [--message TEXT]`
//!   — where a batch of tool results moves the cursor, with guard evidence;
//! - `draw PATH` — the map as a mermaid flowchart;
//! - `guard --guard JSON (--view JSON | --witness) [--format text|json]` —
//!   one guard's evidence for one hop, or a view that passes and the near
//!   misses;
//! - `test PATH [--generate]` — the routing cases of `tests/*.jsonl`, or
//!   cases generated from the routes' witnesses;
//! - `play PATH [--posture P] [--all-tools|--strict-tools] [--record FILE]`
//!   — a session driven by JSON lines on standard input, one answer a line,
//!   its record kept;
//! - `replay RECORD [--map PATH]` — a run reproduced from its record alone;
//! - `explain RECORD [--iteration N] [--format text|json|mermaid]` — where a
//!   recorded session's cursor ended, and why;
//! - `serve PATH [--record FILE] [--posture P] [--all-tools|--strict-tools]
//!   [--upstream-timeout SECONDS]` — the map as an MCP server over standard input and output, in front of
//!   the upstream servers it declares.
//!
//! Exit codes: 0 success (warnings allowed), 1 the map or guard has errors,
//! a test case fails or a replay differs, 2 the input cannot be used
//! (missing file, bad JSON or YAML, unknown key). Output goes through one
//! path that ends quietly when its reader has gone (`skillgraph tools DIR |
//! head`).

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(failure) => {
            cli::warn(&format!("error[{}]: {}", failure.code, failure.message));
            ExitCode::from(failure.exit)
        }
    }
}
