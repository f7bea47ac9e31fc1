//! JavaScript values as a guard sees them, and the operations the guard
//! grammar applies to them: strict equality, abstract relational comparison
//! (with `ToPrimitive` and `ToNumber`), UTF-16 string order, `JSON.stringify`
//! and the bounded evidence summary.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::data::{GuardValue, Operator};
use crate::js_number;

/// A JavaScript value read from a hop key or a parsed tool result. Strings
/// borrow from the result text where they hold no escape.
#[derive(Debug)]
pub(crate) enum JsValue<'a> {
    /// A missing key: JavaScript `undefined`.
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    Str(Cow<'a, str>),
    Array(Items<'a>),
    /// Members in the order first written; a repeated key keeps its first
    /// position and its last value, as `JSON.parse` leaves it.
    Object(Members<'a>),
}

/// An array's items. Dropping is iterative (a result may nest a million
/// levels deep, and drop glue would recurse once per level); scalars have no
/// drop of their own, so the common case pays nothing.
#[derive(Debug, Default)]
pub(crate) struct Items<'a>(pub(crate) Vec<JsValue<'a>>);

/// An object's members; dropped iteratively, like [`Items`].
#[derive(Debug, Default)]
pub(crate) struct Members<'a>(pub(crate) Vec<(Cow<'a, str>, JsValue<'a>)>);

impl Drop for Items<'_> {
    fn drop(&mut self) {
        if self.0.iter().any(JsValue::is_container) {
            drop_iteratively(self.0.drain(..));
        }
    }
}

impl Drop for Members<'_> {
    fn drop(&mut self) {
        if self.0.iter().any(|(_, value)| value.is_container()) {
            drop_iteratively(self.0.drain(..).map(|(_, value)| value));
        }
    }
}

impl<'a> std::ops::Deref for Items<'a> {
    type Target = [JsValue<'a>];

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<'a> std::ops::Deref for Members<'a> {
    type Target = [(Cow<'a, str>, JsValue<'a>)];

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// Drop nested values level by level from an explicit stack.
fn drop_iteratively<'a>(values: impl Iterator<Item = JsValue<'a>>) {
    let mut pending: Vec<JsValue<'a>> = values.filter(JsValue::is_container).collect();
    while let Some(value) = pending.pop() {
        match value {
            JsValue::Array(mut items) => {
                pending.extend(items.0.drain(..).filter(JsValue::is_container))
            }
            JsValue::Object(mut members) => {
                pending.extend(
                    members
                        .0
                        .drain(..)
                        .map(|(_, item)| item)
                        .filter(JsValue::is_container),
                );
            }
            _ => {}
        }
    }
}

/// A primitive after `ToPrimitive`.
enum Primitive<'v> {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    Str(Cow<'v, str>),
}

impl<'a> JsValue<'a> {
    fn is_container(&self) -> bool {
        matches!(self, JsValue::Array(_) | JsValue::Object(_))
    }

    /// JavaScript `===` against a guard scalar.
    pub(crate) fn strict_equals(&self, value: &GuardValue) -> bool {
        match (self, value) {
            (JsValue::Null, GuardValue::Null) => true,
            (JsValue::Bool(a), GuardValue::Bool(b)) => a == b,
            (JsValue::Number(a), GuardValue::Number(b)) => a == b,
            (JsValue::Str(a), GuardValue::String(b)) => a.as_ref() == b,
            _ => false,
        }
    }

    /// SameValueZero membership in a list of guard scalars. For JSON data
    /// (no NaN in a list) this is strict equality.
    pub(crate) fn is_in(&self, list: &[GuardValue]) -> bool {
        list.iter().any(|member| self.strict_equals(member))
    }

