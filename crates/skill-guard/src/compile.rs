//! Compiling a guard: from its JSON form to one [`Guard`] that holds the
//! serializable data, the predicate and the evidence evaluator, so that the
//! three can never describe different guards. Every shape the grammar cannot
//! honour is refused by name, with the key and operator where it happened.

use serde_json::{Map, Value};
use smallvec::SmallVec;

use crate::data::{
    Condition, ConditionValue, GuardData, GuardValue, INLINE_CONDITIONS, Operator, ValueList,
};
use crate::hop::{NumberKey, Read, ShortText, TextKey, hop_key};
use crate::js_number;
use crate::js_value::{Relation, array_index, js_key_order};
use crate::text::Text;

/// Keys refused so that a guard is valid in every implementation or in none
/// (they name JavaScript's object machinery).
pub const RESERVED_KEYS: [&str; 12] = [
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "valueOf",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
];

/// Whether `key` is one of [`RESERVED_KEYS`]: a match, so the compiler picks
/// the candidates by length before comparing bytes (most keys have none).
fn is_reserved(key: &str) -> bool {
    matches!(
        key,
        "__proto__"
            | "constructor"
            | "prototype"
            | "toString"
            | "valueOf"
            | "hasOwnProperty"
            | "isPrototypeOf"
            | "propertyIsEnumerable"
            | "__defineGetter__"
            | "__defineSetter__"
            | "__lookupGetter__"
            | "__lookupSetter__"
    )
}

/// The longest `in`/`notIn` list a guard may declare.
pub const MAX_LIST_LEN: usize = 1000;

const GRAMMAR_HINT: &str =
    "a guard is { key: { op: value } } with operators eq, ne, gt, gte, lt, lte, in, notIn";

/// Why a guard was refused. Each variant has a stable [`code`](Self::code);
/// the message names the key and operator and says how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// The guard is not a JSON object.
    #[error(
        "the guard is {found}, not an object; {GRAMMAR_HINT}, e.g. {{\"riskLevel\": {{\"in\": [\"high\"]}}}}"
    )]
    NotAnObject {
        /// What the guard was instead (`an array`, `a string`, …).
        found: &'static str,
    },
    /// The guard has no keys.
    #[error(
        "the guard is empty, so it asserts nothing; name at least one condition, e.g. {{\"status\": {{\"eq\": \"success\"}}}}, or drop the guard"
    )]
    Empty,
    /// A key names JavaScript's object machinery.
    #[error(
        "key \"{key}\" is reserved (it names JavaScript object machinery, so no implementation may read it); rename the field the guard reads"
    )]
    ReservedKey {
        /// The reserved key.
        key: String,
    },
    /// A key maps to something other than an object of operators.
    #[error(
        "key \"{key}\" maps to {found} instead of an object of operators; write {{\"{key}\": {{\"eq\": {found}}}}} or another operator"
    )]
    OpsNotObject {
        /// The key.
        key: String,
        /// The JSON it mapped to, shortened.
        found: String,
    },
    /// A key maps to `{}`.
    #[error(
        "key \"{key}\" declares no operator ({{}}); give it one, e.g. {{\"{key}\": {{\"eq\": …}}}}, or drop the key"
    )]
    NoOperator {
        /// The key.
        key: String,
    },
    /// An operator outside the eight.
    #[error("key \"{key}\" uses unknown operator \"{op}\"{}; the operators are eq, ne, gt, gte, lt, lte, in, notIn", skill_core::suggestion(*suggestion))]
    UnknownOperator {
        /// The key.
        key: String,
        /// The operator as written.
        op: String,
        /// The nearest operator, when one is close.
        suggestion: Option<&'static str>,
    },
    /// An `in`/`notIn` value that is not an array, or is empty.
    #[error(
        "key \"{key}\" `{op}` needs a non-empty array of values (an empty `in` never matches and an empty `notIn` always does); write e.g. {{\"{op}\": [\"high\", \"critical\"]}}"
    )]
    NeedsNonEmptyList {
        /// The key.
        key: String,
        /// `in` or `notIn`.
        op: Operator,
    },
    /// An `in`/`notIn` list longer than [`MAX_LIST_LEN`].
    #[error(
        "key \"{key}\" `{op}` lists {len} values, more than the {MAX_LIST_LEN} a guard may hold; split the condition or guard on a coarser field"
    )]
    ListTooLong {
        /// The key.
        key: String,
        /// `in` or `notIn`.
        op: Operator,
        /// The list's length.
        len: usize,
    },
    /// A list entry that is not a string, number, boolean or null.
    #[error(
        "key \"{key}\" `{op}` holds {found} at position {index}; every entry must be a string, number, boolean or null"
    )]
    NonDataEntry {
        /// The key.
        key: String,
        /// `in` or `notIn`.
        op: Operator,
        /// The zero-based position of the entry.
        index: usize,
        /// The entry, shortened.
        found: String,
    },
    /// An ordered bound that is not a number or a string.
    #[error(
        "key \"{key}\" `{op}` compares with {found}; an ordered bound must be a number or a string, e.g. {{\"{op}\": 0.8}}"
    )]
    BoundNotComparable {
        /// The key.
        key: String,
        /// `gt`, `gte`, `lt` or `lte`.
        op: Operator,
        /// The value, shortened.
        found: String,
    },
    /// An `eq`/`ne` value that is not a string, number, boolean or null.
    #[error(
        "key \"{key}\" `{op}` holds {found}; a guard is data, so `{op}` takes a string, number, boolean or null"
    )]
    NonDataValue {
        /// The key.
        key: String,
        /// `eq` or `ne`.
        op: Operator,
        /// The value, shortened.
        found: String,
    },
}

