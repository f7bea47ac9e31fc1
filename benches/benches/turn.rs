//! Turn routing (SPEC §13): a turn routed over 100 start rules against a
//! ~2 KB message that no rule matches, so every rule is tried (the worst
//! case), and against the same message ending in the last rule's example;
//! what a rule that gives up at the bound on backtracking costs; and
//! compiling 1,000 rules. The goals: routing ≤ 50 µs at p50, compiling
//! ≤ 50 ms.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use skill_benches::{start_rules, turn_message, turn_message_last};
use skill_guard::start::StartRules;

fn turn_route(c: &mut Criterion) {
    let start = start_rules(100);
    let rules = StartRules::compile(Some(&start)).expect("the 100 start rules compile");
    assert_eq!(rules.rules().len(), 100);
    for (i, rule) in start.rules.iter().enumerate() {
        let routing = rules.route(&rule.examples[0], |_| false);
        assert_eq!(routing.routed.map(|r| r.rule), Some(i), "{rule:?}");
    }
    let miss = turn_message();
    let last = turn_message_last(&start);
    let routing = rules.route(&miss, |_| false);
    assert!(
        routing.routed.is_none() && routing.gave_up.is_empty(),
        "{routing:?}"
    );
    let routing = rules.route(&last, |_| false);
    assert_eq!(routing.routed.map(|r| r.rule), Some(99));
    assert!(routing.gave_up.is_empty());
    println!(
        "the message: {} bytes, {} UTF-16 units; with the last rule's example: {} bytes",
        miss.len(),
        miss.encode_utf16().count(),
        last.len()
    );

    let mut group = c.benchmark_group("turn_route");
    group.bench_function("100_rules_2kb_miss", |b| {
        b.iter(|| rules.route(black_box(&miss), |_| false))
    });
    group.bench_function("100_rules_2kb_last", |b| {
        b.iter(|| rules.route(black_box(&last), |_| false))
    });
    // `(a+)+$` on 2,000 `a`s and a `b`: exponential in any backtracking
    // engine, so the search spends its whole bound and gives up.
    let start: skill_core::Start = serde_json::from_value(serde_json::json!({
        "rules": [{ "use": "triage", "match": { "regex": "(a+)+$" } }]
    }))
    .expect("a start block");
    let catastrophic = StartRules::compile(Some(&start)).expect("the rule compiles");
    let message = format!("{}b", "a".repeat(2_000));
    assert_eq!(catastrophic.route(&message, |_| false).gave_up, [0]);
    group.bench_function("catastrophic_2kb_gives_up", |b| {
        b.iter(|| catastrophic.route(black_box(&message), |_| false))
    });
    group.finish();
}

fn turn_compile(c: &mut Criterion) {
    let start = start_rules(1000);
    let rules = StartRules::compile(Some(&start)).expect("the 1,000 start rules compile");
    assert_eq!(rules.rules().len(), 1000);

    let mut group = c.benchmark_group("turn_compile");
    group.sample_size(30);
    group.bench_function("1000_rules", |b| {
        b.iter(|| StartRules::compile(black_box(Some(&start))))
    });
    group.finish();
}

criterion_group!(benches, turn_route, turn_compile);
criterion_main!(benches);
