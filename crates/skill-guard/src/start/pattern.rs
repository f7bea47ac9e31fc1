//! One ECMAScript regular expression, as a start rule's `regex` declares it
//! (SPEC §13.1), on the `regress` engine with the corrections that make it
//! answer as JavaScript does:
//!
//! - without `u`, a pattern and a message are sequences of UTF-16 code units
//!   (so `^.$` does not match one astral character), and `\u` not followed by
//!   four hex digits is the letter `u`, as Annex B reads it (`\u{3}` matches
//!   `uuu`);
//! - the flags are checked here (`imsu`; `g`, `y`, `d` dropped), since the
//!   engine ignores letters it does not know;
//! - what Node 20's engine refuses and `regress` takes is refused: modifier
//!   groups (`(?i:…)`), a group name declared twice, a quantifier on `\b`;
//! - a match is searched with a bound on backtracking ([`MAX_STEPS`],
//!   then [`Found::GaveUp`]).

use std::ops::Range;

use regress::{Flags, Regex};

use crate::start::matcher::RuleError;

/// The backtracking steps one search may take, whatever the message's
/// length (comparing a back-reference costs a step per unit it compares).
/// An ordinary pattern takes a few per position of the message; one that
/// backtracks quadratically, such as `.*\brefund` after a long first line,
/// stays within it to about 4,000 characters; an exponential one such as
/// `(a+)+$` spends it and gives up, in about 50 ms.
pub const MAX_STEPS: u64 = 10_000_000;

/// A compiled `regex` matcher.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    regex: Regex,
    /// The flags kept (`imsu`, in the order written).
    flags: String,
    unicode: bool,
    /// ASCII text every match contains, when the pattern provably has some:
    /// a message without it is ruled out before the engine runs.
    needle: Option<Needle>,
}

/// ASCII text every match of a pattern contains.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Needle {
    text: String,
    /// Whether case is ignored (then `text` is lowercase, and looked for in
    /// the message with its ASCII letters lowercased).
    folded: bool,
}

/// Where the escape whose backslash is just before `at` ends: its letter,
/// and what the letter takes (`\uXXXX`, `\u{…}`, `\xHH`, `\cX`, `\p{…}`,
/// `\k<…>`, the digits of a back-reference or an octal escape). Skipping
/// more than the escape holds only shortens a needle.
fn escape_end(chars: &[char], at: usize) -> usize {
    let Some(&letter) = chars.get(at) else {
        return at;
    };
    let rest = at + 1;
    let count = |from: usize, most: usize, keep: fn(&char) -> bool| {
        chars[from.min(chars.len())..]
            .iter()
            .take(most)
            .take_while(|c| keep(c))
            .count()
    };
    // A body holding syntax is no escape's (`\k<a|b>` without named groups
    // is `k<a` or `b>`): it is read as the pattern it is.
    let through = |open: char, close: char| {
        if chars.get(rest) != Some(&open) {
            return rest;
        }
        chars[rest..]
            .iter()
            .position(|&c| c == close || "|()[]".contains(c))
            .filter(|&end| chars[rest + end] == close)
            .map_or(rest, |end| rest + end + 1)
    };
    match letter {
        'u' if chars.get(rest) == Some(&'{') => through('{', '}'),
        'u' => rest + count(rest, 4, char::is_ascii_hexdigit),
        'x' => rest + count(rest, 2, char::is_ascii_hexdigit),
        'c' => rest + count(rest, 1, char::is_ascii_alphabetic),
        'p' | 'P' => through('{', '}'),
        'k' => through('<', '>'),
        '0'..='9' => rest + count(rest, usize::MAX, char::is_ascii_digit),
        _ => rest,
    }
}

