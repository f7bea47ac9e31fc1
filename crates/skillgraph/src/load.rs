//! Loading a skill map from disk: a `skillmap.json` file with inline skills,
//! or a folder of Agent Skills as it is (SPEC §7.4): `skills/<name>/SKILL.md`,
//! or `<name>/SKILL.md` when there is no `skills/` folder, with or without a
//! `skillmap.json` beside them (entries, routes, per-skill settings).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use skill_checkup::{Checkup, Problem, ProblemCode, check_compiled_map, check_map};
use skill_core::{Flavor, Route, Skill, SkillMap, Step, SurfaceMode, ToolDecl, Trigger};
use skill_guard::RouteGuards;

use skill_md::{FileFault, SkillFile, read_skill_md};

mod json;

use json::parse_json;

/// The name of a map file.
pub const MAP_FILE: &str = "skillmap.json";

/// A loaded map, with the problems found while loading it.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The map.
    pub map: SkillMap,
    /// The upstream MCP servers the map file declares under `mcpServers`,
    /// by name (what `skillgraph serve` starts and proxies; SPEC §9).
    pub mcp_servers: BTreeMap<String, McpServer>,
    /// Problems of the files themselves (`skill-file-invalid`,
    /// `skill-file-not-portable`, settings for a skill that has no folder),
    /// reported with the check-up.
    pub problems: Vec<Problem>,
}

impl Loaded {
    /// The check-up of the map, the loading problems first.
    pub fn checkup(&self) -> Checkup {
        self.with_loading_problems(check_map(&self.map))
    }

    /// [`checkup`](Self::checkup) with the route guards compiled already
    /// (`RouteGuards::compile(&self.map)`), so that a host that runs the
    /// map too compiles each guard once: the same guards then build its
    /// `Graph::with_guards`.
    pub fn checkup_with(&self, guards: &RouteGuards) -> Checkup {
        self.with_loading_problems(check_compiled_map(&self.map, guards))
    }

    fn with_loading_problems(&self, checkup: Checkup) -> Checkup {
        let mut problems = self.problems.clone();
        problems.extend(checkup.problems);
        Checkup::from_problems(problems)
    }
}

/// One upstream MCP server, in the shape MCP clients' configuration files
/// use: `{"command": "python3", "args": ["orders.py"], "env": {}}`. It is
/// started over standard input and output, in the map's folder.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServer {
    /// The program to run.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables added to its environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The transport, as some clients write it; only `stdio` is served.
    #[serde(default, rename = "type")]
    pub transport: Option<McpTransport>,
}

/// The transport of an upstream server: standard input and output is the
/// one `skillgraph serve` speaks to its upstream servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpTransport {
    /// The server is a child process spoken to over its standard input and
    /// output.
    Stdio,
}

/// A `skillmap.json` file with inline skills.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MapFile {
    #[serde(default)]
    skills: Vec<Skill>,
    #[serde(default)]
    entries: Vec<String>,
    #[serde(default)]
    routes: Vec<Route>,
    #[serde(default, rename = "mcpServers")]
    mcp_servers: BTreeMap<String, McpServer>,
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
    /// A folder with neither `skillmap.json` nor a skill folder.
    #[error("{}: the folder has no `skillmap.json` and no skills (`skills/<name>/SKILL.md`, or `<name>/SKILL.md`); pass the folder that holds them", dir.display())]
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
    #[error("{}:{line}:{column}: unknown key `{key}`{}; the keys here are: {}", path.display(), skill_core::suggestion(nearest.as_deref()), known.join(", "))]
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
    tools: Option<Vec<ToolDecl>>,
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
    #[serde(default, rename = "mcpServers")]
    mcp_servers: BTreeMap<String, McpServer>,
}

/// Load a map from `path`: a `skillmap.json` file, or a folder of skills
/// (read in name order) with or without a `skillmap.json`.
///
/// # Errors
///
/// A [`LoadError`] when the input cannot be used: a missing path, a folder
/// with no map and no skills, an unreadable file, JSON that does not parse
/// or has the wrong shape, an unknown key, a front matter that is not YAML.
/// A `SKILL.md` that breaks the Agent Skills rules is not an error here: it
/// is a `skill-file-invalid` problem in [`Loaded::problems`].
pub fn load(path: &Path) -> Result<Loaded, LoadError> {
    if !path.exists() {
        return Err(LoadError::Missing {
            path: path.to_path_buf(),
        });
    }
    if !path.is_dir() {
        let file = parse_json::<MapFile>(path, &read_json_text(path)?)?;
        return Ok(Loaded {
            map: SkillMap {
                skills: file.skills,
                entries: file.entries,
                routes: file.routes,
            },
            mcp_servers: file.mcp_servers,
            problems: Vec::new(),
        });
    }
    load_folder(path)
}