impl CompileError {
    /// The stable refusal code (`not-an-object`, `reserved-key`, …).
    pub fn code(&self) -> &'static str {
        match self {
            CompileError::NotAnObject { .. } => "not-an-object",
            CompileError::Empty => "empty",
            CompileError::ReservedKey { .. } => "reserved-key",
            CompileError::OpsNotObject { .. } => "ops-not-object",
            CompileError::NoOperator { .. } => "no-operator",
            CompileError::UnknownOperator { .. } => "unknown-operator",
            CompileError::NeedsNonEmptyList { .. } => "needs-non-empty-list",
            CompileError::ListTooLong { .. } => "list-too-long",
            CompileError::NonDataEntry { .. } => "non-data-entry",
            CompileError::BoundNotComparable { .. } => "bound-not-comparable",
            CompileError::NonDataValue { .. } => "non-data-value",
        }
    }

    /// The key the refusal happened at, when it happened at one.
    pub fn key(&self) -> Option<&str> {
        match self {
            CompileError::NotAnObject { .. } | CompileError::Empty => None,
            CompileError::ReservedKey { key }
            | CompileError::OpsNotObject { key, .. }
            | CompileError::NoOperator { key }
            | CompileError::UnknownOperator { key, .. }
            | CompileError::NeedsNonEmptyList { key, .. }
            | CompileError::ListTooLong { key, .. }
            | CompileError::NonDataEntry { key, .. }
            | CompileError::BoundNotComparable { key, .. }
            | CompileError::NonDataValue { key, .. } => Some(key),
        }
    }

    /// The operator the refusal happened at, as written, when it happened at one.
    pub fn op(&self) -> Option<&str> {
        match self {
            CompileError::UnknownOperator { op, .. } => Some(op),
            CompileError::NeedsNonEmptyList { op, .. }
            | CompileError::ListTooLong { op, .. }
            | CompileError::NonDataEntry { op, .. }
            | CompileError::BoundNotComparable { op, .. }
            | CompileError::NonDataValue { op, .. } => Some(op.as_str()),
            _ => None,
        }
    }
}

/// Where a condition reads its actual value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source {
    /// A hop key, read as the hop-key table says.
    Hop(Read),
    /// A top-level result field, by its slot in [`Guard::fields`].
    Field(usize),
}

/// A condition's test. Operands are read from the condition's data when the
/// test runs, so compiling copies nothing; an ordered bound carries its
/// number (`Number(s)` of a string bound) ready.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Test {
    Eq,
    Ne,
    Compare(Relation, f64),
    In,
    NotIn,
}

impl Test {
    /// The test of `op` with `value`.
    fn of(op: Operator, value: &ConditionValue) -> Test {
        match (op, Relation::of(op)) {
            (_, Some(relation)) => Test::Compare(relation, bound_number(value)),
            (Operator::Eq, None) => Test::Eq,
            (Operator::Ne, None) => Test::Ne,
            (Operator::In, None) => Test::In,
            (_, None) => Test::NotIn,
        }
    }
}

