//! A front matter as JSON, field for field, as a host reading the file with
//! an ordinary YAML 1.2 reader gets it: the skills extension
//! (`io.modelcontextprotocol/skills`) wants a skill entry's `frontmatter`
//! identical in content to its `SKILL.md`'s, and hosts compare the two
//! field by field.
//!
//! Unlike the strict reader of the verdict (`yaml.rs`), where every scalar
//! is text, a plain scalar here is typed by the YAML 1.2 core schema (the
//! default of the `yaml` package, which the MCP conformance suite reads
//! `SKILL.md` files with): `true`/`false` (and their `True`, `TRUE` forms)
//! are booleans, `null`, `~` and an empty value are null, `12`, `-3`,
//! `0o17`, `0x1F`, `1.5` and `2e3` are numbers; a quoted or block scalar is
//! a string, and so is `.inf` or `.nan`, which JSON cannot hold. Flow
//! collections are read, and a repeated key keeps its last value.

use saphyr_parser::{Event, Parser, ScalarStyle};
use serde_json::{Map, Number, Value};

/// The deepest nesting of lists and mappings read; a deeper front matter
/// is not read at all (it could not be written out or dropped without
/// deep recursion).
const MAX_DEPTH: usize = 64;

/// A list or mapping being built.
enum Open {
    Seq(Vec<Value>),
    Map(Map<String, Value>, Option<String>),
}

/// The front matter `text` (between the `---` lines) as a JSON object;
/// `None` when it is not YAML, not one mapping, nested deeper than
/// [`MAX_DEPTH`], or uses a tag, an alias or a list or mapping as a key,
/// whose meaning varies between readers.
pub(super) fn json(text: &str) -> Option<Map<String, Value>> {
    let mut stack: Vec<Open> = Vec::new();
    let mut root = None;
    let mut documents = 0;
    for next in Parser::new_from_str(text) {
        let (event, _) = next.ok()?;
        let node = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return None;
                }
                continue;
            }
            Event::Alias(_)
            | Event::Scalar(_, _, _, Some(_))
            | Event::SequenceStart(_, Some(_))
            | Event::MappingStart(_, Some(_)) => return None,
            Event::SequenceStart(..) | Event::MappingStart(..) if stack.len() >= MAX_DEPTH => {
                return None;
            }
            Event::SequenceStart(..) => {
                stack.push(Open::Seq(Vec::new()));
                continue;
            }
            Event::MappingStart(..) => {
                stack.push(Open::Map(Map::new(), None));
                continue;
            }
            Event::Scalar(text, style, ..) => {
                if let Some(Open::Map(_, key @ None)) = stack.last_mut() {
                    *key = Some(text.into_owned());
                    continue;
                }
                scalar(&text, style)
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Open::Seq(items)) => Value::Array(items),
                _ => return None,
            },
            Event::MappingEnd => match stack.pop() {
                Some(Open::Map(fields, None)) => Value::Object(fields),
                _ => return None,
            },
            _ => continue,
        };
        match stack.last_mut() {
            None => root = Some(node),
            Some(Open::Seq(items)) => items.push(node),
            Some(Open::Map(fields, key)) => {
                // A list or mapping where a key is awaited is a complex key.
                fields.insert(key.take()?, node);
            }
        }
    }
    match root {
        Some(Value::Object(fields)) => Some(fields),
        _ => None,
    }
}

/// A scalar as the core schema reads it: a plain one typed, any other a
/// string.
fn scalar(text: &str, style: ScalarStyle) -> Value {
    if style != ScalarStyle::Plain {
        return Value::String(text.to_owned());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => number(text).map_or_else(|| Value::String(text.to_owned()), Value::Number),
    }
}

