//! Bind parameter decoding: the bytes a client sent, in text or binary format, into a
//! `Datum` of the prepared statement's parameter type. Every malformed value is an
//! `ERROR` with SQLSTATE 22P02 (out-of-range integers 22003), never a panic and never a
//! dropped connection.

use crate::sql::datetime::{self, TimeZone};
use crate::sql::pg_json::JsonKind;
use crate::sql::{Datum, SqlError, SqlResult, SqlType};
use crate::sqlstate::SqlState;

/// Decodes parameter `position` (1-based, for messages) of type `ty`.
pub(crate) fn decode_param(
    raw: Option<&[u8]>,
    ty: SqlType,
    binary: bool,
    position: usize,
    zone: &TimeZone,
) -> SqlResult<Datum> {
    let Some(raw) = raw else {
        return Ok(Datum::Null);
    };
    if binary {
        decode_binary(raw, ty).ok_or_else(|| {
            SqlError::new(
                SqlState::InvalidTextRepresentation,
                format!(
                    "incorrect binary data format in bind parameter {position} (type {})",
                    ty.name()
                ),
            )
        })
    } else {
        decode_text(raw, ty, zone)
    }
}

fn decode_binary(raw: &[u8], ty: SqlType) -> Option<Datum> {
    Some(match ty {
        SqlType::Bool => match raw {
            [b] => Datum::Bool(*b != 0),
            _ => return None,
        },
        SqlType::Int2 => Datum::Int(i64::from(i16::from_be_bytes(raw.try_into().ok()?))),
        SqlType::Int4 => Datum::Int(i64::from(i32::from_be_bytes(raw.try_into().ok()?))),
        SqlType::Int8 => Datum::Int(i64::from_be_bytes(raw.try_into().ok()?)),
        SqlType::Oid => Datum::Int(i64::from(u32::from_be_bytes(raw.try_into().ok()?))),
        SqlType::Float4 => Datum::Float(f64::from(f32::from_be_bytes(raw.try_into().ok()?))),
        SqlType::Float8 => Datum::Float(f64::from_be_bytes(raw.try_into().ok()?)),
        SqlType::Text | SqlType::Name | SqlType::Enum(_) => {
            Datum::Text(String::from_utf8(raw.to_vec()).ok()?)
        }
        SqlType::Bytea => Datum::Bytes(raw.to_vec()),
        // `json_recv` is the text; `jsonb_recv` a format version, 1, then the text.
        SqlType::Json | SqlType::Jsonb => {
            let text = match (ty, raw.split_first()) {
                (SqlType::Jsonb, Some((1, text))) => text,
                (SqlType::Jsonb, _) => return None,
                _ => raw,
            };
            let kind = ty.json_kind()?;
            Datum::Text(crate::sql::pg_json::input(std::str::from_utf8(text).ok()?, kind).ok()?)
        }
        // `timestamp_recv`, `date_recv`: from 2000-01-01; ±infinity are the extremes.
        SqlType::Timestamp | SqlType::TimestampTz => {
            let micros = match i64::from_be_bytes(raw.try_into().ok()?) {
                infinite @ (datetime::TIMESTAMP_INFINITY | datetime::TIMESTAMP_MINUS_INFINITY) => {
                    infinite
                }
                micros => micros.checked_add(datetime::PG_EPOCH_MICROS)?,
            };
            match ty {
                SqlType::TimestampTz => Datum::TimestampTz(micros),
                _ => Datum::Timestamp(micros),
            }
        }
        SqlType::Uuid => Datum::Uuid(raw.try_into().ok()?),
        SqlType::Time => Datum::Time(i64::from_be_bytes(raw.try_into().ok()?)),
        SqlType::Interval => Datum::Interval(crate::sql::pg_interval::Interval::from_binary(raw)?),
        SqlType::Numeric(_) => Datum::Numeric(crate::sql::pg_numeric::decode_binary(raw)?),
        SqlType::Date => Datum::Date(match i32::from_be_bytes(raw.try_into().ok()?) {
            infinite @ (datetime::DATE_INFINITY | datetime::DATE_MINUS_INFINITY) => infinite,
            days => days.checked_add(datetime::PG_EPOCH_DAYS as i32)?,
        }),
        SqlType::Array(of) => Datum::Array(decode_binary_array(raw, of.element())?),
    })
}

