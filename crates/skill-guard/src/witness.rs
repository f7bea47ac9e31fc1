//! Witnesses (SPEC §10): for a guard and the setting its route judges it in,
//! a view that passes, a sound proof that none does, or an honest
//! *unknown*; and for each condition a *near miss*, a view that fails that
//! condition alone, or the proof that no view does (the condition can never
//! decide the verdict).
//!
//! The search builds, key by key, the values worth trying (see
//! `candidates`), judges each with the real evaluator, and puts the chosen
//! values together into one view, which the evaluator judges once more: a
//! view this module returns passes (or fails just one condition) by
//! construction. A proof is only claimed where the values tried stand for
//! every value the key can hold, so it never overclaims.

mod candidates;

use candidates::Cover;

use std::fmt;

use skill_core::GuardViewInput;

use crate::compile::Guard;
use crate::data::{Condition, GuardData, GuardValue, Operator};
use crate::js_number::to_js_string;
use crate::unsatisfiable::{Preconditions, Unsatisfiable, unsatisfiable};

/// Where a route judges its guard: the route's preconditions and the skill
/// the cursor stands on. A default setting constrains nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Setting {
    /// The statuses the route fires on (`on_tool_status`): the result must
    /// declare one of them.
    pub statuses: Option<Vec<String>>,
    /// The exact tool the route fires on (`on_tool_return`).
    pub tool: Option<String>,
    /// The skill the cursor stands on (`currentSkillId`), the route's source.
    pub cursor: Option<String>,
}

impl Setting {
    /// The setting of an edge with these preconditions, judged with the
    /// cursor on `cursor`.
    pub fn new(pre: &Preconditions<'_>, cursor: Option<&str>) -> Setting {
        Setting {
            statuses: pre.on_tool_statuses.map(<[String]>::to_vec),
            tool: pre.on_tool_return_exact.map(str::to_owned),
            cursor: cursor.map(str::to_owned),
        }
    }

    /// The preconditions this setting holds, as SPEC §4.5 takes them.
    pub fn preconditions(&self) -> Preconditions<'_> {
        Preconditions {
            on_tool_statuses: self.statuses.as_deref(),
            on_tool_return_exact: self.tool.as_deref(),
        }
    }

    /// Both settings at once, for one result that two routes judge; `None`
    /// when no result meets both (different tools or cursors, or status
    /// lists with nothing in common).
    pub fn joint(&self, other: &Setting) -> Option<Setting> {
        fn both<T: PartialEq + Clone>(a: &Option<T>, b: &Option<T>) -> Option<Option<T>> {
            match (a, b) {
                (Some(x), Some(y)) if x != y => None,
                _ => Some(a.clone().or_else(|| b.clone())),
            }
        }
        let statuses = match (&self.statuses, &other.statuses) {
            (Some(a), Some(b)) => {
                let common: Vec<String> = a.iter().filter(|s| b.contains(s)).cloned().collect();
                if common.is_empty() {
                    return None;
                }
                Some(common)
            }
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        Some(Setting {
            statuses,
            tool: both(&self.tool, &other.tool)?,
            cursor: both(&self.cursor, &other.cursor)?,
        })
    }
}

/// What the search found for a guard in its setting.
#[derive(Debug, Clone, PartialEq)]
pub enum Witness {
    /// A view that passes (the evaluator says so), in the shape `--view`
    /// reads.
    Passes(GuardViewInput),
    /// A proof that no view passes.
    Never(NoWitness),
    /// Neither found: the search did not cover every value.
    Unknown,
}

impl Witness {
    /// The passing view, when one was found.
    pub fn view(&self) -> Option<&GuardViewInput> {
        match self {
            Witness::Passes(view) => Some(view),
            _ => None,
        }
    }
}