/// An ordered bound as a number: itself, or `Number(s)` of a string bound
/// (`condition_value` admits only numbers and strings as bounds).
fn bound_number(value: &ConditionValue) -> f64 {
    match value {
        ConditionValue::Scalar(GuardValue::Number(n)) => *n,
        ConditionValue::Scalar(GuardValue::String(text)) => js_number::from_js_string(text),
        _ => f64::NAN,
    }
}

/// A compiled condition: where it reads and what it tests.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    pub(crate) source: Source,
    pub(crate) test: Test,
}

/// How the predicate judges a condition on a hop key, decided once here:
/// the common shapes directly, reading the view by the key the hop-key table
/// gave, without building the value the key reads; the rest by JavaScript's
/// general rules. Both give the same answer (the evaluator always takes the
/// general rules, since it summarises the value anyway).
#[derive(Debug, Clone, Copy)]
pub(crate) enum HopCheck {
    /// A text hop key (absent or present) against a string of at most 16
    /// bytes: `eq` when `equal`, `ne` when not.
    Text {
        /// The key.
        key: TextKey,
        /// `eq` rather than `ne`.
        equal: bool,
        /// The string compared with.
        expected: ShortText,
    },
    /// A number hop key against a number.
    Number {
        /// The key.
        key: NumberKey,
        /// The comparison.
        relation: Relation,
        /// The bound.
        bound: f64,
    },
    /// Any other hop condition: the condition at this index, judged by the
    /// general rules.
    General(usize),
}

impl HopCheck {
    /// How the predicate judges condition `at`, `test` of `value` on the hop
    /// key `read`: what the key holds (text or a number) and what the
    /// condition compares with decide.
    fn of(read: Read, test: Test, value: &ConditionValue, at: usize) -> HopCheck {
        match (read, test, value.as_scalar()) {
            (Read::Text(key), Test::Eq | Test::Ne, Some(GuardValue::String(text))) => {
                ShortText::of(text).map_or(HopCheck::General(at), |expected| HopCheck::Text {
                    key,
                    equal: test == Test::Eq,
                    expected,
                })
            }
            (Read::Number(key), Test::Compare(relation, bound), Some(GuardValue::Number(_))) => {
                HopCheck::Number {
                    key,
                    relation,
                    bound,
                }
            }
            _ => HopCheck::General(at),
        }
    }
}

/// A compiled guard: its [`GuardData`], its predicate ([`Guard::test`]) and
/// its evidence evaluator ([`Guard::evaluate`]), from one compilation.
///
/// ```
/// use serde_json::json;
/// use skill_core::GuardView;
/// use skill_guard::Guard;
///
/// let guard = Guard::compile(&json!({
///     "riskLevel": { "in": ["high", "critical"] },
///     "status": { "eq": "success" }
/// }))?;
/// let view = GuardView::new("lookup_order", r#"{"riskLevel":"high"}"#).with_status("success");
/// assert!(guard.test(&view));
/// # Ok::<(), skill_guard::CompileError>(())
/// ```
///
/// Each list below keeps as many entries in place as the condition list
/// does ([`INLINE_CONDITIONS`]): a guard of up to that many conditions
/// allocates nothing, and `compile` moves no unused slots out.
#[derive(Debug, Clone)]
pub struct Guard {
    pub(crate) data: GuardData,
    /// One per data condition, in the same order.
    pub(crate) compiled: SmallVec<[Compiled; INLINE_CONDITIONS]>,
    /// One per condition on a hop key, in order: how the predicate judges it.
    pub(crate) hops: SmallVec<[HopCheck; INLINE_CONDITIONS]>,
    /// The distinct result fields the guard reads, in first-use order, each
    /// as the index of the first condition naming it.
    pub(crate) fields: SmallVec<[usize; INLINE_CONDITIONS]>,
}

