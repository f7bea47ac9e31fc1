//! Reading a tool result the way `JSON.parse` would, but only as far as a
//! guard needs: the named top-level fields of a JSON object.
//!
//! One pass validates the whole text (an invalid text anywhere means every
//! field reads `undefined`, as a failed `JSON.parse` does) and builds values
//! only for the keys the guard names; everything else is skipped without
//! allocating. A repeated key keeps its last value. Nesting is handled with
//! explicit stacks, so depth costs memory, never the call stack.
//!
//! Where `JSON.parse` would produce a string holding a lone surrogate (an
//! unpaired `\uD800` escape), the reader produces U+FFFD: Rust strings hold
//! Unicode scalar values only.

use std::borrow::Cow;
use std::collections::HashMap;

use smallvec::SmallVec;

use crate::js_value::{Items, JsValue, Members as JsMembers};

/// The values of the wanted keys, in the order of `keys`.
pub(crate) type Fields<'a> = SmallVec<[JsValue<'a>; 4]>;

/// What reading a result's fields found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The text is a JSON object: each wanted key it holds was handed over
    /// (a repeated key as often as it is written, the last value last).
    Object,
    /// The text is not a JSON object (an array, a scalar or invalid text):
    /// every key reads `undefined`, whatever was handed over.
    NotObject,
    /// The reader stopped early, after a value the caller said settles its
    /// answer whatever the rest holds.
    Decided,
}

/// Read the top-level fields `keys` of `text`, handing each wanted value to
/// `take(slot, value)` (its key's index in `keys`) as it is read.
///
/// `take` answers whether that value settles the caller's answer both ways:
/// if the text turns out valid (the key reads this value) and if it turns
/// out invalid (every key reads `undefined`). When it does and the key
/// cannot be written again later (a repeated key keeps its last value), the
/// rest of the text need not be validated and the read ends with
/// [`Outcome::Decided`].
pub(crate) fn read_fields<'a>(
    text: &'a str,
    keys: &[&str],
    mut take: impl FnMut(usize, JsValue<'a>) -> bool,
) -> Outcome {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    reader
        .object_fields(keys, &mut take)
        .unwrap_or(Outcome::NotObject)
}

/// Read the values of the top-level fields `keys` of `text` into `fields`,
/// one slot per key, each `undefined` until read, filled in place (a
/// `Fields` moved is a 136-byte copy); whether the text is a JSON object.
pub(crate) fn field_values_into<'a>(text: &'a str, keys: &[&str], fields: &mut Fields<'a>) -> bool {
    fields.clear();
    for _ in keys {
        fields.push(JsValue::Undefined);
    }
    let outcome = read_fields(text, keys, |slot, value| {
        if let Some(field) = fields.get_mut(slot) {
            *field = value;
        }
        false
    });
    outcome == Outcome::Object
}

/// [`field_values_into`] fresh slots; `None` when the text is not a JSON
/// object.
#[cfg(test)]
pub(crate) fn field_values<'a>(text: &'a str, keys: &[&str]) -> Option<Fields<'a>> {
    let mut fields = Fields::new();
    field_values_into(text, keys, &mut fields).then_some(fields)
}

/// Whether `text` is one valid JSON document (of any type), by the same
/// grammar [`read_fields`] applies.
#[cfg(test)]
pub(crate) fn is_valid_json(text: &str) -> bool {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    reader.skip_value().is_some() && {
        reader.space();
        reader.at == reader.bytes.len()
    }
}

/// A string token: the text between the quotes, and whether it holds escapes.
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    escaped: bool,
}

/// A container being built.
enum Frame<'a> {
    Array(Vec<JsValue<'a>>),
    Object(Members<'a>),
}

/// An object being built: members in first-written order, the key waiting
/// for its value, and (past a few members) an index for repeated keys.
struct Members<'a> {
    members: Vec<(Cow<'a, str>, JsValue<'a>)>,
    pending: Cow<'a, str>,
    index: Option<HashMap<Cow<'a, str>, usize>>,
}

/// Past this many members, repeated keys are found by hashing.
const LINEAR_MEMBERS: usize = 16;

