//! Conversions between SQL values (`Datum`, `SqlType`) and engine values (`Value`,
//! `PkValue`), and the SQL type each engine type is shown as.

use super::datetime;
use super::pg_interval;
use super::pg_numeric::{self, NumericTypmod};
use super::session_zone;
use super::sql_types::{ArrayOf, Datum, SqlError, SqlResult, SqlType};
use crate::engine::{
    IntegerWidth, PkRef, PkType, PkValue, SqlKind, TableMeta, Value, ValueRef, ValueType,
};
use crate::sqlstate::SqlState;
use bigdecimal::BigDecimal;
use std::borrow::Cow;
use std::cmp::Ordering;

pub fn pk_sql_type(ty: PkType) -> SqlType {
    match ty {
        PkType::Integer => SqlType::Int8,
        PkType::String => SqlType::Text,
        PkType::Binary => SqlType::Bytea,
    }
}

/// The key type a column declared `ty` is stored as: a type whose stored form sorts as
/// its values do (integers, dates and times as Integers, text, bytea and uuid); `None`
/// for the others (floats, booleans, arrays).
pub fn sql_pk_type(ty: SqlType) -> Option<PkType> {
    match ty {
        SqlType::Text | SqlType::Name => Some(PkType::String),
        SqlType::Bytea | SqlType::Uuid => Some(PkType::Binary),
        SqlType::Int2
        | SqlType::Int4
        | SqlType::Int8
        | SqlType::Time
        | SqlType::Timestamp
        | SqlType::TimestampTz
        | SqlType::Date => Some(PkType::Integer),
        SqlType::Bool
        | SqlType::Oid
        | SqlType::Float4
        | SqlType::Float8
        | SqlType::Numeric(_)
        | SqlType::Array(_)
        | SqlType::Json
        | SqlType::Jsonb
        | SqlType::Interval
        // Its stored text sorts by the labels' bytes, not in the type's order.
        | SqlType::Enum(_) => None,
    }
}

/// The SQL type a column of `table` was declared with: its stored type's, narrowed by
/// what the declaration kept (`SMALLINT`, `REAL`, `TIMESTAMPTZ`, ...). `None` for a
/// column the table does not have.
pub fn declared_type(table: &TableMeta, column: &str) -> Option<SqlType> {
    let stored = match table.pk_index(column) {
        Some(k) => pk_sql_type(table.pk[k].ty),
        None => value_sql_type(table.column(column)?.ty),
    };
    Some(
        match (stored, table.integer_width(column), table.kind(column)) {
            (SqlType::Int8, _, Some(SqlKind::Timestamp)) => SqlType::Timestamp,
            (SqlType::Int8, _, Some(SqlKind::TimestampTz)) => SqlType::TimestampTz,
            (SqlType::Int8, _, Some(SqlKind::Date)) => SqlType::Date,
            (SqlType::Bytea, _, Some(SqlKind::Uuid)) => SqlType::Uuid,
            (SqlType::Int8, _, Some(SqlKind::Time)) => SqlType::Time,
            (SqlType::Bytea, _, Some(SqlKind::Interval)) => SqlType::Interval,
            (SqlType::Text, _, Some(SqlKind::Json)) => SqlType::Json,
            (SqlType::Text, _, Some(SqlKind::Array { element })) => {
                match SqlType::from_oid(element).and_then(ArrayOf::of) {
                    Some(of) => SqlType::Array(of),
                    None => SqlType::Text,
                }
            }
            (SqlType::Text, _, Some(SqlKind::Jsonb)) => SqlType::Jsonb,
            (SqlType::Text, _, Some(SqlKind::Enum { type_id })) => SqlType::enum_of(type_id),
            (SqlType::Text, _, Some(SqlKind::Numeric { precision, scale })) => {
                SqlType::Numeric(Some(NumericTypmod { precision, scale }))
            }
            (SqlType::Int8, Some(IntegerWidth::Int16), _) => SqlType::Int2,
            (SqlType::Int8, Some(IntegerWidth::Int32), _) => SqlType::Int4,
            (SqlType::Float8, _, _) if table.is_single_precision(column) => SqlType::Float4,
            (ty, _, _) => ty,
        },
    )
}

pub fn value_sql_type(ty: ValueType) -> SqlType {
    match ty {
        ValueType::Integer => SqlType::Int8,
        ValueType::Double => SqlType::Float8,
        ValueType::Boolean => SqlType::Bool,
        ValueType::String => SqlType::Text,
        ValueType::Binary => SqlType::Bytea,
    }
}

pub fn sql_value_type(ty: SqlType) -> ValueType {
    match ty {
        // Dates and times are Integers: microseconds or days since 1970-01-01.
        SqlType::Int2
        | SqlType::Int4
        | SqlType::Int8
        | SqlType::Timestamp
        | SqlType::TimestampTz
        | SqlType::Date
        | SqlType::Time
        | SqlType::Oid => ValueType::Integer,
        SqlType::Float4 | SqlType::Float8 => ValueType::Double,
        SqlType::Bool => ValueType::Boolean,
        // A numeric is its text (`1.50`), exact and with its scale.
        SqlType::Text
        | SqlType::Name
        | SqlType::Numeric(_)
        | SqlType::Array(_)
        | SqlType::Json
        | SqlType::Jsonb
        | SqlType::Enum(_) => ValueType::String,
        // An interval is `interval_send`'s 16 bytes.
        SqlType::Bytea | SqlType::Uuid | SqlType::Interval => ValueType::Binary,
    }
}

/// A key value as a datum of its column's SQL type (`pk_sql_type`).
pub fn pk_to_datum(value: &PkRef<'_>) -> Datum {
    match value {
        PkRef::Integer(i) => Datum::Int(*i),
        PkRef::String(s) => Datum::Text(s.as_ref().to_owned()),
        PkRef::Binary(b) => Datum::Bytes(b.as_ref().to_vec()),
    }
}

