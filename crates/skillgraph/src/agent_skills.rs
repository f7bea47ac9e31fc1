//! Agent Skills `SKILL.md` files: front matter and body, validated exactly
//! as the format's reference validator (`skills-ref` 0.1.1, `agentskills
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
//! The sentences are ours. Where the reference crashes (a file that is not
//! UTF-8, a `SKILL.md` that is a folder, a control character in the front
//! matter) the skill is reported invalid, as the reference's exit code says.
//! Characters assigned after Unicode 14 (the reference's Python 3.11) may be
//! classified differently.

use std::fmt;

use saphyr_parser::{Event, Parser};
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// The fields a `SKILL.md` front matter may have.
pub const FIELDS: [&str; 6] = [
    "allowed-tools",
    "compatibility",
    "description",
    "license",
    "metadata",
    "name",
];

/// One rule a `SKILL.md` breaks: the field (when one is at fault) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFault {
    /// The front-matter field at fault, if any.
    pub field: Option<String>,
    /// For front matter that is not YAML at all, where the YAML reader gave up
    /// (one-based line and column in the file).
    pub syntax_error_at: Option<(usize, usize)>,
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
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillFile {
    /// The front matter's `name`, when it is a string.
    pub name: Option<String>,
    /// The front matter's `description`, when it is a string.
    pub description: Option<String>,
    /// The Markdown after the front matter, trimmed.
    pub body: String,
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
        syntax_error_at: None,
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
/// ```
/// let file = skillgraph::agent_skills::read_skill_md("pdf-tools", b"---\nname: pdf-tools\ndescription: Read PDFs.\n---\n# Steps\n");
/// assert!(file.is_valid());
/// assert_eq!(file.body, "# Steps");
/// let broken = skillgraph::agent_skills::read_skill_md("pdf", b"---\nname: PDF\n---\n");
/// assert_eq!(broken.faults.len(), 3, "uppercase, folder mismatch, no description");
/// ```
pub fn read_skill_md(dir_name: &str, bytes: &[u8]) -> SkillFile {
    let mut file = SkillFile::default();
    let Ok(text) = std::str::from_utf8(bytes) else {
        file.faults
            .push(fault(None, "the file is not valid UTF-8; save it as UTF-8"));
        return file;
    };
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let Some(rest) = text.strip_prefix("---") else {
        file.faults.push(fault(
            None,
            "the file does not start with `---` front matter (nothing, not even a byte-order mark or a blank line, may come before it); begin it with `---`, then `name:` and `description:`, then `---`",
        ));
        return file;
    };
    let Some(close) = rest.find("---") else {
        file.faults.push(fault(
            None,
            "the front matter is not closed; end it with a line `---` after its last field",
        ));
        return file;
    };
    let front = &rest[..close];
    file.body = rest[close + 3..].trim_matches(is_py_space).to_owned();
    let fields = match strict_yaml(front) {
        Ok(Some(Yaml::Map(fields))) => fields,
        Ok(_) => {
            file.faults.push(fault(
                None,
                "the front matter is not a YAML mapping; write it as `key: value` lines",
            ));
            return file;
        }
        Err(err) if err.syntax => {
            // The front matter starts right after the opening `---`, on the
            // file's first line.
            let column = if err.line == 1 {
                err.column + 3
            } else {
                err.column
            };
            let mut fault = fault(None, err.message);
            fault.syntax_error_at = Some((err.line, column));
            file.faults.push(fault);
            return file;
        }
        Err(err) => {
            file.faults.push(fault(
                None,
                format!("the front matter is not YAML this format accepts: {err}"),
            ));
            return file;
        }
    };
    validate(dir_name, &fields, &mut file);
    file
}

fn validate(dir_name: &str, fields: &[(String, Yaml)], file: &mut SkillFile) {
    let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let mut unknown: Vec<&str> = fields
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !FIELDS.contains(k))
        .collect();
    if !unknown.is_empty() {
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
        Some(Yaml::Str(text)) if !text.trim_matches(is_py_space).is_empty() => {
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
        Some(_) => file
            .faults
            .push(fault(Some("description"), "it must be a non-empty string")),
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
    let mut broken = |message: String| file.faults.push(fault(Some("name"), message));
    let length = name.chars().count();
    if length > 64 {
        broken(format!(
            "'{name}' is {length} characters long (after Unicode NFKC normalisation), more than the 64 allowed"
        ));
    }
    if name.to_lowercase() != name {
        broken(format!(
            "'{name}' must be lower case; write '{}'",
            name.to_lowercase()
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        broken(format!("'{name}' starts or ends with a hyphen; remove it"));
    }
    if name.contains("--") {
        broken(format!("'{name}' contains two hyphens in a row; use one"));
    }
    if !name.chars().all(|c| c == '-' || is_py_alnum(c)) {
        broken(format!(
            "'{name}' may hold only letters, digits and hyphens"
        ));
    }
    let folder: String = dir_name.nfkc().collect();
    if folder != name {
        broken(format!(
            "'{name}' differs from its folder's name '{dir_name}'; rename one so they match"
        ));
    }
}

/// Front-matter YAML, read strictly: every scalar is its text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Yaml {
    Str(String),
    Seq(Vec<Yaml>),
    Map(Vec<(String, Yaml)>),
}

/// A YAML error with its place in the front matter (one-based line and
/// column, counted from the line after the opening `---`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct YamlError {
    line: usize,
    column: usize,
    message: String,
    /// The reader could not parse the text at all (as opposed to a strict
    /// rule refusing YAML that parses).
    syntax: bool,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (front matter line {}, column {})",
            self.message, self.line, self.column
        )
    }
}

