//! Explicit casts to `VARCHAR(n)` and `CHAR(n)`, as PostgreSQL makes them: an over-long
//! value is cut to n characters (an explicit cast never fails for length, unlike a
//! write to a `VARCHAR(n)` column, which is 22001). `CHAR(n)` (and `CHAR`, which is
//! `CHAR(1)`) also pads a shorter value with blanks that comparisons and concatenation
//! then ignore; pgwide has no blank-padded type, so a value that would need padding is
//! refused (0A000) rather than shown unpadded. The fast paths (`expr`) and DataFusion
//! (`query::pg_char_casts`) both cut through here.

use super::sql_error::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use sqlparser::ast::{CharLengthUnits, CharacterLength, DataType};

/// The length a cast to a character type imposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CastLength {
    /// `VARCHAR(n)`: cut to n characters.
    Varying(u64),
    /// `CHAR(n)`: cut to n characters; a shorter value is refused.
    Padded(u64),
}

impl CastLength {
    /// The length `data_type` imposes on a value cast to it; `None` for every other type
    /// (`TEXT`, `VARCHAR` without a length). A length of 0 is 22023, as in PostgreSQL.
    pub fn of(data_type: &DataType) -> SqlResult<Option<CastLength>> {
        let (length, padded) = match data_type {
            DataType::Varchar(Some(length)) | DataType::CharacterVarying(Some(length)) => {
                (Some(length), false)
            }
            DataType::Char(length) | DataType::Character(length) => (length.as_ref(), true),
            _ => return Ok(None),
        };
        // Another dialect's `VARCHAR(MAX)` or a length in octets would be a limit pgwide
        // does not keep: refused, not cast as if unlimited or in characters.
        let n = match length {
            None => 1,
            Some(CharacterLength::IntegerLength {
                length,
                unit: None | Some(CharLengthUnits::Characters),
            }) => *length,
            Some(other) => {
                return Err(SqlError::unsupported(format!(
                    "a cast to {data_type} (a length {other} is not PostgreSQL's)"
                )))
            }
        };
        let name = if padded { "char" } else { "varchar" };
        if n == 0 {
            return Err(length_error(format!(
                "length for type {name} must be at least 1"
            )));
        }
        if n > 10_485_760 {
            return Err(length_error(format!(
                "length for type {name} cannot exceed 10485760"
            )));
        }
        Ok(Some(match padded {
            true => CastLength::Padded(n),
            false => CastLength::Varying(n),
        }))
    }

    /// The number of characters.
    pub fn chars(self) -> u64 {
        match self {
            CastLength::Varying(n) | CastLength::Padded(n) => n,
        }
    }

    /// `text` cast to this length: cut to it, or refused when `CHAR(n)` would pad it.
    pub fn apply(self, text: &str) -> SqlResult<String> {
        let n = usize::try_from(self.chars()).unwrap_or(usize::MAX);
        let mut count = 0;
        for (at, _) in text.char_indices() {
            if count == n {
                return Ok(text[..at].to_string());
            }
            count += 1;
        }
        if matches!(self, CastLength::Padded(_)) && count < n {
            return Err(SqlError::unsupported(format!(
                "CHAR({n}) would pad '{text}' with blanks, which pgwide does not support (it \
                 has no blank-padded type; VARCHAR({n}) or TEXT keep the value as it is)"
            )));
        }
        Ok(text.to_string())
    }
}

fn length_error(message: String) -> SqlError {
    SqlError::new(SqlState::InvalidParameterValue, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_cut_to_length_and_refuse_padding() {
        assert_eq!(CastLength::Varying(3).apply("abcdef").unwrap(), "abc");
        assert_eq!(CastLength::Varying(3).apply("ab").unwrap(), "ab");
        assert_eq!(CastLength::Varying(2).apply("éèà").unwrap(), "éè");
        assert_eq!(CastLength::Padded(1).apply("f").unwrap(), "f");
        assert_eq!(CastLength::Padded(2).apply("abc").unwrap(), "ab");
        let refused = CastLength::Padded(4).apply("ab").unwrap_err();
        assert_eq!(refused.code(), "0A000");
    }
}