/// Why no view passes a guard.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum NoWitness {
    /// A contradiction SPEC §4.5 proves.
    Unsatisfiable(Unsatisfiable),
    /// No value the key can hold, of any type, passes every condition on
    /// it: each kind of value was tried on each side of every constant.
    NoValue {
        /// The key.
        key: String,
    },
    /// The route's `on_tool_status` names no status a tool can declare.
    NoStatus {
        /// The route's statuses.
        statuses: Vec<String>,
    },
    /// The guard allows only a few result texts, and none of them holds
    /// fields that pass the conditions on them.
    ResultTexts {
        /// The result fields the guard also asks about.
        fields: Vec<String>,
    },
    /// The guard compares the whole result with a number, which no JSON
    /// object passes (it reads as NaN), yet asks for fields only an object
    /// holds.
    ResultNotObject {
        /// The result fields the guard also asks about.
        fields: Vec<String>,
    },
}

impl NoWitness {
    /// The stable code: a §4.5 reason's, or `no-value`, `no-status`,
    /// `result-text-excludes-fields`, `result-number-has-no-fields`.
    pub fn code(&self) -> &'static str {
        match self {
            NoWitness::Unsatisfiable(proof) => proof.code(),
            NoWitness::NoValue { .. } => "no-value",
            NoWitness::NoStatus { .. } => "no-status",
            NoWitness::ResultTexts { .. } => "result-text-excludes-fields",
            NoWitness::ResultNotObject { .. } => "result-number-has-no-fields",
        }
    }
}

impl fmt::Display for NoWitness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoWitness::Unsatisfiable(proof) => proof.fmt(f),
            NoWitness::NoValue { key } => write!(
                f,
                "no value {key} can hold passes every condition on it: a missing value, null, booleans, \
                 numbers, texts, lists and objects were each tried on both sides of every value the \
                 conditions name"
            ),
            NoWitness::NoStatus { statuses } => write!(
                f,
                "the route fires only on status [{}], and no tool can declare any of them",
                statuses.join(", ")
            ),
            NoWitness::ResultTexts { fields } => write!(
                f,
                "it allows only the result texts it names, and none of them holds {} as the guard asks",
                fields.join(", ")
            ),
            NoWitness::ResultNotObject { fields } => write!(
                f,
                "it compares the whole result with a number, which a JSON object never passes (it reads \
                 as NaN), yet it asks for {}, which only an object holds",
                fields.join(", ")
            ),
        }
    }
}

/// What stands for one condition of a guard that has a witness.
#[derive(Debug, Clone, PartialEq)]
pub enum NearMiss {
    /// A view that passes every other condition and fails this one.
    Fails(GuardViewInput),
    /// No such view exists: the condition never decides the verdict.
    Redundant(Redundancy),
    /// Neither found.
    Unknown,
}

/// Why a condition never decides its guard's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redundancy {
    /// Whatever passes this other condition (by its index) passes it too.
    By(usize),
    /// Whatever passes these other conditions on the key together passes it
    /// too.
    ByAll(Vec<usize>),
    /// Every value its key can take here passes it (the route's
    /// preconditions, the cursor or the status vocabulary fix the key).
    ByItsKey,
}

/// A guard's witness and, when it has one, each condition's near miss.
#[derive(Debug, Clone, PartialEq)]
pub struct Examination {
    /// The witness, or why there is none.
    pub witness: Witness,
    /// One per condition, in order; empty unless the witness passes.
    pub near_misses: Vec<NearMiss>,
}

/// A view that passes `conditions` (all ANDed, as a guard's) in `setting`,
/// a proof that none does, or unknown.
///
/// ```
/// use serde_json::json;
/// use skill_guard::{witness, Guard, Setting, Witness};
///
/// let guard = Guard::compile(&json!({"score": {"gt": "5", "lt": 3}}))?;
/// let Witness::Passes(view) = witness(guard.data().conditions(), &Setting::default()) else {
///     panic!("a text above \"5\" whose number is below 3 exists");
/// };
/// assert!(guard.test(&view.view()));
/// # Ok::<(), skill_guard::CompileError>(())
/// ```
pub fn witness(conditions: &[Condition], setting: &Setting) -> Witness {
    match proven(conditions, setting) {
        Some(proof) => Witness::Never(proof),
        None => Search::new(conditions, setting).witness(),
    }
}

