//! What a guard *is*: the serializable, ordered list of conditions that one
//! compilation produces, and the plain-data values a condition compares with.

use std::fmt;

use serde::de::Error as _;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use skill_core::exact_integer;
use smallvec::SmallVec;

use crate::compile::Guard;
use crate::js_number;
use crate::text::Text;

/// The eight guard operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// Strict equality.
    Eq,
    /// Strict inequality.
    Ne,
    /// Greater than, by JavaScript comparison.
    Gt,
    /// Greater than or equal (not less than).
    Gte,
    /// Less than.
    Lt,
    /// Less than or equal.
    Lte,
    /// Member of a list (SameValueZero).
    In,
    /// Not a member of a list; true for a missing value.
    NotIn,
}

impl Operator {
    /// The eight operators in the grammar's order.
    pub const ALL: [Operator; 8] = [
        Operator::Eq,
        Operator::Ne,
        Operator::Gt,
        Operator::Gte,
        Operator::Lt,
        Operator::Lte,
        Operator::In,
        Operator::NotIn,
    ];

    /// The operator as the grammar spells it (`notIn`, not `not_in`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Eq => "eq",
            Operator::Ne => "ne",
            Operator::Gt => "gt",
            Operator::Gte => "gte",
            Operator::Lt => "lt",
            Operator::Lte => "lte",
            Operator::In => "in",
            Operator::NotIn => "notIn",
        }
    }

    /// The operator spelt exactly `name`, if it is one. A match, so the
    /// compiler picks the candidate by length before comparing bytes; inlined,
    /// since the call costs as much as the match.
    #[inline]
    pub fn parse(name: &str) -> Option<Operator> {
        Some(match name {
            "eq" => Operator::Eq,
            "ne" => Operator::Ne,
            "gt" => Operator::Gt,
            "gte" => Operator::Gte,
            "lt" => Operator::Lt,
            "lte" => Operator::Lte,
            "in" => Operator::In,
            "notIn" => Operator::NotIn,
            _ => return None,
        })
    }

    /// The symbol captions use: `= ≠ > ≥ < ≤ in not in`.
    pub fn symbol(self) -> &'static str {
        match self {
            Operator::Eq => "=",
            Operator::Ne => "≠",
            Operator::Gt => ">",
            Operator::Gte => "≥",
            Operator::Lt => "<",
            Operator::Lte => "≤",
            Operator::In => "in",
            Operator::NotIn => "not in",
        }
    }

    /// Whether the operator takes a list (`in`, `notIn`).
    pub fn takes_list(self) -> bool {
        matches!(self, Operator::In | Operator::NotIn)
    }

    /// Whether the operator is an ordered bound (`gt gte lt lte`).
    pub fn is_bound(self) -> bool {
        matches!(
            self,
            Operator::Gt | Operator::Gte | Operator::Lt | Operator::Lte
        )
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Operator {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Read back as the grammar spells it (`notIn`).
impl<'de> Deserialize<'de> for Operator {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Operator::parse(&name).ok_or_else(|| {
            D::Error::custom(format!(
                "\"{name}\" is not a guard operator; it is one of eq, ne, gt, gte, lt, lte, in, notIn"
            ))
        })
    }
}

/// A plain-data value a condition compares with: what JSON calls a scalar.
/// Numbers are JavaScript numbers (IEEE doubles).
#[derive(Debug, Clone, PartialEq)]
pub enum GuardValue {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(f64),
    /// A string.
    String(Text),
}

impl GuardValue {
    /// JavaScript strict equality (`===`): same type and value; `0 === -0`.
    pub fn strict_equals(&self, other: &GuardValue) -> bool {
        match (self, other) {
            (GuardValue::Null, GuardValue::Null) => true,
            (GuardValue::Bool(a), GuardValue::Bool(b)) => a == b,
            (GuardValue::Number(a), GuardValue::Number(b)) => a == b,
            (GuardValue::String(a), GuardValue::String(b)) => a == b,
            _ => false,
        }
    }

    /// The string, when the value is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            GuardValue::String(text) => Some(text),
            _ => None,
        }
    }

    /// The type name JavaScript's `typeof` would give (`object` for null).
    pub fn type_name(&self) -> &'static str {
        match self {
            GuardValue::Null => "null",
            GuardValue::Bool(_) => "boolean",
            GuardValue::Number(_) => "number",
            GuardValue::String(_) => "string",
        }
    }

    /// The value as JavaScript's `String(v)` prints it: strings unquoted,
    /// numbers as JavaScript prints them.
    pub fn to_js_string(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for GuardValue {
    /// JavaScript's `String(v)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GuardValue::Null => f.write_str("null"),
            GuardValue::Bool(b) => write!(f, "{b}"),
            GuardValue::Number(n) => f.write_str(&js_number::to_js_string(*n)),
            GuardValue::String(text) => f.write_str(text),
        }
    }
}