impl<'a> Members<'a> {
    fn new(first_key: Cow<'a, str>) -> Self {
        Members {
            members: Vec::new(),
            pending: first_key,
            index: None,
        }
    }

    /// Set the pending key to `value`: a repeated key keeps its position and
    /// takes the new value, as `JSON.parse` does.
    fn settle(&mut self, value: JsValue<'a>) {
        let key = std::mem::take(&mut self.pending);
        let existing = match &mut self.index {
            Some(index) => index.get(&key).copied(),
            None => self.members.iter().position(|(known, _)| *known == key),
        };
        if let Some(at) = existing {
            self.members[at].1 = value;
            return;
        }
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), self.members.len());
        } else if self.members.len() == LINEAR_MEMBERS {
            let mut index: HashMap<Cow<'a, str>, usize> = self
                .members
                .iter()
                .enumerate()
                .map(|(at, (known, _))| (known.clone(), at))
                .collect();
            index.insert(key.clone(), self.members.len());
            self.index = Some(index);
        }
        self.members.push((key, value));
    }
}

/// The cursor over one text. The token scanners called from more than one
/// place (`key_span`, `string_span`, `number_span`) are always inlined: the
/// cursor then stays in a register through the reading loop instead of being
/// stored and reloaded around every call (a fifth fewer instructions per W1
/// result under callgrind).
struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

/// Eight copies of a byte.
const fn splat(byte: u8) -> u64 {
    u64::from_ne_bytes([byte; 8])
}

/// Whether a byte ends the plain run through a string.
fn is_string_stop(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || byte < 0x20
}

/// A mask with the high bit set in each byte of `chunk` (little-endian) that
/// is `"`, `\` or a control character: the bytes that end the fast run
/// through a string. Borrows can set bits above a true stop, never below one,
/// so the lowest set bit marks the first stop exactly.
fn string_stops(chunk: u64) -> u64 {
    const LOW: u64 = splat(0x01);
    const HIGH: u64 = splat(0x80);
    let quote = chunk ^ splat(b'"');
    let backslash = chunk ^ splat(b'\\');
    let zero_in = |v: u64| v.wrapping_sub(LOW) & !v & HIGH;
    let below_space = chunk.wrapping_sub(splat(0x20)) & !chunk & HIGH;
    zero_in(quote) | zero_in(backslash) | below_space
}

/// Whether `bytes` hold a `\\`: eight bytes a step, with no branch per
/// step (a fold the compiler can widen).
fn holds_backslash(bytes: &[u8]) -> bool {
    const LOW: u64 = splat(0x01);
    const HIGH: u64 = splat(0x80);
    let (words, tail) = bytes.as_chunks::<8>();
    let found = words.iter().fold(0, |found, word| {
        let v = u64::from_le_bytes(*word) ^ splat(b'\\');
        found | (v.wrapping_sub(LOW) & !v & HIGH)
    });
    found != 0 || tail.contains(&b'\\')
}

