//! What the session's end-to-end test files share.

use std::sync::Arc;

use skill_session::{Event, Graph, Session, replay};

/// Take `session`'s record and check that it replays to itself on the map
/// its `start` declares, as `skillgraph replay` runs it.
pub fn replays(session: &mut Session) {
    let events = session.take_events();
    let Some(Event::Start(start)) = events.first() else {
        panic!("the record opens with start");
    };
    let declared = match Graph::new(start.map.to_map()) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the declared map compiles: {error}"),
    };
    match replay(&declared, &events) {
        Ok(replayed) => assert_eq!(replayed, events),
        Err(error) => panic!("the record replays: {error}"),
    }
}
