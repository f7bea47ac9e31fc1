//! Running a compiled guard over a hop: the predicate that routes, and the
//! evaluator that leaves per-condition evidence. Both read the result at most
//! once, and only when a condition names a result field; their verdicts are
//! the same by construction (one test per condition, shared).

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use skill_core::GuardView;
use smallvec::SmallVec;

use crate::compile::{Compiled, Guard, HopCheck, Source, Test};
use crate::data::{Condition, ConditionValue, GuardValue};
use crate::hop::Read;
use crate::js_number;
use crate::js_value::{Bound, JsValue, Relation, summarize};
use crate::result_fields::{Fields, Outcome, field_values_into, read_fields};

/// The evidence of one evaluation: the verdict and every condition judged.
///
/// It borrows from the guard (its conditions) and from the view: a summary
/// that is a string the hop or the result holds (unescaped, within the bound)
/// is that string, not a copy, and `undefined`, `null`, `true`, `false` are
/// constants; a number is kept as a number until its summary is shown. Only a
/// summary that has to be written (a structure, a cut or unescaped string) is
/// allocated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evaluation<'a> {
    /// Whether every condition passed (the predicate's answer).
    pub verdict: bool,
    /// Each condition with what it read and whether it passed, in order.
    pub conditions: EvidenceList<'a>,
}

/// The evidence of a guard's conditions, in order. Up to three are kept
/// inline (most guards have no more), so judging a guard allocates nothing
/// for the list. It reads as a slice of [`ConditionEvidence`].
pub type EvidenceList<'a> = SmallVec<[ConditionEvidence<'a>; 3]>;

/// One condition's evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct ConditionEvidence<'a> {
    /// The condition judged.
    pub condition: &'a Condition,
    /// What the key read, bounded: `undefined`, a string verbatim, a scalar as
    /// JavaScript prints it, a structure as JSON; cut to 80 UTF-16 units.
    pub actual_summary: Summary<'a>,
    /// Whether the condition passed.
    pub passed: bool,
}

/// What a condition's key read, as its evidence shows it: a text, or a number
/// kept as it is and printed as JavaScript prints it (`0.8`, `1e+21`) when
/// the summary is shown, written or compared. Evaluating does not format a
/// number nobody reads.
///
/// ```
/// use serde_json::json;
/// use skill_core::GuardView;
/// use skill_guard::Guard;
///
/// let guard = Guard::compile(&json!({ "score": { "gte": 0.8 }, "tier": { "eq": "gold" } }))?;
/// let evaluation = guard.evaluate(&GuardView::new("t", r#"{"score":0.5,"tier":"gold"}"#));
/// let [score, tier] = &evaluation.conditions[..] else { unreachable!() };
/// assert_eq!(score.actual_summary, "0.5");
/// assert_eq!(tier.actual_summary.as_text(), "gold");
/// assert_eq!(format!("score = {}", score.actual_summary), "score = 0.5");
/// # Ok::<(), skill_guard::CompileError>(())
/// ```
#[derive(Clone)]
pub struct Summary<'a>(Said<'a>);

/// What a [`Summary`] holds.
#[derive(Clone)]
enum Said<'a> {
    Text(Cow<'a, str>),
    Number(f64),
}

impl<'a> Summary<'a> {
    /// The summary of `value`.
    fn of(value: &JsValue<'a>) -> Summary<'a> {
        Summary(match value {
            JsValue::Number(n) => Said::Number(*n),
            _ => Said::Text(summarize(value)),
        })
    }

    /// The summary's text: borrowed when it is a text, written when it is a
    /// number.
    pub fn as_text(&self) -> Cow<'_, str> {
        match &self.0 {
            Said::Text(text) => Cow::Borrowed(text),
            Said::Number(n) => Cow::Owned(js_number::to_js_string(*n)),
        }
    }
}

impl fmt::Display for Summary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_text())
    }
}

impl fmt::Debug for Summary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.as_text(), f)
    }
}

impl Serialize for Summary<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.as_text())
    }
}

/// Two summaries are equal when their texts are.
impl PartialEq for Summary<'_> {
    fn eq(&self, other: &Summary<'_>) -> bool {
        self.as_text() == other.as_text()
    }
}

