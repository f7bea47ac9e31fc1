//! Tidy: the rules review would otherwise police. Every Rust file opens with
//! a `//!` doc that says which concept it holds, every crate opts into the
//! workspace lints (`forbid(unsafe_code)`, `deny(missing_docs)`), and every
//! source file of a crate under `crates/` is named in that crate's section of
//! the code map in `docs/architecture.md`, so the map cannot drift from the
//! code unnoticed.

use std::path::Path;

use anyhow::{Context, Result};

/// Folders holding the workspace's Rust code (`examples` holds the support
/// desk's upstream server).
const ROOTS: [&str; 4] = ["crates", "xtask", "benches", "examples"];

/// Every finding, one line each.
pub fn check(root: &Path) -> Result<Vec<String>> {
    let mut findings = Vec::new();
    for folder in ROOTS {
        walk(root, &root.join(folder), &mut findings)?;
    }
    findings.extend(code_map(root)?);
    Ok(findings)
}

/// Where the code map lives, and the heading that opens it.
const ARCHITECTURE: &str = "docs/architecture.md";
const CODE_MAP: &str = "## Code map";

/// Every source file of every crate under `crates/` that the code map does
/// not name in the crate's own section.
fn code_map(root: &Path) -> Result<Vec<String>> {
    let doc = std::fs::read_to_string(root.join(ARCHITECTURE))
        .with_context(|| format!("cannot read {ARCHITECTURE}"))?;
    let mut findings = Vec::new();
    for entry in crate::sorted_entries(&root.join("crates"))? {
        let src = entry.path().join("src");
        if !src.is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let mut files = Vec::new();
        source_files(&src, &src, &mut files)?;
        findings.extend(unmapped(&doc, &name, &files));
    }
    Ok(findings)
}

/// The `.rs` files below `dir`, as paths relative to `src` with `/`.
fn source_files(src: &Path, dir: &Path, files: &mut Vec<String>) -> Result<()> {
    for entry in crate::sorted_entries(dir)? {
        let path = entry.path();
        if path.is_dir() {
            source_files(src, &path, files)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(src).unwrap_or(&path);
            let parts: Vec<_> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            files.push(parts.join("/"));
        }
    }
    Ok(())
}

/// The findings for one crate: its section of the code map (the text from
/// its `### `name`` heading to the next heading of that level) must name
/// each of `files` in backticks; `lib.rs` and `main.rs` are the crate's
/// entry points and need not be named.
pub fn unmapped(doc: &str, krate: &str, files: &[String]) -> Vec<String> {
    let Some(section) = crate_section(doc, krate) else {
        return vec![format!(
            "{ARCHITECTURE}: the code map has no section for crate `{krate}`; add `### `{krate}`` under `{CODE_MAP}` saying what it owns and naming its files"
        )];
    };
    files
        .iter()
        .filter(|file| !matches!(file.as_str(), "lib.rs" | "main.rs"))
        .filter(|file| !section.contains(&format!("`{file}`")))
        .map(|file| {
            format!(
                "{ARCHITECTURE}: crates/{krate}/src/{file} is not named in the code map; name `{file}` in the `{krate}` section with the concept it holds"
            )
        })
        .collect()
}

/// The text of `### `krate``'s section within the code map.
fn crate_section<'d>(doc: &'d str, krate: &str) -> Option<&'d str> {
    let map = &doc[doc.find(CODE_MAP)? + CODE_MAP.len()..];
    let map = map.find("\n## ").map_or(map, |end| &map[..end]);
    let heading = format!("\n### `{krate}`");
    let section = &map[map.find(&heading)? + heading.len()..];
    Some(
        section
            .find("\n### ")
            .map_or(section, |end| &section[..end]),
    )
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
    fn a_source_file_the_code_map_does_not_name_is_a_finding() {
        let doc = "# A\n## Code map\n### `core` (base)\n`map.rs` holds maps.\n\
                   ### `tools`\n`view.rs`\n## The fence\n`route.rs`\n";
        let files = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        assert!(unmapped(doc, "core", &files(&["lib.rs", "map.rs"])).is_empty());
        // Named, but in another crate's section or outside the code map.
        let findings = unmapped(doc, "core", &files(&["view.rs", "route.rs"]));
        assert_eq!(findings.len(), 2, "{findings:#?}");
        assert!(
            findings[0].contains("crates/core/src/view.rs"),
            "{findings:#?}"
        );
        // A crate with no section at all.
        let findings = unmapped(doc, "session", &files(&["lib.rs"]));
        assert!(
            findings[0].contains("no section for crate `session`"),
            "{findings:#?}"
        );
    }

    #[test]
    fn the_workspace_is_tidy() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let findings = check(root).unwrap();
        assert!(findings.is_empty(), "{findings:#?}");
    }
}
