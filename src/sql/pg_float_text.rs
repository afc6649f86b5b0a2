//! Floats in PostgreSQL's text form (12 and later, `extra_float_digits` > 0): the
//! shortest text that reads back to the same value, laid out as PostgreSQL lays it
//! out (`2`, `0.1`, `1e+20`, `Infinity`). Results are written with it, and so are a
//! float's casts to text inside queries, where Arrow would print `2.0` and `1e20`.

use bytes::{BufMut, BytesMut};

/// A float's text, as [`put_float_text`] writes it.
pub fn float_text(value: f64, single: bool) -> String {
    let mut out = BytesMut::new();
    put_float_text(&mut out, value, single);
    String::from_utf8_lossy(&out).into_owned()
}

/// Appends a float as PostgreSQL 12+ prints it (`extra_float_digits` > 0): the
/// shortest text that reads back to the same value, in fixed notation for decimal
/// exponents in [-4, 15) (float8) or [-4, 6) (float4), otherwise as `1.5e+20`, with
/// `Infinity`, `-Infinity` and `NaN` spelled out.
pub fn put_float_text(out: &mut BytesMut, value: f64, single: bool) {
    if value.is_nan() {
        return out.put_slice(b"NaN");
    }
    if value.is_infinite() {
        return out.put_slice(if value > 0.0 {
            b"Infinity"
        } else {
            b"-Infinity"
        });
    }
    if !single && put_short_decimal(out, value) {
        return;
    }
    // ryu finds the shortest round-trip digits (as PostgreSQL does, with its own copy
    // of Ryū); only the layout differs, so the digits are taken out of ryu's text.
    let mut buffer = ryu::Buffer::new();
    let (text, fixed) = if single {
        let value = value as f32;
        let magnitude = value.abs();
        let fixed = magnitude == 0.0 || (1e-4..1e6).contains(&magnitude);
        (buffer.format_finite(value), fixed)
    } else {
        let magnitude = value.abs();
        let fixed = magnitude == 0.0 || (1e-4..1e15).contains(&magnitude);
        (buffer.format_finite(value), fixed)
    };
    if fixed {
        // Both print these magnitudes in fixed notation, where ryu's text differs from
        // PostgreSQL's only in a trailing ".0" on whole numbers (`100.0`, `-0.0`).
        return out.put_slice(text.strip_suffix(".0").unwrap_or(text).as_bytes());
    }
    put_shortest_laid_out(out, text, single);
}

/// Fractional digits `put_short_decimal` handles.
const SHORT_DECIMALS: u32 = 4;
/// 10^`SHORT_DECIMALS`.
const SHORT_DECIMAL_SCALE: f64 = 1e4;

/// Prints a float8 that is a decimal of at most 15 significant digits and at most
/// `SHORT_DECIMALS` after the point, such as a price in cents, and returns whether it
/// was one; most stored amounts are, and ryu takes a third of the time of a 100-row
/// range read's values. Prints what ryu's shortest digits print:
/// - `units / 10^SHORT_DECIMALS` is checked to be exactly `value`, as reading the
///   text back computes it (both are exact doubles, `units` below 2^53, and the
///   division rounds correctly), so the text reads back to `value`;
/// - it has at most 15 significant digits (DBL_DIG), and two different decimals of at
///   most 15 digits never read back to the same double, so no shorter text does.
///
/// The magnitudes it accepts, from 1e-4 up to 1e11, all print in fixed notation.
pub(crate) fn put_short_decimal(out: &mut BytesMut, value: f64) -> bool {
    let scaled = value * SHORT_DECIMAL_SCALE;
    let exact = scaled == scaled.trunc()
        && scaled != 0.0
        && scaled.abs() < 1e15
        && scaled / SHORT_DECIMAL_SCALE == value;
    if !exact {
        return false;
    }
    // A whole number below 1e15, so the conversion is exact.
    let mut units = scaled.abs() as u64;
    let mut decimals = SHORT_DECIMALS;
    while decimals > 0 && units.is_multiple_of(10) {
        units /= 10;
        decimals -= 1;
    }
    if value < 0.0 {
        out.put_u8(b'-');
    }
    let unit = 10u64.pow(decimals);
    out.put_slice(itoa::Buffer::new().format(units / unit).as_bytes());
    if decimals > 0 {
        out.put_u8(b'.');
        let fraction = units % unit;
        // Zero-padded to `decimals` digits: 0.05 is 5 hundredths.
        for place in (0..decimals).rev() {
            out.put_u8(b'0' + (fraction / 10u64.pow(place) % 10) as u8);
        }
    }
    true
}

/// Lays ryu's `text` out as PostgreSQL does, for any magnitude.
pub(crate) fn put_shortest_laid_out(out: &mut BytesMut, text: &str, single: bool) {
    let (negative, digits, exponent) = shortest_digits(text);
    if negative {
        out.put_u8(b'-');
    }
    let digits = digits.as_slice();
    if digits.is_empty() {
        return out.put_u8(b'0');
    }
    let fixed_limit = if single { 6 } else { 15 };
    if exponent < -4 || exponent >= fixed_limit {
        out.put_u8(digits[0]);
        if digits.len() > 1 {
            out.put_u8(b'.');
            out.put_slice(&digits[1..]);
        }
        out.put_slice(if exponent < 0 { b"e-" } else { b"e+" });
        if exponent.unsigned_abs() < 10 {
            out.put_u8(b'0');
        }
        out.put_slice(
            itoa::Buffer::new()
                .format(exponent.unsigned_abs())
                .as_bytes(),
        );
    } else if exponent >= 0 {
        let int_len = exponent as usize + 1;
        for i in 0..int_len {
            out.put_u8(digits.get(i).copied().unwrap_or(b'0'));
        }
        if digits.len() > int_len {
            out.put_u8(b'.');
            out.put_slice(&digits[int_len..]);
        }
    } else {
        out.put_slice(b"0.");
        for _ in 0..(-exponent - 1) {
            out.put_u8(b'0');
        }
        out.put_slice(digits);
    }
}

/// Significant decimal digits, at most 17 for a double.
struct Digits {
    buf: [u8; 24],
    len: usize,
}

impl Digits {
    fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Splits ryu's text (`-12.5`, `0.00012`, `1.5e-7`, `1e30`) into its sign, its
/// significant digits without leading or trailing zeros (none for zero), and the
/// decimal exponent of the first of them.
fn shortest_digits(text: &str) -> (bool, Digits, i32) {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, power) = match text.split_once('e') {
        Some((m, p)) => (m, p.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits = Digits {
        buf: [0; 24],
        len: 0,
    };
    let mut leading_zeros = 0i32;
    for &d in whole.as_bytes().iter().chain(fraction.as_bytes()) {
        if digits.len == 0 && d == b'0' {
            leading_zeros += 1;
        } else if digits.len < digits.buf.len() {
            digits.buf[digits.len] = d;
            digits.len += 1;
        }
    }
    while digits.len > 0 && digits.buf[digits.len - 1] == b'0' {
        digits.len -= 1;
    }
    let exponent = whole.len() as i32 - leading_zeros - 1 + power;
    (negative, digits, exponent)
}
