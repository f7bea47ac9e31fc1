//! `cargo xtask fuzz`: run every fuzz target for a fixed time, from the
//! committed seeds, reporting each target's executions and any crash.
//!
//! cargo-fuzz runs from the repository root with `--fuzz-dir fuzz`, so it
//! never has to guess the project from the folder it starts in; it writes a
//! failing input to `fuzz/artifacts/TARGET/`. A run that fails is a crash
//! only when a file there is new (or rewritten) since the run began;
//! otherwise cargo-fuzz or the build failed before fuzzing, and that is said
//! with the end of its standard error.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus, Stdio};
use std::time::SystemTime;

use anyhow::{Context, Result, bail};

/// The fuzz targets in `fuzz/fuzz_targets/`.
pub const TARGETS: [&str; 8] = [
    "guard",
    "unsatisfiable",
    "offer_view",
    "loader",
    "start",
    "record",
    "serve_line",
    "serve_body",
];

/// How many of cargo-fuzz's last lines of standard error a launch failure
/// repeats.
const TAIL_LINES: usize = 20;

/// The files of one artifact folder, each with when it was last written.
type Listing = BTreeMap<PathBuf, Option<SystemTime>>;

/// What one `cargo fuzz run` came to.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// It ran its time out with no failing input. `slow` are inputs
    /// libFuzzer kept as slow (`slow-unit-…`), which are no failure.
    Clean {
        /// The artifact files written during the run.
        slow: Vec<PathBuf>,
    },
    /// It stopped on a failing input, kept in these new artifact files.
    Found(Vec<PathBuf>),
    /// It stopped without leaving any input: cargo-fuzz, the build or the
    /// fuzzer could not start.
    LaunchFailed,
}

/// Decide a run's outcome from whether it exited successfully and the
/// artifact folder's listing before and after it: only a file new or
/// rewritten since the run began is a finding.
fn outcome(success: bool, before: &Listing, after: &Listing) -> Outcome {
    let new: Vec<PathBuf> = after
        .iter()
        .filter(|(path, written)| before.get(*path) != Some(*written))
        .map(|(path, _)| path.clone())
        .collect();
    match (success, new.is_empty()) {
        (true, _) => Outcome::Clean { slow: new },
        (false, false) => Outcome::Found(new),
        (false, true) => Outcome::LaunchFailed,
    }
}

