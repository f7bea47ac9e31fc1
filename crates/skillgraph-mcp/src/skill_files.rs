//! The skills extension's files (SPEC §9.5; `io.modelcontextprotocol/skills`):
//! each visible skill's files as `skill://ID/PATH` resources, listed by
//! `skills/list` with the digest and size of each. A skill read from a
//! folder serves that folder's files (its `SKILL.md` as written, its
//! `scripts/`, `references/`, …); a skill declared inline serves its body as
//! its `SKILL.md`. Each entry's `frontmatter` is its `SKILL.md`'s front
//! matter, every field the author wrote, as the extension asks (identical
//! in content, field by field), `name` and `description` as the loader
//! resolved them; a skill with no `SKILL.md` of its own has those two alone.
//! The files are read once at start-up for their digests and
//! again when a client reads one; a file changed since is served as it is
//! now, and the client's digest check says so. Reading a file is no read of
//! the graph: it moves nothing.
//!
//! Files stay in their folder (SPEC §9.8): a skill's folder is resolved
//! once, at start-up, and every read resolves the file's path again, links
//! and all, and refuses it unless it still lies inside that folder and is
//! a plain file; what is opened is the resolved path that was checked.

use std::collections::HashMap;
use std::fs::{File, Metadata};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine as _;
use rmcp::model::{
    ResourceContents, Skill as McpSkill, SkillFrontmatter, SkillResource, SkillResources,
};
use serde_json::{Map, Value};
use skillgraph::skill_core::SkillMap;
use skillgraph::skill_md;

use crate::warn;

/// How deep below a skill's folder files are served.
const MAX_DEPTH: usize = 4;

/// The most files served for one skill.
const MAX_FILES: usize = 1_000;

/// The largest file served, in bytes.
const MAX_FILE: u64 = 16 * 1024 * 1024;

/// The largest front-matter field listed, in bytes of JSON (its name
/// included).
const MAX_FIELD: usize = 64 * 1024;

/// Where a served file's bytes are.
#[derive(Debug)]
enum Source {
    /// A file on disk.
    Path {
        /// Its path below its skill's folder as resolved at start-up.
        path: PathBuf,
        /// Its skill's folder, resolved at start-up.
        folder: Arc<Path>,
        /// Whether its last refusal was said on standard error, so that a
        /// client reading it again and again adds no line.
        said: AtomicBool,
    },
    /// A body declared inline, served as its skill's `SKILL.md`.
    Text(String),
}

/// Why a skill file on disk is not served.
#[derive(Debug)]
enum Refusal {
    /// Its path now resolves outside its skill's folder: it, or a folder
    /// on its way, was swapped for a link.
    Outside,
    /// It is no longer a plain file (a folder, a pipe, a device).
    NotAFile,
    /// It was swapped while it was being opened.
    Changed,
    /// It has grown past [`MAX_FILE`] bytes.
    TooLarge,
    /// The system refused to resolve, open or read it.
    Unreadable(std::io::Error),
}

impl Refusal {
    /// Why the file is not served, in words that name neither its path on
    /// disk nor what a link leads to.
    fn reason(&self) -> String {
        match self {
            Refusal::Outside => "it now leads outside its skill's folder (it, or a folder it is in, was replaced by a link after serve started); whoever runs serve can put the file back".to_owned(),
            Refusal::NotAFile => "it is no longer a plain file; whoever runs serve can put the file back".to_owned(),
            Refusal::Changed => "it was replaced while it was being read; read it again".to_owned(),
            Refusal::TooLarge => format!("it has grown past {MAX_FILE} bytes, the most served for one file"),
            Refusal::Unreadable(err) => format!("it cannot be read ({err}); whoever runs serve can make it readable again"),
        }
    }
}

/// Every visible skill's entry and files.
#[derive(Debug, Default)]
pub(crate) struct SkillFiles {
    /// `skills/list`'s entries, in catalog order, each with its skill's id.
    entries: Vec<(String, McpSkill)>,
    /// Each file by address, with its skill's id.
    files: HashMap<String, (String, Source)>,
}

