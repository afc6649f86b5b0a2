//! PostgreSQL's `uuid`: 16 bytes, read from `a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11` as
//! `uuid_in` reads it (any case, braces, hyphens after any group of four digits) and
//! written lower-case in the 8-4-4-4-12 form. Stored as a 16-byte Table Store Binary,
//! which sorts as PostgreSQL compares uuids (bytewise).

use super::sql_types::{SqlError, SqlResult};
use crate::sqlstate::SqlState;

fn invalid(text: &str) -> SqlError {
    SqlError::new(
        SqlState::InvalidTextRepresentation,
        format!("invalid input syntax for type uuid: \"{text}\""),
    )
}

/// A uuid's text as `uuid_in` reads it.
pub fn parse(text: &str) -> SqlResult<[u8; 16]> {
    let trimmed = text.trim();
    let inner = match trimmed.strip_prefix('{') {
        Some(rest) => rest.strip_suffix('}').ok_or_else(|| invalid(text))?,
        None => trimmed,
    };
    let mut bytes = [0u8; 16];
    let mut digits = 0usize;
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        // A hyphen only after a whole group of four digits, and not at the end.
        if c == '-' {
            if digits == 0 || !digits.is_multiple_of(4) || digits == 32 || chars.peek().is_none() {
                return Err(invalid(text));
            }
            continue;
        }
        let nibble = c.to_digit(16).ok_or_else(|| invalid(text))? as u8;
        if digits == 32 {
            return Err(invalid(text));
        }
        bytes[digits / 2] |= if digits.is_multiple_of(2) {
            nibble << 4
        } else {
            nibble
        };
        digits += 1;
    }
    if digits != 32 {
        return Err(invalid(text));
    }
    Ok(bytes)
}

/// A uuid in `uuid_out`'s form.
pub fn format(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// A random (version 4) uuid, as `gen_random_uuid()` makes.
pub fn random() -> [u8; 16] {
    let mut bytes = [0u8; 16];
    // ring's system random source; a failure there leaves the process unable to do TLS
    // or SCRAM either.
    if ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).is_err() {
        tracing::error!("the system random source failed");
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_read_and_print_as_postgres_does() {
        let want = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11";
        for text in [
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
            " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 ",
        ] {
            assert_eq!(
                parse(text).map(|b| format(&b)).ok().as_deref(),
                Some(want),
                "{text}"
            );
        }
        for bad in [
            "",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111",
            "a0eeb-c99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        ] {
            assert_eq!(parse(bad).map_err(|e| e.code()), Err("22P02"), "{bad}");
        }
        let random = random();
        assert_eq!(random[6] >> 4, 4);
        assert_eq!(random[8] >> 6, 2);
    }
}
