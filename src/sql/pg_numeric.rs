//! PostgreSQL's `numeric`: exact decimals that keep the scale they were written with
//! (`1.50` stays `1.50`). Read as `numeric_in` reads text, written as `numeric_out` and
//! `numeric_send` write it, and fitted to a column's `NUMERIC(p,s)` as PostgreSQL fits
//! it: rounded half away from zero to `s` digits, then refused (22003) if it needs more
//! than `p - s` digits before the point. The query engine computes with Arrow's 128-bit
//! decimals, which bounds a declared precision (`MAX_PRECISION`).

use super::sql_error::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use bigdecimal::num_bigint::{BigInt, Sign};
use bigdecimal::{BigDecimal, RoundingMode, ToPrimitive, Zero};
use std::str::FromStr;

/// The most digits a declared `NUMERIC(p,s)` may have. Arrow's `Decimal128` holds 38, and
/// DataFusion sums them without an overflow check: with 28, a sum stays exact over 10^10
/// rows.
pub const MAX_PRECISION: u8 = 28;

/// The largest exponent `numeric_in` reads (`1e1000`); past it PostgreSQL says the
/// text is not a number.
const MAX_EXPONENT: i64 = 1000;

/// A column's `NUMERIC(precision, scale)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NumericTypmod {
    pub precision: u8,
    pub scale: u8,
}

impl NumericTypmod {
    /// The typmod for `NUMERIC(precision[, scale])`, refused where PostgreSQL refuses it
    /// (22023) or where pgwide could not keep it exact (0A000).
    pub fn new(precision: u64, scale: Option<u64>) -> SqlResult<NumericTypmod> {
        let scale = scale.unwrap_or(0);
        if precision == 0 || precision > 1000 {
            return Err(SqlError::new(
                SqlState::InvalidParameterValue,
                format!("NUMERIC precision {precision} must be between 1 and 1000"),
            ));
        }
        if precision > u64::from(MAX_PRECISION) {
            return Err(SqlError::unsupported(format!(
                "NUMERIC({precision},{scale}) is not supported: pgwide computes numerics \
                 exactly in 128 bits, at most {MAX_PRECISION} digits"
            )));
        }
        if scale > precision {
            return Err(SqlError::unsupported(format!(
                "NUMERIC({precision},{scale}) is not supported: a scale larger than the \
                 precision"
            )));
        }
        Ok(NumericTypmod {
            precision: precision as u8,
            scale: scale as u8,
        })
    }

    /// PostgreSQL's `atttypmod` for it: `((precision << 16) | scale) + 4`.
    pub fn atttypmod(self) -> i32 {
        ((i32::from(self.precision) << 16) | i32::from(self.scale)) + 4
    }
}

fn invalid(text: &str) -> SqlError {
    SqlError::new(
        SqlState::InvalidTextRepresentation,
        format!("invalid input syntax for type numeric: \"{text}\""),
    )
}

