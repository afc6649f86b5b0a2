//! Catalog tables pgwide always leaves empty (policies, triggers, inheritance,
//! publications): a query that must read one of them returns no rows, and is answered
//! without being planned. Not one that aggregates without GROUP BY: `SELECT count(*)`
//! of no rows is one row, 0.

use super::sql_ast::{first, last};
use crate::sql::pg_catalog::{EMPTY_TABLES, PG_CATALOG};
use sqlparser::ast::{self, Expr, ObjectName, Query, SetExpr, TableFactor};
use std::ops::ControlFlow;

/// Aggregates, which make one row of no rows when nothing groups them.
pub(super) const AGGREGATES: &[&str] = &[
    "count",
    "max",
    "min",
    "sum",
    "avg",
    "string_agg",
    "array_agg",
    "bool_and",
    "bool_or",
    "every",
    "json_agg",
    "jsonb_agg",
    "json_object_agg",
    "jsonb_object_agg",
    "bit_and",
    "bit_or",
];

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
        SetExpr::Select(select) if aggregates_everything(select) => false,
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

/// Whether the SELECT aggregates its rows into one (an aggregate, not a window, and no
/// GROUP BY).
fn aggregates_everything(select: &ast::Select) -> bool {
    let grouped = !matches!(&select.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty());
    if grouped {
        return false;
    }
    let aggregate = |expr: &Expr| {
        let mut finder = TopLevelAggregate { depth: 0 };
        ast::Visit::visit(expr, &mut finder).is_break()
    };
    let in_list = select.projection.iter().any(|item| match item {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            aggregate(e)
        }
        _ => false,
    });
    in_list || select.having.as_ref().is_some_and(aggregate)
}

/// Finds an aggregate call outside subqueries (theirs aggregate their own rows).
struct TopLevelAggregate {
    depth: usize,
}

impl ast::Visitor for TopLevelAggregate {
    type Break = ();

    fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        match expr {
            Expr::Function(f)
                if self.depth == 0
                    && f.over.is_none()
                    && AGGREGATES.contains(&last(&f.name).as_str()) =>
            {
                ControlFlow::Break(())
            }
            _ => ControlFlow::Continue(()),
        }
    }
}