    fn to_primitive(&self) -> Primitive<'_> {
        match self {
            JsValue::Undefined => Primitive::Undefined,
            JsValue::Null => Primitive::Null,
            JsValue::Bool(b) => Primitive::Bool(*b),
            JsValue::Number(n) => Primitive::Number(*n),
            JsValue::Str(text) => Primitive::Str(Cow::Borrowed(text.as_ref())),
            JsValue::Array(_) => {
                let mut joined = String::new();
                self.join_into(&mut joined);
                Primitive::Str(Cow::Owned(joined))
            }
            JsValue::Object(_) => Primitive::Str(Cow::Borrowed("[object Object]")),
        }
    }

    /// `Array.prototype.join(",")`, recursively, without recursion: nested
    /// arrays join in place, null and undefined print as nothing, objects as
    /// `[object Object]`.
    fn join_into(&self, out: &mut String) {
        let mut stack: Vec<(&[JsValue<'a>], bool)> = Vec::new();
        if let JsValue::Array(items) = self {
            stack.push((&items.0, true));
        }
        while let Some((items, first)) = stack.last_mut() {
            let Some((item, rest)) = items.split_first() else {
                stack.pop();
                continue;
            };
            if !*first {
                out.push(',');
            }
            *first = false;
            *items = rest;
            match item {
                JsValue::Undefined | JsValue::Null => {}
                JsValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                JsValue::Number(n) => js_number::write_js_number(out, *n),
                JsValue::Str(text) => out.push_str(text),
                JsValue::Array(inner) => stack.push((&inner.0, true)),
                JsValue::Object(_) => out.push_str("[object Object]"),
            }
        }
    }

    /// JavaScript's abstract relational comparison `self OP bound`, where
    /// `bound` is a number or a string (a compiled bound).
    pub(crate) fn compare(&self, op: Relation, bound: &Bound<'_>) -> bool {
        let primitive = self.to_primitive();
        let ordering = match (&primitive, bound) {
            (Primitive::Str(text), Bound::Str { text: bound, .. }) => Some(utf16_cmp(text, bound)),
            (_, Bound::Number(bound) | Bound::Str { number: bound, .. }) => {
                primitive.to_number().partial_cmp(bound)
            }
        };
        ordering.is_some_and(|ordering| op.holds(ordering))
    }
}

impl Primitive<'_> {
    fn to_number(&self) -> f64 {
        match self {
            Primitive::Undefined => f64::NAN,
            Primitive::Null => 0.0,
            Primitive::Bool(b) => f64::from(u8::from(*b)),
            Primitive::Number(n) => *n,
            Primitive::Str(text) => js_number::from_js_string(text),
        }
    }
}

/// An ordered comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Relation {
    Gt,
    Gte,
    Lt,
    Lte,
}

impl Relation {
    /// The comparison an ordered operator makes; `None` for the others.
    pub(crate) fn of(op: Operator) -> Option<Relation> {
        match op {
            Operator::Gt => Some(Relation::Gt),
            Operator::Gte => Some(Relation::Gte),
            Operator::Lt => Some(Relation::Lt),
            Operator::Lte => Some(Relation::Lte),
            Operator::Eq | Operator::Ne | Operator::In | Operator::NotIn => None,
        }
    }

    /// Whether `a RELATION b` holds, given how `a` orders against `b`.
    /// (`gte` is "not less than", so an unordered pair is the caller's to
    /// refuse, before asking.)
    pub(crate) fn holds(self, ordering: Ordering) -> bool {
        match self {
            Relation::Gt => ordering == Ordering::Greater,
            Relation::Gte => ordering != Ordering::Less,
            Relation::Lt => ordering == Ordering::Less,
            Relation::Lte => ordering != Ordering::Greater,
        }
    }
}

/// An ordered bound: a number, or a string together with its `Number(s)`
/// (used when the other side is not a string).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Bound<'b> {
    Number(f64),
    Str { text: &'b str, number: f64 },
}

/// Compare two strings by UTF-16 code units, as JavaScript does.
///
/// Equal prefixes decide nothing; at the first differing character the
/// first UTF-16 unit decides, and only when both are astral with the same
/// lead surrogate does the code point decide (their trail units are in code
/// point order).
pub(crate) fn utf16_cmp(a: &str, b: &str) -> Ordering {
    let mut left = a.chars();
    let mut right = b.chars();
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) => {
                return first_unit(x).cmp(&first_unit(y)).then(x.cmp(&y));
            }
        }
    }
}

fn first_unit(c: char) -> u32 {
    let mut units = [0u16; 2];
    u32::from(c.encode_utf16(&mut units)[0])
}

/// The most UTF-16 units a summary may hold before it is cut.
const SUMMARY_UNITS: usize = 80;