impl From<&str> for GuardValue {
    fn from(text: &str) -> Self {
        GuardValue::String(Text::from(text))
    }
}

impl From<String> for GuardValue {
    fn from(text: String) -> Self {
        GuardValue::String(Text::from(text))
    }
}

impl From<f64> for GuardValue {
    fn from(n: f64) -> Self {
        GuardValue::Number(n)
    }
}

impl From<i32> for GuardValue {
    fn from(n: i32) -> Self {
        GuardValue::Number(f64::from(n))
    }
}

impl From<u32> for GuardValue {
    fn from(n: u32) -> Self {
        GuardValue::Number(f64::from(n))
    }
}

impl From<bool> for GuardValue {
    fn from(b: bool) -> Self {
        GuardValue::Bool(b)
    }
}

impl From<GuardValue> for serde_json::Value {
    fn from(value: GuardValue) -> Self {
        match value {
            GuardValue::Null => serde_json::Value::Null,
            GuardValue::Bool(b) => serde_json::Value::Bool(b),
            GuardValue::Number(n) => json_number(n),
            GuardValue::String(text) => serde_json::Value::String(text.into()),
        }
    }
}

/// A number as JSON: an integer where it is one (so `5` prints as `5`, as
/// JavaScript prints it), `null` where JSON has no spelling (as
/// `JSON.stringify` does).
fn json_number(n: f64) -> serde_json::Value {
    if let Some(int) = exact_integer(n) {
        serde_json::Value::from(int)
    } else {
        serde_json::Number::from_f64(n).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}

impl Serialize for GuardValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            GuardValue::Null => serializer.serialize_unit(),
            GuardValue::Bool(b) => serializer.serialize_bool(*b),
            GuardValue::Number(n) => match exact_integer(*n) {
                Some(int) => serializer.serialize_i64(int),
                None if n.is_finite() => serializer.serialize_f64(*n),
                None => serializer.serialize_unit(),
            },
            GuardValue::String(text) => serializer.serialize_str(text),
        }
    }
}

/// The value a condition holds: a scalar, or a list for `in`/`notIn`.
#[derive(Debug, Clone, PartialEq)]
pub enum ConditionValue {
    /// The value of `eq ne gt gte lt lte`.
    Scalar(GuardValue),
    /// The list of `in`/`notIn`.
    List(ValueList),
}

/// The values of an `in`/`notIn` list, in order. Guards list one or two
/// values mostly (`["high", "critical"]`), so up to two are kept in place,
/// without an allocation of their own; a longer list is a `Vec`. It reads
/// as a slice of [`GuardValue`]s (it dereferences to one), and two lists are
/// equal when their values are.
///
/// ```
/// use skill_guard::{GuardValue, ValueList};
///
/// let list = ValueList::from(vec![GuardValue::from("high"), GuardValue::from("critical")]);
/// assert_eq!(list.len(), 2);
/// assert_eq!(list[1], GuardValue::from("critical"));
/// assert_eq!(list, ValueList::from_iter([GuardValue::from("high"), "critical".into()]));
/// ```
#[derive(Clone)]
pub struct ValueList(Kept);

/// Where a [`ValueList`] keeps its values.
#[derive(Clone)]
enum Kept {
    One([GuardValue; 1]),
    Two([GuardValue; 2]),
    Many(Vec<GuardValue>),
}

