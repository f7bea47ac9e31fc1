//! Front-matter YAML read strictly, as the reference validator's reader does:
//! every scalar is its text, and what that reader refuses is refused here
//! (flow collections, tags, anchors, aliases, duplicate keys, sibling
//! mappings indented differently, a second document, control characters).
//!
//! Places are counted in the whole `SKILL.md`: line 1 is the opening `---`,
//! whose line the front matter starts on (after its three dashes).

use saphyr_parser::{Event, Marker, Parser, ScanError};

use super::is_printable;

/// Front-matter YAML: every scalar is its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Yaml {
    Str(String),
    Seq(Vec<Yaml>),
    Map(Vec<(String, Yaml)>),
}

/// Why the front matter was not read, and where (one-based line and column
/// of the `SKILL.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct YamlError {
    pub(super) line: usize,
    pub(super) column: usize,
    pub(super) message: String,
    /// The reader could not parse the text at all (as opposed to a strict
    /// rule refusing YAML that parses).
    pub(super) syntax: bool,
}

/// The place in the file of a place in the front matter, both one-based
/// lines, `column` zero-based as the YAML reader counts it.
fn in_file(line: usize, column: usize) -> (usize, usize) {
    // The front matter begins after the opening `---` on line 1.
    let column = if line == 1 { column + 3 } else { column };
    (line, column + 1)
}

fn refusal(at: Marker, message: &str) -> YamlError {
    let (line, column) = in_file(at.line(), at.col());
    YamlError {
        line,
        column,
        message: message.to_owned(),
        syntax: false,
    }
}

fn syntax_error(err: &ScanError) -> YamlError {
    let (line, column) = in_file(err.marker().line(), err.marker().col());
    YamlError {
        line,
        column,
        message: err.info().to_owned(),
        syntax: true,
    }
}

/// Load `text` (the front matter) as one strict YAML document; `None` when
/// it holds no node.
pub(super) fn strict_yaml(text: &str) -> Result<Option<Yaml>, YamlError> {
    let chars: Vec<char> = text.chars().collect();
    refuse_control_characters(&chars)?;
    let mut reader = Reader {
        strict: true,
        ..Reader::default()
    };
    for next in Parser::new_from_str(text) {
        let (event, span) = next.map_err(|err| syntax_error(&err))?;
        refuse_unsupported(&event, &chars, span.start)?;
        reader.take(event, span.start)?;
    }
    Ok(reader.root)
}

/// The fields of a front matter that strict YAML refused, read as the
/// leading clients read one: as ordinary YAML (flow collections, tags and
/// anchors allowed, a repeated key keeping its last value), or, when it is
/// not YAML at all, as `key: value` lines. `None` when neither finds a
/// field.
pub(super) fn lenient_yaml(text: &str) -> Option<Vec<(String, Yaml)>> {
    let mut reader = Reader::default();
    let mut parsed = true;
    for next in Parser::new_from_str(text) {
        let Ok((event, span)) = next else {
            parsed = false;
            break;
        };
        if reader.take(event, span.start).is_err() {
            parsed = false;
            break;
        }
    }
    let fields = match reader.root {
        Some(Yaml::Map(fields)) if parsed => fields,
        _ => key_value_lines(text),
    };
    (!fields.is_empty()).then_some(fields)
}

/// `key: value` lines: a key at the start of a line, its value the rest of
/// the line as written (a `: ` inside it is text), unquoted when quoted
/// whole; indented lines after it continue the value (joined with spaces),
/// keep their line breaks after `|`, or, when they are `- item` lines, make
/// it a list.
fn key_value_lines(text: &str) -> Vec<(String, Yaml)> {
    let mut fields: Vec<(String, Yaml)> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim_end();
        if key.is_empty() || key.starts_with([' ', '\t', '#', '-']) || key.contains(' ') {
            continue;
        }
        let value = value.trim();
        let mut more = Vec::new();
        while let Some(next) = lines.next_if(|l| l.starts_with([' ', '\t']) || l.trim().is_empty())
        {
            more.push(next.trim());
        }
        while more.last().is_some_and(|l| l.is_empty()) {
            more.pop();
        }
        let node = if value.is_empty()
            && !more.is_empty()
            && more.iter().all(|l| l.starts_with("- ") || l.is_empty())
        {
            Yaml::Seq(
                more.iter()
                    .filter_map(|l| l.strip_prefix("- "))
                    .map(|item| Yaml::Str(unquoted(item.trim()).to_owned()))
                    .collect(),
            )
        } else if value.starts_with('|') {
            Yaml::Str(more.join("\n"))
        } else {
            let mut words = vec![unquoted(value).to_owned()];
            if value.starts_with('>') {
                words.clear();
            }
            words.extend(
                more.iter()
                    .filter(|l| !l.is_empty())
                    .map(|l| (*l).to_owned()),
            );
            Yaml::Str(words.join(" "))
        };
        fields.retain(|(known, _)| known != key);
        fields.push((key.to_owned(), node));
    }
    fields
}

/// [`key_value_lines`] with each value shown as text (a list as `[a, b]`).
#[cfg(test)]
pub(super) fn key_value_lines_for_test(text: &str) -> Vec<(String, String)> {
    key_value_lines(text)
        .into_iter()
        .map(|(key, node)| {
            let shown = match node {
                Yaml::Str(text) => text,
                Yaml::Seq(items) => {
                    let items: Vec<String> = items
                        .into_iter()
                        .map(|item| match item {
                            Yaml::Str(text) => text,
                            other => format!("{other:?}"),
                        })
                        .collect();
                    format!("[{}]", items.join(", "))
                }
                Yaml::Map(_) => "{…}".to_owned(),
            };
            (key, shown)
        })
        .collect()
}

