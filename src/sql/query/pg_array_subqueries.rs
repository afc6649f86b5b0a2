//! Subqueries DataFusion cannot plan, as the aggregates they stand for:
//! - `ARRAY(SELECT ...)` as `COALESCE((SELECT array_agg(item ORDER BY ...) FROM ...
//!   WHERE ...), make_array())` (an empty subquery gives `{}`, not NULL, as in
//!   PostgreSQL), and `x = ANY(ARRAY(SELECT ...))` as `x IN (SELECT ...)`;
//! - `EXISTS (SELECT ...)` in a select list (DataFusion has it only in WHERE) as
//!   `(SELECT count(*) > 0 FROM ... WHERE ...)`.

use super::pg_subqueries::array_subquery;
use crate::sql::sql_types::{SqlError, SqlResult};
use sqlparser::ast::{self, Expr, GroupByExpr, Query, SelectItem, SetExpr, Value};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

/// Rewrites every `ARRAY(SELECT ...)` of `query`, and every `EXISTS` in its select
/// lists. An ARRAY whose order cannot be kept (ORDER BY beside LIMIT, DISTINCT, GROUP
/// BY or a CTE) is 0A000.
pub fn rewrite(query: &mut Query) -> SqlResult<()> {
    select_list_exists(query);
    let mut failure = None;
    let _ = ast::visit_expressions_mut(query, |expr| {
        if let Expr::AnyOp {
            left,
            compare_op: ast::BinaryOperator::Eq,
            right,
            ..
        } = expr
        {
            if let Some(subquery) = array_subquery(right) {
                *expr = Expr::InSubquery {
                    expr: left.clone(),
                    subquery: Box::new(subquery),
                    negated: false,
                };
                return ControlFlow::Continue(());
            }
        }
        if let Some(subquery) = array_subquery(expr) {
            match aggregate(&subquery) {
                Ok(aggregated) => *expr = aggregated,
                Err(e) => {
                    failure = Some(e);
                    return ControlFlow::Break(());
                }
            }
        }
        ControlFlow::Continue(())
    });
    failure.map_or(Ok(()), Err)
}

fn aggregate(subquery: &Query) -> SqlResult<Expr> {
    let sql = match simple_select(subquery) {
        Some((select, item)) => {
            let order: Vec<String> = order_by(subquery)
                .iter()
                .map(|o| {
                    let mut o = o.clone();
                    if refers_to_item(&o.expr, &select.projection[0]) {
                        o.expr = item.clone();
                    }
                    o.to_string()
                })
                .collect();
            let order = match order.is_empty() {
                true => String::new(),
                false => format!(" ORDER BY {}", order.join(", ")),
            };
            let from: Vec<String> = select.from.iter().map(ToString::to_string).collect();
            let from = match from.is_empty() {
                true => String::new(),
                false => format!(" FROM {}", from.join(", ")),
            };
            let filter = select
                .selection
                .as_ref()
                .map_or(String::new(), |w| format!(" WHERE {w}"));
            format!("(SELECT array_agg({item}{order}){from}{filter})")
        }
        None if order_by(subquery).is_empty() => format!(
            "(SELECT array_agg(\"?array?\") FROM ({subquery}) AS \"?array_query?\"(\"?array?\"))"
        ),
        None => {
            return Err(SqlError::unsupported(
                "ARRAY(SELECT ... ORDER BY ...) with LIMIT, DISTINCT, GROUP BY or WITH is not \
                 supported",
            ))
        }
    };
    let sql = format!("COALESCE({sql}, make_array())");
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| SqlError::internal(format!("ARRAY(SELECT ...) as {sql}: {e}")))
}

/// `EXISTS (SELECT ... FROM ... WHERE ...)` in the select list of every SELECT of the
/// query as `(SELECT count(*) > 0 FROM ... WHERE ...)`: a LIMIT or ORDER BY of the
/// subquery does not change whether it has a row. One with GROUP BY, DISTINCT, HAVING
/// or a CTE is left to DataFusion, which refuses it (0A000).
fn select_list_exists(query: &mut Query) {
    fn in_body(body: &mut SetExpr) {
        match body {
            SetExpr::Select(select) => {
                for item in &mut select.projection {
                    let (SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. }) =
                        item
                    else {
                        continue;
                    };
                    let _ = ast::visit_expressions_mut(expr, |e| {
                        if let Expr::Exists { subquery, negated } = e {
                            if let Some(counted) = counted(subquery, *negated) {
                                *e = counted;
                            }
                        }
                        ControlFlow::<()>::Continue(())
                    });
                }
            }
            SetExpr::Query(q) => select_list_exists(q),
            SetExpr::SetOperation { left, right, .. } => {
                in_body(left);
                in_body(right);
            }
            _ => {}
        }
    }
    in_body(&mut query.body);
}

/// `(SELECT count(*) > 0 ...)` (`= 0` when negated) over the subquery's FROM and WHERE.
fn counted(subquery: &Query, negated: bool) -> Option<Expr> {
    let SetExpr::Select(select) = &*subquery.body else {
        return None;
    };
    let plain = subquery.with.is_none()
        && select.distinct.is_none()
        && select.having.is_none()
        && matches!(&select.group_by, GroupByExpr::Expressions(e, _) if e.is_empty());
    if !plain || select.from.is_empty() {
        return None;
    }
    let from: Vec<String> = select.from.iter().map(ToString::to_string).collect();
    let filter = select
        .selection
        .as_ref()
        .map_or(String::new(), |w| format!(" WHERE {w}"));
    let test = if negated { "= 0" } else { "> 0" };
    let sql = format!("(SELECT count(*) {test} FROM {}{filter})", from.join(", "));
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_expr())
        .ok()
}

/// The subquery's SELECT and its one item, if nothing but FROM, WHERE and ORDER BY
/// shapes its rows, so its ORDER BY can become the aggregate's.
fn simple_select(query: &Query) -> Option<(&ast::Select, &Expr)> {
    let SetExpr::Select(select) = &*query.body else {
        return None;
    };
    let plain = query.with.is_none()
        && query.limit_clause.is_none()
        && query.fetch.is_none()
        && select.distinct.is_none()
        && select.having.is_none()
        && select.named_window.is_empty()
        && matches!(&select.group_by, GroupByExpr::Expressions(e, _) if e.is_empty());
    let item = match select.projection.as_slice() {
        [SelectItem::UnnamedExpr(e)] | [SelectItem::ExprWithAlias { expr: e, .. }] => e,
        _ => return None,
    };
    plain.then_some((select, item))
}

fn order_by(query: &Query) -> Vec<ast::OrderByExpr> {
    match query.order_by.as_ref().map(|o| &o.kind) {
        Some(ast::OrderByKind::Expressions(list)) => list.clone(),
        _ => Vec::new(),
    }
}

/// `ORDER BY 1` or `ORDER BY <the item's alias>`.
fn refers_to_item(key: &Expr, item: &SelectItem) -> bool {
    match key {
        Expr::Value(v) => matches!(&v.value, Value::Number(n, _) if n == "1"),
        Expr::Identifier(name) => matches!(item,
            SelectItem::ExprWithAlias { alias, .. } if crate::sql::expr::fold(alias) == crate::sql::expr::fold(name)),
        _ => false,
    }
}
