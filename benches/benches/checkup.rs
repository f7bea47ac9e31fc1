//! The vocabulary check for 100 to 5,000 skills with two steps each (W3),
//! warnings with their full messages. The cost must grow linearly.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skill_benches::w3_skills;
use skill_checkup::check_vocabularies;

fn vocabularies(c: &mut Criterion) {
    let mut group = c.benchmark_group("vocabulary check");
    group.sample_size(20);
    for n in [100, 1_000, 5_000] {
        let skills = w3_skills(n);
        group.bench_with_input(BenchmarkId::new("W3", n), &n, |b, _| {
            b.iter(|| check_vocabularies(black_box(&skills)))
        });
    }
    group.finish();
}

criterion_group!(benches, vocabularies);
criterion_main!(benches);