/// The longest run of plain ASCII characters at the top level of `source`
/// that every match must contain: outside groups and classes, not escaped,
/// and not made optional by a quantifier; none when the top level has an
/// alternation. Under `i` it is compared without ASCII case: without `u` an
/// ASCII character matches only ASCII characters; with `u`, `s` and `k` also
/// match `ſ` and the Kelvin sign, so a run stops at them.
fn needle(source: &str, flags: &str) -> Option<Needle> {
    let folded = flags.contains('i');
    let unicode = flags.contains('u');
    let chars: Vec<char> = source.chars().collect();
    let plain = |c: char| {
        c.is_ascii()
            && !"\\^$.|?*+()[]{}".contains(c)
            && !(folded && unicode && matches!(c.to_ascii_lowercase(), 's' | 'k'))
    };
    let mut best = String::new();
    let mut run = String::new();
    let mut depth = 0usize;
    let mut in_class = false;
    let mut at = 0;
    let end_run = |run: &mut String, best: &mut String| {
        if run.len() > best.len() {
            std::mem::swap(run, best);
        }
        run.clear();
    };
    while let Some(&c) = chars.get(at) {
        at += 1;
        if c == '\\' {
            at = escape_end(&chars, at);
            end_run(&mut run, &mut best);
            continue;
        }
        if in_class {
            in_class = c != ']';
            continue;
        }
        match c {
            '[' => {
                in_class = true;
                end_run(&mut run, &mut best);
            }
            '(' => {
                depth += 1;
                end_run(&mut run, &mut best);
            }
            ')' => depth = depth.saturating_sub(1),
            '|' if depth == 0 => return None,
            '?' | '*' | '{' if depth == 0 => {
                // The character before may be absent (`{` may begin `{0,}`),
                // and a brace's digits are no text.
                run.pop();
                end_run(&mut run, &mut best);
                if c == '{' {
                    let body = chars[at..]
                        .iter()
                        .take_while(|c| c.is_ascii_digit() || **c == ',')
                        .count();
                    if chars.get(at + body) == Some(&'}') {
                        at += body + 1;
                    }
                }
            }
            '+' if depth == 0 => end_run(&mut run, &mut best),
            c if depth == 0 && plain(c) => run.push(c),
            _ => end_run(&mut run, &mut best),
        }
    }
    end_run(&mut run, &mut best);
    (!best.is_empty()).then(|| Needle {
        text: if folded {
            best.to_ascii_lowercase()
        } else {
            best
        },
        folded,
    })
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// The first match: bytes of the text, or UTF-16 units when the search
    /// was on units.
    At(Range<usize>),
    /// No match.
    Nothing,
    /// The search needed more backtracking than the bound allows.
    GaveUp,
}

/// The flags `flags` declares, in the order written, without `g`, `y`, `d`.
fn checked_flags(flags: &str) -> Result<String, RuleError> {
    let mut kept = String::new();
    let mut seen = String::new();
    for flag in flags.chars() {
        if !"imsugyd".contains(flag) {
            return Err(RuleError::Flags {
                flags: flags.to_owned(),
                reason: format!(
                    "`{flag}` is not a flag a rule takes (imsu; g, y and d are dropped)"
                ),
            });
        }
        if seen.contains(flag) {
            return Err(RuleError::Flags {
                flags: flags.to_owned(),
                reason: format!("`{flag}` is given twice"),
            });
        }
        seen.push(flag);
        if "imsu".contains(flag) {
            kept.push(flag);
        }
    }
    Ok(kept)
}

const BACKSLASH: u32 = '\\' as u32;

fn is(unit: Option<&u32>, c: char) -> bool {
    unit == Some(&(c as u32))
}

fn hex4(units: &[u32]) -> Option<u32> {
    let digits = units.get(..4)?;
    digits.iter().try_fold(0, |value, &unit| {
        char::from_u32(unit)
            .and_then(|c| c.to_digit(16))
            .map(|digit| value * 16 + digit)
    })
}

