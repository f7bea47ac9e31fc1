//! The page of a long record (SPEC §12): a run of the support desk with
//! 10,000 events (turns, offers, reads, results and moves, the cursor
//! going to refunds and back), made into its HTML page by
//! `skill_explain::page`. The goal: a second or less.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use skill_core::ToolResult;
use skill_session::{Graph, Posture, Record, Session, read_record};

/// The support desk's record after enough iterations to hold `events`.
fn long_record(events: usize) -> Record {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/support-desk");
    let loaded = skillgraph::load(&root).expect("the shipped example loads");
    let graph = Arc::new(Graph::new(loaded.map).expect("the example is a graph"));
    let mut session = Session::new(graph, Posture::Assist, Vec::new());
    let mut iteration = 0usize;
    while session.events().len() < events {
        if iteration.is_multiple_of(40) {
            session.begin_turn(format!("Please look at order {iteration}"), None);
        }
        let result = match iteration % 4 {
            // Risky: triage → refunds.
            0 => (
                "lookup_order",
                r#"{"status":"success","riskLevel":"high","amount":240}"#,
                None,
            ),
            // Denied: refunds → triage.
            1 => ("issue_refund", r#"{"status":"denied"}"#, Some("denied")),
            // Not risky: the routes close with their evidence.
            2 => ("lookup_order", r#"{"riskLevel":"low","amount":30}"#, None),
            _ => ("lookup_invoice", r#"{"status":"success"}"#, None),
        };
        let _ = session.tools();
        let _ = session.read_skill("faq");
        session.observe(ToolResult {
            tool_name: result.0.into(),
            result: result.1.into(),
            status: result.2.map(str::to_owned),
        });
        session.end_iteration();
        iteration += 1;
    }
    let text: String = session
        .events()
        .iter()
        .map(|event| event.to_line() + "\n")
        .collect();
    read_record(&text).expect("the record reads")
}

fn page(c: &mut Criterion) {
    let record = long_record(10_000);
    let page = skillgraph::skill_explain::page(&record, None).expect("a page");
    println!(
        "a record of {} events: a page of {} bytes",
        record.events.len(),
        page.len()
    );
    let mut group = c.benchmark_group("page");
    group.sample_size(10);
    group.bench_function("10,000 events", |b| {
        b.iter(|| skillgraph::skill_explain::page(black_box(&record), None))
    });
    group.finish();
}

criterion_group!(benches, page);
criterion_main!(benches);
