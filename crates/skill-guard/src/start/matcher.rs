//! A start rule's matcher (SPEC §13.1): `regex`, `keywords` or `all`,
//! compiled once, and its witness: the text that matched, as the record and
//! `explain` quote it.

use serde_json::Value;

use crate::compile::a_json_type as kind;
use crate::js_number::is_js_space;
use crate::js_value::bounded;
use crate::start::pattern::{Found, Pattern};

/// Why a matcher was refused. Every variant is the check-up's and the
/// loader's `rule-refused` ([`code`](Self::code)); `Display` says what was
/// wrong and how to write it instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RuleError {
    /// The matcher is not an object.
    #[error(
        "the matcher is {found}; write an object: {{\"regex\": …, \"flags\"?: …}}, {{\"keywords\": […]}} or {{\"all\": […]}}"
    )]
    NotAMatcher {
        /// What it was instead (`a string`, `an array`, …).
        found: &'static str,
    },
    /// The object has a key no matcher takes, or keys of two kinds.
    #[error(
        "the matcher's key \"{key}\" is not one a matcher takes; write {{\"regex\": …, \"flags\"?: …}}, {{\"keywords\": […]}} or {{\"all\": […]}}, one kind per object"
    )]
    UnknownKey {
        /// The key.
        key: String,
    },
    /// `regex` or `flags` is not a string.
    #[error("\"{key}\" is {found}; write it as a string")]
    NotAString {
        /// `regex` or `flags`.
        key: &'static str,
        /// What it was instead.
        found: &'static str,
    },
    /// A flag the rule does not take, or one given twice.
    #[error("flags \"{flags}\": {reason}")]
    Flags {
        /// The flags as declared.
        flags: String,
        /// What is wrong with them.
        reason: String,
    },
    /// The engine refused the pattern.
    #[error("regex \"{regex}\" does not compile: {reason}; write an ECMAScript regular expression")]
    Pattern {
        /// The pattern as declared.
        regex: String,
        /// The engine's reason.
        reason: String,
    },
    /// `keywords` or `all` is not a list.
    #[error("\"{key}\" is {found}; write a non-empty list")]
    NotAList {
        /// `keywords` or `all`.
        key: &'static str,
        /// What it was instead.
        found: &'static str,
    },
    /// `keywords` or `all` is an empty list.
    #[error("\"{key}\" is an empty list, which matches nothing; give it at least one entry")]
    EmptyList {
        /// `keywords` or `all`.
        key: &'static str,
    },
    /// A keyword that is not a string.
    #[error("keywords[{at}] is {found}; every keyword is a string")]
    KeywordNotAString {
        /// Its place in the list, from 0.
        at: usize,
        /// What it was instead.
        found: &'static str,
    },
    /// A keyword that is empty or only white space.
    #[error("keywords[{at}] is blank ({keyword:?}); give it a word or drop it")]
    BlankKeyword {
        /// Its place in the list, from 0.
        at: usize,
        /// The keyword.
        keyword: String,
    },
    /// A part of an `all` was refused.
    #[error("all[{at}]: {error}")]
    InAll {
        /// The part's place in the list, from 0.
        at: usize,
        /// Why it was refused.
        error: Box<RuleError>,
    },
}

impl RuleError {
    /// The stable code: `rule-refused`, whatever the reason.
    pub fn code(&self) -> &'static str {
        "rule-refused"
    }
}

/// One part of a compiled matcher (an `all` is flattened into its parts).
#[derive(Debug, Clone)]
enum Part {
    Regex {
        source: String,
        pattern: Pattern,
    },
    Keywords {
        words: Vec<String>,
        patterns: Vec<Pattern>,
    },
}

/// A part of a matcher as declared: what the check-up compares rules by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MatcherPart<'m> {
    /// A `regex`, with its flags as kept (`imsu`, in the order written).
    Regex {
        /// The pattern.
        source: &'m str,
        /// The flags kept (`g`, `y` and `d` dropped).
        flags: &'m str,
    },
    /// A `keywords` list.
    Keywords(&'m [String]),
}

/// The outcome of trying a matcher on a message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The matcher matches; the witness is the matched text (SPEC §13.1).
    Matched(String),
    /// It does not match.
    Missed,
    /// A `regex` needed more backtracking than the bound allows
    /// ([`MAX_STEPS`](crate::start::MAX_STEPS)), so whether it
    /// matches is not known: the rule does not decide the turn.
    GaveUp,
}

/// A user message, read once: its text, and its UTF-16 code units when it
/// holds an astral character (a pattern without `u` sees its two units
/// apart; every other message reads the same as code points).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    text: String,
    /// The text with its ASCII letters lowercased, where a pattern under `i`
    /// looks for the ASCII text its matches must contain.
    lower: String,
    units: Option<Vec<u16>>,
}

impl Message {
    /// The message `text`.
    pub fn new(text: &str) -> Self {
        let astral = text.chars().any(|c| c.len_utf16() == 2);
        Message {
            text: text.to_owned(),
            lower: text.to_ascii_lowercase(),
            units: astral.then(|| text.encode_utf16().collect()),
        }
    }