impl SkillFiles {
    /// Gather the files of every skill of `map` that `hides` does not hide
    /// (the session's [`SessionConfig::hides`]), and tell
    /// each listed skill where its files are served (`files_uri`). With
    /// `keep_folders` false (over HTTP, where a client cannot reach this
    /// machine's folders) a skill's folder is no longer said in its body
    /// block. A skill whose id the extension does not accept is left out
    /// of `skills/list`, with a line on standard error.
    pub(crate) fn gather(
        map: &mut SkillMap,
        hides: impl Fn(&str) -> bool,
        keep_folders: bool,
    ) -> Self {
        let mut gathered = SkillFiles::default();
        for skill in &mut map.skills {
            if hides(&skill.id) {
                continue;
            }
            let base = format!("skill://{}/", encode(&skill.id));
            let mut listed = Vec::new();
            let mut sources = Vec::new();
            let mut has_skill_md = false;
            let mut fields = None;
            if let Some(folder) = skill
                .folder
                .as_deref()
                .and_then(|folder| resolved(folder, &skill.id))
            {
                let mut found = Vec::new();
                walk(&folder, "", 0, &mut found, &skill.id);
                for (relative, path) in found {
                    let bytes = match read_inside(&path, &folder) {
                        Ok(bytes) => bytes,
                        Err(refusal) => {
                            warn(&format!(
                                "skill \"{}\": {} is not served: {}",
                                skill.id,
                                path.display(),
                                refusal.reason()
                            ));
                            continue;
                        }
                    };
                    if relative == "SKILL.md" {
                        has_skill_md = true;
                        fields = skill_md::front_matter(&bytes);
                    }
                    let uri = format!("{base}{}", encode(&relative));
                    listed.push(SkillResource::from_bytes(&uri, &bytes));
                    sources.push((
                        uri,
                        Source::Path {
                            path,
                            folder: Arc::clone(&folder),
                            said: AtomicBool::new(false),
                        },
                    ));
                }
            }
            if !has_skill_md {
                let uri = format!("{base}SKILL.md");
                listed.insert(0, SkillResource::from_bytes(&uri, skill.body.as_bytes()));
                sources.push((uri, Source::Text(skill.body.clone())));
            }
            let entry = McpSkill::new(
                format!("{base}SKILL.md"),
                frontmatter(
                    &skill.id,
                    skill.description.as_deref().unwrap_or_default(),
                    fields,
                ),
                SkillResources::Files(listed),
            );
            if let Err(err) = entry.validate() {
                warn(&format!(
                    "skill \"{}\" is not listed by skills/list ({err}); read_skill still offers it",
                    skill.id.escape_debug()
                ));
                continue;
            }
            gathered.entries.push((skill.id.clone(), entry));
            gathered.files.extend(
                sources
                    .into_iter()
                    .map(|(uri, source)| (uri, (skill.id.clone(), source))),
            );
            skill.files_uri = Some(base);
            if !keep_folders {
                skill.folder = None;
            }
        }
        gathered
    }

    /// `skills/list`'s entries of the skills `shows` shows (a principal's
    /// lens, SPEC §14.8), in catalog order.
    pub(crate) fn entries(&self, shows: impl Fn(&str) -> bool) -> Vec<McpSkill> {
        self.entries
            .iter()
            .filter(|(id, _)| shows(id))
            .map(|(_, entry)| entry.clone())
            .collect()
    }

    /// The file at `uri` as a resource's contents, when `shows` shows its
    /// skill; `None` when `uri` is no such skill file's; `Some(Err)` when it can no longer be read or now
    /// leads outside its skill's folder (SPEC §9.8). A refusal names `uri`
    /// alone, never the file's place on disk nor a link's target; it is
    /// said on standard error the first time, with the file's path.
    pub(crate) fn read(
        &self,
        uri: &str,
        shows: impl Fn(&str) -> bool,
    ) -> Option<Result<ResourceContents, String>> {
        let (_, source) = self.files.get(uri).filter(|(id, _)| shows(id))?;
        let bytes = match source {
            Source::Text(text) => text.clone().into_bytes(),
            Source::Path { path, folder, said } => match read_inside(path, folder) {
                Ok(bytes) => {
                    said.store(false, Ordering::Relaxed);
                    bytes
                }
                Err(refusal) => {
                    let reason = refusal.reason();
                    if !said.swap(true, Ordering::Relaxed) {
                        warn(&format!(
                            "{uri} ({}) is not served: {reason}",
                            path.display()
                        ));
                    }
                    return Some(Err(format!("{uri} is not served: {reason}")));
                }
            },
        };
        let mime = mime_of(uri);
        Some(Ok(match String::from_utf8(bytes) {
            Ok(text) => {
                ResourceContents::text(text, uri).with_mime_type(mime.unwrap_or("text/plain"))
            }
            Err(err) => ResourceContents::blob(
                base64::engine::general_purpose::STANDARD.encode(err.as_bytes()),
                uri,
            )
            .with_mime_type(mime.unwrap_or("application/octet-stream")),
        }))
    }

