//! What a guard proves wrong: the contradictions the check-up can honestly
//! flag, by its own conditions or against its edge's declared preconditions.
//!
//! Only what the data decides is claimed: same-key contradictions, crossed
//! same-type bounds, `status` values outside the closed vocabulary, and
//! `status`/`toolName` conditions that contradict the edge's own
//! `on_tool_status` / exact `on_tool_return`. Nothing across keys, nothing
//! about result values at run time, nothing across types: a check that
//! overclaims is worse than none.

use std::cmp::Ordering;
use std::fmt;

use skill_core::ResultStatus;

use crate::data::{Condition, ConditionValue, GuardData, GuardValue, Listed, Operator};
use crate::js_value::{Relation, utf16_cmp};

/// An edge's own preconditions, judged together with its guard.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Preconditions<'a> {
    /// The statuses the edge routes on (`on_tool_status`).
    pub on_tool_statuses: Option<&'a [String]>,
    /// The exact tool name the edge routes on (`on_tool_return`; a pattern is
    /// never passed).
    pub on_tool_return_exact: Option<&'a str>,
}

/// A proof that a guard never passes. [`code`](Self::code) is stable; the
/// `Display` sentence says why no value can satisfy it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Unsatisfiable {
    /// `eq v` and `ne v` on one key.
    EqAndNe {
        /// The key.
        key: String,
        /// The value both required and excluded.
        value: GuardValue,
    },
    /// `eq v` and an `in` list without `v`.
    EqNotInList {
        /// The key.
        key: String,
        /// The required value.
        value: GuardValue,
        /// The `in` list.
        list: Vec<GuardValue>,
    },
    /// `eq v` and a `notIn` list with `v`.
    EqExcluded {
        /// The key.
        key: String,
        /// The required value.
        value: GuardValue,
        /// The `notIn` list.
        list: Vec<GuardValue>,
    },
    /// `eq v` outside the key's own ordered bounds.
    EqOutsideBounds {
        /// The key.
        key: String,
        /// The required value.
        value: GuardValue,
        /// The bound it violates.
        bound: (Operator, GuardValue),
    },
    /// The last lower bound lies above the last upper bound.
    CrossedBounds {
        /// The key.
        key: String,
        /// The lower bound (`gt`/`gte` and its value).
        lower: (Operator, GuardValue),
        /// The upper bound (`lt`/`lte` and its value).
        upper: (Operator, GuardValue),
    },
    /// Every `in` member is excluded by the key's `notIn`.
    InExcludedByNotIn {
        /// The key.
        key: String,
    },
    /// `status` must equal a string no tool can declare.
    StatusNotInVocabulary {
        /// The string.
        value: String,
    },
    /// No `status` `in` entry is a status a tool can declare.
    StatusListOutsideVocabulary {
        /// The list.
        list: Vec<GuardValue>,
    },
    /// `status eq` outside the edge's `on_tool_status`.
    PreStatusEq {
        /// The edge's statuses.
        statuses: Vec<String>,
        /// The required status.
        value: GuardValue,
    },
    /// `status in` disjoint from the edge's `on_tool_status`.
    PreStatusIn {
        /// The edge's statuses.
        statuses: Vec<String>,
        /// The `in` list.
        list: Vec<GuardValue>,
    },
    /// `status ne` the edge's only status.
    PreStatusNe {
        /// The edge's one status.
        status: String,
    },
    /// `status notIn` every one of the edge's statuses.
    PreStatusNotIn {
        /// The edge's statuses.
        statuses: Vec<String>,
    },
    /// `toolName eq` another tool than the edge's `on_tool_return`.
    PreToolEq {
        /// The edge's tool.
        tool: String,
        /// The required name.
        value: GuardValue,
    },
    /// `toolName ne` the edge's own tool.
    PreToolNe {
        /// The edge's tool.
        tool: String,
    },
    /// `toolName in` a list without the edge's tool.
    PreToolIn {
        /// The edge's tool.
        tool: String,
        /// The `in` list.
        list: Vec<GuardValue>,
    },
    /// `toolName notIn` a list with the edge's tool.
    PreToolNotIn {
        /// The edge's tool.
        tool: String,
    },
}

