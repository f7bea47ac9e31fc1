//! The conformance runner: checks vectors answered by the reference
//! implementation against the skillgraph crates.
//!
//! A vector file holds one case per line,
//! `{ "suite", "name", "input", "expect" }`. [`run_paths`] reads any number of
//! files or folders of them, checks every case with [`check_case`], and returns
//! a [`Report`] with one failure per failing case, counts per suite, and the
//! totals. A case of a suite this runner does not know is a failure, never a
//! skip; so is a line that is not a case and a file that cannot be read.
//!
//! Numbers compare by value (`5` equals `5.0`); everything else exactly.
//!
//! ```
//! let line = r#"{"suite":"target.classify","name":"t#1","input":{"target":"a","cursor":"a"},"expect":{"class":"self"}}"#;
//! let case = skill_conformance::Case::from_line(line)?;
//! assert!(skill_conformance::check_case(&case).is_ok());
//! # Ok::<(), serde_json::Error>(())
//! ```

mod compare;
mod report;
mod suites;

pub use compare::json_equal;
pub use report::{Failure, Report, SuiteCount, run_paths, run_text};
pub use suites::{Mismatch, SUITES, check_case};

use serde::Deserialize;
use serde_json::Value;

/// One conformance case.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Case {
    /// The suite, e.g. `guard.evaluate`.
    pub suite: String,
    /// The case's name, unique within its file.
    pub name: String,
    /// The input the suite's operation takes.
    pub input: Value,
    /// What the reference answered.
    pub expect: Value,
}

impl Case {
    /// Parse one line of a vector file (object key order is preserved).
    ///
    /// # Errors
    ///
    /// The line is not JSON, or not an object with the four fields.
    pub fn from_line(line: &str) -> Result<Case, serde_json::Error> {
        serde_json::from_str(line)
    }
}
