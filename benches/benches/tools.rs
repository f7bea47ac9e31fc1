//! The read_skill description for catalogs of 10 to 10,000 skills (a third
//! grantable, a tenth hidden): the offer view with its rendering, and the
//! whole descriptor (W2: schema with enum, description, execute data), each
//! with no catalog budget (the whole description, as the reference writes
//! it) and within the default 16,000 characters (SPEC §6.5). The cost must
//! grow linearly with the catalog.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skill_benches::{w2_offer, w2_skills};
use skill_tools::{offer_view, read_skill, read_skill_within};

fn offers(c: &mut Criterion) {
    let mut group = c.benchmark_group("read_skill");
    group.sample_size(20);
    for n in [10, 100, 1_000, 10_000] {
        let skills = w2_skills(n);
        let offer = w2_offer(n);
        group.bench_with_input(BenchmarkId::new("offer view + render", n), &n, |b, _| {
            b.iter(|| {
                offer_view(black_box(&skills), Some(black_box(&offer))).render_within(usize::MAX)
            })
        });
        group.bench_with_input(BenchmarkId::new("W2 descriptor", n), &n, |b, _| {
            b.iter(|| read_skill_within(black_box(&skills), Some(black_box(&offer)), usize::MAX))
        });
        group.bench_with_input(
            BenchmarkId::new("W2 descriptor, default budget", n),
            &n,
            |b, _| b.iter(|| read_skill(black_box(&skills), Some(black_box(&offer)))),
        );
    }
    group.finish();
}

criterion_group!(benches, offers);
criterion_main!(benches);