impl Unsatisfiable {
    /// The stable reason code (`eq-and-ne`, `crossed-bounds`, …).
    pub fn code(&self) -> &'static str {
        match self {
            Unsatisfiable::EqAndNe { .. } => "eq-and-ne",
            Unsatisfiable::EqNotInList { .. } => "eq-not-in-list",
            Unsatisfiable::EqExcluded { .. } => "eq-excluded",
            Unsatisfiable::EqOutsideBounds { .. } => "eq-outside-bounds",
            Unsatisfiable::CrossedBounds { .. } => "crossed-bounds",
            Unsatisfiable::InExcludedByNotIn { .. } => "in-excluded-by-notin",
            Unsatisfiable::StatusNotInVocabulary { .. } => "status-not-in-vocabulary",
            Unsatisfiable::StatusListOutsideVocabulary { .. } => "status-list-outside-vocabulary",
            Unsatisfiable::PreStatusEq { .. } => "pre-status-eq",
            Unsatisfiable::PreStatusIn { .. } => "pre-status-in",
            Unsatisfiable::PreStatusNe { .. } => "pre-status-ne",
            Unsatisfiable::PreStatusNotIn { .. } => "pre-status-notin",
            Unsatisfiable::PreToolEq { .. } => "pre-tool-eq",
            Unsatisfiable::PreToolNe { .. } => "pre-tool-ne",
            Unsatisfiable::PreToolIn { .. } => "pre-tool-in",
            Unsatisfiable::PreToolNotIn { .. } => "pre-tool-notin",
        }
    }

    /// The key the proof is about.
    pub fn key(&self) -> &str {
        match self {
            Unsatisfiable::EqAndNe { key, .. }
            | Unsatisfiable::EqNotInList { key, .. }
            | Unsatisfiable::EqExcluded { key, .. }
            | Unsatisfiable::EqOutsideBounds { key, .. }
            | Unsatisfiable::CrossedBounds { key, .. }
            | Unsatisfiable::InExcludedByNotIn { key } => key,
            Unsatisfiable::StatusNotInVocabulary { .. }
            | Unsatisfiable::StatusListOutsideVocabulary { .. }
            | Unsatisfiable::PreStatusEq { .. }
            | Unsatisfiable::PreStatusIn { .. }
            | Unsatisfiable::PreStatusNe { .. }
            | Unsatisfiable::PreStatusNotIn { .. } => "status",
            Unsatisfiable::PreToolEq { .. }
            | Unsatisfiable::PreToolNe { .. }
            | Unsatisfiable::PreToolIn { .. }
            | Unsatisfiable::PreToolNotIn { .. } => "toolName",
        }
    }
}

impl fmt::Display for Unsatisfiable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let statuses = ResultStatus::listed();
        match self {
            Unsatisfiable::EqAndNe { key, value } => {
                write!(
                    f,
                    "it asks {key} to be {value} and also not to be {value}; no value is both"
                )
            }
            Unsatisfiable::EqNotInList { key, value, list } => {
                let list = Listed(list);
                write!(
                    f,
                    "it asks {key} to be {value} and to be one of {list}, which leaves {value} out"
                )
            }
            Unsatisfiable::EqExcluded { key, value, list } => {
                let list = Listed(list);
                write!(
                    f,
                    "it asks {key} to be {value} while its notIn list {list} rules {value} out"
                )
            }
            Unsatisfiable::EqOutsideBounds {
                key,
                value,
                bound: (op, limit),
            } => write!(
                f,
                "it asks {key} to be {value}, which breaks its own bound {key} {} {limit}",
                op.symbol()
            ),
            Unsatisfiable::CrossedBounds {
                key,
                lower: (lo_op, lo),
                upper: (up_op, up),
            } => write!(
                f,
                "its bounds on {key} cross: {key} {} {lo} and {key} {} {up} leave no value between them",
                lo_op.symbol(),
                up_op.symbol()
            ),
            Unsatisfiable::InExcludedByNotIn { key } => {
                write!(
                    f,
                    "every value its in list allows for {key} is ruled out by its notIn list"
                )
            }
            Unsatisfiable::StatusNotInVocabulary { value } => write!(
                f,
                "it asks status to be \"{value}\", which no tool can declare (a status is one of: {statuses})"
            ),
            Unsatisfiable::StatusListOutsideVocabulary { list } => write!(
                f,
                "none of the statuses it allows, {}, is one a tool can declare (a status is one of: {statuses})",
                Listed(list)
            ),
            Unsatisfiable::PreStatusEq {
                statuses: on,
                value,
            } => write!(
                f,
                "the route fires only on status [{}], yet its guard asks status to be {value}",
                on.join(", ")
            ),
            Unsatisfiable::PreStatusIn { statuses: on, list } => write!(
                f,
                "the route fires only on status [{}], yet its guard allows only status {}, which shares none of them",
                on.join(", "),
                Listed(list)
            ),
            Unsatisfiable::PreStatusNe { status } => write!(
                f,
                "the route fires only on status {status}, yet its guard asks status not to be {status}"
            ),
            Unsatisfiable::PreStatusNotIn { statuses: on } => write!(
                f,
                "the route fires only on status [{}], yet its guard's notIn list rules out every one of them",
                on.join(", ")
            ),
            Unsatisfiable::PreToolEq { tool, value } => write!(
                f,
                "the route fires only when {tool} returns, yet its guard asks toolName to be {value}"
            ),
            Unsatisfiable::PreToolNe { tool } => write!(
                f,
                "the route fires only when {tool} returns, yet its guard asks toolName not to be {tool}"
            ),
            Unsatisfiable::PreToolIn { tool, list } => write!(
                f,
                "the route fires only when {tool} returns, yet its guard allows only toolName {}, which leaves {tool} out",
                Listed(list)
            ),
            Unsatisfiable::PreToolNotIn { tool } => write!(
                f,
                "the route fires only when {tool} returns, yet its guard's toolName notIn list rules {tool} out"
            ),
        }
    }
}

