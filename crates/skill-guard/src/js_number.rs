//! JavaScript numbers: `Number(string)` and `String(number)`, exactly.

use std::fmt::Write;

use skill_core::exact_integer;

/// JavaScript's `Number(s)` for a string.
///
/// Leading and trailing JavaScript white space is ignored; an empty string is
/// `0`; a decimal literal with optional sign, leading or trailing point and
/// exponent is read correctly rounded; `Infinity` takes a sign; `0x`, `0o`,
/// `0b` integers take none; anything else is NaN.
pub fn from_js_string(text: &str) -> f64 {
    let text = text.trim_matches(is_js_space);
    if text.is_empty() {
        return 0.0;
    }
    let bytes = text.as_bytes();
    if bytes.len() > 2 && bytes[0] == b'0' {
        let radix = match bytes[1] {
            b'x' | b'X' => Some(16),
            b'o' | b'O' => Some(8),
            b'b' | b'B' => Some(2),
            _ => None,
        };
        if let Some(radix) = radix {
            return radix_integer(&text[2..], radix);
        }
    }
    let (negative, unsigned) = match bytes[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = if unsigned == "Infinity" {
        f64::INFINITY
    } else if is_unsigned_decimal(unsigned) {
        // The grammar was checked above, and every string it admits is one
        // Rust's correctly rounded parser reads; NaN marks the impossible.
        unsigned.parse::<f64>().unwrap_or(f64::NAN)
    } else {
        return f64::NAN;
    };
    if negative { -magnitude } else { magnitude }
}

/// JavaScript's white space and line terminators, as `String.prototype.trim`
/// and `Number` strip them (U+0085 is not one; U+FEFF is).
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// `digits [. digits] [exp]`, `. digits [exp]`, `digits . [exp]`.
fn is_unsigned_decimal(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    let int_digits = count_digits(&bytes[at..]);
    at += int_digits;
    let mut frac_digits = 0;
    if bytes.get(at) == Some(&b'.') {
        at += 1;
        frac_digits = count_digits(&bytes[at..]);
        at += frac_digits;
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let exp_digits = count_digits(&bytes[at..]);
        if exp_digits == 0 {
            return false;
        }
        at += exp_digits;
    }
    at == bytes.len()
}

fn count_digits(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_digit()).count()
}

/// An unsigned integer in base 2, 8 or 16, correctly rounded to a double.
fn radix_integer(digits: &str, radix: u32) -> f64 {
    if digits.is_empty() {
        return f64::NAN;
    }
    let bits_per_digit = radix.trailing_zeros();
    let mut mantissa: u64 = 0;
    let mut shift: i32 = 0;
    let mut sticky = false;
    for c in digits.chars() {
        let Some(digit) = c.to_digit(radix) else {
            return f64::NAN;
        };
        if mantissa.leading_zeros() >= bits_per_digit {
            mantissa = (mantissa << bits_per_digit) | u64::from(digit);
        } else {
            // Past 64 significant bits only the scale and a sticky bit
            // matter for rounding.
            shift += i32::try_from(bits_per_digit).unwrap_or(4);
            sticky |= digit != 0;
        }
    }
    if sticky {
        // The mantissa is full (64 bits), so its lowest bit sits below the
        // rounding point of a 53-bit double: setting it breaks a false tie.
        mantissa |= 1;
    }
    // Rounds to nearest, ties to even; then an exact power-of-two scale.
    #[allow(clippy::cast_precision_loss)]
    let rounded = mantissa as f64;
    rounded * 2f64.powi(shift)
}

/// JavaScript's `String(n)` for a number: the shortest digits that read back
/// to `n`, laid out in decimal for `1e-7 <= |n| < 1e21` and in exponent form
/// (`1e+21`, `1.5e-7`) otherwise; `-0` prints as `0`.
pub fn to_js_string(n: f64) -> String {
    // The longest is 25 bytes: `-0.0000012345678901234567`.
    let mut out = String::with_capacity(25);
    write_js_number(&mut out, n);
    out
}

