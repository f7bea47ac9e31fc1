//! The error-code registry: every stable code the crates define has one row
//! in `docs/errors.md`, with one meaning, the binary's exit code for it, and
//! the types (or `skillgraph-cli`) that define it. This check reads the
//! sources for the codes they define — the strings a `fn code` returns, the
//! check-up's `ProblemCode` table, and the binary's `Failure` and answer
//! codes — and fails on a code without a row, a row without a code, a row
//! that names other definers than the sources have, and a code the binary
//! exits with both 1 and 2.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};

/// Where the registry lives.
pub const REGISTRY: &str = "docs/errors.md";

/// What the sources say of one code.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The types that define it (`skillgraph-cli` for the binary's own).
    pub definers: BTreeSet<String>,
    /// The exit codes the binary gives it where it names it itself.
    pub exits: BTreeSet<u8>,
}

/// One row of the registry.
#[derive(Debug, PartialEq, Eq)]
pub struct Row {
    /// The exit code, or `-` when the code is no exit (a refusal the model
    /// reads, a problem inside a check-up).
    pub exit: Option<u8>,
    /// The definers the row names.
    pub definers: BTreeSet<String>,
}

/// Every finding, one line each.
pub fn check(root: &Path) -> Result<Vec<String>> {
    let mut found = BTreeMap::new();
    for entry in crate::sorted_entries(&root.join("crates"))? {
        let src = entry.path().join("src");
        if src.is_dir() {
            scan_dir(&src, &mut found)?;
        }
    }
    let registry = std::fs::read_to_string(root.join(REGISTRY))
        .with_context(|| format!("cannot read {REGISTRY}"))?;
    Ok(compare(&found, &rows(&registry)))
}

fn scan_dir(dir: &Path, found: &mut BTreeMap<String, Found>) -> Result<()> {
    for entry in crate::sorted_entries(dir)? {
        let path = entry.path();
        if path.is_dir() {
            scan_dir(&path, found)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            scan_source(&text, found);
        }
    }
    Ok(())
}

/// The codes one source file defines, added to `found`.
pub fn scan_source(text: &str, found: &mut BTreeMap<String, Found>) {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let mut add = |code: &str, definer: &str, exit: Option<u8>| {
        let entry = found.entry(code.to_owned()).or_default();
        entry.definers.insert(definer.to_owned());
        entry.exits.extend(exit);
    };
    // `impl X { … fn code(…) -> &'static str { … "a-code" … } }`
    let mut rest = code;
    while let Some(at) = rest.find("fn code(") {
        let before = &rest[..at];
        let definer = before
            .rfind("impl ")
            .map(|i| {
                before[i + 5..]
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .next()
                    .unwrap_or_default()
            })
            .unwrap_or_default()
            .to_owned();
        let body = &rest[at..];
        let body = body.find('{').map_or("", |open| block(&body[open..]));
        for literal in literals(body) {
            add(literal, &definer, None);
        }
        rest = &rest[at + 8..];
    }
    // The check-up's table: `Name = "a-code", Severity;`.
    if code.contains("pub enum ProblemCode") || code.contains("problem_codes!") {
        for line in code.lines() {
            let line = line.trim();
            if let Some((_, tail)) = line.split_once("= \"")
                && let Some((literal, after)) = tail.split_once('"')
                && (after.trim_start().starts_with(", Error")
                    || after.trim_start().starts_with(", Warning"))
            {
                add(literal, "ProblemCode", None);
            }
        }
    }
    // The binary's own: `Failure::unusable("a-code"`, `Failure::invalid(…`,
    // and a `play` answer's `refused("a-code"`.
    for (call, exit) in [
        ("Failure::unusable(", Some(2)),
        ("Failure::invalid(", Some(1)),
        ("refused(", None),
    ] {
        let mut rest = code;
        while let Some(at) = rest.find(call) {
            rest = &rest[at + call.len()..];
            let arg = rest.trim_start();
            if let Some(tail) = arg.strip_prefix('"')
                && let Some((literal, _)) = tail.split_once('"')
                && is_code(literal)
            {
                add(literal, "skillgraph-cli", exit);
            }
        }
    }
}

/// The text of the `{ … }` block `text` opens with.
fn block(text: &str) -> &str {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return &text[..=at];
                }
            }
            _ => {}
        }
    }
    text
}

/// The string literals in `text` that are spelled like a code.
fn literals(text: &str) -> Vec<&str> {
    text.split('"')
        .skip(1)
        .step_by(2)
        .filter(|literal| is_code(literal))
        .collect()
}