/// Same-type order; `None` across types (JavaScript coercion is no proof).
fn ordered(a: &GuardValue, b: &GuardValue) -> Option<Ordering> {
    match (a, b) {
        (GuardValue::Number(x), GuardValue::Number(y)) => x.partial_cmp(y),
        (GuardValue::String(x), GuardValue::String(y)) => Some(utf16_cmp(x, y)),
        _ => None,
    }
}

/// The first ordered bound among `conditions` that `value` violates:
/// `Some(Some(bound))` proven, `Some(None)` satisfied, `None` undecidable (a
/// bound of another type stops the walk).
fn violated_bound<'c>(
    value: &GuardValue,
    conditions: &[&'c Condition],
) -> Option<Option<&'c Condition>> {
    for condition in conditions {
        let Some(relation) = Relation::of(condition.op) else {
            continue;
        };
        let ordering = ordered(value, condition.value.as_scalar()?)?;
        if !relation.holds(ordering) {
            return Some(Some(condition));
        }
    }
    Some(None)
}

/// Whether a lower and an upper bound of one type leave no value between
/// them: some value passes both only if each bound's own value passes the
/// other bound.
fn crossed(lower: &Condition, upper: &Condition) -> bool {
    let bounds = lower.value.as_scalar().zip(upper.value.as_scalar());
    let relations = Relation::of(lower.op).zip(Relation::of(upper.op));
    match (bounds.and_then(|(lo, up)| ordered(lo, up)), relations) {
        (Some(ordering), Some((above, below))) => {
            !(below.holds(ordering) && above.holds(ordering.reverse()))
        }
        _ => false,
    }
}

fn scalar_of(condition: &Condition) -> (Operator, GuardValue) {
    (
        condition.op,
        condition
            .value
            .as_scalar()
            .cloned()
            .unwrap_or(GuardValue::Null),
    )
}

/// The first contradiction this guard provably holds, by its own conditions
/// (keys in order of first appearance) and then against `pre`; `None` when
/// nothing can be proven.
///
/// ```
/// use serde_json::json;
/// use skill_guard::{unsatisfiable, Guard, Preconditions};
///
/// let guard = Guard::compile(&json!({"score": {"gt": 5, "lt": 3}}))?;
/// let proof = unsatisfiable(guard.data(), &Preconditions::default()).expect("crossed");
/// assert_eq!((proof.code(), proof.key()), ("crossed-bounds", "score"));
/// # Ok::<(), skill_guard::CompileError>(())
/// ```
pub fn unsatisfiable(data: &GuardData, pre: &Preconditions<'_>) -> Option<Unsatisfiable> {
    let mut keys: Vec<&str> = Vec::new();
    for condition in &data.conditions {
        if !keys.contains(&condition.key.as_str()) {
            keys.push(&condition.key);
        }
    }
    keys.into_iter()
        .find_map(|key| by_own_conditions(data, key))
        .or_else(|| against_statuses(data, pre))
        .or_else(|| against_tool(data, pre))
}

