//! The fence: which crate may depend on which (SPEC §1), and the no-I/O rule
//! of the library crates. `cargo deny check bans` enforces the internal
//! layering through `wrappers`; this check adds the external allowlist and
//! scans library sources for I/O, printing and global state.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};
use serde_json::Value;

/// External crates every library crate may use.
const EXTERNAL: [&str; 4] = ["serde", "serde_json", "thiserror", "smallvec"];

/// External crates one library crate may use beyond [`EXTERNAL`], each small
/// and well kept, for what that crate does: `smol_str` keeps a guard's keys
/// and string values inline, and `regress` (vendored with three patches,
/// `vendor/regress/PATCHES.md`) runs start rules' ECMAScript regular
/// expressions; the Agent Skills reader reads YAML with
/// `saphyr-parser` and names with the Unicode crates; the run's page places
/// the map with the graph-layout crate `rust-sugiyama` (SPEC §1: "+ a graph
/// layout crate").
const EXTERNAL_OF: [(&str, &[&str]); 3] = [
    ("skill-guard", &["smol_str", "regress"]),
    ("skill-explain", &["rust-sugiyama"]),
    (
        "skill-md",
        &[
            "saphyr-parser",
            "unicode-normalization",
            "unicode-general-category",
        ],
    ),
];

/// The external crates library crate `name` may use.
fn external_of(name: &str) -> Vec<&'static str> {
    let own = EXTERNAL_OF
        .iter()
        .filter(|(layer, _)| *layer == name)
        .flat_map(|(_, crates)| crates.iter().copied());
    EXTERNAL.into_iter().chain(own).collect()
}

/// Each pure library crate and the skillgraph crates it may depend on.
pub const LAYERS: [(&str, &[&str]); 7] = [
    ("skill-core", &[]),
    ("skill-guard", &["skill-core"]),
    ("skill-checkup", &["skill-core", "skill-guard"]),
    ("skill-tools", &["skill-core"]),
    (
        "skill-session",
        &["skill-core", "skill-guard", "skill-tools"],
    ),
    ("skill-md", &["skill-core"]),
    (
        "skill-explain",
        &["skill-core", "skill-guard", "skill-session"],
    ),
];

/// Paths and macros a library crate must not name: I/O, the process
/// environment, printing and global state.
const FORBIDDEN: [(&str, &str); 16] = [
    ("std::fs", "file system access"),
    ("std::net", "network access"),
    ("std::process", "process control"),
    ("std::env", "the process environment"),
    ("std::os", "operating-system access"),
    ("stdin", "standard input"),
    ("stdout", "standard output"),
    ("stderr", "standard error"),
    ("print!", "printing"),
    ("println!", "printing"),
    ("eprint!", "printing"),
    ("eprintln!", "printing"),
    ("dbg!", "printing"),
    ("static mut", "global state"),
    ("thread_local!", "global state"),
    ("lazy_static!", "global state"),
];

/// Types that make a `static` mutable or lazily set: a `static` item naming
/// one is global state (a `OnceLock` held by a value is not).
const INTERIOR_MUTABLE: [&str; 6] = ["OnceLock", "LazyLock", "Mutex", "RwLock", "Atomic", "Cell"];

/// Every finding, one line each (`file:line: rule; fix`).
pub fn check(root: &Path) -> Result<Vec<String>> {
    let mut findings = dependency_findings(root)?;
    for (name, _) in LAYERS {
        let src = root.join("crates").join(name).join("src");
        if src.is_dir() {
            scan_dir(root, &src, &mut findings)?;
        }
    }
    Ok(findings)
}

fn dependency_findings(root: &Path) -> Result<Vec<String>> {
    let output = Command::new("cargo")
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .context("could not run `cargo metadata`")?;
    let metadata: Value =
        serde_json::from_slice(&output.stdout).context("`cargo metadata` did not print JSON")?;
    Ok(dependency_rules(&metadata))
}