impl ValueList {
    /// A list of one value.
    #[inline]
    pub(crate) fn one(value: GuardValue) -> ValueList {
        ValueList(Kept::One([value]))
    }

    /// A list of two values.
    #[inline]
    pub(crate) fn two(first: GuardValue, second: GuardValue) -> ValueList {
        ValueList(Kept::Two([first, second]))
    }

    /// The values as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[GuardValue] {
        match &self.0 {
            Kept::One(values) => values,
            Kept::Two(values) => values,
            Kept::Many(values) => values,
        }
    }
}

impl std::ops::Deref for ValueList {
    type Target = [GuardValue];

    #[inline]
    fn deref(&self) -> &[GuardValue] {
        self.as_slice()
    }
}

impl From<Vec<GuardValue>> for ValueList {
    fn from(values: Vec<GuardValue>) -> Self {
        ValueList(Kept::Many(values))
    }
}

impl FromIterator<GuardValue> for ValueList {
    fn from_iter<I: IntoIterator<Item = GuardValue>>(values: I) -> Self {
        ValueList::from(values.into_iter().collect::<Vec<_>>())
    }
}

impl<'a> IntoIterator for &'a ValueList {
    type Item = &'a GuardValue;
    type IntoIter = std::slice::Iter<'a, GuardValue>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl From<ValueList> for Vec<GuardValue> {
    fn from(list: ValueList) -> Self {
        match list.0 {
            Kept::One(values) => values.into(),
            Kept::Two(values) => values.into(),
            Kept::Many(values) => values,
        }
    }
}

impl PartialEq for ValueList {
    fn eq(&self, other: &ValueList) -> bool {
        self.as_slice() == other.as_slice()
    }
}

/// Printed as the slice of its values, as a `Vec` prints.
impl fmt::Debug for ValueList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl ConditionValue {
    /// The scalar, when the value is not a list.
    pub fn as_scalar(&self) -> Option<&GuardValue> {
        match self {
            ConditionValue::Scalar(value) => Some(value),
            ConditionValue::List(_) => None,
        }
    }

    /// The list, when the value is one.
    pub fn as_list(&self) -> Option<&[GuardValue]> {
        match self {
            ConditionValue::List(list) => Some(list),
            ConditionValue::Scalar(_) => None,
        }
    }

    /// Whether a list value holds `value` (SameValueZero, which for JSON data
    /// is strict equality). A scalar holds nothing.
    pub fn list_holds(&self, value: &GuardValue) -> bool {
        self.as_list()
            .is_some_and(|list| list.iter().any(|member| member.strict_equals(value)))
    }
}

impl fmt::Display for ConditionValue {
    /// The caption form: a scalar as `String(v)`, a list as `[a, b]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConditionValue::Scalar(value) => value.fmt(f),
            ConditionValue::List(list) => Listed(list).fmt(f),
        }
    }
}

/// A list of values in the caption form, `[a, b]`.
pub(crate) struct Listed<'a>(pub(crate) &'a [GuardValue]);

impl fmt::Display for Listed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (index, member) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            member.fmt(f)?;
        }
        f.write_str("]")
    }
}

impl Serialize for ConditionValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ConditionValue::Scalar(value) => value.serialize(serializer),
            ConditionValue::List(list) => {
                let mut seq = serializer.serialize_seq(Some(list.len()))?;
                for member in list {
                    seq.serialize_element(member)?;
                }
                seq.end()
            }
        }
    }
}

/// Read back from the JSON it serializes to (a record's evidence): a
/// scalar, or a list of scalars.
impl<'de> Deserialize<'de> for ConditionValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let scalar = |value: serde_json::Value| match value {
            serde_json::Value::Null => Ok(GuardValue::Null),
            serde_json::Value::Bool(b) => Ok(GuardValue::Bool(b)),
            serde_json::Value::Number(n) => Ok(GuardValue::Number(n.as_f64().unwrap_or(f64::NAN))),
            serde_json::Value::String(text) => Ok(GuardValue::from(text)),
            other => Err(D::Error::custom(format!(
                "a condition's value is a JSON scalar or a list of scalars, not {other}"
            ))),
        };
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::Array(items) => Ok(ConditionValue::List(ValueList::from(
                items
                    .into_iter()
                    .map(scalar)
                    .collect::<Result<Vec<_>, _>>()?,
            ))),
            other => scalar(other).map(ConditionValue::Scalar),
        }
    }
}

