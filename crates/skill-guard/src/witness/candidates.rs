//! The values a witness search tries for one key: every constant of the
//! key's conditions, one value in each gap between them (in number order and
//! in UTF-16 order), and the other JavaScript types that coercion makes
//! comparable. For most keys the set is *complete*: every value the key can
//! hold behaves, on every condition of the key, like one of the set, so a
//! set where nothing fits proves that no value fits.

use std::collections::HashSet;

use skill_core::ResultStatus;

use super::{Candidate, Setting, Slot};
use crate::data::{Condition, ConditionValue, GuardValue, Operator};
use crate::js_number::{from_js_string, to_js_string};
use crate::js_value::utf16_cmp;
use crate::text::Text;

/// For which patterns a key's candidates stand for every value it can hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Cover {
    /// For every pattern.
    All,
    /// When one of these conditions (the key's own indices: its `eq` and
    /// `in`, which only their own values can pass) is to pass.
    IfPassing(Vec<usize>),
}

impl Cover {
    /// The cover of candidates that are complete, or complete only where an
    /// `eq` or `in` of the key passes (the texts that pass one are its
    /// values, and no list passes one).
    fn of(complete: bool, conditions: &[&Condition]) -> Cover {
        if complete {
            return Cover::All;
        }
        let listed = conditions.iter().enumerate();
        let picking = listed.filter(|(_, c)| matches!(c.op, Operator::Eq | Operator::In));
        Cover::IfPassing(picking.map(|(at, _)| at).collect())
    }
}

/// The values to try for a key in `slot` with these conditions, and for
/// which patterns they are complete (every value the key can hold acts like
/// one of them).
pub(super) fn candidates(
    slot: Slot,
    conditions: &[&Condition],
    setting: &Setting,
) -> (Vec<Candidate>, Cover) {
    let (candidates, complete) = by_slot(slot, conditions, setting);
    (candidates, Cover::of(complete, conditions))
}

fn by_slot(slot: Slot, conditions: &[&Condition], setting: &Setting) -> (Vec<Candidate>, bool) {
    let texts = |with_undefined: bool| {
        let (strings, complete) = strings(conditions);
        let undefined = with_undefined.then_some(Candidate::Undefined);
        let all = undefined
            .into_iter()
            .chain(strings.into_iter().map(Candidate::Text))
            .collect();
        (all, complete)
    };
    match slot {
        Slot::ToolName => match &setting.tool {
            Some(tool) => (vec![Candidate::Text(tool.clone())], true),
            None => texts(false),
        },
        Slot::UserMessage | Slot::Result => texts(false),
        Slot::CurrentSkillId => match &setting.cursor {
            Some(cursor) => (vec![Candidate::Text(cursor.clone())], true),
            None => texts(true),
        },
        Slot::Status => (statuses(setting), true),
        Slot::Iteration => {
            let (numbers, complete) = numbers(conditions, false);
            let nan = std::iter::once(Candidate::Number(f64::NAN));
            let all = numbers.into_iter().map(Candidate::Number).chain(nan);
            (all.collect(), complete)
        }
        Slot::Field => field(conditions),
    }
}

/// The statuses a result can declare on this route: the closed set (or
/// none at all), narrowed to the route's `on_tool_status`.
pub(super) fn statuses(setting: &Setting) -> Vec<Candidate> {
    let vocabulary = ResultStatus::ALL.iter().map(|status| status.as_str());
    match &setting.statuses {
        Some(list) => vocabulary
            .filter(|status| list.iter().any(|s| s == status))
            .map(|status| Candidate::Text(status.to_owned()))
            .collect(),
        None => std::iter::once(Candidate::Undefined)
            .chain(vocabulary.map(|status| Candidate::Text(status.to_owned())))
            .collect(),
    }
}