/// `text` as a core-schema number (`0o17`, `0x1F`, `-3`, `+1.5`, `.5`,
/// `2e3`), when it is one JSON can hold. An integer beyond 64 bits is the
/// nearest double, as a JavaScript reader has it; `-0` keeps its sign.
fn number(text: &str) -> Option<Number> {
    if let Some(digits) = text.strip_prefix("0o") {
        return in_radix(digits, 8);
    }
    if let Some(digits) = text.strip_prefix("0x") {
        return in_radix(digits, 16);
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if is_digits(unsigned) {
        if let Ok(integer) = text.parse::<i64>() {
            if integer == 0 && text.starts_with('-') {
                return Number::from_f64(-0.0);
            }
            return Some(integer.into());
        }
        if let Ok(integer) = text.parse::<u64>() {
            return Some(integer.into());
        }
    } else if !is_float(unsigned) {
        return None;
    }
    text.parse::<f64>().ok().and_then(Number::from_f64)
}

/// `[0-9]+`.
fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// The core schema's unsigned float: `(\.[0-9]+|[0-9]+(\.[0-9]*)?)`, then
/// an optional exponent `[eE][-+]?[0-9]+` (`.inf` and `.nan` are not read).
fn is_float(text: &str) -> bool {
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (text, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => is_digits(fraction),
        Some((whole, fraction)) => is_digits(whole) && (fraction.is_empty() || is_digits(fraction)),
        None => is_digits(mantissa),
    };
    mantissa_ok
        && exponent
            .is_none_or(|exponent| is_digits(exponent.strip_prefix(['-', '+']).unwrap_or(exponent)))
}

/// Unsigned `digits` in `radix` (the digits after `0o` or `0x`).
fn in_radix(digits: &str, radix: u32) -> Option<Number> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    if let Ok(integer) = u64::from_str_radix(digits, radix) {
        return Some(integer.into());
    }
    let wide = digits.chars().fold(0.0_f64, |sum, c| {
        sum * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
    });
    Number::from_f64(wide)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Option<Value> {
        json(text).map(Value::Object)
    }

    #[test]
    fn every_field_is_read_with_its_type() {
        let text = "\nname: pdf-tools\ndescription: Read PDFs. Use when: a PDF arrives\nlicense: Apache-2.0\nallowed-tools: Bash(git:*) Read\nmetadata:\n  author: example-org\n  version: \"1.0\"\n  tags:\n    - pdf\n    - 'docs'\n  rank: 3\n  beta: false\n  ratio: 0.5\n  notes:\ncompatibility: |\n  Needs python3\n  and poppler\n";
        assert_eq!(read(text), None, "a `: ` in a plain value is not YAML");
        let text = text.replace("Use when: a PDF", "Use when a PDF");
        assert_eq!(
            read(&text),
            Some(json!({
                "name": "pdf-tools",
                "description": "Read PDFs. Use when a PDF arrives",
                "license": "Apache-2.0",
                "allowed-tools": "Bash(git:*) Read",
                "metadata": {
                    "author": "example-org",
                    "version": "1.0",
                    "tags": ["pdf", "docs"],
                    "rank": 3,
                    "beta": false,
                    "ratio": 0.5,
                    "notes": null
                },
                "compatibility": "Needs python3\nand poppler\n"
            }))
        );
        let keys: Vec<String> = json(&text).unwrap_or_default().keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "name",
                "description",
                "license",
                "allowed-tools",
                "metadata",
                "compatibility"
            ],
            "the author's order"
        );
    }

    #[test]
    fn plain_scalars_follow_the_core_schema() {
        for (plain, expect) in [
            ("123", json!(123)),
            ("-7", json!(-7)),
            ("+7", json!(7)),
            ("0o17", json!(15)),
            ("0x1F", json!(31)),
            ("1.5", json!(1.5)),
            ("1.", json!(1.0)),
            (".5", json!(0.5)),
            ("2e3", json!(2000.0)),
            ("-1.5E-1", json!(-0.15)),
            ("18446744073709551615", json!(u64::MAX)),
            ("18446744073709551616", json!(18_446_744_073_709_551_616.0)),
            ("True", json!(true)),
            ("FALSE", json!(false)),
            ("~", Value::Null),
            ("", Value::Null),
            ("yes", json!("yes")),
            ("0o18", json!("0o18")),
            ("0X1F", json!("0X1F")),
            ("1_000", json!("1_000")),
            ("1e", json!("1e")),
            ("inf", json!("inf")),
            (".inf", json!(".inf")),
            (".nan", json!(".nan")),
            ("3.11.2", json!("3.11.2")),
            ("2024-01-01", json!("2024-01-01")),
        ] {
            assert_eq!(
                read(&format!("k: {plain}")),
                Some(json!({"k": expect})),
                "{plain:?}"
            );
        }
        assert_eq!(
            read("k: -0")
                .and_then(|v| v["k"].as_f64())
                .map(f64::is_sign_negative),
            Some(true),
            "-0 keeps its sign"
        );
        for quoted in ["'123'", "\"true\"", "\"\"", "|\n  null"] {
            assert!(
                read(&format!("k: {quoted}")).is_some_and(|v| v["k"].is_string()),
                "{quoted}"
            );
        }
    }

    #[test]
    fn flow_collections_are_read_and_a_repeated_key_keeps_its_last_value() {
        assert_eq!(
            read("allowed-tools: [Read, Grep]\nmetadata: {a: 1}\nname: a\nname: b"),
            Some(json!({"allowed-tools": ["Read", "Grep"], "metadata": {"a": 1}, "name": "b"}))
        );
    }

    #[test]
    fn what_readers_read_differently_or_not_at_all_is_none() {
        for text in [
            "name: \"unclosed",
            "name: a\n  bad: indent",
            "- a\n- b",
            "just text",
            "",
            "name: !!str 123",
            "name: &n a\ncopy: *n",
            "? [a]\n: b",
            "a: 1\n---\nb: 2",
        ] {
            assert_eq!(read(text), None, "{text:?}");
        }
        let deep = format!("k: {}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(read(&deep), None);
        let deep = format!(
            "k: {}{}",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        assert!(read(&deep).is_some());
    }
}