impl From<ConditionValue> for serde_json::Value {
    fn from(value: ConditionValue) -> Self {
        match value {
            ConditionValue::Scalar(scalar) => scalar.into(),
            ConditionValue::List(list) => {
                serde_json::Value::Array(Vec::from(list).into_iter().map(Into::into).collect())
            }
        }
    }
}

/// One condition: `key op value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// The key read: a hop key, or a top-level field of the result.
    pub key: Text,
    /// The operator.
    pub op: Operator,
    /// What the operator compares with.
    pub value: ConditionValue,
}

impl Serialize for Condition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("key", &self.key)?;
        map.serialize_entry("op", &self.op)?;
        map.serialize_entry("value", &self.value)?;
        map.end()
    }
}

/// The serializable description of a compiled guard: its conditions in
/// enumeration order (index-like keys first, then keys as written; operators
/// likewise within a key). Every condition is ANDed.
///
/// Only a compilation makes one, so every `GuardData` is a guard compile
/// accepted. It serializes as `{ "conditions": [{ "key", "op", "value" }] }`
/// and reads back from that form through the same compilation: a recorded
/// guard that compile would refuse, or whose conditions are not in the order
/// compile gives them, does not deserialize.
///
/// ```
/// use serde_json::json;
/// use skill_guard::{Guard, GuardData};
///
/// let guard = Guard::compile(&json!({ "score": { "gte": 0.8 } }))?;
/// let recorded = serde_json::to_string(guard.data()).expect("data serializes");
/// let read: GuardData = serde_json::from_str(&recorded).expect("a compiled guard reads back");
/// assert_eq!(&read, guard.data());
/// let refused = r#"{"conditions": [{"key": "score", "op": "gte", "value": [1]}]}"#;
/// assert!(serde_json::from_str::<GuardData>(refused).is_err());
/// # Ok::<(), skill_guard::CompileError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuardData {
    /// The conditions, in the order they are judged and reported.
    #[serde(serialize_with = "serialize_conditions")]
    pub(crate) conditions: Conditions,
}

/// How many conditions a guard keeps in place: most guards name fewer.
pub(crate) const INLINE_CONDITIONS: usize = 3;

/// A guard's conditions: up to [`INLINE_CONDITIONS`] kept inline, so
/// compiling such a guard does not allocate for its list.
pub(crate) type Conditions = SmallVec<[Condition; INLINE_CONDITIONS]>;

/// The conditions as a JSON array.
fn serialize_conditions<S: Serializer>(
    conditions: &Conditions,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(conditions)
}

impl GuardData {
    /// The conditions, in the order they are judged and reported.
    pub fn conditions(&self) -> &[Condition] {
        &self.conditions
    }

    /// The conditions on one key, in order.
    pub fn conditions_on<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Condition> + 'a {
        self.conditions.iter().filter(move |c| c.key == key)
    }

    /// The guard's JSON form (`{ key: { op: value } }`), which compiles back to
    /// this same data.
    pub fn to_json(&self) -> serde_json::Value {
        let mut guard = serde_json::Map::new();
        for condition in &self.conditions {
            let ops = guard
                .entry(condition.key.clone())
                .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
            if let serde_json::Value::Object(ops) = ops {
                ops.insert(
                    condition.op.as_str().to_owned(),
                    condition.value.clone().into(),
                );
            }
        }
        serde_json::Value::Object(guard)
    }
}

/// A guard as a record holds it, before compile has accepted it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Recorded {
    conditions: Vec<RecordedCondition>,
}

/// One recorded condition, unchecked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordedCondition {
    key: String,
    op: String,
    value: serde_json::Value,
}