/// The first contradiction among the conditions on `key`, in the SPEC's
/// order of reasons.
fn by_own_conditions(data: &GuardData, key: &str) -> Option<Unsatisfiable> {
    let on = OnKey::new(data, key);
    on.against_eq()
        .or_else(|| on.crossed_bounds())
        .or_else(|| on.in_excluded_by_not_in())
        .or_else(|| on.outside_vocabulary())
}

/// The conditions on one key, with the first of each unordered operator
/// picked out (the SPEC judges only the first `eq`, `ne`, `in`, `notIn`).
struct OnKey<'d> {
    key: &'d str,
    conditions: Vec<&'d Condition>,
    eq: Option<&'d GuardValue>,
    ne: Option<&'d GuardValue>,
    in_list: Option<&'d [GuardValue]>,
    not_in: Option<&'d [GuardValue]>,
}

impl<'d> OnKey<'d> {
    fn new(data: &'d GuardData, key: &'d str) -> Self {
        let conditions: Vec<&Condition> = data.conditions_on(key).collect();
        let first = |op: Operator| conditions.iter().find(|c| c.op == op).map(|c| &c.value);
        OnKey {
            key,
            eq: first(Operator::Eq).and_then(ConditionValue::as_scalar),
            ne: first(Operator::Ne).and_then(ConditionValue::as_scalar),
            in_list: first(Operator::In).and_then(ConditionValue::as_list),
            not_in: first(Operator::NotIn).and_then(ConditionValue::as_list),
            conditions,
        }
    }

    /// `eq v` against the key's `ne`, `in`, `notIn` and ordered bounds.
    fn against_eq(&self) -> Option<Unsatisfiable> {
        let value = self.eq?;
        let (key, owned) = (self.key.to_owned(), value.clone());
        if self.ne.is_some_and(|other| other.strict_equals(value)) {
            return Some(Unsatisfiable::EqAndNe { key, value: owned });
        }
        if let Some(list) = self.in_list.filter(|list| !contains(list, value)) {
            let list = list.to_vec();
            return Some(Unsatisfiable::EqNotInList {
                key,
                value: owned,
                list,
            });
        }
        if let Some(list) = self.not_in.filter(|list| contains(list, value)) {
            let list = list.to_vec();
            return Some(Unsatisfiable::EqExcluded {
                key,
                value: owned,
                list,
            });
        }
        let bound = violated_bound(value, &self.conditions)??;
        Some(Unsatisfiable::EqOutsideBounds {
            key,
            value: owned,
            bound: scalar_of(bound),
        })
    }

    /// The last lower bound against the last upper bound.
    fn crossed_bounds(&self) -> Option<Unsatisfiable> {
        let last = |lower: bool| {
            self.conditions.iter().rev().find(|c| match c.op {
                Operator::Gt | Operator::Gte => lower,
                Operator::Lt | Operator::Lte => !lower,
                _ => false,
            })
        };
        let (lower, upper) = (last(true)?, last(false)?);
        crossed(lower, upper).then(|| Unsatisfiable::CrossedBounds {
            key: self.key.to_owned(),
            lower: scalar_of(lower),
            upper: scalar_of(upper),
        })
    }

    /// Every `in` member excluded by `notIn`.
    fn in_excluded_by_not_in(&self) -> Option<Unsatisfiable> {
        let (in_list, not_in) = (self.in_list?, self.not_in?);
        in_list
            .iter()
            .all(|member| contains(not_in, member))
            .then(|| Unsatisfiable::InExcludedByNotIn {
                key: self.key.to_owned(),
            })
    }

    /// `status` asked to be, or to be one of, what no tool can declare.
    fn outside_vocabulary(&self) -> Option<Unsatisfiable> {
        if self.key != "status" {
            return None;
        }
        if let Some(GuardValue::String(value)) = self.eq
            && !ResultStatus::is_status(value)
        {
            return Some(Unsatisfiable::StatusNotInVocabulary {
                value: value.to_string(),
            });
        }
        let list = self.in_list?;
        let any_status = list
            .iter()
            .any(|member| member.as_str().is_some_and(ResultStatus::is_status));
        (!any_status).then(|| Unsatisfiable::StatusListOutsideVocabulary {
            list: list.to_vec(),
        })
    }
}

