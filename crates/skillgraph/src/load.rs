//! Loading a skill map from disk: a `skillmap.json` file with inline skills,
//! or a folder holding `skillmap.json` (entries, routes, per-skill settings)
//! and Agent Skills folders `skills/<name>/SKILL.md`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use skill_checkup::{Checkup, Problem, ProblemCode, check_map};
use skill_core::{Flavor, Route, Skill, SkillMap, Step, SurfaceMode, ToolDecl, Trigger};

use crate::agent_skills::{FileFault, read_skill_md};

mod json;

use json::parse_json;

/// The name of a map file.
pub const MAP_FILE: &str = "skillmap.json";

/// A loaded map, with the problems found while loading it.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The map.
    pub map: SkillMap,
    /// Problems of the files themselves (`skill-file-invalid`, settings for
    /// a skill that has no folder), reported with the check-up.
    pub problems: Vec<Problem>,
}

impl Loaded {
    /// The check-up of the map, the loading problems first.
    pub fn checkup(&self) -> Checkup {
        let mut problems = self.problems.clone();
        problems.extend(check_map(&self.map).problems);
        Checkup::from_problems(problems)
    }
}

/// Input that cannot be used at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The path does not exist.
    #[error("{}: no such file or folder; pass a `skillmap.json` file or a folder holding one", path.display())]
    Missing {
        /// The path given.
        path: PathBuf,
    },
    /// A folder without `skillmap.json`.
    #[error("{}: the folder has no `skillmap.json`; add one (`{{\"entries\": [...], \"routes\": [...], \"skills\": {{...}}}}`) beside its `skills/` folder", dir.display())]
    NoMapFile {
        /// The folder.
        dir: PathBuf,
    },
    /// A file or folder that could not be read.
    #[error("{}: cannot be read: {source}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A file that is not valid JSON, or JSON of the wrong shape.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// One-based line.
        line: usize,
        /// One-based column.
        column: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A `SKILL.md` whose front matter is not YAML at all.
    #[error("{}:{line}:{column}: the front matter is not YAML: {message}; fix the syntax (Agent Skills front matter is `key: value` lines between `---` lines)", path.display())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// One-based line.
        line: usize,
        /// One-based column.
        column: usize,
        /// What the YAML reader said.
        message: String,
    },
    /// A key our files do not define.
    #[error("{}:{line}:{column}: unknown key `{key}`{}; the keys here are: {}", path.display(), nearest.as_ref().map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default(), known.join(", "))]
    UnknownKey {
        /// The file.
        path: PathBuf,
        /// One-based line.
        line: usize,
        /// One-based column.
        column: usize,
        /// The key as written.
        key: String,
        /// The nearest known key, when one is close.
        nearest: Option<String>,
        /// Every key allowed at that place.
        known: Vec<String>,
    },
}

impl LoadError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            LoadError::Missing { .. } => "missing-path",
            LoadError::NoMapFile { .. } => "no-map-file",
            LoadError::Read { .. } => "unreadable",
            LoadError::Json { .. } => "bad-json",
            LoadError::Yaml { .. } => "bad-yaml",
            LoadError::UnknownKey { .. } => "unknown-key",
        }
    }
}

/// Per-skill settings in a folder's `skillmap.json`, keyed by skill id.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillSettings {
    #[serde(default)]
    flavor: Option<Flavor>,
    #[serde(default)]
    trigger: Option<Trigger>,
    #[serde(default)]
    tools: Vec<ToolDecl>,
    #[serde(default)]
    surface_mode: Option<SurfaceMode>,
    #[serde(default)]
    produces: Option<Vec<String>>,
    #[serde(default)]
    consumes: Option<Vec<String>>,
    #[serde(default)]
    steps: Option<Vec<Step>>,
    #[serde(default)]
    on_skip: Option<String>,
}

/// A folder's `skillmap.json`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FolderMap {
    #[serde(default)]
    entries: Vec<String>,
    #[serde(default)]
    routes: Vec<Route>,
    #[serde(default)]
    skills: BTreeMap<String, SkillSettings>,
}

