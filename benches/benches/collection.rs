//! `check` on a generated collection of 1,000 skills (issue 18's goal: under
//! 50 ms on the CI machine): the loader finds every skill folder below the
//! root, reads and validates each `SKILL.md`, and the check-up runs, as
//! `skillgraph check DIR` does. The collection is laid out as public ones
//! are: ten category folders of 100 skills each, every skill with a
//! description of about 300 characters, `allowed-tools` and a `scripts/`
//! folder of its own.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};

/// Write the collection under the benches' scratch folder once.
fn collection(skills: usize) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("collection-{skills}"));
    if root.join("skills").is_dir() {
        return root;
    }
    for n in 0..skills {
        let id = format!("skill-{n:04}");
        let dir = root.join(format!("skills/category-{}/{id}", n % 10));
        std::fs::create_dir_all(dir.join("scripts")).expect("a skill folder can be made");
        let description = format!(
            "Use {id} when the user asks for the reports it builds: it reads the inputs, checks \
             each field against the house rules, and writes a short summary with the figures \
             that matter and the next step to take. Not for anything else."
        );
        let text = format!(
            "---\nname: {id}\ndescription: {description}\nallowed-tools: Read Grep Bash(git:*)\nlicense: MIT\n---\n# {id}\n\n1. Run `scripts/build.sh`.\n2. Read `references/rules.md`.\n"
        );
        std::fs::write(dir.join("SKILL.md"), text).expect("the skill file is written");
        std::fs::write(dir.join("scripts/build.sh"), "#!/bin/sh\n").expect("a script is written");
    }
    root
}

fn check(c: &mut Criterion) {
    let root = collection(1_000);
    let mut group = c.benchmark_group("check a collection");
    group.sample_size(30);
    group.bench_function("1000 skills", |b| {
        b.iter(|| {
            let loaded = skillgraph::load(black_box(&root)).expect("the collection loads");
            assert_eq!(loaded.map.skills.len(), 1_000);
            loaded.checkup()
        })
    });
    group.finish();
}

criterion_group!(benches, check);
criterion_main!(benches);