impl Guard {
    /// Compile a guard from its JSON form.
    ///
    /// Keys are taken in JavaScript's enumeration order: canonical array
    /// indices (`"0"`, `"7"`) first in ascending order, then the rest as
    /// written; operators within a key likewise. Checks run in the order the
    /// SPEC lists them and the first failure is reported.
    ///
    /// # Errors
    ///
    /// A [`CompileError`] naming the refusal, its key and operator.
    pub fn compile(guard: &Value) -> Result<Guard, CompileError> {
        let Value::Object(keys) = guard else {
            return Err(CompileError::NotAnObject {
                found: a_json_type(guard),
            });
        };
        if keys.is_empty() {
            return Err(CompileError::Empty);
        }
        // One condition per operator: sized once, not grown.
        let operators = keys
            .values()
            .map(|ops| ops.as_object().map_or(0, Map::len))
            .sum();
        let mut guard = Guard::empty();
        guard.reserve(operators);
        for (key, ops) in enumerate(keys) {
            if is_reserved(key) {
                return Err(CompileError::ReservedKey { key: key.clone() });
            }
            let Value::Object(ops) = ops else {
                return Err(CompileError::OpsNotObject {
                    key: key.clone(),
                    found: shortened(ops),
                });
            };
            if ops.is_empty() {
                return Err(CompileError::NoOperator { key: key.clone() });
            }
            guard.push_key(key, ops)?;
        }
        Ok(guard)
    }

    /// Compile the conditions of one key, `ops` its non-empty operators.
    ///
    /// The keys of an object are distinct and a key's conditions are pushed
    /// together, so where they read is decided once, here: a hop key by the
    /// table (and the key keeps the table's own name, so nothing is copied),
    /// a field by the next slot, taken by its first condition.
    ///
    /// Its shape is measured, not incidental: the two kinds of key pushed by
    /// paths of their own, each building its key where it pushes, in a
    /// function of its own (inlined). Compiling the W1 guard took about 79 ns
    /// so and 102 to 118 ns with the same steps written in compile's loop or
    /// with both kinds merged through one temporary (`docs/performance.md`).
    #[inline(always)]
    fn push_key(&mut self, key: &String, ops: &Map<String, Value>) -> Result<(), CompileError> {
        let hop = hop_key(key);
        let mut first = true;
        for (op_name, value) in enumerate(ops) {
            let Some(op) = Operator::parse(op_name) else {
                return Err(CompileError::UnknownOperator {
                    key: key.clone(),
                    op: op_name.clone(),
                    suggestion: nearest_operator(op_name),
                });
            };
            let value =
                condition_value(op, value).map_err(|why| value_refused(key, op, value, why))?;
            if let Some(hop) = hop {
                let key = Text::from_static(hop.name);
                self.push(Condition { key, op, value }, Source::Hop(hop.read));
            } else {
                let source = if first {
                    self.new_field()
                } else {
                    self.last_field()
                };
                let key = Text::from(key);
                self.push(Condition { key, op, value }, source);
            }
            first = false;
        }
        Ok(())
    }

    /// The guard of [`GuardData`] (for instance data read back from a
    /// record): the same guard [`Guard::compile`] gives for the data's JSON
    /// form. Every `GuardData` is one compile accepted, so nothing is checked
    /// again.
    pub fn from_data(data: &GuardData) -> Guard {
        let mut guard = Guard::empty();
        guard.reserve(data.conditions.len());
        for condition in &data.conditions {
            let source = guard.source_of(&condition.key);
            guard.push(condition.clone(), source);
        }
        guard
    }

    /// A guard with no condition yet.
    fn empty() -> Guard {
        Guard {
            data: GuardData {
                conditions: SmallVec::new(),
            },
            compiled: SmallVec::new(),
            hops: SmallVec::new(),
            fields: SmallVec::new(),
        }
    }

    /// Room for `conditions` in all, reserved in place once the guard is
    /// where it is built (`SmallVec::with_capacity` builds a list and then
    /// moves it, inline slots and all).
    fn reserve(&mut self, conditions: usize) {
        self.data.conditions.reserve_exact(conditions);
    }

    /// The next field slot, for a result field first read by the condition
    /// about to be pushed.
    #[inline]
    fn new_field(&mut self) -> Source {
        self.fields.push(self.data.conditions.len());
        Source::Field(self.fields.len() - 1)
    }

    /// The last field slot taken, for another condition on its field.
    #[inline]
    fn last_field(&self) -> Source {
        Source::Field(self.fields.len().saturating_sub(1))
    }

