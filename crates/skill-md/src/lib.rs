//! The Agent Skills reader: `SKILL.md` files, their front matter and body,
//! validated exactly as the format's reference validator (`skills-ref` 0.1.1, `agentskills
//! validate`) decides validity, so that a skill is valid here exactly when it
//! is valid there.
//!
//! What the reference does, and this module mirrors:
//! - line endings are normalised (`\r\n` and `\r` become `\n`) first;
//! - the file starts with `---`, and the front matter ends at the next `---`
//!   anywhere in the text (not only on a line of its own);
//! - the front matter is YAML read strictly: every scalar is text (`123`,
//!   `null` and an empty value are strings), and flow collections, tags,
//!   anchors, aliases, duplicate keys, sibling mappings indented differently
//!   and a second document are refused; so are non-printable characters;
//! - only `name`, `description`, `license`, `allowed-tools`, `metadata` and
//!   `compatibility` may appear; `name` and `description` must be non-empty
//!   strings; `name`, stripped and NFKC-normalised, is at most 64 characters,
//!   lower case, letters (Unicode categories L and N, so no combining marks),
//!   digits and hyphens, no hyphen at either end, no `--`, and equal to its
//!   folder's NFKC-normalised name; `description` is at most 1024 characters
//!   and `compatibility`, when present, a string of at most 500.
//!
//! One exception: `tools` and `routes`, the runbook keys of the skill-graph
//! reference (agentfootprint), are read, not refused (see [`FileRoute`]). A
//! file using them is valid for us but not portable, as other Agent Skills
//! clients refuse it; [`SkillFile::runbook_keys`] records them.
//!
//! The verdict is strict, the catalog lenient: when the validator would
//! refuse a front matter whole (strict YAML, or a file that is not UTF-8),
//! the file is invalid, and its `name`, `description` and tools are still
//! read as the leading clients read them, so that the skill can be offered.
//!
//! The sentences are ours. Where the reference crashes (a file that is not
//! UTF-8, a `SKILL.md` that is a folder, a control character in the front
//! matter) the skill is reported invalid, as the reference's exit code says.
//! Characters assigned after Unicode 14 (the reference's Python 3.11) may be
//! classified differently.
//!
//! [`front_matter`] gives a front matter as JSON, every field the author
//! wrote, as an ordinary YAML 1.2 reader types it (`3` a number, `true` a
//! boolean): what the skills extension of MCP lists for a skill.
//!
//! It must never read a file, print, keep global state, or depend on a
//! skillgraph crate but `skill-core`: it is pure over the bytes of one file
//! and the name of its folder, which the `skillgraph` loader passes in.

use std::fmt;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

mod allowed_tools;
mod front_matter;
mod runbook;
mod yaml;

pub use runbook::FileRoute;
use yaml::{Yaml, lenient_yaml, strict_yaml};

/// The fields a `SKILL.md` front matter may have.
pub const FIELDS: [&str; 6] = [
    "allowed-tools",
    "compatibility",
    "description",
    "license",
    "metadata",
    "name",
];

/// The reference's runbook keys, read here but refused by other Agent Skills
/// clients.
pub const RUNBOOK_FIELDS: [&str; 2] = ["routes", "tools"];

/// One rule a `SKILL.md` breaks: the field (when one is at fault), where in
/// the file (when a place is known), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFault {
    /// The front-matter field at fault, if any.
    pub field: Option<String>,
    /// Where in the file, as one-based (line, column), line 1 being the
    /// opening `---`; `None` when the fault has no one place.
    pub at: Option<(usize, usize)>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for FileFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "field `{field}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// A `SKILL.md` as read: what could be taken from it, and every rule it breaks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SkillFile {
    /// The front matter's `name`, when it is a string.
    pub name: Option<String>,
    /// The front matter's `description`, when it is a string.
    pub description: Option<String>,
    /// The Markdown after the front matter, trimmed.
    pub body: String,
    /// The tools the front matter names: `allowed-tools` (entries separated
    /// by spaces or commas, or a list; a scoped entry such as `Bash(git:*)`
    /// names the tool before its pattern), then the runbook key `tools`, each
    /// name once.
    pub tools: Vec<String>,
    /// The `allowed-tools` entries that are patterns (they hold a `*`, such
    /// as `mcp__github__*`): not tool names, each once.
    pub tool_patterns: Vec<String>,
    /// The routes the runbook key `routes` declares out of this skill; their
    /// targets are not checked against the folder yet.
    pub routes: Vec<FileRoute>,
    /// The runbook keys the file uses, in [`RUNBOOK_FIELDS`] order.
    pub runbook_keys: Vec<&'static str>,
    /// Every rule broken; empty when the file is valid.
    pub faults: Vec<FileFault>,
}