/// An attribute value as a datum of its type's SQL type (`value_sql_type`).
pub fn value_to_datum(value: ValueRef<'_>) -> Datum {
    match value {
        ValueRef::Integer(i) => Datum::Int(i),
        ValueRef::Double(d) => Datum::Float(d),
        ValueRef::Boolean(b) => Datum::Bool(b),
        ValueRef::String(s) => Datum::Text(s.to_owned()),
        ValueRef::Binary(b) => Datum::Bytes(b.to_vec()),
    }
}

fn invalid(ty: &str, value: &str) -> SqlError {
    SqlError::new(
        SqlState::InvalidTextRepresentation,
        format!("invalid input syntax for type {ty}: \"{value}\""),
    )
}

fn mismatch(expected: &str, datum: &Datum) -> SqlError {
    SqlError::new(
        SqlState::DatatypeMismatch,
        format!("value {} is not of type {expected}", render(datum)),
    )
}

/// A short rendering of a datum for messages.
pub fn render(datum: &Datum) -> String {
    match datum {
        Datum::Null => "NULL".into(),
        Datum::Bool(b) => b.to_string(),
        Datum::Int(i) => i.to_string(),
        Datum::Float(f) => f.to_string(),
        Datum::Text(t) => format!("'{}'", t.chars().take(64).collect::<String>()),
        Datum::Timestamp(micros) => format!(
            "'{}'",
            datetime::format_timestamp(*micros, None).unwrap_or_else(|_| micros.to_string())
        ),
        Datum::TimestampTz(micros) => format!(
            "'{}'",
            datetime::format_timestamp(*micros, Some(&session_zone::current()))
                .unwrap_or_else(|_| micros.to_string())
        ),
        Datum::Date(days) => format!(
            "'{}'",
            datetime::format_date(*days).unwrap_or_else(|_| days.to_string())
        ),
        Datum::Uuid(bytes) => format!("'{}'", super::pg_uuid::format(bytes)),
        Datum::Time(micros) => format!("'{}'", pg_interval::format_time(*micros)),
        Datum::Interval(i) => format!("'{}'", pg_interval::format(i)),
        Datum::Numeric(n) => pg_numeric::format(n),
        Datum::Array(items) => format!(
            "ARRAY[{}]",
            items.iter().map(render).collect::<Vec<_>>().join(",")
        ),
        Datum::Bytes(b) => format!(
            "'\\x{}'",
            b.iter()
                .take(32)
                .map(|x| format!("{x:02x}"))
                .collect::<String>()
        ),
    }
}

/// A stored date or time Integer of a column declared `ty` in PostgreSQL's text, a
/// `timestamptz` in the session's zone (`2024-03-01 10:00:00+00`, `10:00:00`); `None`
/// if `ty` is no date or time type.
pub fn stored_time_text(stored: i64, ty: SqlType) -> Option<String> {
    match coerce_for_output(Datum::Int(stored), ty) {
        Datum::Timestamp(micros) => datetime::format_timestamp(micros, None).ok(),
        Datum::TimestampTz(micros) => {
            datetime::format_timestamp(micros, Some(&session_zone::current())).ok()
        }
        Datum::Date(days) => datetime::format_date(days).ok(),
        Datum::Time(micros) => Some(pg_interval::format_time(micros)),
        _ => None,
    }
}

/// Parses PostgreSQL's text form of a bytea (`\x` hex).
pub fn parse_bytea(text: &str) -> SqlResult<Vec<u8>> {
    let Some(hex) = text.strip_prefix("\\x") else {
        return Ok(text.as_bytes().to_vec());
    };
    if hex.len() % 2 != 0 {
        return Err(invalid("bytea", text));
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| invalid("bytea", text)))
        .collect()
}

/// Whether `text` is one of `words`, ignoring ASCII case.
fn one_of(text: &str, words: &[&str]) -> bool {
    words.iter().any(|w| text.eq_ignore_ascii_case(w))
}

fn parse_bool(text: &str) -> Option<bool> {
    // Compared without lowercasing into a new string: this runs for every boolean field
    // a COPY loads.
    let text = text.trim();
    if one_of(text, &["t", "true", "yes", "on", "1", "y"]) {
        Some(true)
    } else if one_of(text, &["f", "false", "no", "off", "0", "n"]) {
        Some(false)
    } else {
        None
    }
}

/// Converts a datum to the engine type `ty`, as an assignment to a column of that type.
pub fn datum_to_value(datum: &Datum, ty: ValueType) -> SqlResult<Value> {
    Ok(match (ty, datum) {
        (_, Datum::Null) => {
            return Err(SqlError::new(
                SqlState::NullValueNotAllowed,
                "NULL is not a value",
            ))
        }
        (ValueType::Integer, Datum::Int(i)) => Value::Integer(*i),
        // A date or time is stored as its Integer; `assignment` checked the column's type.
        (ValueType::Integer, Datum::Timestamp(micros) | Datum::TimestampTz(micros)) => {
            Value::Integer(*micros)
        }
        (ValueType::Integer, Datum::Date(days)) => Value::Integer(i64::from(*days)),
        (ValueType::Binary, Datum::Uuid(bytes)) => Value::Binary(bytes.to_vec()),
        (ValueType::Integer, Datum::Time(micros)) => Value::Integer(*micros),
        (ValueType::String, Datum::Array(items)) => Value::String(array_text(items)),
        (ValueType::Binary, Datum::Interval(i)) => Value::Binary(i.to_binary().to_vec()),
        (ValueType::String, Datum::Numeric(n)) => Value::String(pg_numeric::format(n)),
        (ValueType::Double, Datum::Numeric(n)) => Value::Double(pg_numeric::to_f64(n)),
        (ValueType::Integer, Datum::Numeric(n)) => {
            Value::Integer(pg_numeric::to_i64(n).ok_or_else(bigint_out_of_range)?)
        }
        (ValueType::Integer, Datum::Float(f)) => {
            Value::Integer(float_to_bigint(f.round_ties_even())?)
        }
        (ty, Datum::Text(t)) => text_to_value(t, ty)?,
        (ValueType::Double, Datum::Float(f)) => Value::Double(*f),
        (ValueType::Double, Datum::Int(i)) => Value::Double(*i as f64),
        (ValueType::Boolean, Datum::Bool(b)) => Value::Boolean(*b),
        (ValueType::String, Datum::Int(i)) => Value::String(i.to_string()),
        (ValueType::String, Datum::Float(f)) => Value::String(f.to_string()),
        (ValueType::String, Datum::Bool(b)) => Value::String(b.to_string()),
        (ValueType::Binary, Datum::Bytes(b)) => Value::Binary(b.clone()),
        (ty, other) => return Err(mismatch(ty.name(), other)),
    })
}

