//! The fault list of `cargo xtask interop` (SPEC §9.7): `skillgraph serve`
//! on the interop desk, spoken to over standard input in raw JSON-RPC lines
//! by a client that means no good, each fault in a run of its own with
//! `--record`; every answer is checked, and every record written is then
//! replayed with `skillgraph replay` and explained with `skillgraph
//! explain`, which must both succeed.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The most bytes an answer to one fault may take: nothing the client sent
/// comes back past 256 characters.
const MAX_ANSWER: usize = 4_096;

/// Five megabytes of one letter, for names and ids no answer may repeat.
fn huge() -> String {
    "x".repeat(5 * 1024 * 1024)
}

/// One fault: the lines sent after the handshake (when `handshake`), and a
/// check of the answer to the last of them.
struct Fault {
    name: &'static str,
    handshake: bool,
    lines: Vec<Value>,
    check: fn(&Value) -> Result<()>,
}

fn error_code(answer: &Value, code: i64) -> Result<()> {
    if answer["error"]["code"] != json!(code) {
        bail!("expected the error {code}, got {answer:.300}");
    }
    Ok(())
}

fn faults() -> Vec<Fault> {
    let call = |params: Value| json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params});
    vec![
        Fault {
            name: "a tool name that is not a string",
            handshake: true,
            lines: vec![call(json!({"name": 42, "arguments": {}}))],
            check: |answer| error_code(answer, -32602),
        },
        Fault {
            name: "a 5 MB method name",
            handshake: true,
            lines: vec![json!({"jsonrpc": "2.0", "id": 9, "method": huge(), "params": {}})],
            check: |answer| error_code(answer, -32601),
        },
        Fault {
            name: "a 5 MB resource URI",
            handshake: true,
            lines: vec![
                json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": format!("file:///{}", huge())}}),
            ],
            check: |answer| {
                if answer.get("error").is_none() {
                    bail!("expected an error, got {answer:.300}");
                }
                Ok(())
            },
        },
        Fault {
            name: "a 5 MB unknown tool name",
            handshake: true,
            lines: vec![call(json!({"name": huge(), "arguments": {}}))],
            check: |answer| error_code(answer, -32602),
        },
        Fault {
            name: "a read with an id that is not a string",
            handshake: true,
            lines: vec![call(json!({"name": "read_skill", "arguments": {"id": 5}}))],
            check: |answer| {
                if answer["result"]["isError"] != json!(true) {
                    bail!("expected a tool error, got {answer:.300}");
                }
                Ok(())
            },
        },
        Fault {
            name: "a read with no arguments",
            handshake: true,
            lines: vec![call(json!({"name": "read_skill"}))],
            check: |answer| {
                if answer["result"]["isError"] != json!(true) {
                    bail!("expected a tool error, got {answer:.300}");
                }
                Ok(())
            },
        },
        Fault {
            name: "a run that only shakes hands",
            handshake: true,
            lines: vec![json!({"jsonrpc": "2.0", "id": 9, "method": "ping"})],
            check: |answer| {
                if answer.get("result").is_none() {
                    bail!("expected ping's answer, got {answer:.300}");
                }
                Ok(())
            },
        },
        Fault {
            name: "a line that is not JSON",
            handshake: true,
            lines: vec![Value::String(format!("{{not json {}", huge()))],
            check: |answer| error_code(answer, -32700),
        },
    ]
}

/// Run every fault against `skillgraph serve FOLDER`, each with a record
/// in `scratch`, then replay and explain every record.
pub fn against_serve(skillgraph: &str, folder: &str, scratch: &Path) -> Result<()> {
    if scratch.exists() {
        std::fs::remove_dir_all(scratch)
            .with_context(|| format!("cannot clear {}", scratch.display()))?;
    }
    std::fs::create_dir_all(scratch)
        .with_context(|| format!("cannot create {}", scratch.display()))?;
    let list = faults();
    for (at, fault) in list.iter().enumerate() {
        let record = scratch.join(format!("fault-{at}.jsonl"));
        let answer = provoke(skillgraph, folder, &record, fault)
            .with_context(|| format!("fault {:?}", fault.name))?;
        let text = answer.to_string();
        if text.len() > MAX_ANSWER {
            bail!(
                "fault {:?}: the answer repeats the input ({} bytes): {text:.300}",
                fault.name,
                text.len()
            );
        }
        (fault.check)(&answer).with_context(|| format!("fault {:?}", fault.name))?;
        replays(skillgraph, &record).with_context(|| format!("fault {:?}", fault.name))?;
        println!(
            "xtask: fault {:?}: answered, recorded, replayed",
            fault.name
        );
    }
    println!(
        "xtask: {} of {} faults passed, every record replayed and explained",
        list.len(),
        list.len()
    );
    Ok(())
}

/// Start serve with `record`, send `fault`'s lines, and read the answer
/// to id 9; then close its input and wait for it.
fn provoke(skillgraph: &str, folder: &str, record: &Path, fault: &Fault) -> Result<Value> {
    let mut child = Command::new(skillgraph)
        .args(["serve", folder, "--record"])
        .arg(record)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("skillgraph serve could not start")?;
    let mut input = child.stdin.take().context("serve's standard input")?;
    let output = child.stdout.take().context("serve's standard output")?;
    let mut lines = BufReader::new(output).lines();
    let mut send = |message: &Value| -> Result<()> {
        let line = match message {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        };
        writeln!(input, "{line}").context("serve stopped reading")
    };
    if fault.handshake {
        send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "xtask-faults", "version": "1"}}}),
        )?;
        answer_to(&mut lines, &json!(1))?;
        send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
    }
    for line in &fault.lines {
        send(line)?;
    }
    // A line that is not JSON is answered with a null id.
    let id = match fault.lines.last() {
        Some(Value::String(_)) => Value::Null,
        _ => json!(9),
    };
    let answer = answer_to(&mut lines, &id)?;
    drop(input);
    let status = child.wait().context("serve could not be waited for")?;
    if !status.success() {
        bail!("serve exited with {status} after the fault");
    }
    Ok(answer)
}

/// The next line of `lines` whose id is `id`, past notifications.
fn answer_to(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    id: &Value,
) -> Result<Value> {
    for line in lines {
        let line = line.context("serve's output could not be read")?;
        let message: Value = serde_json::from_str(&line)
            .with_context(|| format!("serve wrote a line that is not JSON: {line:.300}"))?;
        if message.get("id") == Some(id) {
            return Ok(message);
        }
    }
    bail!("serve closed its output before answering {id}")
}

/// `skillgraph replay RECORD` and `skillgraph explain RECORD` both succeed.
fn replays(skillgraph: &str, record: &Path) -> Result<()> {
    for command in ["replay", "explain"] {
        let output = Command::new(skillgraph)
            .arg(command)
            .arg(record)
            .output()
            .with_context(|| format!("skillgraph {command} could not start"))?;
        if !output.status.success() {
            bail!(
                "`skillgraph {command} {}` failed: {}",
                record.display(),
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
    Ok(())
}