impl SkillFile {
    /// Whether the file is valid.
    pub fn is_valid(&self) -> bool {
        self.faults.is_empty()
    }
}

fn fault(field: Option<&str>, message: impl Into<String>) -> FileFault {
    FileFault {
        field: field.map(str::to_owned),
        at: None,
        message: message.into(),
    }
}

/// Python's `str.isspace()`: Unicode white space and U+001C–U+001F.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.isalnum()` for one character: a letter or number category.
fn is_py_alnum(c: char) -> bool {
    use GeneralCategory as G;
    matches!(
        get_general_category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
            | G::DecimalNumber
            | G::LetterNumber
            | G::OtherNumber
    )
}

/// Characters a YAML reader accepts in its input.
fn is_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

/// Read a `SKILL.md` of the folder `dir_name` from its bytes.
///
/// The verdict is strict and the catalog lenient (SPEC §7.4): every rule the
/// format's reference validator applies is a fault in
/// [`SkillFile::faults`], and when that validator would refuse the front
/// matter itself (strict YAML refuses flow lists and an unquoted `: ` in a
/// value, which the leading clients load; a file that is not UTF-8), its
/// `name`, `description` and tools are still read, as ordinary YAML or,
/// failing that, as `key: value` lines, so that the skill can be offered.
///
/// ```
/// let file = skill_md::read_skill_md("pdf-tools", b"---\nname: pdf-tools\ndescription: Read PDFs.\n---\n# Steps\n");
/// assert!(file.is_valid());
/// assert_eq!(file.body, "# Steps");
/// let broken = skill_md::read_skill_md("pdf", b"---\nname: PDF\n---\n");
/// assert_eq!(broken.faults.len(), 3, "uppercase, folder mismatch, no description");
/// // Strict YAML refuses the `: ` in the value, so the file is invalid; its
/// // description is still read, as the leading clients read it.
/// let lenient = skill_md::read_skill_md("pdf", b"---\nname: pdf\ndescription: Use when: a PDF arrives\n---\n");
/// assert_eq!(lenient.faults[0].at, Some((3, 22)), "the `:` strict YAML refuses");
/// assert_eq!(lenient.description.as_deref(), Some("Use when: a PDF arrives"));
/// ```
pub fn read_skill_md(dir_name: &str, bytes: &[u8]) -> SkillFile {
    let mut file = SkillFile::default();
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(err) => {
            file.faults.push(not_utf8(bytes, err.valid_up_to()));
            String::from_utf8_lossy(bytes)
        }
    };
    // Once the file is invalid as a whole, the reference reports that
    // alone: what is read after it is for the catalog only.
    let strict = file.faults.is_empty();
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let front = match split_front_matter(&text) {
        Ok((front, body)) => {
            file.body = body;
            front
        }
        Err(broken) => {
            if strict {
                file.faults.push(broken);
            }
            // A byte-order mark before the front matter makes the file
            // invalid; the catalog still reads what follows it.
            if let Some(Ok((front, body))) = text.strip_prefix('\u{feff}').map(split_front_matter) {
                file.body = body;
                if let Some(fields) = lenient_yaml(front) {
                    catalog_values(dir_name, &fields, &mut file);
                }
                return file;
            }
            if !text.starts_with("---") {
                // No front matter at all: the whole file is the guidance.
                file.body = text.trim_matches(is_py_space).to_owned();
            }
            return file;
        }
    };
    match strict_yaml(front) {
        Ok(Some(Yaml::Map(fields))) if strict => validate(dir_name, &fields, &mut file),
        Ok(Some(Yaml::Map(fields))) => catalog_values(dir_name, &fields, &mut file),
        Ok(_) => {
            if strict {
                file.faults.push(fault(
                    None,
                    "the front matter is not a YAML mapping; write it as `key: value` lines",
                ));
            }
        }
        Err(err) => {
            if strict {
                let message = if err.syntax {
                    format!(
                        "the front matter is not YAML: {}; fix the syntax: close every quote, and quote a value that holds `: `",
                        err.message
                    )
                } else {
                    format!(
                        "the front matter is not YAML this format accepts: {}",
                        err.message
                    )
                };
                file.faults.push(FileFault {
                    at: Some((err.line, err.column)),
                    ..fault(None, message)
                });
            }
            if let Some(fields) = lenient_yaml(front) {
                catalog_values(dir_name, &fields, &mut file);
            }
        }
    }
    file
}

