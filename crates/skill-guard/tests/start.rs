//! Laws of start rules' matchers (SPEC §13.1): no input panics, the witness
//! keeps its bound, and a keyword matches the message it is.

use proptest::prelude::*;
use serde_json::json;
use skill_guard::start::{Matcher, Message, Outcome};

/// Pattern text made of ECMAScript's syntax characters, escapes, letters,
/// non-ASCII and astral characters, so that most strings are near-patterns.
fn pattern() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "a",
        "b",
        "k",
        "s",
        "ſ",
        "\u{212A}",
        "é",
        "😀",
        "\\",
        "\\b",
        "\\B",
        "\\d",
        "\\w",
        "\\s",
        "\\u",
        "\\u{1F600}",
        "\\uD83D",
        "\\x4",
        "\\k<n>",
        "\\1",
        "\\p{L}",
        ".",
        "^",
        "$",
        "|",
        "(",
        ")",
        "(?:",
        "(?=",
        "(?!",
        "(?<=",
        "(?<!",
        "(?<n>",
        "(?i:",
        "[",
        "]",
        "[^",
        "-",
        "{",
        "}",
        "{2}",
        "{1,3}",
        "*",
        "+",
        "?",
        " ",
    ]);
    prop::collection::vec(atoms, 0..12).prop_map(|parts| parts.concat())
}

fn flags() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!['i', 'm', 's', 'u', 'g', 'y', 'd', 'v', 'x']),
        0..4,
    )
    .prop_map(|flags| flags.into_iter().collect())
}

fn message() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "a", "b", "K", "\u{212A}", "ſ", "S", "😀", " ", "\n", "\u{a0}", "é", "1", "n",
        ]),
        0..120,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn no_pattern_flags_or_message_panics_and_the_witness_keeps_its_bound(
        source in pattern(), flags in flags(), text in message()
    ) {
        if let Ok(matcher) = Matcher::compile(&json!({ "regex": source, "flags": flags }))
            && let Outcome::Matched(witness) = matcher.find(&Message::new(&text))
        {
            prop_assert!(witness.encode_utf16().count() <= 80);
            prop_assert_eq!(witness.trim(), witness.as_str());
            prop_assert!(!witness.contains("  "));
        }
    }

    #[test]
    fn a_keyword_matches_a_message_that_is_that_keyword(word in "[a-zA-Z0-9_+$.]{1,12}") {
        let matcher = Matcher::compile(&json!({ "keywords": [word.clone()] }));
        prop_assert!(matcher.is_ok());
        if let Ok(matcher) = matcher {
            prop_assert_eq!(matcher.find(&Message::new(&word)), Outcome::Matched(word.clone()));
        }
    }
}
