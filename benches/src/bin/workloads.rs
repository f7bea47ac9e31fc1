//! `workloads [--only NAME]`: the workloads of `shared/bench/WORKLOADS.md`,
//! run exactly as defined (after a warm-up of min(n, 1000) operations), each
//! printed as it finishes, then one JSON object of nanoseconds per operation
//! on the last line.
//!
//! Without `--only`, each workload runs in a fresh process of this binary
//! (`--only NAME`), so that no workload is timed on a heap the ones before it
//! shaped: glibc's malloc decides whether to hand freed memory back to the
//! system from the sizes it has seen freed so far, and the W2 descriptors
//! change speed by half with that history.
//!
//! `W4_idle_bytes` is not a time: it is the bytes one fresh, idle W4 session
//! holds beyond the shared graph (its struct and its pending `start` event),
//! counted by this binary's allocator.

use std::alloc::System;
use std::hint::black_box;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use skill_benches::{
    w1_guard, w1_results, w1_view, w1c_guard, w2_offer, w2_skills, w3_skills, w4_1000_graph,
    w4_graph, w4_iteration, w4_results, w4_session, w5_map,
};
use skill_checkup::{check_map, check_vocabularies};
use skill_core::GuardView;
use skill_guard::Guard;
use skill_tools::read_skill_within;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

