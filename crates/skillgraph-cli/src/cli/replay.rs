//! `skillgraph replay RECORD [--map PATH]`: a run reproduced from its record
//! alone (SPEC §8.4). The record's own map (its `start` event declares it)
//! or the map at `--map` runs a fresh session on the record's inputs, and
//! the record it writes must equal the one on disk. The first line that
//! differs is named with the field where the two part: a tampered record,
//! or one written by another version of the map.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;
use skillgraph::load;
use skillgraph::skill_session::{
    Event, Graph, Record, ReplayError, first_difference, read_record, replay,
};

use super::{Failure, output, read_file};

/// How much of a differing value a message repeats.
const SHOWN: usize = 200;

/// Replay the record in `file`, on its own map or on the map at `map`.
pub(super) fn replay_command(file: &Path, map: Option<&Path>) -> Result<ExitCode, Failure> {
    let text = read_file(file)?;
    let record = read_record(&text)
        .map_err(|err| Failure::unusable(err.code(), format!("{}: {err}", file.display())))?;
    if let Some(warning) = record.warning() {
        output::warn(&format!("warning: {}: {warning}", file.display()));
    }
    let Some(Event::Start(start)) = record.events.first() else {
        return Err(Failure::unusable(
            "record-missing-start",
            format!(
                "{}: the record holds no event; pass the file `play --record` or `serve --record` wrote",
                file.display()
            ),
        ));
    };
    let graph = match map {
        Some(path) => Graph::new(load(path)?.map).map_err(|err| {
            Failure::invalid(
                err.code(),
                format!(
                    "{err}\nRun `skillgraph check {}` for every problem of the map.",
                    path.display()
                ),
            )
        })?,
        None => Graph::new(start.map.to_map()).map_err(|err| {
            differs(
                file,
                line_of(&record, 0),
                format!("the map the record declares cannot run sessions: {err}"),
            )
        })?,
    };
    let replayed = replay(&Arc::new(graph), &record.events).map_err(|err| match err {
        ReplayError::Read { index, error } => differs(
            file,
            line_of(&record, index),
            format!("{error}, so the replay cannot take this read: the record was written on another map"),
        ),
        ReplayError::Result { index, error } => differs(
            file,
            line_of(&record, index),
            format!("{error}; a session refuses such a result, so this record was changed after it was written"),
        ),
        other => Failure::unusable(other.code(), format!("{}: {other}", file.display())),
    })?;
    if let Some(at) = first_difference(&record.events, &replayed) {
        return Err(difference(file, &record, &replayed, at));
    }
    let iterations = record.events.last().map_or(0, Event::iteration);
    output::print_line(&format!(
        "{}: replayed {} events through iteration {iterations}; the run is reproduced exactly",
        file.display(),
        record.events.len()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// A replay that parts from the record (exit 1), at `line`.
fn differs(file: &Path, line: usize, what: String) -> Failure {
    Failure::invalid(
        "replay-differs",
        format!(
            "{}:{line}: the replay parts from the record here: {what}",
            file.display()
        ),
    )
}

/// The line event `index` was read from; past the end, the line after the
/// last.
fn line_of(record: &Record, index: usize) -> usize {
    record
        .lines
        .get(index)
        .copied()
        .unwrap_or_else(|| record.lines.last().map_or(1, |last| last + 1))
}

/// The failure for the first event `at` where the two records part.
fn difference(file: &Path, record: &Record, replayed: &[Event], at: usize) -> Failure {
    let line = line_of(record, at);
    let what = match (record.events.get(at), replayed.get(at)) {
        (Some(recorded), Some(again)) => {
            let kind = recorded.kind();
            match first_field_apart(&value_of(recorded), &value_of(again)) {
                (path, Some(was), None) => format!(
                    "the \"{kind}\" event's {path} is {} in the record, and absent in the replay",
                    shown(&was)
                ),
                (path, None, Some(now)) => format!(
                    "the \"{kind}\" event's {path} is absent in the record, and the replay makes it {}",
                    shown(&now)
                ),
                (path, was, now) => format!(
                    "the \"{kind}\" event's {path} is {} in the record, and the replay makes it {}",
                    shown_or_absent(was.as_ref()),
                    shown_or_absent(now.as_ref())
                ),
            }
        }
        (Some(recorded), None) => format!(
            "the record holds a \"{}\" event here, and the replay ends before it",
            recorded.kind()
        ),
        (None, Some(again)) => format!(
            "the record ends, and the replay goes on with a \"{}\" event",
            again.kind()
        ),
        (None, None) => "the two records have the same length".to_owned(),
    };
    differs(file, line, what)
}

fn value_of(event: &Event) -> Value {
    serde_json::from_str(&event.to_line()).unwrap_or(Value::Null)
}

/// The first field where `a` and `b` differ, as a path (`to`,
/// `guard.conditions[0].passed`), with the value each has there: `None`
/// where a field is present on one side only.
fn first_field_apart(a: &Value, b: &Value) -> (String, Option<Value>, Option<Value>) {
    let mut path = String::new();
    let (mut a, mut b) = (a, b);
    loop {
        let step = match (a, b) {
            (Value::Object(x), Value::Object(y)) => x
                .iter()
                .find(|(key, value)| y.get(key.as_str()) != Some(*value))
                .map(|(key, value)| (key, Some(value), y.get(key.as_str())))
                .or_else(|| {
                    y.iter()
                        .find(|(key, _)| !x.contains_key(key.as_str()))
                        .map(|(key, value)| (key, None, Some(value)))
                })
                .map(|(key, was, now)| (format!(".{key}"), was, now)),
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
                .iter()
                .zip(y)
                .enumerate()
                .find(|(_, (p, q))| p != q)
                .map(|(at, (p, q))| (format!("[{at}]"), Some(p), Some(q))),
            _ => None,
        };
        match step {
            Some((part, Some(next_a), Some(next_b))) => {
                path.push_str(&part);
                a = next_a;
                b = next_b;
            }
            Some((part, was, now)) => {
                path.push_str(&part);
                return (named(&path), was.cloned(), now.cloned());
            }
            None => return (named(&path), Some(a.clone()), Some(b.clone())),
        }
    }
}

/// A path as a message names it: without its leading dot, `value` when it
/// is the whole event.
fn named(path: &str) -> String {
    let path = path.trim_start_matches('.');
    if path.is_empty() { "value" } else { path }.to_owned()
}

/// A value as JSON, or `absent` when a side has no such field.
fn shown_or_absent(value: Option<&Value>) -> String {
    value.map_or_else(|| "absent".to_owned(), shown)
}

/// A value as JSON, cut to [`SHOWN`] characters.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOWN {
        return text;
    }
    let cut: String = text.chars().take(SHOWN).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_first_field_apart_is_named_by_its_path() {
        let recorded = json!({"event": "move", "to": "refunds", "guard": {"conditions": [{"passed": true}, {"passed": true}]}});
        let replayed = json!({"event": "move", "to": "refunds", "guard": {"conditions": [{"passed": true}, {"passed": false}]}});
        let (path, was, now) = first_field_apart(&recorded, &replayed);
        assert_eq!(path, "guard.conditions[1].passed");
        assert_eq!((was, now), (Some(json!(true)), Some(json!(false))));
        let (path, was, now) = first_field_apart(&json!({"a": 1}), &json!({"a": 1, "b": 2}));
        assert_eq!((path.as_str(), was, now), ("b", None, Some(json!(2))));
    }

    #[test]
    fn a_field_only_the_record_has_is_named_absent_in_the_replay() {
        // The fuzz target's record: the replay wrote no `call` where the
        // record has one, and the replayed event was indexed by it.
        let recorded = json!({"event": "result", "tool_name": "lookup", "call": 7, "bytes": 2});
        let replayed = json!({"event": "result", "tool_name": "lookup", "bytes": 2});
        let (path, was, now) = first_field_apart(&recorded, &replayed);
        assert_eq!((path.as_str(), was, now), ("call", Some(json!(7)), None));
        let (path, was, now) = first_field_apart(&json!({"to": {"id": null}}), &json!({"to": {}}));
        assert_eq!(
            (path.as_str(), was, now),
            ("to.id", Some(Value::Null), None),
            "a null is a value, not an absent field"
        );
        assert_eq!(shown_or_absent(Some(&Value::Null)), "null");
        assert_eq!(shown_or_absent(None), "absent");
    }

    #[test]
    fn values_of_another_shape_are_named_whole() {
        let (path, was, now) = first_field_apart(&json!([1, 2]), &json!([1, 2, 3]));
        assert_eq!(
            (path.as_str(), was, now),
            ("value", Some(json!([1, 2])), Some(json!([1, 2, 3])))
        );
    }

    #[test]
    fn a_long_value_is_cut() {
        let long = Value::String("x".repeat(1000));
        assert_eq!(shown(&long).chars().count(), SHOWN + 1);
    }
}
