//! Procedures and budgets (SPEC §15): a turn of 20 iterations on a skill
//! whose 20-step procedure each iteration advances (the current step's
//! tool called, its result observed, the iteration ended), under a budget
//! of 50, beside the same turn on the same skill with no steps and no
//! budget. The goal: the procedure and the budget cost no more than 2 µs
//! per iteration.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use skill_core::{SkillMap, ToolResult};
use skill_session::{CallAnswer, Graph, Session, SessionConfig};

const STEPS: usize = 20;

/// One skill carrying 20 tools; with `stepped`, a step per tool in order
/// and a budget of 50 iterations.
fn graph(stepped: bool) -> Arc<Graph> {
    let tools: Vec<_> = (0..STEPS)
        .map(|n| serde_json::json!({ "name": format!("tool_{n}") }))
        .collect();
    let steps: Vec<_> = (0..STEPS)
        .map(|n| serde_json::json!({ "tool": format!("tool_{n}"), "note": format!("do step {n}") }))
        .collect();
    let mut map = serde_json::json!({
        "skills": [{ "id": "settle", "tools": tools }],
        "entries": ["settle"]
    });
    if stepped {
        map["skills"][0]["steps"] = serde_json::Value::Array(steps);
        map["budget"] = serde_json::json!({ "max_iterations": 50 });
    }
    let map: SkillMap = serde_json::from_value(map).expect("the map reads");
    Arc::new(Graph::new(map).expect("the map compiles"))
}

/// A turn of 20 iterations, each calling the next tool and ending.
fn turn(graph: &Arc<Graph>) -> Session {
    let mut session = Session::with_config(Arc::clone(graph), SessionConfig::default());
    session.begin_turn("settle claim 7", None);
    for n in 0..STEPS {
        let tool = format!("tool_{n}");
        if let CallAnswer::Admitted { call } = session.call_tool(&tool) {
            let result = ToolResult {
                tool_name: tool,
                result: "{}".into(),
                status: None,
            };
            let _ = session.observe_call(call, result);
        }
        session.end_iteration();
    }
    session
}

fn procedure(c: &mut Criterion) {
    let plain = graph(false);
    let stepped = graph(true);
    let done = turn(&stepped);
    assert_eq!(
        done.procedure().map(|p| p.step),
        Some(None),
        "every step advanced"
    );
    assert_eq!(done.iterations_remaining(), Some(29));
    let mut group = c.benchmark_group("procedure");
    group.bench_function("turn_20_iterations_plain", |b| {
        b.iter(|| turn(black_box(&plain)))
    });
    group.bench_function("turn_20_iterations_20_steps_budget_50", |b| {
        b.iter(|| turn(black_box(&stepped)))
    });
    group.finish();
}

criterion_group!(benches, procedure);
criterion_main!(benches);
