//! The laws of guards, as properties: the predicate and the evaluator always
//! agree; a guard proven unsatisfiable passes no view sampled around its own
//! constants; compiling never panics on any JSON value; evaluating never
//! panics on any result text.

mod generators;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::{Map, Value, json};
use skill_core::{GuardView, ResultStatus};
use skill_guard::{Guard, GuardData, GuardValue, Preconditions, unsatisfiable};

/// Keys a generated guard reads: hop keys, result fields, an index-like key.
const KEYS: [&str; 8] = [
    "toolName",
    "status",
    "iteration",
    "userMessage",
    "riskLevel",
    "score",
    "3",
    "note",
];

/// Strings a generated scalar may be.
const STRINGS: [&str; 12] = [
    "",
    "a",
    "b",
    "high",
    "low",
    "5",
    " 3 ",
    "success",
    "pending",
    "0x1f",
    "\u{1f600}",
    "\u{ff5e}",
];

fn scalar() -> impl Strategy<Value = Value> {
    generators::scalar(&STRINGS)
}

/// A guard that compiles: one to three keys, one to three operators each.
fn guard() -> impl Strategy<Value = Value> {
    generators::guard(&KEYS, &STRINGS)
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        scalar(),
        ".*".prop_map(Value::String),
        any::<f64>().prop_map(|n| json!(n))
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        prop::sample::select(KEYS.to_vec()).prop_map(str::to_owned),
                        ".{0,6}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// A hop view with these field values (a missing one is absent).
#[derive(Debug, Clone)]
struct Hop {
    tool_name: String,
    status: Option<String>,
    iteration: f64,
    user_message: String,
    result: String,
}

impl Hop {
    fn view(&self) -> GuardView<'_> {
        GuardView {
            tool_name: &self.tool_name,
            result: &self.result,
            status: self.status.as_deref(),
            iteration: self.iteration,
            user_message: &self.user_message,
            current_skill_id: Some("triage"),
        }
    }
}

/// Values near a guard constant: the constant, its neighbours, other types.
fn around(value: &GuardValue) -> Vec<Value> {
    let mut near = vec![Value::Null, json!(true), json!(false), json!(0), json!("")];
    match value {
        GuardValue::Number(n) => near.extend([
            json!(n),
            json!(n - 1.0),
            json!(n + 1.0),
            json!(n + 0.5),
            json!(n.to_string()),
        ]),
        GuardValue::String(s) => near.extend([
            json!(s),
            json!(format!("{s}a")),
            json!(s.chars().rev().collect::<String>()),
            json!([s]),
        ]),
        GuardValue::Bool(b) => near.push(json!(b)),
        GuardValue::Null => {}
    }
    near
}

fn hop_strategy(
    guard: &Guard,
    pre_statuses: Option<Vec<String>>,
    pre_tool: Option<String>,
) -> impl Strategy<Value = Hop> {
    let mut candidates: Vec<(String, Vec<Value>)> = Vec::new();
    for c in guard.data().conditions() {
        let values: Vec<Value> = match &c.value {
            skill_guard::ConditionValue::Scalar(v) => around(v),
            skill_guard::ConditionValue::List(list) => list.iter().flat_map(around).collect(),
        };
        match candidates.iter_mut().find(|(key, _)| *key == c.key) {
            Some((_, known)) => known.extend(values),
            None => candidates.push((c.key.to_string(), values)),
        }
    }
    let picks: Vec<BoxedStrategy<Option<Value>>> = candidates
        .iter()
        .map(|(_, values)| {
            prop_oneof![1 => Just(None), 6 => prop::sample::select(values.clone()).prop_map(Some)]
                .boxed()
        })
        .collect();
    let keys: Vec<String> = candidates.into_iter().map(|(key, _)| key).collect();
    let statuses: Vec<String> =
        pre_statuses.unwrap_or_else(|| ResultStatus::ALL.iter().map(|s| s.to_string()).collect());
    (picks, prop::sample::select(statuses), any::<bool>()).prop_map(
        move |(picked, status, keep_status)| {
            let mut hop = Hop {
                tool_name: pre_tool.clone().unwrap_or_else(|| "lookup_order".into()),
                status: keep_status.then_some(status),
                iteration: 3.0,
                user_message: "m".into(),
                result: String::new(),
            };
            let mut fields = Map::new();
            for (key, value) in keys.iter().zip(picked) {
                let Some(value) = value else { continue };
                match key.as_str() {
                    "toolName" if pre_tool.is_none() => {
                        hop.tool_name = value.as_str().unwrap_or("lookup_order").into()
                    }
                    "status" if hop.status.is_some() && value.is_string() => {
                        // Only statuses the edge routes on, when it declares some.
                        if let Some(s) = value.as_str().filter(|s| ResultStatus::is_status(s)) {
                            hop.status = Some(s.into());
                        }
                    }
                    "iteration" => hop.iteration = value.as_f64().unwrap_or(hop.iteration),
                    "userMessage" => hop.user_message = value.as_str().unwrap_or("m").into(),
                    "toolName" | "status" => {}
                    _ => {
                        fields.insert(key.clone(), value);
                    }
                }
            }
            hop.result = Value::Object(fields).to_string();
            hop
        },
    )
}