/// `array_recv`: dimensions, a NULL flag, the element type, each dimension's length
/// and lower bound, then each element's length (-1 for NULL) and binary form. Only
/// one-dimensional arrays (or the empty array) of the declared element type.
fn decode_binary_array(raw: &[u8], element: SqlType) -> Option<Vec<Datum>> {
    let mut rest = raw;
    fn int(rest: &mut &[u8]) -> Option<i32> {
        let (head, tail) = rest.split_first_chunk::<4>()?;
        *rest = tail;
        Some(i32::from_be_bytes(*head))
    }
    let dimensions = int(&mut rest)?;
    let _has_nulls = int(&mut rest)?;
    let element_oid = int(&mut rest)? as u32;
    if element_oid != element.oid()
        && !(element == SqlType::Text && SqlType::from_oid(element_oid) == Some(SqlType::Text))
    {
        return None;
    }
    let count = match dimensions {
        0 => 0,
        1 => {
            let count = int(&mut rest)?;
            let _lower_bound = int(&mut rest)?;
            usize::try_from(count).ok()?
        }
        _ => return None,
    };
    let mut items = Vec::with_capacity(count.min(raw.len() / 4));
    for _ in 0..count {
        let len = int(&mut rest)?;
        if len < 0 {
            items.push(Datum::Null);
            continue;
        }
        let len = usize::try_from(len).ok()?;
        if rest.len() < len {
            return None;
        }
        let (value, tail) = rest.split_at(len);
        rest = tail;
        items.push(decode_binary(value, element)?);
    }
    rest.is_empty().then_some(items)
}

fn invalid(ty: SqlType, raw: &[u8]) -> SqlError {
    SqlError::new(
        SqlState::InvalidTextRepresentation,
        format!(
            "invalid input syntax for type {}: \"{}\"",
            ty.name(),
            String::from_utf8_lossy(raw)
        ),
    )
}

fn decode_text(raw: &[u8], ty: SqlType, zone: &TimeZone) -> SqlResult<Datum> {
    if ty == SqlType::Bytea {
        return decode_bytea_text(raw).map(Datum::Bytes);
    }
    let text = std::str::from_utf8(raw).map_err(|_| {
        SqlError::new(
            SqlState::InvalidTextRepresentation,
            format!(
                "invalid byte sequence for encoding \"UTF8\" in a {} value",
                ty.name()
            ),
        )
    })?;
    let trimmed = text.trim();
    Ok(match ty {
        SqlType::Bool => Datum::Bool(parse_bool(trimmed).ok_or_else(|| invalid(ty, raw))?),
        SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Oid => {
            let value: i64 = trimmed.parse().map_err(|e: std::num::ParseIntError| {
                use std::num::IntErrorKind::{NegOverflow, PosOverflow};
                match e.kind() {
                    PosOverflow | NegOverflow => out_of_range(ty, trimmed),
                    _ => invalid(ty, raw),
                }
            })?;
            let fits = match ty {
                SqlType::Int2 => i16::try_from(value).is_ok(),
                SqlType::Int4 => i32::try_from(value).is_ok(),
                SqlType::Oid => u32::try_from(value).is_ok(),
                _ => true,
            };
            if !fits {
                return Err(out_of_range(ty, trimmed));
            }
            Datum::Int(value)
        }
        SqlType::Float4 | SqlType::Float8 => {
            // Rust accepts `inf`, `Infinity` and `NaN` in any case, as PostgreSQL does.
            let value = if ty == SqlType::Float4 {
                trimmed.parse::<f32>().map(f64::from)
            } else {
                trimmed.parse::<f64>()
            }
            .map_err(|_| invalid(ty, raw))?;
            let literal_infinity = trimmed.to_ascii_lowercase().contains("inf");
            if value.is_infinite() && !literal_infinity {
                return Err(out_of_range(ty, trimmed));
            }
            Datum::Float(value)
        }
        // A label the column's type lacks is refused where it is written.
        SqlType::Text | SqlType::Name | SqlType::Enum(_) => Datum::Text(text.to_owned()),
        SqlType::Timestamp => Datum::Timestamp(datetime::parse_timestamp(text, None)?),
        SqlType::TimestampTz => Datum::TimestampTz(datetime::parse_timestamp(text, Some(zone))?),
        SqlType::Date => Datum::Date(datetime::parse_date(text)?),
        SqlType::Uuid => Datum::Uuid(crate::sql::parse_uuid(text)?),
        SqlType::Numeric(_) => Datum::Numeric(crate::sql::pg_numeric::parse(text)?),
        SqlType::Json => Datum::Text(crate::sql::pg_json::input(text, JsonKind::Json)?),
        SqlType::Time => Datum::Time(crate::sql::pg_interval::parse_time(text)?),
        SqlType::Interval => Datum::Interval(crate::sql::pg_interval::parse(text)?),
        SqlType::Jsonb => Datum::Text(crate::sql::pg_json::input(text, JsonKind::Jsonb)?),
        SqlType::Array(of) => {
            let mut items = Vec::new();
            for item in crate::sql::pg_array_text::parse(text)? {
                items.push(match item {
                    None => Datum::Null,
                    Some(item) => decode_text(item.as_bytes(), of.element(), zone)?,
                });
            }
            Datum::Array(items)
        }
        // Returned above, before UTF-8 validation; kept so the match stays total.
        SqlType::Bytea => Datum::Bytes(decode_bytea_text(raw)?),
    })
}

