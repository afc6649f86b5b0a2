//! Catalog tables pgwide always leaves empty (policies, triggers, inheritance,
//! publications): a query that must read one of them returns no rows, and is answered
//! without being planned.

use super::sql_ast::{first, last};
use crate::sql::pg_catalog::{EMPTY_TABLES, PG_CATALOG};
use sqlparser::ast::{self, ObjectName, Query, SetExpr, TableFactor};

pub(super) fn is_empty_table(name: &ObjectName) -> bool {
    let schema_ok = name.0.len() == 1 || first(name) == PG_CATALOG;
    schema_ok && EMPTY_TABLES.iter().any(|(t, _)| *t == last(name))
}

/// Whether the query cannot return a row: every branch inner-joins an always-empty
/// catalog table.
pub fn always_empty(query: &Query) -> bool {
    set_empty(&query.body)
}

pub(super) fn set_empty(body: &SetExpr) -> bool {
    match body {
        SetExpr::Select(select) => select.from.iter().any(|from| {
            let base =
                matches!(&from.relation, TableFactor::Table { name, .. } if is_empty_table(name));
            let joined = from.joins.iter().any(|j| {
                matches!(
                    j.join_operator,
                    ast::JoinOperator::Join(_)
                        | ast::JoinOperator::Inner(_)
                        | ast::JoinOperator::CrossJoin(_)
                ) && matches!(&j.relation, TableFactor::Table { name, .. } if is_empty_table(name))
            });
            base || joined
        }),
        SetExpr::Query(q) => always_empty(q),
        SetExpr::SetOperation {
            op, left, right, ..
        } => match op {
            ast::SetOperator::Union => set_empty(left) && set_empty(right),
            ast::SetOperator::Intersect => set_empty(left) || set_empty(right),
            _ => set_empty(left),
        },
        _ => false,
    }
}