/// Load a map from `path`: a `skillmap.json` file, or a folder holding
/// `skillmap.json` and `skills/<name>/SKILL.md` folders (read in name order).
///
/// # Errors
///
/// A [`LoadError`] when the input cannot be used: a missing path or map
/// file, an unreadable file, JSON that does not parse or has the wrong shape,
/// an unknown key. A `SKILL.md` that breaks the Agent Skills rules is not an
/// error here: it is a `skill-file-invalid` problem in [`Loaded::problems`].
pub fn load(path: &Path) -> Result<Loaded, LoadError> {
    if !path.exists() {
        return Err(LoadError::Missing {
            path: path.to_path_buf(),
        });
    }
    if !path.is_dir() {
        let map = parse_json::<SkillMap>(path, &read_text(path)?)?;
        return Ok(Loaded {
            map,
            problems: Vec::new(),
        });
    }
    let map_path = path.join(MAP_FILE);
    if !map_path.is_file() {
        return Err(LoadError::NoMapFile {
            dir: path.to_path_buf(),
        });
    }
    let folder: FolderMap = parse_json(&map_path, &read_text(&map_path)?)?;
    let mut problems = Vec::new();
    let mut skills = Vec::new();
    let skills_dir = path.join("skills");
    let mut names = Vec::new();
    if skills_dir.is_dir() {
        let entries = std::fs::read_dir(&skills_dir).map_err(|source| LoadError::Read {
            path: skills_dir.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| LoadError::Read {
                path: skills_dir.clone(),
                source,
            })?;
            // Files beside the skill folders (a README) are not skills.
            if entry.path().is_dir() {
                names.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
    }
    names.sort();
    let mut settings = folder.skills;
    for name in names {
        let dir = skills_dir.join(&name);
        let (skill, faults) = read_skill_folder(&dir, &name)?;
        if let Some((fault, (line, column))) = faults
            .iter()
            .find_map(|f| f.syntax_error_at.map(|at| (f, at)))
        {
            return Err(LoadError::Yaml {
                path: dir.join("SKILL.md"),
                line,
                column,
                message: fault.message.clone(),
            });
        }
        for fault in faults {
            let message = format!("{}: {fault}", fault_place(path, &dir));
            problems.push(Problem::new(ProblemCode::SkillFileInvalid, message).about_skill(&name));
        }
        let mut skill = skill;
        if let Some(config) = settings.remove(&name) {
            apply(&mut skill, config);
        }
        skills.push(skill);
    }
    for id in settings.keys() {
        let message = format!(
            "{}: `skills` configures \"{id}\", but there is no skills/{id}/SKILL.md; add the skill's folder, or remove its settings",
            map_path.display()
        );
        problems.push(Problem::new(ProblemCode::SettingsWithoutSkill, message).about_skill(id));
    }
    Ok(Loaded {
        map: SkillMap {
            skills,
            entries: folder.entries,
            routes: folder.routes,
        },
        problems,
    })
}

/// `skills/<name>/SKILL.md`, relative to the map folder when it can be.
fn fault_place(root: &Path, dir: &Path) -> String {
    let file = dir.join("SKILL.md");
    file.strip_prefix(root)
        .unwrap_or(&file)
        .display()
        .to_string()
}

/// The skill a folder holds (id: the folder's name) and every rule its
/// `SKILL.md` breaks.
fn read_skill_folder(dir: &Path, name: &str) -> Result<(Skill, Vec<FileFault>), LoadError> {
    let mut skill = Skill::new(name);
    let file = ["SKILL.md", "skill.md"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.exists());
    let Some(file) = file else {
        let fault = folder_fault(
            "the folder has no SKILL.md; add one with `name` and `description` front matter",
        );
        return Ok((skill, vec![fault]));
    };
    if file.is_dir() {
        let fault = folder_fault(
            "SKILL.md is a folder, not a file; replace it with the skill's Markdown file",
        );
        return Ok((skill, vec![fault]));
    }
    let bytes = std::fs::read(&file).map_err(|source| LoadError::Read {
        path: file.clone(),
        source,
    })?;
    let parsed = read_skill_md(name, &bytes);
    skill.description = parsed.description;
    skill.body = parsed.body;
    Ok((skill, parsed.faults))
}

fn folder_fault(message: &str) -> FileFault {
    FileFault {
        field: None,
        syntax_error_at: None,
        message: message.to_owned(),
    }
}

fn apply(skill: &mut Skill, config: SkillSettings) {
    if let Some(flavor) = config.flavor {
        skill.flavor = flavor;
    }
    if let Some(trigger) = config.trigger {
        skill.trigger = trigger;
    }
    if let Some(mode) = config.surface_mode {
        skill.surface_mode = mode;
    }
    skill.tools = config.tools;
    skill.produces = config.produces;
    skill.consumes = config.consumes;
    skill.steps = config.steps;
    skill.on_skip = config.on_skip;
}

fn read_text(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })
}

impl LoadError {
    /// The error for JSON `text`, read from `path`, that serde_json refused as
    /// a `T`: a syntax or shape error with its line and column, or an unknown
    /// key or value with the nearest allowed spelling.
    pub fn from_json<T: serde::de::DeserializeOwned>(
        path: &Path,
        text: &str,
        err: &serde_json::Error,
    ) -> LoadError {
        json::json_error::<T>(path, text, err)
    }
}

impl fmt::Display for Loaded {
    /// A one-line summary: how many skills, entries and routes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} skills, {} entries, {} routes",
            self.map.skills.len(),
            self.map.entries.len(),
            self.map.routes.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_name_the_nearest_known_one() {
        let err = parse_json::<SkillMap>(
            Path::new("m.json"),
            "{\n  \"skills\": [{\"id\": \"a\", \"surfaceMode\": \"both\"}]\n}",
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("m.json:2:"), "{err}");
        assert!(
            err.to_string().contains("did you mean `surface_mode`?"),
            "{err}"
        );
        let err = parse_json::<SkillMap>(Path::new("m.json"), r#"{"entrys": []}"#).unwrap_err();
        assert!(err.to_string().contains("did you mean `entries`?"), "{err}");
    }

    #[test]
    fn bad_json_is_named_with_its_line_and_column() {
        let err = parse_json::<SkillMap>(Path::new("m.json"), "{\n  \"skills\": [\n}").unwrap_err();
        assert_eq!(err.code(), "bad-json");
        assert!(err.to_string().starts_with("m.json:3:1: "), "{err}");
    }
}
