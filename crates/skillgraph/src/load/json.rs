//! JSON input files (`skillmap.json`, an offer): read by serde_json, and, when
//! serde_json refuses one for its shape, read a second time to learn from
//! serde itself which key or value is unknown and which ones are allowed.
//!
//! serde reports an unknown key by calling `de::Error::unknown_field(key,
//! allowed)` (`unknown_variant` for a value) on the deserializer's error type.
//! serde_json's error keeps only a sentence built from those arguments, so
//! the second reading goes through a deserializer of ours whose error keeps
//! the arguments themselves. The first reading still gives the line and
//! column. The second reading runs only for a file already refused.

use std::fmt;
use std::path::Path;

use serde::de::value::{MapAccessDeserializer, MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, Deserializer, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::error::Category;

use super::LoadError;

/// Parse JSON text as a `T`; a refusal names the place, and an unknown key
/// or value the nearest allowed spelling.
pub(super) fn parse_json<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, LoadError> {
    serde_json::from_str(text).map_err(|err| json_error::<T>(path, text, &err))
}

/// The error for `text`, read from `path`, that serde_json refused as a `T`.
pub(super) fn json_error<T: DeserializeOwned>(
    path: &Path,
    text: &str,
    err: &serde_json::Error,
) -> LoadError {
    let (line, column) = (err.line(), err.column());
    let json = |message: String, hint: &str| LoadError::Json {
        path: path.to_path_buf(),
        line,
        column,
        message: format!("{message}{hint}"),
    };
    if err.classify() != Category::Data {
        return json(
            syntax_sentence(err),
            "; the file must be one JSON document (check for a missing comma, quote or bracket)",
        );
    }
    match shape_refusal::<T>(text) {
        Some(Refusal::Unknown { name, allowed }) => LoadError::UnknownKey {
            path: path.to_path_buf(),
            line,
            column,
            nearest: skill_core::nearest(&name, allowed.iter().copied()).map(str::to_owned),
            key: name,
            known: allowed.iter().map(|k| (*k).to_owned()).collect(),
        },
        Some(Refusal::Other(message)) => json(
            message,
            "; see the data model in the README for each field's type",
        ),
        // The second reading accepts what the first refused only if the two
        // readers disagree; serde_json's own sentence is then the best we have.
        None => json(err.to_string(), ""),
    }
}

/// serde_json's sentence for a syntax error, without the place it appends
/// (the error names the place first, as `file:line:column`).
fn syntax_sentence(err: &serde_json::Error) -> String {
    let full = err.to_string();
    let place = format!(" at line {} column {}", err.line(), err.column());
    full.strip_suffix(&place).unwrap_or(&full).to_owned()
}

/// Why `T` refuses `text`, read through [`Tree`]; `None` when it does not.
fn shape_refusal<T: DeserializeOwned>(text: &str) -> Option<Refusal> {
    let tree: Tree = serde_json::from_str(text).ok()?;
    T::deserialize(tree).err()
}

/// What serde said when a value did not fit its type.
#[derive(Debug)]
enum Refusal {
    /// `unknown_field` or `unknown_variant`: the name as written and every
    /// name allowed at that place.
    Unknown {
        name: String,
        allowed: &'static [&'static str],
    },
    /// Any other mismatch, in serde's words.
    Other(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Unknown { name, .. } => write!(f, "unknown name `{name}`"),
            Refusal::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Refusal {}

impl de::Error for Refusal {
    fn custom<M: fmt::Display>(message: M) -> Self {
        Refusal::Other(message.to_string())
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        Refusal::Unknown {
            name: field.to_owned(),
            allowed: expected,
        }
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        Refusal::Unknown {
            name: variant.to_owned(),
            allowed: expected,
        }
    }
}

/// A JSON document as read, keys in their order and repeated keys kept (so
/// a duplicate is refused by the second reading as by the first).
#[derive(Debug)]
enum Tree {
    Null,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Text(String),
    List(Vec<Tree>),
    Object(Vec<(String, Tree)>),
}

impl<'de> de::Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }

    fn visit_bool<E>(self, value: bool) -> Result<Tree, E> {
        Ok(Tree::Bool(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Tree, E> {
        Ok(Tree::Unsigned(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Tree, E> {
        Ok(Tree::Signed(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Tree, E> {
        Ok(Tree::Float(value))
    }

    fn visit_str<E>(self, value: &str) -> Result<Tree, E> {
        Ok(Tree::Text(value.to_owned()))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::List(items))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Tree::Object(entries))
    }
}

impl<'de> IntoDeserializer<'de, Refusal> for Tree {
    type Deserializer = Tree;

    fn into_deserializer(self) -> Tree {
        self
    }
}

/// Hands a [`Tree`] to a type's `Deserialize` as serde_json hands it text.
impl<'de> Deserializer<'de> for Tree {
    type Error = Refusal;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refusal> {
        match self {
            Tree::Null => visitor.visit_unit(),
            Tree::Bool(value) => visitor.visit_bool(value),
            Tree::Unsigned(value) => visitor.visit_u64(value),
            Tree::Signed(value) => visitor.visit_i64(value),
            Tree::Float(value) => visitor.visit_f64(value),
            Tree::Text(value) => visitor.visit_string(value),
            Tree::List(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter());
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Tree::Object(entries) => {
                let mut map = MapDeserializer::new(entries.into_iter());
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refusal> {
        match self {
            Tree::Null => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Refusal> {
        match self {
            Tree::Text(variant) => visitor.visit_enum(variant.into_deserializer()),
            Tree::Object(entries) => visitor.visit_enum(MapAccessDeserializer::new(
                MapDeserializer::new(entries.into_iter()),
            )),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Refusal> {
        visitor.visit_newtype_struct(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skill_core::SkillMap;

    fn refusal(text: &str) -> LoadError {
        match parse_json::<SkillMap>(Path::new("m.json"), text) {
            Ok(_) => panic!("{text} was accepted"),
            Err(err) => err,
        }
    }

    #[test]
    fn unknown_keys_and_values_come_from_serde_not_from_its_sentence() {
        let LoadError::UnknownKey {
            key,
            nearest,
            known,
            line,
            column,
            ..
        } = refusal("{\n  \"skills\": [{\"id\": \"a\", \"surfaceMode\": \"both\"}]\n}")
        else {
            panic!("not an unknown key")
        };
        assert_eq!(
            (key.as_str(), nearest.as_deref(), line, column),
            ("surfaceMode", Some("surface_mode"), 2, 38)
        );
        assert!(known.iter().any(|k| k == "steps"), "{known:?}");
        let LoadError::UnknownKey { key, nearest, .. } =
            refusal(r#"{"skills": [{"id": "a", "trigger": "llm_activated"}]}"#)
        else {
            panic!("not an unknown value")
        };
        assert_eq!(
            (key.as_str(), nearest.as_deref()),
            ("llm_activated", Some("llm-activated"))
        );
    }

    #[test]
    fn other_shape_errors_keep_serdes_sentence_without_the_place() {
        for (text, sentence) in [
            (
                r#"{"skills": [{"id": 1}]}"#,
                "invalid type: integer `1`, expected a string",
            ),
            (
                r#"{"skills": [{"id": "a", "id": "b"}]}"#,
                "duplicate field `id`",
            ),
            (
                r#"{"entries": "a"}"#,
                "invalid type: string \"a\", expected a sequence",
            ),
        ] {
            let err = refusal(text);
            assert_eq!(err.code(), "bad-json", "{text}: {err}");
            let LoadError::Json { message, .. } = &err else {
                unreachable!()
            };
            assert!(
                message.starts_with(&format!("{sentence}; see")),
                "{text}: {message}"
            );
        }
    }
}
