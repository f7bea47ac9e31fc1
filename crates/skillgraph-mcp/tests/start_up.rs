//! Start-up refusals (SPEC §9.3, §9.7): a map and upstream servers that do
//! not fit together, or an upstream declared two ways, stop `serve` before
//! any client is answered, with the error's stable code and a message
//! naming what is wrong. The server is started in this process; the
//! upstreams are the desk's, in this process too. (The binary prints such
//! an error as `error[CODE]: MESSAGE` and exits 2 for every error that is
//! not the map's own, [`ServeError::is_map_error`]: the end-to-end tests of
//! `skillgraph-cli` check that.)

mod common;

use std::path::Path;

use serde_json::json;
use skillgraph_mcp::{ServeConfig, ServeError, serve_streams};

use common::{desk, one_upstream, upstream};

/// Start `serve` on the map in `dir` for a client that sends nothing; the
/// error that stops it.
async fn start_alone(dir: &Path) -> ServeError {
    let config = ServeConfig::new(dir);
    let ended = serve_streams(&config, tokio::io::empty(), tokio::io::sink()).await;
    let err = ended.expect_err("start-up stops");
    assert!(!err.is_map_error(), "not the map's own error: {err}");
    err
}

#[tokio::test]
async fn a_declared_tool_no_upstream_offers_stops_start_up_naming_it() {
    let dir = desk("misdeclared", one_upstream(), |map| {
        map["skills"]["triage"]["tools"][0]["name"] = json!("lookup_orders");
    });
    let err = start_alone(&dir).await;
    assert_eq!(err.code(), "upstream-mismatch", "{err}");
    assert!(
        err.to_string().contains(
            r#"error[tool-not-upstream]: skill "triage" declares tool "lookup_orders", which no upstream server offers"#
        ),
        "{err}"
    );
}

#[tokio::test]
async fn two_upstream_servers_offering_one_tool_stop_start_up_naming_both() {
    let servers = json!({
        "first": {"url": upstream::desk(upstream::desk_data()).url},
        "second": {"url": upstream::desk(upstream::desk_data()).url},
    });
    let dir = desk("clash", servers, |_| {});
    let err = start_alone(&dir).await;
    assert!(
        err.to_string().contains(
            r#"error[offered-twice]: tool "lookup_order" is offered by two upstream servers, "first" and "second""#
        ),
        "{err}"
    );
}

#[tokio::test]
async fn an_upstream_tool_named_like_a_skillgraph_tool_stops_start_up() {
    let data = json!({"read_skill": {"argument": "id", "answers": {}, "default": null, "description": "shadow"}});
    let servers = json!({"shadow": {"url": upstream::desk(data).url}});
    let dir = desk("reserved", servers, |map| {
        map["skills"] = json!({});
        map["routes"] = json!([]);
    });
    let err = start_alone(&dir).await;
    assert!(
        err.to_string()
            .contains(r#"upstream server "shadow" offers a tool named "read_skill""#),
        "{err}"
    );
}

#[tokio::test]
async fn an_mcp_servers_entry_with_both_command_and_url_is_refused_by_name() {
    let dir = desk(
        "http-both",
        json!({"desk": {"command": "x", "url": "http://127.0.0.1:9/mcp"}}),
        |_| {},
    );
    let err = start_alone(&dir).await;
    assert_eq!(err.code(), "upstream-declaration", "{err}");
    let said = err.to_string();
    assert!(
        said.contains("\"desk\"") && said.contains("both `command` and `url`"),
        "{said}"
    );
}
