//! Result encoding: `Datum`s to PostgreSQL's text and binary wire formats, and the
//! RowDescription/DataRow messages that carry them. Rows are written straight into the
//! connection's output buffer, so streaming a result allocates nothing per row.
//!
//! A `Datum` whose variant does not match its column's type is converted when the
//! conversion is lossless (an integral `Float` in a BIGINT column, an `Int` in a
//! DOUBLE column); otherwise the row fails with SQLSTATE 42804 rather than sending a
//! value the client would misread.

use super::wire::patch_length;
use crate::sql::datetime::{self, TimeZone};
use crate::sql::pg_float_text::put_float_text;
use crate::sql::pg_interval::{self, Interval};
use crate::sql::pg_numeric;
use crate::sql::{Datum, OutputColumn, SqlError, SqlResult, SqlType};
use crate::sqlstate::SqlState;
use bigdecimal::BigDecimal;
use bytes::{BufMut, BytesMut};
use std::borrow::Cow;

/// Result column formats chosen by the client in Bind (simple queries are all text).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Formats {
    Text,
    Binary,
    /// One entry per column, `true` for binary.
    PerColumn(Vec<bool>),
}

impl Formats {
    /// Interprets Bind's result format codes for a result of `columns` columns.
    pub(crate) fn from_codes(codes: &[i16], columns: usize) -> SqlResult<Formats> {
        let binary = |code: i16| match code {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(SqlError::new(
                SqlState::InvalidParameterValue,
                format!("unsupported format code: {other}"),
            )),
        };
        match codes {
            [] => Ok(Formats::Text),
            [one] => Ok(if binary(*one)? {
                Formats::Binary
            } else {
                Formats::Text
            }),
            many if many.len() == columns => Ok(Formats::PerColumn(
                many.iter().map(|c| binary(*c)).collect::<SqlResult<_>>()?,
            )),
            many => Err(SqlError::new(
                SqlState::ProtocolViolation,
                format!(
                    "bind message has {} result formats but query has {} columns",
                    many.len(),
                    columns
                ),
            )),
        }
    }

    pub(crate) fn is_binary(&self, column: usize) -> bool {
        match self {
            Formats::Text => false,
            Formats::Binary => true,
            Formats::PerColumn(v) => v.get(column).copied().unwrap_or(false),
        }
    }
}

/// `pg_type.typlen`: the fixed width, or -1 for variable-length types.
pub(crate) fn type_size(ty: SqlType) -> i16 {
    match ty {
        SqlType::Bool => 1,
        SqlType::Int2 => 2,
        // `enum`s are stored as OIDs in PostgreSQL.
        SqlType::Int4 | SqlType::Float4 | SqlType::Enum(_) | SqlType::Oid => 4,
        SqlType::Int8 | SqlType::Float8 | SqlType::Timestamp | SqlType::TimestampTz => 8,
        SqlType::Date => 4,
        SqlType::Uuid | SqlType::Interval => 16,
        SqlType::Time => 8,
        // NAMEDATALEN.
        SqlType::Name => 64,
        SqlType::Text
        | SqlType::Bytea
        | SqlType::Numeric(_)
        | SqlType::Array(_)
        | SqlType::Json
        | SqlType::Jsonb => -1,
    }
}

/// Appends a RowDescription for `columns`.
pub(crate) fn put_row_description(out: &mut BytesMut, columns: &[OutputColumn], formats: &Formats) {
    let start = out.len();
    out.put_u8(b'T');
    out.put_i32(0);
    out.put_i16(columns.len() as i16);
    for (i, column) in columns.iter().enumerate() {
        out.put_slice(column.name.as_bytes());
        out.put_u8(0);
        // The base table column, as pg_class.oid / pg_attribute.attnum; 0 for a
        // computed column.
        let (table, attnum) = column.origin.map_or((0, 0), |o| (o.table_oid, o.attnum));
        out.put_u32(table);
        out.put_i16(attnum);
        let (type_oid, typmod) = column.described_type();
        out.put_u32(type_oid);
        out.put_i16(type_size(column.ty));
        out.put_i32(typmod);
        out.put_i16(i16::from(formats.is_binary(i)));
    }
    patch_length(out, start);
}

