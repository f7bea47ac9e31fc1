//! `skillgraph serve` end to end (SPEC §9): the binary driven by rmcp's own
//! client over a child process, in front of `desk-upstream`, the example
//! upstream that answers the support desk's tools from canned data.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ProtocolVersion, ReadResourceRequestParams,
    ResourceContents,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use common::{Watcher, data_file, desk, desk_upstream, one_upstream, scratch};

/// How long a test waits for a notification before it fails.
const PATIENCE: Duration = Duration::from_secs(20);

/// `skillgraph serve DIR ARGS…` as a child process.
fn serve_command(dir: &Path, args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skillgraph"));
    command.arg("serve").arg(dir).args(args);
    command
}

async fn connect(dir: &Path, args: &[&str]) -> (RunningService<RoleClient, Watcher>, Watcher) {
    let watcher = Watcher::default();
    let transport = TokioChildProcess::new(serve_command(dir, args)).expect("serve starts");
    let client = watcher
        .clone()
        .serve(transport)
        .await
        .expect("the handshake succeeds");
    (client, watcher)
}

async fn tool_names(client: &RunningService<RoleClient, Watcher>) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list answers")
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect();
    names.sort();
    names
}

async fn call(
    client: &RunningService<RoleClient, Watcher>,
    tool: &str,
    arguments: Value,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = arguments.as_object().cloned();
    client.call_tool(params).await
}

/// The one text a resource read answers with.
async fn resource_text(
    client: &RunningService<RoleClient, Watcher>,
    uri: &str,
) -> Result<String, rmcp::ServiceError> {
    let read = client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await?;
    match read.contents.into_iter().next() {
        Some(ResourceContents::TextResourceContents { text, .. }) => Ok(text),
        other => panic!("{uri} is one text resource, not {other:?}"),
    }
}

fn texts(answer: &CallToolResult) -> Vec<String> {
    answer
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect()
}