/// Reads a numeric as `numeric_in` does: blanks around, a sign, digits with at most one
/// point, an exponent. `NaN` and `Infinity` are refused (0A000): the query engine's
/// decimals have neither.
pub fn parse(text: &str) -> SqlResult<BigDecimal> {
    let trimmed = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let unsigned = trimmed.trim_start_matches(['+', '-']);
    if trimmed.len() - unsigned.len() > 1 {
        return Err(invalid(text));
    }
    let special = ["nan", "infinity", "inf"];
    if special.iter().any(|w| unsigned.eq_ignore_ascii_case(w)) {
        return Err(SqlError::unsupported(format!(
            "the numeric value \"{trimmed}\" is not supported: pgwide's numerics are finite"
        )));
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !digits(whole) || !digits(fraction) {
        return Err(invalid(text));
    }
    if let Some(exponent) = exponent {
        let magnitude = exponent.trim_start_matches(['+', '-']);
        let value = match (exponent.len() - magnitude.len(), digits(magnitude)) {
            (0 | 1, true) if !magnitude.is_empty() => magnitude.parse::<i64>().ok(),
            _ => None,
        };
        if value.is_none_or(|v| v > MAX_EXPONENT) {
            return Err(invalid(text));
        }
    }
    bounded(display_scale(
        BigDecimal::from_str(trimmed).map_err(|_| invalid(text))?,
    ))
}

/// `value`, or 22003 past PostgreSQL's bounds: 131072 digits before the point, 16383
/// after (which also keeps `numeric_send`'s 16-bit digit count and weight in range).
pub fn bounded(value: BigDecimal) -> SqlResult<BigDecimal> {
    let scale = value.fractional_digit_count();
    let whole_digits = value.digits() as i64 - scale;
    if whole_digits > 131_072 || scale > 16_383 {
        return Err(SqlError::new(
            SqlState::NumericValueOutOfRange,
            "value overflows numeric format",
        ));
    }
    Ok(value)
}

/// A value with a negative scale (`1e3` is 1 × 10³) given scale 0, as PostgreSQL keeps
/// no fewer than zero digits after the point.
fn display_scale(value: BigDecimal) -> BigDecimal {
    match value.fractional_digit_count() < 0 {
        true => value.with_scale(0),
        false => value,
    }
}

/// A numeric's text, as `numeric_out` writes it: every digit of its scale, no exponent.
pub fn format(value: &BigDecimal) -> String {
    match value.fractional_digit_count() < 0 {
        true => value.with_scale(0).to_plain_string(),
        false => value.to_plain_string(),
    }
}

/// `value` fitted to `typmod`: rounded half away from zero to its scale, 22003 if it
/// then needs more digits before the point than the precision leaves.
pub fn fit(value: &BigDecimal, typmod: NumericTypmod) -> SqlResult<BigDecimal> {
    let rounded = value.with_scale_round(i64::from(typmod.scale), RoundingMode::HalfUp);
    let whole_digits = match rounded.is_zero() {
        true => 0,
        false => rounded.digits() as i64 - i64::from(typmod.scale),
    };
    let allowed = i64::from(typmod.precision) - i64::from(typmod.scale);
    if whole_digits > allowed {
        return Err(SqlError::new(
            SqlState::NumericValueOutOfRange,
            format!(
                "numeric field overflow: a field with precision {}, scale {} must round to \
                 an absolute value less than 10^{allowed}",
                typmod.precision, typmod.scale
            ),
        ));
    }
    Ok(rounded)
}

/// A numeric rounded to an integer, half away from zero, as PostgreSQL casts it;
/// `None` past 64 bits.
pub fn to_i64(value: &BigDecimal) -> Option<i64> {
    value.with_scale_round(0, RoundingMode::HalfUp).to_i64()
}

/// The nearest double to a numeric.
pub fn to_f64(value: &BigDecimal) -> f64 {
    value.to_f64().unwrap_or(f64::NAN)
}

/// A double as a numeric, with the digits of its shortest text (`0.1` is 0.1, as
/// PostgreSQL's `float8::numeric` reads it). `None` for NaN and the infinities.
pub fn from_f64(value: f64) -> Option<BigDecimal> {
    if !value.is_finite() {
        return None;
    }
    let mut buffer = ryu::Buffer::new();
    BigDecimal::from_str(buffer.format_finite(value))
        .ok()
        .map(display_scale)
}

/// The unscaled 128-bit integer of `value` at `scale` digits, for an Arrow
/// `Decimal128`; `None` if it does not fit or would lose digits.
pub fn to_i128(value: &BigDecimal, scale: i8) -> Option<i128> {
    if value.fractional_digit_count() > i64::from(scale) {
        return None;
    }
    let (unscaled, _) = value
        .with_scale(i64::from(scale))
        .into_bigint_and_exponent();
    unscaled.to_i128()
}

/// The numeric an Arrow `Decimal128` value at `scale` is.
pub fn from_i128(unscaled: i128, scale: i8) -> BigDecimal {
    display_scale(BigDecimal::new(BigInt::from(unscaled), i64::from(scale)))
}

/// The numeric whose unscaled digits are `text` (an Arrow `Decimal256` value's), at
/// `scale`; `None` if `text` is not an integer.
pub fn from_unscaled_text(text: &str, scale: i8) -> Option<BigDecimal> {
    let unscaled = BigInt::from_str(text).ok()?;
    Some(display_scale(BigDecimal::new(unscaled, i64::from(scale))))
}

/// `numeric_send`: digit count, weight, sign and display scale, then the digits in
/// base 10 000, each an `int16`, grouped around the point; no leading or trailing zero
/// groups.
pub fn encode_binary(value: &BigDecimal, out: &mut Vec<u8>) {
    let value = display_scale(value.clone());
    let scale = value.fractional_digit_count().max(0) as usize;
    let (unscaled, _) = value.as_bigint_and_exponent();
    let negative = unscaled.sign() == Sign::Minus;
    let text = unscaled.magnitude().to_string();
    // The decimal digits before and after the point.
    let padded = match text.len() <= scale {
        true => format!("{}{text}", "0".repeat(scale + 1 - text.len())),
        false => text,
    };
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    let lead = (4 - whole.len() % 4) % 4;
    let whole = format!("{}{whole}", "0".repeat(lead));
    let trail = (4 - fraction.len() % 4) % 4;
    let fraction = format!("{fraction}{}", "0".repeat(trail));
    let group = |s: &str| -> Vec<i16> {
        s.as_bytes()
            .chunks(4)
            .map(|c| c.iter().fold(0i16, |acc, d| acc * 10 + i16::from(d - b'0')))
            .collect()
    };
    let mut digits = group(&whole);
    let mut weight = digits.len() as i16 - 1;
    digits.extend(group(&fraction));
    let leading_zeros = digits.iter().take_while(|d| **d == 0).count();
    digits.drain(..leading_zeros);
    weight -= leading_zeros as i16;
    while digits.last() == Some(&0) {
        digits.pop();
    }
    if digits.is_empty() {
        weight = 0;
    }
    out.extend_from_slice(&(digits.len() as i16).to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    let sign: u16 = if negative && !digits.is_empty() {
        0x4000
    } else {
        0
    };
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&(scale as u16).to_be_bytes());
    for digit in digits {
        out.extend_from_slice(&digit.to_be_bytes());
    }
}

/// `numeric_recv`: the value `encode_binary`'s layout holds, `None` if the bytes are
/// not one (or are NaN or an infinity).
pub fn decode_binary(raw: &[u8]) -> Option<BigDecimal> {
    let word = |i: usize| -> Option<[u8; 2]> { raw.get(i * 2..i * 2 + 2)?.try_into().ok() };
    let count = i16::from_be_bytes(word(0)?);
    let weight = i16::from_be_bytes(word(1)?);
    let sign = u16::from_be_bytes(word(2)?);
    let scale = u16::from_be_bytes(word(3)?);
    if count < 0 || raw.len() != 8 + 2 * count as usize || !matches!(sign, 0 | 0x4000) {
        return None;
    }
    let mut unscaled = BigInt::zero();
    for i in 0..count as usize {
        let digit = i16::from_be_bytes(word(4 + i)?);
        if !(0..10_000).contains(&digit) {
            return None;
        }
        unscaled = unscaled * 10_000 + digit;
    }
    if sign == 0x4000 {
        unscaled = -unscaled;
    }
    // The last digit group's place: 10 000^(weight - count + 1).
    let exponent = 4 * (i64::from(weight) - i64::from(count) + 1);
    let value = BigDecimal::new(unscaled, -exponent);
    Some(value.with_scale_round(i64::from(scale), RoundingMode::HalfUp))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(text: &str) -> BigDecimal {
        parse(text).expect(text)
    }

    #[test]
    fn text_keeps_the_written_scale() {
        for (input, shown) in [
            ("1.50", "1.50"),
            (" -0.5 ", "-0.5"),
            ("+.25", "0.25"),
            ("5.", "5"),
            ("1e3", "1000"),
            ("1.5e-3", "0.0015"),
            ("-0.00", "0.00"),
            (
                "123456789012345678901234567890.5",
                "123456789012345678901234567890.5",
            ),
        ] {
            assert_eq!(format(&n(input)), shown, "{input}");
        }
    }

    #[test]
    fn what_is_not_a_number_is_refused() {
        for input in ["", ".", "1.2.3", "--1", "1e", "e5", "1e2000", "abc", "1 2"] {
            let err = parse(input).expect_err(input);
            assert_eq!(err.code(), "22P02", "{input}");
        }
        let huge = format!("1{}", "0".repeat(131_072));
        assert_eq!(parse(&huge).map_err(|e| e.code()).err(), Some("22003"));
        let err = parse("NaN").expect_err("NaN");
        assert_eq!(err.code(), "0A000");
    }

    #[test]
    fn fitting_rounds_half_away_from_zero_then_checks_the_digits() {
        let typmod = NumericTypmod::new(5, Some(2)).expect("typmod");
        assert_eq!(format(&fit(&n("1.005"), typmod).expect("fits")), "1.01");
        assert_eq!(format(&fit(&n("-1.005"), typmod).expect("fits")), "-1.01");
        assert_eq!(format(&fit(&n("7"), typmod).expect("fits")), "7.00");
        assert_eq!(format(&fit(&n("999.994"), typmod).expect("fits")), "999.99");
        let err = fit(&n("999.995"), typmod).expect_err("overflow");
        assert_eq!(err.code(), "22003");
        assert!(fit(&n("0.001"), typmod).is_ok());
    }

    #[test]
    fn binary_round_trips_and_matches_postgresql() {
        // numeric_send of 1234.5678 (PostgreSQL): 2 digits, weight 0, +, scale 4.
        let mut out = Vec::new();
        encode_binary(&n("1234.5678"), &mut out);
        assert_eq!(out, [0, 2, 0, 0, 0, 0, 0, 4, 0x04, 0xd2, 0x16, 0x2e]);
        for text in [
            "0",
            "0.00",
            "-1.50",
            "10000",
            "0.0001",
            "123456789.000000001",
            "-7e20",
        ] {
            let mut out = Vec::new();
            encode_binary(&n(text), &mut out);
            let back = decode_binary(&out).expect(text);
            assert_eq!(format(&back), format(&n(text)), "{text}");
        }
    }

    #[test]
    fn decimal128_conversion_is_exact_or_refused() {
        assert_eq!(to_i128(&n("1.5"), 2), Some(150));
        assert_eq!(to_i128(&n("1.505"), 2), None);
        assert_eq!(format(&from_i128(-150, 2)), "-1.50");
        assert_eq!(format(&from_f64(0.1).expect("finite")), "0.1");
        let wide = from_unscaled_text("-1999999999999999999999999999999999999998", 1);
        assert_eq!(
            wide.map(|n| format(&n)).as_deref(),
            Some("-199999999999999999999999999999999999999.8")
        );
    }
}