/// Whether `list` holds `value` (SameValueZero, which for JSON data is
/// strict equality).
fn contains(list: &[GuardValue], value: &GuardValue) -> bool {
    list.iter().any(|member| member.strict_equals(value))
}

fn holds_str(list: &[String], value: &GuardValue) -> bool {
    value
        .as_str()
        .is_some_and(|text| list.iter().any(|member| member == text))
}

fn against_statuses(data: &GuardData, pre: &Preconditions<'_>) -> Option<Unsatisfiable> {
    let statuses = pre.on_tool_statuses?;
    data.conditions_on("status").find_map(|condition| {
        let owned = || statuses.to_vec();
        match (&condition.op, &condition.value) {
            (Operator::Eq, ConditionValue::Scalar(value)) if !holds_str(statuses, value) => {
                Some(Unsatisfiable::PreStatusEq {
                    statuses: owned(),
                    value: value.clone(),
                })
            }
            (Operator::In, ConditionValue::List(list))
                if !list.iter().any(|v| holds_str(statuses, v)) =>
            {
                Some(Unsatisfiable::PreStatusIn {
                    statuses: owned(),
                    list: list.to_vec(),
                })
            }
            (Operator::Ne, ConditionValue::Scalar(value))
                if statuses.len() == 1 && value.as_str() == Some(statuses[0].as_str()) =>
            {
                Some(Unsatisfiable::PreStatusNe {
                    status: statuses[0].clone(),
                })
            }
            (Operator::NotIn, _)
                if statuses
                    .iter()
                    .all(|s| condition.value.list_holds(&GuardValue::from(s.as_str()))) =>
            {
                Some(Unsatisfiable::PreStatusNotIn { statuses: owned() })
            }
            _ => None,
        }
    })
}