impl<'a> Reader<'a> {
    /// The top-level object, its wanted fields handed over (see
    /// [`read_fields`]); `None` when the text is not a JSON object.
    fn object_fields(
        &mut self,
        keys: &[&str],
        take: &mut impl FnMut(usize, JsValue<'a>) -> bool,
    ) -> Option<Outcome> {
        self.space();
        self.expect(b'{')?;
        self.space();
        if !self.eat(b'}') {
            loop {
                self.space();
                let key = self.key_span()?;
                self.space();
                self.expect(b':')?;
                match self.slot_of(key, keys) {
                    Some(slot) => {
                        let value = self.value()?;
                        if take(slot, value) && !self.key_written_later(keys[slot]) {
                            return Some(Outcome::Decided);
                        }
                    }
                    None => self.skip_value()?,
                }
                self.space();
                match self.next()? {
                    b',' => {}
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        self.space();
        (self.at == self.bytes.len()).then_some(Outcome::Object)
    }

    /// Whether `key` may be written again as a key after the cursor. Only
    /// the bytes are searched, nothing is parsed: a key written again shows
    /// its own text, or, spelt with an escape, a backslash. Finding either
    /// anywhere (in a value too) answers `true`, which costs only the early
    /// stop.
    fn key_written_later(&self, key: &str) -> bool {
        let rest = self.text.get(self.at..).unwrap_or_default();
        holds_backslash(rest.as_bytes()) || rest.contains(key)
    }

    /// Move past JSON white space. Compact JSON has none, so the one test
    /// that almost always fails is inlined where a token may follow, and the
    /// loop is called only when there is white space to pass.
    #[inline(always)]
    fn space(&mut self) {
        if self.bytes.get(self.at).is_some_and(|&byte| byte <= b' ') {
            self.more_space();
        }
    }

    fn more_space(&mut self) {
        // JSON white space as a bit set: one test per byte, no jump table.
        const SPACE: u64 = 1 << b' ' | 1 << b'\t' | 1 << b'\n' | 1 << b'\r';
        while let Some(&byte) = self.bytes.get(self.at) {
            if byte > b' ' || SPACE & (1 << byte) == 0 {
                break;
            }
            self.at += 1;
        }
    }

    fn next(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.bytes.get(self.at) == Some(&byte);
        if hit {
            self.at += 1;
        }
        hit
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.eat(byte).then_some(())
    }

    fn literal(&mut self, rest: &[u8]) -> Option<()> {
        let end = self.at + rest.len();
        (self.bytes.get(self.at..end) == Some(rest)).then(|| self.at = end)
    }

    /// A key: `"…"` at the cursor.
    #[inline(always)]
    fn key_span(&mut self) -> Option<Span> {
        self.expect(b'"')?;
        self.string_span()
    }

    /// The rest of a string whose opening quote was consumed.
    #[inline(always)]
    fn string_span(&mut self) -> Option<Span> {
        let start = self.at;
        let mut escaped = false;
        loop {
            self.skip_to_string_stop();
            match self.next()? {
                b'"' => {
                    return Some(Span {
                        start,
                        end: self.at - 1,
                        escaped,
                    });
                }
                b'\\' => {
                    escaped = true;
                    match self.next()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            let hex = self.bytes.get(self.at..self.at + 4)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.at += 4;
                        }
                        _ => return None,
                    }
                }
                byte if byte < 0x20 => return None,
                _ => {}
            }
        }
    }

    /// Move to the next `"`, `\\` or control byte (or the end): eight bytes
    /// a step, then byte by byte through the tail.
    fn skip_to_string_stop(&mut self) {
        while let Some(word) = self.bytes.get(self.at..).and_then(<[u8]>::first_chunk) {
            let stops = string_stops(u64::from_le_bytes(*word));
            if stops != 0 {
                self.at += (stops.trailing_zeros() / 8) as usize;
                return;
            }
            self.at += 8;
        }
        while self
            .bytes
            .get(self.at)
            .is_some_and(|byte| !is_string_stop(*byte))
        {
            self.at += 1;
        }
    }

    /// The text of a string token, unescaped only when it has escapes.
    fn string_text(&self, span: Span) -> Cow<'a, str> {
        let raw = &self.text[span.start..span.end];
        if span.escaped {
            Cow::Owned(unescape(raw))
        } else {
            Cow::Borrowed(raw)
        }
    }

    /// Which wanted key this is, if any.
    #[inline(always)]
    fn slot_of(&self, span: Span, keys: &[&str]) -> Option<usize> {
        if span.escaped {
            let key = self.string_text(span);
            keys.iter().position(|wanted| *wanted == key)
        } else {
            let raw = &self.bytes[span.start..span.end];
            keys.iter().position(|wanted| wanted.as_bytes() == raw)
        }
    }

    /// A number whose first byte is at the cursor; returns its bytes (a
    /// byte slice: a `str` slice would check its ends for char boundaries,
    /// which a number's ASCII cannot split).
    #[inline(always)]
    fn number_span(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        self.eat(b'-');
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.eat(b'.') {
            self.some_digits()?;
        }
        if matches!(self.bytes.get(self.at), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.bytes.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.some_digits()?;
        }
        self.bytes.get(start..self.at)
    }

    fn digits(&mut self) {
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }

    /// Validate one value and move past it, building nothing. A string or a
    /// number (most members of a tool result) is passed over here; anything
    /// else by [`Reader::skip_any`].
    #[inline(always)]
    fn skip_value(&mut self) -> Option<()> {
        self.space();
        match self.bytes.get(self.at) {
            Some(b'"') => {
                self.at += 1;
                self.string_span().map(|_| ())
            }
            Some(b'-' | b'0'..=b'9') => self.number_span().map(|_| ()),
            _ => self.skip_any(),
        }
    }

    /// [`Reader::skip_value`] for any value, containers included.
    fn skip_any(&mut self) -> Option<()> {
        // The innermost open container's kind is kept in a register
        // (`true`: an object); the kinds of those around it wait on `outer`,
        // touched only when a container opens or closes.
        let mut outer: SmallVec<[bool; 32]> = SmallVec::new();
        let mut depth = 0usize;
        let mut in_object = false;
        'value: loop {
            self.space();
            match self.next()? {
                open @ (b'{' | b'[') => {
                    let object = open == b'{';
                    self.space();
                    if !self.eat(if object { b'}' } else { b']' }) {
                        if object {
                            self.member_key()?;
                        }
                        if depth > 0 {
                            outer.push(in_object);
                        }
                        depth += 1;
                        in_object = object;
                        continue 'value;
                    }
                }
                b'"' => {
                    self.string_span()?;
                }
                b't' => self.literal(b"rue")?,
                b'f' => self.literal(b"alse")?,
                b'n' => self.literal(b"ull")?,
                b'-' | b'0'..=b'9' => {
                    self.at -= 1;
                    self.number_span()?;
                }
                _ => return None,
            }
            // A value ended: close what it completes.
            while depth > 0 {
                self.space();
                match (self.next()?, in_object) {
                    (b',', false) => continue 'value,
                    (b',', true) => {
                        self.space();
                        self.member_key()?;
                        continue 'value;
                    }
                    (b']', false) | (b'}', true) => {
                        depth -= 1;
                        in_object = depth > 0 && outer.pop()?;
                    }
                    _ => return None,
                }
            }
            return Some(());
        }
    }

