//! Guard compile and evaluation from arbitrary bytes: the first line is the
//! guard's JSON, the rest the tool result text. Nothing may panic, and the
//! predicate must always agree with the evaluator.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_core::GuardView;
use skill_guard::Guard;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (guard, result) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(guard) = serde_json::from_str::<serde_json::Value>(guard) else { return };
    let Ok(guard) = Guard::compile(&guard) else { return };
    let view = GuardView::new("lookup_order", result).with_status("success").with_iteration(3.0).with_user_message(result);
    let evaluation = guard.evaluate(&view);
    assert_eq!(guard.test(&view), evaluation.verdict, "predicate and evaluator disagree");
    let _ = serde_json::to_string(&evaluation);
    let _ = skill_guard::mermaid_caption(guard.data());
});