/// The witness of `conditions` in `setting` and, when there is one, each
/// condition's near miss.
pub fn examine(conditions: &[Condition], setting: &Setting) -> Examination {
    if let Some(proof) = proven(conditions, setting) {
        return Examination {
            witness: Witness::Never(proof),
            near_misses: Vec::new(),
        };
    }
    let search = Search::new(conditions, setting);
    let witness = search.witness();
    let near_misses = match witness {
        Witness::Passes(_) => (0..conditions.len())
            .map(|index| search.near_miss(index))
            .collect(),
        _ => Vec::new(),
    };
    Examination {
        witness,
        near_misses,
    }
}

/// The §4.5 proof, or a route that no declared status can fire.
fn proven(conditions: &[Condition], setting: &Setting) -> Option<NoWitness> {
    let data = GuardData {
        conditions: conditions.into(),
    };
    if let Some(proof) = unsatisfiable(&data, &setting.preconditions()) {
        return Some(NoWitness::Unsatisfiable(proof));
    }
    let statuses = setting.statuses.as_ref()?;
    candidates::statuses(setting)
        .is_empty()
        .then(|| NoWitness::NoStatus {
            statuses: statuses.clone(),
        })
}

/// Where a key's value goes in a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    ToolName,
    Result,
    Status,
    Iteration,
    UserMessage,
    CurrentSkillId,
    Field,
}

impl Slot {
    fn of(key: &str) -> Slot {
        match key {
            "toolName" => Slot::ToolName,
            "result" => Slot::Result,
            "status" => Slot::Status,
            "iteration" => Slot::Iteration,
            "userMessage" => Slot::UserMessage,
            "currentSkillId" => Slot::CurrentSkillId,
            _ => Slot::Field,
        }
    }

    fn is_result_text(self) -> bool {
        matches!(self, Slot::Result | Slot::Field)
    }
}

/// A value a key may hold. Hop keys take texts, numbers (`iteration`) or
/// nothing; a result field takes any JSON value or is missing.
#[derive(Debug, Clone, PartialEq)]
enum Candidate {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    Text(String),
    /// A list of one text, compared as that text and equal to no scalar.
    Array(String),
    Object,
}

impl Candidate {
    /// The value as JSON inside a result text; `None` when missing. A
    /// result can hold ±Infinity (`1e400` reads as Infinity) and `-0`.
    fn json(&self) -> Option<String> {
        let text = |s: &String| serde_json::to_string(s).unwrap_or_default();
        Some(match self {
            Candidate::Undefined => return None,
            Candidate::Null => "null".to_owned(),
            Candidate::Bool(b) => b.to_string(),
            Candidate::Number(n) if n.is_nan() => return None,
            Candidate::Number(n) if n.is_infinite() => {
                if *n > 0.0 { "1e400" } else { "-1e400" }.to_owned()
            }
            Candidate::Number(n) if *n == 0.0 && n.is_sign_negative() => "-0".to_owned(),
            Candidate::Number(n) => to_js_string(*n),
            Candidate::Text(s) => text(s),
            Candidate::Array(s) => format!("[{}]", text(s)),
            Candidate::Object => "{}".to_owned(),
        })
    }

    /// The value put in its hop slot of `view` (a result field is written
    /// into the result text instead).
    fn place(&self, slot: Slot, view: &mut GuardViewInput) {
        let text = match self {
            Candidate::Text(text) => Some(text.clone()),
            _ => None,
        };
        match (slot, text) {
            (Slot::ToolName, Some(text)) => view.tool_name = text,
            (Slot::Result, Some(text)) => view.result = text,
            (Slot::UserMessage, Some(text)) => view.user_message = text,
            (Slot::Status, text) => view.status = text,
            (Slot::CurrentSkillId, text) => view.current_skill_id = text,
            (Slot::Iteration, _) => {
                if let Candidate::Number(n) = self {
                    view.iteration = *n;
                }
            }
            _ => {}
        }
    }
}

