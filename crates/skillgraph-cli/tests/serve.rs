//! `skillgraph serve` end to end (SPEC §9), where the process is what is
//! tested: exit codes and standard error at start-up, an upstream child
//! that does not start or is killed, serve killed with SIGKILL and its
//! `--record` file, the client's lines over real pipes, and OTLP export,
//! which only the process's entry points set up. The binary is driven by rmcp's own client
//! over a child process (or raw lines), in front of `desk-upstream`, the
//! example upstream that answers the support desk's tools from canned data.
//! Serve's behaviour otherwise is tested in this process, in the
//! `skillgraph-mcp` crate's own tests.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use common::{data_file, desk, desk_upstream, one_upstream, scratch};

/// `skillgraph serve DIR ARGS…` as a child process.
fn serve_command(dir: &Path, args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skillgraph"));
    command.arg("serve").arg(dir).args(args);
    command
}

/// rmcp's client, connected to `skillgraph serve DIR ARGS…`.
async fn connect(dir: &Path, args: &[&str]) -> RunningService<RoleClient, ()> {
    let transport = TokioChildProcess::new(serve_command(dir, args)).expect("serve starts");
    ().serve(transport).await.expect("the handshake succeeds")
}

/// Call `tool` with `arguments` through `client`.
async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    arguments: Value,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = arguments.as_object().cloned();
    client.call_tool(params).await
}

/// The one text a resource read answers with.
async fn resource_text(
    client: &RunningService<RoleClient, ()>,
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

/// The text blocks of a tool's answer.
fn texts(answer: &CallToolResult) -> Vec<String> {
    answer
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect()
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
    let client = connect(&dir, &[]).await;
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
    let client = ().serve(transport).await.expect("the handshake succeeds");
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
    let client = ().serve(transport).await.expect("the handshake succeeds");
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