/// Appends a DataRow. On error nothing is appended.
pub(crate) fn put_data_row(
    out: &mut BytesMut,
    row: &[Datum],
    columns: &[OutputColumn],
    formats: &Formats,
    zone: &TimeZone,
) -> SqlResult<()> {
    if row.len() != columns.len() {
        tracing::error!(
            values = row.len(),
            columns = columns.len(),
            "row width does not match its columns"
        );
        return Err(SqlError::internal("result row does not match its columns"));
    }
    let start = out.len();
    out.put_u8(b'D');
    out.put_i32(0);
    out.put_i16(row.len() as i16);
    for (i, (datum, column)) in row.iter().zip(columns).enumerate() {
        if matches!(datum, Datum::Null) {
            out.put_i32(-1);
            continue;
        }
        let at = out.len();
        out.put_i32(0);
        let written = if formats.is_binary(i) {
            put_binary(out, datum, column.ty)
        } else {
            put_text(out, datum, column.ty, zone)
        };
        if let Err(e) = written {
            out.truncate(start);
            return Err(e);
        }
        let len = (out.len() - at - 4) as i32;
        out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }
    patch_length(out, start);
    Ok(())
}

/// Appends the text form PostgreSQL's output functions produce; a `timestamptz` is
/// shown in the session's time zone `zone`.
pub(crate) fn put_text(
    out: &mut BytesMut,
    datum: &Datum,
    ty: SqlType,
    zone: &TimeZone,
) -> SqlResult<()> {
    match ty {
        SqlType::Bool => out.put_u8(if as_bool(datum, ty)? { b't' } else { b'f' }),
        SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Oid => {
            out.put_slice(itoa::Buffer::new().format(as_int(datum, ty)?).as_bytes())
        }
        SqlType::Float4 | SqlType::Float8 => {
            put_float_text(out, as_float(datum, ty)?, ty == SqlType::Float4)
        }
        SqlType::Text | SqlType::Name | SqlType::Json | SqlType::Jsonb | SqlType::Enum(_) => {
            put_natural_text(out, datum, ty)?
        }
        SqlType::Timestamp | SqlType::TimestampTz => {
            let zone = (ty == SqlType::TimestampTz).then_some(zone);
            out.put_slice(datetime::format_timestamp(as_timestamp(datum, ty)?, zone)?.as_bytes())
        }
        SqlType::Date => out.put_slice(datetime::format_date(as_date(datum, ty)?)?.as_bytes()),
        SqlType::Time => out.put_slice(pg_interval::format_time(as_time(datum, ty)?).as_bytes()),
        SqlType::Interval => {
            out.put_slice(pg_interval::format(&as_interval(datum, ty)?).as_bytes())
        }
        SqlType::Uuid => out.put_slice(crate::sql::format_uuid(&as_uuid(datum, ty)?).as_bytes()),
        SqlType::Numeric(_) => {
            out.put_slice(pg_numeric::format(&*as_numeric(datum, ty)?).as_bytes())
        }
        SqlType::Array(of) => match datum {
            Datum::Array(items) => put_array_text(out, items, of.element(), zone)?,
            other => return Err(mismatch(other, ty)),
        },
        SqlType::Bytea => match datum {
            Datum::Bytes(b) => put_hex(out, b),
            Datum::Text(s) => put_hex(out, s.as_bytes()),
            other => return Err(mismatch(other, ty)),
        },
    }
    Ok(())
}

