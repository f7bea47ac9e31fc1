//! `cargo xtask fuzz`: run every fuzz target for a fixed time, from the
//! committed seeds, reporting each target's executions and any crash.

use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

/// The fuzz targets in `fuzz/fuzz_targets/`.
pub const TARGETS: [&str; 5] = ["guard", "unsatisfiable", "offer_view", "loader", "start"];

/// Run the targets named in `args` (all when none) for `--seconds N` each.
pub fn run(root: &Path, args: &[String]) -> Result<ExitCode> {
    let mut seconds = 60u64;
    let mut targets = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--seconds" {
            let value = rest
                .next()
                .context("--seconds needs a number, e.g. --seconds 600")?;
            seconds = value.parse().with_context(|| {
                format!("--seconds takes a whole number of seconds, not {value:?}")
            })?;
        } else if TARGETS.contains(&arg.as_str()) {
            targets.push(arg.as_str());
        } else {
            bail!(
                "unknown fuzz target or flag {arg:?}; the targets are {}",
                TARGETS.join(", ")
            );
        }
    }
    if targets.is_empty() {
        targets = TARGETS.to_vec();
    }
    ensure_cargo_fuzz(root)?;
    let fuzz = root.join("fuzz");
    for target in targets {
        let corpus = fuzz.join("corpus").join(target);
        std::fs::create_dir_all(&corpus)
            .with_context(|| format!("cannot create {}", corpus.display()))?;
        let seeds = fuzz.join("seeds").join(target);
        let time = format!("-max_total_time={seconds}");
        println!("$ cargo fuzz run {target} -- {time}");
        let status = Command::new("cargo")
            .args(["fuzz", "run", target])
            .arg(&corpus)
            .arg(&seeds)
            .args(["--", &time, "-print_final_stats=1"])
            .env("RUSTC_BOOTSTRAP", "1")
            .current_dir(&fuzz)
            .status()
            .context("could not start `cargo fuzz`")?;
        if !status.success() {
            eprintln!(
                "xtask: fuzz target `{target}` found a failure; the input is in fuzz/artifacts/{target}/"
            );
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn ensure_cargo_fuzz(root: &Path) -> Result<()> {
    let present = Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !present && crate::run(root, "cargo", &["install", "--locked", "cargo-fuzz"])?.is_some() {
        bail!(
            "cargo-fuzz is missing and could not be installed; run `cargo install --locked cargo-fuzz` and retry"
        );
    }
    Ok(())
}
