//! `cargo xtask`: the project's one build tool.
//!
//! Subcommands:
//!
//! - `cargo xtask ci` — everything CI checks, in order, stopping at the first
//!   failure with its exit code: `cargo fmt --check`, `cargo clippy
//!   --workspace --all-targets -- -D warnings`, `cargo test --workspace`,
//!   `cargo fetch`, `cargo deny --offline check bans licenses sources`
//!   (installing cargo-deny with `cargo install --locked` when it is
//!   missing; its `bans` hold the crate layering, and keep clap and rmcp out
//!   of every library below the binary and the server), then the fence,
//!   tidy and codes checks below, then `cargo xtask interop` (failing, never
//!   skipping, when Python is missing; its npm part is skipped, saying so,
//!   when npm is not on PATH).
//! - `cargo xtask fence` — the layering rules of SPEC §1: each pure library
//!   crate depends only on what its layer allows, and does no I/O, printing
//!   or global state.
//! - `cargo xtask tidy` — every Rust file opens with a `//!` doc; every crate
//!   opts into the workspace lints; every source file of a crate is named in
//!   that crate's section of the code map in `docs/architecture.md`.
//! - `cargo xtask interop [--python-only]` — `skillgraph serve` against
//!   clients and servers nobody here wrote, on both protocol generations,
//!   over stdio and HTTP: the Python SDK's and FastMCP's clients on the
//!   support desk, mcp-server-time through `serve`, the reference validator's
//!   verdicts; then, when npm is on PATH, the MCP inspector's CLI,
//!   server-everything through `serve`, the official conformance suite
//!   against `serve --http` (see `interop.rs`), and the run's page in
//!   headless Chromium (`page_check.rs`).
//! - `cargo xtask codes` — the error-code registry: every code the crates
//!   define has one row in `docs/errors.md` (its meaning, its exit code, the
//!   types that define it), and the binary exits with one code for each.
//! - `cargo xtask release [--execute]` — refuses unless the work tree is clean
//!   and `cargo xtask ci` passes; checks that every publishable crate has the
//!   same version, a description, a license, a README and docs.rs metadata,
//!   and that CHANGELOG.md has a section for the version; runs `cargo
//!   package` for every publishable crate in dependency order (skill-core,
//!   skill-guard, skill-checkup, skill-tools, skill-session, skill-md,
//!   skill-explain, skillgraph, skillgraph-otlp, skillgraph-mcp,
//!   skillgraph-cli) and lists
//!   what it would publish. A dry run unless
//!   `--execute`, which publishes them in that order.
//! - `cargo xtask bump X.Y.Z` — set the version everywhere it is written.
//! - `cargo xtask fuzz [--seconds N] [TARGET...]` — run each fuzz target in
//!   `fuzz/` (guard, unsatisfiable, offer_view, loader, start, record,
//!   serve_line, serve_body) for N seconds (default 60), starting from the seeds in
//!   `fuzz/seeds/`; installs cargo-fuzz when missing and runs it from the
//!   repository root (`--fuzz-dir fuzz`) on the stable toolchain with
//!   `RUSTC_BOOTSTRAP=1`.
//!   A failed run is a crash only when it left a new input in
//!   `fuzz/artifacts/TARGET/`; otherwise it is a launch failure, reported
//!   with the end of cargo-fuzz's standard error.

mod codes;
mod debian;
mod faults;
mod fence;
mod fuzz;
mod interop;
mod mcp_suite;
mod otlp_check;
mod page_check;
mod release;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

const USAGE: &str = "usage: cargo xtask <ci|fence|tidy|codes|fuzz|interop|release|bump>

  ci                               fmt, clippy, tests, cargo-deny, fence, tidy, interop's Python part; stops at a failure
  fence                            check the crate layering and the no-I/O rule of the pure library crates
  tidy                             check module docs, manifest lints and the code map
  codes                            check that every error code has one row in docs/errors.md
  fuzz [--seconds N] [TARGET...]   run each fuzz target for N seconds (default 60)
  interop [--python-only]          run `skillgraph serve` against real MCP clients and servers (Python, then npm) and the conformance suite
  release [--execute]              check and package the crates for publishing (a dry run unless --execute)
  bump X.Y.Z                       set the version everywhere";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    let outcome = match args.first().map(String::as_str) {
        Some("ci") => ci(&root),
        Some("fence") => report(fence::check(&root)),
        Some("tidy") => report(tidy::check(&root)),
        Some("codes") => report(codes::check(&root)),
        Some("fuzz") => fuzz::run(&root, &args[1..]),
        Some("interop") => interop::run_all(&root, &args[1..]),
        Some("release") => release::release(&root, &args[1..]),
        Some("bump") => release::bump(&root, &args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            eprintln!("{USAGE}");
            Ok(ExitCode::from(2))
        }
    };
    outcome.unwrap_or_else(|err| {
        eprintln!("xtask: {err:#}");
        ExitCode::FAILURE
    })
}

