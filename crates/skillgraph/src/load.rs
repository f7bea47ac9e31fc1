//! Loading a skill map from disk: a `skillmap.json` file with inline skills,
//! or a folder of Agent Skills as it is (SPEC §7.4): `skills/<name>/SKILL.md`,
//! or `<name>/SKILL.md` when there is no `skills/` folder, with or without a
//! `skillmap.json` beside them (entries, routes, per-skill settings).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use skill_checkup::{Checkup, Problem, ProblemCode, check_compiled_map, check_map};
use skill_core::{
    Budget, Escalation, Flavor, Roles, Route, Skill, SkillMap, Start, Step, SurfaceMode, ToolDecl,
    Trigger, is_role_name,
};
use skill_guard::RouteGuards;

use skill_md::{SkillFile, read_skill_md};

mod json;

use json::parse_json;

/// The name of a map file.
pub const MAP_FILE: &str = "skillmap.json";

/// How many folders below the root skills are looked for: a skill folder
/// may be at most this deep (`plugins/<plugin>/skills/<name>` is four).
pub const MAX_DEPTH: usize = 4;

/// Folders never looked into: they hold no skills, and can be huge.
const NOT_LOOKED_INTO: [&str; 2] = [".git", "node_modules"];

/// The first few of the folders looked into, and how many more.
fn looked_in_list(places: &[String]) -> String {
    const SHOWN: usize = 6;
    let mut list: Vec<String> = places
        .iter()
        .take(SHOWN)
        .map(|p| format!("`{p}`"))
        .collect();
    if places.len() > SHOWN {
        list.push(format!("and {} more", places.len() - SHOWN));
    }
    list.join(", ")
}

/// A loaded map, with the problems found while loading it.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The map.
    pub map: SkillMap,
    /// The upstream MCP servers the map file declares under `mcpServers`,
    /// by name (what `skillgraph serve` starts and proxies; SPEC §9).
    pub mcp_servers: BTreeMap<String, McpServer>,
    /// Problems of the files themselves (`skill-file-invalid`,
    /// `skill-file-not-portable`, `duplicate-skill`, settings for a skill
    /// that has no folder), reported with the check-up.
    pub problems: Vec<Problem>,
    /// The skill files left out, relative to the root: those that could not
    /// be read at all (a link that leads nowhere, a file the system refuses)
    /// and every other folder of an id whose first readable folder is
    /// offered. They are not in the map, and each has its error in
    /// [`problems`](Self::problems).
    pub left_out: Vec<String>,
    /// The skills whose tools are the ones their `SKILL.md` names
    /// (`allowed-tools`, unless `skillmap.json` sets `tools`): names written
    /// for whatever host runs the skill, which `serve` offers only when an
    /// upstream server has them.
    pub tools_from_files: Vec<String>,
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
/// use: a child process, `{"command": "python3", "args": ["orders.py"],
/// "env": {}}`, started over standard input and output in the map's folder;
/// or a streamable-HTTP server, `{"url": "http://127.0.0.1:9000/mcp",
/// "headers": {"Authorization": "Bearer …"}}`. Exactly one of `command` and
/// `url` is given (`skillgraph serve` refuses the server otherwise).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServer {
    /// The program to run; empty for a server reached by `url`.
    #[serde(default)]
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables added to its environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The address of a streamable-HTTP server.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers sent with every request to the `url` server.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The transport, as some clients write it.
    #[serde(default, rename = "type")]
    pub transport: Option<McpTransport>,
    /// Whether this server's results may propose moves (SPEC §15.6:
    /// `_meta["skillgraph/propose"]`); from any other server a proposal is
    /// removed and recorded refused `not-trusted`.
    #[serde(default)]
    pub proposals: bool,
}