/// Appends the binary form (`*send` functions: big-endian, IEEE 754).
pub(crate) fn put_binary(out: &mut BytesMut, datum: &Datum, ty: SqlType) -> SqlResult<()> {
    match ty {
        SqlType::Bool => out.put_u8(u8::from(as_bool(datum, ty)?)),
        // A value past the column's width is an error, never a truncated number.
        SqlType::Int2 => {
            out.put_i16(i16::try_from(as_int(datum, ty)?).map_err(|_| out_of_range(ty))?)
        }
        SqlType::Int4 => {
            out.put_i32(i32::try_from(as_int(datum, ty)?).map_err(|_| out_of_range(ty))?)
        }
        SqlType::Int8 => out.put_i64(as_int(datum, ty)?),
        // `oidsend`: 4 bytes, unsigned.
        SqlType::Oid => {
            out.put_u32(u32::try_from(as_int(datum, ty)?).map_err(|_| out_of_range(ty))?)
        }
        SqlType::Float4 => out.put_f32(as_float(datum, ty)? as f32),
        SqlType::Float8 => out.put_f64(as_float(datum, ty)?),
        // `enum_send`: the label's text.
        SqlType::Text | SqlType::Name | SqlType::Json | SqlType::Enum(_) => {
            put_natural_text(out, datum, ty)?
        }
        // `jsonb_send`: a format version, 1, then the text.
        SqlType::Jsonb => {
            out.put_u8(1);
            put_natural_text(out, datum, ty)?
        }
        // `timestamp_send`, `date_send`: from 2000-01-01; ±infinity stay the extremes.
        SqlType::Timestamp | SqlType::TimestampTz => out.put_i64(match as_timestamp(datum, ty)? {
            infinite @ (datetime::TIMESTAMP_INFINITY | datetime::TIMESTAMP_MINUS_INFINITY) => {
                infinite
            }
            micros => micros - datetime::PG_EPOCH_MICROS,
        }),
        SqlType::Uuid => out.put_slice(&as_uuid(datum, ty)?),
        // `time_send`: microseconds since midnight; `interval_send`.
        SqlType::Time => out.put_i64(as_time(datum, ty)?),
        SqlType::Interval => out.put_slice(&as_interval(datum, ty)?.to_binary()),
        SqlType::Numeric(_) => {
            let mut bytes = Vec::new();
            pg_numeric::encode_binary(&*as_numeric(datum, ty)?, &mut bytes);
            out.put_slice(&bytes);
        }
        SqlType::Date => out.put_i32(match as_date(datum, ty)? {
            infinite @ (datetime::DATE_INFINITY | datetime::DATE_MINUS_INFINITY) => infinite,
            days => days - datetime::PG_EPOCH_DAYS as i32,
        }),
        SqlType::Array(of) => match datum {
            Datum::Array(items) => put_array_binary(out, items, of.element())?,
            other => return Err(mismatch(other, ty)),
        },
        SqlType::Bytea => match datum {
            Datum::Bytes(b) => out.put_slice(b),
            Datum::Text(s) => out.put_slice(s.as_bytes()),
            other => return Err(mismatch(other, ty)),
        },
    }
    Ok(())
}

/// `array_out`: each element's text form, quoted where it must be.
fn put_array_text(
    out: &mut BytesMut,
    items: &[Datum],
    element: SqlType,
    zone: &TimeZone,
) -> SqlResult<()> {
    let mut texts = Vec::with_capacity(items.len());
    for item in items {
        texts.push(match item {
            Datum::Null => None,
            item => {
                let mut text = BytesMut::new();
                put_text(&mut text, item, element, zone)?;
                Some(String::from_utf8_lossy(&text).into_owned())
            }
        });
    }
    out.put_slice(crate::sql::pg_array_text::format(texts.iter().map(Option::as_deref)).as_bytes());
    Ok(())
}

/// `array_send` of a one-dimensional array: dimensions, a NULL flag, the element
/// type, then each element's length and binary form (-1 for NULL).
fn put_array_binary(out: &mut BytesMut, items: &[Datum], element: SqlType) -> SqlResult<()> {
    out.put_i32(if items.is_empty() { 0 } else { 1 });
    out.put_i32(i32::from(items.contains(&Datum::Null)));
    out.put_u32(element.oid());
    if !items.is_empty() {
        out.put_i32(items.len() as i32);
        out.put_i32(1);
    }
    for item in items {
        if *item == Datum::Null {
            out.put_i32(-1);
            continue;
        }
        let start = out.len();
        out.put_i32(0);
        put_binary(out, item, element)?;
        let len = (out.len() - start - 4) as i32;
        out[start..start + 4].copy_from_slice(&len.to_be_bytes());
    }
    Ok(())
}