/// A whole float as a bigint; past i64's range, PostgreSQL's 22003. Callers round: a
/// double rounds half to even (PostgreSQL's float8 to int8), a numeric literal such as
/// 2.5 half away from zero (PostgreSQL's numeric to int8).
pub fn float_to_bigint(whole: f64) -> SqlResult<i64> {
    if !whole.is_finite() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&whole)
    {
        return Err(bigint_out_of_range());
    }
    Ok(whole as i64)
}

fn bigint_out_of_range() -> SqlError {
    SqlError::new(SqlState::NumericValueOutOfRange, "bigint out of range")
}

/// Text as a value of type `ty`, as an assignment of a text literal to such a column.
fn text_to_value(text: &str, ty: ValueType) -> SqlResult<Value> {
    Ok(match ty {
        ValueType::Integer => Value::Integer(parse_bigint(text)?),
        ValueType::Double => Value::Double(parse_float(text)?),
        ValueType::Boolean => {
            Value::Boolean(parse_bool(text).ok_or_else(|| invalid("boolean", text))?)
        }
        ValueType::String => Value::String(text.to_string()),
        ValueType::Binary => Value::Binary(parse_bytea(text)?),
    })
}

fn parse_bigint(text: &str) -> SqlResult<i64> {
    text.trim().parse().map_err(|_| invalid("bigint", text))
}

/// `datum_into_value` of a text datum, for text the caller may only borrow (COPY's
/// fields are slices of its input): only a string value copies it.
pub fn text_into_value(text: Cow<'_, str>, ty: Option<ValueType>) -> SqlResult<Value> {
    match ty {
        Some(ValueType::String) | None => Ok(Value::String(text.into_owned())),
        Some(ty) => text_to_value(&text, ty),
    }
}

/// `datum_into_pk` of a text datum, borrowed where it can be, as `text_into_value`.
pub fn text_into_pk(text: Cow<'_, str>, ty: PkType) -> SqlResult<PkValue> {
    Ok(match ty {
        PkType::String => PkValue::String(text.into_owned()),
        PkType::Integer => PkValue::Integer(parse_bigint(&text)?),
        PkType::Binary => PkValue::Binary(parse_bytea(&text)?),
    })
}

/// The engine value an owned datum is written as: of type `ty` when the column has one,
/// else of the datum's own type. Text and bytes are moved into the value, not copied,
/// which matters per row in COPY and multi-row INSERT.
pub fn datum_into_value(datum: Datum, ty: Option<ValueType>) -> SqlResult<Value> {
    match (ty, datum) {
        (Some(ValueType::String) | None, Datum::Text(text)) => Ok(Value::String(text)),
        (Some(ValueType::Binary) | None, Datum::Bytes(bytes)) => Ok(Value::Binary(bytes)),
        (Some(ty), datum) => datum_to_value(&datum, ty),
        (None, datum) => natural_value(&datum),
    }
}

/// `datum_to_natural_value` for a datum that must be stored: an array, which has no
/// stored form, is 42804.
pub fn natural_value(datum: &Datum) -> SqlResult<Value> {
    let stored = match datum {
        datum if datum.is_own_kind() => None,
        Datum::Array(_) => None,
        datum => datum_to_natural_value(datum),
    };
    stored.ok_or_else(|| match datum {
        Datum::Array(_) => SqlError::new(
            SqlState::DatatypeMismatch,
            "an array can only be stored in a column declared with an array type \
             (an undeclared column has no element type to keep it as)",
        ),
        datum if datum.is_own_kind() => SqlError::new(
            SqlState::DatatypeMismatch,
            "a date, time, interval or uuid can only be stored in a column declared with its type \
             (an undeclared column has no type to keep it as)",
        ),
        _ => SqlError::internal("null value"),
    })
}

/// The engine value a datum is stored as when the column has no known type; `None`
/// for NULL. A date, time or array is its stored form (to compare with a stored
/// cell); only a declared column may be written one (`natural_value`).
pub fn datum_to_natural_value(datum: &Datum) -> Option<Value> {
    Some(match datum {
        Datum::Null => return None,
        Datum::Array(items) => Value::String(array_text(items)),
        Datum::Timestamp(micros) | Datum::TimestampTz(micros) | Datum::Time(micros) => {
            Value::Integer(*micros)
        }
        Datum::Interval(i) => Value::Binary(i.to_binary().to_vec()),
        Datum::Date(days) => Value::Integer(i64::from(*days)),
        Datum::Uuid(bytes) => Value::Binary(bytes.to_vec()),
        Datum::Bool(b) => Value::Boolean(*b),
        Datum::Int(i) => Value::Integer(*i),
        Datum::Float(f) => Value::Double(*f),
        // An undeclared column has no numeric type: it keeps Table Store's Double.
        Datum::Numeric(n) => Value::Double(pg_numeric::to_f64(n)),
        Datum::Text(t) => Value::String(t.clone()),
        Datum::Bytes(b) => Value::Binary(b.clone()),
    })
}

fn parse_float(text: &str) -> SqlResult<f64> {
    // As `parse_bool`, without a lowercased copy. Rust's parser takes "1E5" as "1e5".
    let trimmed = text.trim();
    if one_of(trimmed, &["nan"]) {
        Ok(f64::NAN)
    } else if one_of(trimmed, &["infinity", "inf"]) {
        Ok(f64::INFINITY)
    } else if one_of(trimmed, &["-infinity", "-inf"]) {
        Ok(f64::NEG_INFINITY)
    } else {
        trimmed
            .parse()
            .map_err(|_| invalid("double precision", text))
    }
}