    /// A member's key and its colon, the cursor on the key's opening quote.
    #[inline(always)]
    fn member_key(&mut self) -> Option<()> {
        self.key_span()?;
        self.space();
        self.expect(b':')
    }

    /// Validate one value and build it. A string or a number is read here;
    /// anything else by [`Reader::any_value`].
    #[inline(always)]
    fn value(&mut self) -> Option<JsValue<'a>> {
        self.space();
        match self.bytes.get(self.at) {
            Some(b'"') => {
                self.at += 1;
                let span = self.string_span()?;
                Some(JsValue::Str(self.string_text(span)))
            }
            Some(b'-' | b'0'..=b'9') => Some(JsValue::Number(json_number(self.number_span()?)?)),
            _ => self.any_value(),
        }
    }

    /// [`Reader::value`] for any value. Containers are kept on a stack of
    /// their own, never the call stack.
    fn any_value(&mut self) -> Option<JsValue<'a>> {
        let mut open: Vec<Frame<'a>> = Vec::new();
        loop {
            let Some(mut done) = self.value_start(&mut open)? else {
                continue;
            };
            // A value ended: hand it to its container, closing what it completes.
            loop {
                let Some(frame) = open.last_mut() else {
                    return Some(done);
                };
                if self.hand_over(frame, done)? {
                    break;
                }
                done = open.pop()?.close();
            }
        }
    }

    /// Read the start of a value: a whole scalar or empty container
    /// (`Some(Some(value))`), or a container that now waits on `open` for its
    /// first member (`Some(None)`).
    fn value_start(&mut self, open: &mut Vec<Frame<'a>>) -> Option<Option<JsValue<'a>>> {
        self.space();
        Some(Some(match self.next()? {
            b'{' => {
                self.space();
                if self.eat(b'}') {
                    JsValue::Object(JsMembers::default())
                } else {
                    let key = self.key_span()?;
                    self.space();
                    self.expect(b':')?;
                    open.push(Frame::Object(Members::new(self.string_text(key))));
                    return Some(None);
                }
            }
            b'[' => {
                self.space();
                if self.eat(b']') {
                    JsValue::Array(Items::default())
                } else {
                    open.push(Frame::Array(Vec::new()));
                    return Some(None);
                }
            }
            b'"' => {
                let span = self.string_span()?;
                JsValue::Str(self.string_text(span))
            }
            b't' => self.literal(b"rue").map(|()| JsValue::Bool(true))?,
            b'f' => self.literal(b"alse").map(|()| JsValue::Bool(false))?,
            b'n' => self.literal(b"ull").map(|()| JsValue::Null)?,
            b'-' | b'0'..=b'9' => {
                self.at -= 1;
                JsValue::Number(json_number(self.number_span()?)?)
            }
            _ => return None,
        }))
    }

    /// Give a finished value to the container it belongs to, and read what
    /// follows: `Some(true)` when another member comes (its key read, for an
    /// object), `Some(false)` when the container closed.
    fn hand_over(&mut self, frame: &mut Frame<'a>, done: JsValue<'a>) -> Option<bool> {
        self.space();
        match frame {
            Frame::Array(items) => {
                items.push(done);
                match self.next()? {
                    b',' => Some(true),
                    b']' => Some(false),
                    _ => None,
                }
            }
            Frame::Object(members) => {
                members.settle(done);
                match self.next()? {
                    b',' => {
                        self.space();
                        let key = self.key_span()?;
                        members.pending = self.string_text(key);
                        self.space();
                        self.expect(b':')?;
                        Some(true)
                    }
                    b'}' => Some(false),
                    _ => None,
                }
            }
        }
    }
}

