//! Key encodings: the order-preserving primary-key codec and the key layout.
//!
//! Key layout (one ordered keyspace, like TiKV's memcomparable keys):
//! - `0x00 ...` catalog records (see `catalog`).
//! - `0x01 table_id:u32 pk` — one row: its marker and every cell version packed in one
//!   value (see `row_format`).
//! - `0x02 ...` roles (see `auth::roles`).
//! - `0x03 index_id:u32 values [pk]` — one secondary-index entry (see `index`).
//! - `0x04 table_id:u32 position:u64` — one record of a table's stream; `0x05 ...` the
//!   streams' positions (see `stream`).
//!
//! Each PK column encodes as a tag byte (`0x00` INF_MIN, `0x01` a value, `0xFF` INF_MAX)
//! then, for Integer, 8 big-endian bytes with the sign bit flipped (negatives first), and
//! for String/Binary the bytes with `0x00` escaped as `0x00 0xFF`, ended by `0x00 0x01`.
//! The encoding is prefix-free, so comparing encoded keys compares PKs column by column.

use super::error::{EngineError, EngineResult};
use super::types::{PkBound, PkRef, PkType, PkValue};
use std::borrow::Cow;

pub(crate) const CATALOG_PREFIX: u8 = 0x00;
pub(crate) const DATA_PREFIX: u8 = 0x01;

const TAG_MIN: u8 = 0x00;
const TAG_VALUE: u8 = 0x01;
const TAG_MAX: u8 = 0xFF;

/// Appends one PK column value.
pub fn encode_pk_value(out: &mut Vec<u8>, value: &PkValue) {
    out.push(TAG_VALUE);
    match value {
        PkValue::Integer(i) => out.extend_from_slice(&((*i as u64) ^ (1 << 63)).to_be_bytes()),
        PkValue::String(s) => escape_bytes(out, s.as_bytes()),
        PkValue::Binary(b) => escape_bytes(out, b),
    }
}

/// Appends `bytes` escaped (`0x00` as `0x00 0xFF`) and terminated (`0x00 0x01`): a
/// prefix-free form that sorts as the bytes do.
pub(crate) fn escape_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
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
    let (value, used) = decode_pk_ref(bytes, ty)?;
    Ok((value.into_value(), used))
}

/// [`decode_pk_value`] borrowing the value from `bytes` where it is stored unescaped.
pub fn decode_pk_ref(bytes: &[u8], ty: PkType) -> EngineResult<(PkRef<'_>, usize)> {
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
            Ok((PkRef::Integer(i), 9))
        }
        PkType::String | PkType::Binary => {
            // Most values hold no zero byte: their encoding is the bytes, then 00 01.
            let end = body.iter().position(|&b| b == 0).ok_or_else(corrupt)?;
            let (raw, used) = if body.get(end + 1) == Some(&0x01) {
                (Cow::Borrowed(&body[..end]), end + 2)
            } else {
                let (raw, used) = unescape(body)?;
                (Cow::Owned(raw), used)
            };
            let value = if ty == PkType::String {
                let not_utf8 = || EngineError::Corrupt("non-UTF-8 string key".into());
                PkRef::String(match raw {
                    Cow::Borrowed(raw) => {
                        Cow::Borrowed(std::str::from_utf8(raw).map_err(|_| not_utf8())?)
                    }
                    Cow::Owned(raw) => Cow::Owned(String::from_utf8(raw).map_err(|_| not_utf8())?),
                })
            } else {
                PkRef::Binary(raw)
            };
            Ok((value, 1 + used))
        }
    }
}

/// Undoes `escape_bytes` on the front of `body`: returns the bytes and how many encoded
/// bytes (terminator included) they took.
fn unescape(body: &[u8]) -> EngineResult<(Vec<u8>, usize)> {
    let corrupt = || EngineError::Corrupt("truncated primary key".into());
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
    Ok((raw, i + 2))
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
    }

    #[test]
    fn integers_sort_numerically_with_negatives_first() {
        let keys: Vec<Vec<u8>> = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX]
            .iter()
            .map(|&i| encode_pk(&[PkValue::Integer(i)]))
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }
}
