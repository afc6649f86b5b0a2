//! PostgreSQL's array literals: `'{a,"b c",NULL}'::text[]` is parsed as PostgreSQL
//! parses an array's text form, into `ARRAY['a', 'b c', NULL]` cast to the array type,
//! before DataFusion plans the query. DataFusion would cast the string to a one-element
//! list, so `'a' = ANY('{a,b}'::text[])` was false.

use crate::sql::sql_types::{SqlError, SqlResult};
use sqlparser::ast::{self, DataType, Expr, Query, Value};
use std::ops::ControlFlow;

/// Rewrites every array literal of `query`; a malformed one is 22P02, a
/// multidimensional one 0A000.
pub fn rewrite(query: &mut Query) -> SqlResult<()> {
    let mut failure = None;
    let _ = ast::visit_expressions_mut(query, |expr| {
        if let Expr::Cast {
            expr: inner,
            data_type: DataType::Array(_),
            ..
        } = expr
        {
            if let Expr::Value(v) = &**inner {
                if let Value::SingleQuotedString(text) = &v.value {
                    match elements(text) {
                        Ok(elements) => {
                            **inner = Expr::Array(ast::Array {
                                elem: elements,
                                named: true,
                            })
                        }
                        Err(e) => {
                            failure = Some(e);
                            return ControlFlow::Break(());
                        }
                    }
                }
            }
        }
        ControlFlow::Continue(())
    });
    failure.map_or(Ok(()), Err)
}

fn malformed(text: &str, why: &str) -> SqlError {
    SqlError::new(
        crate::sqlstate::SqlState::InvalidTextRepresentation,
        format!("malformed array literal: \"{text}\" ({why})"),
    )
}

/// The elements of an array's text form, as string literals (NULL unquoted is NULL):
/// `{a,"b,c",NULL," d "}`. Unquoted elements lose surrounding white space; a backslash
/// takes the next character literally, as in PostgreSQL.
pub fn elements(text: &str) -> SqlResult<Vec<Expr>> {
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
                        "multidimensional array literals are not supported",
                    ))
                }
                Some(c) if c.is_whitespace() && !quoted => pending_space.push(c),
                Some(c) => {
                    item.push_str(&std::mem::take(&mut pending_space));
                    item.push(c);
                }
            }
        }
        out.push(if !was_quoted && item.eq_ignore_ascii_case("null") {
            Expr::value(Value::Null)
        } else {
            Expr::value(Value::SingleQuotedString(item))
        });
        if chars.peek().is_none() {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<String> {
        elements(text)
            .expect(text)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn elements_parse_as_postgresql_parses_them() {
        assert_eq!(texts("{a,b}"), ["'a'", "'b'"]);
        assert_eq!(texts("{ a , b c }"), ["'a'", "'b c'"]);
        assert_eq!(
            texts(r#"{"a,b","x\"y",NULL,"NULL"}"#),
            ["'a,b'", "'x\"y'", "NULL", "'NULL'"]
        );
        assert_eq!(texts("{}"), Vec::<String>::new());
        assert_eq!(texts(r"{a\,b}"), ["'a,b'"]);
        assert!(elements("a,b").is_err());
        assert!(elements(r#"{"a}"#).is_err());
        assert!(elements("{{1,2},{3,4}}").is_err());
    }
}