/// A `SKILL.md`'s front matter as a JSON object: every field the author
/// wrote, in the order written, as an ordinary YAML 1.2 reader (the core
/// schema) has it. A plain `3`, `1.5`, `true` or `null` is a number, a
/// boolean or null (the strict reader of [`read_skill_md`] reads them as
/// text), a quoted or block scalar a string, a list an array, a mapping an
/// object; flow collections are read, a repeated key keeps its last value.
/// A byte-order mark before the opening `---` is skipped, as hosts skip
/// it.
///
/// This is what the skills extension of MCP (`io.modelcontextprotocol/skills`)
/// lists as a skill's `frontmatter`, which must be identical in content to
/// the file's, field by field.
///
/// `None` when the file is not UTF-8, has no front matter, or its front
/// matter is not one YAML mapping (not YAML at all, a list, empty), uses a
/// tag or an alias, a list or mapping as a key, or nests lists and mappings
/// more than 64 deep: there is then no one reading to list.
///
/// ```
/// let fields = skill_md::front_matter(
///     b"---\nname: pdf\ndescription: Read PDFs.\nmetadata:\n  version: 2\n  beta: true\n---\nBody\n",
/// );
/// let expect = serde_json::json!({
///     "name": "pdf",
///     "description": "Read PDFs.",
///     "metadata": {"version": 2, "beta": true}
/// });
/// assert_eq!(fields.map(serde_json::Value::Object), Some(expect));
/// assert_eq!(skill_md::front_matter(b"---\nname: [unclosed\n---\n"), None);
/// ```
pub fn front_matter(bytes: &[u8]) -> Option<serde_json::Map<String, serde_json::Value>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let (front, _) = split_front_matter(text).ok()?;
    // The line break before the closing `---` is the delimiter's, as hosts
    // split a file: it ends no block scalar kept with `|+`.
    front_matter::json(front.strip_suffix('\n').unwrap_or(front))
}

/// The fault of a file that is not UTF-8, placed at its first bad byte
/// (`valid` bytes come before it).
fn not_utf8(bytes: &[u8], valid: usize) -> FileFault {
    let before = String::from_utf8_lossy(&bytes[..valid.min(bytes.len())]);
    let line = 1 + before.matches('\n').count();
    let column = 1 + before
        .rsplit('\n')
        .next()
        .map_or(0, |last| last.chars().count());
    let byte = bytes
        .get(valid)
        .map_or_else(String::new, |b| format!(" (byte 0x{b:02X} here)"));
    FileFault {
        at: Some((line, column)),
        ..fault(
            None,
            format!("the file is not valid UTF-8{byte}; save it as UTF-8"),
        )
    }
}

/// What a front matter the validator refused still says for the catalog:
/// its name, description, tools and runbook routes, without faults (the
/// file's verdict is already given).
fn catalog_values(dir_name: &str, fields: &[(String, Yaml)], file: &mut SkillFile) {
    let mut read = SkillFile::default();
    validate(dir_name, fields, &mut read);
    file.name = read.name;
    file.description = read.description;
    file.tools = read.tools;
    file.tool_patterns = read.tool_patterns;
    file.routes = read.routes;
    file.runbook_keys = read.runbook_keys;
}

