//! Every command ends quietly when its reader goes away (`skillgraph tools
//! DIR | head`): piped into a reader that closes before reading, each exits
//! with the code it has when its output is read whole, and never panics.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{example, scratch};
use serde_json::json;

/// A map of 2,000 described skills in a chain: every listing of it is far
/// past a pipe's 64 KiB buffer.
fn big_map() -> PathBuf {
    let dir = scratch("pipes", "big");
    let skills: Vec<_> = (0..2000)
        .map(|n| json!({"id": format!("skill-{n}"), "description": format!("Skill number {n}, which does one thing well and says so at length.")}))
        .collect();
    let routes: Vec<_> = (0..1999)
        .map(|n| json!({"from": format!("skill-{n}"), "to": format!("skill-{}", n + 1), "guard": {"n": {"gte": n}}}))
        .collect();
    let map = json!({"skills": skills, "entries": ["skill-0"], "routes": routes});
    common::write(&dir, "skillmap.json", &map.to_string());
    dir
}

/// Run `args` with `input` on standard input, its output either read whole
/// or closed before the command writes; its exit code and standard error.
fn run(args: &[String], input: &str, close_early: bool) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillgraph"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdout = child.stdout.take();
    if close_early {
        drop(stdout.take());
    }
    let mut stdin = child.stdin.take().expect("a pipe");
    // The command may stop reading first; a lost write is no failure here.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    if let Some(stdout) = stdout {
        let _ = std::io::read_to_string(stdout);
    }
    let output = child.wait_with_output().expect("the command ends");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn every_command_ends_quietly_on_a_closed_pipe() {
    let desk = path(&example());
    let big = path(&big_map());
    let record = path(&scratch("pipes", "record").join("run.jsonl"));
    let refund = std::fs::read_to_string(example().join("conversations/refund.jsonl"))
        .expect("the shipped conversation");
    let many_steps = "{\"tools\": \"mcp\"}\n".repeat(200);
    let results = path(&example().join("results/risky-order.jsonl"));
    let play_record = vec![
        "play".into(),
        desk.clone(),
        "--record".into(),
        record.clone(),
    ];
    let commands: Vec<(Vec<String>, String)> = vec![
        (play_record, refund.clone() + &many_steps),
        (vec!["check".into(), big.clone()], String::new()),
        (
            vec![
                "check".into(),
                big.clone(),
                "--format".into(),
                "json".into(),
            ],
            String::new(),
        ),
        (vec!["tools".into(), big.clone()], String::new()),
        (
            vec![
                "tools".into(),
                big.clone(),
                "--format".into(),
                "openai".into(),
            ],
            String::new(),
        ),
        (vec!["draw".into(), big.clone()], String::new()),
        (
            vec![
                "route".into(),
                desk.clone(),
                "--cursor".into(),
                "triage".into(),
                "--results".into(),
                results,
            ],
            String::new(),
        ),
        (
            vec![
                "guard".into(),
                "--guard".into(),
                r#"{"a":{"gte":1}}"#.into(),
                "--witness".into(),
            ],
            String::new(),
        ),
        (
            vec![
                "guard".into(),
                "--guard".into(),
                r#"{"a":{"gte":1}}"#.into(),
                "--view".into(),
                r#"{"result":"{\"a\":2}"}"#.into(),
                "--format".into(),
                "json".into(),
            ],
            String::new(),
        ),
        (vec!["test".into(), desk.clone()], String::new()),
        (vec!["explain".into(), record.clone()], String::new()),
        (
            vec![
                "explain".into(),
                record.clone(),
                "--format".into(),
                "mermaid".into(),
            ],
            String::new(),
        ),
        (vec!["replay".into(), record.clone()], String::new()),
        (vec!["--help".into()], String::new()),
        (
            vec!["check".into(), path(&example().join("missing"))],
            String::new(),
        ),
    ];
    for (args, input) in &commands {
        let (whole, whole_err) = run(args, input, false);
        let (closed, closed_err) = run(args, input, true);
        assert_eq!(
            closed, whole,
            "{args:?} exits as it would have; with its output read: {whole_err}; closed: {closed_err}"
        );
        assert!(
            !closed_err.contains("panicked") && closed != Some(101),
            "{args:?} panicked on a closed pipe: {closed_err}"
        );
    }
}