/// A result field: the constants as they are, then numbers, strings, the
/// other scalars, arrays (compared as their joined text), an object and
/// the missing field.
fn field(conditions: &[&Condition]) -> (Vec<Candidate>, bool) {
    let mut all: Vec<Candidate> = constants(conditions)
        .map(|value| match value {
            GuardValue::Null => Candidate::Null,
            GuardValue::Bool(b) => Candidate::Bool(*b),
            GuardValue::Number(n) => Candidate::Number(*n),
            GuardValue::String(text) => Candidate::Text(text.to_string()),
        })
        .collect();
    let (numbers, _) = numbers(conditions, true);
    all.extend(numbers.into_iter().map(Candidate::Number));
    let (strings, complete) = strings(conditions);
    all.extend(strings.iter().cloned().map(Candidate::Text));
    all.extend([
        Candidate::Null,
        Candidate::Bool(true),
        Candidate::Bool(false),
    ]);
    all.extend(strings.into_iter().map(Candidate::Array));
    all.extend([Candidate::Object, Candidate::Undefined]);
    (all, complete)
}

/// The values of `eq ne in notIn`, in the order they are written.
fn constants<'c>(conditions: &'c [&'c Condition]) -> impl Iterator<Item = &'c GuardValue> + 'c {
    conditions
        .iter()
        .filter(|c| !c.op.is_bound())
        .flat_map(|c| match &c.value {
            ConditionValue::Scalar(value) => std::slice::from_ref(value),
            ConditionValue::List(list) => list.as_slice(),
        })
}

/// The values of the ordered bounds.
fn bounds<'c>(conditions: &'c [&'c Condition]) -> impl Iterator<Item = &'c GuardValue> + 'c {
    conditions
        .iter()
        .filter(|c| c.op.is_bound())
        .filter_map(|c| c.value.as_scalar())
}

/// Numbers: every constant and threshold (a string bound counts as its
/// `Number`), one number in each gap between them and one beyond each end;
/// `with_infinity` adds ±Infinity (a result field can hold them). Complete
/// unless a threshold is infinite and infinities are left out.
fn numbers(conditions: &[&Condition], with_infinity: bool) -> (Vec<f64>, bool) {
    let constants = constants(conditions).filter_map(|v| match v {
        GuardValue::Number(n) => Some(*n),
        _ => None,
    });
    let thresholds = bounds(conditions).map(|v| match v {
        GuardValue::Number(n) => *n,
        GuardValue::String(text) => from_js_string(text),
        _ => f64::NAN,
    });
    let mut points: Vec<f64> = constants
        .chain(thresholds)
        .filter(|n| !n.is_nan())
        .map(|n| n + 0.0)
        .collect();
    points.sort_by(f64::total_cmp);
    points.dedup();
    let complete = with_infinity || points.iter().all(|n| n.is_finite());
    let mut out: Vec<f64> = points.clone();
    out.extend(
        points
            .windows(2)
            .filter_map(|pair| between(pair[0], pair[1])),
    );
    match (points.first(), points.last()) {
        (Some(&low), Some(&high)) => {
            out.extend(below(low));
            out.extend(above(high));
        }
        _ => out.push(0.0),
    }
    if with_infinity {
        out.extend([f64::INFINITY, f64::NEG_INFINITY]);
    }
    out.retain(|n| with_infinity || n.is_finite());
    (out, complete)
}

/// A number strictly between `low` and `high`, the rounder the better.
fn between(low: f64, high: f64) -> Option<f64> {
    let middle = if low.is_finite() && high.is_finite() {
        low / 2.0 + high / 2.0
    } else if low.is_finite() {
        low + 1.0
    } else {
        high - 1.0
    };
    let round = middle.round();
    [round, middle, low.next_up()]
        .into_iter()
        .find(|n| low < *n && *n < high)
}

fn below(low: f64) -> Option<f64> {
    [low - 1.0, low.next_down()]
        .into_iter()
        .find(|n| *n < low && !n.is_nan())
}

fn above(high: f64) -> Option<f64> {
    [high + 1.0, high.next_up()]
        .into_iter()
        .find(|n| *n > high && !n.is_nan())
}

