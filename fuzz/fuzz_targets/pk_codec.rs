//! Fuzzes the order-preserving primary-key codec: decoding arbitrary bytes never
//! panics; whatever decodes re-encodes to exactly the bytes it came from; and encoding
//! preserves order (two keys compare as encoded bytes as they do column by column).

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgwide::engine::{decode_pk, encode_pk, PkType, PkValue};

/// Up to four column types from one byte, two bits each (the fourth value, 3, ends
/// the list early).
fn column_types(byte: u8) -> Vec<PkType> {
    (0..4)
        .map(|i| (byte >> (2 * i)) & 3)
        .take_while(|t| *t != 3)
        .map(|t| match t {
            0 => PkType::Integer,
            1 => PkType::String,
            _ => PkType::Binary,
        })
        .collect()
}

/// A key of the given types built from raw bytes (not from the encoding).
fn key_from(types: &[PkType], bytes: &[u8]) -> Vec<PkValue> {
    let mut chunks = bytes.chunks(9);
    types
        .iter()
        .map(|ty| {
            let chunk = chunks.next().unwrap_or(&[]);
            match ty {
                PkType::Integer => {
                    let mut raw = [0u8; 8];
                    for (slot, b) in raw.iter_mut().zip(chunk) {
                        *slot = *b;
                    }
                    PkValue::Integer(i64::from_be_bytes(raw))
                }
                PkType::String => PkValue::String(String::from_utf8_lossy(chunk).into_owned()),
                PkType::Binary => PkValue::Binary(chunk.to_vec()),
            }
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let types = column_types(first);

    // Arbitrary bytes: an error is fine, a panic is not; a success must round-trip.
    if let Ok((pk, used)) = decode_pk(rest, &types) {
        assert!(used <= rest.len());
        assert_eq!(
            encode_pk(&pk),
            &rest[..used],
            "decode then encode changed the key"
        );
    }

    // Two keys built from the input: encode, decode back, and compare orders.
    let (left, right) = rest.split_at(rest.len() / 2);
    let a = key_from(&types, left);
    let b = key_from(&types, right);
    let (ea, eb) = (encode_pk(&a), encode_pk(&b));
    for (key, encoded) in [(&a, &ea), (&b, &eb)] {
        let (decoded, used) = decode_pk(encoded, &types).expect("an encoded key decodes");
        assert_eq!(&decoded, key);
        assert_eq!(used, encoded.len());
    }
    assert_eq!(
        ea.cmp(&eb),
        a.cmp(&b),
        "encoding changed the order of {a:?} and {b:?}"
    );
});
