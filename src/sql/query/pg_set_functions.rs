//! Set-returning functions in a SELECT list return rows, as in PostgreSQL: `SELECT
//! generate_series(1, 3)` is three rows, where DataFusion's scalar `generate_series` is
//! one array. Each call there becomes `unnest(generate_series(...))`; several in one
//! list run side by side, the shorter padded with NULLs, as in PostgreSQL 10 and later.
//! A series of integer literals is of `integer`s, as in FROM (`pg_syntax`), and one
//! whose arguments are plainly times is PostgreSQL's (`pg_time_series`).
//!
//! The column of a scalar subquery `unnest` reads gets a name of its own: DataFusion
//! keys an unnest's input by its name, so `unnest((SELECT array_agg(attname) ...)),
//! unnest((SELECT array_agg(attname) ...))` read the first subquery's array twice
//! (pgcli's foreign-key query, which unnests a key's parent and child columns so).

use super::sql_ast::{function_call, last};
use sqlparser::ast::{self, Expr, Query, SelectItem, SetExpr};
use std::ops::ControlFlow;

/// Rewrites the set-returning calls of every SELECT list of `query`, subqueries too.
pub fn rewrite(query: &mut Query) {
    let _ = ast::VisitMut::visit(query, &mut SelectLists { unnested: 0 });
}

struct SelectLists {
    /// Scalar subqueries unnested so far, which numbers their columns' names.
    unnested: usize,
}

impl ast::VisitorMut for SelectLists {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        select_lists(&mut query.body);
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        let Expr::Function(function) = expr else {
            return ControlFlow::Continue(());
        };
        if last(&function.name) != "unnest" {
            return ControlFlow::Continue(());
        }
        if let ast::FunctionArguments::List(list) = &mut function.args {
            for arg in list.args.iter_mut() {
                if let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(Expr::Subquery(q))) =
                    arg
                {
                    self.unnested += 1;
                    name_only_column(q, &format!("__pgwide_unnested_{}", self.unnested));
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// Names the one column of a scalar subquery (its first SELECT's, of a UNION) `name`.
fn name_only_column(query: &mut Query, name: &str) {
    let mut body = query.body.as_mut();
    let select = loop {
        match body {
            SetExpr::Select(select) => break select,
            SetExpr::SetOperation { left, .. } => body = left.as_mut(),
            SetExpr::Query(inner) => body = inner.body.as_mut(),
            _ => return,
        }
    };
    if let [item] = select.projection.as_mut_slice() {
        let expr = match item {
            SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => expr.clone(),
            _ => return,
        };
        *item = SelectItem::ExprWithAlias {
            expr,
            alias: ast::Ident::new(name),
        };
    }
}

fn select_lists(body: &mut SetExpr) {
    match body {
        SetExpr::Select(select) => {
            for item in select.projection.iter_mut() {
                if let SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } = item
                {
                    expand_series(expr);
                }
            }
        }
        SetExpr::SetOperation { left, right, .. } => {
            select_lists(left);
            select_lists(right);
        }
        // A parenthesized query is visited as a query of its own.
        _ => {}
    }
}

/// Makes each `generate_series(...)` in `expr` a set of rows. Subqueries are left to
/// their own visit, and `unnest`'s argument is a set already.
fn expand_series(expr: &mut Expr) {
    match expr {
        Expr::Function(function) if last(&function.name) == "generate_series" => {
            let integers = match &function.args {
                ast::FunctionArguments::List(list) => {
                    !list.args.is_empty() && list.args.iter().all(super::pg_syntax::fits_integer)
                }
                _ => false,
            };
            let times = match &function.args {
                ast::FunctionArguments::List(list) => {
                    list.args.iter().any(super::pg_syntax::is_time_argument)
                }
                _ => false,
            };
            if times {
                function.name = super::sql_ast::plain(super::pg_time_series::TIME_SERIES);
            }
            let series = function_call("unnest", vec![expr.clone()]);
            *expr = match integers {
                true => Expr::Cast {
                    kind: ast::CastKind::Cast,
                    expr: Box::new(series),
                    data_type: ast::DataType::Integer(None),
                    array: false,
                    format: None,
                },
                false => series,
            };
        }
        Expr::Function(function) if last(&function.name) == "unnest" => {}
        Expr::Function(function) => {
            if let ast::FunctionArguments::List(list) = &mut function.args {
                for arg in list.args.iter_mut() {
                    if let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))
                    | ast::FunctionArg::Named {
                        arg: ast::FunctionArgExpr::Expr(e),
                        ..
                    } = arg
                    {
                        expand_series(e);
                    }
                }
            }
        }
        Expr::BinaryOp { left, right, .. } => {
            expand_series(left);
            expand_series(right);
        }
        Expr::UnaryOp { expr: inner, .. }
        | Expr::Nested(inner)
        | Expr::Cast { expr: inner, .. }
        | Expr::IsNull(inner)
        | Expr::IsNotNull(inner) => expand_series(inner),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        super::super::test_sql::rewritten(sql, rewrite)
    }

    #[test]
    fn a_series_in_a_select_list_is_rows() {
        assert_eq!(
            rewritten("SELECT generate_series(1, 3)"),
            "SELECT CAST(unnest(generate_series(1, 3)) AS INTEGER)"
        );
        assert_eq!(
            rewritten("SELECT k, generate_series(1, n) + 1 AS g FROM t"),
            "SELECT k, unnest(generate_series(1, n)) + 1 AS g FROM t"
        );
        assert_eq!(
            rewritten("SELECT (SELECT max(x) FROM (SELECT generate_series(1, 3) AS x) AS s)"),
            "SELECT (SELECT max(x) FROM (SELECT CAST(unnest(generate_series(1, 3)) AS INTEGER) \
             AS x) AS s)"
        );
        assert_eq!(
            rewritten("SELECT unnest(generate_series(1, 3))"),
            "SELECT unnest(generate_series(1, 3))"
        );
    }

    #[test]
    fn unnested_subqueries_name_their_columns_apart() {
        assert_eq!(
            rewritten(
                "SELECT unnest((SELECT array_agg(v) FROM a)), unnest((SELECT array_agg(v) FROM b))"
            ),
            "SELECT unnest((SELECT array_agg(v) AS __pgwide_unnested_1 FROM a)), \
             unnest((SELECT array_agg(v) AS __pgwide_unnested_2 FROM b))"
        );
    }
}