impl<'a> Frame<'a> {
    /// The finished container.
    fn close(self) -> JsValue<'a> {
        match self {
            Frame::Array(items) => JsValue::Array(Items(items)),
            Frame::Object(members) => JsValue::Object(JsMembers(members.members)),
        }
    }
}

/// A JSON number token (grammar already checked) as a double, correctly
/// rounded. Plain decimals of at most fifteen characters take the exact path
/// (an integer below 2^53 divided by an exact power of ten rounds once;
/// `-0` stays negative); everything else, exponents and `1e400` (infinity)
/// included, goes through Rust's correctly rounded parser.
fn json_number(bytes: &[u8]) -> Option<f64> {
    const POWERS: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let (negative, unsigned) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    // Fifteen characters hold at most fifteen digits: below 2^53.
    if unsigned.len() <= 15 {
        let mut mantissa: u64 = 0;
        let mut decimals: Option<usize> = None;
        let mut plain = true;
        for (at, byte) in unsigned.iter().enumerate() {
            match byte {
                b'0'..=b'9' => mantissa = mantissa * 10 + u64::from(byte - b'0'),
                b'.' => decimals = Some(unsigned.len() - at - 1),
                _ => {
                    plain = false;
                    break;
                }
            }
        }
        if plain {
            // At most 15 digits: exact in a double.
            #[allow(clippy::cast_precision_loss)]
            let exact = mantissa as f64;
            let magnitude = exact / POWERS[decimals.unwrap_or(0)];
            return Some(if negative { -magnitude } else { magnitude });
        }
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

/// The text of an escaped string token (already validated).
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let bytes = rest.as_bytes();
        let Some(&kind) = bytes.get(at + 1) else {
            break;
        };
        rest = &rest[at + 2..];
        match kind {
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let unit = hex4(rest);
                rest = rest.get(4..).unwrap_or("");
                if (0xD800..0xDC00).contains(&unit) {
                    let trail = rest.strip_prefix("\\u").map(hex4);
                    if let Some(trail @ 0xDC00..=0xDFFF) = trail {
                        let code = 0x10000 + ((unit - 0xD800) << 10) + (trail - 0xDC00);
                        out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        rest = rest.get(6..).unwrap_or("");
                        continue;
                    }
                }
                out.push(char::from_u32(unit).unwrap_or('\u{fffd}'));
            }
            other => out.push(char::from(other)),
        }
    }
    out.push_str(rest);
    out
}