    /// Where a condition on `key` reads, whether or not an earlier condition
    /// named it (for data whose order this guard does not vouch for).
    fn source_of(&mut self, key: &Text) -> Source {
        if let Some(hop) = hop_key(key) {
            return Source::Hop(hop.read);
        }
        let conditions = &self.data.conditions;
        let known = self
            .fields
            .iter()
            .position(|&first| conditions[first].key == *key);
        known.map_or_else(|| self.new_field(), Source::Field)
    }

    /// Add `condition`, which reads from `source`, with its compiled test.
    /// Always inlined: compile calls it once per condition, and the call (a
    /// condition passed by pointer and copied in) costs more than the body.
    #[inline(always)]
    fn push(&mut self, condition: Condition, source: Source) {
        let test = Test::of(condition.op, &condition.value);
        if let Source::Hop(read) = source {
            let at = self.data.conditions.len();
            self.hops
                .push(HopCheck::of(read, test, &condition.value, at));
        }
        self.compiled.push(Compiled { source, test });
        self.data.conditions.push(condition);
    }

    /// The serializable description: the ordered condition list.
    pub fn data(&self) -> &GuardData {
        &self.data
    }

    /// Whether any condition reads a field of the result (so evaluating it
    /// parses the result).
    pub fn reads_result_fields(&self) -> bool {
        !self.fields.is_empty()
    }
}

/// Two guards are equal when their data is: the rest is compiled from it.
impl PartialEq for Guard {
    fn eq(&self, other: &Guard) -> bool {
        self.data == other.data
    }
}

/// Members in JavaScript's own-key order. Without an index-like key that
/// is the written order, taken as it stands; so is one member alone (an
/// operator object has one, mostly). An index begins with a digit, so a key
/// that does not is passed over without asking more.
///
/// Always inlined: compile calls it once per key, and for the common case
/// (no index-like key) the call costs more than the check.
#[inline(always)]
fn enumerate(map: &Map<String, Value>) -> KeyOrder<'_> {
    let index_like = |key: &String| {
        key.as_bytes().first().is_some_and(u8::is_ascii_digit) && array_index(key).is_some()
    };
    if map.len() < 2 || !map.keys().any(index_like) {
        return KeyOrder::Written(map.iter());
    }
    reordered(map)
}

/// The members of `map` sorted into JavaScript's own-key order: the rare
/// case of an index-like key, kept out of line.
#[cold]
#[inline(never)]
fn reordered(map: &Map<String, Value>) -> KeyOrder<'_> {
    let members: Vec<(&String, &Value)> = map.iter().collect();
    let order = js_key_order(&members, |(key, _)| key.as_str());
    KeyOrder::Reordered(
        order
            .into_iter()
            .map(|at| members[at])
            .collect::<Vec<_>>()
            .into_iter(),
    )
}

/// The members of an object, in the order [`enumerate`] chose.
enum KeyOrder<'m> {
    Written(serde_json::map::Iter<'m>),
    Reordered(std::vec::IntoIter<(&'m String, &'m Value)>),
}

impl<'m> Iterator for KeyOrder<'m> {
    type Item = (&'m String, &'m Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            KeyOrder::Written(members) => members.next(),
            KeyOrder::Reordered(members) => members.next(),
        }
    }
}

/// Why a condition's value was refused, before it is put in words: small,
/// so that the accepting path passes no `CompileError` around.
#[derive(Debug, Clone, Copy)]
enum ValueRefusal {
    /// `in`/`notIn` without a non-empty array.
    NeedsNonEmptyList,
    /// `in`/`notIn` with more than [`MAX_LIST_LEN`] entries.
    ListTooLong,
    /// A list entry (at this position) that is not a scalar.
    NonDataEntry(usize),
    /// An ordered bound that is neither a number nor a string.
    BoundNotComparable,
    /// An `eq`/`ne` value that is not a scalar.
    NonDataValue,
}

