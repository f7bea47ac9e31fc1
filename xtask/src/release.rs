//! `cargo xtask release` and `cargo xtask bump`: publishing the library
//! crates, in dependency order, only from a clean tree that passes CI.

use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The publishable crates, in the order they must be published.
pub const PUBLISH_ORDER: [&str; 11] = [
    "skill-core",
    "skill-guard",
    "skill-checkup",
    "skill-tools",
    "skill-session",
    "skill-md",
    "skill-explain",
    "skillgraph",
    "skillgraph-otlp",
    "skillgraph-mcp",
    "skillgraph-cli",
];

/// `cargo xtask release [--execute]`.
pub fn release(root: &Path, args: &[String]) -> Result<ExitCode> {
    let execute = match args {
        [] => false,
        [flag] if flag == "--execute" => true,
        _ => bail!("usage: cargo xtask release [--execute] (a dry run unless --execute)"),
    };
    let dirty = git_status(root)?;
    if !dirty.is_empty() {
        bail!("the work tree is not clean; commit or stash these first:\n{dirty}");
    }
    println!("$ cargo xtask ci");
    let ci = crate::ci(root)?;
    if ci != ExitCode::SUCCESS {
        eprintln!("xtask: refusing to release: `cargo xtask ci` failed");
        return Ok(ci);
    }
    let metadata = metadata(root)?;
    let version = check_manifests(root, &metadata)?;
    let changelog =
        std::fs::read_to_string(root.join("CHANGELOG.md")).context("cannot read CHANGELOG.md")?;
    check_changelog(&changelog, &version)?;
    println!(
        "xtask: every publishable crate is at {version}, documented and licensed; CHANGELOG.md has its section"
    );
    let mut package: Vec<&str> = vec!["package"];
    for name in PUBLISH_ORDER {
        package.extend(["-p", name]);
    }
    if let Some(code) = crate::run(root, "cargo", &package)? {
        return Ok(code);
    }
    for name in PUBLISH_ORDER {
        let listed = Command::new("cargo")
            .args(["package", "--list", "-p", name])
            .current_dir(root)
            .output()?;
        let files = String::from_utf8_lossy(&listed.stdout);
        println!(
            "{name} {version}: {} files\n{}",
            files.lines().count(),
            indent(&files)
        );
    }
    if !execute {
        println!(
            "xtask: dry run: nothing was published; `cargo xtask release --execute` publishes in this order: {}",
            PUBLISH_ORDER.join(", ")
        );
        return Ok(ExitCode::SUCCESS);
    }
    for name in PUBLISH_ORDER {
        if let Some(code) = crate::run(root, "cargo", &["publish", "-p", name])? {
            return Ok(code);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn git_status(root: &Path) -> Result<String> {
    let out = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(root)
        .output()
        .context("could not run git")?;
    if !out.status.success() {
        bail!(
            "`git status` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn metadata(root: &Path) -> Result<Value> {
    let out = Command::new("cargo")
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .context("could not run `cargo metadata`")?;
    serde_json::from_slice(&out.stdout).context("`cargo metadata` did not print JSON")
}

/// Every publishable crate has one version, a description, a license, a
/// README that exists, a repository and docs.rs metadata. Returns the version.
pub fn check_manifests(root: &Path, metadata: &Value) -> Result<String> {
    let packages = metadata["packages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut version: Option<String> = None;
    let mut missing = Vec::new();
    for name in PUBLISH_ORDER {
        let Some(package) = packages.iter().find(|p| p["name"] == name) else {
            missing.push(format!("{name}: not a workspace member"));
            continue;
        };
        let this = package["version"].as_str().unwrap_or_default().to_owned();
        match &version {
            None => version = Some(this.clone()),
            Some(first) if *first != this => missing.push(format!(
                "{name}: version {this}, others {first}; run `cargo xtask bump X.Y.Z`"
            )),
            Some(_) => {}
        }
        for field in ["description", "license", "repository"] {
            if package[field].as_str().is_none_or(str::is_empty) {
                missing.push(format!("{name}: no `{field}` in its Cargo.toml"));
            }
        }
        match package["readme"].as_str() {
            None => missing.push(format!("{name}: no `readme` in its Cargo.toml")),
            Some(readme) if !root.join(readme).is_file() && !Path::new(readme).is_file() => {
                missing.push(format!("{name}: its readme {readme} does not exist"));
            }
            Some(_) => {}
        }
        if package["metadata"]["docs"]["rs"].is_null() {
            missing.push(format!(
                "{name}: no `[package.metadata.docs.rs]` in its Cargo.toml"
            ));
        }
    }
    if !missing.is_empty() {
        bail!("not ready to publish:\n  {}", missing.join("\n  "));
    }
    version.context("no publishable crate found")
}

/// CHANGELOG.md has a `## [X.Y.Z]` (or `## X.Y.Z`) section.
pub fn check_changelog(changelog: &str, version: &str) -> Result<()> {
    let found = changelog.lines().any(|line| {
        let heading = line.trim_start_matches('#').trim();
        line.starts_with("## ")
            && (heading.starts_with(&format!("[{version}]"))
                || heading.split_whitespace().next() == Some(version))
    });
    if found {
        Ok(())
    } else {
        bail!("CHANGELOG.md has no `## [{version}]` section; add one saying what changed")
    }
}

/// `cargo xtask bump X.Y.Z`: set the version everywhere it is written.
pub fn bump(root: &Path, args: &[String]) -> Result<ExitCode> {
    let [version] = args else {
        bail!("usage: cargo xtask bump X.Y.Z");
    };
    if !is_version(version) {
        bail!("{version:?} is not a version; write three numbers, e.g. 0.2.0");
    }
    let path = root.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&path).context("cannot read Cargo.toml")?;
    let bumped = bump_manifest(&manifest, version)?;
    std::fs::write(&path, bumped).context("cannot write Cargo.toml")?;
    println!(
        "xtask: the workspace is now at {version}; add a `## [{version}]` section to CHANGELOG.md"
    );
    Ok(ExitCode::SUCCESS)
}

fn is_version(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// The root manifest with `[workspace.package] version` and every internal
/// dependency's `version` set to `version`.
pub fn bump_manifest(manifest: &str, version: &str) -> Result<String> {
    let mut section = String::new();
    let mut changed = 0;
    let mut out = Vec::new();
    for line in manifest.lines() {
        if line.starts_with('[') {
            section = line.trim().to_owned();
        }
        let trimmed = line.trim_start();
        let new = if section == "[workspace.package]" && trimmed.starts_with("version") {
            changed += 1;
            format!("version = \"{version}\"")
        } else if section == "[workspace.dependencies]"
            && trimmed.starts_with("skill")
            && line.contains("path =")
            && line.contains("version =")
        {
            changed += 1;
            let (head, tail) = line.split_once("version = \"").unwrap_or((line, ""));
            let rest = tail.split_once('"').map_or("", |(_, rest)| rest);
            format!("{head}version = \"{version}\"{rest}")
        } else {
            line.to_owned()
        };
        out.push(new);
    }
    if changed == 0 {
        bail!("found no version to bump in Cargo.toml ([workspace.package] version)");
    }
    Ok(out.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn bump_sets_the_workspace_and_internal_versions() {
        let manifest = "[workspace.package]\nversion = \"0.1.0\"\n\n[workspace.dependencies]\nskill-core = { path = \"crates/skill-core\", version = \"0.1.0\" }\nskill-conformance = { path = \"crates/skill-conformance\" }\nserde = { version = \"1\" }\n";
        let bumped = bump_manifest(manifest, "0.2.0").unwrap();
        assert!(bumped.contains("version = \"0.2.0\"\n\n"), "{bumped}");
        assert!(
            bumped.contains("skill-core = { path = \"crates/skill-core\", version = \"0.2.0\" }"),
            "{bumped}"
        );
        assert!(bumped.contains("serde = { version = \"1\" }"), "{bumped}");
        assert!(
            bumped.contains("skill-conformance = { path = \"crates/skill-conformance\" }"),
            "{bumped}"
        );
        assert!(!is_version("1.2") && is_version("10.0.3"));
    }

    #[test]
    fn the_changelog_needs_the_version_section() {
        assert!(check_changelog("# Changelog\n\n## [0.1.0] - 2026-11-30\n", "0.1.0").is_ok());
        assert!(check_changelog("## 0.1.0\n", "0.1.0").is_ok());
        assert!(check_changelog("## [0.1.1]\n", "0.1.0").is_err());
    }

    #[test]
    fn manifests_missing_metadata_are_named() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let good = |name: &str, version: &str| {
            json!({"name": name, "version": version, "description": "d", "license": "MIT", "repository": "r",
                   "readme": "README.md", "metadata": {"docs": {"rs": {}}}})
        };
        let mut packages: Vec<Value> = PUBLISH_ORDER.iter().map(|n| good(n, "0.1.0")).collect();
        assert_eq!(
            check_manifests(root, &json!({"packages": packages.clone()})).unwrap(),
            "0.1.0"
        );
        packages[1]["version"] = json!("0.2.0");
        packages[2]["description"] = Value::Null;
        packages[3]["metadata"] = Value::Null;
        let err = check_manifests(root, &json!({"packages": packages}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("skill-guard: version 0.2.0"), "{err}");
        assert!(err.contains("skill-checkup: no `description`"), "{err}");
        assert!(
            err.contains("skill-tools: no `[package.metadata.docs.rs]`"),
            "{err}"
        );
    }

    #[test]
    fn the_workspace_is_ready_to_publish() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let version = check_manifests(root, &metadata(root).unwrap()).unwrap();
        check_changelog(
            &std::fs::read_to_string(root.join("CHANGELOG.md")).unwrap(),
            &version,
        )
        .unwrap();
    }
}
