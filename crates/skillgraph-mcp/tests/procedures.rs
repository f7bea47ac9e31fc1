//! Procedures through `serve --http` on the sessionless generation (SPEC
//! §15.9): a held-out tool refused at the call gate, naming the current
//! step, and never forwarded; a result that does the step says the next;
//! `skip_step` in the one list; the record replays.

mod common;

use std::sync::atomic::Ordering;

use serde_json::json;
use skillgraph_mcp::ServeConfig;

use common::plain::{call, handle_of, sessionless, texts};
use common::{HttpServed, desk, replays_to_itself, upstream};

#[test]
fn a_held_out_tool_is_refused_naming_the_current_step_and_never_reaches_the_upstream() {
    let upstream = upstream::desk(upstream::desk_data());
    let map = desk(
        "procedures-held",
        json!({"desk": {"url": upstream.url}}),
        |map| {
            map["skills"]["triage"]["steps"] = json!([
                {"tool": "lookup_order", "note": "look the order up"},
                {"tool": "track_parcel", "note": "track its parcel"}
            ]);
        },
    );
    let served = HttpServed::start(ServeConfig::new(map), |_| {});
    let addr = served.addr.as_str();

    let listed = sessionless(addr, "tools/list", None, json!({}), &[]);
    assert!(listed.body.contains("\"skip_step\""), "{}", listed.body);

    let held = call(addr, "track_parcel", json!({"parcel_id": "JD0150"}), &[]);
    let run = handle_of(&held);
    assert_eq!(held["isError"], true, "{held}");
    let said = texts(&held).join(" ");
    assert!(
        said.contains("step 1 of 2, look the order up (lookup_order)"),
        "{said}"
    );
    assert!(said.contains("skip_step"), "{said}");
    assert_eq!(
        upstream.calls.load(Ordering::Relaxed),
        0,
        "nothing was forwarded"
    );

    let looked = call(
        addr,
        "lookup_order",
        json!({"order_id": 4413, "skillgraph_run": run}),
        &[],
    );
    let said = texts(&looked).join(" ");
    assert!(
        said.contains("Next: step 2 of 2, track its parcel (track_parcel)"),
        "{said}"
    );
    let tracked = call(
        addr,
        "track_parcel",
        json!({"parcel_id": "JD0150", "skillgraph_run": run}),
        &[],
    );
    assert_ne!(tracked["isError"], true, "{tracked}");
    assert_eq!(upstream.calls.load(Ordering::Relaxed), 2);

    let skipped = call(
        addr,
        "skip_step",
        json!({"reason": "nothing left", "skillgraph_run": run}),
        &[],
    );
    assert_eq!(
        skipped["isError"], true,
        "the procedure is complete: {skipped}"
    );
    let uri = format!("skillgraph://record/{run}");
    let record = sessionless(addr, "resources/read", Some(&uri), json!({"uri": uri}), &[]).json();
    let text = record["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(text.contains(r#""refusal":"step-held""#), "{text}");
    assert!(text.contains(r#""event":"step""#), "{text}");
    replays_to_itself(&text).unwrap_or_else(|diff| panic!("{diff}\n{text}"));
}

#[test]
fn a_run_s_budget_is_said_in_meta_and_once_spent_nothing_more_is_forwarded() {
    let upstream = upstream::desk(upstream::desk_data());
    let map = desk(
        "procedures-budget",
        json!({"desk": {"url": upstream.url}}),
        |map| {
            map["budget"] = json!({"max_iterations": 2});
        },
    );
    let served = HttpServed::start(ServeConfig::new(map), |_| {});
    let addr = served.addr.as_str();
    let first = call(addr, "lookup_order", json!({"order_id": 4413}), &[]);
    let run = handle_of(&first);
    assert_eq!(
        first["_meta"]["skillgraph/iterations_remaining"], 1,
        "{first}"
    );
    // list_skills is no step: in the second iteration, 0 remain.
    let listed = call(addr, "list_skills", json!({"skillgraph_run": run}), &[]);
    assert_eq!(
        listed["_meta"]["skillgraph/iterations_remaining"], 0,
        "{listed}"
    );
    let second = call(
        addr,
        "lookup_order",
        json!({"order_id": 4413, "skillgraph_run": run}),
        &[],
    );
    assert_eq!(
        second["_meta"]["skillgraph/iterations_remaining"], 0,
        "{second}"
    );
    assert!(
        texts(&second)
            .join(" ")
            .contains("budget is spent with this call"),
        "{second}"
    );
    let third = call(
        addr,
        "lookup_order",
        json!({"order_id": 4413, "skillgraph_run": run}),
        &[],
    );
    assert_eq!(third["isError"], true, "{third}");
    assert!(
        texts(&third)
            .join(" ")
            .contains("budget of 2 iteration(s) is spent"),
        "{third}"
    );
    assert_eq!(
        upstream.calls.load(Ordering::Relaxed),
        2,
        "the third call was not forwarded"
    );
}

/// The desk's data with `lookup_order`'s answers proposing a move to
/// `shipping` (a hop from triage by its route).
fn proposing_data() -> serde_json::Value {
    let mut data = upstream::desk_data();
    data["lookup_order"]["meta"] =
        json!({"skillgraph/propose": {"to": "shipping", "reason": "the parcel is late"}});
    data
}

#[test]
fn a_trusted_upstream_s_proposal_moves_the_run_and_an_untrusted_one_is_removed_and_refused() {
    for trusted in [true, false] {
        let upstream = upstream::desk(proposing_data());
        let map = desk(
            &format!("procedures-propose-{trusted}"),
            json!({"desk": {"url": upstream.url, "proposals": trusted}}),
            |_| {},
        );
        let served = HttpServed::start(ServeConfig::new(map), |_| {});
        let addr = served.addr.as_str();
        let answer = call(addr, "lookup_order", json!({"order_id": 4413}), &[]);
        assert!(
            answer["_meta"].get("skillgraph/propose").is_none(),
            "never forwarded: {answer}"
        );
        let said = texts(&answer).join(" ");
        let run = handle_of(&answer);
        let uri = format!("skillgraph://record/{run}");
        let record =
            sessionless(addr, "resources/read", Some(&uri), json!({"uri": uri}), &[]).json();
        let text = record["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if trusted {
            assert!(
                said.contains("<skill_content name=\"shipping\">"),
                "the body comes: {said}"
            );
            assert!(text.contains(r#""by":"tool""#), "{text}");
        } else {
            assert!(!said.contains("shipping"), "{said}");
            assert!(text.contains(r#""refusal":"not-trusted""#), "{text}");
        }
        replays_to_itself(&text).unwrap_or_else(|diff| panic!("{diff}\n{text}"));
    }
}

#[test]
fn the_refused_call_that_reaches_the_count_carries_the_escalation_in_meta() {
    let upstream = upstream::desk(upstream::desk_data());
    let map = desk(
        "procedures-escalated",
        json!({"desk": {"url": upstream.url}}),
        |_| {},
    );
    let served = HttpServed::start(ServeConfig::new(map), |_| {});
    let addr = served.addr.as_str();
    let first = call(addr, "issue_refund", json!({"order_id": 4412}), &[]);
    let run = handle_of(&first);
    let second = call(
        addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &[],
    );
    assert!(
        second["_meta"].get("skillgraph/escalated").is_none(),
        "{second}"
    );
    let third = call(
        addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &[],
    );
    let escalated = &third["_meta"]["skillgraph/escalated"];
    assert_eq!(escalated["after_refusals"], 3, "{third}");
    assert_eq!(
        escalated["refusals"].as_array().map(Vec::len),
        Some(3),
        "{third}"
    );
    let fourth = call(
        addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &[],
    );
    assert!(
        fourth["_meta"].get("skillgraph/escalated").is_none(),
        "once: {fourth}"
    );
    assert_eq!(upstream.calls.load(Ordering::Relaxed), 0);
}
