//! Byte encodings: the order-preserving primary-key codec, the key layout of rows and
//! cells, and attribute values.
//!
//! Key layout (one ordered keyspace, like TiKV's memcomparable keys):
//! - `0x00 ...` catalog records (see `catalog`).
//! - `0x01 table_id:u32 pk` + `0x00` — the row marker, so a row without attributes exists.
//! - `0x01 table_id:u32 pk` + `0x01 column 0x00 !version:u64` — one cell version; the
//!   inverted version makes the newest sort first, and all of a row's keys are contiguous.
//!
//! Each PK column encodes as a tag byte (`0x00` INF_MIN, `0x01` a value, `0xFF` INF_MAX)
//! then, for Integer, 8 big-endian bytes with the sign bit flipped (negatives first), and
//! for String/Binary the bytes with `0x00` escaped as `0x00 0xFF`, ended by `0x00 0x01`.
//! The encoding is prefix-free, so comparing encoded keys compares PKs column by column.

use super::error::{EngineError, EngineResult};
use super::types::{PkBound, PkType, PkValue, Value};

pub(crate) const CATALOG_PREFIX: u8 = 0x00;
pub(crate) const DATA_PREFIX: u8 = 0x01;
const MARKER_SUFFIX: u8 = 0x00;
const CELL_SUFFIX: u8 = 0x01;

const TAG_MIN: u8 = 0x00;
const TAG_VALUE: u8 = 0x01;
const TAG_MAX: u8 = 0xFF;

/// Appends one PK column value.
pub fn encode_pk_value(out: &mut Vec<u8>, value: &PkValue) {
    out.push(TAG_VALUE);
    match value {
        PkValue::Integer(i) => out.extend_from_slice(&((*i as u64) ^ (1 << 63)).to_be_bytes()),
        PkValue::String(s) => encode_bytes(out, s.as_bytes()),
        PkValue::Binary(b) => encode_bytes(out, b),
    }
}

fn encode_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

/// Appends one PK bound (a value or INF_MIN/INF_MAX).
pub fn encode_pk_bound(out: &mut Vec<u8>, bound: &PkBound) {
    match bound {
        PkBound::InfMin => out.push(TAG_MIN),
        PkBound::InfMax => out.push(TAG_MAX),
        PkBound::Value(v) => encode_pk_value(out, v),
    }
}

/// Encodes a whole primary key.
pub fn encode_pk(pk: &[PkValue]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pk.len() * 10);
    for v in pk {
        encode_pk_value(&mut out, v);
    }
    out
}

/// Decodes one PK column value of type `ty` from the front of `bytes`; returns the value
/// and the number of bytes it took.
pub fn decode_pk_value(bytes: &[u8], ty: PkType) -> EngineResult<(PkValue, usize)> {
    let corrupt = || EngineError::Corrupt("truncated primary key".into());
    if bytes.first() != Some(&TAG_VALUE) {
        return Err(corrupt());
    }
    let body = &bytes[1..];
    match ty {
        PkType::Integer => {
            let raw: [u8; 8] = body
                .get(..8)
                .ok_or_else(corrupt)?
                .try_into()
                .map_err(|_| corrupt())?;
            let i = (u64::from_be_bytes(raw) ^ (1 << 63)) as i64;
            Ok((PkValue::Integer(i), 9))
        }
        PkType::String | PkType::Binary => {
            let mut raw = Vec::new();
            let mut i = 0;
            loop {
                let b = *body.get(i).ok_or_else(corrupt)?;
                if b == 0 {
                    match body.get(i + 1) {
                        Some(0xFF) => raw.push(0),
                        Some(0x01) => break,
                        _ => return Err(corrupt()),
                    }
                    i += 2;
                } else {
                    raw.push(b);
                    i += 1;
                }
            }
            let value = if ty == PkType::String {
                PkValue::String(
                    String::from_utf8(raw)
                        .map_err(|_| EngineError::Corrupt("non-UTF-8 string key".into()))?,
                )
            } else {
                PkValue::Binary(raw)
            };
            Ok((value, 1 + i + 2))
        }
    }
}

/// Decodes a whole primary key of the given column types; returns it and its length.
pub fn decode_pk(bytes: &[u8], types: &[PkType]) -> EngineResult<(Vec<PkValue>, usize)> {
    let mut pk = Vec::with_capacity(types.len());
    let mut at = 0;
    for &ty in types {
        let (v, used) = decode_pk_value(&bytes[at..], ty)?;
        pk.push(v);
        at += used;
    }
    Ok((pk, at))
}

