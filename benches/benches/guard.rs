//! Guard hot paths: compile (W1d), the predicate over hop keys only (W1c),
//! the predicate and the evaluator over a ~185-byte JSON result (W1, W1b),
//! and the floor they are measured against: a validating pass over the same
//! result that builds nothing (W1s).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use skill_benches::{w1_guard, w1_results, w1_view, w1c_guard};
use skill_core::GuardView;
use skill_guard::Guard;

fn guards(c: &mut Criterion) {
    let results = w1_results();
    let w1 = w1_guard();
    let guard = Guard::compile(&w1).expect("the W1 guard compiles");
    let hop_guard = Guard::compile(&w1c_guard()).expect("the W1c guard compiles");

    c.bench_function("W1d compile", |b| b.iter(|| Guard::compile(black_box(&w1))));

    let mut i = 0usize;
    c.bench_function("W1c predicate, hop keys only", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let v = GuardView::new("lookup_order", &results[i % 1000])
                .with_iteration((i % 8) as f64)
                .with_user_message("m");
            hop_guard.test(black_box(&v))
        })
    });

    let mut i = 0usize;
    c.bench_function("W1 predicate over a JSON result", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            guard.test(black_box(&w1_view(&results[i % 1000])))
        })
    });

    let mut i = 0usize;
    c.bench_function("W1b evaluator over a JSON result", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            guard.evaluate(black_box(&w1_view(&results[i % 1000])))
        })
    });

    let mut i = 0usize;
    c.bench_function("W1s serde_json validating pass (floor)", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            serde_json::from_str::<serde::de::IgnoredAny>(black_box(&results[i % 1000])).is_ok()
        })
    });
}

criterion_group!(benches, guards);
criterion_main!(benches);
