//! The record reader behind `skillgraph explain` and `replay` from
//! arbitrary bytes (records come from other people's machines): the bytes
//! as text (invalid UTF-8 replaced), read as a record; what reads is
//! explained (to its end, to iteration 1 and to its last iteration, as text,
//! mermaid, JSON and a page), turned into spans, and replayed on the map it
//! declares (`replay`) and on the support desk example (`replay --map`).
//! Nothing may panic, and a replayed record replays to itself on the same
//! map (the law `explain` stands on), unless the input held a result past
//! the 4 KiB a record keeps, which the replay reads from its head
//! (docs/robustness.md).
#![no_main]

use std::path::Path;
use std::sync::{Arc, LazyLock};

use libfuzzer_sys::fuzz_target;
use skillgraph::skill_explain::{explain, page, trace};
use skillgraph::skill_session::{
    Event, Graph, RESULT_HEAD_BYTES, first_difference, read_record, replay,
};

/// The shipped support desk, as `replay --map examples/support-desk` loads it.
static DESK: LazyLock<Arc<Graph>> = LazyLock::new(|| {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/support-desk");
    let loaded = skillgraph::load(&path)
        .unwrap_or_else(|err| panic!("the support desk example must load: {err}"));
    let graph = Graph::new(loaded.map)
        .unwrap_or_else(|err| panic!("the support desk example must compile: {err}"));
    Arc::new(graph)
});

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(record) = read_record(&text) else {
        return;
    };
    let _ = record.warning();
    let last = record.events.last().map_or(0, Event::iteration);
    for iteration in [None, Some(1), Some(last)] {
        if let Ok(explanation) = explain(&record, iteration) {
            let _ = explanation.to_text();
            let _ = explanation.to_mermaid();
            let _ = serde_json::to_string(&explanation);
        }
        let _ = page(&record, iteration);
    }
    let _ = trace::spans(&record);
    let whole = !record.events.iter().any(
        |event| matches!(event, Event::Result(result) if result.result.len() > RESULT_HEAD_BYTES),
    );
    if let Some(Event::Start(start)) = record.events.first() {
        if let Ok(own) = Graph::new(start.map.to_map()) {
            replay_twice(&Arc::new(own), &record.events, whole);
        }
    }
    replay_twice(&DESK, &record.events, whole);
});

/// Replay `events` on `graph` as `replay` does; when they replay and every
/// result was `whole`, replay the replayed record too: it must come back
/// unchanged.
fn replay_twice(graph: &Arc<Graph>, events: &[Event], whole: bool) {
    let Ok(replayed) = replay(graph, events) else {
        return;
    };
    let _ = first_difference(events, &replayed);
    if whole {
        let again = replay(graph, &replayed).unwrap_or_else(|err| {
            panic!("a replayed record cannot be replayed on its own map: {err}")
        });
        assert_eq!(
            first_difference(&replayed, &again),
            None,
            "a replayed record does not replay to itself"
        );
    }
}
