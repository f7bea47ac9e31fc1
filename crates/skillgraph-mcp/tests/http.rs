//! `serve` over streamable HTTP (SPEC §9.4, §9.8), run in this process by
//! `serve_http_on` on a free loopback port in front of the desk's upstream
//! (in this process too), spoken to by rmcp's own streamable-HTTP client
//! on the handshake generation and by plain HTTP requests on the
//! sessionless one, so that every status code, header and handle rule is
//! seen as a client sees it.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams, ResourceContents};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use skillgraph_mcp::ServeConfig;

use common::plain::{
    Answer, call, handle_of, in_session, open_session, post, post_to, sessionless, shake_hands,
    texts,
};
use common::{HttpServed, Watcher, desk, one_upstream, scratch, sha256_hex};

/// The support desk in front of its upstream, to serve.
fn desk_config(name: &str) -> ServeConfig {
    ServeConfig::new(desk(name, one_upstream(), |_| {}))
}

#[test]
fn the_http_rules_answer_with_their_status_codes() {
    let tokens = scratch("http-rules-tokens").join("tokens");
    std::fs::write(
        &tokens,
        "# principals\nann 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b\n",
    )
    .expect("tokens are written");
    let served = HttpServed::start(desk_config("http-rules"), |http| {
        http.max_body = 2000;
        http.auth_tokens = Some(tokens);
    });
    let addr = served.addr.as_str();
    let ok = [("Authorization", "Bearer secret")];
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});

    // No token, and a wrong one: 401 with the challenge.
    let none = post(addr, &[], &list);
    assert_eq!(none.status, 401, "{}", none.head);
    assert!(
        none.head.contains("www-authenticate: Bearer"),
        "{}",
        none.head
    );
    let wrong = post(addr, &[("Authorization", "Bearer guess")], &list);
    assert_eq!(wrong.status, 401);
    assert!(wrong.head.contains("invalid_token"), "{}", wrong.head);
    // A Host that is not allowed, and a browser Origin: 403.
    let host = post(addr, &[ok[0], ("Host", "evil.example")], &list);
    assert_eq!(host.status, 403, "{}", host.body);
    let origin = post(addr, &[ok[0], ("Origin", "http://evil.example")], &list);
    assert_eq!(origin.status, 403, "{}", origin.body);
    // A body over --max-body: 413; not JSON: 415.
    let big = format!("{{\"pad\": \"{}\"}}", "x".repeat(4000));
    assert_eq!(post_to(addr, "/mcp", &ok, big.as_bytes()).status, 413);
    let text = post_to(
        addr,
        "/mcp",
        &[ok[0], ("Content-Type", "text/plain")],
        b"{}",
    );
    assert_eq!(text.status, 415);
    // Mcp-Method that does not match the body: 400 with -32020.
    let mismatch = sessionless(
        addr,
        "tools/call",
        Some("lookup_order"),
        json!({"name": "lookup_order", "arguments": {}}),
        &[ok[0], ("Mcp-Method", "tools/list")],
    );
    assert_eq!(mismatch.status, 400, "{}", mismatch.body);
    assert_eq!(mismatch.json()["error"]["code"], -32020);
    // rmcp repeats the header in its message: cut, never echoed at length.
    let long = "x".repeat(20_000);
    let echoed = sessionless(
        addr,
        "tools/call",
        None,
        json!({"name": "lookup_order", "arguments": {}}),
        &[ok[0], ("Mcp-Name", long.as_str())],
    );
    assert_eq!(echoed.status, 400, "{}", echoed.head);
    let message = echoed.json()["error"]["message"]
        .as_str()
        .map(str::to_owned);
    let message = message.expect("a message");
    assert!(message.len() < 600 && message.contains("cut"), "{message}");
    assert_eq!(echoed.json()["error"]["code"], -32020);
    // Another path: 404.
    assert_eq!(post_to(addr, "/other", &ok, b"{}").status, 404);
    // With the token, the request is served; the scheme's name is
    // case-insensitive.
    let lower = sessionless(
        addr,
        "tools/list",
        None,
        json!({}),
        &[("Authorization", "bearer secret")],
    );
    assert_eq!(lower.status, 200, "{}", lower.body);
    let listed = sessionless(addr, "tools/list", None, json!({}), &ok);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(
        listed.json()["result"]["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty())
    );
}