/// Strings: every string constant and bound, the least string above each
/// (itself followed by U+0000) and the empty string, which stand for every
/// gap in UTF-16 order; with number bounds, texts whose `Number` stands for
/// each numeric gap. Complete unless the key has bounds of both types (a
/// text then has to sit in a UTF-16 gap and a numeric gap at once, which
/// the set only tries a few ways to do).
fn strings(conditions: &[&Condition]) -> (Vec<String>, bool) {
    let constants: Vec<&str> = constants(conditions)
        .filter_map(GuardValue::as_str)
        .collect();
    let string_bounds: Vec<&str> = bounds(conditions).filter_map(GuardValue::as_str).collect();
    let number_bounds: Vec<f64> = bounds(conditions)
        .filter_map(|v| match v {
            GuardValue::Number(n) => Some(*n),
            _ => None,
        })
        .collect();
    let mut out = Unique::default();
    let mut points: Vec<&str> = constants.iter().chain(&string_bounds).copied().collect();
    points.sort_by(|a, b| utf16_cmp(a, b));
    points.dedup();
    for point in &points {
        out.push((*point).to_owned());
    }
    out.push(String::new());
    for point in &points {
        out.push(format!("{point}\u{0}"));
    }
    if number_bounds.is_empty() {
        return (out.0, true);
    }
    let as_numbers: Vec<Condition> = number_bounds
        .iter()
        .map(|n| Condition {
            key: Text::default(),
            op: Operator::Gt,
            value: ConditionValue::Scalar(GuardValue::Number(*n)),
        })
        .collect();
    let refs: Vec<&Condition> = as_numbers.iter().collect();
    let (numbers, _) = numbers(&refs, true);
    for number in numbers.iter().copied().chain([f64::NAN]) {
        out.push(numeric_text(number, &constants));
    }
    let in_range = |n: f64| {
        conditions
            .iter()
            .all(|c| match (c.op, c.value.as_scalar()) {
                (op, Some(GuardValue::Number(bound))) if op.is_bound() => match op {
                    Operator::Gt => n > *bound,
                    Operator::Gte => n >= *bound,
                    Operator::Lt => n < *bound,
                    _ => n <= *bound,
                },
                _ => true,
            })
    };
    // No number passes the number bounds: no text does either.
    if string_bounds.is_empty() || !numbers.iter().any(|n| in_range(*n)) {
        return (out.0, true);
    }
    for number in numbers {
        out.extend(spellings(number));
    }
    for point in &points {
        out.extend(extensions(point));
    }
    match finite_in_order(&points, conditions) {
        Some(every) => {
            out.extend(every);
            (out.0, true)
        }
        None => (out.0, false),
    }
}

/// Every text the key's string bounds allow, when they allow finitely many:
/// each gap between the points that the bounds allow is empty or holds only
/// the point before it followed by U+0000s.
fn finite_in_order(points: &[&str], conditions: &[&Condition]) -> Option<Vec<String>> {
    let allowed = |text: &str| {
        conditions
            .iter()
            .all(|c| match (c.op, c.value.as_scalar()) {
                (op, Some(GuardValue::String(bound))) if op.is_bound() => {
                    let ordering = utf16_cmp(text, bound);
                    match op {
                        Operator::Gt => ordering.is_gt(),
                        Operator::Gte => ordering.is_ge(),
                        Operator::Lt => ordering.is_lt(),
                        _ => ordering.is_le(),
                    }
                }
                _ => true,
            })
    };
    let mut ends: Vec<&str> = std::iter::once("").chain(points.iter().copied()).collect();
    ends.dedup();
    let mut every = Vec::new();
    for (at, low) in ends.iter().enumerate() {
        let first = format!("{low}\u{0}");
        let high = ends.get(at + 1);
        if high.is_some_and(|high| utf16_cmp(&first, high).is_ge()) || !allowed(&first) {
            continue;
        }
        let zeros = high?.strip_prefix(low)?;
        if zeros.chars().any(|c| c != '\u{0}') {
            return None;
        }
        every.extend((1..zeros.len()).map(|n| format!("{low}{}", "\u{0}".repeat(n))));
    }
    Some(every)
}

/// A text whose `Number` is `number` (NaN: a text that is no number) and
/// that is none of `constants`: padding with spaces changes neither.
fn numeric_text(number: f64, constants: &[&str]) -> String {
    let mut text = if number.is_nan() {
        "x".to_owned()
    } else {
        to_js_string(number)
    };
    while constants.contains(&text.as_str()) {
        text.insert(0, ' ');
    }
    text
}