/// The record's `move` events, as JSON.
fn moves(record: &str) -> Vec<Value> {
    record
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a record line is JSON"))
        .filter(|event| event["event"] == "move")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_risky_order_moves_the_cursor_to_refunds_and_brings_its_tools_and_body() {
    let dir = desk("scenario", one_upstream(), |_| {});
    let record = dir.join("run.jsonl");
    let record_arg = record.display().to_string();
    let (client, watcher) = connect(&dir, &["--record", &record_arg]).await;

    let info = client.peer_info().expect("the server introduced itself");
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(
        instructions.starts_with("<skill_content name=\"triage\">"),
        "{instructions}"
    );
    assert!(
        instructions.contains("Find out what the customer needs"),
        "{instructions}"
    );

    assert_eq!(
        tool_names(&client).await,
        [
            "list_skills",
            "lookup_invoice",
            "lookup_order",
            "read_skill",
            "track_parcel"
        ]
    );

    let answer = call(&client, "lookup_order", json!({"order_id": 4412}))
        .await
        .expect("the call is answered");
    let blocks = texts(&answer);
    assert_eq!(blocks.len(), 2, "{blocks:#?}");
    let canned: Value =
        serde_json::from_str(&blocks[0]).expect("the upstream's answer, as it came");
    assert_eq!(
        (canned["riskLevel"].as_str(), canned["amount"].as_i64()),
        (Some("high"), Some(240))
    );
    assert!(
        blocks[1].starts_with("<skill_content name=\"refunds\">"),
        "{}",
        blocks[1]
    );
    tokio::time::timeout(PATIENCE, watcher.changed.notified())
        .await
        .expect("tools/list_changed arrives after the move");

    let tools = tool_names(&client).await;
    assert!(tools.contains(&"issue_refund".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"lookup_order".to_owned()), "{tools:?}");

    let text = resource_text(&client, "skillgraph://record")
        .await
        .expect("the record resource reads");
    let written = std::fs::read_to_string(&record).expect("the record file is written");
    assert_eq!(text, written, "the resource and the file hold one record");
    let moves = moves(&text);
    assert_eq!(moves.len(), 1, "{moves:#?}");
    assert_eq!(
        (&moves[0]["from"], &moves[0]["to"], &moves[0]["by"]),
        (&json!("triage"), &json!("refunds"), &json!("route"))
    );
    let conditions = &moves[0]["guard"]["conditions"];
    assert_eq!(conditions[0]["key"], "riskLevel");
    assert_eq!(conditions[0]["actual_summary"], "high");
    assert_eq!(conditions[1]["key"], "amount");
    assert_eq!(conditions[1]["passed"], true);
    client.cancel().await.expect("the client closes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_low_risk_order_stays_in_triage_and_says_nothing_more() {
    let dir = desk("low-risk", one_upstream(), |_| {});
    let (client, watcher) = connect(&dir, &[]).await;
    let answer = call(&client, "lookup_order", json!({"order_id": 4413}))
        .await
        .expect("answered");
    assert_eq!(texts(&answer).len(), 1, "no body is added on a stay");
    assert!(
        tokio::time::timeout(Duration::from_millis(500), watcher.changed.notified())
            .await
            .is_err(),
        "no tools/list_changed when nothing changed"
    );
    assert!(
        tool_names(&client)
            .await
            .contains(&"lookup_order".to_owned())
    );
    client.cancel().await.expect("the client closes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_read_answers_with_the_body_and_changes_the_tools() {
    let dir = desk("read", one_upstream(), |_| {});
    let (client, watcher) = connect(&dir, &[]).await;
    let answer = call(&client, "read_skill", json!({"id": "shipping"}))
        .await
        .expect("answered");
    assert_ne!(answer.is_error, Some(true));
    let text = texts(&answer).join("");
    // shipping's mode is system-prompt; over MCP the read still brings the body.
    assert!(
        text.starts_with("<skill_content name=\"shipping\">"),
        "{text}"
    );
    tokio::time::timeout(PATIENCE, watcher.changed.notified())
        .await
        .expect("tools/list_changed");
    let refused = call(&client, "read_skill", json!({"id": "no-such-skill"}))
        .await
        .expect("answered");
    assert_eq!(refused.is_error, Some(true));
    let bad = call(&client, "read_skill", json!({"id": 7, "extra": true}))
        .await
        .expect("answered");
    assert_eq!(bad.is_error, Some(true), "{bad:?}");
    assert!(
        texts(&bad)[0].contains("read_skill takes no argument `extra`"),
        "{bad:?}"
    );
    client.cancel().await.expect("the client closes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_tools_refuses_a_tool_not_offered_and_names_the_skills_that_carry_it() {
    let dir = desk("strict", one_upstream(), |_| {});
    let record = dir.join("run.jsonl");
    let (client, _) = connect(
        &dir,
        &["--strict-tools", "--record", &record.display().to_string()],
    )
    .await;
    let refused = call(&client, "issue_refund", json!({"order_id": 4412}))
        .await
        .expect("answered");
    assert_eq!(refused.is_error, Some(true));
    assert!(texts(&refused)[0].contains("refunds"), "{refused:?}");
    client.cancel().await.expect("the client closes");

    let (client, _) = connect(&dir, &["--record", &record.display().to_string()]).await;
    let forwarded = call(&client, "issue_refund", json!({"order_id": 4412}))
        .await
        .expect("answered");
    assert_ne!(
        forwarded.is_error,
        Some(true),
        "without --strict-tools the call is forwarded"
    );
    client.cancel().await.expect("the client closes");
    let written = std::fs::read_to_string(&record).expect("the record");
    assert!(
        written.contains(r#""tool_name":"issue_refund""#) && written.contains(r#""offered":false"#),
        "{written}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_upstream_fails_its_own_tools_by_name_as_tool_errors_and_the_rest_work() {
    let scratch_data = scratch("serve", "split-data");
    let all: Value =
        serde_json::from_str(&std::fs::read_to_string(data_file()).expect("data")).expect("JSON");
    let (mut orders, mut rest) = (json!({}), json!({}));
    for (tool, entry) in all.as_object().expect("an object") {
        let side = if tool == "lookup_order" || tool == "issue_refund" {
            &mut orders
        } else {
            &mut rest
        };
        side[tool] = entry.clone();
    }
    let orders_file = common::write(&scratch_data, "orders.json", &orders.to_string());
    let rest_file = common::write(&scratch_data, "rest.json", &rest.to_string());
    let pid_file = scratch_data.join("orders.pid");
    let script = format!(
        "echo $$ >> '{}'; exec '{}' --data '{}'",
        pid_file.display(),
        desk_upstream().display(),
        orders_file
    );
    let servers = json!({
        "orders": {"command": "sh", "args": ["-c", script]},
        "desk": {"command": desk_upstream(), "args": ["--data", rest_file]},
    });
    let dir = desk("killed", servers, |_| {});
    let (client, _) = connect(&dir, &[]).await;
    // desk-upstream speaks both generations: its first link is sessionless,
    // and this handshake client's first call opens a handshake link, a
    // process of its own. Both go.
    let first = call(&client, "lookup_order", json!({"order_id": 4413}))
        .await
        .expect("the first call is answered");
    assert_ne!(first.is_error, Some(true), "{first:?}");
    let pids = std::fs::read_to_string(&pid_file).expect("the pids are written");
    let pids: Vec<&str> = pids.split_whitespace().collect();
    assert_eq!(pids.len(), 2, "one process per generation");
    let killed = Command::new("kill")
        .arg("-9")
        .args(&pids)
        .status()
        .expect("kill runs");
    assert!(killed.success());
    tokio::time::sleep(Duration::from_millis(300)).await;

    // SPEC §9.7: a tool error the model sees, naming the upstream, and a
    // `failure` result with the error in the record.
    let failed = call(&client, "lookup_order", json!({"order_id": 4412}))
        .await
        .expect("a failed call is answered");
    assert_eq!(failed.is_error, Some(true), "{failed:?}");
    let message = serde_json::to_string(&failed.content).expect("the content is JSON");
    assert!(
        message.contains(r#"upstream server \"orders\" has stopped"#),
        "{message}"
    );
    let record = resource_text(&client, "skillgraph://record")
        .await
        .expect("the record is served");
    assert!(
        record.contains(r#""tool_name":"lookup_order","call":2,"status":"failure","bytes":0,"result":"","error":"upstream server \"orders\" has stopped"#),
        "{record}"
    );
    let alive = call(&client, "lookup_invoice", json!({"invoice_id": "INV-2001"}))
        .await
        .expect("answered");
    assert_ne!(alive.is_error, Some(true), "{alive:?}");
    client.cancel().await.expect("the client closes");
}

/// SPEC §9.2 and §9.3 on the sessionless generation (2026-07-28): one list
/// for every request, whatever the run does; the call gate refuses what no
/// active skill carries; every read answer and refusal ends with the run's
/// position; forwarded answers carry `resultType` (rmcp's client refuses a
/// result without it on this revision).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_on_the_newest_protocol_gets_one_list_and_the_position_in_answers() {
    let dir = desk("modern", one_upstream(), |_| {});
    let record = dir.join("run.jsonl");
    let record_arg = record.display().to_string();
    let transport = TokioChildProcess::new(serve_command(&dir, &["--record", &record_arg]))
        .expect("serve starts");
    let client = ()
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::LATEST],
            },
        )
        .await
        .expect("discovery succeeds");
    let listed = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect()
    };
    let before = listed(client.list_all_tools().await.expect("tools/list"));
    for tool in [
        "read_skill",
        "list_skills",
        "lookup_order",
        "issue_refund",
        "render_chart",
    ] {
        assert!(before.contains(&tool.to_owned()), "{tool}: {before:?}");
    }

    let mut refund = CallToolRequestParams::new("issue_refund");
    refund.arguments = json!({"order_id": 4412}).as_object().cloned();
    let refused = client.call_tool(refund.clone()).await.expect("answered");
    assert_eq!(
        refused.is_error,
        Some(true),
        "triage does not carry issue_refund: {refused:?}"
    );
    let text = serde_json::to_string(&refused.content).expect("JSON");
    assert!(
        text.contains("This run is in 'triage'; from here read_skill may take: "),
        "{text}"
    );

    let mut lookup = CallToolRequestParams::new("lookup_order");
    lookup.arguments = json!({"order_id": 4412}).as_object().cloned();
    let answer = client.call_tool(lookup).await.expect("answered");
    assert_eq!(
        answer.content.len(),
        2,
        "the upstream's answer, then refunds' body"
    );
    assert_eq!(
        listed(client.list_all_tools().await.expect("tools/list")),
        before
    );

    let mut read = CallToolRequestParams::new("read_skill");
    read.arguments = json!({"id": "faq"}).as_object().cloned();
    let read = client.call_tool(read).await.expect("answered");
    let text = serde_json::to_string(&read.content).expect("JSON");
    assert!(
        text.contains("This run is in 'refunds', with 'faq' active too; "),
        "{text}"
    );
    let allowed = client.call_tool(refund).await.expect("answered");
    assert_ne!(
        allowed.is_error,
        Some(true),
        "refunds carries issue_refund: {allowed:?}"
    );
    client.cancel().await.expect("the client closes");

    let written = std::fs::read_to_string(&record).expect("the record");
    assert!(written.contains(r#""tools":"strict""#), "{written}");
    let (code, stderr) = replayed(&record);
    assert_eq!(code, Some(0), "{stderr}");
}

/// Run `serve` on `dir` with no client; its exit code and standard error.
fn start_alone(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_skillgraph"))
        .arg("serve")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_declared_tool_no_upstream_offers_stops_start_up_naming_it() {
    let dir = desk("misdeclared", one_upstream(), |map| {
        map["skills"]["triage"]["tools"][0]["name"] = json!("lookup_orders");
    });
    let (code, stderr) = start_alone(&dir, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("error[upstream-mismatch]"), "{stderr}");
    assert!(
        stderr.contains(
            r#"error[tool-not-upstream]: skill "triage" declares tool "lookup_orders", which no upstream server offers"#
        ),
        "{stderr}"
    );
}

#[test]
fn two_upstream_servers_offering_one_tool_stop_start_up_naming_both() {
    let servers = json!({
        "first": {"command": desk_upstream(), "args": ["--data", data_file()]},
        "second": {"command": desk_upstream(), "args": ["--data", data_file()]},
    });
    let dir = desk("clash", servers, |_| {});
    let (code, stderr) = start_alone(&dir, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            r#"error[offered-twice]: tool "lookup_order" is offered by two upstream servers, "first" and "second""#
        ),
        "{stderr}"
    );
}

#[test]
fn an_upstream_that_does_not_start_is_named_with_the_end_of_its_stderr() {
    let servers = json!({"orders": {"command": "sh", "args": ["-c", "echo 'orders: no database' >&2; exit 3"]}});
    let (code, stderr) = start_alone(&desk("dies", servers, |_| {}), &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(r#"error[upstream-failed]: upstream server "orders" did not start"#),
        "{stderr}"
    );
    assert!(stderr.contains("orders: no database"), "{stderr}");

    let servers = json!({"orders": {"command": "no-such-program-here"}});
    let (code, stderr) = start_alone(&desk("missing", servers, |_| {}), &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(r#"upstream server "orders": `no-such-program-here` could not be started"#),
        "{stderr}"
    );
}

#[test]
fn garbage_unknown_tools_and_huge_arguments_get_answers_and_the_server_goes_on() {
    use std::io::{BufRead, BufReader, Write};

    let dir = desk("garbage", one_upstream(), |_| {});
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillgraph"))
        .arg("serve")
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout"));
    let mut send = |line: String| {
        input
            .write_all(line.as_bytes())
            .and_then(|()| input.write_all(b"\n"))
            .expect("serve reads");
    };
    let mut answer = || {
        let mut line = String::new();
        output.read_line(&mut line).expect("serve answers");
        serde_json::from_str::<Value>(&line).expect("each answer is JSON-RPC")
    };
    send("not json at all".into());
    assert_eq!(
        answer()["error"]["code"],
        -32700,
        "a line that is not JSON is answered"
    );
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}).to_string());
    assert_eq!(answer()["result"]["protocolVersion"], "2025-06-18");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}}).to_string());
    let unknown = answer();
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("unknown tool \"no_such_tool\""),
        "{unknown}"
    );
    let huge = "x".repeat(8 << 20);
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_skill", "arguments": {"id": huge}}}).to_string());
    let refused = answer();
    assert_eq!(
        refused["result"]["isError"], true,
        "a tool error the model can read"
    );
    assert!(
        refused.to_string().len() < 1000,
        "the huge id is not echoed back"
    );
    send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"#.into());
    assert_eq!(answer()["error"]["code"], -32700, "a cut line is answered");
    send(json!({"jsonrpc": "2.0", "id": 5, "method": "no/such/method"}).to_string());
    assert_eq!(answer()["error"]["code"], -32601);
    send(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}).to_string());
    let listed = answer();
    assert_eq!(
        listed["id"], 6,
        "the cut line got no answer and the server went on: {listed}"
    );
    assert_eq!(listed["result"]["tools"][0]["name"], "read_skill");
    drop(input);
    let status = child.wait().expect("serve ends when its input ends");
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_with_sigkill_leaves_every_answered_step_in_its_record() {
    let dir = desk("sigkill", one_upstream(), |_| {});
    let record = dir.join("run.jsonl");
    let transport = TokioChildProcess::new(serve_command(
        &dir,
        &["--record", &record.display().to_string()],
    ))
    .expect("serve starts");
    let pid = transport.id().expect("a running child has an id");
    let client = Watcher::default()
        .serve(transport)
        .await
        .expect("the handshake succeeds");
    call(&client, "lookup_order", json!({"order_id": 4412}))
        .await
        .expect("answered");
    let killed = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let text = std::fs::read_to_string(&record).expect("the record file");
    let read = skillgraph::skill_session::read_record(&text).expect("every line is whole");
    assert_eq!(read.cut_at_line, None);
    let kinds: Vec<&str> = read.events.iter().map(|event| event.kind()).collect();
    assert_eq!(
        kinds,
        ["start", "turn", "call", "result", "move"],
        "the answered call's events are all there"
    );
}

