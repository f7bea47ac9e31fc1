//! SPEC §8.4: a `result` carries the number of the call it answers, and
//! replay is exact. A record whose `result` names a call that is not open
//! (a number never given, or one already answered) cannot have been
//! written by a session, which refuses such a result; replay refuses it
//! too, naming the event. Every record that replays, replays to itself
//! (the fuzz target `record`'s first finding, minimized).

use std::sync::Arc;

use skill_session::{Event, Graph, first_difference, read_record, replay};

/// The record's first three lines: one skill carrying `lookup`, a turn and
/// an accepted call of `lookup`, numbered 1 and left open.
const OPENED: &str = r#"{"v":1,"event":"start","iteration":1,"cursor":"triage","posture":"assist","map":{"skills":[{"id":"triage","tools":["lookup"]}],"entries":["triage"],"routes":[]}}
{"v":1,"event":"turn","iteration":1,"user_message":"hi"}
{"v":1,"event":"call","iteration":1,"tool_name":"lookup","call":1,"accepted":true}
"#;

/// A result of `lookup` answering `call` (none: a result with no number).
fn result(call: Option<u64>) -> String {
    let call = call.map_or_else(String::new, |call| format!(r#""call":{call},"#));
    format!(
        r#"{{"v":1,"event":"result","iteration":1,"tool_name":"lookup",{call}"bytes":2,"result":"{{}}","status":"success"}}"#
    ) + "\n"
}

fn events(text: &str) -> Vec<Event> {
    match read_record(text) {
        Ok(record) => record.events,
        Err(error) => panic!("the record reads: {error}"),
    }
}

/// The graph the record's `start` event declares, as `skillgraph replay`
/// runs it.
fn graph_of(events: &[Event]) -> Arc<Graph> {
    let Some(Event::Start(start)) = events.first() else {
        panic!("the record opens with its start event");
    };
    match Graph::new(start.map.to_map()) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the declared map compiles: {error}"),
    }
}

#[test]
fn a_result_naming_a_call_never_given_is_refused_by_replay() {
    // fuzz-findings/record-minimized-result-numbered-for-no-open-call.jsonl
    let record = events(&(OPENED.to_owned() + &result(Some(7))));
    let refused = match replay(&graph_of(&record), &record) {
        Ok(replayed) => panic!("a session never writes a result for call 7: {replayed:?}"),
        Err(refused) => refused,
    };
    assert_eq!(refused.code(), "replay-call-not-open");
    let said = refused.to_string();
    assert!(said.starts_with("event 3: "), "{said}");
    assert!(said.contains("call 7"), "{said}");
    assert!(said.contains("open calls of \"lookup\": 1"), "{said}");
}

#[test]
fn a_second_result_for_one_call_is_refused_by_replay() {
    let record = events(&(OPENED.to_owned() + &result(Some(1)) + &result(Some(1))));
    match replay(&graph_of(&record), &record) {
        Ok(replayed) => panic!("a session never answers call 1 twice: {replayed:?}"),
        Err(refused) => {
            assert_eq!(refused.code(), "replay-call-not-open");
            assert!(refused.to_string().starts_with("event 4: "), "{refused}");
        }
    }
}

#[test]
fn every_record_that_replays_replays_to_itself() {
    let records = [
        // The minimized finding: before, its replay recorded the result
        // with no number and left call 1 open, and a second replay bound
        // that result to call 1.
        OPENED.to_owned() + &result(Some(7)),
        OPENED.to_owned() + &result(Some(1)),
        OPENED.to_owned() + &result(Some(1)) + &result(Some(1)),
        // A result with no number answers the oldest open call of its tool.
        OPENED.to_owned() + &result(None),
        OPENED.to_owned() + &result(None) + &result(None),
    ];
    let mut replayed_any = false;
    for text in records {
        let record = events(&text);
        let graph = graph_of(&record);
        let Ok(replayed) = replay(&graph, &record) else {
            continue;
        };
        replayed_any = true;
        let again = match replay(&graph, &replayed) {
            Ok(again) => again,
            Err(error) => panic!("a replayed record replays: {error}\n{text}"),
        };
        assert_eq!(
            first_difference(&replayed, &again),
            None,
            "a replayed record replays to itself:\n{text}"
        );
    }
    assert!(replayed_any);
}