/// Check each library package's dependencies against [`LAYERS`].
pub fn dependency_rules(metadata: &Value) -> Vec<String> {
    let mut findings = Vec::new();
    let packages = metadata["packages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for package in packages {
        let name = package["name"].as_str().unwrap_or_default();
        let Some((_, internal)) = LAYERS.iter().find(|(layer, _)| *layer == name) else {
            continue;
        };
        let deps = package["dependencies"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let external = external_of(name);
        for dep in deps {
            let dep_name = dep["name"].as_str().unwrap_or_default();
            let kind = dep["kind"].as_str().unwrap_or("normal");
            let skillgraph = dep_name.starts_with("skill") || dep_name == "xtask";
            let allowed = if skillgraph {
                internal.contains(&dep_name)
            } else {
                kind == "dev" || external.contains(&dep_name)
            };
            if !allowed {
                let may = if internal.is_empty() {
                    "no skillgraph crate".to_owned()
                } else {
                    internal.join(", ")
                };
                findings.push(format!(
                    "crates/{name}/Cargo.toml: `{name}` depends on `{dep_name}` ({kind}), which its layer forbids; \
                     {name} may depend on {may} and on {}. Move the code that needs `{dep_name}` up a layer",
                    external.join(", ")
                ));
            }
        }
    }
    findings
}

fn scan_dir(root: &Path, dir: &Path, findings: &mut Vec<String>) -> Result<()> {
    let entries = crate::sorted_entries(dir)?;
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            scan_dir(root, &path, findings)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let shown = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string();
            findings.extend(scan_source(&shown, &text));
        }
    }
    Ok(())
}

/// The fence findings in one source file.
pub fn scan_source(file: &str, text: &str) -> Vec<String> {
    let code = strip_comments_and_strings(text);
    let mut findings = Vec::new();
    for (number, line) in code.lines().enumerate() {
        let flat: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
        for (pattern, what) in FORBIDDEN {
            if names(&flat, pattern) {
                findings.push(format!(
                    "{file}:{}: `{pattern}` is {what}, which a library crate must not do (SPEC §1); \
                     return the data and let the binary on top do it",
                    number + 1
                ));
            }
        }
        let is_static = flat
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|word| word == "static");
        if let Some(kind) = INTERIOR_MUTABLE
            .iter()
            .find(|kind| is_static && flat.contains(**kind))
        {
            findings.push(format!(
                "{file}:{}: a `static` holding a `{kind}` type is global state, which a library crate must not keep (SPEC §1); \
                 keep the state in a value the caller owns",
                number + 1
            ));
        }
        if let Some(group) = flat.split_once("std::{").map(|(_, rest)| rest) {
            for module in ["fs", "net", "process", "env", "os"] {
                if group
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|word| word == module)
                {
                    findings.push(format!(
                        "{file}:{}: `std::{{{module}}}` imports {module}, which a library crate must not use (SPEC §1); \
                         return the data and let the binary on top do it",
                        number + 1
                    ));
                }
            }
        }
    }
    findings
}

/// Whether `line` names `pattern` as a whole path or macro (not as part of a
/// longer identifier).
fn names(line: &str, pattern: &str) -> bool {
    line.match_indices(pattern).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + pattern.len()..].chars().next();
        let starts_word = pattern.starts_with(|c: char| !c.is_alphanumeric());
        let bounded_before =
            starts_word || !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let ends_word = pattern.ends_with(|c: char| !c.is_alphanumeric());
        let bounded_after = ends_word || !after.is_some_and(|c| c.is_alphanumeric() || c == '_');
        bounded_before && bounded_after
    })
}

/// The source with comments and string/char literal contents blanked (line
/// breaks kept, so line numbers stay right).
fn strip_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && next == Some('*') {
            at += 2;
            while at < chars.len() && !(chars[at] == '*' && chars.get(at + 1) == Some(&'/')) {
                if chars[at] == '\n' {
                    out.push('\n');
                }
                at += 1;
            }
            at += 2;
        } else if c == '"'
            || (c == 'r' && matches!(next, Some('"' | '#')) && !prev_is_ident(&chars, at))
        {
            at = skip_string(&chars, at, &mut out);
        } else if c == '\'' && chars.get(at + 2) == Some(&'\'') {
            out.push_str("' '");
            at += 3;
        } else {
            out.push(c);
            at += 1;
        }
    }
    out
}

fn prev_is_ident(chars: &[char], at: usize) -> bool {
    at > 0 && (chars[at - 1].is_alphanumeric() || chars[at - 1] == '_')
}