/// Converts a datum to a primary-key value of type `ty`.
pub fn datum_to_pk(datum: &Datum, ty: PkType, column: &str) -> SqlResult<PkValue> {
    match datum {
        Datum::Null => Err(null_in_key(column)),
        other => Ok(match datum_to_value(other, ty.value_type())? {
            Value::Integer(i) => PkValue::Integer(i),
            Value::String(s) => PkValue::String(s),
            Value::Binary(b) => PkValue::Binary(b),
            _ => return Err(mismatch(ty.name(), other)),
        }),
    }
}

/// The error for a NULL given to primary-key column `column`.
pub fn null_in_key(column: &str) -> SqlError {
    SqlError::new(
        SqlState::NotNullViolation,
        format!("null value in primary key column \"{column}\""),
    )
}

/// `datum_to_pk` of an owned datum: text and bytes are moved into the key, not copied.
pub fn datum_into_pk(datum: Datum, ty: PkType, column: &str) -> SqlResult<PkValue> {
    match (ty, datum) {
        (PkType::String, Datum::Text(text)) => Ok(PkValue::String(text)),
        (PkType::Binary, Datum::Bytes(bytes)) => Ok(PkValue::Binary(bytes)),
        (ty, datum) => datum_to_pk(&datum, ty, column),
    }
}

/// Converts a datum to be shown in a column of type `ty`: lossless conversions apply,
/// anything else becomes NULL so one odd cell never fails a whole result.
pub fn coerce_for_output(datum: Datum, ty: SqlType) -> Datum {
    match (ty, datum) {
        (_, Datum::Null) => Datum::Null,
        (SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Oid, d @ Datum::Int(_)) => d,
        (SqlType::Float4 | SqlType::Float8, Datum::Int(i)) => Datum::Float(i as f64),
        (SqlType::Float4 | SqlType::Float8, d @ Datum::Float(_)) => d,
        (SqlType::Bool, d @ Datum::Bool(_)) => d,
        (SqlType::Timestamp, Datum::Int(micros)) => Datum::Timestamp(micros),
        (SqlType::TimestampTz, Datum::Int(micros)) => Datum::TimestampTz(micros),
        (SqlType::Timestamp, d @ Datum::Timestamp(_)) => d,
        (SqlType::TimestampTz, d @ Datum::TimestampTz(_)) => d,
        (SqlType::Date, Datum::Int(days)) => match i32::try_from(days) {
            Ok(days) => Datum::Date(days),
            Err(_) => Datum::Null,
        },
        (SqlType::Date, d @ Datum::Date(_)) => d,
        (SqlType::Uuid, d @ Datum::Uuid(_)) => d,
        (SqlType::Time, Datum::Int(micros)) => Datum::Time(micros),
        (SqlType::Array(of), Datum::Text(t)) => match cast_array(Datum::Text(t), of) {
            Ok(array) => array,
            Err(_) => Datum::Null,
        },
        (SqlType::Time, d @ Datum::Time(_)) | (SqlType::Interval, d @ Datum::Interval(_)) => d,
        (SqlType::Interval, Datum::Bytes(bytes)) => {
            match pg_interval::Interval::from_binary(&bytes) {
                Some(i) => Datum::Interval(i),
                None => Datum::Null,
            }
        }
        (SqlType::Uuid, Datum::Bytes(bytes)) => match <[u8; 16]>::try_from(bytes) {
            Ok(bytes) => Datum::Uuid(bytes),
            Err(_) => Datum::Null,
        },
        (SqlType::Numeric(_), d @ Datum::Numeric(_)) => d,
        (SqlType::Numeric(_), Datum::Text(t)) => match pg_numeric::parse(&t) {
            Ok(n) => Datum::Numeric(n),
            Err(_) => Datum::Null,
        },
        (SqlType::Numeric(_), Datum::Int(i)) => Datum::Numeric(BigDecimal::from(i)),
        (SqlType::Float4 | SqlType::Float8, Datum::Numeric(n)) => {
            Datum::Float(pg_numeric::to_f64(&n))
        }
        (SqlType::Text, Datum::Numeric(n)) => Datum::Text(pg_numeric::format(&n)),
        (SqlType::Bytea, d @ Datum::Bytes(_)) => d,
        (SqlType::Bytea, Datum::Text(t)) => Datum::Bytes(t.into_bytes()),
        (SqlType::Text | SqlType::Json | SqlType::Jsonb | SqlType::Enum(_), d @ Datum::Text(_)) => {
            d
        }
        (SqlType::Text, Datum::Int(i)) => Datum::Text(i.to_string()),
        // As PostgreSQL casts them to text: a mixed schema-free column's cells (§3 of
        // docs/table-store.md) show so.
        (SqlType::Text, Datum::Float(f)) => Datum::Text(super::pg_float_text::float_text(f, false)),
        (SqlType::Text, Datum::Bool(b)) => Datum::Text(if b { "true" } else { "false" }.into()),
        (SqlType::Text, Datum::Bytes(b)) => Datum::Text(format!(
            "\\x{}",
            b.iter().map(|x| format!("{x:02x}")).collect::<String>()
        )),
        _ => Datum::Null,
    }
}