#[test]
fn a_sessionless_run_goes_on_by_its_handle_and_is_recorded_in_a_file_of_its_own() {
    let records = scratch("http-handles-records");
    let mut config = desk_config("http-handles");
    config.record = Some(records.clone());
    let served = HttpServed::start(config, |_| {});
    let addr = served.addr.as_str();

    // Every listed tool takes the handle, as an optional string.
    let listed = sessionless(addr, "tools/list", None, json!({}), &[]).json();
    let tools = listed["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(!tools.is_empty());
    for tool in &tools {
        let property = &tool["inputSchema"]["properties"]["skillgraph_run"];
        assert_eq!(property["type"], "string", "{tool}");
        let required = tool["inputSchema"]["required"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(!required.contains(&json!("skillgraph_run")), "{tool}");
    }

    // The first answer gives the handle, in _meta and in a last block.
    let first = call(addr, "lookup_order", json!({"order_id": 4412}), &[]);
    let handle = first["_meta"]["skillgraph/run"]
        .as_str()
        .expect("a handle")
        .to_owned();
    assert!(handle.starts_with("run_") && handle.len() == 36, "{handle}");
    assert!(
        texts(&first)
            .last()
            .is_some_and(|text| text.contains(&handle))
    );
    let body = texts(&first)
        .into_iter()
        .find(|text| text.contains("<skill_content name=\"refunds\">"))
        .expect("refunds' body after the move");
    // Over HTTP the body says where its files are as resources only.
    assert!(
        body.contains("Skill files: the resources skill://refunds/PATH (relative paths"),
        "{body}"
    );

    // With the handle the run goes on where it moved: refunds offers the refund.
    let second = call(
        addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": handle}),
        &[],
    );
    assert_ne!(second["isError"], true, "{second}");
    assert!(
        second["_meta"].get("skillgraph/run").is_none(),
        "only the first answer gives it"
    );
    // Without it, a new run starts in triage, where the refund is refused.
    let fresh = call(addr, "issue_refund", json!({"order_id": 4412}), &[]);
    assert_eq!(fresh["isError"], true);
    let other = fresh["_meta"]["skillgraph/run"]
        .as_str()
        .expect("a new handle")
        .to_owned();
    assert_ne!(other, handle);

    // An unknown handle is answered as a run this server does not hold.
    let unknown = call(
        addr,
        "lookup_order",
        json!({"order_id": 1, "skillgraph_run": "run_00000000000000000000000000000000"}),
        &[],
    );
    assert_eq!(unknown["isError"], true);
    assert!(texts(&unknown)[0].contains("holds no run"), "{unknown}");

    // Each run has its record, as a file and as a resource.
    let file = std::fs::read_to_string(records.join(format!("{handle}.jsonl")))
        .expect("the run's record file");
    let events: Vec<Value> = file
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON lines"))
        .collect();
    assert_eq!(events[0]["event"], "start");
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "move" && e["to"] == "refunds")
    );
    assert!(records.join(format!("{other}.jsonl")).exists());
    let uri = format!("skillgraph://record/{handle}");
    let read = sessionless(addr, "resources/read", Some(&uri), json!({"uri": uri}), &[]).json();
    let text = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(text, file);
}