/// A result text: a JSON object of the fields that are not missing.
fn object_text<'a>(fields: impl IntoIterator<Item = (&'a str, &'a Candidate)>) -> String {
    let members: Vec<String> = fields
        .into_iter()
        .filter_map(|(key, value)| {
            let value = value.json()?;
            Some(format!("{}:{value}", serde_json::to_string(key).ok()?))
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

/// One key: its conditions, the values tried and how each fared.
struct Table {
    key: String,
    slot: Slot,
    /// Indices of the key's conditions in the guard.
    conditions: Vec<usize>,
    candidates: Vec<Candidate>,
    /// Per candidate, whether each of the key's conditions passed.
    passes: Vec<Vec<bool>>,
    /// For which patterns the candidates stand for every value the key can
    /// hold.
    cover: Cover,
}

impl Table {
    fn new(key: &str, all: &[Condition], setting: &Setting, base: &GuardViewInput) -> Table {
        let slot = Slot::of(key);
        let conditions: Vec<usize> = (0..all.len()).filter(|&i| all[i].key == key).collect();
        let own: Vec<&Condition> = conditions.iter().map(|&i| &all[i]).collect();
        let (candidates, cover) = candidates::candidates(slot, &own, setting);
        let guard = Guard::from_data(&GuardData {
            conditions: own.into_iter().cloned().collect(),
        });
        let passes = candidates
            .iter()
            .map(|candidate| {
                let mut view = base.clone();
                match slot {
                    Slot::Field => view.result = object_text([(key, candidate)]),
                    _ => candidate.place(slot, &mut view),
                }
                let evaluation = guard.evaluate(&view.view());
                evaluation.conditions.iter().map(|c| c.passed).collect()
            })
            .collect();
        Table {
            key: key.to_owned(),
            slot,
            conditions,
            candidates,
            passes,
            cover,
        }
    }

    /// Whether no value of the key does as `wanted` says, given that no
    /// candidate does.
    fn covers(&self, wanted: &[bool]) -> bool {
        match &self.cover {
            Cover::All => true,
            Cover::IfPassing(conditions) => conditions.iter().any(|&at| wanted[at]),
        }
    }

    /// What each of the key's conditions should do: pass, except `target`.
    fn wanted(&self, target: Option<usize>) -> Vec<bool> {
        self.conditions.iter().map(|&i| Some(i) != target).collect()
    }

    /// The candidates whose conditions do as `wanted` says.
    fn matching(&self, wanted: Vec<bool>) -> impl Iterator<Item = &Candidate> {
        self.candidates
            .iter()
            .zip(&self.passes)
            .filter(move |(_, passes)| **passes == wanted)
            .map(|(candidate, _)| candidate)
    }

    /// Why condition `target` (of this key, with no value that fails it
    /// alone) never decides: one other condition that implies it, all of
    /// them together, or the values the key can take.
    fn redundancy(&self, target: usize) -> Redundancy {
        let Some(at) = self.conditions.iter().position(|&i| i == target) else {
            return Redundancy::ByItsKey;
        };
        let others = (0..self.conditions.len()).filter(|&j| j != at);
        let implies = |j: usize| !self.passes.iter().any(|p| p[j] && !p[at]);
        if let Some(j) = others.clone().find(|&j| implies(j)) {
            return Redundancy::By(self.conditions[j]);
        }
        if self.passes.iter().all(|p| p[at]) {
            return Redundancy::ByItsKey;
        }
        Redundancy::ByAll(others.map(|j| self.conditions[j]).collect())
    }
}

/// The outcome of one search for a pattern of passing conditions.
enum Outcome {
    Found(GuardViewInput),
    /// No value of this table's key does as asked (its values are complete).
    NoValue(usize),
    /// The result texts the guard allows hold no fields that do as asked.
    NoText,
    /// The result must read as a number, yet fields need values.
    NotObject,
    Unknown,
}

/// Every key's table for one guard, ready to search.
struct Search<'c> {
    conditions: &'c [Condition],
    guard: Guard,
    tables: Vec<Table>,
    base: GuardViewInput,
}

/// Whitespace JSON allows around a result text, which moves the text in
/// UTF-16 order without changing what it holds.
const PADDING: [(&str, &str); 8] = [
    ("", ""),
    (" ", ""),
    ("\t", ""),
    ("\n", ""),
    ("\r", ""),
    ("", " "),
    ("  ", ""),
    ("\t\t", ""),
];

impl<'c> Search<'c> {
    fn new(conditions: &'c [Condition], setting: &Setting) -> Search<'c> {
        let status = candidates::statuses(setting).into_iter().next();
        let base = GuardViewInput {
            tool_name: setting
                .tool
                .clone()
                .unwrap_or_else(|| "some_tool".to_owned()),
            result: "{}".to_owned(),
            status: match (status, &setting.statuses) {
                (Some(Candidate::Text(status)), Some(_)) => Some(status),
                _ => None,
            },
            iteration: 1.0,
            user_message: String::new(),
            current_skill_id: setting.cursor.clone(),
        };
        let mut keys: Vec<&str> = Vec::new();
        for condition in conditions {
            if !keys.contains(&condition.key.as_str()) {
                keys.push(&condition.key);
            }
        }
        let tables = keys
            .into_iter()
            .map(|key| Table::new(key, conditions, setting, &base))
            .collect();
        let guard = Guard::from_data(&GuardData {
            conditions: conditions.into(),
        });
        Search {
            conditions,
            guard,
            tables,
            base,
        }
    }

    fn witness(&self) -> Witness {
        match self.find(None) {
            Outcome::Found(view) => Witness::Passes(view),
            Outcome::NoValue(table) => Witness::Never(NoWitness::NoValue {
                key: self.tables[table].key.clone(),
            }),
            Outcome::NoText => Witness::Never(NoWitness::ResultTexts {
                fields: self.fields().map(|t| t.key.clone()).collect(),
            }),
            Outcome::NotObject => Witness::Never(NoWitness::ResultNotObject {
                fields: self.fields().map(|t| t.key.clone()).collect(),
            }),
            Outcome::Unknown => Witness::Unknown,
        }
    }

    fn near_miss(&self, index: usize) -> NearMiss {
        match self.find(Some(index)) {
            Outcome::Found(view) => NearMiss::Fails(view),
            Outcome::NoValue(table) => NearMiss::Redundant(self.tables[table].redundancy(index)),
            Outcome::NoText | Outcome::NotObject | Outcome::Unknown => NearMiss::Unknown,
        }
    }

    fn fields(&self) -> impl Iterator<Item = &Table> {
        self.tables.iter().filter(|t| t.slot == Slot::Field)
    }

    /// Whether the `result` key and result fields both have conditions, so
    /// the fields must be read from a text the `result` conditions accept.
    fn coupled(&self) -> bool {
        self.tables.iter().any(|t| t.slot == Slot::Result) && self.fields().next().is_some()
    }

    /// A view where every condition passes except `target`, which fails.
    fn find(&self, target: Option<usize>) -> Outcome {
        let coupled = self.coupled();
        let mut view = self.base.clone();
        let mut fields: Vec<(&str, &Candidate)> = Vec::new();
        for (index, table) in self.tables.iter().enumerate() {
            if coupled && table.slot.is_result_text() {
                continue;
            }
            let wanted = table.wanted(target);
            match table.matching(wanted.clone()).next() {
                Some(value) if table.slot == Slot::Field => fields.push((&table.key, value)),
                Some(value) => value.place(table.slot, &mut view),
                None if table.covers(&wanted) => return Outcome::NoValue(index),
                None => return Outcome::Unknown,
            }
        }
        if coupled {
            match self.coupled_text(&view, target) {
                Outcome::Found(found) => view = found,
                other => return other,
            }
        } else if !fields.is_empty() {
            view.result = object_text(fields);
        }
        if self.shows(&view, target, |_| true) {
            Outcome::Found(view)
        } else {
            Outcome::Unknown
        }
    }

    /// Whether the evaluator judges `view` as the pattern asks, on the
    /// conditions `judged` picks.
    fn shows(
        &self,
        view: &GuardViewInput,
        target: Option<usize>,
        judged: impl Fn(&Condition) -> bool,
    ) -> bool {
        let evaluation = self.guard.evaluate(&view.view());
        evaluation
            .conditions
            .iter()
            .enumerate()
            .filter(|(_, evidence)| judged(evidence.condition))
            .all(|(index, evidence)| evidence.passed == (Some(index) != target))
    }

    /// A result text that both the `result` conditions and the field
    /// conditions judge as the pattern asks: one of the texts tried for
    /// `result`, or an object of the fields' values, padded.
    fn coupled_text(&self, view: &GuardViewInput, target: Option<usize>) -> Outcome {
        let in_text = |c: &Condition| Slot::of(&c.key).is_result_text();
        let mut attempt = view.clone();
        let mut tries = |text: String| {
            attempt.result = text;
            self.shows(&attempt, target, in_text)
                .then(|| attempt.clone())
        };
        let result = self.tables.iter().find(|t| t.slot == Slot::Result);
        if let Some(result) = result {
            for text in result.matching(result.wanted(target)) {
                if let Candidate::Text(text) = text
                    && let Some(found) = tries(text.clone())
                {
                    return Outcome::Found(found);
                }
            }
        }
        let mut choices: Vec<(&str, Vec<&Candidate>)> = Vec::new();
        for (index, table) in self.tables.iter().enumerate() {
            if table.slot != Slot::Field {
                continue;
            }
            let wanted = table.wanted(target);
            let values: Vec<&Candidate> = table.matching(wanted.clone()).take(3).collect();
            if values.is_empty() {
                return if table.covers(&wanted) {
                    Outcome::NoValue(index)
                } else {
                    Outcome::Unknown
                };
            }
            choices.push((&table.key, values));
        }
        for choice in 0..3 {
            let picked = choices
                .iter()
                .map(|(key, values)| (*key, values[choice.min(values.len() - 1)]));
            let text = object_text(picked);
            for (before, after) in PADDING {
                if let Some(found) = tries(format!("{before}{text}{after}")) {
                    return Outcome::Found(found);
                }
            }
        }
        match target {
            None if self.result_is_listed() => Outcome::NoText,
            None if self.result_is_a_number()
                && choices
                    .iter()
                    .any(|(_, v)| !v.contains(&&Candidate::Undefined)) =>
            {
                Outcome::NotObject
            }
            _ => Outcome::Unknown,
        }
    }

    /// Whether the `result` text is compared with a number, which it then
    /// passes only as a number: a JSON object reads as NaN and fails.
    fn result_is_a_number(&self) -> bool {
        self.conditions.iter().any(|c| {
            c.key == "result"
                && c.op.is_bound()
                && matches!(c.value.as_scalar(), Some(GuardValue::Number(_)))
        })
    }

    /// Whether the `result` conditions allow only texts they name (an `eq`
    /// or an `in`), every one of which the search tried.
    fn result_is_listed(&self) -> bool {
        self.conditions
            .iter()
            .any(|c| c.key == "result" && matches!(c.op, Operator::Eq | Operator::In))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn examined(guard: serde_json::Value, setting: &Setting) -> (Guard, Examination) {
        let guard = Guard::compile(&guard).unwrap();
        let examination = examine(guard.data().conditions(), setting);
        (guard, examination)
    }

    fn passes(guard: serde_json::Value) -> GuardViewInput {
        let (compiled, examination) = examined(guard.clone(), &Setting::default());
        let Witness::Passes(view) = examination.witness else {
            panic!(
                "{guard} should have a witness, got {:?}",
                examination.witness
            );
        };
        assert!(compiled.test(&view.view()), "{guard}: {view:?}");
        view
    }

    fn never(guard: serde_json::Value) -> &'static str {
        let (_, examination) = examined(guard.clone(), &Setting::default());
        match examination.witness {
            Witness::Never(proof) => proof.code(),
            other => panic!("{guard} should have no witness, got {other:?}"),
        }
    }

    #[test]
    fn witnesses_follow_javascript_coercion() {
        passes(json!({"score": {"gt": "5", "lt": 3}}));
        passes(json!({"a": {"gt": 1, "lt": 2, "in": [1, 2, "1.5"]}}));
        passes(json!({"n": {"gt": "abc", "lt": "abd"}}));
        passes(json!({"n": {"gt": "😀", "lt": "\u{FFFF}"}}));
        passes(json!({"n": {"gt": "a", "lt": "a\u{0}\u{0}", "ne": "a\u{0}"}}));
        passes(json!({"n": {"notIn": [1, "1", null, true]}, "m": {"in": ["x", 2]}}));
        let view = passes(json!({"toolName": {"eq": "lookup"}, "iteration": {"gt": 2, "lt": 3}}));
        assert_eq!(view.tool_name, "lookup");
        assert!(view.iteration > 2.0 && view.iteration < 3.0);
    }

    #[test]
    fn the_result_text_holds_the_fields_it_is_asked_for() {
        let view = passes(json!({"result": {"lt": "{"}, "a": {"eq": 1}}));
        assert!(
            view.result.starts_with(char::is_whitespace),
            "{}",
            view.result
        );
        passes(json!({"result": {"eq": "{\"a\":2}"}, "a": {"gt": 1}}));
        assert_eq!(
            never(json!({"result": {"in": ["{\"a\":2}", "[]"]}, "a": {"gt": 2}})),
            "result-text-excludes-fields"
        );
    }

    #[test]
    fn proofs_cross_types_only_when_every_type_was_tried() {
        assert_eq!(
            never(json!({"a": {"gt": 1, "lt": 2, "in": [1, 2, "3"]}})),
            "no-value"
        );
        assert_eq!(never(json!({"a": {"eq": 1, "gt": 1}})), "eq-outside-bounds");
        passes(json!({"a": {"gt": 5, "lt": "3"}}));
        assert_eq!(never(json!({"a": {"gt": "b", "lt": "b\u{0}"}})), "no-value");
    }

    #[test]
    fn the_setting_fixes_hop_keys() {
        let setting = Setting {
            statuses: Some(vec!["failure".into()]),
            tool: Some("refund".into()),
            cursor: Some("triage".into()),
        };
        let (guard, examination) = examined(json!({"toolName": {"in": ["refund", "x"]}}), &setting);
        let view = examination.witness.view().cloned().unwrap();
        assert!(guard.test(&view.view()));
        assert_eq!(view.status.as_deref(), Some("failure"));
        assert_eq!(view.current_skill_id.as_deref(), Some("triage"));
        assert_eq!(
            examination.near_misses,
            [NearMiss::Redundant(Redundancy::ByItsKey)]
        );
        let (_, examination) = examined(json!({"currentSkillId": {"ne": "triage"}}), &setting);
        assert_eq!(examination.witness.view(), None);
    }

    #[test]
    fn near_misses_fail_one_condition_or_name_what_implies_it() {
        let (guard, examination) = examined(
            json!({"a": {"gt": 5, "gte": 3}, "b": {"eq": "x"}}),
            &Setting::default(),
        );
        assert_eq!(
            examination.near_misses[1],
            NearMiss::Redundant(Redundancy::By(0))
        );
        for index in [0, 2] {
            let NearMiss::Fails(view) = &examination.near_misses[index] else {
                panic!("condition {index} decides");
            };
            let evaluation = guard.evaluate(&view.view());
            let failed: Vec<usize> = (0..3)
                .filter(|&i| !evaluation.conditions[i].passed)
                .collect();
            assert_eq!(failed, [index]);
        }
    }

    #[test]
    fn joint_settings_meet_or_exclude() {
        let a = Setting {
            statuses: Some(vec!["success".into(), "failure".into()]),
            ..Setting::default()
        };
        let b = Setting {
            statuses: Some(vec!["failure".into()]),
            tool: Some("t".into()),
            cursor: None,
        };
        let joint = a.joint(&b).unwrap();
        assert_eq!(joint.statuses, Some(vec!["failure".into()]));
        assert_eq!(joint.tool.as_deref(), Some("t"));
        let other_tool = Setting {
            tool: Some("u".into()),
            ..Setting::default()
        };
        assert_eq!(b.joint(&other_tool), None);
    }

    #[test]
    fn result_numbers_keep_their_javascript_values() {
        assert_eq!(
            Candidate::Number(f64::INFINITY).json().as_deref(),
            Some("1e400")
        );
        assert_eq!(Candidate::Number(-0.0).json().as_deref(), Some("-0"));
        assert_eq!(Candidate::Number(f64::NAN).json(), None);
        assert_eq!(
            object_text([
                ("a", &Candidate::Array("x".into())),
                ("b", &Candidate::Undefined)
            ]),
            r#"{"a":["x"]}"#
        );
    }
}