fn against_tool(data: &GuardData, pre: &Preconditions<'_>) -> Option<Unsatisfiable> {
    let tool = pre.on_tool_return_exact?;
    let named = GuardValue::from(tool);
    data.conditions_on("toolName").find_map(|condition| {
        let tool = tool.to_owned();
        match (&condition.op, &condition.value) {
            (Operator::Eq, ConditionValue::Scalar(value)) if !value.strict_equals(&named) => {
                Some(Unsatisfiable::PreToolEq {
                    tool,
                    value: value.clone(),
                })
            }
            (Operator::Ne, ConditionValue::Scalar(value)) if value.strict_equals(&named) => {
                Some(Unsatisfiable::PreToolNe { tool })
            }
            (Operator::In, ConditionValue::List(list)) if !contains(list, &named) => {
                Some(Unsatisfiable::PreToolIn {
                    tool,
                    list: list.to_vec(),
                })
            }
            (Operator::NotIn, _) if condition.value.list_holds(&named) => {
                Some(Unsatisfiable::PreToolNotIn { tool })
            }
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Guard;

    fn proof(guard: serde_json::Value, pre: Preconditions<'_>) -> Option<(&'static str, String)> {
        let guard = Guard::compile(&guard).unwrap();
        unsatisfiable(guard.data(), &pre).map(|p| (p.code(), p.key().to_owned()))
    }

    fn code(guard: serde_json::Value) -> Option<&'static str> {
        proof(guard, Preconditions::default()).map(|(code, _)| code)
    }

    #[test]
    fn own_contradictions() {
        assert_eq!(code(json!({"a": {"eq": 1, "ne": 1}})), Some("eq-and-ne"));
        assert_eq!(
            code(json!({"a": {"eq": 1, "in": [2, "1"]}})),
            Some("eq-not-in-list")
        );
        assert_eq!(
            code(json!({"a": {"eq": 1, "notIn": [1]}})),
            Some("eq-excluded")
        );
        assert_eq!(
            code(json!({"a": {"eq": 1, "gt": 1}})),
            Some("eq-outside-bounds")
        );
        assert_eq!(
            code(json!({"a": {"gte": 5, "lt": 5}})),
            Some("crossed-bounds")
        );
        assert_eq!(
            code(json!({"a": {"gte": "b", "lte": "a"}})),
            Some("crossed-bounds")
        );
        assert_eq!(
            code(json!({"a": {"in": [1, 2], "notIn": [2, 1, 3]}})),
            Some("in-excluded-by-notin")
        );
        assert_eq!(
            code(json!({"status": {"eq": "ok"}})),
            Some("status-not-in-vocabulary")
        );
        assert_eq!(
            code(json!({"status": {"in": ["ok", 1]}})),
            Some("status-list-outside-vocabulary")
        );
    }

    #[test]
    fn nothing_is_claimed_across_types_or_keys() {
        assert_eq!(code(json!({"a": {"gte": 5, "lte": "1"}})), None);
        assert_eq!(
            code(json!({"a": {"eq": "x", "gt": 1, "lt": "a"}})),
            None,
            "the walk stops at the first other-typed bound"
        );
        assert_eq!(code(json!({"a": {"eq": 1}, "b": {"ne": 1}})), None);
        assert_eq!(code(json!({"a": {"gte": 5, "lte": 5}})), None);
        assert_eq!(
            code(json!({"a": {"gt": 1, "gte": 9, "lt": 5}})),
            Some("crossed-bounds"),
            "the last lower bound counts"
        );
        assert_eq!(code(json!({"a": {"gte": 9, "gt": 1, "lt": 5}})), None);
    }

    #[test]
    fn preconditions_contradicted() {
        let one = ["pending".to_owned()];
        let two = ["pending".to_owned(), "failure".to_owned()];
        let pre = |statuses: &'static [String]| Preconditions {
            on_tool_statuses: Some(statuses),
            on_tool_return_exact: None,
        };
        let one: &'static [String] = Box::leak(Box::new(one));
        let two: &'static [String] = Box::leak(Box::new(two));
        assert_eq!(
            proof(json!({"status": {"eq": "success"}}), pre(one)),
            Some(("pre-status-eq", "status".into()))
        );
        assert_eq!(
            proof(json!({"status": {"in": ["success"]}}), pre(two)).map(|p| p.0),
            Some("pre-status-in")
        );
        assert_eq!(
            proof(json!({"status": {"ne": "pending"}}), pre(one)).map(|p| p.0),
            Some("pre-status-ne")
        );
        assert_eq!(proof(json!({"status": {"ne": "pending"}}), pre(two)), None);
        assert_eq!(
            proof(
                json!({"status": {"notIn": ["failure", "pending"]}}),
                pre(two)
            )
            .map(|p| p.0),
            Some("pre-status-notin")
        );
        let tool = |name: &'static str| Preconditions {
            on_tool_statuses: None,
            on_tool_return_exact: Some(name),
        };
        assert_eq!(
            proof(json!({"toolName": {"eq": "a"}}), tool("b")),
            Some(("pre-tool-eq", "toolName".into()))
        );
        assert_eq!(
            proof(json!({"toolName": {"ne": "b"}}), tool("b")).map(|p| p.0),
            Some("pre-tool-ne")
        );
        assert_eq!(
            proof(json!({"toolName": {"in": ["a"]}}), tool("b")).map(|p| p.0),
            Some("pre-tool-in")
        );
        assert_eq!(
            proof(json!({"toolName": {"notIn": ["b"]}}), tool("b")).map(|p| p.0),
            Some("pre-tool-notin")
        );
        assert_eq!(proof(json!({"toolName": {"eq": "b"}}), tool("b")), None);
    }

    #[test]
    fn list_reasons_carry_the_list() {
        let guard = Guard::compile(&json!({"a": {"eq": 1, "in": [2, "1"]}})).unwrap();
        let proof = unsatisfiable(guard.data(), &Preconditions::default()).unwrap();
        assert_eq!(
            proof,
            Unsatisfiable::EqNotInList {
                key: "a".into(),
                value: GuardValue::Number(1.0),
                list: vec![GuardValue::Number(2.0), GuardValue::from("1")],
            }
        );
        assert_eq!(
            proof.to_string(),
            "it asks a to be 1 and to be one of [2, 1], which leaves 1 out"
        );
    }

    #[test]
    fn sentences_name_the_key_and_values() {
        let guard = Guard::compile(&json!({"score": {"gt": 5, "lt": 3}})).unwrap();
        let text = unsatisfiable(guard.data(), &Preconditions::default())
            .unwrap()
            .to_string();
        assert_eq!(
            text,
            "its bounds on score cross: score > 5 and score < 3 leave no value between them"
        );
    }
}