impl<'de> Deserialize<'de> for GuardData {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let recorded = Recorded::deserialize(deserializer)?;
        let mut guard = serde_json::Map::new();
        for condition in &recorded.conditions {
            let ops = guard
                .entry(condition.key.clone())
                .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
            if let serde_json::Value::Object(ops) = ops {
                ops.insert(condition.op.clone(), condition.value.clone());
            }
        }
        let compiled = Guard::compile(&serde_json::Value::Object(guard))
            .map_err(|err| D::Error::custom(format!("the recorded guard is refused: {err}")))?;
        let written = recorded
            .conditions
            .iter()
            .map(|c| (c.key.as_str(), c.op.as_str()));
        let compiled_order = compiled
            .data
            .conditions
            .iter()
            .map(|c| (c.key.as_str(), c.op.as_str()));
        if !written.eq(compiled_order) {
            return Err(D::Error::custom(format!(
                "the recorded conditions are not the order compile gives them ({}): keys in JavaScript's order \
                 (index-like keys first), each key's operators together, no operator twice on a key; \
                 record the data of a compiled guard",
                compiled.data.to_json()
            )));
        }
        Ok(compiled.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_parse_exactly_their_own_spelling() {
        for op in Operator::ALL {
            assert_eq!(Operator::parse(op.as_str()), Some(op));
            assert_eq!(Operator::parse(&op.as_str().to_uppercase()), None);
        }
        assert_eq!(Operator::parse("notin"), None);
        assert_eq!(Operator::parse(""), None);
    }

    #[test]
    fn numbers_serialize_as_javascript_prints_them() {
        let values = ConditionValue::List(ValueList::from(vec![
            GuardValue::Number(5.0),
            GuardValue::Number(0.5),
            GuardValue::Number(-0.0),
            GuardValue::Number(1e21),
            GuardValue::Number(f64::INFINITY),
        ]));
        assert_eq!(
            serde_json::to_string(&values).unwrap(),
            "[5,0.5,0,1e+21,null]"
        );
    }

    #[test]
    fn strict_equality_is_typed() {
        assert!(GuardValue::Number(0.0).strict_equals(&GuardValue::Number(-0.0)));
        assert!(!GuardValue::Number(1.0).strict_equals(&GuardValue::from("1")));
        assert!(!GuardValue::Null.strict_equals(&GuardValue::Bool(false)));
    }

    #[test]
    fn a_record_reads_back_only_as_compile_would_give_it() {
        let read = |text: &str| serde_json::from_str::<GuardData>(text).map_err(|e| e.to_string());
        let data = read(
            r#"{"conditions":[{"key":"2","op":"eq","value":1},{"key":"a","op":"in","value":["x"]},{"key":"a","op":"ne","value":null}]}"#,
        )
        .expect("a compiled order");
        assert_eq!(data.conditions().len(), 3);
        let refused = [
            (r#"{"conditions":[]}"#, "the guard is empty"),
            (
                r#"{"conditions":[{"key":"a","op":"gle","value":1}]}"#,
                "unknown operator \"gle\"",
            ),
            (
                r#"{"conditions":[{"key":"a","op":"eq","value":1},{"key":"2","op":"eq","value":1}]}"#,
                "not the order compile gives them",
            ),
            (
                r#"{"conditions":[{"key":"a","op":"eq","value":1},{"key":"b","op":"eq","value":1},{"key":"a","op":"ne","value":1}]}"#,
                "not the order compile gives them",
            ),
            (
                r#"{"conditions":[{"key":"a","op":"eq","value":1},{"key":"a","op":"eq","value":2}]}"#,
                "not the order compile gives them",
            ),
            (r#"{"conditions":[],"extra":1}"#, "unknown field"),
        ];
        for (text, why) in refused {
            let err = read(text).expect_err(text);
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn captions_print_lists_with_spaces() {
        let list = ConditionValue::List(ValueList::from(vec![
            "a".into(),
            GuardValue::Number(1.5),
            GuardValue::Null,
        ]));
        assert_eq!(list.to_string(), "[a, 1.5, null]");
    }
}
