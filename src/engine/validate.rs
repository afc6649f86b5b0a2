//! The naming rules and value limits of Table Store, checked before anything is stored.

use super::error::{EngineError, EngineResult};
use super::limits::Limits;
use super::types::{PkValue, Value};

/// Table and column names: 1-255 bytes, `[A-Za-z_][A-Za-z0-9_]*`.
pub fn check_name(name: &str) -> EngineResult<()> {
    let bytes = name.as_bytes();
    let valid = (1..=255).contains(&bytes.len())
        && (bytes[0].is_ascii_alphabetic() || bytes[0] == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_');
    if valid {
        Ok(())
    } else {
        Err(EngineError::InvalidName { name: name.into() })
    }
}

/// Instance names: 3-16 bytes of letters, digits and hyphens, a letter first, no
/// trailing hyphen.
pub fn check_instance_name(name: &str) -> EngineResult<()> {
    let bytes = name.as_bytes();
    let valid = (3..=16).contains(&bytes.len())
        && bytes[0].is_ascii_alphabetic()
        && bytes.last() != Some(&b'-')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-');
    if valid {
        Ok(())
    } else {
        Err(EngineError::InvalidInstanceName { name: name.into() })
    }
}

pub fn check_pk_value(column: &str, value: &PkValue, limits: &Limits) -> EngineResult<()> {
    let size = value.size();
    if matches!(value, PkValue::String(_) | PkValue::Binary(_)) && size > limits.max_pk_value_bytes
    {
        return Err(EngineError::PkValueTooLarge {
            column: column.into(),
            size,
            limit: limits.max_pk_value_bytes,
        });
    }
    Ok(())
}

pub fn check_value(column: &str, value: &Value, limits: &Limits) -> EngineResult<()> {
    let size = value.size();
    if size > limits.max_value_bytes {
        return Err(EngineError::ValueTooLarge {
            column: column.into(),
            size,
            limit: limits.max_value_bytes,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_seed_rules() {
        for ok in ["a", "_", "Book", "order_no", "A1_b2", &"x".repeat(255)] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1a", "a-b", "a b", "naïve", &"x".repeat(256)] {
            assert_eq!(
                check_name(bad),
                Err(EngineError::InvalidName { name: bad.into() })
            );
        }
    }

    #[test]
    fn instance_names_follow_the_seed_rules() {
        for ok in ["abc", "my-db", "a1-2", "postgres", "abcdefghijklmnop"] {
            assert!(check_instance_name(ok).is_ok(), "{ok}");
        }
        for bad in ["ab", "1abc", "abc-", "a_bc", "abcdefghijklmnopq", "-abc"] {
            assert!(check_instance_name(bad).is_err(), "{bad}");
        }
    }
}