/// A value without its quotes: the pair around it, or an opening quote
/// that is never closed.
fn unquoted(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote) {
            return inner.strip_suffix(quote).unwrap_or(inner);
        }
    }
    value
}

fn refuse_control_characters(chars: &[char]) -> Result<(), YamlError> {
    let Some(at) = chars.iter().position(|c| !is_printable(*c)) else {
        return Ok(());
    };
    let line_start = chars[..at]
        .iter()
        .rposition(|c| *c == '\n')
        .map_or(0, |nl| nl + 1);
    let line = 1 + chars[..at].iter().filter(|c| **c == '\n').count();
    let (line, column) = in_file(line, at - line_start);
    Err(YamlError {
        line,
        column,
        syntax: false,
        message: format!(
            "it holds the control character U+{:04X}; remove it",
            u32::from(chars[at])
        ),
    })
}

/// Refuse the YAML the reference's strict reader does not accept.
fn refuse_unsupported(event: &Event<'_>, chars: &[char], at: Marker) -> Result<(), YamlError> {
    let opens_with = |open: char| chars.get(at.index()) == Some(&open);
    let message = match event {
        Event::Alias(_) => "it uses an alias (`*`); write the value out",
        Event::Scalar(_, _, anchor, _)
        | Event::SequenceStart(anchor, _)
        | Event::MappingStart(anchor, _)
            if *anchor != 0 =>
        {
            "it uses an anchor (`&`); write values out"
        }
        Event::Scalar(_, _, _, Some(_))
        | Event::SequenceStart(_, Some(_))
        | Event::MappingStart(_, Some(_)) => "it uses a tag (`!`); write plain values",
        Event::SequenceStart(..) if opens_with('[') => {
            "it uses a flow sequence (`[…]`); write one `- item` per line"
        }
        Event::MappingStart(..) if opens_with('{') => {
            "it uses a flow mapping (`{…}`); write one `key: value` per line"
        }
        _ => return Ok(()),
    };
    Err(refusal(at, message))
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

/// Builds the document from the reader's events.
#[derive(Default)]
struct Reader {
    /// Refuse what the reference's strict reader refuses (a second
    /// document, a repeated key, siblings indented differently); otherwise
    /// read them as ordinary YAML does.
    strict: bool,
    stack: Vec<Open>,
    root: Option<Yaml>,
    documents: usize,
}

impl Reader {
    fn take(&mut self, event: Event<'_>, at: Marker) -> Result<(), YamlError> {
        let node = match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 && self.strict {
                    return Err(refusal(
                        at,
                        "it holds more than one YAML document; keep a single one",
                    ));
                }
                return Ok(());
            }
            Event::SequenceStart(..) => {
                self.stack.push(Open::Seq(Vec::new()));
                return Ok(());
            }
            Event::MappingStart(..) => return self.open_mapping(at),
            Event::Scalar(value, ..) => Yaml::Str(value.into_owned()),
            // Only an ordinary reading gets here with an alias: it stands
            // for a value this reader does not keep.
            Event::Alias(_) => Yaml::Str(String::new()),
            Event::SequenceEnd => match self.stack.pop() {
                Some(Open::Seq(items)) => Yaml::Seq(items),
                _ => return Err(refusal(at, "unbalanced sequence")),
            },
            Event::MappingEnd => match self.stack.pop() {
                Some(Open::Map { fields, .. }) => Yaml::Map(fields),
                _ => return Err(refusal(at, "unbalanced mapping")),
            },
            _ => return Ok(()),
        };
        self.attach(node, at)
    }

    /// A mapping nested under a key must be indented like its siblings.
    fn open_mapping(&mut self, at: Marker) -> Result<(), YamlError> {
        if !self.strict {
            self.stack.push(Open::Map {
                fields: Vec::new(),
                key: None,
                nested_column: None,
            });
            return Ok(());
        }
        if let Some(Open::Map {
            key: Some(_),
            nested_column,
            ..
        }) = self.stack.last_mut()
        {
            match nested_column {
                Some(known) if *known != at.col() => {
                    return Err(refusal(
                        at,
                        "it nests mappings at different indentations under one key set; indent sibling mappings alike",
                    ));
                }
                _ => *nested_column = Some(at.col()),
            }
        }
        self.stack.push(Open::Map {
            fields: Vec::new(),
            key: None,
            nested_column: None,
        });
        Ok(())
    }

    /// Put a finished node where it belongs: the root, a list, or a mapping
    /// (as its next key, or as the value of the key before it).
    fn attach(&mut self, node: Yaml, at: Marker) -> Result<(), YamlError> {
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Open::Seq(items)) => items.push(node),
            Some(Open::Map { fields, key, .. }) => match key.take() {
                Some(name) => fields.push((name, node)),
                None => {
                    let Yaml::Str(name) = node else {
                        return Err(refusal(
                            at,
                            "it uses a list or mapping as a key; keys must be plain text",
                        ));
                    };
                    if !self.strict {
                        fields.retain(|(known, _)| *known != name);
                    } else if fields.iter().any(|(known, _)| *known == name) {
                        return Err(refusal(
                            at,
                            &format!("key '{name}' appears twice; keep one"),
                        ));
                    }
                    *key = Some(name);
                }
            },
        }
        Ok(())
    }
}