/// JavaScript white space that `Number` trims, from the lowest UTF-16 unit
/// to the highest: a number padded with one sorts almost anywhere.
const SPACES: [char; 12] = [
    '\t', '\n', '\u{B}', '\u{C}', '\r', ' ', '\u{A0}', '\u{1680}', '\u{2000}', '\u{2028}',
    '\u{3000}', '\u{FEFF}',
];

/// Other spellings of one number, each sorting elsewhere in UTF-16 order:
/// padded with each kind of white space, signed, with leading zeros, in
/// hexadecimal.
fn spellings(number: f64) -> Vec<String> {
    if number.is_nan() {
        return Vec::new();
    }
    let text = to_js_string(number);
    let mut out: Vec<String> = SPACES
        .iter()
        .flat_map(|space| [format!("{space}{text}"), format!("{text}{space}")])
        .collect();
    out.extend([format!("0{text}"), format!("00{text}")]);
    if let Some(fraction) = text.strip_prefix("0.") {
        out.push(format!(".{fraction}"));
    }
    if number >= 0.0 {
        out.push(format!("+{text}"));
    }
    if number.fract() == 0.0 && (0.0..9.0e15).contains(&number) {
        out.push(format!("0x{:x}", number as u64));
        out.push(format!("0X{:X}", number as u64));
    }
    out
}

/// Texts that begin with `point` (so sort just above it) and still read as
/// numbers: its digits scaled by an exponent, or padded.
fn extensions(point: &str) -> Vec<String> {
    let mut out: Vec<String> = ["e-1", "e-3", "e-9", "e1", "e+3", "0", "00", " ", ".5", "5"]
        .into_iter()
        .map(|tail| format!("{point}{tail}"))
        .collect();
    out.push(format!("{point}x"));
    out
}

/// Texts in first-seen order, without repeats.
#[derive(Default)]
struct Unique(Vec<String>, HashSet<String>);

impl Unique {
    fn push(&mut self, text: String) {
        if self.1.insert(text.clone()) {
            self.0.push(text);
        }
    }
}

impl Extend<String> for Unique {
    fn extend<I: IntoIterator<Item = String>>(&mut self, texts: I) {
        for text in texts {
            self.push(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Guard;

    fn on(guard: serde_json::Value) -> Guard {
        Guard::compile(&guard).unwrap()
    }

    #[test]
    fn each_gap_between_numbers_has_a_value() {
        let guard = on(json!({"n": {"gt": 1, "lt": 11, "ne": 6}}));
        let conditions: Vec<&Condition> = guard.data().conditions().iter().collect();
        let (numbers, complete) = numbers(&conditions, false);
        assert!(complete);
        let mut numbers = numbers;
        numbers.sort_by(f64::total_cmp);
        assert_eq!(numbers, [0.0, 1.0, 4.0, 6.0, 9.0, 11.0, 12.0]);
    }

    #[test]
    fn the_least_string_above_each_point_stands_for_its_gap() {
        let guard = on(json!({"s": {"gt": "b", "lt": "b\u{0}\u{0}"}}));
        let conditions: Vec<&Condition> = guard.data().conditions().iter().collect();
        let (strings, complete) = strings(&conditions);
        assert!(complete);
        assert!(strings.contains(&"b\u{0}".to_owned()), "{strings:?}");
        assert!(strings.contains(&String::new()));
    }

    #[test]
    fn mixed_bounds_are_not_complete() {
        let guard = on(json!({"s": {"gt": "5", "lt": 3}}));
        let conditions: Vec<&Condition> = guard.data().conditions().iter().collect();
        let (strings, complete) = strings(&conditions);
        assert!(!complete);
        assert!(strings.contains(&"5e-1".to_owned()));
    }

    #[test]
    fn status_keeps_to_the_vocabulary_and_the_route() {
        let setting = Setting {
            statuses: Some(vec!["failure".into(), "made-up".into()]),
            ..Setting::default()
        };
        assert_eq!(
            statuses(&setting),
            [Candidate::Text("failure".into())],
            "a status no tool declares is never tried"
        );
        assert_eq!(statuses(&Setting::default())[0], Candidate::Undefined);
    }

    #[test]
    fn padding_keeps_a_numeric_text_off_the_constants() {
        assert_eq!(numeric_text(5.0, &["5", " 5"]), "  5");
        assert_eq!(numeric_text(f64::NAN, &[]), "x");
    }
}
