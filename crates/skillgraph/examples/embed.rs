//! Embedding skillgraph in a host: the whole loop on a session. Load the
//! map once into a shared graph; per conversation, a session; per model
//! call, the tools to offer, the model's calls forwarded (`read_skill` to the
//! session, the host's own tools run by the host and their results
//! observed), then the end of the iteration, which moves the cursor. The
//! record goes wherever the host keeps logs; here, standard output. A fake
//! model stands in for the real one.
//!
//! Run it with `cargo run -p skillgraph --example embed`; `cargo test`
//! runs its test, which replays the record it writes.

use std::path::Path;
use std::sync::Arc;

use skillgraph::skill_core::ToolResult;
use skillgraph::skill_explain::explain;
use skillgraph::skill_session::{CallAnswer, Graph, Posture, Session, read_record};
use skillgraph::skill_tools::HostFormat;

/// A call the fake model makes.
enum Call {
    ReadSkill(&'static str),
    Tool(&'static str, &'static str),
}

/// The fake model: what it calls on each iteration.
fn model(iteration: u64) -> Vec<Call> {
    match iteration {
        1 => vec![
            Call::ReadSkill("billing"),
            Call::Tool(
                "lookup_order",
                r#"{"orderId":4412,"riskLevel":"high","amount":240}"#,
            ),
        ],
        _ => vec![Call::Tool("issue_refund", r#"{"refundId":"R-981"}"#)],
    }
}

/// The host's own tools (a real host calls its services here).
fn run_tool(name: &str, canned: &str) -> ToolResult {
    ToolResult {
        tool_name: name.to_owned(),
        result: canned.to_owned(),
        status: Some("success".to_owned()),
    }
}

type Error = Box<dyn std::error::Error>;

/// Once per map: every route guard compiled, shared by every conversation.
fn graph() -> Result<Arc<Graph>, Error> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/support-desk");
    let loaded = skillgraph::load(&folder)?;
    if !loaded.checkup().ok() {
        return Err("the map has errors: run `skillgraph check` on it".into());
    }
    Ok(Arc::new(Graph::new(loaded.map)?))
}

fn main() -> Result<(), Error> {
    let record = conversation(&graph()?)?;
    // Later, from the record alone: why the cursor is where it is.
    print!("{}", explain(&read_record(&record)?, None)?.to_text());
    Ok(())
}

/// One conversation, narrated on standard output; its record.
fn conversation(graph: &Arc<Graph>) -> Result<String, Error> {
    let mut session = Session::new(Arc::clone(graph), Posture::Assist, Vec::new());
    let mut record = String::new();
    session.begin_turn("Please refund order 4412", None);
    for _ in 0..2 {
        // What this model call is offered: read_skill for the cursor's
        // position, list_skills, and the active skills' own tools.
        let tools = session
            .tools()
            .iter()
            .map(|tool| tool.to_host(HostFormat::Anthropic))
            .collect::<Result<Vec<_>, _>>()?;
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        println!(
            "iteration {}: offer {names:?} and {:?}; system prompt {} bytes",
            session.iteration(),
            session.visible_tools(),
            session.system_prompt().len()
        );
        for call in model(session.iteration()) {
            match call {
                Call::ReadSkill(id) => {
                    let answer = session.read_skill(id)?;
                    println!("  read_skill {id}: {}", answer.text);
                }
                // The call gate first: under the session's policy (here the
                // default, `scoped`) it admits every call; a `strict`
                // session would refuse a tool no active skill carries.
                Call::Tool(name, canned) => match session.call_tool(name) {
                    CallAnswer::Admitted { call } => {
                        session.observe_call(call, run_tool(name, canned))?;
                    }
                    CallAnswer::Refused { text, .. } => println!("  {name} refused: {text}"),
                },
            }
        }
        let moved = session.end_iteration();
        let cursor = moved.to.as_deref().unwrap_or("no skill");
        println!("  the cursor is on {cursor} (by {:?})", moved.by);
        // Flush per step: each event is one line of the record.
        for event in session.take_events() {
            record.push_str(&event.to_line());
            record.push('\n');
        }
    }
    Ok(record)
}

#[test]
fn the_record_replays_to_itself() -> Result<(), Error> {
    let graph = graph()?;
    let record = read_record(&conversation(&graph)?)?;
    let replayed = skillgraph::skill_session::replay(&graph, &record.events)?;
    assert_eq!(replayed, record.events);
    Ok(())
}