/// The front matter (the text after the opening `---`, up to the next `---`)
/// and the body after it, trimmed; `text`'s line endings are normalised.
fn split_front_matter(text: &str) -> Result<(&str, String), FileFault> {
    let Some(rest) = text.strip_prefix("---") else {
        return Err(fault(
            None,
            "the file does not start with `---` front matter (nothing, not even a byte-order mark or a blank line, may come before it); begin it with `---`, then `name:` and `description:`, then `---`",
        ));
    };
    let Some(close) = rest.find("---") else {
        return Err(fault(
            None,
            "the front matter is not closed; end it with a line `---` after its last field",
        ));
    };
    let body = rest[close + 3..].trim_matches(is_py_space).to_owned();
    Ok((&rest[..close], body))
}

fn validate(dir_name: &str, fields: &[(String, Yaml)], file: &mut SkillFile) {
    let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    refuse_unknown_fields(fields, file);
    match get("name") {
        None => file.faults.push(fault(
            Some("name"),
            "it is missing; add `name:` with the skill's folder name",
        )),
        Some(name) => validate_name(dir_name, name, file),
    }
    match get("description") {
        None => file.faults.push(fault(
            Some("description"),
            "it is missing; add `description:` saying what the skill does and when to use it",
        )),
        Some(description) => validate_description(description, file),
    }
    match get("compatibility") {
        None => {}
        Some(Yaml::Str(text)) => {
            let length = text.chars().count();
            if length > 500 {
                file.faults.push(fault(
                    Some("compatibility"),
                    format!(
                        "it is {length} characters long, more than the 500 allowed; shorten it"
                    ),
                ));
            }
        }
        Some(_) => file.faults.push(fault(
            Some("compatibility"),
            "it must be a string, not a list or a mapping",
        )),
    }
    read_tools_and_routes(
        dir_name,
        get("allowed-tools"),
        get("tools"),
        get("routes"),
        file,
    );
}

/// One fault naming every field neither the format nor the runbook keys
/// define.
fn refuse_unknown_fields(fields: &[(String, Yaml)], file: &mut SkillFile) {
    let mut unknown: Vec<&str> = fields
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !FIELDS.contains(k) && !RUNBOOK_FIELDS.contains(k))
        .collect();
    if unknown.is_empty() {
        return;
    }
    unknown.sort_unstable();
    file.faults.push(fault(
        Some(unknown[0]),
        format!(
            "the front matter has field(s) the format does not define: {}; only {} are allowed (put anything else under `metadata`)",
            unknown.join(", "),
            FIELDS.join(", ")
        ),
    ));
}

fn validate_description(description: &Yaml, file: &mut SkillFile) {
    match description {
        Yaml::Str(text) if !text.trim_matches(is_py_space).is_empty() => {
            file.description = Some(text.clone());
            let length = text.chars().count();
            if length > 1024 {
                file.faults.push(fault(
                    Some("description"),
                    format!(
                        "it is {length} characters long, more than the 1024 allowed; shorten it"
                    ),
                ));
            }
        }
        _ => file
            .faults
            .push(fault(Some("description"), "it must be a non-empty string")),
    }
}

