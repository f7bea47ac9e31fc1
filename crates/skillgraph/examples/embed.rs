//! Embedding skillgraph in a host: load the map once, then on every request
//! build the tools for the cursor's position and route the tool results of
//! each iteration, keeping the guard evidence on the record.
//!
//! Run it with `cargo run -p skillgraph --example embed`.

use std::path::Path;

use skillgraph::skill_core::ToolResult;
use skillgraph::skill_guard::{CompiledMap, Iteration, MoveKind};
use skillgraph::skill_tools::{HostFormat, list_skills, read_skill};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/support-desk");
    let loaded = skillgraph::load(&folder)?;
    let checkup = loaded.checkup();
    if !checkup.ok() {
        for problem in checkup.errors() {
            eprintln!("{problem}");
        }
        return Err("the map has errors".into());
    }
    let map = &loaded.map;
    // Compile every route guard once, when the map is loaded.
    let routes = CompiledMap::new(map)?;

    // A run starts on the first entry; a map without entries has no cursor.
    let mut cursor = map.entries.first().cloned();
    // Each request: the tools for this position, in the host's own format.
    // The map owns what the position grants (the plain catalog when it has
    // no entries and no routes).
    let offer = map.offer_at(cursor.as_deref(), &[], false);
    let tools: Vec<_> = read_skill(&map.skills, Some(&offer))
        .into_iter()
        .chain(list_skills(&map.skills))
        .collect();
    for tool in &tools {
        let definition = tool.to_host(HostFormat::Anthropic)?;
        println!(
            "tool {}: {} bytes of description",
            definition["name"],
            tool.description.len()
        );
    }

    // The model called a tool; its result moves the cursor (or not), with evidence.
    let results = [ToolResult {
        tool_name: "lookup_order".into(),
        result: r#"{"orderId":4412,"riskLevel":"high","amount":240}"#.into(),
        status: Some("success".into()),
    }];
    if let Some(from) = cursor.clone() {
        let moved = routes.resolve(
            &from,
            &results,
            Iteration {
                number: 1.0,
                user_message: "refund order 4412",
            },
        );
        if let Some(guard) = &moved.guard {
            for condition in &guard.conditions {
                println!(
                    "  {} {} read {} -> {}",
                    condition.condition.key,
                    condition.condition.op,
                    condition.actual_summary,
                    condition.passed
                );
            }
        }
        if moved.by == MoveKind::Route {
            cursor = Some(moved.to.to_owned());
        }
    }
    println!(
        "the cursor is on {}",
        cursor.as_deref().unwrap_or("no skill")
    );
    Ok(())
}