/// The bounded evidence text for an actual value: `undefined`, a string
/// verbatim, a scalar as `String(v)`, a structure as `JSON.stringify`; cut to
/// 79 UTF-16 units and `…` when longer than 80, never inside a character.
pub(crate) fn summarize<'v>(value: &JsValue<'v>) -> Cow<'v, str> {
    match value {
        JsValue::Undefined => Cow::Borrowed("undefined"),
        JsValue::Null => Cow::Borrowed("null"),
        JsValue::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        JsValue::Number(n) => Cow::Owned(js_number::to_js_string(*n)),
        JsValue::Str(Cow::Borrowed(text)) => bounded(text),
        JsValue::Str(Cow::Owned(text)) => Cow::Owned(bounded(text).into_owned()),
        JsValue::Array(_) | JsValue::Object(_) => {
            let mut out = String::new();
            // Every UTF-16 unit takes at most three UTF-8 bytes, so a text of
            // more than 3 × 81 bytes is surely past the bound: stop there.
            stringify_into(&mut out, value, 3 * (SUMMARY_UNITS + 1));
            Cow::Owned(if fits(&out) { out } else { cut(&out) })
        }
    }
}

/// Whether `text` is within the summary bound.
fn fits(text: &str) -> bool {
    // A string of at most 80 bytes has at most 80 units.
    text.len() <= SUMMARY_UNITS || text.encode_utf16().count() <= SUMMARY_UNITS
}

/// `text` within the summary bound: itself when it fits, else cut.
pub(crate) fn bounded(text: &str) -> Cow<'_, str> {
    if fits(text) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(cut(text))
    }
}

/// The first 79 UTF-16 units of `text` (never splitting a character), and `…`.
fn cut(text: &str) -> String {
    let mut units = 0;
    let mut end = 0;
    for (at, c) in text.char_indices() {
        units += c.len_utf16();
        if units > SUMMARY_UNITS - 1 {
            break;
        }
        end = at + c.len_utf8();
    }
    let mut out = String::with_capacity(end + 3);
    out.push_str(&text[..end]);
    out.push('…');
    out
}

/// `JSON.stringify(value)` appended to `out`, stopping once `out` is longer
/// than `budget` bytes (the caller cuts it anyway). Every level writes at least
/// one byte before descending, so the depth of recursion is bounded by the
/// budget, whatever the nesting of the value.
pub(crate) fn stringify_into(out: &mut String, value: &JsValue<'_>, budget: usize) {
    if out.len() > budget {
        return;
    }
    match value {
        // Only array members can be undefined here; JSON writes them as null.
        JsValue::Undefined | JsValue::Null => out.push_str("null"),
        JsValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        JsValue::Number(n) if n.is_finite() => js_number::write_js_number(out, *n),
        JsValue::Number(_) => out.push_str("null"),
        JsValue::Str(text) => quote_into(out, text),
        JsValue::Array(items) => {
            out.push('[');
            for (index, item) in items.0.iter().enumerate() {
                if out.len() > budget {
                    return;
                }
                if index > 0 {
                    out.push(',');
                }
                stringify_into(out, item, budget);
            }
            out.push(']');
        }
        JsValue::Object(members) => {
            out.push('{');
            for (index, member) in js_key_order(&members.0, |(key, _)| key)
                .into_iter()
                .enumerate()
            {
                if out.len() > budget {
                    return;
                }
                if index > 0 {
                    out.push(',');
                }
                let (key, item) = &members.0[member];
                quote_into(out, key);
                out.push(':');
                stringify_into(out, item, budget);
            }
            out.push('}');
        }
    }
}

