//! Tidy: the rules review would otherwise police. Every Rust file opens with
//! a `//!` doc that says which concept it holds, and every crate opts into the
//! workspace lints (`forbid(unsafe_code)`, `deny(missing_docs)`).

use std::path::Path;

use anyhow::{Context, Result};

/// Folders holding the workspace's Rust code.
const ROOTS: [&str; 3] = ["crates", "xtask", "benches"];

/// Every finding, one line each.
pub fn check(root: &Path) -> Result<Vec<String>> {
    let mut findings = Vec::new();
    for folder in ROOTS {
        walk(root, &root.join(folder), &mut findings)?;
    }
    Ok(findings)
}

fn walk(root: &Path, dir: &Path, findings: &mut Vec<String>) -> Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    let entries = crate::sorted_entries(dir)?;
    for entry in entries {
        let path = entry.path();
        let shown = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != "vectors" {
                walk(root, &path, findings)?;
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text =
                std::fs::read_to_string(&path).with_context(|| format!("cannot read {shown}"))?;
            findings.extend(module_doc(&shown, &text));
        } else if name == "Cargo.toml" {
            let text =
                std::fs::read_to_string(&path).with_context(|| format!("cannot read {shown}"))?;
            findings.extend(manifest_lints(&shown, &text));
        }
    }
    Ok(())
}

/// A file must open with `//!` (after blank lines and inner attributes).
pub fn module_doc(file: &str, text: &str) -> Option<String> {
    let first = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with("#!["));
    match first {
        Some(line)
            if line.starts_with("//!") && !line.contains("FIXME") && !line.contains("TODO") =>
        {
            None
        }
        _ => Some(format!(
            "{file}:1: the file does not open with a `//!` doc; start it with one line saying which concept the module holds"
        )),
    }
}

/// A manifest must contain `[lints]` with `workspace = true`.
pub fn manifest_lints(file: &str, text: &str) -> Option<String> {
    if text.contains("[workspace]") {
        return None;
    }
    let lints = text
        .split("[lints]")
        .nth(1)
        .and_then(|rest| rest.lines().find(|l| !l.trim().is_empty()));
    match lints {
        Some(line) if line.replace(' ', "") == "workspace=true" => None,
        _ => Some(format!(
            "{file}: the crate does not opt into the workspace lints; add `[lints]` with `workspace = true`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_without_a_module_doc_are_findings() {
        assert!(module_doc("a.rs", "//! Holds a.\nfn a() {}").is_none());
        assert!(module_doc("a.rs", "\n#![allow(x)]\n//! Holds a.").is_none());
        assert!(module_doc("a.rs", "/// item doc\nfn a() {}").is_some());
        assert!(module_doc("a.rs", "//! TODO: say what").is_some());
    }

    #[test]
    fn manifests_must_use_workspace_lints() {
        assert!(manifest_lints("Cargo.toml", "[package]\n[lints]\nworkspace = true\n").is_none());
        assert!(manifest_lints("Cargo.toml", "[package]\nname = \"x\"\n").is_some());
    }

    #[test]
    fn the_workspace_is_tidy() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let findings = check(root).unwrap();
        assert!(findings.is_empty(), "{findings:#?}");
    }
}