/// The entries of `dir`, in path order.
pub(crate) fn sorted_entries(dir: &Path) -> Result<Vec<std::fs::DirEntry>> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::path);
    Ok(entries)
}

/// The workspace root: the parent of this crate's folder.
fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map_or(manifest.clone(), Path::to_path_buf)
}

/// Print findings; success when there are none.
fn report(findings: Result<Vec<String>>) -> Result<ExitCode> {
    let findings = findings?;
    for finding in &findings {
        eprintln!("{finding}");
    }
    Ok(if findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Run one command from the workspace root, echoing it; its exit code on
/// failure.
pub(crate) fn run(root: &Path, program: &str, args: &[&str]) -> Result<Option<ExitCode>> {
    println!("$ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(root)
        .status()
        .with_context(|| format!("could not start `{program}`; is it on PATH?"))?;
    if status.success() {
        return Ok(None);
    }
    let code = status
        .code()
        .and_then(|c| u8::try_from(c).ok())
        .filter(|c| *c != 0)
        .unwrap_or(1);
    eprintln!(
        "xtask: `{program} {}` failed with exit code {code}",
        args.join(" ")
    );
    Ok(Some(ExitCode::from(code)))
}

pub(crate) fn ci(root: &Path) -> Result<ExitCode> {
    let steps: [&[&str]; 4] = [
        &["fmt", "--all", "--check"],
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
        &["test", "--workspace"],
        // cargo-deny reads the whole graph, every platform's crates included.
        &["fetch"],
    ];
    // The run store's tests start redis-server; the deployment example is
    // checked by haproxy.
    debian::ensure_servers(root)?;
    for step in steps {
        if let Some(code) = run(root, "cargo", step)? {
            return Ok(code);
        }
    }
    ensure_cargo_deny(root)?;
    if let Some(code) = run(
        root,
        "cargo",
        &["deny", "--offline", "check", "bans", "licenses", "sources"],
    )? {
        return Ok(code);
    }
    for (name, check) in [
        ("fence", fence::check as fn(&Path) -> Result<Vec<String>>),
        ("tidy", tidy::check),
        ("codes", codes::check),
    ] {
        println!("$ cargo xtask {name}");
        let code = report(check(root))?;
        if code != ExitCode::SUCCESS {
            eprintln!("xtask: `cargo xtask {name}` failed");
            return Ok(code);
        }
    }
    println!("$ haproxy -c -dW -f examples/deploy/haproxy.cfg");
    if let Some(code) = run(
        root,
        "haproxy",
        &["-c", "-dW", "-f", "examples/deploy/haproxy.cfg"],
    )? {
        eprintln!("xtask: examples/deploy/haproxy.cfg is refused by haproxy (above)");
        return Ok(code);
    }
    println!("$ cargo xtask interop");
    interop::run_all(root, &[]).context("`cargo xtask interop` failed")?;
    println!("xtask: ci passed");
    Ok(ExitCode::SUCCESS)
}

fn ensure_cargo_deny(root: &Path) -> Result<()> {
    let present = Command::new("cargo")
        .args(["deny", "--version"])
        .current_dir(root)
        .output()
        .is_ok_and(|out| out.status.success());
    if present {
        return Ok(());
    }
    if run(root, "cargo", &["install", "--locked", "cargo-deny"])?.is_some() {
        bail!(
            "cargo-deny is missing and could not be installed; run `cargo install --locked cargo-deny` and retry"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usage_line_names_every_subcommand_it_lists() {
        let mut lines = USAGE.lines();
        let first = lines.next().unwrap();
        let (_, named) = first.split_once('<').unwrap();
        let named: Vec<&str> = named.trim_end_matches('>').split('|').collect();
        let listed: Vec<&str> = lines.filter_map(|l| l.split_whitespace().next()).collect();
        assert_eq!(named, listed);
    }
}