/// How a member's key is spelt in a written result: as it is, or with its
/// first letter escaped (`"\u0072iskLevel"`), which reads as the same key.
fn spelt(key: &str, escaped: bool) -> String {
    match key.chars().next() {
        Some(first) if escaped => format!(
            "\"\\u{:04x}{}\"",
            u32::from(first),
            &key[first.len_utf8()..]
        ),
        _ => Value::from(key).to_string(),
    }
}

/// A guard, and a result text written member by member for it: its keys
/// (and one it does not read) with its own constants as values, so members
/// often pass and fail its conditions. A key can come twice (the last
/// wins), be spelt with an escape, sit beside a nested value, or be
/// followed by text that makes the whole result invalid.
fn guard_and_written_result() -> impl Strategy<Value = (Value, String)> {
    guard().prop_flat_map(|guard| {
        let Value::Object(keys) = &guard else {
            unreachable!("generated guards are objects")
        };
        let mut names: Vec<String> = keys.keys().cloned().collect();
        names.push("other".to_owned());
        let mut constants = vec![Value::Null, json!("x"), json!({ "a": [1, "}"] })];
        for value in keys
            .values()
            .filter_map(Value::as_object)
            .flat_map(Map::values)
        {
            match value {
                Value::Array(list) => constants.extend(list.iter().cloned()),
                scalar => constants.push(scalar.clone()),
            }
        }
        let member = (
            prop::sample::select(names),
            any::<bool>(),
            prop::sample::select(constants),
        );
        let ending = prop::sample::select(vec!["}", "}", "}", "", ",}", "} x", "}}"]);
        let written = (prop::collection::vec(member, 0..6), ending, any::<bool>()).prop_map(
            |(members, ending, spaced)| {
                let gap = if spaced { " " } else { "" };
                let members: Vec<String> = members
                    .iter()
                    .map(|(key, escaped, value)| {
                        format!("{gap}{}{gap}:{gap}{value}", spelt(key, *escaped))
                    })
                    .collect();
                format!("{{{}{ending}", members.join(","))
            },
        );
        (Just(guard), written)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The predicate may stop reading a result once a field settles its
    /// answer; written results with repeated, escaped and invalid parts are
    /// where stopping early could go wrong.
    #[test]
    fn predicate_and_evaluator_agree_on_written_results((guard, result) in guard_and_written_result(), iteration in -2.0f64..9.0) {
        let guard = Guard::compile(&guard).expect("generated guards compile");
        let view = GuardView::new("lookup_order", &result).with_status("success").with_iteration(iteration);
        prop_assert_eq!(guard.test(&view), guard.evaluate(&view).verdict, "{}", result);
    }

    #[test]
    fn predicate_and_evaluator_always_agree(guard in guard(), result in prop_oneof![any_json().prop_map(|v| v.to_string()), ".*"], status in prop::option::of("success|failure|x"), iteration in -2.0f64..9.0) {
        let guard = Guard::compile(&guard).expect("generated guards compile");
        let view = GuardView { tool_name: "lookup_order", result: &result, status: status.as_deref(), iteration, user_message: "m", current_skill_id: None };
        let evaluation = guard.evaluate(&view);
        prop_assert_eq!(guard.test(&view), evaluation.verdict);
        prop_assert_eq!(evaluation.verdict, evaluation.conditions.iter().all(|c| c.passed));
        prop_assert_eq!(evaluation.conditions.len(), guard.data().conditions().len());
    }

    #[test]
    fn data_round_trips_through_its_json_form_and_its_record(guard in guard(), result in any_json().prop_map(|v| v.to_string())) {
        let guard = Guard::compile(&guard).expect("generated guards compile");
        let data = guard.data();
        let again = Guard::compile(&data.to_json()).expect("the JSON form of data compiles");
        prop_assert_eq!(again.data(), data);
        let rebuilt = Guard::from_data(data);
        let view = GuardView::new("lookup_order", &result).with_status("success").with_iteration(3.0);
        prop_assert_eq!(rebuilt.evaluate(&view), again.evaluate(&view));
        prop_assert_eq!(rebuilt.test(&view), guard.test(&view));
        let recorded = serde_json::to_string(data).expect("data serializes");
        let read: GuardData = serde_json::from_str(&recorded).expect("a recorded guard reads back");
        prop_assert_eq!(&read, data);
    }

    #[test]
    fn compile_never_panics(value in any_json()) {
        let wrapped = json!({ "key": value.clone() });
        let _ = Guard::compile(&value);
        let _ = Guard::compile(&wrapped);
    }

    #[test]
    fn evaluation_never_panics_on_any_result_text(guard in guard(), result in prop_oneof![".*", any_json().prop_map(|v| v.to_string()), "[\\[\\]{}\",:0-9a-z\\\\ ]{0,40}"]) {
        let guard = Guard::compile(&guard).expect("generated guards compile");
        let view = GuardView::new("t", &result);
        let _ = guard.evaluate(&view);
        let _ = guard.test(&view);
    }
}

/// A proven-unsatisfiable guard (with its edge's preconditions) passes no
/// sampled view that meets those preconditions.
#[test]
fn a_proven_unsatisfiable_guard_passes_no_sampled_view() {
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config {
        cases: 2048,
        ..Config::default()
    });
    let pre = (
        prop::option::of(prop::collection::vec(
            prop::sample::select(
                ResultStatus::ALL
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>(),
            ),
            1..3,
        )),
        prop::option::of(prop::sample::select(vec![
            "lookup_order".to_owned(),
            "a".to_owned(),
            "high".to_owned(),
        ])),
    );
    let proven = std::cell::Cell::new(0);
    runner
        .run(&(guard(), pre), |(guard, (statuses, tool))| {
            let guard = Guard::compile(&guard).expect("generated guards compile");
            let pre = Preconditions {
                on_tool_statuses: statuses.as_deref(),
                on_tool_return_exact: tool.as_deref(),
            };
            let Some(proof) = unsatisfiable(guard.data(), &pre) else {
                return Ok(());
            };
            proven.set(proven.get() + 1);
            let mut sampler = TestRunner::deterministic();
            let hops = hop_strategy(&guard, statuses.clone(), tool.clone());
            for _ in 0..64 {
                let hop = hops.new_tree(&mut sampler).expect("hop").current();
                if let (Some(on), Some(status)) = (&statuses, &hop.status)
                    && !on.contains(status)
                {
                    continue;
                }
                if statuses.is_some() && hop.status.is_none() {
                    continue;
                }
                prop_assert!(
                    !guard.test(&hop.view()),
                    "{} ({}) yet passed {:?} / {:?}",
                    proof.code(),
                    proof,
                    hop.result,
                    hop.status
                );
            }
            Ok(())
        })
        .unwrap();
    let proven = proven.get();
    assert!(
        proven > 50,
        "only {proven} generated guards were proven unsatisfiable; the law was barely exercised"
    );
}
