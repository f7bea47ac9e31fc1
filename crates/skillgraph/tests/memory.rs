//! What memory the library holds and allocates, counted by a counting
//! allocator (this test binary's own): an idle session on the support desk
//! holds at most 1 KiB beyond its shared graph, and a vocabulary warning
//! costs the same few allocations however large the agent's vocabulary is.
//! The allocator counts every thread, so the binary has one test, which
//! counts one thing at a time.

use std::alloc::System;
use std::sync::Arc;

use skillgraph::skill_checkup::check_vocabularies;
use skillgraph::skill_core::Skill;
use skillgraph::skill_session::{Graph, Posture, Session};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static ALLOCATOR: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn memory_stays_within_its_bounds() {
    an_idle_session_holds_at_most_one_kib_beyond_its_graph();
    a_vocabulary_warning_costs_the_same_whatever_the_vocabulary();
}

fn an_idle_session_holds_at_most_one_kib_beyond_its_graph() {
    let folder =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/support-desk");
    let loaded = skillgraph::load(&folder).expect("the support desk loads");
    let graph = Arc::new(Graph::new(loaded.map).expect("its guards compile"));
    let region = Region::new(ALLOCATOR);
    let session = Box::new(Session::new(
        Arc::clone(&graph),
        Posture::Assist,
        Vec::new(),
    ));
    let change = region.change();
    let held = (change.bytes_allocated + change.bytes_reallocated as usize)
        .saturating_sub(change.bytes_deallocated);
    drop(session);
    assert!(held > 0, "a session is counted");
    assert!(held <= 1024, "an idle session holds {held} bytes");
}

/// `warned` skills each consuming a kind nothing produces, beside
/// `producers` skills that produce `vocabulary` kinds between them.
fn catalog(warned: usize, producers: usize, vocabulary: usize) -> Vec<Skill> {
    let mut skills: Vec<Skill> = (0..producers)
        .map(|i| {
            let mut skill = Skill::new(format!("maker-{i}"));
            skill.produces = Some(
                (0..vocabulary / producers.max(1))
                    .map(|k| format!("made/{i}-{k}"))
                    .collect(),
            );
            skill
        })
        .collect();
    skills.extend((0..warned).map(|i| {
        let mut skill = Skill::new(format!("needs-{i}"));
        skill.consumes = Some(vec![format!("missing/{i}")]);
        skill
    }));
    skills
}

/// The allocations one check of `skills` makes, and its warnings.
fn allocations(skills: &[Skill]) -> (usize, usize) {
    let region = Region::new(ALLOCATOR);
    let problems = check_vocabularies(skills);
    let count = region.change().allocations;
    (count, problems.len())
}

fn a_vocabulary_warning_costs_the_same_whatever_the_vocabulary() {
    let mut per_warning = Vec::new();
    for vocabulary in [10, 1000] {
        let few = catalog(100, 10, vocabulary);
        let many = catalog(200, 10, vocabulary);
        let (a, warned_a) = allocations(&few);
        let (b, warned_b) = allocations(&many);
        assert_eq!(
            (warned_a, warned_b),
            (100, 200),
            "one warning per unsatisfied kind"
        );
        // What 100 more warnings cost, beyond the shared paragraph and the sets.
        per_warning.push(b.saturating_sub(a) as f64 / 100.0);
    }
    assert!(
        per_warning.iter().all(|&n| n <= 1.1),
        "a warning's text and located fields are one allocation: {per_warning:?} per warning"
    );
    assert!(
        (per_warning[0] - per_warning[1]).abs() < 0.05,
        "the cost per warning does not grow with the vocabulary: {per_warning:?}"
    );
}
