//! The types PostgreSQL infers for parameters DataFusion leaves untyped: `$n::T[]`,
//! `x = ANY($n)` and `LIMIT $n` / `OFFSET $n`. A client binds what the server
//! describes (Prisma's engine, tokio-postgres), so a parameter described as text gets
//! text, and then fails where a number or an array was meant.

use crate::sql::sql_types::{self, ArrayOf, SqlType};
use sqlparser::ast::{self, DataType, Expr, Query, Value, Visit, Visitor};
use std::ops::ControlFlow;

/// A `$n` placeholder's index (0-based).
fn placeholder(expr: &Expr) -> Option<usize> {
    match expr {
        Expr::Value(v) => match &v.value {
            Value::Placeholder(name) => crate::sql::expr::placeholder_index(name).ok(),
            _ => None,
        },
        _ => None,
    }
}

/// `LIMIT $n` and `OFFSET $n`, in the query and its subqueries, are bigints.
pub fn limit_parameter_types(query: &Query) -> Vec<(usize, SqlType)> {
    struct Limits(Vec<(usize, SqlType)>);
    impl Visitor for Limits {
        type Break = ();
        fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
            let (limit, offset) = match &query.limit_clause {
                Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
                    (limit.as_ref(), offset.as_ref().map(|o| &o.value))
                }
                Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
                    (Some(limit), Some(offset))
                }
                None => (None, None),
            };
            for expr in limit.into_iter().chain(offset) {
                if let Some(index) = placeholder(expr) {
                    self.0.push((index, SqlType::Int8));
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut limits = Limits(Vec::new());
    let _ = query.visit(&mut limits);
    limits.0
}

/// The array type of each parameter that can only be an array, by parameter index
/// (0-based): `$n::T[]` is a `T[]`, as PostgreSQL infers `$1` in `unnest($1::int8[])`,
/// and `x = ANY($n)` (of a type DataFusion cannot tell, see `pg_any_parameters`) is a
/// `text[]`, the `bool` of each telling which. Bound as an array, the text the client
/// sends (`{1,2}`) is parsed as an array's, where DataFusion would cast a string to a
/// list and fail.
pub fn array_parameter_types(query: &Query) -> Vec<(usize, SqlType, bool)> {
    let mut found = Vec::new();
    let _ = ast::visit_expressions(query, |expr| {
        match expr {
            Expr::Cast {
                expr: inner,
                data_type: DataType::Array(element),
                ..
            } => {
                let element = match element {
                    ast::ArrayElemTypeDef::AngleBracket(t)
                    | ast::ArrayElemTypeDef::SquareBracket(t, _)
                    | ast::ArrayElemTypeDef::Parenthesis(t) => Some(t),
                    ast::ArrayElemTypeDef::None => None,
                };
                let array = element
                    .and_then(|t| sql_types::sql_type(t).ok())
                    .and_then(ArrayOf::of)
                    .map(SqlType::Array);
                if let (Some(index), Some(array)) = (placeholder(inner), array) {
                    found.push((index, array, true));
                }
            }
            Expr::AnyOp { right, .. } | Expr::AllOp { right, .. } => {
                if let Some(index) = placeholder(right) {
                    found.push((index, SqlType::Array(ArrayOf::Text), false));
                }
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    found
}