/// The value `op` takes from `value`, or why it takes none.
fn condition_value(op: Operator, value: &Value) -> Result<ConditionValue, ValueRefusal> {
    match op {
        Operator::In | Operator::NotIn => match value {
            Value::Array(list) if list.is_empty() => Err(ValueRefusal::NeedsNonEmptyList),
            Value::Array(list) if list.len() > MAX_LIST_LEN => Err(ValueRefusal::ListTooLong),
            Value::Array(list) => list_values(list).map(ConditionValue::List),
            _ => Err(ValueRefusal::NeedsNonEmptyList),
        },
        Operator::Gt | Operator::Gte | Operator::Lt | Operator::Lte => match scalar(value) {
            Some(bound @ (GuardValue::Number(_) | GuardValue::String(_))) => {
                Ok(ConditionValue::Scalar(bound))
            }
            _ => Err(ValueRefusal::BoundNotComparable),
        },
        Operator::Eq | Operator::Ne => scalar(value)
            .map(ConditionValue::Scalar)
            .ok_or(ValueRefusal::NonDataValue),
    }
}

/// The refusal of `key`'s `op` with `value`, in words.
#[cold]
fn value_refused(key: &str, op: Operator, value: &Value, why: ValueRefusal) -> CompileError {
    let key = key.to_owned();
    match why {
        ValueRefusal::NeedsNonEmptyList => CompileError::NeedsNonEmptyList { key, op },
        ValueRefusal::ListTooLong => CompileError::ListTooLong {
            key,
            op,
            len: value.as_array().map_or(0, Vec::len),
        },
        ValueRefusal::NonDataEntry(index) => CompileError::NonDataEntry {
            key,
            op,
            index,
            found: value
                .as_array()
                .and_then(|list| list.get(index))
                .map(shortened)
                .unwrap_or_default(),
        },
        ValueRefusal::BoundNotComparable => CompileError::BoundNotComparable {
            key,
            op,
            found: shortened(value),
        },
        ValueRefusal::NonDataValue => CompileError::NonDataValue {
            key,
            op,
            found: shortened(value),
        },
    }
}

/// The entries of a non-empty `in`/`notIn` list as guard values; the first
/// entry that is not one is refused. One or two entries (the common lists)
/// are kept in place, a longer list in a `Vec`.
fn list_values(list: &[Value]) -> Result<ValueList, ValueRefusal> {
    let entry =
        |index: usize, entry: &Value| scalar(entry).ok_or(ValueRefusal::NonDataEntry(index));
    Ok(match list {
        [only] => ValueList::one(entry(0, only)?),
        [first, second] => ValueList::two(entry(0, first)?, entry(1, second)?),
        _ => list
            .iter()
            .enumerate()
            .map(|(index, value)| entry(index, value))
            .collect::<Result<Vec<_>, _>>()?
            .into(),
    })
}

/// A JSON scalar as a guard value; `None` for arrays and objects.
fn scalar(value: &Value) -> Option<GuardValue> {
    Some(match value {
        Value::Null => GuardValue::Null,
        Value::Bool(b) => GuardValue::Bool(*b),
        Value::Number(n) => GuardValue::Number(n.as_f64()?),
        Value::String(text) => GuardValue::String(Text::from(text)),
        Value::Array(_) | Value::Object(_) => return None,
    })
}

