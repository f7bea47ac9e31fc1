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
//! - a match is searched with a bound on backtracking ([`Found::GaveUp`]).

use std::ops::Range;

use regress::{Flags, Regex};

use crate::start::matcher::RuleError;

/// Backtracking steps every search may take whatever the message's length.
pub const BASE_STEPS: u64 = 100_000;

/// Further backtracking steps each UTF-16 unit of the message allows.
pub const STEPS_PER_UNIT: u64 = 64;

/// A compiled `regex` matcher.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    regex: Regex,
    unicode: bool,
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
        Ok(Pattern { regex, unicode })
    }

    /// The first match in `text`, searched with at most [`BASE_STEPS`] +
    /// [`STEPS_PER_UNIT`] × its length in UTF-16 units backtracking steps.
    /// `units` is `text` as UTF-16 when it holds an astral character (two
    /// code units, which a pattern without `u` sees apart), else `None`:
    /// every other text reads the same as code points or as code units, so
    /// it is searched as UTF-8, where the engine's prefix search works.
    /// Whether [`find`](Self::find) searches `units` (and so answers in
    /// UTF-16 units) rather than the text.
    pub(crate) fn on_units(&self, units: Option<&[u16]>) -> bool {
        units.is_some() && !self.unicode
    }

    pub(crate) fn find(&self, text: &str, units: Option<&[u16]>) -> Found {
        let length = units.map_or_else(|| text.chars().count(), <[u16]>::len);
        let steps = BASE_STEPS.saturating_add(STEPS_PER_UNIT.saturating_mul(length as u64));
        let found = match units {
            Some(units) if self.on_units(Some(units)) => self.regex.find_bounded_ucs2(units, steps),
            _ => self.regex.find_bounded(text, steps),
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
            Ok(pattern) => pattern.find(text, astral.then_some(&units[..])),
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
    fn catastrophic_backtracking_gives_up_instead_of_hanging() {
        let message = format!("{}b", "a".repeat(10_000));
        assert_eq!(found("(a+)+$", "", &message), Found::GaveUp);
        assert_eq!(found("(a+)+b", "", &message), Found::At(0..10_001));
    }
}
