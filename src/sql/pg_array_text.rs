//! The text form of a one-dimensional PostgreSQL array (`{a,"b c",NULL}`), read and
//! written as PostgreSQL's `array_in` and `array_out` do. Array values travel through
//! pgwide in this form: as literals, parameters and results.

use super::sql_types::{SqlError, SqlResult};
use crate::sqlstate::SqlState;

fn malformed(text: &str, why: &str) -> SqlError {
    SqlError::new(
        SqlState::InvalidTextRepresentation,
        format!("malformed array literal: \"{text}\" ({why})"),
    )
}

/// The elements of an array's text form, `None` for an unquoted NULL. Unquoted
/// elements lose surrounding white space; a backslash takes the next character
/// literally. Malformed text is 22P02; a multidimensional array is 0A000.
pub fn parse(text: &str) -> SqlResult<Vec<Option<String>>> {
    let inner = text
        .trim()
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or_else(|| malformed(text, "it must start with \"{\" and end with \"}\""))?;
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mut chars = inner.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut item = String::new();
        let mut quoted = false;
        let mut was_quoted = false;
        let mut pending_space = String::new();
        loop {
            match chars.next() {
                None if quoted => return Err(malformed(text, "an unterminated quote")),
                None => break,
                Some('"') => {
                    quoted = !quoted;
                    was_quoted = true;
                }
                Some('\\') => {
                    let c = chars
                        .next()
                        .ok_or_else(|| malformed(text, "it ends in a backslash"))?;
                    item.push_str(&std::mem::take(&mut pending_space));
                    item.push(c);
                }
                Some(',') if !quoted => break,
                Some('{') if !quoted => {
                    return Err(SqlError::unsupported(
                        "multidimensional arrays are not supported",
                    ))
                }
                Some(c) if c.is_whitespace() && !quoted => pending_space.push(c),
                Some(c) => {
                    item.push_str(&std::mem::take(&mut pending_space));
                    item.push(c);
                }
            }
        }
        out.push((was_quoted || !item.eq_ignore_ascii_case("null")).then_some(item));
        if chars.peek().is_none() {
            break;
        }
    }
    Ok(out)
}

/// The text form of `items` (`None` is NULL), quoting an element as `array_out` does:
/// when it is empty, the word NULL, or holds white space, braces, a comma, a quote or
/// a backslash.
pub fn format<'a>(items: impl IntoIterator<Item = Option<&'a str>>) -> String {
    let mut out = String::from("{");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match item {
            None => out.push_str("NULL"),
            Some(v) => {
                let plain = !v.is_empty()
                    && !v.eq_ignore_ascii_case("null")
                    && !v.contains(|c: char| c.is_whitespace() || "{},\\\"".contains(c));
                if plain {
                    out.push_str(v);
                } else {
                    out.push('"');
                    out.push_str(&v.replace('\\', "\\\\").replace('"', "\\\""));
                    out.push('"');
                }
            }
        }
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &str) -> Vec<Option<String>> {
        parse(text).expect(text)
    }

    #[test]
    fn parses_as_postgresql_does() {
        let some = |s: &str| Some(s.to_string());
        assert_eq!(items("{a,b}"), [some("a"), some("b")]);
        assert_eq!(items("{ a , b c }"), [some("a"), some("b c")]);
        assert_eq!(
            items(r#"{"a,b","x\"y",NULL,"NULL"}"#),
            [some("a,b"), some("x\"y"), None, some("NULL")]
        );
        assert_eq!(items("{}"), Vec::<Option<String>>::new());
        assert_eq!(items(r"{a\,b}"), [some("a,b")]);
        assert_eq!(parse("a,b").unwrap_err().code(), "22P02");
        assert_eq!(parse(r#"{"a}"#).unwrap_err().code(), "22P02");
        assert_eq!(parse("{{1,2},{3,4}}").unwrap_err().code(), "0A000");
    }

    #[test]
    fn formats_as_array_out_does_and_round_trips() {
        let values = [
            Some("a"),
            Some("b c"),
            None,
            Some("NULL"),
            Some(""),
            Some("q\"\\"),
        ];
        let text = format(values);
        assert_eq!(text, r#"{a,"b c",NULL,"NULL","","q\"\\"}"#);
        let back: Vec<Option<String>> = items(&text);
        assert_eq!(back, values.map(|v| v.map(str::to_string)));
        assert_eq!(format([]), "{}");
    }
}
