//! Guard generators the property tests share: scalars, conditions and
//! whole guards that compile, over the keys and strings each test chooses.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// A JSON scalar: null, a boolean, a small or edge-case number, or one of
/// `strings`.
pub fn scalar(strings: &[&'static str]) -> impl Strategy<Value = Value> + Clone + use<> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i32..4).prop_map(|n| json!(n)),
        prop::sample::select(vec![0.5, -0.0, 1e21, 2.5]).prop_map(|n| json!(n)),
        prop::sample::select(strings.to_vec()).prop_map(|s| json!(s)),
    ]
}

/// One operator with a value it accepts (a number or string bound for the
/// ordered ones, a non-empty list for `in`/`notIn`).
pub fn condition(strings: &[&'static str]) -> impl Strategy<Value = (String, Value)> + use<> {
    let list = prop::collection::vec(scalar(strings), 1..4).prop_map(Value::Array);
    prop_oneof![
        (prop::sample::select(vec!["eq", "ne"]), scalar(strings))
            .prop_map(|(op, v)| (op.to_owned(), v)),
        (
            prop::sample::select(vec!["gt", "gte", "lt", "lte"]),
            scalar(strings)
        )
            .prop_filter_map("bounds are numbers or strings", |(op, v)| {
                (v.is_number() || v.is_string()).then(|| (op.to_owned(), v))
            }),
        (prop::sample::select(vec!["in", "notIn"]), list).prop_map(|(op, v)| (op.to_owned(), v)),
    ]
}

/// A guard that compiles: one to three of `keys`, one to three operators each.
pub fn guard(
    keys: &[&'static str],
    strings: &[&'static str],
) -> impl Strategy<Value = Value> + use<> {
    prop::collection::vec(
        (
            prop::sample::select(keys.to_vec()),
            prop::collection::vec(condition(strings), 1..4),
        ),
        1..4,
    )
    .prop_map(|keys| {
        let mut guard = Map::new();
        for (key, ops) in keys {
            guard.insert(key.to_owned(), Value::Object(ops.into_iter().collect()));
        }
        Value::Object(guard)
    })
}