/// A folder: its skills, then what its `skillmap.json` adds.
fn load_folder(root: &Path) -> Result<Loaded, LoadError> {
    let map_path = root.join(MAP_FILE);
    let folder_map: Option<FolderMap> = if map_path.is_file() {
        Some(parse_json(&map_path, &read_json_text(&map_path)?)?)
    } else {
        None
    };
    let (skills_dir, names) = skill_folders(root)?;
    if folder_map.is_none() && names.is_empty() {
        return Err(LoadError::NoMapFile {
            dir: root.to_path_buf(),
        });
    }
    let mut files = Vec::with_capacity(names.len());
    for name in &names {
        let dir = skills_dir.join(name);
        files.push((
            name.as_str(),
            read_skill_folder(&dir, name)?,
            fault_place(root, &dir),
        ));
    }
    let mut problems = Vec::new();
    let (mut skills, file_routes) = skills_from_files(files, &mut problems);
    let FolderMap {
        entries,
        mut routes,
        skills: mut settings,
        mcp_servers,
    } = folder_map.unwrap_or_default();
    for skill in &mut skills {
        if let Some(config) = settings.remove(&skill.id) {
            apply(skill, config);
        }
    }
    for id in settings.keys() {
        let message = format!(
            "{}: `skills` configures \"{id}\", but there is no {}; add the skill's folder, or remove its settings",
            map_path.display(),
            fault_place(root, &skills_dir.join(id))
        );
        problems.push(Problem::new(ProblemCode::SettingsWithoutSkill, message).about_skill(id));
    }
    routes.extend(file_routes);
    Ok(Loaded {
        map: SkillMap {
            skills,
            entries,
            routes,
        },
        mcp_servers,
        problems,
    })
}

/// Where a folder keeps its skills and their names, sorted: every folder in
/// `skills/`, or, when there is none, every folder beside the map that holds
/// a `SKILL.md`.
fn skill_folders(root: &Path) -> Result<(PathBuf, Vec<String>), LoadError> {
    let nested = root.join("skills");
    let (dir, flat) = if nested.is_dir() {
        (nested, false)
    } else {
        (root.to_path_buf(), true)
    };
    let entries = std::fs::read_dir(&dir).map_err(|source| LoadError::Read {
        path: dir.clone(),
        source,
    })?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| LoadError::Read {
            path: dir.clone(),
            source,
        })?;
        let path = entry.path();
        // Files beside the skill folders (a README) are not skills; nor, in
        // a flat folder, are folders without a SKILL.md (docs, scripts).
        if path.is_dir() && (!flat || skill_file(&path).is_some()) {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    Ok((dir, names))
}

/// The skill file of a folder, as the reference validator looks for it.
fn skill_file(dir: &Path) -> Option<PathBuf> {
    ["SKILL.md", "skill.md"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.exists())
}

/// The skills the files describe and the routes they declare; each broken
/// rule becomes a problem (`skill-file-invalid`), each use of the runbook
/// keys a warning (`skill-file-not-portable`). A route to a skill the folder
/// does not hold is a broken rule of its file, and is left out.
fn skills_from_files(
    files: Vec<(&str, SkillFile, String)>,
    problems: &mut Vec<Problem>,
) -> (Vec<Skill>, Vec<Route>) {
    let ids: Vec<&str> = files.iter().map(|(name, ..)| *name).collect();
    let mut skills = Vec::with_capacity(files.len());
    let mut routes = Vec::new();
    for (name, file, place) in &files {
        let invalid = |message: String| {
            Problem::new(ProblemCode::SkillFileInvalid, message).about_skill(name)
        };
        problems.extend(file.faults.iter().map(|f| invalid(format!("{place}: {f}"))));
        if !file.runbook_keys.is_empty() {
            problems.push(not_portable(name, place, &file.runbook_keys));
        }
        for found in &file.routes {
            if ids.contains(&found.route.to.as_str()) {
                routes.push(found.route.clone());
            } else {
                problems.push(invalid(format!(
                    "{place}: field `routes`: item `{}` routes to `{}`, which is not a skill of this folder (the skills are: {}); fix the name, or add the skill's folder",
                    found.item,
                    found.route.to,
                    ids.join(", ")
                )));
            }
        }
        let mut skill = Skill::new(*name);
        skill.description.clone_from(&file.description);
        skill.body.clone_from(&file.body);
        skill.tools = file.tools.iter().map(ToolDecl::new).collect();
        skills.push(skill);
    }
    (skills, routes)
}

