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
    let mut reader = Reader::default();
    for next in Parser::new_from_str(text) {
        let (event, span) = next.map_err(|err| syntax_error(&err))?;
        refuse_unsupported(&event, &chars, span.start)?;
        reader.take(event, span.start)?;
    }
    Ok(reader.root)
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
    stack: Vec<Open>,
    root: Option<Yaml>,
    documents: usize,
}

impl Reader {
    fn take(&mut self, event: Event<'_>, at: Marker) -> Result<(), YamlError> {
        let node = match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
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
                    if fields.iter().any(|(known, _)| *known == name) {
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