    /// The witness of the match at `range` (bytes of the text, or UTF-16
    /// units when the search was on units).
    fn witness(&self, range: std::ops::Range<usize>, on_units: bool) -> String {
        let matched = match (&self.units, on_units) {
            (Some(units), true) => std::borrow::Cow::Owned(String::from_utf16_lossy(
                units.get(range).unwrap_or_default(),
            )),
            _ => std::borrow::Cow::Borrowed(self.text.get(range).unwrap_or_default()),
        };
        let mut collapsed = String::with_capacity(matched.len());
        for word in matched.split(is_js_space).filter(|w| !w.is_empty()) {
            if !collapsed.is_empty() {
                collapsed.push(' ');
            }
            collapsed.push_str(word);
        }
        bounded(&collapsed).into_owned()
    }
}

/// A compiled matcher.
///
/// ```
/// use serde_json::json;
/// use skill_guard::start::{Matcher, Message, Outcome};
///
/// let matcher = Matcher::compile(&json!({ "keywords": ["refund", "money back"] }))?;
/// let outcome = matcher.find(&Message::new("I want my MONEY back"));
/// assert_eq!(outcome, Outcome::Matched("MONEY back".into()));
/// assert_eq!(matcher.find(&Message::new("refunds")), Outcome::Missed);
/// # Ok::<(), skill_guard::start::RuleError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Matcher {
    parts: Vec<Part>,
}

/// The ECMAScript source a keyword stands for (SPEC §13.1): the keyword with
/// every syntax character escaped, `\b` on a side that ends in an ASCII word
/// character.
pub fn keyword_source(keyword: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let mut source = String::with_capacity(keyword.len() + 4);
    if word(keyword.chars().next()) {
        source.push_str("\\b");
    }
    for c in keyword.chars() {
        if "\\^$.*+?()[]{}|/-".contains(c) {
            source.push('\\');
        }
        source.push(c);
    }
    if word(keyword.chars().next_back()) {
        source.push_str("\\b");
    }
    source
}

impl Matcher {
    /// Compile a matcher from its JSON form.
    ///
    /// # Errors
    ///
    /// A [`RuleError`] (`rule-refused`) naming what is wrong.
    pub fn compile(value: &Value) -> Result<Self, RuleError> {
        let mut parts = Vec::new();
        compile_into(value, &mut parts)?;
        Ok(Matcher { parts })
    }

    /// The parts as declared, an `all` flattened.
    pub fn parts(&self) -> impl Iterator<Item = MatcherPart<'_>> {
        self.parts.iter().map(|part| match part {
            Part::Regex { source, pattern } => MatcherPart::Regex {
                source,
                flags: pattern.flags(),
            },
            Part::Keywords { words, .. } => MatcherPart::Keywords(words),
        })
    }

    /// Try the matcher on `message`: every part must match; the witness is
    /// the first part's.
    pub fn find(&self, message: &Message) -> Outcome {
        let mut witness = None;
        // A part that misses decides, even after one that gave up.
        let mut gave_up = false;
        for part in &self.parts {
            let units = message.units.as_deref();
            let find = |pattern: &Pattern| {
                (
                    pattern.find(&message.text, &message.lower, units),
                    pattern.on_units(units),
                )
            };
            let (found, on_units) = match part {
                Part::Regex { pattern, .. } => find(pattern),
                Part::Keywords { patterns, .. } => patterns
                    .iter()
                    .map(find)
                    .find(|(found, _)| *found != Found::Nothing)
                    .unwrap_or((Found::Nothing, false)),
            };
            match found {
                Found::At(range) => {
                    if witness.is_none() {
                        witness = Some(message.witness(range, on_units));
                    }
                }
                Found::Nothing => return Outcome::Missed,
                Found::GaveUp => gave_up = true,
            }
        }
        match witness {
            _ if gave_up => Outcome::GaveUp,
            Some(witness) => Outcome::Matched(witness),
            None => Outcome::Missed,
        }
    }
}