#[test]
fn a_run_is_invisible_to_another_principal_and_the_answer_is_the_unknown_one() {
    let tokens = scratch("http-principals-tokens").join("tokens");
    // ann's token is `secret`.
    let bob_token = "secret-bob";
    let bob_digest = sha256_hex(bob_token);
    std::fs::write(
        &tokens,
        format!("ann 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b\nbob {bob_digest}\n"),
    )
    .expect("tokens are written");
    let served = HttpServed::start(desk_config("http-principals"), |http| {
        http.auth_tokens = Some(tokens);
    });
    let addr = served.addr.as_str();
    let ann = [("Authorization", "Bearer secret")];
    let bob_header = format!("Bearer {bob_token}");
    let bob = [("Authorization", bob_header.as_str())];
    let first = call(addr, "lookup_order", json!({"order_id": 4412}), &ann);
    let handle = first["_meta"]["skillgraph/run"]
        .as_str()
        .expect("a handle")
        .to_owned();
    let unknown = call(
        addr,
        "lookup_order",
        json!({"order_id": 1, "skillgraph_run": "run_00000000000000000000000000000000"}),
        &bob,
    );
    let stolen = call(
        addr,
        "lookup_order",
        json!({"order_id": 1, "skillgraph_run": handle}),
        &bob,
    );
    assert_eq!(stolen["isError"], true);
    assert_eq!(texts(&stolen), texts(&unknown), "no oracle");
    let own = call(
        addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": handle}),
        &ann,
    );
    assert_ne!(own["isError"], true, "{own}");
}

#[test]
fn idle_runs_expire_and_a_full_table_drops_the_least_recently_used() {
    let served = HttpServed::start(desk_config("http-expiry"), |http| {
        http.run_ttl = Duration::from_secs(1);
        http.max_runs = 2;
    });
    let addr = served.addr.as_str();
    let handle_of = |result: &Value| {
        result["_meta"]["skillgraph/run"]
            .as_str()
            .expect("a handle")
            .to_owned()
    };
    let one = handle_of(&call(addr, "lookup_order", json!({"order_id": 1}), &[]));
    let two = handle_of(&call(addr, "lookup_order", json!({"order_id": 1}), &[]));
    // one is used again: two is now the least recently used.
    call(
        addr,
        "lookup_order",
        json!({"order_id": 1, "skillgraph_run": one}),
        &[],
    );
    let _three = handle_of(&call(addr, "lookup_order", json!({"order_id": 1}), &[]));
    let gone = call(
        addr,
        "lookup_order",
        json!({"order_id": 1, "skillgraph_run": two}),
        &[],
    );
    assert!(texts(&gone)[0].contains("holds no run"), "{gone}");
    let kept = call(
        addr,
        "lookup_order",
        json!({"order_id": 1, "skillgraph_run": one}),
        &[],
    );
    assert!(!texts(&kept)[0].contains("holds no run"), "{kept}");
    std::thread::sleep(Duration::from_millis(2100));
    let expired = call(
        addr,
        "lookup_order",
        json!({"order_id": 1, "skillgraph_run": one}),
        &[],
    );
    assert!(texts(&expired)[0].contains("holds no run"), "{expired}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcps_client_on_the_handshake_generation_gets_its_scoped_list_and_list_changed() {
    let served = HttpServed::start(desk_config("http-handshake"), |_| {});
    let url = format!("http://{}/mcp", served.addr);
    let watcher = Watcher::default();
    let client = watcher
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(url))
        .await
        .expect("the handshake succeeds");
    let names = |tools: Vec<rmcp::model::Tool>| {
        let mut names: Vec<String> = tools.into_iter().map(|t| t.name.to_string()).collect();
        names.sort();
        names
    };
    let first = names(client.list_all_tools().await.expect("tools/list"));
    assert_eq!(
        first,
        [
            "list_skills",
            "lookup_invoice",
            "lookup_order",
            "read_skill",
            "track_parcel"
        ]
    );
    assert!(
        client.list_all_tools().await.expect("tools/list")[0]
            .input_schema
            .get("properties")
            .and_then(|p| p.get("skillgraph_run"))
            .is_none(),
        "a session needs no handle"
    );
    let mut arguments = serde_json::Map::new();
    arguments.insert("order_id".into(), json!(4412));
    let answer = client
        .call_tool(CallToolRequestParams::new("lookup_order").with_arguments(arguments))
        .await
        .expect("the call is answered");
    assert!(format!("{:?}", answer.content).contains("skill_content name=\\\"refunds\\\""));
    tokio::time::timeout(Duration::from_secs(20), watcher.changed.notified())
        .await
        .expect("tools/list_changed arrives");
    let second = names(client.list_all_tools().await.expect("tools/list"));
    assert!(second.contains(&"issue_refund".to_owned()), "{second:?}");
    let record = client
        .read_resource(ReadResourceRequestParams::new("skillgraph://record"))
        .await
        .expect("the record reads");
    let text = match &record.contents[0] {
        ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("a text record, not {other:?}"),
    };
    assert!(
        text.lines()
            .any(|line| line.contains("\"move\"") && line.contains("refunds")),
        "{text}"
    );
    let _ = client.cancel().await;
}