    /// The digest of the file at `uri`, as `skills/list` gave it.
    #[cfg(test)]
    fn digest(&self, uri: &str) -> Option<String> {
        self.entries
            .iter()
            .find_map(|(_, entry)| match &entry.resources {
                SkillResources::Files(files) => files
                    .iter()
                    .find(|file| file.uri == uri)
                    .map(|file| file.digest.clone()),
                _ => None,
            })
    }
}

/// A skill's `frontmatter`: `name` (its id) and `description` as the
/// loader resolved them, then every other field of its `SKILL.md`'s front
/// matter (`fields`) as written, in the file's order. A field over
/// [`MAX_FIELD`] bytes of JSON is left out, and said on standard error
/// (one line a skill).
fn frontmatter(
    id: &str,
    description: &str,
    fields: Option<Map<String, Value>>,
) -> SkillFrontmatter {
    let mut frontmatter = SkillFrontmatter::new(id, description);
    let mut left_out = Vec::new();
    for (key, value) in fields.into_iter().flatten() {
        if key == "name" || key == "description" {
            continue;
        }
        let mut budget = Budget(key.len());
        if serde_json::to_writer(&mut budget, &value).is_err() {
            let shown: String = key.chars().take(40).collect();
            left_out.push(format!("`{}`", shown.escape_debug()));
            continue;
        }
        frontmatter = frontmatter.with_field(key, value);
    }
    if !left_out.is_empty() {
        warn(&format!(
            "skill \"{}\": skills/list leaves out the front matter field(s) {} of its SKILL.md, each over {} KiB as JSON",
            id.escape_debug(),
            left_out.join(", "),
            MAX_FIELD / 1024
        ));
    }
    frontmatter
}

/// Bytes of JSON counted as they are written, refused past [`MAX_FIELD`].
struct Budget(usize);