impl PartialEq<str> for Summary<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_text() == other
    }
}

impl PartialEq<&str> for Summary<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_text() == *other
    }
}

impl PartialEq<String> for Summary<'_> {
    fn eq(&self, other: &String) -> bool {
        self.as_text() == other.as_str()
    }
}

impl Serialize for ConditionEvidence<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(5))?;
        map.serialize_entry("key", &self.condition.key)?;
        map.serialize_entry("op", &self.condition.op)?;
        map.serialize_entry("value", &self.condition.value)?;
        map.serialize_entry("actual_summary", &self.actual_summary)?;
        map.serialize_entry("passed", &self.passed)?;
        map.end()
    }
}

impl Test {
    /// Whether `actual` passes this test of `value` (the condition's own).
    fn passes(self, value: &ConditionValue, actual: &JsValue<'_>) -> bool {
        // Compile pairs lists with in/notIn and scalars with the rest; a
        // mismatched pair cannot occur and fails. Split by the value's shape
        // first: two small decisions branch better than one wide one.
        match value {
            ConditionValue::List(list) => match self {
                Test::In => actual.is_in(list),
                Test::NotIn => !actual.is_in(list),
                _ => false,
            },
            ConditionValue::Scalar(scalar) => match self {
                Test::Compare(relation, number) => {
                    let bound = match scalar {
                        GuardValue::String(text) => Bound::Str { text, number },
                        _ => Bound::Number(number),
                    };
                    actual.compare(relation, &bound)
                }
                Test::Eq => actual.strict_equals(scalar),
                Test::Ne => !actual.strict_equals(scalar),
                _ => false,
            },
        }
    }
}

/// The actual value a hop key reads.
fn hop_value<'v>(view: &GuardView<'v>, read: Read) -> JsValue<'v> {
    match read {
        Read::Text(key) => key
            .read(view)
            .map_or(JsValue::Undefined, |s| JsValue::Str(Cow::Borrowed(s))),
        Read::Number(key) => JsValue::Number(key.read(view)),
    }
}

impl Guard {
    /// Whether a condition on a hop key passes, judged as its [`HopCheck`]
    /// says.
    #[inline]
    fn hop_passes(&self, check: HopCheck, view: &GuardView<'_>) -> bool {
        match check {
            HopCheck::Text {
                key,
                equal,
                expected,
            } => key.read(view).is_some_and(|text| expected.matches(text)) == equal,
            HopCheck::Number {
                key,
                relation,
                bound,
            } => {
                let actual = key.read(view);
                match relation {
                    Relation::Gt => actual > bound,
                    Relation::Gte => actual >= bound,
                    Relation::Lt => actual < bound,
                    Relation::Lte => actual <= bound,
                }
            }
            HopCheck::General(at) => self.general_hop_passes(at, view),
        }
    }

    /// Whether hop condition `at` passes by JavaScript's general rules.
    #[cold]
    fn general_hop_passes(&self, at: usize, view: &GuardView<'_>) -> bool {
        let pair = self.compiled.get(at).zip(self.data.conditions.get(at));
        pair.is_some_and(|(compiled, condition)| match compiled.source {
            Source::Hop(read) => compiled
                .test
                .passes(&condition.value, &hop_value(view, read)),
            Source::Field(_) => false,
        })
    }
}

/// What a field of a result that is not a JSON object reads.
const UNDEFINED: &JsValue<'static> = &JsValue::Undefined;

/// What the result fields a guard reads hold: `fields` the values of its
/// keys when `valid` (the result is a JSON object), else every field reads
/// `undefined`.
struct Reading<'v> {
    fields: Fields<'v>,
    valid: bool,
}

impl<'v> Reading<'v> {
    fn field(&self, slot: usize) -> &JsValue<'v> {
        match self.fields.get(slot) {
            Some(field) if self.valid => field,
            _ => UNDEFINED,
        }
    }
}

impl Guard {
    /// The conditions with their compiled tests.
    fn pairs(&self) -> impl Iterator<Item = (&Compiled, &Condition)> {
        self.compiled.iter().zip(&self.data.conditions)
    }