/// Whether process `pid` is gone, waiting up to two seconds for it to go.
fn gone(pid: &str) -> bool {
    for _ in 0..40 {
        let alive = Command::new("kill")
            .args(["-0", pid])
            .stderr(Stdio::null())
            .status()
            .expect("kill runs");
        if !alive.success() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn an_upstream_that_never_answers_its_handshake_stops_start_up_after_the_timeout() {
    let dir = scratch("serve", "mute-pid");
    let pid_file = dir.join("mute.pid");
    let script = format!("echo $$ > '{}'; exec sleep 30", pid_file.display());
    let servers = json!({"mute": {"command": "sh", "args": ["-c", script]}});
    let dir = desk("mute", servers, |_| {});
    let (code, stderr) = start_alone(&dir, &["--upstream-timeout", "1"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            r#"upstream server "mute" did not start: no answer to the MCP handshake within 1 s"#
        ),
        "{stderr}"
    );
    let pid = std::fs::read_to_string(&pid_file).expect("the pid is written");
    assert!(
        gone(pid.trim()),
        "the upstream is not left running after serve stops"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_tools_offers_every_upstream_tool_and_records_them_as_offered() {
    let dir = desk("all-tools", one_upstream(), |_| {});
    let record = dir.join("run.jsonl");
    let (client, _) = connect(
        &dir,
        &["--all-tools", "--record", &record.display().to_string()],
    )
    .await;
    assert_eq!(
        tool_names(&client).await,
        [
            "charge_history",
            "export_rows",
            "issue_refund",
            "list_skills",
            "lookup_invoice",
            "lookup_order",
            "read_skill",
            "render_chart",
            "track_parcel"
        ]
    );
    call(&client, "issue_refund", json!({"order_id": 4412}))
        .await
        .expect("answered");
    client.cancel().await.expect("the client closes");
    let written = std::fs::read_to_string(&record).expect("the record");
    assert!(
        written.contains(r#""tool_name":"issue_refund""#),
        "{written}"
    );
    assert!(
        !written.contains(r#""offered":false"#),
        "every tool was offered: {written}"
    );
}

#[test]
fn an_upstream_tool_named_like_a_skillgraph_tool_stops_start_up() {
    let dir = scratch("serve", "reserved-data");
    let data = json!({"read_skill": {"argument": "id", "answers": {}, "default": null, "description": "shadow"}});
    let file = common::write(&dir, "data.json", &data.to_string());
    let servers = json!({"shadow": {"command": desk_upstream(), "args": ["--data", file]}});
    let dir = desk("reserved", servers, |map| {
        map["skills"] = json!({});
        map["routes"] = json!([]);
    });
    let (code, stderr) = start_alone(&dir, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(r#"upstream server "shadow" offers a tool named "read_skill""#),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_file_that_stops_taking_writes_leaves_the_resource_whole() {
    let dir = desk("full-disk", one_upstream(), |_| {});
    let (client, _) = connect(&dir, &["--record", "/dev/full"]).await;
    call(&client, "lookup_order", json!({"order_id": 4412}))
        .await
        .expect("answered");
    let text = resource_text(&client, "skillgraph://record")
        .await
        .expect("the record resource reads");
    assert_eq!(moves(&text).len(), 1, "{text}");
    client.cancel().await.expect("the client closes");
}

/// SPEC §9.5: the skills extension lists the visible skills with their
/// files and digests, and reading a skill's `SKILL.md` is no read of the
/// graph: it answers with the file as written and moves nothing, under
/// every posture; read_skill is the one door.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_read_as_resources_move_nothing() {
    let dir = desk("skills-extension", one_upstream(), |_| {});
    for posture in ["assist", "rails"] {
        let (client, _) = connect(&dir, &["--posture", posture]).await;
        let listed = client.list_all_skills().await.expect("skills/list answers");
        let uris: Vec<&str> = listed.iter().map(|skill| skill.uri.as_str()).collect();
        assert_eq!(uris.len(), 7, "{uris:?}");
        let refunds = client
            .get_skill(rmcp::model::GetSkillRequestParams::new(
                "skill://refunds/SKILL.md",
            ))
            .await
            .expect("skills/get answers");
        assert!(
            refunds
                .skill
                .frontmatter
                .description
                .starts_with("Refund an order")
        );
        let before = tool_names(&client).await;
        let text = resource_text(&client, "skill://refunds/SKILL.md")
            .await
            .expect("the skill's file reads");
        assert!(
            text.starts_with("---") && text.contains("# Refunds"),
            "{posture}: {text}"
        );
        let rmcp::model::SkillResources::Files(files) = &refunds.skill.resources else {
            panic!("refunds lists its files");
        };
        let manifest = files
            .iter()
            .find(|file| file.uri == "skill://refunds/SKILL.md")
            .expect("the manifest lists SKILL.md");
        manifest
            .verify(text.as_bytes())
            .expect("the file is the one its digest names");
        assert_eq!(
            tool_names(&client).await,
            before,
            "{posture}: nothing moved"
        );
        assert!(!before.contains(&"issue_refund".to_owned()), "{before:?}");
        let record = resource_text(&client, "skillgraph://record")
            .await
            .expect("the record");
        assert!(!record.contains(r#""event":"read""#), "{record}");
        client.cancel().await.expect("the client closes");
    }
}

/// `skillgraph replay RECORD`: its exit code and standard error.
fn replayed(record: &Path) -> (Option<i32>, String) {
    let output = common::skillgraph(&["replay", &record.display().to_string()]);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_record_replays_to_itself_under_every_call_policy() {
    for (name, args, policy) in [
        ("replay-scoped", &[][..], "scoped"),
        ("replay-all", &["--all-tools"][..], "all"),
        ("replay-strict", &["--strict-tools"][..], "strict"),
    ] {
        let dir = desk(name, one_upstream(), |_| {});
        let record = dir.join("run.jsonl");
        let record_arg = record.display().to_string();
        let (client, _) = connect(&dir, &[args, &["--record", &record_arg]].concat()).await;
        tool_names(&client).await;
        // Not carried by triage: forwarded (scoped, all) or refused (strict).
        let refund = call(&client, "issue_refund", json!({"order_id": 4412}))
            .await
            .expect("answered");
        assert_eq!(
            refund.is_error == Some(true),
            policy == "strict",
            "{name}: {refund:?}"
        );
        // A risky order moves the run to refunds by its route.
        call(&client, "lookup_order", json!({"order_id": 4412}))
            .await
            .expect("answered");
        call(&client, "read_skill", json!({"id": "faq"}))
            .await
            .expect("answered");
        call(&client, "read_skill", json!({"id": "triage"}))
            .await
            .expect("answered");
        tool_names(&client).await;
        client.cancel().await.expect("the client closes");
        let text = std::fs::read_to_string(&record).expect("the record");
        assert!(
            text.lines()
                .next()
                .is_some_and(|start| start.contains(&format!(r#""tools":"{policy}""#))),
            "{name}: the start event holds the policy: {text}"
        );
        assert_eq!(
            text.contains(r#""accepted":false"#),
            policy == "strict",
            "{name}: a refused call is recorded: {text}"
        );
        assert_eq!(
            moves(&text).len(),
            4,
            "{name}: every read and call is an iteration: {text}"
        );
        let (code, stderr) = replayed(&record);
        assert_eq!(code, Some(0), "{name}: {stderr}");
    }
}

/// A skill whose `SKILL.md` allows `mcp__desk__lookup_*` carries, under
/// `serve`, the desk's tools the pattern matches (in Claude Code's
/// `mcp__SERVER__TOOL` spelling), and a host tool no upstream has (`Read`)
/// is said on standard error instead of stopping start-up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_tools_patterns_carry_the_upstream_tools_they_match() {
    let dir = desk("patterns", one_upstream(), |map| {
        map["skills"]["triage"]
            .as_object_mut()
            .expect("triage's settings")
            .remove("tools");
    });
    let skill = dir.join("skills/triage/SKILL.md");
    let text = std::fs::read_to_string(&skill).expect("triage's file");
    let text = text.replacen(
        "\n---\n",
        "\nallowed-tools: mcp__desk__lookup_* Read\n---\n",
        1,
    );
    std::fs::write(&skill, text).expect("triage's file is written");
    let check = common::skillgraph(&["check", &dir.display().to_string(), "--format", "json"]);
    let checkup: Value = serde_json::from_slice(&check.stdout).expect("the check-up is JSON");
    assert!(
        !checkup.to_string().contains("unusable-tool-name"),
        "a pattern is not a tool name: {checkup}"
    );
    let (client, _) = connect(&dir, &[]).await;
    let names = tool_names(&client).await;
    assert_eq!(
        names,
        [
            "list_skills",
            "lookup_invoice",
            "lookup_order",
            "read_skill"
        ],
        "the pattern's tools, and no Read"
    );
    let answer = call(&client, "lookup_order", json!({"order_id": 4412}))
        .await
        .expect("the call answers");
    assert_ne!(answer.is_error, Some(true), "{answer:?}");
    client.cancel().await.expect("the client closes");
}

/// The desk's data with `lookup_order` answering only after `delay_ms`.
fn slow_desk(name: &str, delay_ms: u64) -> PathBuf {
    let data = scratch("serve", &format!("{name}-data"));
    let mut all: Value =
        serde_json::from_str(&std::fs::read_to_string(data_file()).expect("data")).expect("JSON");
    all["lookup_order"]["delay_ms"] = json!(delay_ms);
    let file = common::write(&data, "data.json", &all.to_string());
    let servers = json!({"desk": {"command": desk_upstream(), "args": ["--data", file]}});
    desk(name, servers, |_| {})
}

/// SPEC §9.7: an upstream that does not answer in time is a tool error the
/// model sees, recorded as a `failure` result with the error, and a route
/// on `failure` fires on it like on any failed result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_times_out_is_a_tool_error_recorded_as_a_failure() {
    let dir = slow_desk("timeout", 5_000);
    let (client, _) = connect(&dir, &["--upstream-timeout", "1"]).await;
    let answer = call(&client, "lookup_order", json!({"order_id": 4412}))
        .await
        .expect("the timed-out call is answered");
    assert_eq!(answer.is_error, Some(true), "{answer:?}");
    let text = serde_json::to_string(&answer.content).expect("JSON");
    assert!(
        text.contains(r#"upstream server \"desk\" did not answer lookup_order within 1 s"#),
        "{text}"
    );
    let record = resource_text(&client, "skillgraph://record")
        .await
        .expect("the record");
    assert!(
        record.contains(r#""status":"failure","bytes":0,"result":"","error":"upstream server \"desk\" did not answer"#),
        "{record}"
    );
    client.cancel().await.expect("the client closes");
}

/// SPEC §9.5: a call the client cancels is cancelled upstream, recorded as
/// a `result` with `error: "cancelled"`, and moves nothing; the run goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_recorded_as_cancelled_and_moves_nothing() {
    let dir = slow_desk("cancelled", 5_000);
    let (client, _) = connect(&dir, &[]).await;
    // Dropping the call cancels it: rmcp's client sends notifications/cancelled.
    let abandoned = tokio::time::timeout(
        Duration::from_millis(500),
        call(&client, "lookup_order", json!({"order_id": 4412})),
    )
    .await;
    assert!(abandoned.is_err(), "the call was still waiting");
    let mut record = String::new();
    for _ in 0..50 {
        record = resource_text(&client, "skillgraph://record")
            .await
            .expect("the record");
        if record.contains(r#""error":"cancelled""#) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        record.contains(
            r#""tool_name":"lookup_order","call":1,"bytes":0,"result":"","error":"cancelled""#
        ),
        "{record}"
    );
    assert!(record.contains(r#""by":"stay""#), "{record}");
    let answer = call(&client, "lookup_invoice", json!({"invoice_id": "INV-2001"}))
        .await
        .expect("the run goes on");
    assert_ne!(answer.is_error, Some(true), "{answer:?}");
    client.cancel().await.expect("the client closes");
}

/// SPEC §9.7: every line a client sends is answered — a line that is not
/// JSON with -32700, an invalid request with -32600 and its id, two
/// messages on one line each — and no answer repeats more than 256
/// characters of the input (a 5 MB tool name is only measured).
#[test]
fn bad_input_is_answered_and_never_echoed_at_length() {
    let dir = desk("bad-input", one_upstream(), |_| {});
    let huge = "x".repeat(5_000_000);
    let lines = [
        "this is not JSON".to_owned(),
        r#"{"jsonrpc": "2.0", "id": 7, "method": 12}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}{"jsonrpc":"2.0","id":3,"method":"ping"}"#.to_owned(),
        format!(r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"{huge}"}}}}"#),
    ];
    let output = common::skillgraph_with_input(
        &["serve", &dir.display().to_string()],
        &(lines.join("\n") + "\n"),
    );
    let answers: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("each answer is JSON"))
        .collect();
    let by_id = |id: Value| answers.iter().find(|a| a["id"] == id).cloned();
    assert_eq!(answers[0]["error"]["code"], -32700, "{answers:?}");
    assert_eq!(
        by_id(json!(7)).expect("-32600 with its id")["error"]["code"],
        -32600
    );
    assert!(
        by_id(json!(2)).is_some() && by_id(json!(3)).is_some(),
        "{answers:?}"
    );
    let unknown = by_id(json!(4)).expect("the huge call is answered");
    let text = unknown.to_string();
    assert!(
        text.contains("unknown tool one of 5000000 bytes"),
        "{}",
        &text[..text.len().min(300)]
    );
    assert!(
        answers.iter().all(|a| a.to_string().len() < 2_000),
        "nothing long is echoed"
    );
}

/// SPEC §11: export never delays or fails a call. With the receiver down
/// (nothing listens on the discard port), every call is answered as
/// without export, and the lost spans are said once, then counted at the
/// end; an endpoint the exporter cannot use stops start-up, by its code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_is_down_costs_spans_never_an_answer() {
    use tokio::io::AsyncReadExt as _;

    let dir = desk("otlp-down", one_upstream(), |_| {});
    let (transport, stderr) =
        TokioChildProcess::builder(serve_command(&dir, &["--otlp", "http://127.0.0.1:9"]))
            .stderr(Stdio::piped())
            .spawn()
            .expect("serve starts");
    let client = Watcher::default()
        .serve(transport)
        .await
        .expect("the handshake succeeds");
    let answer = call(&client, "lookup_order", json!({"order_id": 4412}))
        .await
        .expect("answered");
    assert_ne!(answer.is_error, Some(true), "{answer:?}");
    assert!(
        texts(&answer).iter().any(|text| text.contains("refunds")),
        "the route still moves: {answer:?}"
    );
    let read = call(&client, "read_skill", json!({"id": "billing"}))
        .await
        .expect("answered");
    assert!(!texts(&read).is_empty(), "{read:?}");
    client.cancel().await.expect("the client closes");
    let mut said = String::new();
    stderr
        .expect("serve's standard error")
        .read_to_string(&mut said)
        .await
        .expect("serve's standard error reads");
    assert_eq!(said.matches("did not take").count(), 1, "said once: {said}");
    assert!(
        said.contains("spans were not taken by the OTLP receiver at http://127.0.0.1:9/v1/traces"),
        "{said}"
    );

    let (code, refused) = start_alone(&dir, &["--otlp", "grpc://127.0.0.1:4317"]);
    assert_eq!(code, Some(2), "{refused}");
    assert!(refused.contains("error[otlp-endpoint]"), "{refused}");
}