impl std::io::Write for Budget {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        if self.0 > MAX_FIELD {
            return Err(std::io::Error::other("over the budget"));
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A skill's `folder` with every link on its way resolved, as its files
/// are held to; `None`, said on standard error, when it cannot be.
fn resolved(folder: &str, id: &str) -> Option<Arc<Path>> {
    match std::fs::canonicalize(folder) {
        Ok(path) => Some(Arc::from(path)),
        Err(err) => {
            warn(&format!(
                "skill \"{id}\": its folder {folder} cannot be resolved ({err}), so its files are not served"
            ));
            None
        }
    }
}

/// The bytes of the skill file at `path` if it still lies inside `folder`
/// (its skill's folder, resolved at start-up) once every link on its way is
/// resolved, and is a plain file of at most [`MAX_FILE`] bytes. The path
/// checked is the one opened, so a link swapped in for `path` after the
/// check cannot lead the read elsewhere; and the file opened must be the
/// one checked, so a link swapped in for the resolved path itself is
/// refused too.
fn read_inside(path: &Path, folder: &Path) -> Result<Vec<u8>, Refusal> {
    let resolved = std::fs::canonicalize(path).map_err(Refusal::Unreadable)?;
    if !resolved.starts_with(folder) {
        return Err(Refusal::Outside);
    }
    // Looked at before it is opened: opening a pipe would wait for a writer.
    let checked = std::fs::symlink_metadata(&resolved).map_err(Refusal::Unreadable)?;
    if !checked.is_file() {
        return Err(Refusal::NotAFile);
    }
    let file = File::open(&resolved).map_err(Refusal::Unreadable)?;
    let opened = file.metadata().map_err(Refusal::Unreadable)?;
    if !opened.is_file() {
        return Err(Refusal::NotAFile);
    }
    if !same_file(&checked, &opened) {
        return Err(Refusal::Changed);
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(Refusal::Unreadable)?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(Refusal::TooLarge);
    }
    Ok(bytes)
}

/// Whether `checked` and `opened` describe one file: the same device and
/// inode.
#[cfg(unix)]
fn same_file(checked: &Metadata, opened: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    checked.dev() == opened.dev() && checked.ino() == opened.ino()
}

/// Whether `checked` and `opened` describe one file. Outside Unix the
/// standard library says no file's identity, so the resolved path's check
/// stands alone there.
#[cfg(not(unix))]
fn same_file(_checked: &Metadata, _opened: &Metadata) -> bool {
    true
}

/// The files below `dir`, as (path relative to the skill's folder with `/`
/// between names, path), in name order: names starting with `.` skipped,
/// links not followed, at most [`MAX_DEPTH`] folders deep, [`MAX_FILES`]
/// files and [`MAX_FILE`] bytes a file; what is left out is said.
fn walk(dir: &Path, prefix: &str, depth: usize, found: &mut Vec<(String, PathBuf)>, id: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let relative = format!("{prefix}{name}");
        if kind.is_dir() {
            if depth < MAX_DEPTH {
                walk(&entry.path(), &format!("{relative}/"), depth + 1, found, id);
            }
        } else if kind.is_file() {
            if found.len() >= MAX_FILES {
                warn(&format!(
                    "skill \"{id}\" has more than {MAX_FILES} files; {relative} and the rest are not served"
                ));
                return;
            }
            if entry.metadata().is_ok_and(|meta| meta.len() > MAX_FILE) {
                warn(&format!(
                    "skill \"{id}\": {relative} is larger than {MAX_FILE} bytes, so it is not served"
                ));
                continue;
            }
            found.push((relative, entry.path()));
        }
    }
}

/// `text` with every byte outside the unreserved characters and `/`
/// percent-encoded, as a URI path holds it.
fn encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// The media type a file's name says, for the names skills hold.
fn mime_of(uri: &str) -> Option<&'static str> {
    let extension = uri.rsplit_once('.').map(|(_, extension)| extension)?;
    Some(match extension {
        "md" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "html" => "text/html",
        "csv" => "text/csv",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::sha256_digest;
    use skillgraph::skill_core::Skill;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "skillgraph-mcp-files-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        dir
    }

    #[test]
    fn a_folders_files_are_served_with_the_digests_listed() {
        let dir = scratch("folder");
        std::fs::write(dir.join("SKILL.md"), "---\nname: refunds\n---\nBody").unwrap();
        std::fs::write(dir.join("scripts/run me.sh"), "echo hi\n").unwrap();
        std::fs::write(dir.join(".hidden"), "x").unwrap();
        std::fs::write(dir.join("logo.bin"), [0xff, 0xfe, 0x00]).unwrap();
        let mut skill = Skill::new("refunds");
        skill.folder = Some(dir.display().to_string());
        let mut inline = Skill::new("faq");
        inline.body = "Be brief.".into();
        let mut map = SkillMap {
            skills: vec![skill, inline],
            ..SkillMap::default()
        };
        let files = SkillFiles::gather(&mut map, |_| false, false);
        assert_eq!(files.entries(|_| true).len(), 2);
        let entries = files.entries(|_| true);
        let uris: Vec<&str> = match &entries[0].resources {
            SkillResources::Files(listed) => listed.iter().map(|file| file.uri.as_str()).collect(),
            _ => Vec::new(),
        };
        assert_eq!(
            uris,
            [
                "skill://refunds/SKILL.md",
                "skill://refunds/logo.bin",
                "skill://refunds/scripts/run%20me.sh"
            ]
        );
        let Some(Ok(ResourceContents::TextResourceContents { text, .. })) =
            files.read("skill://refunds/scripts/run%20me.sh", |_| true)
        else {
            panic!("the script reads as text");
        };
        assert_eq!(text, "echo hi\n");
        assert_eq!(
            files.digest("skill://refunds/scripts/run%20me.sh"),
            Some(sha256_digest(b"echo hi\n"))
        );
        assert!(matches!(
            files.read("skill://refunds/logo.bin", |_| true),
            Some(Ok(ResourceContents::BlobResourceContents { .. }))
        ));
        assert!(files.read("skill://refunds/.hidden", |_| true).is_none());
        // Over HTTP the folder is no longer said; the resources are.
        assert_eq!(map.skills[0].folder, None);
        assert_eq!(map.skills[0].files_uri.as_deref(), Some("skill://refunds/"));
        // An inline skill serves its body as its SKILL.md.
        let Some(Ok(ResourceContents::TextResourceContents { text, .. })) =
            files.read("skill://faq/SKILL.md", |_| true)
        else {
            panic!("the inline body reads");
        };
        assert_eq!(text, "Be brief.");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A skill read from a `SKILL.md` lists every field of its front
    /// matter, but one over 64 KiB of JSON; a skill declared inline lists
    /// its name and description alone.
    #[test]
    fn the_frontmatter_is_every_field_of_the_skill_md_within_bounds() {
        let dir = scratch("frontmatter");
        let big = "x".repeat(MAX_FIELD);
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: refunds\ndescription: Refund an order.\nallowed-tools: Read\nhuge: {big}\nmetadata:\n  owner: billing\n  max: 250\n---\nBody"),
        )
        .unwrap();
        let mut skill = Skill::new("refunds");
        skill.description = Some("Refund an order.".into());
        skill.folder = Some(dir.display().to_string());
        let mut inline = Skill::new("faq");
        inline.description = Some("Answer questions.".into());
        let mut map = SkillMap {
            skills: vec![skill, inline],
            ..SkillMap::default()
        };
        let files = SkillFiles::gather(&mut map, |_| false, true);
        let listed: Vec<Value> = files
            .entries
            .iter()
            .map(|(_, entry)| serde_json::to_value(&entry.frontmatter).unwrap())
            .collect();
        assert_eq!(
            listed,
            [
                serde_json::json!({
                    "name": "refunds",
                    "description": "Refund an order.",
                    "allowed-tools": "Read",
                    "metadata": {"owner": "billing", "max": 250}
                }),
                serde_json::json!({"name": "faq", "description": "Answer questions."})
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The text `files` serves at `uri`, or why it does not.
    fn served(files: &SkillFiles, uri: &str) -> Result<String, String> {
        match files.read(uri, |_| true) {
            Some(Ok(ResourceContents::TextResourceContents { text, .. })) => Ok(text),
            Some(Ok(other)) => Err(format!("not one text: {other:?}")),
            Some(Err(refused)) => Err(refused),
            None => Err("not a skill file".to_owned()),
        }
    }

    /// A skill file that is no longer a plain file is refused without
    /// being opened: a pipe put in its place, which a read would wait on
    /// for ever, or a folder.
    #[cfg(unix)]
    #[test]
    fn a_skill_file_replaced_by_a_pipe_or_a_folder_is_refused() {
        let dir = scratch("not-a-file");
        std::fs::write(dir.join("SKILL.md"), "---\nname: refunds\n---\nBody").unwrap();
        std::fs::write(dir.join("scripts/run.sh"), "echo hi\n").unwrap();
        let mut skill = Skill::new("refunds");
        skill.folder = Some(dir.display().to_string());
        let mut map = SkillMap {
            skills: vec![skill],
            ..SkillMap::default()
        };
        let files = SkillFiles::gather(&mut map, |_| false, true);
        assert_eq!(
            served(&files, "skill://refunds/scripts/run.sh").as_deref(),
            Ok("echo hi\n")
        );
        std::fs::remove_file(dir.join("scripts/run.sh")).unwrap();
        nix::unistd::mkfifo(&dir.join("scripts/run.sh"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let refused = served(&files, "skill://refunds/scripts/run.sh").unwrap_err();
        assert!(refused.contains("no longer a plain file"), "{refused}");
        std::fs::remove_file(dir.join("SKILL.md")).unwrap();
        std::fs::create_dir(dir.join("SKILL.md")).unwrap();
        let refused = served(&files, "skill://refunds/SKILL.md").unwrap_err();
        assert!(refused.contains("no longer a plain file"), "{refused}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A skill's folder that is a link is resolved once, at start-up: its
    /// files are served from where it led then, even once the link is
    /// pointed elsewhere.
    #[cfg(unix)]
    #[test]
    fn a_skill_folder_that_is_a_link_is_resolved_at_start_up() {
        let dir = scratch("folder-link");
        let (first, second, link) = (dir.join("first"), dir.join("second"), dir.join("refunds"));
        for (folder, body) in [(&first, "First"), (&second, "Second")] {
            std::fs::create_dir(folder).unwrap();
            std::fs::write(
                folder.join("SKILL.md"),
                format!("---\nname: refunds\n---\n{body}"),
            )
            .unwrap();
        }
        std::os::unix::fs::symlink(&first, &link).unwrap();
        let mut skill = Skill::new("refunds");
        skill.folder = Some(link.display().to_string());
        let mut map = SkillMap {
            skills: vec![skill],
            ..SkillMap::default()
        };
        let files = SkillFiles::gather(&mut map, |_| false, true);
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(&second, &link).unwrap();
        let text = served(&files, "skill://refunds/SKILL.md").unwrap();
        assert!(text.ends_with("First"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_hidden_skill_or_one_the_extension_refuses_is_not_served() {
        let mut map = SkillMap {
            skills: vec![Skill::new("secret"), Skill::new("Bad Name")],
            ..SkillMap::default()
        };
        let files = SkillFiles::gather(&mut map, |id| id == "secret", true);
        assert!(files.entries(|_| true).is_empty());
        assert!(files.read("skill://secret/SKILL.md", |_| true).is_none());
        assert_eq!(map.skills[1].files_uri, None);
    }
}