fn compile_into(value: &Value, parts: &mut Vec<Part>) -> Result<(), RuleError> {
    let Value::Object(object) = value else {
        return Err(RuleError::NotAMatcher { found: kind(value) });
    };
    let kind_key = ["regex", "keywords", "all"]
        .into_iter()
        .find(|key| object.contains_key(*key));
    let allowed: &[&str] = match kind_key {
        Some("regex") => &["regex", "flags"],
        Some("keywords") => &["keywords"],
        Some(_) => &["all"],
        None => &[],
    };
    if let Some(key) = object.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err(RuleError::UnknownKey { key: key.clone() });
    }
    match kind_key {
        Some("regex") => {
            let source = match &object["regex"] {
                Value::String(source) => source,
                other => {
                    return Err(RuleError::NotAString {
                        key: "regex",
                        found: kind(other),
                    });
                }
            };
            let flags = match object.get("flags") {
                None => "",
                Some(Value::String(flags)) => flags,
                Some(other) => {
                    return Err(RuleError::NotAString {
                        key: "flags",
                        found: kind(other),
                    });
                }
            };
            let pattern = Pattern::compile(source, flags)?;
            parts.push(Part::Regex {
                source: source.clone(),
                pattern,
            });
        }
        Some("keywords") => {
            let list = non_empty_list(&object["keywords"], "keywords")?;
            let mut words = Vec::with_capacity(list.len());
            let mut patterns = Vec::with_capacity(list.len());
            for (at, keyword) in list.iter().enumerate() {
                let Value::String(word) = keyword else {
                    return Err(RuleError::KeywordNotAString {
                        at,
                        found: kind(keyword),
                    });
                };
                if word.chars().all(is_js_space) {
                    return Err(RuleError::BlankKeyword {
                        at,
                        keyword: word.clone(),
                    });
                }
                patterns.push(Pattern::compile(&keyword_source(word), "i")?);
                words.push(word.clone());
            }
            parts.push(Part::Keywords { words, patterns });
        }
        Some(_) => {
            let list = non_empty_list(&object["all"], "all")?;
            for (at, inner) in list.iter().enumerate() {
                compile_into(inner, parts).map_err(|error| RuleError::InAll {
                    at,
                    error: Box::new(error),
                })?;
            }
        }
        None => {
            return Err(RuleError::NotAMatcher {
                found: "an object with none of regex, keywords, all",
            });
        }
    }
    Ok(())
}

fn non_empty_list<'v>(value: &'v Value, key: &'static str) -> Result<&'v [Value], RuleError> {
    match value {
        Value::Array(list) if list.is_empty() => Err(RuleError::EmptyList { key }),
        Value::Array(list) => Ok(list),
        other => Err(RuleError::NotAList {
            key,
            found: kind(other),
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn outcome(matcher: Value, message: &str) -> Outcome {
        match Matcher::compile(&matcher) {
            Ok(m) => m.find(&Message::new(message)),
            Err(error) => panic!("{matcher}: {error}"),
        }
    }

    #[test]
    fn keywords_are_whole_words_compared_as_ecmascript_i_compares() {
        assert_eq!(
            outcome(json!({"keywords": ["refund"]}), "refunds"),
            Outcome::Missed
        );
        assert_eq!(
            outcome(json!({"keywords": ["C++"]}), "C++ is fine"),
            Outcome::Matched("C++".into())
        );
        assert_eq!(keyword_source("a.b"), "\\ba\\.b\\b");
        assert_eq!(keyword_source("$5"), "\\$5\\b");
    }

    #[test]
    fn the_witness_is_collapsed_trimmed_and_cut() {
        let long = format!("{}😀tail", "x".repeat(78));
        let witness = outcome(json!({"regex": ".+"}), &long);
        assert_eq!(witness, Outcome::Matched(format!("{}…", "x".repeat(78))));
        assert_eq!(
            outcome(json!({"regex": "a\\s+b"}), "a \t\n b"),
            Outcome::Matched("a b".into())
        );
    }

    #[test]
    fn an_all_must_match_every_part_and_witnesses_its_first() {
        let all = json!({"all": [{"keywords": ["invoice"]}, {"all": [{"regex": "\\d{4,}"}]}]});
        assert_eq!(
            outcome(all.clone(), "invoice 12345"),
            Outcome::Matched("invoice".into())
        );
        assert_eq!(outcome(all, "invoice 12"), Outcome::Missed);
    }

    #[test]
    fn a_part_that_misses_decides_an_all_even_after_one_that_gave_up() {
        let message = format!("{}b", "a".repeat(3_000));
        let all = |first: Value, second: Value| outcome(json!({"all": [first, second]}), &message);
        let (slow, absent) = (json!({"regex": "(a+)+$"}), json!({"keywords": ["invoice"]}));
        assert_eq!(all(slow.clone(), absent.clone()), Outcome::Missed);
        assert_eq!(all(absent, slow.clone()), Outcome::Missed);
        assert_eq!(all(slow, json!({"regex": "b"})), Outcome::GaveUp);
    }

    #[test]
    fn each_bad_shape_is_refused_by_name() {
        for (matcher, says) in [
            (json!("refund"), "is a string"),
            (json!({"regexp": "a"}), "\"regexp\""),
            (json!({"regex": "a", "keywords": ["a"]}), "\"keywords\""),
            (json!({"keywords": []}), "empty list"),
            (json!({"keywords": ["ok", " "]}), "keywords[1] is blank"),
            (
                json!({"all": [{"regex": "a"}, "refund"]}),
                "all[1]: the matcher is a string",
            ),
            (json!({"regex": "["}), "does not compile"),
            (json!({"regex": "a", "flags": 1}), "\"flags\" is a number"),
        ] {
            match Matcher::compile(&matcher) {
                Ok(_) => panic!("{matcher} compiled"),
                Err(error) => {
                    assert_eq!(error.code(), "rule-refused");
                    assert!(error.to_string().contains(says), "{matcher}: {error}");
                }
            }
        }
    }
}