fn not_portable(name: &str, place: &str, keys: &[&str]) -> Problem {
    let keys = keys
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(" and ");
    let message = format!(
        "{place}: it uses {keys}, keys of the reference's runbooks that other Agent Skills clients refuse (their validator allows only {}); to keep the file portable, move them to skillmap.json (`skills.{name}.tools`, and `routes` with `from: \"{name}\"`)",
        skill_md::FIELDS.join(", ")
    );
    Problem::new(ProblemCode::SkillFileNotPortable, message).about_skill(name)
}

/// `skills/<name>/SKILL.md`, relative to the map folder when it can be.
fn fault_place(root: &Path, dir: &Path) -> String {
    let file = dir.join("SKILL.md");
    file.strip_prefix(root)
        .unwrap_or(&file)
        .display()
        .to_string()
}

/// The skill a folder holds (id: the folder's name) as its `SKILL.md` says.
fn read_skill_folder(dir: &Path, name: &str) -> Result<SkillFile, LoadError> {
    let Some(file) = skill_file(dir) else {
        return Ok(folder_fault(
            "the folder has no SKILL.md; add one with `name` and `description` front matter",
        ));
    };
    if file.is_dir() {
        return Ok(folder_fault(
            "SKILL.md is a folder, not a file; replace it with the skill's Markdown file",
        ));
    }
    let bytes = std::fs::read(&file).map_err(|source| LoadError::Read {
        path: file.clone(),
        source,
    })?;
    read_skill_md(name, &bytes).map_err(|err| LoadError::Yaml {
        path: dir.join("SKILL.md"),
        line: err.line,
        column: err.column,
        message: err.message,
    })
}

fn folder_fault(message: &str) -> SkillFile {
    SkillFile {
        faults: vec![FileFault {
            field: None,
            message: message.to_owned(),
        }],
        ..SkillFile::default()
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
    if let Some(tools) = config.tools {
        skill.tools = tools;
    }
    skill.produces = config.produces;
    skill.consumes = config.consumes;
    skill.steps = config.steps;
    skill.on_skip = config.on_skip;
}

/// A JSON file's text, without the byte-order mark some editors write first.
fn read_json_text(path: &Path) -> Result<String, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
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
            err.to_string().contains("(did you mean \"surface_mode\"?)"),
            "{err}"
        );
        let err = parse_json::<SkillMap>(Path::new("m.json"), r#"{"entrys": []}"#).unwrap_err();
        assert!(
            err.to_string().contains("(did you mean \"entries\"?)"),
            "{err}"
        );
    }

    #[test]
    fn mcp_servers_are_read_in_the_shape_clients_use_and_their_keys_are_checked() {
        let dir = std::env::temp_dir().join(format!("skillgraph-load-mcp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let map = dir.join("skillmap.json");
        std::fs::write(
            &map,
            r#"{"skills": [{"id": "a"}], "mcpServers": {"orders": {"command": "python3", "args": ["orders.py"], "env": {"A": "1"}, "type": "stdio"}}}"#,
        )
        .expect("written");
        let loaded = load(&map).expect("loads");
        let orders = &loaded.mcp_servers["orders"];
        assert_eq!(
            (orders.command.as_str(), orders.args.as_slice()),
            ("python3", ["orders.py".to_owned()].as_slice())
        );
        assert_eq!(orders.env["A"], "1");
        std::fs::write(&map, r#"{"mcpServers": {"orders": {"cmd": "python3"}}}"#).expect("written");
        let err = load(&map).expect_err("an unknown key");
        assert!(
            err.to_string()
                .contains("unknown key `cmd`; the keys here are: command, args, env, type"),
            "{err}"
        );
        std::fs::write(
            &map,
            r#"{"mcpServers": {"orders": {"command": "x", "type": "http"}}}"#,
        )
        .expect("written");
        let err = load(&map).expect_err("a transport serve does not speak");
        assert!(err.to_string().contains("stdio"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_json_is_named_with_its_line_and_column() {
        let err = parse_json::<SkillMap>(Path::new("m.json"), "{\n  \"skills\": [\n}").unwrap_err();
        assert_eq!(err.code(), "bad-json");
        assert!(err.to_string().starts_with("m.json:3:1: "), "{err}");
    }
}