    /// The predicate: whether every condition passes for this hop.
    ///
    /// Conditions on hop keys are judged first, so a failing one answers
    /// without reading the result; the result is parsed at most once.
    pub fn test(&self, view: &GuardView<'_>) -> bool {
        self.hops.iter().all(|&check| self.hop_passes(check, view))
            && (self.fields.is_empty() || self.fields_pass(view))
    }

    /// Whether every condition on a result field passes, the result read at
    /// most once and judged as it is read, nothing kept but each field's
    /// verdict. The reading stops as soon as a field fails a condition that
    /// `undefined` fails too: the answer is then `false` whether the rest of
    /// the result proves valid or not.
    fn fields_pass(&self, view: &GuardView<'_>) -> bool {
        // Each field's verdict on the value it read last; `None` until read.
        // (Grown in place: `from_elem` builds it elsewhere and copies it.)
        let mut verdicts: SmallVec<[Option<bool>; 4]> = SmallVec::new();
        verdicts.resize(self.fields.len(), None);
        let outcome = self.with_field_keys(|keys| {
            read_fields(view.result, keys, |slot, value| {
                let (passes, settles) = self.field_verdict(slot, &value);
                if let Some(verdict) = verdicts.get_mut(slot) {
                    *verdict = Some(passes);
                }
                settles
            })
        });
        let unread_passes = |slot| self.field_verdict(slot, UNDEFINED).0;
        match outcome {
            Outcome::Decided => false,
            Outcome::NotObject => (0..verdicts.len()).all(unread_passes),
            Outcome::Object => verdicts
                .iter()
                .enumerate()
                .all(|(slot, verdict)| verdict.unwrap_or_else(|| unread_passes(slot))),
        }
    }

    /// Whether `value`, read for field `slot`, passes every condition on
    /// that field; and whether it settles the predicate, by failing a
    /// condition that `undefined` (what every field reads in an invalid
    /// result) fails as well.
    fn field_verdict(&self, slot: usize, value: &JsValue<'_>) -> (bool, bool) {
        let mut passes = true;
        for (c, condition) in self.pairs() {
            if matches!(c.source, Source::Field(at) if at == slot)
                && !c.test.passes(&condition.value, value)
            {
                if !c.test.passes(&condition.value, UNDEFINED) {
                    return (false, true);
                }
                passes = false;
            }
        }
        (passes, false)
    }

    /// `read` given the keys of the result fields the guard reads, by slot:
    /// up to four in an array on the stack (a `SmallVec` built and returned
    /// cost a hundred instructions a call), more in a `Vec`.
    #[inline]
    fn with_field_keys<R>(&self, read: impl FnOnce(&[&str]) -> R) -> R {
        let key = |&at: &usize| self.data.conditions[at].key.as_str();
        match self.fields.len() {
            count @ 0..=4 => {
                let mut keys = [""; 4];
                for (slot, at) in keys.iter_mut().zip(&self.fields) {
                    *slot = key(at);
                }
                read(&keys[..count])
            }
            _ => read(&self.fields.iter().map(key).collect::<Vec<_>>()),
        }
    }

    /// The evaluator: every condition judged, with what it read.
    ///
    /// ```
    /// use serde_json::json;
    /// use skill_core::GuardView;
    /// use skill_guard::Guard;
    ///
    /// let guard = Guard::compile(&json!({ "score": { "gte": 0.8 } }))?;
    /// let evaluation = guard.evaluate(&GuardView::new("score", r#"{"score":0.5}"#));
    /// assert!(!evaluation.verdict);
    /// assert_eq!(evaluation.conditions[0].actual_summary, "0.5");
    /// # Ok::<(), skill_guard::CompileError>(())
    /// ```
    pub fn evaluate<'a>(&'a self, view: &GuardView<'a>) -> Evaluation<'a> {
        // Filled in place: a `Reading` moved is a 144-byte copy.
        let mut reading = Reading {
            fields: Fields::new(),
            valid: false,
        };
        if !self.fields.is_empty() {
            reading.valid = self
                .with_field_keys(|keys| field_values_into(view.result, keys, &mut reading.fields));
        }
        let mut evaluation = Evaluation {
            verdict: true,
            conditions: EvidenceList::new(),
        };
        for (compiled, condition) in self.pairs() {
            let value = &condition.value;
            let (passed, actual_summary) = match compiled.source {
                Source::Field(slot) => {
                    let actual = reading.field(slot);
                    (compiled.test.passes(value, actual), Summary::of(actual))
                }
                Source::Hop(read) => {
                    let actual = hop_value(view, read);
                    (compiled.test.passes(value, &actual), Summary::of(&actual))
                }
            };
            evaluation.verdict &= passed;
            evaluation.conditions.push(ConditionEvidence {
                condition,
                actual_summary,
                passed,
            });
        }
        evaluation
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn view(result: &str) -> GuardView<'_> {
        GuardView::new("lookup_order", result)
            .with_iteration(3.0)
            .with_user_message("m")
    }

