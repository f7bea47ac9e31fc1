//! Running files and folders of vectors into one report.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::Case;
use crate::suites::{Mismatch, check_case};

/// One failing case (or unreadable file or line).
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The case's name, or `file:line` when the line is not a case.
    pub name: String,
    /// What went wrong, in one line.
    pub detail: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FAIL {}: {}", self.name, self.detail)
    }
}

/// Passed and failed cases of one suite.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SuiteCount {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
}

/// What a run found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Every failure, in the order met.
    pub failures: Vec<Failure>,
    /// Counts per suite, by suite name.
    pub suites: BTreeMap<String, SuiteCount>,
    /// Cases that passed.
    pub passed: usize,
    /// Cases, files and lines that failed.
    pub failed: usize,
}

impl Report {
    /// Whether nothing failed.
    pub fn is_success(&self) -> bool {
        self.failed == 0
    }

    fn fail(&mut self, name: String, detail: String) {
        self.failed += 1;
        self.failures.push(Failure { name, detail });
    }

    fn record(&mut self, case: &Case, outcome: Result<(), Mismatch>) {
        let count = self.suites.entry(case.suite.clone()).or_default();
        match outcome {
            Ok(()) => {
                count.passed += 1;
                self.passed += 1;
            }
            Err(mismatch) => {
                count.failed += 1;
                let detail = match mismatch {
                    Mismatch::Differs { actual } => {
                        format!("expected {} got {}", case.expect, actual)
                    }
                    Mismatch::BadInput(why) => {
                        format!("input not understood ({why}); expected {}", case.expect)
                    }
                    Mismatch::UnknownSuite => format!(
                        "unknown suite \"{}\" (known: {})",
                        case.suite,
                        crate::SUITES.join(", ")
                    ),
                };
                self.fail(case.name.clone(), detail);
            }
        }
    }
}

impl fmt::Display for Report {
    /// One line per failure, one per suite, then `N passed, M failed`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for failure in &self.failures {
            writeln!(f, "{failure}")?;
        }
        for (suite, count) in &self.suites {
            writeln!(
                f,
                "{suite}: {} passed, {} failed",
                count.passed, count.failed
            )?;
        }
        write!(f, "{} passed, {} failed", self.passed, self.failed)
    }
}

/// Check every line of `text` (one vector file's contents) into `report`;
/// `origin` names the file in failures about lines that are not cases.
pub fn run_text(report: &mut Report, origin: &str, text: &str) {
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match Case::from_line(line) {
            Ok(case) => {
                let outcome = check_case(&case);
                report.record(&case, outcome);
            }
            Err(err) => {
                let what = match serde_json::from_str::<Value>(line) {
                    Ok(_) => format!(
                        "not a case ({err}); a case is {{\"suite\", \"name\", \"input\", \"expect\"}}"
                    ),
                    Err(_) => format!("not JSON ({err})"),
                };
                report.fail(format!("{origin}:{}", number + 1), what);
            }
        }
    }
}

/// Run every vector file named, or found below a named folder (files ending
/// in `.jsonl`, in path order).
pub fn run_paths(paths: &[PathBuf]) -> Report {
    let mut report = Report::default();
    for path in paths {
        let mut files = Vec::new();
        if let Err(err) = collect(path, &mut files) {
            report.fail(path.display().to_string(), format!("cannot be read: {err}"));
        }
        for file in files {
            match fs::read_to_string(&file) {
                Ok(text) => run_text(&mut report, &file.display().to_string(), &text),
                Err(err) => {
                    report.fail(file.display().to_string(), format!("cannot be read: {err}"))
                }
            }
        }
    }
    report
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if !path.is_dir() {
        fs::metadata(path)?;
        files.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = fs::read_dir(path)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            collect(&entry, files)?;
        } else if entry.extension().is_some_and(|ext| ext == "jsonl") {
            files.push(entry);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_suites_and_bad_lines_fail() {
        let mut report = Report::default();
        let text = concat!(
            r#"{"suite":"target.classify","name":"ok","input":{"target":"a"},"expect":{"class":"unreachable"}}"#,
            "\n",
            r#"{"suite":"target.classify","name":"wrong","input":{"target":"a"},"expect":{"class":"hop"}}"#,
            "\n",
            r#"{"suite":"nope.never","name":"unknown","input":{},"expect":{}}"#,
            "\n",
            "{not json\n",
            "[1]\n",
        );
        run_text(&mut report, "mem", text);
        assert_eq!((report.passed, report.failed), (1, 4));
        let printed = report.to_string();
        assert!(printed.ends_with("1 passed, 4 failed"), "{printed}");
        assert!(
            printed.contains(
                "FAIL wrong: expected {\"class\":\"hop\"} got {\"class\":\"unreachable\"}"
            ),
            "{printed}"
        );
        assert!(
            printed.contains("FAIL unknown: unknown suite \"nope.never\""),
            "{printed}"
        );
        assert!(printed.contains("FAIL mem:4: not JSON"), "{printed}");
        assert!(printed.contains("FAIL mem:5: not a case"), "{printed}");
        assert!(
            printed.contains("target.classify: 1 passed, 1 failed"),
            "{printed}"
        );
    }

    #[test]
    fn a_missing_path_fails() {
        let report = run_paths(&[PathBuf::from("/no/such/vectors.jsonl")]);
        assert!(!report.is_success());
        assert!(report.failures[0].detail.starts_with("cannot be read"));
    }
}