/// SQL comparison of two non-NULL datums; `None` when they cannot be compared.
pub fn compare(a: &Datum, b: &Datum) -> Option<Ordering> {
    match (a, b) {
        (Datum::Int(x), Datum::Int(y)) => Some(x.cmp(y)),
        (Datum::Float(x), Datum::Float(y)) => x.partial_cmp(y),
        (Datum::Int(x), Datum::Float(y)) => (*x as f64).partial_cmp(y),
        (Datum::Float(x), Datum::Int(y)) => x.partial_cmp(&(*y as f64)),
        (Datum::Text(x), Datum::Text(y)) => Some(x.cmp(y)),
        (Datum::Bool(x), Datum::Bool(y)) => Some(x.cmp(y)),
        (Datum::Bytes(x), Datum::Bytes(y)) => Some(x.cmp(y)),
        (Datum::Timestamp(x), Datum::Timestamp(y))
        | (Datum::TimestampTz(x), Datum::TimestampTz(y)) => Some(x.cmp(y)),
        (Datum::Date(x), Datum::Date(y)) => Some(x.cmp(y)),
        (Datum::Uuid(x), Datum::Uuid(y)) => Some(x.cmp(y)),
        (Datum::Time(x), Datum::Time(y)) => Some(x.cmp(y)),
        (Datum::Interval(x), Datum::Interval(y)) => {
            Some(pg_interval::span(x).cmp(&pg_interval::span(y)))
        }
        // A numeric meets an integer exactly, a double as a double (PostgreSQL casts the
        // numeric to float8 there), text as the numeric it reads as.
        (Datum::Numeric(x), Datum::Numeric(y)) => Some(x.cmp(y)),
        (Datum::Numeric(x), Datum::Int(y)) => Some(x.cmp(&BigDecimal::from(*y))),
        (Datum::Int(x), Datum::Numeric(y)) => Some(BigDecimal::from(*x).cmp(y)),
        (Datum::Numeric(x), Datum::Float(_)) => compare(&Datum::Float(pg_numeric::to_f64(x)), b),
        (Datum::Float(_), Datum::Numeric(y)) => compare(a, &Datum::Float(pg_numeric::to_f64(y))),
        (Datum::Numeric(_), Datum::Text(t)) => {
            compare(a, &Datum::Numeric(pg_numeric::parse(t).ok()?))
        }
        (Datum::Text(t), Datum::Numeric(_)) => {
            compare(&Datum::Numeric(pg_numeric::parse(t).ok()?), b)
        }
        // A date compares as its midnight, a timestamp with a timestamptz as the
        // instant it names in the session's zone, as PostgreSQL casts them.
        (Datum::Date(_), Datum::Timestamp(_) | Datum::TimestampTz(_))
        | (Datum::Timestamp(_), Datum::TimestampTz(_)) => {
            compare(&cast_temporal(a.clone(), datum_kind(b)?).ok()?, b)
        }
        (Datum::Timestamp(_) | Datum::TimestampTz(_), Datum::Date(_))
        | (Datum::TimestampTz(_), Datum::Timestamp(_)) => {
            compare(a, &cast_temporal(b.clone(), datum_kind(a)?).ok()?)
        }
        (Datum::Text(t), Datum::Int(_)) => t
            .trim()
            .parse::<i64>()
            .ok()
            .and_then(|x| compare(&Datum::Int(x), b)),
        (Datum::Int(_), Datum::Text(t)) => t
            .trim()
            .parse::<i64>()
            .ok()
            .and_then(|y| compare(a, &Datum::Int(y))),
        (Datum::Text(t), Datum::Float(_)) => t
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(|x| compare(&Datum::Float(x), b)),
        (Datum::Float(_), Datum::Text(t)) => t
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(|y| compare(a, &Datum::Float(y))),
        _ => None,
    }
}

/// Converts a datum to the SQL type of a parameter or column, for binding.
pub fn cast(datum: Datum, ty: SqlType) -> SqlResult<Datum> {
    if datum == Datum::Null {
        return Ok(Datum::Null);
    }
    if ty.is_temporal()
        || matches!(
            datum,
            Datum::Timestamp(_) | Datum::TimestampTz(_) | Datum::Date(_)
        )
    {
        return cast_temporal(datum, ty);
    }
    if ty == SqlType::Uuid || matches!(datum, Datum::Uuid(_)) {
        return cast_uuid(datum, ty);
    }
    if matches!(ty, SqlType::Numeric(_)) || matches!(datum, Datum::Numeric(_)) {
        return cast_numeric(datum, ty);
    }
    if matches!(ty, SqlType::Time | SqlType::Interval)
        || matches!(datum, Datum::Time(_) | Datum::Interval(_))
    {
        return cast_clock(datum, ty);
    }
    if let Some(kind) = ty.json_kind() {
        return json_input(datum, kind);
    }
    if let SqlType::Array(of) = ty {
        return cast_array(datum, of);
    }
    let cast = value_to_datum(datum_to_value(&datum, sql_value_type(ty))?.as_ref());
    if let (Datum::Float(f), SqlType::Float4) = (&cast, ty) {
        return single_precision(*f).map(Datum::Float);
    }
    if let (Datum::Int(i), Some(width)) = (&cast, integer_width(ty)) {
        if !width.holds(*i) {
            return Err(SqlError::new(
                SqlState::NumericValueOutOfRange,
                format!("{} out of range", width.sql_name()),
            ));
        }
    }
    Ok(cast)
}

/// A cast to or from a date or time, as PostgreSQL's. A `timestamptz` is read, shown
/// and converted to or from a wall-clock `timestamp` or a date in the session's zone.
fn cast_temporal(datum: Datum, ty: SqlType) -> SqlResult<Datum> {
    let zone = session_zone::current();
    Ok(match (ty, datum) {
        (SqlType::Timestamp, Datum::Text(t)) => {
            Datum::Timestamp(datetime::parse_timestamp(&t, None)?)
        }
        (SqlType::TimestampTz, Datum::Text(t)) => {
            Datum::TimestampTz(datetime::parse_timestamp(&t, Some(&zone))?)
        }
        (SqlType::Date, Datum::Text(t)) => Datum::Date(datetime::parse_date(&t)?),
        (SqlType::Timestamp, d @ Datum::Timestamp(_))
        | (SqlType::TimestampTz, d @ Datum::TimestampTz(_))
        | (SqlType::Date, d @ Datum::Date(_)) => d,
        (SqlType::Timestamp, Datum::TimestampTz(micros)) => {
            Datum::Timestamp(datetime::to_local(micros, &zone)?)
        }
        (SqlType::TimestampTz, Datum::Timestamp(micros)) => {
            Datum::TimestampTz(datetime::from_local(micros, &zone)?)
        }
        (SqlType::Timestamp, Datum::Date(days)) => {
            Datum::Timestamp(datetime::timestamp_of_date(days)?)
        }
        (SqlType::TimestampTz, Datum::Date(days)) => Datum::TimestampTz(datetime::from_local(
            datetime::timestamp_of_date(days)?,
            &zone,
        )?),
        (SqlType::Date, Datum::Timestamp(micros)) => {
            Datum::Date(datetime::date_of_timestamp(micros)?)
        }
        (SqlType::Date, Datum::TimestampTz(micros)) => Datum::Date(datetime::date_of_timestamp(
            datetime::to_local(micros, &zone)?,
        )?),
        (SqlType::Text, Datum::Date(days)) => Datum::Text(datetime::format_date(days)?),
        (SqlType::Text, Datum::Timestamp(micros)) => {
            Datum::Text(datetime::format_timestamp(micros, None)?)
        }
        (SqlType::Text, Datum::TimestampTz(micros)) => {
            Datum::Text(datetime::format_timestamp(micros, Some(&zone))?)
        }
        (ty, other) => {
            return Err(SqlError::new(
                SqlState::CannotCoerce,
                format!("cannot cast {} to {}", render(&other), ty.name()),
            ))
        }
    })
}