/// `0x01 table_id` — the prefix of every key of a table.
pub fn table_prefix(table_id: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.push(DATA_PREFIX);
    out.extend_from_slice(&table_id.to_be_bytes());
    out
}

/// The prefix of every key of one row.
pub fn row_prefix(table_id: u32, pk: &[PkValue]) -> Vec<u8> {
    let mut out = table_prefix(table_id);
    for v in pk {
        encode_pk_value(&mut out, v);
    }
    out
}

/// The key a range bound maps to: the table prefix then each column's bound.
pub fn bound_key(table_id: u32, bound: &[PkBound]) -> Vec<u8> {
    let mut out = table_prefix(table_id);
    for b in bound {
        encode_pk_bound(&mut out, b);
    }
    out
}

pub fn marker_key(row_prefix: &[u8]) -> Vec<u8> {
    let mut key = row_prefix.to_vec();
    key.push(MARKER_SUFFIX);
    key
}

/// The prefix of every version of one cell.
pub fn column_prefix(row_prefix: &[u8], column: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(row_prefix.len() + column.len() + 10);
    key.extend_from_slice(row_prefix);
    key.push(CELL_SUFFIX);
    key.extend_from_slice(column.as_bytes());
    key.push(0x00);
    key
}

pub fn cell_key(row_prefix: &[u8], column: &str, version: i64) -> Vec<u8> {
    let mut key = column_prefix(row_prefix, column);
    key.extend_from_slice(&(u64::MAX - version as u64).to_be_bytes());
    key
}

/// What the part of a key after the row prefix holds.
#[derive(Debug, PartialEq)]
pub enum KeySuffix<'a> {
    Marker,
    Cell { column: &'a str, version: i64 },
}

pub fn decode_suffix(suffix: &[u8]) -> EngineResult<KeySuffix<'_>> {
    let corrupt = || EngineError::Corrupt("bad cell key".into());
    match suffix.first() {
        Some(&MARKER_SUFFIX) if suffix.len() == 1 => Ok(KeySuffix::Marker),
        Some(&CELL_SUFFIX) => {
            let rest = &suffix[1..];
            let nul = rest.iter().position(|&b| b == 0).ok_or_else(corrupt)?;
            let column = std::str::from_utf8(&rest[..nul]).map_err(|_| corrupt())?;
            let raw: [u8; 8] = rest
                .get(nul + 1..)
                .ok_or_else(corrupt)?
                .try_into()
                .map_err(|_| corrupt())?;
            let version = (u64::MAX - u64::from_be_bytes(raw)) as i64;
            Ok(KeySuffix::Cell { column, version })
        }
        _ => Err(corrupt()),
    }
}

const VALUE_STRING: u8 = 1;
const VALUE_INTEGER: u8 = 2;
const VALUE_DOUBLE: u8 = 3;
const VALUE_BOOLEAN: u8 = 4;
const VALUE_BINARY: u8 = 5;

pub fn encode_value(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.size() + 1);
    match value {
        Value::String(s) => {
            out.push(VALUE_STRING);
            out.extend_from_slice(s.as_bytes());
        }
        Value::Integer(i) => {
            out.push(VALUE_INTEGER);
            out.extend_from_slice(&i.to_be_bytes());
        }
        Value::Double(d) => {
            out.push(VALUE_DOUBLE);
            out.extend_from_slice(&d.to_bits().to_be_bytes());
        }
        Value::Boolean(b) => {
            out.push(VALUE_BOOLEAN);
            out.push(u8::from(*b));
        }
        Value::Binary(b) => {
            out.push(VALUE_BINARY);
            out.extend_from_slice(b);
        }
    }
    out
}

pub fn decode_value(bytes: &[u8]) -> EngineResult<Value> {
    let corrupt = || EngineError::Corrupt("bad cell value".into());
    let (&tag, body) = bytes.split_first().ok_or_else(corrupt)?;
    let eight = || -> EngineResult<[u8; 8]> { body.try_into().map_err(|_| corrupt()) };
    Ok(match tag {
        VALUE_STRING => Value::String(String::from_utf8(body.to_vec()).map_err(|_| corrupt())?),
        VALUE_INTEGER => Value::Integer(i64::from_be_bytes(eight()?)),
        VALUE_DOUBLE => Value::Double(f64::from_bits(u64::from_be_bytes(eight()?))),
        VALUE_BOOLEAN => Value::Boolean(body.first().copied().ok_or_else(corrupt)? != 0),
        VALUE_BINARY => Value::Binary(body.to_vec()),
        _ => return Err(corrupt()),
    })
}