/// A value shown in a TEXT column: each variant in its own PostgreSQL text form. A
/// date or time must have been made text by then: its text depends on its type.
fn put_natural_text(out: &mut BytesMut, datum: &Datum, ty: SqlType) -> SqlResult<()> {
    match datum {
        Datum::Timestamp(_) | Datum::TimestampTz(_) | Datum::Date(_) | Datum::Uuid(_) => {
            return Err(mismatch(datum, ty))
        }
        Datum::Time(micros) => out.put_slice(pg_interval::format_time(*micros).as_bytes()),
        Datum::Interval(i) => out.put_slice(pg_interval::format(i).as_bytes()),
        Datum::Null => {}
        Datum::Numeric(n) => out.put_slice(pg_numeric::format(n).as_bytes()),
        Datum::Bool(b) => out.put_slice(if *b { b"true" } else { b"false" }),
        Datum::Int(i) => out.put_slice(itoa::Buffer::new().format(*i).as_bytes()),
        Datum::Float(f) => put_float_text(out, *f, false),
        Datum::Text(s) => out.put_slice(s.as_bytes()),
        Datum::Bytes(b) => put_hex(out, b),
        Datum::Array(items) => {
            let texts: Vec<Option<String>> = items
                .iter()
                .map(|item| {
                    if *item == Datum::Null {
                        return Ok(None);
                    }
                    let mut text = BytesMut::new();
                    put_natural_text(&mut text, item, ty)?;
                    Ok(Some(String::from_utf8_lossy(&text).into_owned()))
                })
                .collect::<SqlResult<_>>()?;
            out.put_slice(
                crate::sql::pg_array_text::format(texts.iter().map(Option::as_deref)).as_bytes(),
            );
        }
    }
    Ok(())
}

fn put_hex(out: &mut BytesMut, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(2 + bytes.len() * 2);
    out.put_slice(b"\\x");
    for b in bytes {
        out.put_u8(HEX[usize::from(b >> 4)]);
        out.put_u8(HEX[usize::from(b & 0xf)]);
    }
}

fn as_int(datum: &Datum, ty: SqlType) -> SqlResult<i64> {
    let value = match datum {
        Datum::Int(i) => *i,
        // -2^63 is exact in f64, 2^63 is not an i64: the range is half-open.
        Datum::Float(f)
            if f.fract() == 0.0
                && *f >= -9.223_372_036_854_776e18
                && *f < 9.223_372_036_854_776e18 =>
        {
            *f as i64
        }
        Datum::Bool(b) => i64::from(*b),
        other => return Err(mismatch(other, ty)),
    };
    let in_range = match ty {
        SqlType::Int2 => i16::try_from(value).is_ok(),
        SqlType::Int4 => i32::try_from(value).is_ok(),
        SqlType::Oid => u32::try_from(value).is_ok(),
        _ => true,
    };
    if !in_range {
        return Err(SqlError::new(
            SqlState::NumericValueOutOfRange,
            format!("{} out of range: {value}", ty.name()),
        ));
    }
    Ok(value)
}

fn out_of_range(ty: SqlType) -> SqlError {
    SqlError::new(
        SqlState::NumericValueOutOfRange,
        format!("{} out of range", ty.name()),
    )
}

fn as_float(datum: &Datum, ty: SqlType) -> SqlResult<f64> {
    match datum {
        Datum::Float(f) => Ok(*f),
        Datum::Int(i) => Ok(*i as f64),
        other => Err(mismatch(other, ty)),
    }
}

/// A numeric column's value: borrowed, or made from an integer.
fn as_numeric(datum: &Datum, ty: SqlType) -> SqlResult<Cow<'_, BigDecimal>> {
    match datum {
        Datum::Numeric(n) => Ok(Cow::Borrowed(n)),
        Datum::Int(i) => Ok(Cow::Owned(BigDecimal::from(*i))),
        other => Err(mismatch(other, ty)),
    }
}

/// A `timestamp` or `timestamptz` value of a column of that type: the kinds differ by
/// the session's zone, so one is never sent as the other.
fn as_timestamp(datum: &Datum, ty: SqlType) -> SqlResult<i64> {
    match (datum, ty) {
        (Datum::Timestamp(micros), SqlType::Timestamp)
        | (Datum::TimestampTz(micros), SqlType::TimestampTz) => Ok(*micros),
        (other, _) => Err(mismatch(other, ty)),
    }
}

fn as_uuid(datum: &Datum, ty: SqlType) -> SqlResult<[u8; 16]> {
    match datum {
        Datum::Uuid(bytes) => Ok(*bytes),
        other => Err(mismatch(other, ty)),
    }
}

