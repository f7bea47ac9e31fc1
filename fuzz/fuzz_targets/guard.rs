//! Guard compile and evaluation from arbitrary bytes: the first line is the
//! guard's JSON; the rest is the hop, as a guard view's JSON when it reads as
//! one, else as the tool result text of a fixed view. Nothing may panic, and
//! the predicate must always agree with the evaluator.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_core::GuardViewInput;
use skill_guard::Guard;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (guard, rest) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(guard) = serde_json::from_str::<serde_json::Value>(guard) else { return };
    let Ok(guard) = Guard::compile(&guard) else { return };
    let input = serde_json::from_str::<GuardViewInput>(rest).unwrap_or_else(|_| GuardViewInput {
        tool_name: "lookup_order".into(),
        result: rest.into(),
        status: Some("success".into()),
        iteration: 3.0,
        user_message: rest.into(),
        current_skill_id: None,
    });
    let view = input.view();
    let evaluation = guard.evaluate(&view);
    assert_eq!(guard.test(&view), evaluation.verdict, "predicate and evaluator disagree");
    let _ = serde_json::to_string(&evaluation);
    let _ = skill_guard::mermaid_caption(guard.data());
});