/// The row marker's value: a revision bumped by every write, so a conditional write can
/// check with one compare-and-swap that the row did not change since it was read, and the
/// time of the last write, which keeps a row without attributes alive under a TTL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowMarker {
    pub revision: u64,
    pub last_write_ms: i64,
}

impl RowMarker {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16);
        out.extend_from_slice(&self.revision.to_be_bytes());
        out.extend_from_slice(&self.last_write_ms.to_be_bytes());
        out
    }

    pub fn decode(bytes: &[u8]) -> EngineResult<Self> {
        let corrupt = || EngineError::Corrupt("bad row marker".into());
        let revision: [u8; 8] = bytes
            .get(..8)
            .ok_or_else(corrupt)?
            .try_into()
            .map_err(|_| corrupt())?;
        let last: [u8; 8] = bytes
            .get(8..16)
            .ok_or_else(corrupt)?
            .try_into()
            .map_err(|_| corrupt())?;
        Ok(RowMarker {
            revision: u64::from_be_bytes(revision),
            last_write_ms: i64::from_be_bytes(last),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pk_value() -> impl Strategy<Value = PkValue> {
        prop_oneof![
            any::<i64>().prop_map(PkValue::Integer),
            ".{0,6}".prop_map(PkValue::String),
            proptest::collection::vec(
                prop_oneof![Just(0u8), Just(1u8), Just(0xFFu8), any::<u8>()],
                0..6
            )
            .prop_map(PkValue::Binary),
        ]
    }

    proptest! {
        #[test]
        fn encoded_order_equals_value_order(
            types in proptest::collection::vec(0..3usize, 1..=4),
            seed_a in proptest::collection::vec(pk_value(), 4),
            seed_b in proptest::collection::vec(pk_value(), 4),
        ) {
            // Build two keys of the same schema from the seeds, coercing to each column type.
            let coerce = |v: &PkValue, t: usize| match (t, v) {
                (0, PkValue::Integer(i)) => PkValue::Integer(*i),
                (0, other) => PkValue::Integer(other.size() as i64 - 3),
                (1, PkValue::String(s)) => PkValue::String(s.clone()),
                (1, other) => PkValue::String(format!("{other}")),
                (_, PkValue::Binary(b)) => PkValue::Binary(b.clone()),
                (_, other) => PkValue::Binary(format!("{other}").into_bytes()),
            };
            let a: Vec<PkValue> = types.iter().zip(&seed_a).map(|(&t, v)| coerce(v, t)).collect();
            let b: Vec<PkValue> = types.iter().zip(&seed_b).map(|(&t, v)| coerce(v, t)).collect();
            let (ea, eb) = (encode_pk(&a), encode_pk(&b));
            prop_assert_eq!(ea.cmp(&eb), a.cmp(&b));
            let pk_types: Vec<PkType> = a.iter().map(PkValue::pk_type).collect();
            let (decoded, used) = decode_pk(&ea, &pk_types).unwrap();
            prop_assert_eq!(&decoded, &a);
            prop_assert_eq!(used, ea.len());
        }

        #[test]
        fn bounds_enclose_every_value(v in pk_value()) {
            let mut min = Vec::new();
            encode_pk_bound(&mut min, &PkBound::InfMin);
            let mut max = Vec::new();
            encode_pk_bound(&mut max, &PkBound::InfMax);
            let enc = encode_pk(&[v]);
            prop_assert!(min < enc && enc < max);
        }

        #[test]
        fn values_round_trip(i in any::<i64>(), d in any::<f64>(), s in ".{0,10}", b in any::<Vec<u8>>()) {
            for v in [Value::Integer(i), Value::Double(d), Value::String(s.clone()), Value::Binary(b.clone()), Value::Boolean(i % 2 == 0)] {
                let back = decode_value(&encode_value(&v)).unwrap();
                match (&v, &back) {
                    (Value::Double(x), Value::Double(y)) => prop_assert_eq!(x.to_bits(), y.to_bits()),
                    _ => prop_assert_eq!(&v, &back),
                }
            }
        }
    }

    #[test]
    fn integers_sort_numerically_with_negatives_first() {
        let keys: Vec<Vec<u8>> = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX]
            .iter()
            .map(|&i| encode_pk(&[PkValue::Integer(i)]))
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn newest_version_sorts_first() {
        let row = row_prefix(7, &[PkValue::String("4776".into())]);
        let old = cell_key(&row, "Length", 1466676354000);
        let new = cell_key(&row, "Length", 1466762754000);
        assert!(new < old);
        assert!(marker_key(&row) < new);
        assert_eq!(
            decode_suffix(&old[row.len()..]).unwrap(),
            KeySuffix::Cell {
                column: "Length",
                version: 1466676354000
            }
        );
    }
}