fn out_of_range(ty: SqlType, text: &str) -> SqlError {
    SqlError::new(
        SqlState::NumericValueOutOfRange,
        format!("value \"{text}\" is out of range for type {}", ty.name()),
    )
}

/// PostgreSQL's boolean input: `t/true/y/yes/on/1` and `f/false/n/no/off/0`.
fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "t" | "true" | "y" | "yes" | "on" | "1" => Some(true),
        "f" | "false" | "n" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// Bytea text input: hex (`\x0a0b`, whitespace between pairs allowed) or the escape
/// format (`\\` for a backslash, `\ooo` octal, other bytes as themselves).
fn decode_bytea_text(raw: &[u8]) -> SqlResult<Vec<u8>> {
    let bad = || invalid(SqlType::Bytea, raw);
    if let Some(hex) = raw.strip_prefix(b"\\x") {
        let mut out = Vec::with_capacity(hex.len() / 2);
        let mut digits = hex.iter().filter(|b| !b.is_ascii_whitespace());
        while let Some(hi) = digits.next() {
            let lo = digits.next().ok_or_else(bad)?;
            let nibble = |c: u8| (c as char).to_digit(16).ok_or_else(bad);
            out.push((nibble(*hi)? * 16 + nibble(*lo)?) as u8);
        }
        return Ok(out);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] != b'\\' {
            out.push(raw[i]);
            i += 1;
        } else if raw.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else {
            let octal = raw.get(i + 1..i + 4).ok_or_else(bad)?;
            if octal[0] > b'3' || !octal.iter().all(|c| (b'0'..=b'7').contains(c)) {
                return Err(bad());
            }
            out.push(octal.iter().fold(0u8, |acc, c| acc * 8 + (c - b'0')));
            i += 4;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(raw: &str, ty: SqlType) -> SqlResult<Datum> {
        decode_param(Some(raw.as_bytes()), ty, false, 1, &TimeZone::default())
    }

    #[test]
    fn text_params() {
        assert_eq!(text(" 42 ", SqlType::Int4), Ok(Datum::Int(42)));
        assert_eq!(text("-32768", SqlType::Int2), Ok(Datum::Int(-32768)));
        assert_eq!(text("32768", SqlType::Int2).unwrap_err().code(), "22003");
        assert_eq!(
            text("99999999999999999999", SqlType::Int8)
                .unwrap_err()
                .code(),
            "22003"
        );
        assert_eq!(text("4x", SqlType::Int8).unwrap_err().code(), "22P02");
        assert_eq!(text("YES", SqlType::Bool), Ok(Datum::Bool(true)));
        assert_eq!(text("off", SqlType::Bool), Ok(Datum::Bool(false)));
        assert_eq!(text("maybe", SqlType::Bool).unwrap_err().code(), "22P02");
        assert_eq!(
            text("-Infinity", SqlType::Float8),
            Ok(Datum::Float(f64::NEG_INFINITY))
        );
        assert!(matches!(text("NaN", SqlType::Float4), Ok(Datum::Float(f)) if f.is_nan()));
        assert_eq!(text("1e40", SqlType::Float4).unwrap_err().code(), "22003");
        assert_eq!(
            text("0.1", SqlType::Float4),
            Ok(Datum::Float(f64::from(0.1f32)))
        );
        assert_eq!(
            text("\\x0aFF", SqlType::Bytea),
            Ok(Datum::Bytes(vec![10, 255]))
        );
        assert_eq!(
            text("a\\\\b\\001", SqlType::Bytea),
            Ok(Datum::Bytes(b"a\\b\x01".to_vec()))
        );
        assert_eq!(text("\\x0", SqlType::Bytea).unwrap_err().code(), "22P02");
        assert_eq!(text("\\9", SqlType::Bytea).unwrap_err().code(), "22P02");
        let bad_utf8 = decode_param(
            Some(&[0xff, 0xfe]),
            SqlType::Text,
            false,
            1,
            &TimeZone::default(),
        );
        assert_eq!(bad_utf8.unwrap_err().code(), "22P02");
    }

    #[test]
    fn binary_params() {
        let b = |raw: &[u8], ty| decode_param(Some(raw), ty, true, 2, &TimeZone::default());
        assert_eq!(b(&7i16.to_be_bytes(), SqlType::Int2), Ok(Datum::Int(7)));
        assert_eq!(b(&(-7i64).to_be_bytes(), SqlType::Int8), Ok(Datum::Int(-7)));
        assert_eq!(
            b(&1.5f32.to_be_bytes(), SqlType::Float4),
            Ok(Datum::Float(1.5))
        );
        assert_eq!(b(&[1], SqlType::Bool), Ok(Datum::Bool(true)));
        assert_eq!(b(&[0, 0, 1], SqlType::Int4).unwrap_err().code(), "22P02");
        assert_eq!(b(&[0xc3, 0x28], SqlType::Text).unwrap_err().code(), "22P02");
        assert_eq!(
            decode_param(None, SqlType::Int4, true, 1, &TimeZone::default()),
            Ok(Datum::Null)
        );
    }

    #[test]
    fn array_params() {
        use crate::sql::ArrayOf;
        let ints = SqlType::Array(ArrayOf::Int8);
        assert_eq!(
            text("{1, NULL ,-3}", ints),
            Ok(Datum::Array(vec![
                Datum::Int(1),
                Datum::Null,
                Datum::Int(-3)
            ]))
        );
        assert_eq!(text("{1,x}", ints).unwrap_err().code(), "22P02");
        assert_eq!(text("1,2", ints).unwrap_err().code(), "22P02");
        assert_eq!(
            text("{99999}", SqlType::Array(ArrayOf::Int2))
                .unwrap_err()
                .code(),
            "22003"
        );
        assert_eq!(
            text(r#"{a,"b c"}"#, SqlType::Array(ArrayOf::Text)),
            Ok(Datum::Array(vec![
                Datum::Text("a".into()),
                Datum::Text("b c".into())
            ]))
        );
        // array_send of int4[] {7,NULL}.
        let raw: Vec<u8> = [1i32, 1, 23, 2, 1, 4, 7, -1]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        let int4s = SqlType::Array(ArrayOf::Int4);
        assert_eq!(
            decode_param(Some(&raw), int4s, true, 1, &TimeZone::default()),
            Ok(Datum::Array(vec![Datum::Int(7), Datum::Null]))
        );
        assert_eq!(
            decode_param(Some(&raw[..30]), int4s, true, 1, &TimeZone::default())
                .unwrap_err()
                .code(),
            "22P02"
        );
        let empty: Vec<u8> = [0i32, 0, 23].iter().flat_map(|v| v.to_be_bytes()).collect();
        assert_eq!(
            decode_param(Some(&empty), int4s, true, 1, &TimeZone::default()),
            Ok(Datum::Array(vec![]))
        );
        // An int8[] sent where int4[] was declared is not silently read.
        let int8s: Vec<u8> = [1i32, 0, 20, 1, 1]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .chain(8i32.to_be_bytes())
            .chain(5i64.to_be_bytes())
            .collect();
        assert_eq!(
            decode_param(Some(&int8s), int4s, true, 1, &TimeZone::default())
                .unwrap_err()
                .code(),
            "22P02"
        );
    }
}