/// The date or time type of a datum of one, to cast another to it.
fn datum_kind(datum: &Datum) -> Option<SqlType> {
    match datum {
        Datum::Timestamp(_) => Some(SqlType::Timestamp),
        Datum::TimestampTz(_) => Some(SqlType::TimestampTz),
        Datum::Date(_) => Some(SqlType::Date),
        _ => None,
    }
}

/// A cast to or from a uuid: from and to text only.
fn cast_uuid(datum: Datum, ty: SqlType) -> SqlResult<Datum> {
    Ok(match (ty, datum) {
        (SqlType::Uuid, Datum::Text(t)) => Datum::Uuid(super::pg_uuid::parse(&t)?),
        (SqlType::Uuid, d @ Datum::Uuid(_)) => d,
        (SqlType::Text, Datum::Uuid(bytes)) => Datum::Text(super::pg_uuid::format(&bytes)),
        (ty, other) => {
            return Err(SqlError::new(
                SqlState::CannotCoerce,
                format!("cannot cast {} to {}", render(&other), ty.name()),
            ))
        }
    })
}

/// A cast to or from a numeric, as PostgreSQL's: exact from integers and text, a
/// double by its shortest text; to integers rounded half away from zero; fitted to a
/// `NUMERIC(p,s)` (`pg_numeric::fit`).
fn cast_numeric(datum: Datum, ty: SqlType) -> SqlResult<Datum> {
    let refused = |other: &Datum| {
        SqlError::new(
            SqlState::CannotCoerce,
            format!("cannot cast {} to {}", render(other), ty.name()),
        )
    };
    let value = match (ty, datum) {
        (SqlType::Numeric(_), Datum::Numeric(n)) => n,
        (SqlType::Numeric(_), Datum::Int(i)) => BigDecimal::from(i),
        (SqlType::Numeric(_), Datum::Text(t)) => pg_numeric::parse(&t)?,
        (SqlType::Numeric(_), Datum::Float(f)) => pg_numeric::from_f64(f).ok_or_else(|| {
            SqlError::unsupported(format!(
                "the numeric value {f} is not supported: pgwide's numerics are finite"
            ))
        })?,
        (SqlType::Text, Datum::Numeric(n)) => return Ok(Datum::Text(pg_numeric::format(&n))),
        (SqlType::Float8, Datum::Numeric(n)) => return Ok(Datum::Float(pg_numeric::to_f64(&n))),
        (SqlType::Float4, Datum::Numeric(n)) => {
            return single_precision(pg_numeric::to_f64(&n)).map(Datum::Float)
        }
        (SqlType::Int2 | SqlType::Int4 | SqlType::Int8, Datum::Numeric(n)) => {
            let whole = pg_numeric::to_i64(&n).ok_or_else(|| out_of_range(ty))?;
            if integer_width(ty).is_some_and(|width| !width.holds(whole)) {
                return Err(out_of_range(ty));
            }
            return Ok(Datum::Int(whole));
        }
        (_, other) => return Err(refused(&other)),
    };
    Ok(Datum::Numeric(match ty {
        SqlType::Numeric(Some(typmod)) => pg_numeric::fit(&value, typmod)?,
        _ => value,
    }))
}

/// A cast to an array: text read as PostgreSQL's array literal (`{1,2,NULL}`), each
/// element cast to the element type; an array's elements cast one by one.
fn cast_array(datum: Datum, of: ArrayOf) -> SqlResult<Datum> {
    let element = of.element();
    let items = match datum {
        Datum::Text(text) => super::pg_array_text::parse(&text)?
            .into_iter()
            .map(|item| item.map_or(Ok(Datum::Null), |t| cast(Datum::Text(t), element)))
            .collect::<SqlResult<Vec<_>>>()?,
        Datum::Array(items) => items
            .into_iter()
            .map(|item| cast(item, element))
            .collect::<SqlResult<Vec<_>>>()?,
        other => {
            return Err(SqlError::new(
                SqlState::CannotCoerce,
                format!(
                    "cannot cast {} to {}",
                    render(&other),
                    SqlType::Array(of).name()
                ),
            ))
        }
    };
    Ok(Datum::Array(items))
}

/// An array's stored text: PostgreSQL's array literal, each element in a text form
/// its element type reads back exactly.
fn array_text(items: &[Datum]) -> String {
    let texts: Vec<Option<String>> = items
        .iter()
        .map(|item| match item {
            Datum::Null => None,
            Datum::Float(f) => Some(format!("{f:?}")),
            Datum::Bytes(b) => Some(format!(
                "\\x{}",
                b.iter().map(|x| format!("{x:02x}")).collect::<String>()
            )),
            Datum::Bool(b) => Some(if *b { "t" } else { "f" }.to_string()),
            Datum::Int(i) => Some(i.to_string()),
            Datum::Text(t) => Some(t.clone()),
            // Dates and times were read within the range their text covers, so the
            // fallback to the SQL literal is never taken.
            Datum::Date(days) => {
                Some(datetime::format_date(*days).unwrap_or_else(|_| render(item)))
            }
            Datum::Timestamp(micros) => {
                Some(datetime::format_timestamp(*micros, None).unwrap_or_else(|_| render(item)))
            }
            // In UTC with its offset: read back in any session's zone, the same instant.
            Datum::TimestampTz(micros) => Some(
                datetime::format_timestamp(*micros, Some(&datetime::TimeZone::default()))
                    .unwrap_or_else(|_| render(item)),
            ),
            Datum::Uuid(bytes) => Some(super::pg_uuid::format(bytes)),
            // Arrays hold only the types `ArrayOf` names; no other reaches here.
            other => Some(render(other)),
        })
        .collect();
    super::pg_array_text::format(texts.iter().map(Option::as_deref))
}