/// The transport of an upstream server, as clients' configuration files
/// spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpTransport {
    /// The server is a child process spoken to over its standard input and
    /// output.
    Stdio,
    /// The server is reached over streamable HTTP at its `url`.
    #[serde(alias = "streamable-http", alias = "streamableHttp")]
    Http,
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
    #[serde(default)]
    start: Option<Start>,
    #[serde(default)]
    roles: Roles,
    #[serde(default)]
    budget: Option<Budget>,
    #[serde(default)]
    escalation: Option<Escalation>,
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
    /// A folder with no `skillmap.json` and no skill anywhere below it.
    #[error("{}: the folder has no `skillmap.json` and no skill (a folder holding a `SKILL.md`) to a depth of {MAX_DEPTH} below it; looked in {}; pass the folder that holds the skills", dir.display(), looked_in_list(looked_in))]
    NoMapFile {
        /// The folder.
        dir: PathBuf,
        /// The folders looked into, relative to `dir` (`.` for itself).
        looked_in: Vec<String>,
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
    /// A role of `roles` whose name holds white space or a comma, or is
    /// empty: no principal could hold it (a tokens file lists roles
    /// comma-separated).
    #[error("{}: `roles` declares {role:?}, which no principal can hold: a role's name is not empty and has no white space and no comma; rename it", path.display())]
    RoleName {
        /// The file.
        path: PathBuf,
        /// The role's name as written.
        role: String,
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
            LoadError::UnknownKey { .. } => "unknown-key",
            LoadError::RoleName { .. } => "role-name",
        }
    }
}

