//! PostgreSQL's array literals: `'{a,"b c",NULL}'::text[]` is parsed as PostgreSQL
//! parses an array's text form, into `ARRAY['a', 'b c', NULL]` cast to the array type,
//! before DataFusion plans the query. DataFusion would cast the string to a one-element
//! list, so `'a' = ANY('{a,b}'::text[])` was false.

use crate::sql::pg_array_text;
use crate::sql::sql_types::SqlResult;
use sqlparser::ast::{self, DataType, Expr, Query, Value};
use std::ops::ControlFlow;

/// Rewrites every array literal of `query`; a malformed one is 22P02, a
/// multidimensional one 0A000.
pub fn rewrite(query: &mut Query) -> SqlResult<()> {
    let mut failure = None;
    let _ = ast::visit_expressions_mut(query, |expr| {
        if let Expr::Cast {
            expr: inner,
            data_type: DataType::Array(of),
            ..
        } = expr
        {
            if let Expr::Value(v) = &**inner {
                if let Value::SingleQuotedString(text) = &v.value {
                    match elements(text) {
                        Ok(mut elements) => {
                            typed_timestamps(&mut elements, of);
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

/// Timestamp elements as typed literals (`TIMESTAMP '2024-01-01 10:00'`), which the
/// literal readers take in PostgreSQL's forms; Arrow's cast of the string refused a
/// time without seconds. Interval elements each cast on their own (`'1 mon 3
/// days'::interval`), which pgwide reads as PostgreSQL does; Arrow's list cast refused
/// `1 mon 3 days 04:05:06.5`.
fn typed_timestamps(elements: &mut [Expr], of: &ast::ArrayElemTypeDef) {
    let ast::ArrayElemTypeDef::SquareBracket(element, _) = of else {
        return;
    };
    if matches!(**element, DataType::Interval { .. }) {
        for item in elements.iter_mut() {
            if matches!(item, Expr::Value(v) if matches!(v.value, Value::SingleQuotedString(_))) {
                *item = Expr::Cast {
                    kind: ast::CastKind::DoubleColon,
                    expr: Box::new(item.clone()),
                    data_type: (**element).clone(),
                    array: false,
                    format: None,
                };
            }
        }
        return;
    }
    if !matches!(**element, DataType::Timestamp(..)) {
        return;
    }
    for item in elements.iter_mut() {
        if let Expr::Value(value) = item {
            if matches!(value.value, Value::SingleQuotedString(_)) {
                *item = Expr::TypedString(ast::TypedString {
                    data_type: (**element).clone(),
                    value: value.clone(),
                    uses_odbc_syntax: false,
                });
            }
        }
    }
}

/// The elements of an array's text form as string literals (an unquoted NULL is NULL).
pub fn elements(text: &str) -> SqlResult<Vec<Expr>> {
    Ok(pg_array_text::parse(text)?
        .into_iter()
        .map(|item| match item {
            None => Expr::value(Value::Null),
            Some(item) => Expr::value(Value::SingleQuotedString(item)),
        })
        .collect())
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
