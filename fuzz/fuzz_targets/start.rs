//! A start rule's matcher from arbitrary bytes: the first line is the
//! matcher's JSON (`regex` with `flags`, `keywords`, `all`), the rest the
//! user's message. Nothing may panic, a search ends (it gives up at the
//! bound on backtracking), and a witness keeps its 80-unit bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_guard::start::{Matcher, Message, Outcome};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (matcher, message) = text.split_once('\n').unwrap_or((text, ""));
    let matcher = serde_json::from_str::<serde_json::Value>(matcher)
        .unwrap_or_else(|_| serde_json::json!({ "regex": matcher, "flags": "i" }));
    let Ok(matcher) = Matcher::compile(&matcher) else { return };
    if let Outcome::Matched(witness) = matcher.find(&Message::new(message)) {
        assert!(witness.encode_utf16().count() <= 80, "the witness is over its bound");
    }
});