/// A cast to or from a `time` or `interval`: from and to text only.
fn cast_clock(datum: Datum, ty: SqlType) -> SqlResult<Datum> {
    Ok(match (ty, datum) {
        (SqlType::Time, Datum::Text(t)) => Datum::Time(pg_interval::parse_time(&t)?),
        (SqlType::Interval, Datum::Text(t)) => Datum::Interval(pg_interval::parse(&t)?),
        (SqlType::Time, d @ Datum::Time(_)) | (SqlType::Interval, d @ Datum::Interval(_)) => d,
        (SqlType::Text, Datum::Time(micros)) => Datum::Text(pg_interval::format_time(micros)),
        (SqlType::Text, Datum::Interval(i)) => Datum::Text(pg_interval::format(&i)),
        (ty, other) => {
            return Err(SqlError::new(
                SqlState::CannotCoerce,
                format!("cannot cast {} to {}", render(&other), ty.name()),
            ))
        }
    })
}

/// Text read as a `json` or `jsonb` value (`pg_json::input`); JSON comes only from text.
fn json_input(datum: Datum, kind: super::pg_json::JsonKind) -> SqlResult<Datum> {
    match datum {
        Datum::Text(text) => super::pg_json::input(&text, kind).map(Datum::Text),
        other => Err(SqlError::new(
            SqlState::CannotCoerce,
            format!("cannot cast {} to {}", render(&other), kind.name()),
        )),
    }
}

fn out_of_range(ty: SqlType) -> SqlError {
    SqlError::new(
        SqlState::NumericValueOutOfRange,
        format!("{} out of range", ty.name()),
    )
}

/// A value assigned to a column declared `ty` (INSERT, UPDATE, COPY), as PostgreSQL's
/// assignment casts allow: a date or time only into a date or time column (a date
/// becoming its midnight, a time its date) or into text, a uuid, `time` or interval
/// only into its own type or text; text read into JSON, array, `time` and interval
/// columns; nothing else into one of those.
pub fn assignment(datum: Datum, ty: SqlType) -> SqlResult<Datum> {
    if datum != Datum::Null
        && (matches!(ty, SqlType::Numeric(_)) || matches!(datum, Datum::Numeric(_)))
    {
        return numeric_assignment(datum, ty);
    }
    if datum == Datum::Null || !(datum.is_own_kind() || ty.is_distinct_kind()) {
        return Ok(datum);
    }
    match (ty, &datum) {
        (SqlType::Json, Datum::Text(_)) => json_input(datum, super::pg_json::JsonKind::Json),
        (SqlType::Jsonb, Datum::Text(_)) => json_input(datum, super::pg_json::JsonKind::Jsonb),
        (SqlType::Array(of), Datum::Text(_) | Datum::Array(_)) => cast_array(datum, of),
        (SqlType::Time, Datum::Time(_) | Datum::Text(_))
        | (SqlType::Interval, Datum::Interval(_) | Datum::Text(_))
        | (SqlType::Text, Datum::Time(_) | Datum::Interval(_)) => cast_clock(datum, ty),
        (SqlType::Uuid | SqlType::Text, Datum::Uuid(_)) => cast_uuid(datum, ty),
        // Into text as its text, as PostgreSQL's assignment casts to text allow.
        (
            SqlType::Timestamp | SqlType::TimestampTz | SqlType::Date | SqlType::Text,
            Datum::Timestamp(_) | Datum::TimestampTz(_) | Datum::Date(_),
        ) => cast_temporal(datum, ty),
        (ty, other) => Err(SqlError::new(
            SqlState::DatatypeMismatch,
            format!(
                "a column of type {} cannot take the value {}",
                ty.name(),
                render(other)
            ),
        )),
    }
}

/// A value assigned to or from a numeric: a number or its text into a numeric column,
/// a numeric into a number or text column (PostgreSQL's assignment casts); a boolean,
/// bytea, date, time or uuid is 42804 either way.
fn numeric_assignment(datum: Datum, ty: SqlType) -> SqlResult<Datum> {
    let allowed = match ty {
        SqlType::Numeric(_) => matches!(
            datum,
            Datum::Numeric(_) | Datum::Int(_) | Datum::Float(_) | Datum::Text(_)
        ),
        _ => matches!(
            ty,
            SqlType::Int2
                | SqlType::Int4
                | SqlType::Int8
                | SqlType::Float4
                | SqlType::Float8
                | SqlType::Text
        ),
    };
    if !allowed {
        return Err(SqlError::new(
            SqlState::DatatypeMismatch,
            format!(
                "a column of type {} cannot take the value {}",
                ty.name(),
                render(&datum)
            ),
        ));
    }
    cast_numeric(datum, ty)
}

/// The engine value written to a column declared `ty` (`None`: a column of no known
/// type, which keeps the datum's own), after PostgreSQL's assignment rules.
pub fn column_value(datum: Datum, ty: Option<SqlType>) -> SqlResult<Value> {
    match ty {
        Some(ty) => datum_into_value(assignment(datum, ty)?, Some(sql_value_type(ty))),
        None => datum_into_value(datum, None),
    }
}