/// Nanoseconds per operation of `op` run `n` times after the warm-up.
fn time(n: usize, mut op: impl FnMut(usize)) -> f64 {
    for i in 0..n.min(1000) {
        op(i);
    }
    let start = Instant::now();
    for i in 0..n {
        op(i);
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

/// Counts allocations, to measure what one session holds.
#[global_allocator]
static ALLOCATOR: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Nanoseconds per operation of `op` run `n` times (after the warm-up) on
/// fresh states from `make`, which are built, and dropped, outside the clock.
fn time_fresh<S>(n: usize, mut make: impl FnMut() -> S, mut op: impl FnMut(&mut S)) -> f64 {
    let mut batch = |count: usize| {
        let mut states: Vec<S> = (0..count).map(|_| make()).collect();
        let start = Instant::now();
        states.iter_mut().for_each(&mut op);
        let elapsed = start.elapsed();
        drop(states);
        elapsed
    };
    batch(n.min(1000));
    let mut total = Duration::ZERO;
    let mut done = 0;
    while done < n {
        let count = (n - done).min(1000);
        total += batch(count);
        done += count;
    }
    total.as_nanos() as f64 / n as f64
}

/// The bytes one fresh W4 session holds beyond the shared graph.
fn idle_session_bytes() -> f64 {
    let graph = w4_graph();
    let region = Region::new(ALLOCATOR);
    let session = Box::new(skill_session::Session::new(
        std::sync::Arc::clone(&graph),
        skill_session::Posture::Assist,
        Vec::new(),
    ));
    let change = region.change();
    drop(session);
    let held = change.bytes_allocated as isize + change.bytes_reallocated
        - change.bytes_deallocated as isize;
    held as f64
}

const NAMES: [&str; 17] = [
    "W1",
    "W1b",
    "W1c",
    "W1d",
    "W1s",
    "W2_10",
    "W2_100",
    "W2_1000",
    "W2_10000",
    "W3_100",
    "W3_1000",
    "W3_5000",
    "W4",
    "W4_1000",
    "W4_idle_bytes",
    "W5_1000",
    "W5_5000",
];

fn run(name: &str) -> Option<f64> {
    let results = || w1_results();
    Some(match name {
        "W1" => {
            let (results, guard) = (results(), compiled(&w1_guard()));
            time(1_000_000, |i| {
                black_box(guard.test(&w1_view(black_box(&results[i % 1000]))));
            })
        }
        "W1b" => {
            let (results, guard) = (results(), compiled(&w1_guard()));
            time(1_000_000, |i| {
                black_box(guard.evaluate(&w1_view(black_box(&results[i % 1000]))));
            })
        }
        "W1c" => {
            let (results, guard) = (results(), compiled(&w1c_guard()));
            time(5_000_000, |i| {
                let hop = GuardView::new("lookup_order", &results[i % 1000])
                    .with_iteration((i % 8) as f64)
                    .with_user_message("m");
                black_box(guard.test(black_box(&hop)));
            })
        }
        "W1d" => {
            let guard = w1_guard();
            time(200_000, |_| {
                black_box(Guard::compile(black_box(&guard)).is_ok());
            })
        }
        "W4" => {
            let graph = w4_graph();
            let results = w4_results(["lookup_order", "lookup_invoice", "track_parcel"]);
            time_fresh(
                100_000,
                || w4_session(&graph),
                |session| {
                    black_box(w4_iteration(session, black_box(&results)));
                },
            )
        }
        // The map has no W4 tools: the same three results arrive on `t1`,
        // `t500` and `t999` (two routes fire, one guard closes).
        "W4_1000" => {
            let graph = w4_1000_graph();
            let results = w4_results(["t1", "t500", "t999"]);
            time_fresh(
                2_000,
                || w4_session(&graph),
                |session| {
                    black_box(w4_iteration(session, black_box(&results)));
                },
            )
        }
        "W4_idle_bytes" => idle_session_bytes(),
        "W1s" => {
            let results = results();
            time(1_000_000, |i| {
                black_box(
                    serde_json::from_str::<serde::de::IgnoredAny>(black_box(&results[i % 1000]))
                        .is_ok(),
                );
            })
        }
        _ => {
            let (family, n) = name.split_once('_')?;
            let n: usize = n.parse().ok()?;
            match family {
                "W2" => {
                    let (skills, offer) = (w2_skills(n), w2_offer(n));
                    let ops = if n >= 10_000 {
                        20
                    } else {
                        (2_000_000 / n).max(20)
                    };
                    // No catalog budget: the reference lists every row, so
                    // the whole description is the work compared.
                    time(ops, |_| {
                        black_box(read_skill_within(
                            black_box(&skills),
                            Some(black_box(&offer)),
                            usize::MAX,
                        ));
                    })
                }
                "W3" => {
                    let skills = w3_skills(n);
                    time((200_000 / n).max(5), |_| {
                        black_box(check_vocabularies(black_box(&skills)));
                    })
                }
                "W5" => {
                    let map = w5_map(n);
                    time((20_000 / n).max(3), |_| {
                        black_box(check_map(black_box(&map)));
                    })
                }
                _ => return None,
            }
        }
    })
}

fn compiled(guard: &Value) -> Guard {
    Guard::compile(guard).expect("the workload guards compile")
}

/// Runs `name` in a fresh process of this binary and reads its figure.
fn run_isolated(name: &str) -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let output = Command::new(&exe)
        .args(["--only", name])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !output.status.success() {
        return Err(format!(
            "`workloads --only {name}` failed ({})",
            output.status
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str::<Value>(last)
        .ok()
        .and_then(|figures| figures.get(name).and_then(Value::as_f64))
        .ok_or_else(|| format!("`workloads --only {name}` printed no figure for {name}: {last:?}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut figures = serde_json::Map::new();
    match args.as_slice() {
        [] => {
            for name in NAMES {
                match run_isolated(name) {
                    Ok(ns) => {
                        figures.insert(name.to_owned(), Value::from(ns));
                    }
                    Err(message) => {
                        eprintln!("workloads: {message}");
                        return ExitCode::FAILURE;
                    }
                }
            }
        }
        [flag, name] if flag == "--only" => {
            let Some(ns) = run(name) else {
                eprintln!(
                    "workloads: no workload \"{name}\"; the workloads are: {}",
                    NAMES.join(", ")
                );
                return ExitCode::from(2);
            };
            let unit = if name.ends_with("_bytes") {
                "bytes"
            } else {
                "ns/op"
            };
            eprintln!("{name}: {ns:.1} {unit}");
            figures.insert(name.to_owned(), Value::from((ns * 10.0).round() / 10.0));
        }
        _ => {
            eprintln!(
                "usage: workloads [--only NAME]\n\nNAME is one of: {}",
                NAMES.join(", ")
            );
            return ExitCode::from(2);
        }
    }
    println!("{}", Value::Object(figures));
    ExitCode::SUCCESS
}