/// JavaScript's `QuoteJSONString`.
fn quote_into(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The position of each member in JavaScript's own-key order: keys that are
/// canonical array indices (no sign, no leading zero, below 2^32 − 1) first,
/// in ascending numeric order, then every other key in written order.
pub(crate) fn js_key_order<T>(members: &[T], key_of: impl Fn(&T) -> &str) -> Vec<usize> {
    let mut indices: Vec<(u32, usize)> = Vec::new();
    let mut others: Vec<usize> = Vec::new();
    for (position, member) in members.iter().enumerate() {
        match array_index(key_of(member)) {
            Some(index) => indices.push((index, position)),
            None => others.push(position),
        }
    }
    if indices.is_empty() {
        return others;
    }
    indices.sort_unstable();
    indices
        .into_iter()
        .map(|(_, position)| position)
        .chain(others)
        .collect()
}

/// The key as a canonical array index, if it is one.
pub(crate) fn array_index(key: &str) -> Option<u32> {
    let bytes = key.as_bytes();
    if bytes.is_empty() || bytes.len() > 10 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return None;
    }
    key.parse::<u32>().ok().filter(|index| *index < u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(items: Vec<JsValue<'_>>) -> JsValue<'_> {
        JsValue::Array(Items(items))
    }

    fn obj(members: Vec<(Cow<'static, str>, JsValue<'static>)>) -> JsValue<'static> {
        JsValue::Object(Members(members))
    }

    fn s(text: &str) -> JsValue<'_> {
        JsValue::Str(Cow::Borrowed(text))
    }

    fn num(text: &str) -> Bound<'_> {
        Bound::Str {
            text,
            number: js_number::from_js_string(text),
        }
    }

    #[test]
    fn strings_compare_by_utf16_units() {
        assert!(s("low").compare(Relation::Gt, &num("high")));
        assert!(s("Z").compare(Relation::Lt, &num("a")));
        // U+FF5E is above the lead surrogate of U+1F600 in UTF-16 order,
        // below it in code point order.
        assert!(s("\u{ff5e}").compare(Relation::Gt, &num("\u{1f600}")));
        assert_eq!(utf16_cmp("\u{1f600}", "\u{1f601}"), Ordering::Less);
        assert_eq!(utf16_cmp("ab", "abc"), Ordering::Less);
    }

    #[test]
    fn mixed_types_coerce_to_numbers() {
        let five = Bound::Number(5.0);
        assert!(s(" 7 ").compare(Relation::Gt, &five));
        assert!(!s("seven").compare(Relation::Gt, &five));
        assert!(!s("seven").compare(Relation::Lte, &five));
        assert!(JsValue::Null.compare(Relation::Lt, &five));
        assert!(JsValue::Bool(true).compare(Relation::Lte, &Bound::Number(1.0)));
        assert!(!JsValue::Undefined.compare(Relation::Gte, &five));
        assert!(JsValue::Number(6.0).compare(Relation::Gt, &num("5")));
        let array = arr(vec![JsValue::Number(6.0)]);
        assert!(array.compare(Relation::Gt, &five));
        let pair = arr(vec![JsValue::Number(1.0), JsValue::Number(2.0)]);
        assert!(pair.compare(Relation::Gt, &num("1,1")));
        assert!(!pair.compare(Relation::Gt, &five));
        let object = obj(Vec::new());
        assert!(object.compare(Relation::Gt, &num("[object Aardvark]")));
    }

    #[test]
    fn arrays_join_like_javascript() {
        let nested = arr(vec![
            JsValue::Number(1.0),
            JsValue::Null,
            arr(vec![s("a"), arr(vec![])]),
            obj(vec![]),
            JsValue::Bool(false),
        ]);
        let mut out = String::new();
        nested.join_into(&mut out);
        assert_eq!(out, "1,,a,,[object Object],false");
    }

    #[test]
    fn deep_arrays_join_without_recursion() {
        let mut value = arr(vec![]);
        for _ in 0..100_000 {
            value = arr(vec![value]);
        }
        let mut out = String::new();
        value.join_into(&mut out);
        assert_eq!(out, "");
        drop(value);
    }

    #[test]
    fn stringify_orders_index_keys_first_and_escapes() {
        let object = obj(vec![
            (Cow::Borrowed("b"), JsValue::Number(1e21)),
            (Cow::Borrowed("10"), s("q\"\u{1}\u{2028}")),
            (
                Cow::Borrowed("2"),
                arr(vec![JsValue::Number(f64::INFINITY)]),
            ),
            (Cow::Borrowed("01"), JsValue::Null),
        ]);
        let mut out = String::new();
        stringify_into(&mut out, &object, usize::MAX);
        assert_eq!(
            out,
            "{\"2\":[null],\"10\":\"q\\\"\\u0001\u{2028}\",\"b\":1e+21,\"01\":null}"
        );
    }

    #[test]
    fn summaries_cut_at_eighty_units_without_splitting() {
        let long = "x".repeat(81);
        let cut = bounded(&long);
        assert_eq!(cut, format!("{}…", "x".repeat(79)));
        assert_eq!(bounded(&"x".repeat(80)), "x".repeat(80));
        // 78 units, then an astral character across units 79 and 80.
        let astral = format!("{}\u{1f600}{}", "x".repeat(78), "y");
        assert_eq!(bounded(&astral), format!("{}…", "x".repeat(78)));
        let emoji = "\u{1f600}".repeat(40);
        assert_eq!(bounded(&emoji), emoji, "exactly 80 units stays whole");
    }

    #[test]
    fn array_index_is_canonical() {
        assert_eq!(array_index("0"), Some(0));
        assert_eq!(array_index("4294967294"), Some(4_294_967_294));
        assert_eq!(array_index("4294967295"), None);
        assert_eq!(array_index("01"), None);
        assert_eq!(array_index("-1"), None);
        assert_eq!(array_index(""), None);
        assert_eq!(array_index("1e3"), None);
    }
}
