//! End-to-end tests of `skillgraph play` and `skillgraph explain`: a
//! scripted support-desk conversation played and explained, bad script
//! lines, broken and foreign records, `--iteration` and every format, and
//! the law that the explained chain ends where the record ends.

// Test scaffolding: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used)]

mod common;

use common::scratch;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn example(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/support-desk")
        .join(path)
        .display()
        .to_string()
}

fn skillgraph(args: &[&str], stdin: &str) -> Output {
    common::skillgraph_with_input(args, stdin)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Play `script` on the support desk under `posture`; the answers and the
/// record's path.
fn play(name: &str, posture: &str, script: &str) -> (Vec<Value>, String) {
    let record = scratch("sessions", name)
        .join("run.jsonl")
        .display()
        .to_string();
    let output = skillgraph(
        &[
            "play",
            &example(""),
            "--posture",
            posture,
            "--record",
            &record,
        ],
        script,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let answers = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (answers, record)
}

fn explain(args: &[&str]) -> Output {
    skillgraph(&[&["explain"], args].concat(), "")
}

fn explain_json(record: &str, extra: &[&str]) -> Value {
    let output = explain(&[&[record, "--format", "json"], extra].concat());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

fn refund_script() -> String {
    std::fs::read_to_string(example("conversations/refund.jsonl")).unwrap()
}

#[test]
fn the_refund_conversation_is_explained_by_its_risky_route() {
    let script = refund_script();
    let (answers, record) = play("refund", "assist", &script);
    assert_eq!(answers.len(), script.lines().count(), "one answer a line");
    assert!(
        answers.iter().all(|a| a.get("error").is_none()),
        "{answers:?}"
    );
    let output = explain(&[&record]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    for needle in [
        "The cursor is on refunds at the end of iteration 3",
        "triage → refunds by route triage→refunds (\"risky refund\"), fired by the result of lookup_order (status success)",
        "riskLevel = high in [high, critical]",
        "amount = 240 ≥ 100",
        "it superseded the model's pick of billing",
        "route triage→refunds closed on lookup_order: riskLevel = low, not in [high, critical]; amount = 30, not ≥ 100",
        "read of shipping refused (unreachable; class unreachable); the answer named triage, charting, faq, reports",
        "refunds: tools issue_refund",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn a_bad_line_gets_an_error_answer_and_the_session_goes_on() {
    let script = [
        "{\"turn\": \"where is my invoice?\"}",
        "not json",
        "{\"reed\": \"billing\"}",
        "{\"end\": false}",
        "{\"read\": \"biling\"}",
        "{\"result\": {\"tool_name\": \"lookup_order\", \"result\": \"{}\", \"status\": \"sucess\"}}",
        "{\"read\": \"billing\", \"end\": true}",
        "",
        "{\"read\": \"billing\"}",
        "{\"end\": true}",
    ]
    .join("\n");
    let (answers, record) = play("bad-lines", "assist", &script);
    assert_eq!(answers.len(), 9, "a blank line gets no answer: {answers:?}");
    let error = |at: usize| {
        let error = &answers[at]["error"];
        (
            error["code"].as_str().unwrap().to_owned(),
            error["message"].as_str().unwrap().to_owned(),
        )
    };
    let (code, message) = error(1);
    assert_eq!(code, "bad-json");
    assert!(message.starts_with("line 2: not JSON"), "{message}");
    assert!(
        message.contains("{\"read\": \"ID\"}"),
        "names what is expected: {message}"
    );
    let (code, message) = error(2);
    assert_eq!(code, "unknown-step");
    assert!(
        message.contains("line 3: \"reed\" is not a step (did you mean \"read\"?)"),
        "{message}"
    );
    assert!(
        error(3).1.contains("line 4: \"end\" takes true"),
        "{:?}",
        error(3)
    );
    let (code, message) = error(4);
    assert_eq!(code, "read-unknown-skill");
    assert!(message.contains("did you mean \"billing\"?"), "{message}");
    let (code, message) = error(5);
    assert_eq!(code, "unknown-status");
    assert!(message.contains("(did you mean \"success\"?)"), "{message}");
    assert!(error(6).1.contains("exactly one key"), "{:?}", error(6));
    // The session went on: the read is accepted and moves the cursor.
    assert_eq!(answers[7]["line"], 9);
    assert_eq!(answers[7]["accepted"], true);
    assert_eq!(answers[8]["move"]["by"], "model");
    assert_eq!(answers[8]["cursor"], "billing");
    let explained = explain_json(&record, &[]);
    assert_eq!(explained["cursor"], "billing");
    assert_eq!(explained["chain"][0]["pick"]["declined_offer"], false);
}

#[test]
fn each_step_reaches_the_record_before_its_answer() {
    use std::io::{BufRead, BufReader};
    let record = scratch("sessions", "flush").join("run.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillgraph"))
        .args([
            "play",
            &example(""),
            "--record",
            &record.display().to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut answers = BufReader::new(child.stdout.take().unwrap());
    input.write_all(b"{\"turn\": \"hello\"}\n").unwrap();
    input.flush().unwrap();
    let mut answer = String::new();
    answers.read_line(&mut answer).unwrap();
    assert!(answer.contains("\"step\":\"turn\""), "{answer}");
    // The process still waits for input; the turn is already on the record.
    let kinds: Vec<Value> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["event"].clone())
        .collect();
    assert_eq!(kinds, ["start", "turn"]);
    drop(input);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn a_record_cut_mid_line_is_explained_up_to_the_cut_with_a_warning() {
    let (_, record) = play("cut", "assist", &refund_script());
    let text = std::fs::read_to_string(&record).unwrap();
    let lines = text.lines().count();
    // Cut the last line (the third move) in half.
    let cut = text.trim_end().len() - 40;
    std::fs::write(&record, &text[..cut]).unwrap();
    let output = explain(&[&record]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!(
            "warning: {record}: line {lines} is cut off mid-line"
        )),
        "{}",
        stderr(&output)
    );
    assert!(
        stdout(&output).contains("The cursor is on refunds at the end of iteration 2"),
        "{}",
        stdout(&output)
    );
    let json = explain_json(&record, &[]);
    assert!(
        json["warning"]
            .as_str()
            .unwrap()
            .contains(&format!("line {lines}"))
    );
}

#[test]
fn a_record_of_another_version_or_with_a_bad_line_is_unusable() {
    let (_, record) = play("version", "assist", &refund_script());
    let text = std::fs::read_to_string(&record).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[2] = lines[2].replacen("\"v\":1", "\"v\":2", 1);
    std::fs::write(&record, lines.join("\n") + "\n").unwrap();
    let output = explain(&[&record]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("error[record-version]")
            && stderr(&output).contains("line 3: the record is version 2"),
        "{}",
        stderr(&output)
    );
    lines[2] = "{\"v\":1,\"event\":\"teleport\",\"iteration\":1}".to_owned();
    std::fs::write(&record, lines.join("\n") + "\n").unwrap();
    let output = explain(&[&record]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("error[record-bad-line]") && stderr(&output).contains("line 3:"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn iteration_n_explains_the_cursor_at_the_end_of_that_iteration() {
    let (_, record) = play("iteration", "assist", &refund_script());
    let first = explain(&[&record, "--iteration", "1"]);
    let text = stdout(&first);
    assert!(
        text.contains("The cursor is on triage at the end of iteration 1"),
        "{text}"
    );
    assert!(
        !text.contains("amount = 240"),
        "nothing after iteration 1: {text}"
    );
    let second = explain_json(&record, &["--iteration", "2"]);
    assert_eq!(second["cursor"], "refunds");
    assert_eq!(second["chain"].as_array().unwrap().len(), 2);
    assert_eq!(second["refused_reads"], serde_json::json!([]));
    let beyond = explain(&[&record, "--iteration", "4"]);
    assert_eq!(beyond.status.code(), Some(2));
    assert!(
        stderr(&beyond).contains("error[no-such-iteration]")
            && stderr(&beyond)
                .contains("iteration 4 did not end in this record; it ends iterations 1 to 3"),
        "{}",
        stderr(&beyond)
    );
}

#[test]
fn each_format_says_the_same_run() {
    let (_, record) = play("formats", "assist", &refund_script());
    let json = explain_json(&record, &[]);
    assert_eq!(json["cursor"], "refunds");
    let route = &json["chain"][1]["route"];
    assert_eq!(route["tool_name"], "lookup_order");
    assert_eq!(route["label"], "risky refund");
    assert_eq!(route["conditions"][1]["actual_summary"], "240");
    assert_eq!(json["chain"][1]["superseded"], "billing");
    assert_eq!(
        json["chain"][0]["closed"][0]["failed"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(json["refused_reads"][0]["refusal"], "unreachable");
    assert_eq!(
        json["active"][2],
        serde_json::json!({"id": "faq", "tools": []})
    );

    let output = explain(&[&record, "--format", "mermaid"]);
    let chart = stdout(&output);
    let map = stdout(&skillgraph(&["draw", &example("")], ""));
    assert!(chart.starts_with(&map), "the declared map first:\n{chart}");
    assert!(
        chart.contains("    %% the path taken\n    s6 ==>|\"1. route (iteration 2)\"| s3\n"),
        "{chart}"
    );
    assert!(
        chart.ends_with("    style s3 stroke-width:4px\n"),
        "{chart}"
    );
    assert!(!chart.contains("not declared"), "{chart}");
}

#[test]
fn the_refund_conversation_as_a_page_holds_the_facts_and_is_small() {
    let (_, record) = play("page", "assist", &refund_script());
    let output = explain(&[&record, "--format", "html"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let page = stdout(&output);
    assert!(
        page.len() < 200 * 1024,
        "{} bytes (goal under 200 KiB)",
        page.len()
    );
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("<svg class=\"map\""));
    for fact in [
        "The cursor is on <b class=\"skill\">refunds</b> at the end of iteration 3",
        "triage → refunds by the route &quot;risky refund&quot;",
        "<td><code>amount</code></td><td>≥ <code>gte</code></td><td><code>100</code></td><td><code>240</code></td><td>✓ yes</td>",
        "The route superseded the model's pick of",
        "A read of <b class=\"skill\">shipping</b> was refused (<code>unreachable</code>",
        "The offer the model was shown",
        "<li><b class=\"skill\">refunds</b>: <code>issue_refund</code></li>",
    ] {
        assert!(page.contains(fact), "the page says: {fact}");
    }
    for outside in [
        "<script",
        "src=",
        "<link",
        "@import",
        "url(http",
        "href=\"http",
    ] {
        assert!(!page.contains(outside), "nothing from outside: {outside}");
    }
    let first = stdout(&explain(&[&record, "--format", "html", "--iteration", "1"]));
    assert!(
        first.contains("The cursor is on <b class=\"skill\">triage</b> at the end of iteration 1")
    );
}

#[test]
fn the_refund_conversation_as_spans_carries_each_move_guard_and_refusal() {
    use skillgraph::skill_explain::trace::{self, Value};
    let (_, record) = play("spans", "assist", &refund_script());
    let text = std::fs::read_to_string(&record).expect("the record");
    let record = skillgraph::skill_session::read_record(&text).expect("the record reads");
    let spans = trace::spans(&record);
    let names: Vec<&str> = spans.iter().map(|span| span.name).collect();
    assert_eq!(
        names,
        [
            "skillgraph run",
            "skillgraph turn",
            "skillgraph iteration",
            "skillgraph iteration",
            "skillgraph iteration"
        ]
    );
    assert!(spans[2..].iter().all(|span| span.parent == Some(1)));
    let attribute = |span: &trace::Span, key: &str| {
        span.attributes
            .iter()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| value.clone())
    };
    let event_value = |event: &trace::SpanEvent, key: &str| {
        event
            .attributes
            .iter()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| value.clone())
    };
    let moved = &spans[3];
    assert_eq!(
        attribute(moved, trace::MOVE_BY),
        Some(Value::String("route".into()))
    );
    assert_eq!(
        attribute(moved, trace::CURSOR_BEFORE),
        Some(Value::String("triage".into()))
    );
    assert_eq!(
        attribute(moved, trace::CURSOR_AFTER),
        Some(Value::String("refunds".into()))
    );
    assert_eq!(
        attribute(moved, trace::ROUTE_LABEL),
        Some(Value::String("risky refund".into()))
    );
    let fired = &moved.events[0];
    assert_eq!(fired.name, trace::GUARD_EVENT);
    assert_eq!(
        event_value(fired, trace::GUARD_FIRED),
        Some(Value::Bool(true))
    );
    assert_eq!(
        event_value(fired, trace::CONDITION_ACTUALS),
        Some(Value::Strings(vec!["high".into(), "240".into()]))
    );
    assert_eq!(
        event_value(fired, trace::CONDITION_PASSED),
        Some(Value::Bools(vec![true, true]))
    );
    let closed = &spans[2].events[0];
    assert_eq!(
        event_value(closed, trace::GUARD_FIRED),
        Some(Value::Bool(false))
    );
    assert_eq!(
        event_value(closed, trace::CONDITION_PASSED),
        Some(Value::Bools(vec![false, false]))
    );
    let refused = spans[4]
        .events
        .iter()
        .find(|event| event.name == trace::READ_REFUSED_EVENT)
        .expect("the refused read of shipping");
    assert_eq!(
        event_value(refused, trace::REFUSED_TARGET),
        Some(Value::String("shipping".into()))
    );
    assert_eq!(
        event_value(refused, trace::REFUSED_REASON),
        Some(Value::String("unreachable".into()))
    );
}

#[test]
fn a_receiver_that_is_down_costs_spans_never_an_answer() {
    let dir = scratch("sessions", "otlp-down");
    let record = dir.join("run.jsonl").display().to_string();
    // Port 9 (discard) on loopback: nothing listens, every export fails.
    let output = skillgraph(
        &[
            "play",
            &example(""),
            "--record",
            &record,
            "--otlp",
            "http://127.0.0.1:9",
        ],
        &refund_script(),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        stdout(&output).lines().count(),
        refund_script()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count()
    );
    let said = stderr(&output);
    assert_eq!(said.matches("did not take").count(), 1, "said once: {said}");
    assert!(
        said.contains("spans were not taken by the OTLP receiver at http://127.0.0.1:9/v1/traces"),
        "{said}"
    );
    let refused = skillgraph(&["play", &example(""), "--otlp", "https://127.0.0.1:9"], "");
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("otlp-endpoint"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn a_map_with_a_refused_guard_cannot_be_played() {
    let dir = scratch("sessions", "refused");
    std::fs::write(
        dir.join("skillmap.json"),
        r#"{"skills": [{"id": "a"}, {"id": "b"}], "entries": ["a"],
            "routes": [{"from": "a", "to": "b", "guard": {"amount": {"gtee": 1}}}]}"#,
    )
    .unwrap();
    let file = dir.join("skillmap.json").display().to_string();
    let output = skillgraph(&["play", &file], "");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("error[guard-refused]") && stderr(&output).contains("route a→b"),
        "{}",
        stderr(&output)
    );
}

/// The law: the explained chain runs unbroken from the start to where the
/// record ends, and `--iteration N` ends where the record's move N put the
/// cursor.
#[test]
fn the_explained_chain_ends_where_the_record_ends() {
    let scripts = [
        ("assist", refund_script()),
        (
            "rails",
            "{\"turn\": \"my invoice\"}\n{\"read\": \"billing\"}\n{\"end\": true}\n{\"result\": {\"tool_name\": \"lookup_invoice\", \"result\": \"{}\"}}\n{\"end\": true}\n{\"result\": {\"tool_name\": \"charge_history\", \"result\": {\"disputed\": true}}}\n{\"end\": true}\n".to_owned(),
        ),
        (
            "guard",
            "{\"turn\": {\"message\": \"refund\", \"menu\": {\"candidates\": [{\"id\": \"refunds\", \"relevance\": 0.9}]}}}\n{\"read\": \"billing\"}\n{\"read\": \"refunds\"}\n{\"end\": true}\n{\"result\": {\"tool_name\": \"issue_refund\", \"result\": \"{}\", \"status\": \"denied\"}}\n{\"end\": true}\n{\"turn\": \"and now?\"}\n{\"end\": true}\n".to_owned(),
        ),
        ("assist", "{\"turn\": \"hello\"}\n{\"read\": \"faq\"}\n".to_owned()),
    ];
    for (at, (posture, script)) in scripts.iter().enumerate() {
        let (_, record) = play(&format!("law-{at}"), posture, script);
        let text = std::fs::read_to_string(&record).unwrap();
        let events: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let moves: Vec<&Value> = events.iter().filter(|e| e["event"] == "move").collect();
        let end = moves.last().map_or(&events[0]["cursor"], |m| &m["to"]);
        let json = explain_json(&record, &[]);
        assert_eq!(&json["cursor"], end, "script {at}");
        let chain = json["chain"].as_array().unwrap();
        assert_eq!(
            chain.len(),
            moves.len(),
            "every move is a link, script {at}"
        );
        let mut cursor = &json["start"];
        for link in chain {
            assert_eq!(&link["from"], cursor, "script {at}: the chain is unbroken");
            cursor = &link["to"];
        }
        assert_eq!(cursor, end, "script {at}");
        for moved in &moves {
            let n = moved["iteration"].to_string();
            assert_eq!(
                explain_json(&record, &["--iteration", &n])["cursor"],
                moved["to"],
                "script {at}, iteration {n}"
            );
        }
    }
}
