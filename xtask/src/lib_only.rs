//! The library without the command line: `skillgraph` built with
//! `--no-default-features` (no `cli` feature) must pull in no crate that only
//! the command-line tool needs, so a host that embeds it builds no argument
//! parser.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The `cargo` arguments that list the crates the library alone builds: one
/// `name vX.Y.Z` per line, normal dependencies only (no dev or build ones).
pub const TREE: [&str; 11] = [
    "tree",
    "-p",
    "skillgraph",
    "--no-default-features",
    "--edges",
    "normal",
    "--prefix",
    "none",
    "--format",
    "{p}",
    "--offline",
];

/// Crates only the command-line tool needs: clap and the terminal crates it
/// brings, and the MCP server's SDK and async runtime.
const CLI_ONLY: [&str; 16] = [
    "clap",
    "clap_builder",
    "clap_derive",
    "clap_lex",
    "anstream",
    "anstyle",
    "anstyle-parse",
    "anstyle-query",
    "anstyle-wincon",
    "colorchoice",
    "is_terminal_polyfill",
    "rmcp",
    "tokio",
    "tokio-util",
    "process-wrap",
    "schemars",
];

/// Every CLI-only crate the library without its `cli` feature depends on,
/// one finding each.
pub fn check(root: &Path) -> Result<Vec<String>> {
    let output = Command::new("cargo")
        .args(TREE)
        .current_dir(root)
        .output()
        .context("could not run `cargo tree`")?;
    if !output.status.success() {
        bail!(
            "`cargo {}` failed: {}",
            TREE.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(cli_crates_in(&String::from_utf8_lossy(&output.stdout)))
}

/// The findings for a `cargo tree` listing: each CLI-only crate it names,
/// once, with the fix. Reads the listing with or without the tree's
/// indentation.
pub fn cli_crates_in(tree: &str) -> Vec<String> {
    let mut found: Vec<&str> = tree
        .lines()
        .filter_map(crate_name)
        .filter(|name| CLI_ONLY.contains(name))
        .collect();
    found.sort_unstable();
    found.dedup();
    found
        .into_iter()
        .map(|name| {
            format!(
                "crates/skillgraph/Cargo.toml: skillgraph without its `cli` feature depends on `{name}`, which only \
                 the command-line tool needs, so every host that embeds the library builds it. Make the dependency \
                 that brings `{name}` optional and enable it from the `cli` feature (`cargo tree -p skillgraph \
                 --no-default-features -e normal -i {name}` shows the path)"
            )
        })
        .collect()
}

/// The crate a `cargo tree` line names: its first word after the drawing.
fn crate_name(line: &str) -> Option<&str> {
    line.trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .split_whitespace()
        .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_with_clap_fails_and_names_it() {
        let tree = "skillgraph v0.1.0 (/w/crates/skillgraph)\n\
                    ├── clap v4.5.40\n\
                    │   ├── clap_builder v4.5.40\n\
                    │   │   └── anstyle v1.0.11\n\
                    │   └── clap_derive v4.5.40 (proc-macro)\n\
                    └── serde_json v1.0.140\n\
                    clap v4.5.40 (*)\n";
        let findings = cli_crates_in(tree);
        assert_eq!(findings.len(), 4, "{findings:#?}");
        assert!(findings[1].contains("depends on `clap`"), "{findings:#?}");
        assert!(findings[1].contains("`cli` feature"), "{findings:#?}");
    }

    #[test]
    fn a_tree_with_the_async_runtime_fails_and_names_it() {
        let tree =
            "skillgraph v0.1.0\n├── rmcp v3.11.0\n│   └── tokio v1.48.0\n└── serde v1.0.219\n";
        let findings = cli_crates_in(tree);
        assert_eq!(findings.len(), 2, "{findings:#?}");
        assert!(findings[0].contains("depends on `rmcp`"), "{findings:#?}");
        assert!(findings[1].contains("depends on `tokio`"), "{findings:#?}");
    }

    #[test]
    fn a_tree_without_cli_crates_passes() {
        let tree = "skillgraph v0.1.0 (/w/crates/skillgraph)\nserde v1.0.219\nclapper v0.1.0\n";
        assert!(cli_crates_in(tree).is_empty());
    }
}