/// Four hex digits (validated by the reader) as a number.
fn hex4(text: &str) -> u32 {
    text.get(..4)
        .and_then(|hex| u32::from_str_radix(hex, 16).ok())
        .unwrap_or(0xFFFD)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js_value::summarize;

    fn keys<'n>(names: &[&'n str]) -> Vec<&'n str> {
        names.to_vec()
    }

    fn summaries(text: &str, names: &[&str]) -> Option<Vec<String>> {
        field_values(text, &keys(names)).map(|fields| {
            fields
                .iter()
                .map(|value| summarize(value).into_owned())
                .collect()
        })
    }

    #[test]
    fn reads_named_fields_only() {
        let text = r#" {"orderId":4412,"riskLevel":"high","score":0.8,"customer":{"tier":"gold","history":[1,2]},"note":"xx"} "#;
        assert_eq!(
            summaries(text, &["riskLevel", "score", "missing", "customer"]).unwrap(),
            [
                "high",
                "0.8",
                "undefined",
                r#"{"tier":"gold","history":[1,2]}"#
            ]
        );
    }

    #[test]
    fn non_objects_and_invalid_text_read_nothing() {
        for text in [
            "[1]",
            "3",
            "\"s\"",
            "null",
            "",
            "{not json",
            r#"{"a":1,}"#,
            r#"{"a":1} x"#,
            r#"{"a":01}"#,
            r#"{"a":"\x"}"#,
            "{\"a\":\"\u{1}\"}",
            r#"{"a":1.}"#,
            r#"{"a":-}"#,
            r#"{"a" 1}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":tru}"#,
            r#"{"a":"\u12"}"#,
            r#"{,}"#,
        ] {
            assert_eq!(summaries(text, &["a"]), None, "{text:?}");
        }
    }

    #[test]
    fn a_settled_field_stops_the_read_unless_its_key_may_come_again() {
        let outcome = |text: &str| {
            let settles = |_, value: JsValue<'_>| matches!(value, JsValue::Number(n) if n == 1.0);
            read_fields(text, &["a"], settles)
        };
        // The rest is never validated: an early stop is the point.
        assert_eq!(
            outcome(r#"{"a":1,"b":[1,{"c":2}],"d":tru"#),
            Outcome::Decided
        );
        assert_eq!(outcome(r#"{"a":1,"b":2,"a":3}"#), Outcome::Object);
        assert_eq!(outcome(r#"{"a":3,"b":2,"a":1,"c":[}"#), Outcome::Decided);
        assert_eq!(outcome(r#"{"a":1,"b":"a"}"#), Outcome::Object);
        assert_eq!(outcome(r#"{"a":1,"\u0061":3}"#), Outcome::Object);
        assert_eq!(outcome(r#"{"a":1"#), Outcome::Decided);
        assert_eq!(outcome(r#"{"a":2"#), Outcome::NotObject);
        assert_eq!(outcome(r#"{"b":1}"#), Outcome::Object);
    }

    #[test]
    fn duplicate_keys_keep_the_last_value() {
        assert_eq!(summaries(r#"{"a":1,"b":2,"a":3}"#, &["a"]).unwrap(), ["3"]);
        assert_eq!(
            summaries(r#"{"o":{"x":1,"y":2,"x":3}}"#, &["o"]).unwrap(),
            [r#"{"x":3,"y":2}"#]
        );
    }

    #[test]
    fn many_members_with_repeats_stay_in_first_position() {
        let mut text = String::from("{\"o\":{");
        for i in 0..40 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k3\":\"last\"}}");
        let fields = field_values(&text, &keys(&["o"])).unwrap();
        let JsValue::Object(members) = &fields[0] else {
            panic!("not an object")
        };
        assert_eq!(members.len(), 40);
        assert!(matches!(&members[3].1, JsValue::Str(s) if s == "last"));
    }

    #[test]
    fn the_exact_number_path_agrees_with_the_parser() {
        for text in [
            "0",
            "0.8",
            "4412",
            "0.1",
            "123.456",
            "999999999999999",
            "9999999999999999",
            "0.0000000000001",
            "9999999.9999999",
            "-0.5",
            "1e5",
            "-0",
            "-0.0",
        ] {
            let parsed: f64 = text.parse().unwrap();
            let fast = json_number(text.as_bytes()).unwrap();
            assert!(
                fast == parsed && fast.is_sign_negative() == parsed.is_sign_negative(),
                "{text}: {fast} vs {parsed}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn plain_decimals_read_exactly(integer in 0u64..1_000_000_000, fraction in 0u64..1_000_000, width in 1usize..7, negative: bool) {
            let text = format!("{}{integer}.{fraction:0width$}", if negative { "-" } else { "" });
            let parsed: f64 = text.parse().unwrap();
            proptest::prop_assert_eq!(json_number(text.as_bytes()), Some(parsed));
        }
    }

    #[test]
    fn numbers_follow_javascript() {
        assert_eq!(
            summaries(
                r#"{"a":1e400,"b":-0,"c":5.0,"d":1E-7}"#,
                &["a", "b", "c", "d"]
            )
            .unwrap(),
            ["Infinity", "0", "5", "1e-7"]
        );
        let fields = field_values(r#"{"b":-0}"#, &keys(&["b"])).unwrap();
        assert!(matches!(fields[0], JsValue::Number(n) if n == 0.0 && n.is_sign_negative()));
    }

    #[test]
    fn escapes_in_keys_and_values_are_decoded() {
        let text = r#"{"risk\u004cevel":"a\"b\\c\/\n\u00e9\ud83d\ude00\ud800x"}"#;
        assert_eq!(
            summaries(text, &["riskLevel"]).unwrap(),
            ["a\"b\\c/\né\u{1f600}\u{fffd}x"]
        );
    }

    #[test]
    fn index_like_keys_print_first() {
        assert_eq!(
            summaries(r#"{"o":{"b":1,"10":2,"2":3}}"#, &["o"]).unwrap(),
            [r#"{"2":3,"10":2,"b":1}"#]
        );
    }

    #[test]
    fn deep_nesting_uses_no_call_stack() {
        let depth = 1_000_000;
        let text = format!("{{\"a\":{}1{}}}", "[".repeat(depth), "]".repeat(depth));
        let fields = field_values(&text, &keys(&["a"])).unwrap();
        assert!(summarize(&fields[0]).starts_with("[[[["));
        let skipped = format!("{{\"b\":{}1{}}}", "[".repeat(depth), "]".repeat(depth));
        assert!(field_values(&skipped, &keys(&["a"])).is_some());
        let unclosed = format!("{{\"a\":{}1}}", "{\"x\":".repeat(depth));
        assert!(field_values(&unclosed, &keys(&["a"])).is_none());
    }

    #[test]
    fn agrees_with_serde_json_on_validity() {
        for text in [
            "{}",
            "[]",
            " [1, {\"a\": [true, false, null]}, \"s\", -1.5e+3] ",
            "[1 2]",
            "{\"a\":1}}",
            "\"\\ud800\"",
            "0.0e0",
            "-",
            "[.5]",
            "[\"\t\"]",
        ] {
            // serde_json rejects lone surrogates, which JSON.parse accepts.
            let serde = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
                || text.contains("\\ud800");
            assert_eq!(is_valid_json(text), serde, "{text:?}");
        }
    }

    #[test]
    fn the_fast_string_scan_finds_the_first_stop() {
        for stop in [b'"', b'\\', 0x00, 0x1f] {
            for at in 0..8 {
                let mut chunk = [b'a'; 8];
                chunk[at] = stop;
                // A second stop after the first must not hide it.
                if at < 7 {
                    chunk[7] = 0x00;
                }
                let stops = string_stops(u64::from_le_bytes(chunk));
                assert_eq!(stops.trailing_zeros() / 8, at as u32, "{chunk:?}");
            }
        }
        assert_eq!(string_stops(u64::from_le_bytes(*b"abc \x7f\xff\x20~")), 0);
        assert_eq!(
            string_stops(u64::from_le_bytes([
                0x21, 0x01, 0x22, 0, 0x5c, 0x80, 0x1f, 0x5b
            ]))
            .trailing_zeros()
                / 8,
            1
        );
    }
}
