//! `skill-conformance FILE_OR_DIR...`: check vector files against the
//! skillgraph crates. Prints one line per failing case, a count per suite,
//! and `N passed, M failed`; exits 1 when anything failed, 2 on bad usage.

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: skill-conformance FILE_OR_DIR...\n\nChecks every case in the named .jsonl files, and in every .jsonl file below\nthe named folders, against the skillgraph crates. Example:\n\n    skill-conformance crates/skill-conformance/vectors";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return if args.is_empty() {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    let paths: Vec<PathBuf> = args.into_iter().map(PathBuf::from).collect();
    let report = skill_conformance::run_paths(&paths);
    println!("{report}");
    if report.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