/// Skip a (raw) string literal starting at `at`, writing `""` and its line
/// breaks; returns the index after it.
fn skip_string(chars: &[char], mut at: usize, out: &mut String) -> usize {
    let mut hashes = 0;
    let raw = chars[at] == 'r';
    if raw {
        at += 1;
        while chars.get(at) == Some(&'#') {
            hashes += 1;
            at += 1;
        }
    }
    at += 1;
    out.push('"');
    while at < chars.len() {
        match chars[at] {
            '\\' if !raw => at += 2,
            '"' if (at + 1..=at + hashes).all(|i| chars.get(i) == Some(&'#')) => {
                out.push('"');
                return at + 1 + hashes;
            }
            '\n' => {
                out.push('\n');
                at += 1;
            }
            _ => at += 1,
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_fence_rejects_io_printing_and_globals() {
        let source = "use std::fs;\nfn f() { println!(\"x\"); }\nuse std::{collections::HashMap, env};\nstatic mut N: u8 = 0;\nlet x = std::io::stdout();";
        let findings = scan_source("lib.rs", source);
        let lines: Vec<_> = findings
            .iter()
            .map(|f| f.split(':').nth(1).unwrap_or(""))
            .collect();
        assert_eq!(lines, ["1", "2", "3", "4", "5"], "{findings:#?}");
        assert!(
            findings[0].contains("std::fs") && findings[0].contains("let the binary on top do it")
        );
    }

    #[test]
    fn the_fence_rejects_lazily_built_and_mutable_statics() {
        let source = "static CACHE: OnceLock<Vec<u8>> = OnceLock::new();\n\
                      static TABLE: std::sync::LazyLock<u8> = std::sync::LazyLock::new(|| 1);\n\
                      pub static COUNT: AtomicUsize = AtomicUsize::new(0);\n\
                      static LOG: Mutex<Vec<u8>> = Mutex::new(Vec::new());\n\
                      lazy_static! { static ref X: u8 = 1; }\n\
                      static NAMES: [&str; 2] = [\"a\", \"b\"];\n\
                      let mutex = Mutex::new(1);\n\
                      text: Arc<OnceLock<String>>,";
        let findings = scan_source("lib.rs", source);
        let lines: Vec<_> = findings
            .iter()
            .map(|f| f.split(':').nth(1).unwrap_or(""))
            .collect();
        assert_eq!(lines, ["1", "2", "3", "4", "5"], "{findings:#?}");
        assert!(
            findings[0].contains("holding a `OnceLock` type"),
            "{findings:#?}"
        );
        assert!(findings[2].contains("`Atomic` type"), "{findings:#?}");
    }

    #[test]
    fn comments_strings_and_longer_names_are_not_findings() {
        let source = "//! Never uses std::fs.\n/* std::net */\nlet s = \"std::process\";\nlet r = r#\"print!\"#;\nfn my_print!() {}\nlet stdout_like = 1;\nlet c = '\"';";
        assert_eq!(scan_source("lib.rs", source), Vec::<String>::new());
    }

    #[test]
    fn the_fence_rejects_upward_and_outside_dependencies() {
        let metadata = json!({"packages": [
            {"name": "skill-core", "dependencies": [{"name": "serde", "kind": null}, {"name": "skill-guard", "kind": null}]},
            {"name": "skill-tools", "dependencies": [{"name": "skill-guard", "kind": null}, {"name": "regex", "kind": null}, {"name": "proptest", "kind": "dev"}]},
            {"name": "skill-guard", "dependencies": [{"name": "skill-core", "kind": null}, {"name": "smallvec", "kind": null}, {"name": "smol_str", "kind": null}]},
            {"name": "skill-checkup", "dependencies": [{"name": "smol_str", "kind": null}]},
            {"name": "skillgraph", "dependencies": [{"name": "clap", "kind": null}]}
        ]});
        let findings = dependency_rules(&metadata);
        assert_eq!(findings.len(), 4, "{findings:#?}");
        assert!(findings[0].contains("`skill-core` depends on `skill-guard`"));
        assert!(findings[1].contains("`skill-tools` depends on `skill-guard`"));
        assert!(findings[2].contains("`regex`"));
        assert!(
            findings[3].contains("`skill-checkup` depends on `smol_str`"),
            "smol_str is skill-guard's alone: {findings:#?}"
        );
    }

    #[test]
    fn the_library_crates_pass_the_fence() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let findings = check(root).unwrap();
        assert!(findings.is_empty(), "{findings:#?}");
    }
}