/// The value written to attribute `column` of `table`: `column_value`, except in a
/// schema-free column (`TableMeta::is_schema_free`), where a value its type cannot hold
/// as the same value (`'large'`, `4.5` or `true` in a column of Integers) keeps its own
/// type, and the column becomes mixed (docs/table-store.md §3). Text that converts is
/// converted, as an untyped literal is.
pub fn attribute_value(
    table: &TableMeta,
    column: &str,
    datum: Datum,
    ty: Option<SqlType>,
) -> SqlResult<Value> {
    let Some(declared) = ty.filter(|_| table.is_schema_free(column)) else {
        return column_value(datum, ty);
    };
    let converted = column_value(datum.clone(), Some(declared));
    if let Ok(value) = &converted {
        // Text is read as the column's type when it can be, as an untyped literal is.
        if matches!(datum, Datum::Text(_)) {
            return converted;
        }
        let kept = coerce_for_output(value_to_datum(value.as_ref()), declared);
        if compare(&kept, &datum) == Some(Ordering::Equal) {
            return converted;
        }
    }
    // A value with no stored type of its own (a timestamp, an array) is converted if
    // the column's type can take it.
    natural_value(&datum).or_else(|own| converted.map_err(|_| own))
}

/// The key value written to key column `k` of `table`, declared `declared`. Only a date,
/// time or uuid takes a copy to convert; other keys convert in place.
pub fn key_value(
    datum: &Datum,
    declared: SqlType,
    table: &TableMeta,
    k: usize,
) -> SqlResult<PkValue> {
    let column = &table.pk[k];
    if declared.is_distinct_kind() || datum.is_own_kind() {
        return datum_to_pk(
            &assignment(datum.clone(), declared)?,
            column.ty,
            &column.name,
        );
    }
    datum_to_pk(datum, column.ty, &column.name)
}

/// A double rounded to the nearest `real`, or 22003 past a real's range, as PostgreSQL's
/// float8 to float4 conversion.
pub fn single_precision(value: f64) -> SqlResult<f64> {
    crate::engine::single_precision(value).map_err(|overflow| {
        SqlError::new(
            SqlState::NumericValueOutOfRange,
            format!(
                "value out of range: {}",
                if overflow { "overflow" } else { "underflow" }
            ),
        )
    })
}

/// The range a `SMALLINT` or `INTEGER` keeps: stored as Table Store's 64-bit Integer,
/// a column of one has its writes checked against it, and a cast to one its value.
pub fn integer_width(ty: SqlType) -> Option<IntegerWidth> {
    match ty {
        SqlType::Int2 => Some(IntegerWidth::Int16),
        SqlType::Int4 => Some(IntegerWidth::Int32),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALUE_TYPES: [ValueType; 5] = [
        ValueType::String,
        ValueType::Integer,
        ValueType::Double,
        ValueType::Boolean,
        ValueType::Binary,
    ];

    /// Moving a datum in gives what converting a borrowed one gives, errors included.
    #[test]
    fn owned_conversion_matches_the_borrowed_one() {
        let datums = [
            Datum::Text("42".into()),
            Datum::Text("x".into()),
            Datum::Bytes(vec![0, 255]),
            Datum::Int(7),
            Datum::Float(2.5),
            Datum::Bool(true),
            Datum::Null,
        ];
        for datum in &datums {
            for ty in VALUE_TYPES {
                let borrowed = datum_to_value(datum, ty).map_err(|e| e.code());
                let owned = datum_into_value(datum.clone(), Some(ty)).map_err(|e| e.code());
                assert_eq!(owned, borrowed, "{datum:?} as {ty:?}");
            }
            let natural = datum_to_natural_value(datum);
            let owned = datum_into_value(datum.clone(), None).ok();
            assert_eq!(owned, natural, "{datum:?} untyped");
            for ty in [PkType::String, PkType::Integer, PkType::Binary] {
                let borrowed = datum_to_pk(datum, ty, "k").map_err(|e| e.code());
                let owned = datum_into_pk(datum.clone(), ty, "k").map_err(|e| e.code());
                assert_eq!(owned, borrowed, "{datum:?} as a {ty:?} key");
            }
        }
    }

    /// Borrowed text converts as the same text in a datum does, errors included.
    #[test]
    fn text_conversion_matches_the_datum_one() {
        let texts = [
            "42",
            " -7 ",
            "x",
            "2.5",
            "1e3",
            "Infinity",
            "TRUE",
            "off",
            "",
            "\\x00ff",
            "\\x0",
            "9223372036854775808",
        ];
        for text in texts {
            for ty in VALUE_TYPES.into_iter().map(Some).chain([None]) {
                let datum = datum_into_value(Datum::Text(text.into()), ty).map_err(|e| e.code());
                let text_value = text_into_value(Cow::Borrowed(text), ty).map_err(|e| e.code());
                assert_eq!(text_value, datum, "{text:?} as {ty:?}");
            }
            for ty in [PkType::String, PkType::Integer, PkType::Binary] {
                let datum = datum_into_pk(Datum::Text(text.into()), ty, "k").map_err(|e| e.code());
                let text_key = text_into_pk(Cow::Borrowed(text), ty).map_err(|e| e.code());
                assert_eq!(text_key, datum, "{text:?} as a {ty:?} key");
            }
        }
    }

    /// Booleans and doubles are read case-insensitively and trimmed, as PostgreSQL reads
    /// them; anything else is 22P02.
    #[test]
    fn booleans_and_doubles_from_text() {
        for (text, expected) in [
            (" TRUE ", Some(true)),
            ("Yes", Some(true)),
            ("1", Some(true)),
            ("oFf", Some(false)),
            ("n", Some(false)),
            ("truth", None),
            ("", None),
        ] {
            assert_eq!(parse_bool(text), expected, "{text:?}");
        }
        assert_eq!(parse_float(" -Infinity").ok(), Some(f64::NEG_INFINITY));
        assert_eq!(parse_float("INF").ok(), Some(f64::INFINITY));
        assert!(parse_float("NaN").is_ok_and(f64::is_nan));
        assert_eq!(parse_float("1E3 ").ok(), Some(1000.0));
        assert_eq!(parse_float("-2.5e-1").ok(), Some(-0.25));
        assert_eq!(
            parse_float("1.5x").map_err(|e| e.code()),
            Err("22P02".into())
        );
    }
}