/// A collection being built.
enum Open {
    Seq(Vec<Yaml>),
    Map {
        fields: Vec<(String, Yaml)>,
        key: Option<String>,
        /// The column of the first nested mapping, which its siblings share.
        nested_column: Option<usize>,
    },
}

/// Load `text` as one strict YAML document; `None` when it holds no node.
fn strict_yaml(text: &str) -> Result<Option<Yaml>, YamlError> {
    let chars: Vec<char> = text.chars().collect();
    if let Some(at) = chars.iter().position(|c| !is_printable(*c)) {
        let line = chars[..at].iter().filter(|c| **c == '\n').count();
        let column = at
            - chars[..at]
                .iter()
                .rposition(|c| *c == '\n')
                .map_or(0, |nl| nl + 1)
            + 1;
        return Err(YamlError {
            line,
            column,
            syntax: false,
            message: format!(
                "it holds the control character U+{:04X}; remove it",
                u32::from(chars[at])
            ),
        });
    }
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Open> = Vec::new();
    let mut root: Option<Yaml> = None;
    let mut documents = 0;
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|err| YamlError {
            line: err.marker().line(),
            column: err.marker().col() + 1,
            message: err.info().to_owned(),
            syntax: true,
        })?;
        let here = |message: &str| YamlError {
            line: span.start.line(),
            column: span.start.col() + 1,
            message: message.to_owned(),
            syntax: false,
        };
        let opens_flow = |open: char| chars.get(span.start.index()) == Some(&open);
        let node = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(here(
                        "it holds more than one YAML document; keep a single one",
                    ));
                }
                continue;
            }
            Event::Alias(_) => return Err(here("it uses an alias (`*`); write the value out")),
            Event::Scalar(_, _, anchor, _)
            | Event::SequenceStart(anchor, _)
            | Event::MappingStart(anchor, _)
                if anchor != 0 =>
            {
                return Err(here("it uses an anchor (`&`); write values out"));
            }
            Event::Scalar(_, _, _, Some(_))
            | Event::SequenceStart(_, Some(_))
            | Event::MappingStart(_, Some(_)) => {
                return Err(here("it uses a tag (`!`); write plain values"));
            }
            Event::SequenceStart(..) if opens_flow('[') => {
                return Err(here(
                    "it uses a flow sequence (`[…]`); write one `- item` per line",
                ));
            }
            Event::MappingStart(..) if opens_flow('{') => {
                return Err(here(
                    "it uses a flow mapping (`{…}`); write one `key: value` per line",
                ));
            }
            Event::SequenceStart(..) => {
                stack.push(Open::Seq(Vec::new()));
                continue;
            }
            Event::MappingStart(..) => {
                if let Some(Open::Map {
                    key: Some(_),
                    nested_column,
                    ..
                }) = stack.last_mut()
                {
                    let column = span.start.col();
                    match nested_column {
                        Some(known) if *known != column => {
                            return Err(here(
                                "it nests mappings at different indentations under one key set; indent sibling mappings alike",
                            ));
                        }
                        _ => *nested_column = Some(column),
                    }
                }
                stack.push(Open::Map {
                    fields: Vec::new(),
                    key: None,
                    nested_column: None,
                });
                continue;
            }
            Event::Scalar(value, ..) => Yaml::Str(value.into_owned()),
            Event::SequenceEnd => match stack.pop() {
                Some(Open::Seq(items)) => Yaml::Seq(items),
                _ => return Err(here("unbalanced sequence")),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Open::Map { fields, .. }) => Yaml::Map(fields),
                _ => return Err(here("unbalanced mapping")),
            },
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => continue,
        };
        match stack.last_mut() {
            None => root = Some(node),
            Some(Open::Seq(items)) => items.push(node),
            Some(Open::Map { fields, key, .. }) => match key.take() {
                Some(name) => fields.push((name, node)),
                None => {
                    let Yaml::Str(name) = node else {
                        return Err(here(
                            "it uses a list or mapping as a key; keys must be plain text",
                        ));
                    };
                    if fields.iter().any(|(known, _)| *known == name) {
                        return Err(here(&format!("key '{name}' appears twice; keep one")));
                    }
                    *key = Some(name);
                }
            },
        }
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(dir: &str, text: &str) -> Vec<String> {
        read_skill_md(dir, text.as_bytes())
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
        let file = read_skill_md("a", b"---\nname: a\ndescription: before---after\n");
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
}
