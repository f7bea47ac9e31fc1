//! Unsatisfiability from arbitrary JSON: `{ "guard": …, "pre": { … } }`.
//! Nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_guard::{Guard, Preconditions, unsatisfiable};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let Ok(guard) = Guard::compile(input.get("guard").unwrap_or(&input)) else { return };
    let statuses: Option<Vec<String>> =
        input.pointer("/pre/on_tool_statuses").and_then(|v| serde_json::from_value(v.clone()).ok());
    let tool = input.pointer("/pre/on_tool_return_exact").and_then(|v| v.as_str());
    let pre = Preconditions { on_tool_statuses: statuses.as_deref(), on_tool_return_exact: tool };
    if let Some(proof) = unsatisfiable(guard.data(), &pre) {
        let _ = (proof.code(), proof.key(), proof.to_string());
    }
});