/// Whether a quantifier begins at `units[0]`: `*`, `+`, `?`, or a `{n}`,
/// `{n,}`, `{n,m}` (a `{` that begins none is a literal without `u`).
fn quantifier_at(units: &[u32]) -> bool {
    match units.first().and_then(|&u| char::from_u32(u)) {
        Some('*' | '+' | '?') => true,
        Some('{') => {
            let rest = &units[1..];
            let digits = |from: usize| {
                rest[from..]
                    .iter()
                    .take_while(|&&u| char::from_u32(u).is_some_and(|c| c.is_ascii_digit()))
                    .count()
            };
            let first = digits(0);
            if first == 0 {
                return false;
            }
            match rest.get(first).and_then(|&u| char::from_u32(u)) {
                Some('}') => true,
                Some(',') => {
                    let second = digits(first + 1);
                    is(rest.get(first + 1 + second), '}')
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// What the engine is given for `source`: its code units without `u` (with
/// `\uXXXX` surrogates as the units themselves, and `\u` not followed by
/// four hex digits as `u`), its code points with `u`; or the refusal of a
/// shape Node 20 refuses.
fn engine_source(source: &str, unicode: bool) -> Result<Vec<u32>, RuleError> {
    let units: Vec<u32> = if unicode {
        source.chars().map(u32::from).collect()
    } else {
        source.encode_utf16().map(u32::from).collect()
    };
    let refuse = |reason: &str| {
        Err(RuleError::Pattern {
            regex: source.to_owned(),
            reason: reason.to_owned(),
        })
    };
    let mut out = Vec::with_capacity(units.len());
    let mut names: Vec<&[u32]> = Vec::new();
    let mut in_class = false;
    let mut at = 0;
    while let Some(&unit) = units.get(at) {
        if unit == BACKSLASH {
            let Some(&next) = units.get(at + 1) else {
                out.push(unit);
                break;
            };
            if !unicode && next == 'u' as u32 {
                match hex4(&units[at + 2..]) {
                    Some(value) if (0xD800..=0xDFFF).contains(&value) => {
                        out.push(value);
                        at += 6;
                    }
                    Some(_) => {
                        out.extend_from_slice(&units[at..at + 6]);
                        at += 6;
                    }
                    None => {
                        out.push(next);
                        at += 2;
                    }
                }
                continue;
            }
            if !in_class
                && (next == 'b' as u32 || next == 'B' as u32)
                && quantifier_at(&units[at + 2..])
            {
                return refuse("nothing to repeat: a quantifier follows the assertion \\b or \\B");
            }
            out.extend_from_slice(&units[at..at + 2]);
            at += 2;
            continue;
        }
        if in_class {
            in_class = unit != ']' as u32;
        } else if unit == '[' as u32 {
            in_class = true;
        } else if unit == '(' as u32 && is(units.get(at + 1), '?') {
            let third = units.get(at + 2).and_then(|&u| char::from_u32(u));
            match third {
                Some('<')
                    if !matches!(
                        units.get(at + 3).and_then(|&u| char::from_u32(u)),
                        Some('=' | '!')
                    ) =>
                {
                    let rest = &units[at + 3..];
                    if let Some(end) = rest.iter().position(|&u| u == '>' as u32) {
                        let name = &rest[..end];
                        if names.contains(&name) {
                            return refuse("a group name is declared twice");
                        }
                        names.push(name);
                    }
                }
                Some(c) if c == '-' || c.is_ascii_alphabetic() => {
                    return refuse(
                        "invalid group: modifier groups such as (?i:…) are not ECMAScript 2024",
                    );
                }
                _ => {}
            }
        }
        out.push(unit);
        at += 1;
    }
    Ok(out)
}

impl Pattern {
    /// Compile `source` with `flags`.
    pub(crate) fn compile(source: &str, flags: &str) -> Result<Self, RuleError> {
        let flags = checked_flags(flags)?;
        let unicode = flags.contains('u');
        let units = engine_source(source, unicode)?;
        let regex = Regex::from_unicode(units.into_iter(), Flags::from(flags.as_str())).map_err(
            |error| RuleError::Pattern {
                regex: source.to_owned(),
                reason: error.text,
            },
        )?;
        Ok(Pattern {
            regex,
            needle: needle(source, &flags),
            flags,
            unicode,
        })
    }

    /// The flags kept (`imsu`, in the order written; `g`, `y`, `d` dropped).
    pub(crate) fn flags(&self) -> &str {
        &self.flags
    }

    /// Whether [`find`](Self::find) searches `units` (and so answers in
    /// UTF-16 units) rather than the text.
    pub(crate) fn on_units(&self, units: Option<&[u16]>) -> bool {
        units.is_some() && !self.unicode
    }

    /// The first match in `text`, searched with at most [`MAX_STEPS`]
    /// backtracking steps. `units` is `text` as UTF-16 when it holds an
    /// astral character (two code units, which a pattern without `u` sees
    /// apart), else `None`: every other text reads the same as code points
    /// or as code units, so it is searched as UTF-8, where the engine's
    /// prefix search works. A text without the pattern's needle is ruled out
    /// first.
    pub(crate) fn find(&self, text: &str, lower: &str, units: Option<&[u16]>) -> Found {
        if let Some(needle) = &self.needle {
            let haystack = if needle.folded { lower } else { text };
            if !haystack.contains(needle.text.as_str()) {
                return Found::Nothing;
            }
        }
        let found = match units.filter(|_| !self.unicode) {
            Some(units) => self.regex.find_bounded_ucs2(units, MAX_STEPS),
            None => self.regex.find_bounded(text, MAX_STEPS),
        };
        match found {
            Ok(Some(m)) => Found::At(m.range()),
            Ok(None) => Found::Nothing,
            Err(regress::StepsExhausted) => Found::GaveUp,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(source: &str, flags: &str, text: &str) -> Found {
        let units: Vec<u16> = text.encode_utf16().collect();
        let astral = units.len() != text.chars().count();
        match Pattern::compile(source, flags) {
            Ok(pattern) => pattern.find(
                text,
                &text.to_ascii_lowercase(),
                astral.then_some(&units[..]),
            ),
            Err(error) => panic!("{source} /{flags}: {error}"),
        }
    }

    #[test]
    fn without_u_a_pattern_reads_code_units() {
        assert_eq!(found("^.$", "", "😀"), Found::Nothing);
        assert_eq!(found("^.$", "u", "😀"), Found::At(0..4));
        assert_eq!(found("\\uD83D\\uDE00", "", "a😀"), Found::At(1..3));
        assert_eq!(found("\\u{3}", "", "uuu"), Found::At(0..3));
    }

    #[test]
    fn flags_the_engine_would_ignore_are_refused() {
        for flags in ["v", "x", "ii", "U"] {
            assert!(Pattern::compile("a", flags).is_err(), "{flags}");
        }
        assert!(Pattern::compile("a", "gimsuyd").is_ok());
    }

    #[test]
    fn what_node_20_refuses_is_refused() {
        for source in ["(?i:a)", "(?<a>x)(?<a>y)", "\\b+", "a\\B{2}"] {
            assert!(Pattern::compile(source, "").is_err(), "{source}");
        }
        assert!(Pattern::compile("\\b{", "").is_ok());
        assert!(Pattern::compile("[\\b+]", "").is_ok());
    }

    #[test]
    fn legacy_case_folding_keeps_non_ascii_apart_from_ascii() {
        // Offsets are bytes: these messages hold no astral character.
        assert_eq!(found("s", "i", "ſ"), Found::Nothing);
        assert_eq!(found("s", "iu", "ſ"), Found::At(0..2));
        assert_eq!(found("[a-z]", "i", "\u{212A}"), Found::Nothing);
        assert_eq!(found("[a-z]", "iu", "\u{212A}"), Found::At(0..3));
        assert_eq!(found("\\w", "i", "ſ"), Found::Nothing);
        assert_eq!(found("(a)\\1", "i", "aA"), Found::At(0..2));
    }

    #[test]
    fn the_needle_is_ascii_text_every_match_contains() {
        let text = |source: &str, flags: &str| needle(source, flags).map(|n| n.text);
        assert_eq!(text("\\b(parcel|package)s?\\b", "i"), None);
        assert_eq!(
            text("\\bwhere is my\\s+parcel", "i").as_deref(),
            Some("where is my")
        );
        assert_eq!(text("Brim(?:a|b)urzor+x", ""), Some("urzor".into()));
        assert_eq!(text("colou?r", ""), Some("colo".into()));
        assert_eq!(text("a|bcd", ""), None);
        assert_eq!(
            text("\\k<x|y>zzz", ""),
            None,
            "without named groups it is `k<x` or `y>zzz`"
        );
        assert_eq!(text("\\u00e9tude\\d{2,}", "i").as_deref(), Some("tude"));
        assert_eq!(text("[abc]xy{0,2}", ""), Some("x".into()));
        assert_eq!(
            text("Stock", "iu"),
            Some("toc".into()),
            "s and k match ſ and K under iu"
        );
        assert_eq!(text("Stock", "i"), Some("stock".into()));
        assert_eq!(found("kelvin", "iu", "\u{212A}ELVIN"), Found::At(0..8));
        assert_eq!(found("STRASSE", "iu", "ſtrasse"), Found::At(0..8));
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// Ruling a message out by its needle never changes an answer.
        #[test]
        fn the_needle_never_rules_out_a_match(
            source in proptest::collection::vec(proptest::sample::select(vec![
                "a", "b", "s", "k", "S", "K", "ſ", "\u{212A}", " ", "ab", "sk", "\\b", "\\s", "\\d", "\\u0061",
                "\\x62", "\\u{6b}", "\\k<n>", "\\k<a|b>", "\\p{L}", "<", ">", "(?<n>a)", "\\1", "(", ")", "(?:", "|", "[", "]", "?", "*", "+",
                "{1}", "{0,2}", "{", "}", ".", "^", "$", "(?=a)", "(?<=s)",
            ]), 0..10).prop_map(|parts| parts.concat()),
            flags in proptest::sample::select(vec!["", "i", "u", "iu", "im", "is"]).prop_map(str::to_owned),
            text in proptest::collection::vec(proptest::sample::select(vec![
                "a", "A", "b", "B", "s", "S", "k", "K", "ſ", "\u{212A}", " ", "1", "😀", "\n",
            ]), 0..16).prop_map(|parts| parts.concat()),
        ) {
            if let Ok(mut pattern) = Pattern::compile(&source, &flags) {
                let units: Vec<u16> = text.encode_utf16().collect();
                let astral = units.len() != text.chars().count();
                let lower = text.to_ascii_lowercase();
                let with = pattern.find(&text, &lower, astral.then_some(&units[..]));
                pattern.needle = None;
                let without = pattern.find(&text, &lower, astral.then_some(&units[..]));
                proptest::prop_assert_eq!(with, without);
            }
        }
    }

    #[test]
    fn catastrophic_backtracking_gives_up_instead_of_hanging() {
        let message = format!("{}b", "a".repeat(10_000));
        assert_eq!(found("(a+)+$", "", &message), Found::GaveUp);
        assert_eq!(found("(a+)+b", "", &message), Found::At(0..10_001));
        assert_eq!(found("(a*)\\1*\\1*\\1*$", "", &message), Found::GaveUp);
    }

    #[test]
    fn a_pattern_that_backtracks_quadratically_still_answers_on_a_long_message() {
        let line = "x".repeat(3_000);
        let message = format!("{line}\nI want a refund");
        assert_eq!(found(".*\\brefund", "i", &message), Found::At(3_001..3_016));
        let digits = format!("{} 12-34-56", "1".repeat(2_000));
        assert_eq!(
            found("\\d+-\\d+-\\d+", "", &digits),
            Found::At(2_001..2_009)
        );
    }
}
