//! Parity with the Agent Skills reference validator (`skills-ref` 0.1.1,
//! `agentskills validate`): each case in `data/agent_skills_cases.json` is a
//! skill folder the reference validated; loading it must report a
//! `skill-file-invalid` problem exactly when the reference called it invalid.

// Test scaffolding: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use serde::Deserialize;
use skillgraph::skill_checkup::ProblemCode;

#[derive(Deserialize)]
struct Case {
    case: String,
    dir: String,
    /// File name (a trailing `/` makes a folder) → base64 of its bytes.
    files: std::collections::BTreeMap<String, String>,
    valid: bool,
    reference: String,
}

fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text.bytes().filter(|c| *c != b'=').map(value).collect();
    let mut out = Vec::new();
    for chunk in digits.chunks(4) {
        let mut word = 0u32;
        for (at, digit) in chunk.iter().enumerate() {
            word |= u32::from(*digit) << (18 - 6 * at);
        }
        let bytes = word.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skillgraph-parity-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn lay_out(root: &Path, case: &Case) {
    let skill = root.join("skills").join(&case.dir);
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(root.join("skillmap.json"), "{}").unwrap();
    for (name, content) in &case.files {
        if let Some(folder) = name.strip_suffix('/') {
            std::fs::create_dir_all(skill.join(folder)).unwrap();
        } else {
            std::fs::write(skill.join(name), base64(content)).unwrap();
        }
    }
}

#[test]
fn a_skill_is_valid_here_exactly_when_the_reference_validator_says_so() {
    let cases: Vec<Case> =
        serde_json::from_str(include_str!("data/agent_skills_cases.json")).unwrap();
    assert!(cases.len() > 100);
    let root = scratch("cases");
    let mut disagreements = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        let folder = root.join(index.to_string());
        lay_out(&folder, case);
        // Every broken file is a problem of the loaded map; a folder with
        // no skill file is no skill at all (the reference calls it
        // invalid, as it does every folder it cannot validate).
        let loaded = skillgraph::load(&folder).unwrap_or_else(|err| panic!("{}: {err}", case.case));
        let mut faults: Vec<String> = loaded
            .problems
            .iter()
            .filter(|p| p.code() == ProblemCode::SkillFileInvalid)
            .map(|p| p.message().to_string())
            .collect();
        if loaded.map.skills.is_empty() && loaded.left_out.is_empty() {
            faults.push("no skill file: the folder is not a skill".to_owned());
        }
        if faults.is_empty() != case.valid {
            disagreements.push(format!(
                "{}: reference says {} ({}), we found {:?}",
                case.case, case.valid, case.reference, faults
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}

#[test]
fn the_base64_helper_decodes() {
    assert_eq!(base64("LS0tCg=="), b"---\n");
    assert_eq!(base64("YWJj"), b"abc");
}