/// The files in `dir` with their modification times; empty when `dir` does
/// not exist yet.
fn listing(dir: &Path) -> Result<Listing> {
    if !dir.exists() {
        return Ok(Listing::new());
    }
    let mut files = Listing::new();
    for entry in crate::sorted_entries(dir)? {
        let meta = entry
            .metadata()
            .with_context(|| format!("cannot read {}", entry.path().display()))?;
        if meta.is_file() {
            files.insert(entry.path(), meta.modified().ok());
        }
    }
    Ok(files)
}

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
        let artifacts = fuzz.join("artifacts").join(target);
        let before = listing(&artifacts)?;
        let time = format!("-max_total_time={seconds}");
        println!("$ cargo fuzz run --fuzz-dir fuzz {target} -- {time}");
        let (status, tail) = fuzz_run(root, &fuzz, target, &corpus, &seeds, &time)?;
        match outcome(status.success(), &before, &listing(&artifacts)?) {
            Outcome::Clean { slow } => {
                for input in slow {
                    println!(
                        "xtask: fuzz target `{target}` kept a slow input (no failure): {}",
                        input.display()
                    );
                }
            }
            Outcome::Found(inputs) => {
                for input in &inputs {
                    eprintln!(
                        "xtask: fuzz target `{target}` found a failure; the input is {} \
                         (reproduce with `RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir fuzz {target} {}` from the repository root)",
                        input.display(),
                        input.display()
                    );
                }
                return Ok(ExitCode::FAILURE);
            }
            Outcome::LaunchFailed => bail!(
                "fuzz target `{target}` did not run: `cargo fuzz run` stopped ({status}) without leaving \
                 an input in {}, so nothing was found. The end of its standard error:\n{}\n\
                 Fix what it names (a build error is in fuzz/ or the crates it uses); if cargo-fuzz \
                 itself fails, reinstall it with `cargo install --locked --force cargo-fuzz` and retry",
                artifacts.display(),
                tail.join("\n")
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Run `cargo fuzz run` for `target` from the repository root, its standard
/// error passed through as it comes; its exit status and the last
/// [`TAIL_LINES`] lines of its standard error.
fn fuzz_run(
    root: &Path,
    fuzz: &Path,
    target: &str,
    corpus: &Path,
    seeds: &Path,
    time: &str,
) -> Result<(ExitStatus, Vec<String>)> {
    let mut child = Command::new("cargo")
        .args(["fuzz", "run", "--fuzz-dir"])
        .arg(fuzz)
        .arg(target)
        .arg(corpus)
        .arg(seeds)
        .args(["--", time, "-print_final_stats=1"])
        .env("RUSTC_BOOTSTRAP", "1")
        // cargo-fuzz's own errors without a backtrace, so that the tail
        // holds the error; a panic's backtrace is left as it is.
        .env("RUST_LIB_BACKTRACE", "0")
        .current_dir(root)
        .stderr(Stdio::piped())
        .spawn()
        .context("could not start `cargo fuzz`; is cargo on PATH?")?;
    let mut tail = VecDeque::with_capacity(TAIL_LINES);
    if let Some(stderr) = child.stderr.take() {
        let mut ours = std::io::stderr().lock();
        for line in BufReader::new(stderr).split(b'\n') {
            let line = line.context("cannot read the standard error of `cargo fuzz`")?;
            let line = String::from_utf8_lossy(&line).into_owned();
            // Our own standard error closed: keep reading so cargo-fuzz never blocks.
            let _ = writeln!(ours, "{line}");
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
    let status = child
        .wait()
        .context("could not wait for `cargo fuzz` to end")?;
    Ok((status, tail.into()))
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn at(seconds: u64) -> Option<SystemTime> {
        Some(SystemTime::UNIX_EPOCH + Duration::from_secs(seconds))
    }

    fn files(entries: &[(&str, u64)]) -> Listing {
        entries
            .iter()
            .map(|(name, seconds)| (PathBuf::from(name), at(*seconds)))
            .collect()
    }

    #[test]
    fn a_failed_run_with_no_new_artifact_is_a_launch_failure() {
        assert_eq!(
            outcome(false, &files(&[]), &files(&[])),
            Outcome::LaunchFailed
        );
        // An old crash left from an earlier run is not this run's finding.
        let old = files(&[("crash-1", 10)]);
        assert_eq!(outcome(false, &old, &old), Outcome::LaunchFailed);
    }

    #[test]
    fn a_failed_run_with_a_new_or_rewritten_artifact_is_a_crash() {
        let before = files(&[("crash-1", 10)]);
        assert_eq!(
            outcome(false, &before, &files(&[("crash-1", 10), ("crash-2", 20)])),
            Outcome::Found(vec![PathBuf::from("crash-2")])
        );
        // The same crash found again is written again, under the same name.
        assert_eq!(
            outcome(false, &before, &files(&[("crash-1", 30)])),
            Outcome::Found(vec![PathBuf::from("crash-1")])
        );
    }

    #[test]
    fn a_successful_run_is_clean_and_its_new_files_are_only_slow_inputs() {
        assert_eq!(
            outcome(true, &files(&[]), &files(&[])),
            Outcome::Clean { slow: vec![] }
        );
        assert_eq!(
            outcome(true, &files(&[]), &files(&[("slow-unit-1", 5)])),
            Outcome::Clean {
                slow: vec![PathBuf::from("slow-unit-1")]
            }
        );
    }

    #[test]
    fn the_listing_of_a_missing_folder_is_empty_and_of_a_folder_its_files() {
        let dir = std::env::temp_dir().join(format!("xtask-fuzz-listing-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(listing(&dir).unwrap().is_empty());
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("crash-1"), b"x").unwrap();
        let found = listing(&dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            found.keys().collect::<Vec<_>>(),
            vec![&dir.join("crash-1")],
            "files only, no folders"
        );
    }
}