fn is_code(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_lowercase())
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The registry's rows: `| `code` | exit | definers | meaning |`.
pub fn rows(registry: &str) -> BTreeMap<String, Row> {
    let mut rows = BTreeMap::new();
    for line in registry.lines() {
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        let [code, exit, definers, _meaning] = cells[..] else {
            continue;
        };
        let Some(code) = code.strip_prefix('`').and_then(|c| c.strip_suffix('`')) else {
            continue;
        };
        let definers = definers
            .split(',')
            .map(|d| d.trim().trim_matches('`').to_owned())
            .filter(|d| !d.is_empty())
            .collect();
        rows.insert(
            code.to_owned(),
            Row {
                exit: exit.parse().ok(),
                definers,
            },
        );
    }
    rows
}

/// The findings of the sources against the registry.
pub fn compare(found: &BTreeMap<String, Found>, rows: &BTreeMap<String, Row>) -> Vec<String> {
    let mut findings = Vec::new();
    for (code, seen) in found {
        let Some(row) = rows.get(code) else {
            findings.push(format!(
                "{REGISTRY}: code `{code}` (defined by {}) has no row; add one saying its one meaning and its exit code",
                listed(&seen.definers)
            ));
            continue;
        };
        if row.definers != seen.definers {
            findings.push(format!(
                "{REGISTRY}: code `{code}` is defined by {}, and its row names {}; a code has one meaning, so give a \
                 new meaning a code of its own, or correct the row",
                listed(&seen.definers),
                listed(&row.definers)
            ));
        }
        if seen.exits.len() > 1 {
            findings.push(format!(
                "crates/skillgraph-cli: code `{code}` exits with both 1 and 2; one code has one exit code"
            ));
        }
        if let Some(exit) = seen.exits.iter().next()
            && row.exit != Some(*exit)
        {
            findings.push(format!(
                "{REGISTRY}: code `{code}` exits with {exit}, and its row says {}",
                row.exit.map_or_else(|| "-".to_owned(), |e| e.to_string())
            ));
        }
    }
    for code in rows.keys().filter(|code| !found.contains_key(*code)) {
        findings.push(format!(
            "{REGISTRY}: code `{code}` has a row, and no crate defines it; remove the row"
        ));
    }
    findings
}

fn listed(names: &BTreeSet<String>) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> BTreeMap<String, Found> {
        let mut found = BTreeMap::new();
        scan_source(text, &mut found);
        found
    }

    #[test]
    fn codes_are_read_from_code_fns_the_problem_table_and_the_binary() {
        let source = r#"
impl ReadError {
    pub fn code(&self) -> &'static str {
        match self { ReadError::UnknownSkill { .. } => "read-unknown-skill" }
    }
}
fn f() -> Failure { Failure::unusable(
    "unreadable", "x") }
fn g() -> Failure { Failure::invalid("guard-refused", format!("x")) }
"#;
        let found = scan(source);
        let names: Vec<&str> = found.keys().map(String::as_str).collect();
        assert_eq!(names, ["guard-refused", "read-unknown-skill", "unreadable"]);
        assert_eq!(found["unreadable"].exits, BTreeSet::from([2]));
        assert!(found["read-unknown-skill"].definers.contains("ReadError"));
    }

    #[test]
    fn a_code_with_two_meanings_or_two_exits_or_no_row_fails() {
        let mut found = scan(
            r#"impl A { fn code(&self) -> &'static str { "unknown-skill" } }
               impl B { fn code(&self) -> &'static str { "unknown-skill" } }
               fn f() { Failure::unusable("output", "x"); Failure::invalid("output", "y"); }"#,
        );
        found.insert("fresh".into(), Found::default());
        let registry = "| `unknown-skill` | 1 | `A` | a map names no skill |\n| `output` | 2 | `skillgraph-cli` | output lost |\n| `stale` | - | `C` | gone |\n";
        let findings = compare(&found, &rows(registry));
        assert_eq!(findings.len(), 5, "{findings:#?}");
        assert!(findings[0].contains("`fresh`") && findings[0].contains("has no row"));
        assert!(
            findings[1].contains("exits with both 1 and 2"),
            "{findings:#?}"
        );
        assert!(findings[3].contains("defined by `A`, `B`"), "{findings:#?}");
        assert!(findings[4].contains("`stale` has a row, and no crate defines it"));
    }

    #[test]
    fn every_code_has_one_row() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let findings = check(root).unwrap();
        assert!(findings.is_empty(), "{findings:#?}");
    }
}