/// The skill's tools (`allowed-tools`, then the runbook key `tools`) and its
/// runbook routes, which may fire only on those tools.
fn read_tools_and_routes(
    dir_name: &str,
    allowed: Option<&Yaml>,
    tools: Option<&Yaml>,
    routes: Option<&Yaml>,
    file: &mut SkillFile,
) {
    // The validator takes `allowed-tools` as it is; only text names count,
    // each scoped entry (`Bash(git:*)`) naming the tool before its pattern,
    // and an entry with a wildcard (`mcp__github__*`) being a pattern.
    let entries: Vec<String> = match allowed {
        Some(Yaml::Str(text)) => allowed_tools::tool_names(text),
        Some(Yaml::Seq(items)) => items
            .iter()
            .filter_map(|item| match item {
                Yaml::Str(entry) => allowed_tools::name_of(entry),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    for entry in entries {
        if !skill_core::is_tool_pattern(&entry) {
            file.tools.push(entry);
        } else if !file.tool_patterns.contains(&entry) {
            file.tool_patterns.push(entry);
        }
    }
    if let Some(value) = tools {
        file.runbook_keys.push("tools");
        match runbook::read_tools(value) {
            Ok(names) => file.tools.extend(names),
            Err(message) => file.faults.push(fault(Some("tools"), message)),
        }
    }
    let mut seen = Vec::new();
    file.tools.retain(|name| {
        let first = !seen.contains(name);
        seen.push(name.clone());
        first
    });
    if let Some(value) = routes {
        file.runbook_keys.insert(0, "routes");
        let (routes, broken) = runbook::read_routes(dir_name, value, &file.tools);
        file.routes = routes;
        for message in broken {
            file.faults.push(fault(Some("routes"), message));
        }
    }
}

fn validate_name(dir_name: &str, name: &Yaml, file: &mut SkillFile) {
    let Yaml::Str(raw) = name else {
        file.faults
            .push(fault(Some("name"), "it must be a non-empty string"));
        return;
    };
    let stripped = raw.trim_matches(is_py_space);
    if stripped.is_empty() {
        file.faults
            .push(fault(Some("name"), "it must be a non-empty string"));
        return;
    }
    file.name = Some(raw.clone());
    let name: String = stripped.nfkc().collect();
    let folder: String = dir_name.nfkc().collect();
    let write = suggested_name(&name, &folder)
        .map(|suggestion| format!("; write '{suggestion}'"))
        .unwrap_or_default();
    let mut broken = |message: String| file.faults.push(fault(Some("name"), message));
    let length = name.chars().count();
    if length > 64 {
        broken(format!(
            "'{name}' is {length} characters long (after Unicode NFKC normalisation), more than the 64 allowed{write}"
        ));
    }
    if name.to_lowercase() != name {
        broken(format!("'{name}' must be lower case{write}"));
    }
    if name.starts_with('-') || name.ends_with('-') {
        broken(format!("'{name}' starts or ends with a hyphen{write}"));
    }
    if name.contains("--") {
        broken(format!("'{name}' contains two hyphens in a row{write}"));
    }
    if !name.chars().all(|c| c == '-' || is_py_alnum(c)) {
        broken(format!(
            "'{name}' may hold only letters, digits and hyphens{write}"
        ));
    }
    if folder != name {
        broken(format!(
            "'{name}' differs from its folder's name '{dir_name}'; rename one so they match"
        ));
    }
}

/// Whether `name` (NFKC-normalised already) passes the format's name rules:
/// at most 64 characters, lower case, letters, digits and single inner
/// hyphens.
fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= 64
        && name.to_lowercase() == name
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
        && name.chars().all(|c| c == '-' || is_py_alnum(c))
}

/// A name to write instead of `name`, which passes every name rule: the
/// folder's name when that is one (a valid name must equal it), else `name`
/// lower-cased, each run of other characters made one hyphen, cut to 64
/// characters. `None` when nothing of `name` survives.
fn suggested_name(name: &str, folder: &str) -> Option<String> {
    if is_valid_name(folder) {
        return Some(folder.to_owned());
    }
    let mut slug = String::new();
    for c in name.to_lowercase().nfkc() {
        if is_py_alnum(c) && c.to_lowercase().eq(std::iter::once(c)) {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let mut slug: String = slug.chars().take(64).collect();
    while slug.ends_with('-') {
        slug.pop();
    }
    is_valid_name(&slug).then_some(slug)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(dir: &str, text: &str) -> SkillFile {
        read_skill_md(dir, text.as_bytes())
    }

    fn faults(dir: &str, text: &str) -> Vec<String> {
        read(dir, text)
            .faults
            .into_iter()
            .map(|f| f.to_string())
            .collect()
    }

    #[test]
    fn every_scalar_is_text() {
        assert!(
            faults(
                "123",
                "---\nname: 123\ndescription: null\ncompatibility: 3.11\n---\n"
            )
            .is_empty()
        );
        assert_eq!(
            faults("a", "---\nname:\ndescription: x\n---\n"),
            ["field `name`: it must be a non-empty string"]
        );
    }

    #[test]
    fn strict_yaml_refusals() {
        for (text, expect) in [
            ("---\nname: a\ndescription: [x]\n---\n", "flow sequence"),
            ("---\nname: a\ndescription: {}\n---\n", "flow mapping"),
            ("---\nname: !!str a\ndescription: x\n---\n", "tag"),
            ("---\nname: &n a\ndescription: x\n---\n", "anchor"),
            (
                "---\nname: a\nname: a\ndescription: x\n---\n",
                "appears twice",
            ),
            (
                "---\nname: a\ndescription: x\nmetadata:\n  k: v\nlicense:\n    k: v\n---\n",
                "different indentations",
            ),
            ("---\nname: a\ndescription: x\u{1}\n---\n", "U+0001"),
        ] {
            let found = faults("a", text);
            assert!(
                found.len() == 1 && found[0].contains(expect),
                "{text:?}: {found:?}"
            );
        }
    }

    #[test]
    fn the_front_matter_ends_at_the_next_dashes_anywhere() {
        let file = read("a", "---\nname: a\ndescription: before---after\n");
        assert!(file.is_valid(), "{:?}", file.faults);
        assert_eq!(file.description.as_deref(), Some("before"));
        assert_eq!(file.body, "after");
    }

    #[test]
    fn names_follow_python_semantics() {
        assert!(faults("café", "---\nname: café\ndescription: x\n---").is_empty());
        assert!(
            !faults("हिन्दी", "---\nname: हिन्दी\ndescription: x\n---").is_empty(),
            "combining marks are not alnum"
        );
        assert!(
            faults(
                "my-skill",
                "---\nname: ｍｙ－ｓｋｉｌｌ\ndescription: x\n---"
            )
            .is_empty(),
            "NFKC first"
        );
        let found = faults("a--b-", "---\nname: a--b-\ndescription: x\n---");
        assert_eq!(found.len(), 2, "{found:?}");
    }

    /// Both kinds of YAML fault count lines in the whole file, line 1 being
    /// the opening `---`.
    #[test]
    fn yaml_errors_name_the_line_of_the_file() {
        for (text, at) in [
            ("---\nname: a\ndescription: [x]\n---\n", (3, 14)),
            ("---\nname: a\ndescription: x\u{1}\n---\n", (3, 15)),
            ("--- !t\nname: a\n---\n", (1, 5)),
            ("---\nname: a\n  bad: indent\n---\n", (3, 6)),
        ] {
            let file = read("a", text);
            assert!(
                file.faults.len() == 1 && file.faults[0].at == Some(at),
                "{text:?}: {:?}",
                file.faults
            );
        }
        let file = read("a", "---\nname: a\ndescription: \"unclosed\n---\n");
        assert_eq!(file.faults.len(), 1, "{:?}", file.faults);
        assert_eq!(file.faults[0].at.map(|(line, _)| line), Some(3));
        assert!(
            file.faults[0]
                .message
                .starts_with("the front matter is not YAML: ")
        );
    }

    /// What strict YAML refuses is still read for the catalog, as ordinary
    /// YAML or as `key: value` lines; the verdict stays the validator's.
    #[test]
    fn the_catalog_reads_what_the_verdict_refuses() {
        for (text, description) in [
            (
                "---\nname: a\ndescription: Use when: asked\n---\n",
                "Use when: asked",
            ),
            (
                "---\nname: a\ndescription: \"Quoted: yes\"\nallowed-tools: [Read, Grep]\n---\n",
                "Quoted: yes",
            ),
            (
                "---\nname: a\ndescription: Folded: one\n  two\nlicense: MIT\n---\n",
                "Folded: one two",
            ),
            (
                "---\nname: a\ndescription: Folded: one\n  two\n---\n  three\n",
                "Folded: one two",
            ),
        ] {
            let file = read("a", text);
            assert!(!file.is_valid(), "{text:?}");
            assert_eq!(file.name.as_deref(), Some("a"), "{text:?}");
            assert_eq!(file.description.as_deref(), Some(description), "{text:?}");
        }
        let file = read(
            "a",
            "---\nname: a\ndescription: x\nallowed-tools: [Read, Grep]\n---\n",
        );
        assert_eq!(file.tools, ["Read", "Grep"]);
        assert_eq!(
            key_value_fields(
                "description: >\n  Long: text\n  here\nlist:\n  - a\n  - 'b'\nkeep: |\n  one\n  two"
            ),
            [
                ("description", "Long: text here".to_owned()),
                ("list", "[a, b]".to_owned()),
                ("keep", "one\ntwo".to_owned())
            ]
        );
        let file = read_skill_md("a", b"---\nname: a\ndescription: caf\xe9\n---\nBody\n");
        assert_eq!(file.faults.len(), 1, "{:?}", file.faults);
        assert_eq!(file.description.as_deref(), Some("caf\u{fffd}"));
        assert_eq!(file.faults[0].at, Some((3, 17)), "the first bad byte");
        assert!(
            file.faults[0].message.contains("(byte 0xE9 here)"),
            "{:?}",
            file.faults
        );
        assert_eq!(file.body, "Body");
        let file = read(
            "a",
            "\u{feff}---\nname: a\ndescription: After a mark.\n---\nBody\n",
        );
        assert_eq!(file.faults.len(), 1, "{:?}", file.faults);
        assert_eq!(file.description.as_deref(), Some("After a mark."));
        assert_eq!(file.body, "Body");
        let file = read("a", "# Just guidance\n");
        assert_eq!(file.body, "# Just guidance");
        assert!(!file.is_valid());
    }

    fn key_value_fields(text: &str) -> Vec<(&'static str, String)> {
        yaml::key_value_lines_for_test(text)
            .into_iter()
            .map(|(key, value)| (&*key.leak(), value))
            .collect()
    }

    /// The front matter as JSON is found as the catalog finds it: after a
    /// byte-order mark, with `\r\n` line ends; a file that is not UTF-8 or
    /// has no front matter has none.
    #[test]
    fn the_front_matter_as_json_is_every_field_written() {
        let file = "\u{feff}---\r\nname: refunds\r\ndescription: Refund an order.\r\nallowed-tools: Bash(git:*) Read\r\nlicense: MIT\r\nmetadata:\r\n  owner: billing\r\n  limits:\r\n    max: 250\r\n    manual: false\r\n---\r\nBody\r\n";
        let fields = front_matter(file.as_bytes()).map(serde_json::Value::Object);
        assert_eq!(
            fields,
            Some(serde_json::json!({
                "name": "refunds",
                "description": "Refund an order.",
                "allowed-tools": "Bash(git:*) Read",
                "license": "MIT",
                "metadata": {"owner": "billing", "limits": {"max": 250, "manual": false}}
            }))
        );
        for broken in [
            &b"---\nname: a\ndescription: caf\xe9\n---\n"[..],
            b"# Just guidance\n",
            b"---\nname: a\n",
            b"---\nname: a\ndescription: Use when: asked\n---\n",
            b"---\n- a\n---\n",
        ] {
            assert_eq!(
                front_matter(broken),
                None,
                "{:?}",
                String::from_utf8_lossy(broken)
            );
        }
    }

    #[test]
    fn every_suggested_name_is_a_valid_one() {
        let faults = faults(
            "ahrefs-automation",
            "---\nname: Ahrefs Automation\ndescription: x\n---\n",
        );
        assert!(
            faults
                .iter()
                .any(|f| f.contains("write 'ahrefs-automation'")),
            "{faults:?}"
        );
        assert_eq!(
            suggested_name("Ahrefs Automation", "Ahrefs Automation").as_deref(),
            Some("ahrefs-automation")
        );
        assert_eq!(suggested_name("--A__b--", "x y").as_deref(), Some("a-b"));
        assert_eq!(suggested_name("!!!", "???"), None);
    }

    #[test]
    fn allowed_tools_and_the_runbook_tools_become_the_skills_tools() {
        let file = read(
            "a",
            "---\nname: a\ndescription: x\nallowed-tools: Read  lookup\ntools: lookup, refund\n---\n",
        );
        assert_eq!(file.tools, ["Read", "lookup", "refund"]);
        assert_eq!(file.runbook_keys, ["tools"]);
        // Claude Code's scoped entries carry the tool they scope, once.
        let file = read(
            "a",
            "---\nname: a\ndescription: x\nallowed-tools: Bash(git status:*), Bash(jq:*) Read\n---\n",
        );
        assert_eq!(file.tools, ["Bash", "Read"]);
        let file = read(
            "a",
            "---\nname: a\ndescription: x\nallowed-tools:\n  - Bash(git:*)\n  - \" \"\n  - my tool\n---\n",
        );
        assert_eq!(file.tools, ["Bash", "my tool"]);
        assert!(file.is_valid(), "{:?}", file.faults);
        let file = read(
            "a",
            "---\nname: a\ndescription: x\ntools:\n  - lookup\n  - refund\n---\n",
        );
        assert_eq!(file.tools, ["lookup", "refund"]);
        for broken in ["tools:\n  k: v", "tools: \" , \"", "tools:\n  - - x"] {
            let text = format!("---\nname: a\ndescription: x\n{broken}\n---\n");
            let found = faults("a", &text);
            assert!(
                found.len() == 1 && found[0].starts_with("field `tools`"),
                "{broken}: {found:?}"
            );
        }
    }

    #[test]
    fn runbook_routes_follow_the_grammar() {
        let file = read(
            "a",
            "---\nname: a\ndescription: x\ntools: lookup\nroutes:\n  - b\n  - c: on lookup\n  - d: status=denied, failure\n  - e: on lookup status=success\n  - f:\n---\n",
        );
        assert!(file.is_valid(), "{:?}", file.faults);
        assert_eq!(file.runbook_keys, ["routes", "tools"]);
        let shape: Vec<_> = file
            .routes
            .iter()
            .map(|r| {
                (
                    r.route.from.as_str(),
                    r.route.to.as_str(),
                    r.route.on_tool_return.as_deref(),
                    r.route.on_tool_status.clone(),
                )
            })
            .collect();
        let statuses = |list: &[&str]| Some(list.iter().map(|s| (*s).to_owned()).collect());
        assert_eq!(
            shape,
            [
                ("a", "b", None, None),
                ("a", "c", Some("lookup"), None),
                ("a", "d", None, statuses(&["denied", "failure"])),
                ("a", "e", Some("lookup"), statuses(&["success"])),
                ("a", "f", None, None),
            ]
        );
        assert_eq!(file.routes[1].item, "c: on lookup");
    }

    #[test]
    fn each_broken_route_item_is_a_fault_naming_it() {
        for (routes, expect) in [
            ("routes:", "lists no route"),
            ("routes: b", "must be a list"),
            ("routes:\n  - b: when ready", "`b: when ready` has a guard"),
            (
                "routes:\n  - b: on refund",
                "`refund`, which is not one of this file's tools (the file names none)",
            ),
            ("routes:\n  - b: status=lost", "the status `lost`"),
            ("routes:\n  - b: status=", "`b: status=` has a guard"),
            (
                "routes:\n  - b\n  - b: status=denied",
                "second route to `b`",
            ),
            ("routes:\n  - b: x\n    c: y", "`b: x, c: y` is not a route"),
            ("routes:\n  - \"\"", "names no target"),
        ] {
            let text = format!("---\nname: a\ndescription: x\n{routes}\n---\n");
            let found = faults("a", &text);
            assert!(
                found.len() == 1
                    && found[0].starts_with("field `routes`: ")
                    && found[0].contains(expect),
                "{routes}: {found:?}"
            );
        }
    }
}
