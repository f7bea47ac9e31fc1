//! Roles (SPEC §14.8, §14.11): skills hidden per role, through `serve
//! --http` with a tokens file whose third column gives roles. A skill a
//! principal's roles withhold is named to it nowhere: not in the one tool
//! list, `skills/list`, `skill://` resources, answers or refusals; its
//! tool is not listed and a call of it is refused naming no skill, and the
//! upstream never sees it. A record, which declares the whole map, is read
//! only by a principal whose run hides nothing. A principal with none of
//! the map's roles, on a map with no `*`, is answered 403 naming roles
//! only; a map with roles is refused over HTTP without principals.

mod common;

use serde_json::{Value, json};
use skillgraph_mcp::{ServeConfig, ServeError};

use common::plain::{call, handle_of, post, sessionless, texts};
use common::{HttpServed, desk, one_upstream, tokens_file};

/// The shipped desk with `roles`: support cannot see refunds, auditors
/// see everything, anyone else sees neither refunds nor billing.
fn desk_with_roles(name: &str, roles: Value) -> ServeConfig {
    ServeConfig::new(desk(name, one_upstream(), |map| map["roles"] = roles))
}

fn served(name: &str, roles: Value) -> HttpServed {
    let tokens = tokens_file(
        &format!("{name}-tokens"),
        &[
            ("ann", "ann-token", "support"),
            ("ada", "ada-token", "auditor,support"),
            ("gus", "gus-token", "visitor"),
        ],
    );
    HttpServed::start(desk_with_roles(name, roles), |http| {
        http.auth_tokens = Some(tokens.clone());
    })
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// The sessionless tool list `token` is given, as the body's bytes and the
/// result.
fn tools_of(addr: &str, token: &str) -> (String, Value) {
    let answer = sessionless(
        addr,
        "tools/list",
        None,
        json!({}),
        &[("Authorization", bearer(token).as_str())],
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let result = answer.json()["result"].clone();
    (answer.body, result)
}

#[test]
fn a_withheld_skill_is_named_to_its_principal_nowhere_and_its_tool_never_runs() {
    let roles = json!({"support": {"hide": ["refunds"]}, "auditor": {}, "*": {"hide": ["refunds", "billing"]}});
    let served = served("roles-lens", roles);
    let addr = served.addr.as_str();

    let (ann_bytes, ann_tools) = tools_of(addr, "ann-token");
    let listed = ann_tools.to_string();
    assert!(!listed.contains("refunds"), "{listed}");
    assert!(!listed.contains("issue_refund"), "{listed}");
    assert!(listed.contains("billing"), "support sees billing: {listed}");
    // One token gets the same bytes every time; and the list is private.
    assert_eq!(tools_of(addr, "ann-token").0, ann_bytes);
    assert_eq!(ann_tools["cacheScope"], "private", "{ann_tools}");
    // Ada holds auditor too: a role grants what it does not hide.
    let (_, ada_tools) = tools_of(addr, "ada-token");
    let ada_listed = ada_tools.to_string();
    assert!(ada_listed.contains("refunds") && ada_listed.contains("issue_refund"));
    // Gus holds no declared role and takes `*`.
    let (_, gus_tools) = tools_of(addr, "gus-token");
    let gus_listed = gus_tools.to_string();
    for id in ["refunds", "billing"] {
        let named =
            gus_listed.contains(&format!("\"{id}\"")) || gus_listed.contains(&format!(" - {id}:"));
        assert!(!named, "{id} is named: {gus_listed}");
    }
    assert!(gus_listed.contains("\"triage\""), "{gus_listed}");

    let skills = sessionless(
        addr,
        "skills/list",
        None,
        json!({}),
        &[("Authorization", bearer("ann-token").as_str())],
    );
    assert!(skills.body.contains("skill://triage/"), "{}", skills.body);
    assert!(!skills.body.contains("refunds"), "{}", skills.body);
    let file = "skill://refunds/SKILL.md";
    let hidden_file = sessionless(
        addr,
        "resources/read",
        Some(file),
        json!({"uri": file}),
        &[("Authorization", bearer("ann-token").as_str())],
    );
    assert!(
        hidden_file.json()["error"].is_object(),
        "{}",
        hidden_file.body
    );
    let shown_file = sessionless(
        addr,
        "resources/read",
        Some(file),
        json!({"uri": file}),
        &[("Authorization", bearer("ada-token").as_str())],
    );
    assert!(
        shown_file.json()["result"]["contents"].is_array(),
        "{}",
        shown_file.body
    );

    // A read of a withheld id is refused as a read of an unknown one.
    let read = call(
        addr,
        "read_skill",
        json!({"id": "refunds"}),
        &[("Authorization", bearer("ann-token").as_str())],
    );
    let unknown = call(
        addr,
        "read_skill",
        json!({"id": "nothing-here"}),
        &[("Authorization", bearer("ann-token").as_str())],
    );
    assert_eq!(read["isError"], true, "{read}");
    let said = texts(&read).join(" ");
    assert!(said.contains("not a skill of this map"), "{said}");
    assert_eq!(
        said.replace("\"refunds\"", "ID")
            .split(';')
            .next()
            .map(str::to_owned),
        texts(&unknown)
            .join(" ")
            .replace("\"nothing-here\"", "ID")
            .split(';')
            .next()
            .map(str::to_owned)
    );

    // The risky order's route into refunds does not fire for support.
    let looked = call(
        addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &[("Authorization", bearer("ann-token").as_str())],
    );
    let run = handle_of(&looked);
    assert!(!looked.to_string().contains("refunds"), "{looked}");
    let refund = call(
        addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &[("Authorization", bearer("ann-token").as_str())],
    );
    assert_eq!(refund["isError"], true, "{refund}");
    let refused = texts(&refund).join(" ");
    assert!(
        refused.contains("issue_refund is not offered from here"),
        "{refused}"
    );
    assert!(!refused.contains("refunds"), "{refused}");

    // Her record declares the whole map: it is no resource of hers.
    let uri = format!("skillgraph://record/{run}");
    let record = sessionless(
        addr,
        "resources/read",
        Some(&uri),
        json!({"uri": uri}),
        &[("Authorization", bearer("ann-token").as_str())],
    );
    assert!(record.json()["error"].is_object(), "{}", record.body);
    assert!(!record.body.contains("refunds"), "{}", record.body);
    // Ada's run hides nothing: she reads hers.
    let hers = call(
        addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &[("Authorization", bearer("ada-token").as_str())],
    );
    let ada_run = handle_of(&hers);
    assert!(
        hers.to_string().contains("refunds"),
        "the route moves ada's run: {hers}"
    );
    let uri = format!("skillgraph://record/{ada_run}");
    let record = sessionless(
        addr,
        "resources/read",
        Some(&uri),
        json!({"uri": uri}),
        &[("Authorization", bearer("ada-token").as_str())],
    );
    let text = record.json()["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(text.contains(r#""roles":["auditor","support"]"#), "{text}");
    assert!(common::replays_to_itself(&text).is_ok(), "{text}");
}

#[test]
fn a_principal_with_none_of_the_roles_is_403_naming_roles_never_a_skill() {
    let served = served(
        "roles-none",
        json!({"support": {"hide": ["refunds"]}, "auditor": {}}),
    );
    let addr = served.addr.as_str();
    let answer = sessionless(
        addr,
        "tools/list",
        None,
        json!({}),
        &[("Authorization", bearer("gus-token").as_str())],
    );
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert!(answer.body.contains("\"visitor\""), "{}", answer.body);
    assert!(answer.body.contains("auditor, support"), "{}", answer.body);
    assert!(!answer.body.contains("refunds"), "{}", answer.body);
    assert_eq!(
        tools_of(addr, "ann-token").1["tools"]
            .as_array()
            .map(|t| !t.is_empty()),
        Some(true)
    );
}

#[test]
fn a_map_with_roles_is_refused_over_http_without_principals_or_an_anonymous_role() {
    let config = desk_with_roles(
        "roles-anonymous",
        json!({"support": {"hide": ["refunds"]}, "*": {}}),
    );
    let mut started = HttpServed::start(config.clone(), |_| {});
    let refused = match started.ended_within(std::time::Duration::from_secs(30)) {
        Some(Err(refused)) => refused,
        other => panic!("roles need principals: {other:?}"),
    };
    assert!(
        matches!(refused, ServeError::RolesNeedPrincipals(_)),
        "{refused}"
    );
    assert_eq!(refused.code(), "roles-need-principals");
    assert!(
        refused.to_string().contains("--anonymous-role"),
        "{refused}"
    );
    // With --anonymous-role every request takes that role.
    let mut anonymous = config;
    anonymous.anonymous_role = Some("support".to_owned());
    let served = HttpServed::start(anonymous, |_| {});
    let answer = sessionless(served.addr.as_str(), "tools/list", None, json!({}), &[]);
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(!answer.body.contains("refunds"), "{}", answer.body);
}

#[test]
fn an_entry_hidden_from_a_principal_gives_it_no_instructions() {
    let served = served(
        "roles-instructions",
        json!({"support": {"hide": ["triage"]}, "auditor": {}, "*": {}}),
    );
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}
    }});
    let instructions = |token: &str| {
        let opened = post(
            &served.addr,
            &[("Authorization", bearer(token).as_str())],
            &initialize,
        );
        assert_eq!(opened.status, 200, "{}", opened.body);
        opened.json()["result"]["instructions"].clone()
    };
    let theirs = instructions("ada-token");
    assert!(
        theirs
            .as_str()
            .is_some_and(|text| text.contains("<skill_content name=\"triage\">")),
        "{theirs}"
    );
    assert_eq!(instructions("ann-token"), Value::Null);
    let discovered = sessionless(
        &served.addr,
        "server/discover",
        None,
        json!({}),
        &[("Authorization", bearer("ann-token").as_str())],
    );
    assert!(
        discovered.json()["result"]["capabilities"].is_object(),
        "{}",
        discovered.body
    );
    assert!(!discovered.body.contains("triage"), "{}", discovered.body);
}