/// The JSON kind of `value`, as refusals name it (`a string`, `an array`, …).
pub(crate) fn a_json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value's JSON text, cut to 60 characters for a message.
fn shortened(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The operator a misspelling most likely meant.
fn nearest_operator(written: &str) -> Option<&'static str> {
    skill_core::nearest(written, Operator::ALL.map(Operator::as_str))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refusal(guard: Value) -> (String, Option<String>, Option<String>) {
        let err = Guard::compile(&guard).unwrap_err();
        (
            err.code().to_owned(),
            err.key().map(str::to_owned),
            err.op().map(str::to_owned),
        )
    }

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn the_reserved_check_is_the_reserved_list() {
        for key in RESERVED_KEYS {
            assert!(is_reserved(key), "{key}");
            assert!(!is_reserved(&key.to_uppercase()), "{key}");
            assert!(!is_reserved(&key[1..]), "{key}");
        }
        assert!(!is_reserved("riskLevel") && !is_reserved("__proto"));
    }

    #[test]
    fn keys_enumerate_in_javascript_order() {
        let guard = Guard::compile(&parse(
            r#"{"b":{"eq":1},"10":{"eq":2},"2":{"eq":3},"a":{"eq":4}}"#,
        ))
        .unwrap();
        let keys: Vec<_> = guard
            .data()
            .conditions()
            .iter()
            .map(|c| c.key.as_str())
            .collect();
        assert_eq!(keys, ["2", "10", "b", "a"]);
    }

    #[test]
    fn refusals_name_where_they_happened() {
        assert_eq!(refusal(json!([1])), ("not-an-object".into(), None, None));
        assert_eq!(refusal(json!({})), ("empty".into(), None, None));
        assert_eq!(refusal(json!({"constructor": {"eq": 1}})).0, "reserved-key");
        assert_eq!(refusal(json!({"a": "eq"})).0, "ops-not-object");
        assert_eq!(refusal(json!({"a": {}})).0, "no-operator");
        assert_eq!(
            refusal(json!({"a": {"gle": 1}})),
            (
                "unknown-operator".into(),
                Some("a".into()),
                Some("gle".into())
            )
        );
        assert_eq!(refusal(json!({"a": {"in": []}})).0, "needs-non-empty-list");
        assert_eq!(
            refusal(json!({"a": {"notIn": "x"}})).0,
            "needs-non-empty-list"
        );
        assert_eq!(
            refusal(json!({"a": {"in": vec![1; 1001]}})).0,
            "list-too-long"
        );
        assert_eq!(refusal(json!({"a": {"in": [1, [2]]}})).0, "non-data-entry");
        assert_eq!(
            refusal(json!({"a": {"gt": true}})),
            (
                "bound-not-comparable".into(),
                Some("a".into()),
                Some("gt".into())
            )
        );
        assert_eq!(refusal(json!({"a": {"eq": {"x": 1}}})).0, "non-data-value");
        assert!(Guard::compile(&json!({"a": {"in": vec![1; 1000]}})).is_ok());
    }

    #[test]
    fn the_first_failure_in_enumeration_order_wins() {
        // "0" enumerates before "b", so its unknown operator is reported first.
        assert_eq!(
            refusal(parse(r#"{"b":{"in":[]},"0":{"zz":1}}"#)).0,
            "unknown-operator"
        );
        // Operators enumerate the same way within a key.
        assert_eq!(
            refusal(parse(r#"{"a":{"in":[],"0":1}}"#)),
            (
                "unknown-operator".into(),
                Some("a".into()),
                Some("0".into())
            )
        );
        // Reserved is checked before the shape of the key's operators.
        assert_eq!(refusal(json!({"valueOf": 3})).0, "reserved-key");
    }

    #[test]
    fn messages_name_the_key_the_operator_and_a_fix() {
        let err = Guard::compile(&json!({"score": {"gte": [1]}})).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("\"score\"")
                && text.contains("`gte`")
                && text.contains("must be a number or a string"),
            "{text}"
        );
        let err = Guard::compile(&json!({"score": {"GTE": 1}})).unwrap_err();
        assert!(err.to_string().contains("did you mean \"gte\""), "{err}");
        let err = Guard::compile(&json!({"score": {"notin": [1]}})).unwrap_err();
        assert!(err.to_string().contains("did you mean \"notIn\""), "{err}");
    }

    #[test]
    fn lists_of_every_length_read_back_as_written() {
        for len in 1..=4 {
            let list: Vec<Value> = (0..len).map(|i| json!(format!("v{i}"))).collect();
            let guard = Guard::compile(&json!({"tier": {"in": list.clone()}})).unwrap();
            let kept = guard.data().conditions()[0].value.as_list().unwrap();
            assert_eq!(kept.len(), len);
            assert!(
                kept.iter()
                    .zip(&list)
                    .all(|(k, v)| k.as_str() == v.as_str())
            );
            assert_eq!(Guard::from_data(guard.data()), guard);
            let mut bad = list.clone();
            bad.push(json!([1]));
            assert_eq!(
                Guard::compile(&json!({"tier": {"notIn": bad}})).unwrap_err(),
                CompileError::NonDataEntry {
                    key: "tier".into(),
                    op: Operator::NotIn,
                    index: len,
                    found: "[1]".into(),
                }
            );
        }
    }

    #[test]
    fn data_round_trips_through_json() {
        let guard = Guard::compile(
            &json!({"riskLevel": {"in": ["high"], "ne": null}, "score": {"gte": 0.8}}),
        )
        .unwrap();
        let again = Guard::from_data(guard.data());
        assert_eq!(again, guard);
        assert_eq!(
            guard.fields.as_slice(),
            [0, 2],
            "riskLevel (condition 0) and score (condition 2)"
        );
    }
}