#[test]
fn a_handshake_session_is_invisible_to_another_principal() {
    let tokens = scratch("http-session-tokens").join("tokens");
    std::fs::write(
        &tokens,
        format!(
            "ann 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b\nbob {}\n",
            sha256_hex("secret-bob")
        ),
    )
    .expect("tokens are written");
    let served = HttpServed::start(desk_config("http-session-principals"), |http| {
        http.auth_tokens = Some(tokens);
    });
    let addr = served.addr.as_str();
    let session = open_session(addr, &[("Authorization", "Bearer secret")]);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let in_session = |token: &str| {
        let bearer = format!("Bearer {token}");
        post(
            addr,
            &[
                ("Authorization", bearer.as_str()),
                ("Mcp-Session-Id", session.as_str()),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            &list,
        )
    };
    let stolen = in_session("secret-bob");
    assert_eq!(stolen.status, 404, "{}", stolen.body);
    let unknown = post(
        addr,
        &[
            ("Authorization", "Bearer secret-bob"),
            ("Mcp-Session-Id", "no-such-session"),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        &list,
    );
    assert_eq!(
        (stolen.status, stolen.body.as_str()),
        (unknown.status, unknown.body.as_str()),
        "no oracle"
    );
    assert_eq!(in_session("secret").status, 200);
}

#[test]
fn handshake_sessions_are_bounded_by_max_runs_and_the_least_recently_used_goes() {
    let served = HttpServed::start(desk_config("http-session-bound"), |http| {
        http.max_runs = 2;
    });
    let addr = served.addr.as_str();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let status = |session: &str| {
        post(
            addr,
            &[
                ("Mcp-Session-Id", session),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            &list,
        )
        .status
    };
    let first = open_session(addr, &[]);
    let second = open_session(addr, &[]);
    assert_eq!(status(&first), 200, "the first session is used");
    // A third session: the least recently used one (the second) goes.
    let third = open_session(addr, &[]);
    assert_eq!(status(&second), 404, "pushed out");
    assert_eq!(status(&first), 200);
    assert_eq!(status(&third), 200);
}

/// A session that has only shaken hands sleeps (SPEC §9.8: an idle one
/// costs at most 16 KiB, `front_door.rs`), and its next requests wake it,
/// sent at once with its `notifications/initialized` or after it: each is
/// answered as a session that never slept answers, with the run its
/// handshake started (its record has the one `start`). A sleeping session
/// is ended by `DELETE` as an awake one is.
#[test]
fn a_session_that_slept_after_its_handshake_wakes_with_its_run() {
    let served = HttpServed::start(desk_config("http-sleep"), |_| {});
    let addr = served.addr.as_str();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let record = json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read",
        "params": {"uri": "skillgraph://record"}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let listed = |answer: &Answer| {
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert_eq!(answer.json()["result"]["tools"][0]["name"], "read_skill");
    };
    let starts = |session: &str| {
        let read = post(addr, &in_session(session), &record).json();
        let text = read["result"]["contents"][0]["text"]
            .as_str()
            .expect("the record")
            .to_owned();
        text.lines()
            .filter(|line| line.contains(r#""event":"start""#))
            .count()
    };
    for _ in 0..20 {
        let session = open_session(addr, &[]);
        let session = session.as_str();
        std::thread::scope(|scope| {
            let ended = scope.spawn(|| post(addr, &in_session(session), &initialized));
            // Two requests at once, each with an id of its own.
            let lists: Vec<_> = [4, 5]
                .map(|id| {
                    let list = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
                    scope.spawn(move || post(addr, &in_session(session), &list))
                })
                .into_iter()
                .collect();
            assert_eq!(ended.join().expect("answered").status, 202);
            for answer in lists {
                listed(&answer.join().expect("answered"));
            }
        });
        assert_eq!(starts(session), 1, "the run goes on");
    }
    let asleep = shake_hands(addr);
    listed(&post(addr, &in_session(&asleep), &list));
    assert_eq!(starts(&asleep), 1, "the run goes on");
    let asleep = shake_hands(addr);
    assert_eq!(end_session(addr, &asleep), 204);
    assert_eq!(post(addr, &in_session(&asleep), &list).status, 404, "ended");
}

/// `DELETE` the handshake session `session` at `addr`: the status.
fn end_session(addr: &str, session: &str) -> u16 {
    let mut stream = TcpStream::connect(addr).expect("the server accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a timeout");
    let request = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .expect("the request is sent");
    let mut raw = String::new();
    let _ = stream.read_to_string(&mut raw);
    raw.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("an HTTP status line in {raw:?}"))
}

/// A sleeping session expires after `--run-ttl` idle, as an awake one does
/// (rmcp's keep-alive closes that one).
#[test]
fn a_sleeping_session_expires_after_its_time_to_live() {
    let served = HttpServed::start(desk_config("http-sleep-expiry"), |http| {
        http.run_ttl = Duration::from_millis(500);
    });
    let addr = served.addr.as_str();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let kept = shake_hands(addr);
    let expiring = shake_hands(addr);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(post(addr, &in_session(&kept), &list).status, 200);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(post(addr, &in_session(&expiring), &list).status, 404);
    assert_eq!(
        post(addr, &in_session(&kept), &list).status,
        200,
        "its time to live counts from its last answer"
    );
}

#[test]
fn the_run_handle_is_mirrored_in_a_header_and_a_header_that_disagrees_is_refused() {
    let served = HttpServed::start(desk_config("http-run-header"), |_| {});
    let addr = served.addr.as_str();
    let listed = sessionless(addr, "tools/list", None, json!({}), &[]).json();
    for tool in listed["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        assert_eq!(
            tool["inputSchema"]["properties"]["skillgraph_run"]["x-mcp-header"], "Skillgraph-Run",
            "{tool}"
        );
    }
    let handle = handle_of(&call(addr, "lookup_order", json!({"order_id": 4412}), &[]));
    // The same handle in both: served.
    let agreed = call(
        addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": handle}),
        &[("Mcp-Param-Skillgraph-Run", handle.as_str())],
    );
    assert_ne!(agreed["isError"], true, "{agreed}");
    // Another handle, or a header for a call that names none: refused
    // before anything is looked up.
    for arguments in [
        json!({"order_id": 4412, "skillgraph_run": handle}),
        json!({"order_id": 4412}),
    ] {
        let refused = sessionless(
            addr,
            "tools/call",
            Some("lookup_order"),
            json!({"name": "lookup_order", "arguments": arguments}),
            &[(
                "Mcp-Param-Skillgraph-Run",
                "run_00000000000000000000000000000000",
            )],
        );
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_eq!(refused.json()["error"]["code"], -32020, "{}", refused.body);
    }
}