/// Refuse a role whose name a principal could not hold (SPEC §14.8).
fn role_names(path: &Path, roles: &Roles) -> Result<(), LoadError> {
    match roles.keys().find(|name| !is_role_name(name)) {
        Some(role) => Err(LoadError::RoleName {
            path: path.to_path_buf(),
            role: role.clone(),
        }),
        None => Ok(()),
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
    start: Option<Start>,
    #[serde(default)]
    skills: BTreeMap<String, SkillSettings>,
    #[serde(default)]
    roles: Roles,
    #[serde(default)]
    budget: Option<Budget>,
    #[serde(default)]
    escalation: Option<Escalation>,
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
        role_names(path, &file.roles)?;
        return Ok(Loaded {
            map: SkillMap {
                skills: file.skills,
                entries: file.entries,
                routes: file.routes,
                start: file.start,
                roles: file.roles,
                budget: file.budget,
                escalation: file.escalation,
            },
            mcp_servers: file.mcp_servers,
            problems: Vec::new(),
            left_out: Vec::new(),
            tools_from_files: Vec::new(),
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
    let found = find_skills(root)?;
    if folder_map.is_none() && found.skills.is_empty() {
        return Err(LoadError::NoMapFile {
            dir: root.to_path_buf(),
            looked_in: found.looked_in,
        });
    }
    let mut problems = found.problems;
    let mut left_out = Vec::new();
    let mut copies = Vec::with_capacity(found.skills.len());
    let mut unread_ids = Vec::new();
    for place in found.skills {
        match read_skill_folder(&place) {
            Ok(file) => copies.push((place, Some(file))),
            Err(message) => {
                problems.push(
                    Problem::new(
                        ProblemCode::SkillFileInvalid,
                        format!(
                            "{}: {message}; the skill is left out until it is fixed",
                            place.file
                        ),
                    )
                    .about_skill(&place.id),
                );
                left_out.push(place.file.clone());
                unread_ids.push(place.id.clone());
                copies.push((place, None));
            }
        }
    }
    let files = one_per_id(copies, &mut problems, &mut left_out);
    let (mut skills, file_routes) = skills_from_files(&files, &mut problems);
    let FolderMap {
        entries,
        mut routes,
        start,
        skills: mut settings,
        roles,
        budget,
        escalation,
        mcp_servers,
    } = folder_map.unwrap_or_default();
    role_names(&map_path, &roles)?;
    let mut tools_from_files = Vec::new();
    for skill in &mut skills {
        let settings = settings.remove(&skill.id);
        if !skill.tools.is_empty() && settings.as_ref().is_none_or(|s| s.tools.is_none()) {
            tools_from_files.push(skill.id.clone());
        }
        if let Some(config) = settings {
            apply(skill, config);
        }
    }
    for id in settings.keys().filter(|id| !unread_ids.contains(id)) {
        let message = format!(
            "{}: `skills` configures \"{id}\", but no folder named `{id}` holding a SKILL.md is below {}; add the skill's folder, or remove its settings",
            map_path.display(),
            root.display()
        );
        problems.push(Problem::new(ProblemCode::SettingsWithoutSkill, message).about_skill(id));
    }
    routes.extend(file_routes);
    Ok(Loaded {
        map: SkillMap {
            skills,
            entries,
            routes,
            start,
            roles,
            budget,
            escalation,
        },
        mcp_servers,
        problems,
        left_out,
        tools_from_files,
    })
}

/// One skill folder found below the root.
struct SkillPlace {
    /// The skill's id: its folder's name.
    id: String,
    /// The folder, absolute when the root could be made so.
    dir: PathBuf,
    /// The skill file, relative to the root (`skills/pdf/SKILL.md`).
    file: String,
    /// The skill file's path.
    path: PathBuf,
}

/// What looking for skills below a root found.
#[derive(Default)]
struct Found {
    skills: Vec<SkillPlace>,
    looked_in: Vec<String>,
    problems: Vec<Problem>,
}

/// Every skill folder below `root`, in path order (SPEC §7.4): the root
/// itself when it holds a `SKILL.md`; else every folder holding one, looking
/// into every other folder to [`MAX_DEPTH`] below the root (so
/// `skills/<name>`, `<name>`, `skills/<category>/<name>`,
/// `plugins/<plugin>/skills/<name>` and `.claude/skills/<name>` are all
/// found, side by side). A skill's own subfolders are its files, never
/// looked into.
fn find_skills(root: &Path) -> Result<Found, LoadError> {
    let absolute = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut found = Found::default();
    if let Some(path) = skill_file(root) {
        let id = absolute.file_name().map_or_else(
            || "skill".to_owned(),
            |name| name.to_string_lossy().into_owned(),
        );
        found.skills.push(place(root, absolute.clone(), id, path));
        return Ok(found);
    }
    look_into(root, &absolute, root, 0, &mut found)?;
    Ok(found)
}

/// Look into `dir`, `depth` folders below the root, for skill folders.
fn look_into(
    root: &Path,
    absolute: &Path,
    dir: &Path,
    depth: usize,
    found: &mut Found,
) -> Result<(), LoadError> {
    let relative = relative_to(root, dir);
    found.looked_in.push(relative.clone());
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(source) if depth == 0 => {
            return Err(LoadError::Read {
                path: dir.to_path_buf(),
                source,
            });
        }
        Err(err) => {
            found.problems.push(unreadable_folder(
                &relative,
                &format!("the folder cannot be read ({err})"),
            ));
            return Ok(());
        }
    };
    let mut children = Vec::new();
    for entry in entries {
        let path = match entry {
            Ok(entry) => entry.path(),
            Err(err) => {
                found.problems.push(unreadable_folder(
                    &relative,
                    &format!("an entry of the folder cannot be read ({err})"),
                ));
                continue;
            }
        };
        if path.is_dir() {
            children.push(path);
        } else if path.is_symlink() && std::fs::metadata(&path).is_err() {
            let target = std::fs::read_link(&path)
                .map(|target| target.display().to_string())
                .unwrap_or_default();
            found.problems.push(unreadable_folder(
                &relative_to(root, &path),
                &format!("it is a link to `{target}`, which leads nowhere"),
            ));
        }
    }
    children.sort();
    for child in children {
        let name = child
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(path) = skill_file(&child) {
            let dir = dir_under(absolute, root, &child);
            found.skills.push(place(root, dir, name, path));
        } else if depth + 1 < MAX_DEPTH && !NOT_LOOKED_INTO.contains(&name.as_str()) {
            look_into(root, absolute, &child, depth + 1, found)?;
        }
    }
    Ok(())
}

/// A folder below the root that could not be looked into, and why.
fn unreadable_folder(place: &str, why: &str) -> Problem {
    Problem::new(
        ProblemCode::UnreadableFolder,
        format!(
            "{place}: {why}, so no skill in it is loaded; fix it, or move the skills out of it"
        ),
    )
}

fn place(root: &Path, dir: PathBuf, id: String, path: PathBuf) -> SkillPlace {
    SkillPlace {
        id,
        dir,
        file: relative_to(root, &path),
        path,
    }
}

/// `path` below `root`, as written relative to it (`.` for the root).
fn relative_to(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".to_owned(),
        Ok(rest) => rest.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// `child` (below `root`) under the absolute root.
fn dir_under(absolute: &Path, root: &Path, child: &Path) -> PathBuf {
    child
        .strip_prefix(root)
        .map_or_else(|_| child.to_path_buf(), |rest| absolute.join(rest))
}

/// The skill file of a folder, as the reference validator looks for it: a
/// file or a link (even one that leads nowhere, which reading reports).
fn skill_file(dir: &Path) -> Option<PathBuf> {
    ["SKILL.md", "skill.md"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.symlink_metadata().is_ok())
}

/// The skill file's contents as the reader sees them, or why there are
/// none.
fn read_skill_folder(place: &SkillPlace) -> Result<SkillFile, String> {
    if place.path.is_dir() {
        return Err(
            "it is a folder, not a file; replace it with the skill's Markdown file".to_owned(),
        );
    }
    match std::fs::read(&place.path) {
        Ok(bytes) => Ok(read_skill_md(&place.id, &bytes)),
        Err(err) => match std::fs::read_link(&place.path) {
            Ok(target) if err.kind() == std::io::ErrorKind::NotFound => Err(format!(
                "it is a link to `{}`, which leads nowhere; point the link at the skill's file, or replace it with the file",
                target.display()
            )),
            _ => Err(format!("it cannot be read ({err}); make it readable")),
        },
    }
}

/// One skill per id, from the skill folders in path order, each with its
/// file or `None` when it could not be read (and is left out already): the
/// first copy that could be read is offered, so a broken link never takes
/// the id from a readable copy further down. Every other folder with that
/// id is a `duplicate-skill` error naming both paths, and is left out.
fn one_per_id(
    copies: Vec<(SkillPlace, Option<SkillFile>)>,
    problems: &mut Vec<Problem>,
    left_out: &mut Vec<String>,
) -> Vec<(SkillPlace, SkillFile)> {
    // For each id, the copy the other copies are named beside, and whether
    // it could be read: the first readable copy, else the first copy.
    let mut holder: BTreeMap<&str, (usize, bool)> = BTreeMap::new();
    for (index, (place, file)) in copies.iter().enumerate() {
        let readable = file.is_some();
        match holder.get(place.id.as_str()) {
            Some(&(_, true)) => {}
            Some(&(_, false)) if !readable => {}
            _ => {
                holder.insert(&place.id, (index, readable));
            }
        }
    }
    let mut kept = Vec::with_capacity(copies.len());
    for (index, (place, file)) in copies.iter().enumerate() {
        let Some(&(held, readable)) = holder.get(place.id.as_str()) else {
            kept.push(false);
            continue;
        };
        if held == index {
            kept.push(readable);
            continue;
        }
        kept.push(false);
        let held_file = &copies[held].0.file;
        let (first, second) = if held < index {
            (held_file, &place.file)
        } else {
            (&place.file, held_file)
        };
        let offered = if readable {
            format!(", so only {held_file} is offered")
        } else {
            String::new()
        };
        let message = format!(
            "{first} and {second} are both skill `{}`: ids are folder names and must be unique{offered}; rename one of the folders (and its `name`), or remove it",
            place.id
        );
        problems.push(Problem::new(ProblemCode::DuplicateSkill, message).about_skill(&place.id));
        if file.is_some() {
            left_out.push(place.file.clone());
        }
    }
    copies
        .into_iter()
        .zip(kept)
        .filter_map(|((place, file), kept)| Some((place, file.filter(|_| kept)?)))
        .collect()
}

/// The skills the files describe and the routes they declare; each broken
/// rule becomes a problem (`skill-file-invalid`), each use of the runbook
/// keys a warning (`skill-file-not-portable`). A route to a skill the folder
/// does not hold is a broken rule of its file, and is left out.
fn skills_from_files(
    files: &[(SkillPlace, SkillFile)],
    problems: &mut Vec<Problem>,
) -> (Vec<Skill>, Vec<Route>) {
    let ids: Vec<&str> = files.iter().map(|(place, _)| place.id.as_str()).collect();
    let mut skills = Vec::with_capacity(files.len());
    let mut routes = Vec::new();
    for (place, file) in files {
        let name = place.id.as_str();
        let invalid = |message: String| {
            Problem::new(ProblemCode::SkillFileInvalid, message).about_skill(name)
        };
        problems.extend(file.faults.iter().map(|f| match f.at {
            Some((line, column)) => invalid(format!("{}:{line}:{column}: {f}", place.file)),
            None => invalid(format!("{}: {f}", place.file)),
        }));
        if !file.runbook_keys.is_empty() {
            problems.push(not_portable(name, &place.file, &file.runbook_keys));
        }
        for found in &file.routes {
            if ids.contains(&found.route.to.as_str()) {
                routes.push(found.route.clone());
            } else {
                problems.push(invalid(format!(
                    "{}: field `routes`: item `{}` routes to `{}`, which is not a skill of this folder (the skills are: {}); fix the name, or add the skill's folder",
                    place.file,
                    found.item,
                    found.route.to,
                    ids.join(", ")
                )));
            }
        }
        let mut skill = Skill::new(name);
        skill.description.clone_from(&file.description);
        skill.body.clone_from(&file.body);
        skill.tools = file.tools.iter().map(ToolDecl::new).collect();
        skill.tool_patterns.clone_from(&file.tool_patterns);
        skill.folder = Some(place.dir.display().to_string());
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
            err.to_string().contains(
                "unknown key `cmd`; the keys here are: command, args, env, url, headers, type"
            ),
            "{err}"
        );
        std::fs::write(
            &map,
            r#"{"skills": [{"id": "a"}], "mcpServers": {"orders": {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Team": "desk"}, "type": "streamable-http"}}}"#,
        )
        .expect("written");
        let orders = load(&map).expect("loads").mcp_servers["orders"].clone();
        assert_eq!(orders.url.as_deref(), Some("http://127.0.0.1:9/mcp"));
        assert_eq!(orders.headers["X-Team"], "desk");
        assert_eq!(orders.transport, Some(McpTransport::Http));
        std::fs::write(
            &map,
            r#"{"mcpServers": {"orders": {"command": "x", "type": "sse"}}}"#,
        )
        .expect("written");
        let err = load(&map).expect_err("a transport serve does not speak");
        assert!(err.to_string().contains("stdio"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_first_readable_folder_of_an_id_is_offered_and_the_others_are_named() {
        let dir = std::env::temp_dir().join(format!("skillgraph-load-dup-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let skill = |folder: &str, description: &str| {
            let folder = dir.join(folder);
            std::fs::create_dir_all(&folder).expect("a scratch folder");
            let name = folder.file_name().map(|n| n.to_string_lossy().into_owned());
            let text = format!(
                "---\nname: {}\ndescription: {description}\n---\nBody.\n",
                name.unwrap_or_default()
            );
            std::fs::write(folder.join("SKILL.md"), text).expect("written");
        };
        // First in path order, and unreadable: its SKILL.md is a folder.
        std::fs::create_dir_all(dir.join(".gemini/skills/pdf/SKILL.md")).expect("a folder");
        skill("csv", "Reads CSV files.");
        skill("pdf", "Reads PDF files.");
        skill("tools/pdf", "A copy of the PDF skill.");
        let loaded = load(&dir).expect("loads");
        let _ = std::fs::remove_dir_all(&dir);

        let offered: Vec<(&str, &str)> = loaded
            .map
            .skills
            .iter()
            .map(|s| (s.id.as_str(), s.description.as_deref().unwrap_or_default()))
            .collect();
        assert_eq!(
            offered,
            [("csv", "Reads CSV files."), ("pdf", "Reads PDF files.")]
        );
        assert_eq!(
            loaded.left_out,
            [".gemini/skills/pdf/SKILL.md", "tools/pdf/SKILL.md"]
        );
        let duplicates: Vec<String> = loaded
            .problems
            .iter()
            .filter(|p| p.code() == ProblemCode::DuplicateSkill)
            .map(|p| p.message().to_string())
            .collect();
        assert_eq!(
            duplicates,
            [
                ".gemini/skills/pdf/SKILL.md and pdf/SKILL.md are both skill `pdf`: ids are folder names and must be unique, so only pdf/SKILL.md is offered; rename one of the folders (and its `name`), or remove it",
                "pdf/SKILL.md and tools/pdf/SKILL.md are both skill `pdf`: ids are folder names and must be unique, so only pdf/SKILL.md is offered; rename one of the folders (and its `name`), or remove it",
            ]
        );
    }

    #[test]
    fn bad_json_is_named_with_its_line_and_column() {
        let err = parse_json::<SkillMap>(Path::new("m.json"), "{\n  \"skills\": [\n}").unwrap_err();
        assert_eq!(err.code(), "bad-json");
        assert!(err.to_string().starts_with("m.json:3:1: "), "{err}");
    }
}