fn as_time(datum: &Datum, ty: SqlType) -> SqlResult<i64> {
    match datum {
        Datum::Time(micros) => Ok(*micros),
        other => Err(mismatch(other, ty)),
    }
}

fn as_interval(datum: &Datum, ty: SqlType) -> SqlResult<Interval> {
    match datum {
        Datum::Interval(interval) => Ok(*interval),
        other => Err(mismatch(other, ty)),
    }
}

fn as_date(datum: &Datum, ty: SqlType) -> SqlResult<i32> {
    match datum {
        Datum::Date(days) => Ok(*days),
        other => Err(mismatch(other, ty)),
    }
}

fn as_bool(datum: &Datum, ty: SqlType) -> SqlResult<bool> {
    match datum {
        Datum::Bool(b) => Ok(*b),
        other => Err(mismatch(other, ty)),
    }
}

fn mismatch(datum: &Datum, ty: SqlType) -> SqlError {
    let kind = match datum {
        Datum::Null => "null",
        Datum::Bool(_) => "boolean",
        Datum::Int(_) => "integer",
        Datum::Float(_) => "floating-point",
        Datum::Text(_) => "text",
        Datum::Bytes(_) => "binary",
        Datum::Array(_) => "array",
        Datum::Timestamp(_) => "timestamp",
        Datum::TimestampTz(_) => "timestamptz",
        Datum::Date(_) => "date",
        Datum::Uuid(_) => "uuid",
        Datum::Numeric(_) => "numeric",
        Datum::Time(_) => "time",
        Datum::Interval(_) => "interval",
    };
    tracing::warn!(
        ?datum,
        column_type = ty.name(),
        "result value does not fit its column"
    );
    SqlError::new(
        SqlState::DatatypeMismatch,
        format!(
            "a {kind} value cannot be returned in a column of type {}",
            ty.name()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::pg_float_text::{put_short_decimal, put_shortest_laid_out};

    fn float(v: f64, single: bool) -> String {
        let mut out = BytesMut::new();
        put_float_text(&mut out, v, single);
        String::from_utf8(out.to_vec()).unwrap()
    }

    #[test]
    fn arrays_encode_as_array_out_and_array_send() {
        let items = vec![
            Datum::Text("ab".into()),
            Datum::Null,
            Datum::Text("c d".into()),
        ];
        let mut out = BytesMut::new();
        put_text(
            &mut out,
            &Datum::Array(items.clone()),
            SqlType::Array(crate::sql::ArrayOf::Text),
            &TimeZone::default(),
        )
        .unwrap();
        assert_eq!(&out[..], br#"{ab,NULL,"c d"}"#);
        let mut out = BytesMut::new();
        put_binary(
            &mut out,
            &Datum::Array(items[..2].to_vec()),
            SqlType::Array(crate::sql::ArrayOf::Text),
        )
        .unwrap();
        let want: Vec<u8> = [1i32, 1, 25, 2, 1, 2]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .chain(*b"ab")
            .chain((-1i32).to_be_bytes())
            .collect();
        assert_eq!(out.to_vec(), want);
        let mut out = BytesMut::new();
        let floats = Datum::Array(vec![Datum::Float(1e20), Datum::Float(0.5)]);
        put_text(
            &mut out,
            &floats,
            SqlType::Array(crate::sql::ArrayOf::Float8),
            &TimeZone::default(),
        )
        .unwrap();
        assert_eq!(&out[..], b"{1e+20,0.5}");
        let mut out = BytesMut::new();
        let too_big = put_binary(&mut out, &Datum::Int(1 << 40), SqlType::Int4);
        assert_eq!(too_big.unwrap_err().code(), "22003");
        let bools = Datum::Array(vec![Datum::Bool(true), Datum::Bool(false)]);
        put_text(
            &mut out,
            &bools,
            SqlType::Array(crate::sql::ArrayOf::Bool),
            &TimeZone::default(),
        )
        .unwrap();
        assert_eq!(&out[..], b"{t,f}");
    }

    #[test]
    fn floats_print_like_postgres() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (1.5, "1.5"),
            (100.0, "100"),
            (0.1, "0.1"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e14, "100000000000000"),
            (1e15, "1e+15"),
            (123456789012345680000.0, "1.2345678901234568e+20"),
            (-2.5e-300, "-2.5e-300"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
            (std::f64::consts::PI, "3.141592653589793"),
            (123.456, "123.456"),
            (-0.00012, "-0.00012"),
            (1e22, "1e+22"),
            (1e100, "1e+100"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (999999999999999.9, "999999999999999.9"),
        ];
        for (v, expected) in cases {
            assert_eq!(float(*v, false), *expected, "float8 {v:e}");
        }
        assert_eq!(float(0.1f32 as f64, true), "0.1");
        assert_eq!(float(123456.0, true), "123456");
        assert_eq!(float(1e6, true), "1e+06");
        assert_eq!(float(f64::from(1.1f32), true), "1.1");
        assert_eq!(float(f64::from(-3.4028235e38f32), true), "-3.4028235e+38");
        assert_eq!(float(f64::from(1e-5f32), true), "1e-05");
    }

    proptest::proptest! {
        #[test]
        fn floats_read_back_exactly(bits in proptest::prelude::any::<u64>()) {
            let v = f64::from_bits(bits);
            proptest::prop_assume!(v.is_finite());
            let text = float(v, false);
            proptest::prop_assert_eq!(text.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{}", text);
            let single = f32::from_bits(bits as u32);
            proptest::prop_assume!(single.is_finite());
            let text = float(f64::from(single), true);
            proptest::prop_assert_eq!(text.parse::<f32>().unwrap().to_bits(), single.to_bits(), "{}", text);
        }

        /// The fixed-notation shortcut prints what the general layout prints, including
        /// at the edges of the fixed range (1e-4 and 1e15 for float8, 1e6 for float4).
        #[test]
        fn fixed_notation_shortcut_matches_the_general_layout(
            bits in proptest::prelude::any::<u64>(),
            scale in -6i32..17,
        ) {
            // A value in [1, 2) times a power of ten, either sign.
            let unit = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
            let sign = if bits >> 63 == 1 { -1.0 } else { 1.0 };
            let v = sign * unit * 10f64.powi(scale);
            let mut general = BytesMut::new();
            put_shortest_laid_out(&mut general, ryu::Buffer::new().format_finite(v), false);
            let shortcut = float(v, false);
            proptest::prop_assert_eq!(shortcut.as_bytes(), &general[..], "float8 {:e}", v);
            let single = v as f32;
            let mut general = BytesMut::new();
            put_shortest_laid_out(&mut general, ryu::Buffer::new().format_finite(single), true);
            let shortcut = float(v, true);
            proptest::prop_assert_eq!(shortcut.as_bytes(), &general[..], "float4 {:e}", single);
        }
    }

    proptest::proptest! {
        /// Decimals with few fractional digits (prices, rates) take the short path and
        /// print exactly what ryu's digits print.
        #[test]
        fn short_decimals_print_as_ryu_does(
            units in -999_999_999_999_999i64..=999_999_999_999_999,
            decimals in 0u32..=6,
        ) {
            let v = units as f64 / 10f64.powi(decimals as i32);
            let mut general = BytesMut::new();
            match v == 0.0 {
                true => general.put_slice(if v.is_sign_negative() { b"-0" } else { b"0" }),
                false => put_shortest_laid_out(&mut general, ryu::Buffer::new().format_finite(v), false),
            }
            let printed = float(v, false);
            proptest::prop_assert_eq!(printed.as_bytes(), &general[..], "float8 {:e}", v);
        }
    }

    #[test]
    fn short_decimals_take_the_short_path() {
        for (v, expected) in [
            (12.5, "12.5"),
            (-0.05, "-0.05"),
            (0.0001, "0.0001"),
            (9999.99, "9999.99"),
            (100.0, "100"),
            (12_345_678_901.25, "12345678901.25"),
        ] {
            let mut out = BytesMut::new();
            assert!(put_short_decimal(&mut out, v), "{v}");
            assert_eq!(&out[..], expected.as_bytes());
        }
        // Too many digits, too small, too large or zero: left to ryu.
        for v in [std::f64::consts::PI, 0.00001, 1.5e11, 0.0, -0.0, 0.1 + 0.2] {
            assert!(!put_short_decimal(&mut BytesMut::new(), v), "{v}");
        }
    }

    #[test]
    fn dates_and_times_encode_as_postgres_does() {
        let utc = TimeZone::default();
        let micros =
            crate::sql::datetime::parse_timestamp("2000-01-02 00:00:01", Some(&utc)).unwrap();
        let mut out = BytesMut::new();
        put_text(
            &mut out,
            &Datum::TimestampTz(micros),
            SqlType::TimestampTz,
            &utc,
        )
        .unwrap();
        assert_eq!(&out[..], b"2000-01-02 00:00:01+00");
        out.clear();
        let berlin = TimeZone::parse("Europe/Berlin").unwrap();
        put_text(
            &mut out,
            &Datum::TimestampTz(micros),
            SqlType::TimestampTz,
            &berlin,
        )
        .unwrap();
        assert_eq!(&out[..], b"2000-01-02 01:00:01+01");
        out.clear();
        // A timestamp is never sent as a timestamptz, nor the other way round.
        let mixed = put_text(
            &mut out,
            &Datum::Timestamp(micros),
            SqlType::TimestampTz,
            &utc,
        );
        assert_eq!(mixed.unwrap_err().code(), "42804");
        put_text(
            &mut out,
            &Datum::Timestamp(micros),
            SqlType::Timestamp,
            &utc,
        )
        .unwrap();
        assert_eq!(&out[..], b"2000-01-02 00:00:01");
        out.clear();
        // Binary: microseconds and days since 2000-01-01.
        put_binary(&mut out, &Datum::TimestampTz(micros), SqlType::TimestampTz).unwrap();
        assert_eq!(out.to_vec(), 86_401_000_000i64.to_be_bytes().to_vec());
        out.clear();
        put_binary(&mut out, &Datum::Date(10_958), SqlType::Date).unwrap();
        assert_eq!(out.to_vec(), 1i32.to_be_bytes().to_vec());
        out.clear();
        put_binary(&mut out, &Datum::Timestamp(i64::MAX), SqlType::Timestamp).unwrap();
        assert_eq!(out.to_vec(), i64::MAX.to_be_bytes().to_vec());
        let text_time = put_text(&mut out, &Datum::Timestamp(0), SqlType::Text, &utc);
        assert_eq!(text_time.unwrap_err().code(), "42804");
    }

    #[test]
    fn text_values() {
        let mut out = BytesMut::new();
        put_text(
            &mut out,
            &Datum::Bytes(vec![0xde, 0xad, 1]),
            SqlType::Bytea,
            &TimeZone::default(),
        )
        .unwrap();
        assert_eq!(&out[..], b"\\xdead01");
        out.clear();
        put_text(
            &mut out,
            &Datum::Bool(true),
            SqlType::Bool,
            &TimeZone::default(),
        )
        .unwrap();
        assert_eq!(&out[..], b"t");
        out.clear();
        put_text(
            &mut out,
            &Datum::Float(3.0),
            SqlType::Int8,
            &TimeZone::default(),
        )
        .unwrap();
        assert_eq!(&out[..], b"3");
    }

    #[test]
    fn mismatched_values_are_errors_not_panics() {
        let mut out = BytesMut::new();
        let err = put_binary(&mut out, &Datum::Int(70_000), SqlType::Int2).unwrap_err();
        assert_eq!(err.code(), "22003");
        let err = put_binary(&mut out, &Datum::Float(1.5), SqlType::Int8).unwrap_err();
        assert_eq!(err.code(), "42804");
        let err = put_text(
            &mut out,
            &Datum::Text("x".into()),
            SqlType::Bool,
            &TimeZone::default(),
        )
        .unwrap_err();
        assert_eq!(err.code(), "42804");
        let columns = vec![OutputColumn {
            name: "a".into(),
            ty: SqlType::Int4,
            origin: None,
        }];
        out.clear();
        let err = put_data_row(
            &mut out,
            &[Datum::Float(f64::NAN)],
            &columns,
            &Formats::Binary,
            &TimeZone::default(),
        )
        .unwrap_err();
        assert_eq!(err.code(), "42804");
        assert!(out.is_empty(), "a failed row leaves no partial message");
    }
}