/// [`to_js_string`], appended to `out`.
pub(crate) fn write_js_number(out: &mut String, n: f64) {
    if n.is_nan() {
        out.push_str("NaN");
        return;
    }
    if n == 0.0 {
        out.push('0');
        return;
    }
    if n.is_infinite() {
        out.push_str(if n > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if let Some(int) = exact_integer(n) {
        // An integer a double holds exactly: its digits are its shortest form.
        let _ = write!(out, "{int}");
        return;
    }
    if write_few_decimals(out, n) {
        return;
    }
    if (1e-6..1e21).contains(&n.abs()) {
        // In this range JavaScript lays the shortest round-trip digits out in
        // plain decimal, exactly as Rust's `Display` does.
        let _ = write!(out, "{n}");
        return;
    }
    write_from_exponent_form(out, n);
}

/// Numbers with at most six decimals (`0.8`, `12.25`): when `|n| = m / 10^k`
/// exactly for a small `k` and `m < 2^43`, the digits of `m` are `n`'s
/// shortest form (no shorter string reads back to `n`, and doubles there are
/// far closer together than `10^-k`, so no other `k`-decimal string does
/// either). Written without the float formatter; `false` when `n` is not such
/// a number.
fn write_few_decimals(out: &mut String, n: f64) -> bool {
    const MAX_DIGITS: f64 = 8_796_093_022_208.0; // 2^43
    let magnitude = n.abs();
    if magnitude.fract() == 0.0 {
        return false;
    }
    let mut scale = 10.0;
    for decimals in 1..=6usize {
        let m = (magnitude * scale).round();
        if m >= MAX_DIGITS {
            return false;
        }
        if m / scale == magnitude {
            if n < 0.0 {
                out.push('-');
            }
            // Exact: m is an integer below 2^43.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let mut rest = m as u64;
            let mut buffer = [0u8; 20];
            let mut start = buffer.len();
            loop {
                start -= 1;
                // A remainder of 10 is one digit.
                #[allow(clippy::cast_possible_truncation)]
                let digit = (rest % 10) as u8;
                buffer[start] = b'0' + digit;
                rest /= 10;
                if rest == 0 {
                    break;
                }
            }
            let digits = &buffer[start..];
            let point = digits.len().saturating_sub(decimals);
            if point == 0 {
                out.push_str("0.");
                out.extend(std::iter::repeat_n('0', decimals - digits.len()));
            } else {
                out.extend(digits[..point].iter().map(|&b| char::from(b)));
                out.push('.');
            }
            out.extend(digits[point..].iter().map(|&b| char::from(b)));
            return true;
        }
        scale *= 10.0;
    }
    false
}

/// The general layout: the shortest digits from Rust's `{:e}`, placed by
/// JavaScript's rules. `n` is finite and not zero.
fn write_from_exponent_form(out: &mut String, n: f64) {
    if n < 0.0 {
        out.push('-');
    }
    // Rust's `{:e}` prints the shortest round-trip digits as `d.ddde±x`.
    let exp_form = format!("{:e}", n.abs());
    let (mantissa, exponent) = exp_form.split_once('e').unwrap_or((&exp_form, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    // JavaScript's `n`: the position of the decimal point.
    let point = exponent.parse::<i32>().unwrap_or(0) + 1;
    if k <= point && point <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n(
            '0',
            usize::try_from(point - k).unwrap_or(0),
        ));
    } else if 0 < point && point <= 21 {
        let split = usize::try_from(point).unwrap_or(0);
        out.push_str(&digits[..split]);
        out.push('.');
        out.push_str(&digits[split..]);
    } else if -6 < point && point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n(
            '0',
            usize::try_from(-point).unwrap_or(0),
        ));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(
            out,
            "e{}{}",
            if point > 0 { '+' } else { '-' },
            (point - 1).abs()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_javascript() {
        let cases: [(f64, &str); 18] = [
            (3.0, "3"),
            (0.9, "0.9"),
            (-0.0, "0"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (123.456, "123.456"),
            (-2.5, "-2.5"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
            (2f64.powi(60), "1152921504606847000"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (-1e-7, "-1e-7"),
        ];
        for (n, text) in cases {
            assert_eq!(to_js_string(n), text, "{n:?}");
        }
    }

    #[test]
    fn reads_like_javascript() {
        let cases: [(&str, f64); 22] = [
            ("", 0.0),
            ("  \n\t ", 0.0),
            ("5", 5.0),
            (" 5 ", 5.0),
            ("\u{a0}5\u{feff}", 5.0),
            ("-5.", -5.0),
            (".5", 0.5),
            ("+.5e1", 5.0),
            ("1e400", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
            ("0x1F", 31.0),
            ("0B101", 5.0),
            ("0o17", 15.0),
            ("00012", 12.0),
            ("1_0", f64::NAN),
            ("inf", f64::NAN),
            ("infinity", f64::NAN),
            ("NaN", f64::NAN),
            ("-0x1", f64::NAN),
            ("0x", f64::NAN),
            (".", f64::NAN),
            ("1e", f64::NAN),
        ];
        for (text, n) in cases {
            let got = from_js_string(text);
            assert!(
                got == n || (got.is_nan() && n.is_nan()),
                "{text:?}: {got} != {n}"
            );
        }
        assert!(from_js_string("-0").is_sign_negative());
        assert!(
            from_js_string("\u{85}5").is_nan(),
            "U+0085 is not JavaScript white space"
        );
    }

    proptest::proptest! {
        #[test]
        fn plain_decimal_agrees_with_the_general_layout(n in proptest::num::f64::NORMAL, scale in -6i32..21) {
            let n = n.abs() / 10f64.powi(n.abs().log10().floor() as i32) * 10f64.powi(scale);
            proptest::prop_assume!((1e-6..1e21).contains(&n));
            let mut general = String::new();
            write_from_exponent_form(&mut general, n);
            proptest::prop_assert_eq!(format!("{n}"), general);
        }
    }

    proptest::proptest! {
        #[test]
        fn few_decimals_print_as_display_does(m in 1u64..8_796_093_022_208, decimals in 1u32..=6, negative: bool) {
            let n = m as f64 / 10f64.powi(decimals as i32) * if negative { -1.0 } else { 1.0 };
            let mut fast = String::new();
            if write_few_decimals(&mut fast, n) {
                proptest::prop_assert_eq!(fast, format!("{n}"));
            }
        }
    }

    #[test]
    fn long_hex_rounds_to_nearest_even() {
        // 2^64 + 2^11 + 1 is above the halfway point between two doubles.
        assert_eq!(
            from_js_string("0x10000000000000801"),
            18446744073709555712.0
        );
        // Exactly halfway rounds to even (down).
        assert_eq!(
            from_js_string("0x10000000000000800"),
            18446744073709551616.0
        );
        assert_eq!(from_js_string("0x1fffffffffffff"), 9007199254740991.0);
    }
}
