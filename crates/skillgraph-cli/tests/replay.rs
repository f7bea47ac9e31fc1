//! `skillgraph replay RECORD` end to end (SPEC §8.4): records written by
//! `play` reproduce themselves from the record alone; a tampered record, or
//! the record replayed on a changed map, exits 1 naming the first line that
//! differs and the field where the two part. (`tests/serve.rs` replays the
//! records `serve` writes under each call policy.)

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{copy_dir, example, scratch, skillgraph, skillgraph_with_input};

/// Play `script` on the support desk under `posture`, recording to a file of
/// its own; the record's path.
fn played(name: &str, posture: &str, script: &str) -> PathBuf {
    played_with(name, &["--posture", posture], script)
}

/// [`played`] with the options `args`.
fn played_with(name: &str, args: &[&str], script: &str) -> PathBuf {
    let record = scratch("replay", name).join("run.jsonl");
    let desk = example().display().to_string();
    let record_arg = record.display().to_string();
    let output = skillgraph_with_input(
        &[
            &["play", desk.as_str()],
            args,
            &["--record", record_arg.as_str()],
        ]
        .concat(),
        script,
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    record
}

fn replay(record: &Path, extra: &[&str]) -> Output {
    let record = record.display().to_string();
    skillgraph(&[&["replay", record.as_str()], extra].concat())
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const SCRIPTS: [(&str, &str); 3] = [
    (
        "rails",
        "{\"turn\": \"my invoice\"}\n{\"tools\": \"mcp\"}\n{\"read\": \"billing\"}\n{\"end\": true}\n{\"result\": {\"tool_name\": \"lookup_invoice\", \"result\": \"{}\"}}\n{\"end\": true}\n{\"result\": {\"tool_name\": \"charge_history\", \"result\": {\"disputed\": true}}}\n{\"end\": true}\n",
    ),
    (
        "guard",
        "{\"turn\": {\"message\": \"refund\", \"menu\": {\"candidates\": [{\"id\": \"refunds\", \"relevance\": 0.9}]}}}\n{\"tools\": \"openai\"}\n{\"read\": \"billing\"}\n{\"read\": \"refunds\"}\n{\"end\": true}\n{\"result\": {\"tool_name\": \"issue_refund\", \"result\": \"{}\", \"status\": \"denied\"}}\n{\"end\": true}\n{\"turn\": \"and now?\"}\n{\"end\": true}\n",
    ),
    (
        "assist",
        "{\"turn\": \"hello\"}\n{\"read\": \"faq\"}\n{\"result\": {\"tool_name\": \"export_rows\", \"result\": \"[]\"}}\n{\"end\": true}\n",
    ),
];

#[test]
fn a_record_play_writes_replays_to_itself_from_the_record_alone() {
    let refund = std::fs::read_to_string(example().join("conversations/refund.jsonl"))
        .expect("the shipped conversation");
    let parcel = std::fs::read_to_string(example().join("conversations/parcel.jsonl"))
        .expect("the shipped conversation that starts by rule");
    let mut scripts = vec![("assist", refund.as_str()), ("rails", parcel.as_str())];
    scripts.extend(SCRIPTS);
    for (at, (posture, script)) in scripts.into_iter().enumerate() {
        let record = played(&format!("play-{at}"), posture, script);
        let output = replay(&record, &[]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "script {at}: {}",
            stderr(&output)
        );
        let said = String::from_utf8_lossy(&output.stdout);
        assert!(said.contains("the run is reproduced exactly"), "{said}");
        let on_the_map = replay(&record, &["--map", &example().display().to_string()]);
        assert_eq!(
            on_the_map.status.code(),
            Some(0),
            "script {at} on the map that wrote it: {}",
            stderr(&on_the_map)
        );
    }
}

#[test]
fn a_refused_call_is_recorded_and_replayed() {
    let script = "{\"turn\": \"refund 4412\"}\n{\"call\": \"issue_refund\"}\n{\"end\": true}\n{\"call\": \"lookup_order\"}\n{\"result\": {\"tool_name\": \"lookup_order\", \"result\": \"{}\"}}\n{\"end\": true}\n";
    let record = played_with("strict", &["--strict-tools"], script);
    let text = std::fs::read_to_string(&record).expect("the record");
    assert!(text.contains(r#""event":"call","iteration":1,"tool_name":"issue_refund","call":1,"accepted":false,"refusal":"not-offered","allowed":["refunds"]"#), "{text}");
    // The accepted call is recorded before its result, which carries its number.
    let accepted = text
        .find(r#""event":"call","iteration":2,"tool_name":"lookup_order","call":2,"accepted":true"#)
        .expect("the accepted call");
    let answered = text
        .find(r#""event":"result","iteration":2,"tool_name":"lookup_order","call":2,"#)
        .expect("its result");
    assert!(accepted < answered, "{text}");
    assert!(
        text.lines()
            .next()
            .is_some_and(|start| start.contains(r#""tools":"strict""#)),
        "{text}"
    );
    let output = replay(&record, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn a_tampered_record_names_the_first_line_and_field_that_differ() {
    let refund = std::fs::read_to_string(example().join("conversations/refund.jsonl"))
        .expect("the shipped conversation");
    let record = played("tampered", "assist", &refund);
    let text = std::fs::read_to_string(&record).expect("the record");
    let (at, moved) = text
        .lines()
        .enumerate()
        .map(|(n, line)| {
            (
                n,
                serde_json::from_str::<serde_json::Value>(line).expect("JSON"),
            )
        })
        .find(|(_, event)| event["event"] == "move" && event["to"] == "refunds")
        .expect("the conversation moves to refunds");
    let mut moved = moved;
    moved["to"] = "billing".into();
    let tampered: String = text
        .lines()
        .enumerate()
        .map(|(n, line)| {
            if n == at {
                format!("{moved}\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    std::fs::write(&record, tampered).expect("the record is rewritten");
    let output = replay(&record, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.starts_with("error[replay-differs]: "), "{message}");
    assert!(
        message.contains(&format!("run.jsonl:{}:", at + 1)),
        "names line {}: {message}",
        at + 1
    );
    assert!(
        message.contains(
            r#"the "move" event's to is "billing" in the record, and the replay makes it "refunds""#
        ),
        "{message}"
    );
}

#[test]
fn a_record_replayed_on_a_changed_map_differs_from_its_start() {
    let (_, script) = SCRIPTS[0];
    let record = played("changed-map", "rails", script);
    let dir = scratch("replay", "changed-map-desk");
    let map = std::fs::read_to_string(example().join("skillmap.json"))
        .expect("the example's map")
        .replace("\"disputed charge\"", "\"charge in dispute\"");
    std::fs::write(dir.join("skillmap.json"), map).expect("the map is written");
    copy_dir(&example().join("skills"), &dir.join("skills"));
    let output = replay(&record, &["--map", &dir.display().to_string()]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("run.jsonl:1: "), "{message}");
    assert!(
        message.contains(r#"the "start" event's map.routes[3].label is "disputed charge""#),
        "{message}"
    );
}

#[test]
fn a_record_that_is_not_one_is_unusable_input() {
    let dir = scratch("replay", "unusable");
    let file = common::write(
        &dir,
        "run.jsonl",
        "{\"v\":1,\"event\":\"turn\",\"iteration\":1,\"user_message\":\"hi\"}\n",
    );
    let output = replay(Path::new(&file), &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).starts_with("error[record-missing-start]: "),
        "{}",
        stderr(&output)
    );
    let output = replay(&dir.join("missing.jsonl"), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("error[unreadable]: "),
        "{}",
        stderr(&output)
    );
}

/// The fuzz target `record`'s first finding, minimized: one skill carrying
/// `lookup`, an accepted call of it numbered 1, and a `result` for call 7.
const RESULT_FOR_CALL_7: &str = r#"{"v":1,"event":"start","iteration":1,"cursor":"triage","posture":"assist","map":{"skills":[{"id":"triage","tools":["lookup"]}],"entries":["triage"],"routes":[]}}
{"v":1,"event":"turn","iteration":1,"user_message":"hi"}
{"v":1,"event":"call","iteration":1,"tool_name":"lookup","call":1,"accepted":true}
{"v":1,"event":"result","iteration":1,"tool_name":"lookup","call":7,"bytes":2,"result":"{}","status":"success"}
"#;

#[test]
fn a_result_for_a_call_that_is_not_open_differs_at_its_line() {
    let dir = scratch("replay", "call-not-open");
    let file = common::write(&dir, "run.jsonl", RESULT_FOR_CALL_7);
    let output = replay(Path::new(&file), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.starts_with("error[replay-differs]: "), "{message}");
    assert!(message.contains("run.jsonl:4: "), "{message}");
    assert!(
        message.contains(r#"a result of "lookup" gives call 7, which is not an open call of that tool (open calls of "lookup": 1)"#),
        "{message}"
    );
}

#[test]
fn a_field_only_the_record_has_is_named_as_absent_in_the_replay() {
    // `offered: false` on a result of a tool the active skill carries: the
    // replay writes no `offered` (it is offered), and `replay` used to
    // panic (exit 101) looking the field up in the replayed event.
    let dir = scratch("replay", "field-only-recorded");
    let text = RESULT_FOR_CALL_7.replace(
        r#""call":7,"bytes":2,"result":"{}","status":"success"}"#,
        r#""call":1,"bytes":2,"result":"{}","status":"success","offered":false}"#,
    );
    assert!(text.contains(r#""offered":false"#));
    let file = common::write(&dir, "run.jsonl", &text);
    let output = replay(Path::new(&file), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.starts_with("error[replay-differs]: "), "{message}");
    assert!(
        message.contains(r#"run.jsonl:4: the replay parts from the record here: the "result" event's offered is false in the record, and absent in the replay"#),
        "{message}"
    );
}