    #[test]
    fn predicate_and_evaluator_agree_and_record_every_condition() {
        let guard = Guard::compile(&json!({
            "riskLevel": {"in": ["high", "critical"]},
            "score": {"gte": 0.8},
            "status": {"eq": "success"}
        }))
        .unwrap();
        let hop = view(r#"{"riskLevel":"high","score":0.9}"#).with_status("success");
        assert!(guard.test(&hop));
        let evaluation = guard.evaluate(&hop);
        assert!(evaluation.verdict);
        let low = view(r#"{"riskLevel":"low","score":0.9}"#);
        assert!(!guard.test(&low));
        let evaluation = guard.evaluate(&low);
        assert!(!evaluation.verdict);
        let passed: Vec<_> = evaluation.conditions.iter().map(|c| c.passed).collect();
        assert_eq!(passed, [false, true, false]);
        assert_eq!(evaluation.conditions[2].actual_summary, "undefined");
    }

    #[test]
    fn missing_fields_read_undefined_and_not_in_passes() {
        let guard =
            Guard::compile(&json!({"tier": {"notIn": ["gold"]}, "count": {"ne": 3}})).unwrap();
        for result in ["[1]", "not json", "{}", r#"{"tier":"silver"}"#] {
            assert!(guard.test(&view(result)), "{result}");
        }
        assert!(!guard.test(&view(r#"{"tier":"gold"}"#)));
    }

    #[test]
    fn evidence_serializes_in_the_documented_shape() {
        let guard = Guard::compile(&json!({"iteration": {"lte": 5}})).unwrap();
        let evaluation = guard.evaluate(&view("x"));
        assert_eq!(
            serde_json::to_value(&evaluation).unwrap(),
            json!({"verdict": true, "conditions": [
                {"key": "iteration", "op": "lte", "value": 5, "actual_summary": "3", "passed": true}
            ]})
        );
    }

    #[test]
    fn summaries_of_held_strings_are_borrowed_not_copied() {
        let guard = Guard::compile(&json!({
            "riskLevel": {"eq": "high"},
            "note": {"eq": "x"},
            "toolName": {"ne": "x"},
            "missing": {"ne": 1},
            "score": {"gt": 1}
        }))
        .unwrap();
        let result = r#"{"riskLevel":"high","note":"a\"b","score":0.5}"#;
        let evaluation = guard.evaluate(&view(result));
        let borrowed: Vec<_> = evaluation
            .conditions
            .iter()
            .map(|c| {
                (
                    c.actual_summary.to_string(),
                    match &c.actual_summary.0 {
                        Said::Text(Cow::Borrowed(_)) => "borrowed",
                        Said::Text(Cow::Owned(_)) => "written",
                        Said::Number(_) => "a number",
                    },
                )
            })
            .collect();
        assert_eq!(
            borrowed,
            [
                ("high", "borrowed"),
                ("a\"b", "written"),
                ("lookup_order", "borrowed"),
                ("undefined", "borrowed"),
                ("0.5", "a number")
            ]
            .map(|(text, how)| (text.to_owned(), how)),
            "an escaped string is written and a number kept; the rest are borrowed"
        );
    }

    #[test]
    fn hop_keys_read_the_view() {
        let guard = Guard::compile(&json!({
            "toolName": {"eq": "lookup_order"},
            "userMessage": {"eq": "m"},
            "currentSkillId": {"eq": "triage"},
            "result": {"ne": ""}
        }))
        .unwrap();
        assert!(!guard.test(&view("r")));
        assert!(guard.test(&view("r").with_current_skill("triage")));
    }
}
