//! `x [NOT] IN (SELECT ...)` in a select list. DataFusion runs IN subqueries only as
//! filters; in a select list they failed ("IN (SELECT ...) must be in WHERE"). Each
//! becomes the same three-valued answer PostgreSQL gives, from scalar subqueries that
//! count rows (which DataFusion plans anywhere, correlated by equality or not):
//!
//! ```text
//! CASE WHEN (rows of S) = 0              THEN false
//!      WHEN x IS NULL                    THEN NULL
//!      WHEN (rows of S equal to x) > 0   THEN true
//!      WHEN (rows of S that are NULL) > 0 THEN NULL
//!      ELSE false END
//! ```
//!
//! A plain `SELECT c FROM ... WHERE p` is counted in place (`WHERE p AND c = x`), so a
//! subquery correlated with the outer query stays decorrelatable; any other subquery is
//! counted as a derived table.

use super::pg_subqueries::plain_select;
use super::sql_ast::parse_expr;
use sqlparser::ast::{self, Expr, Query, SelectItem, SetExpr};
use std::ops::ControlFlow;

/// Rewrites the IN subqueries of every select list of `query`, nested queries too.
pub fn rewrite(query: &mut Query) {
    let _ = ast::VisitMut::visit(query, &mut SelectLists);
}

struct SelectLists;

impl ast::VisitorMut for SelectLists {
    type Break = ();

    fn post_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        if let SetExpr::Select(select) = &mut *query.body {
            for (position, item) in select.projection.iter_mut().enumerate() {
                let (SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. }) = item
                else {
                    continue;
                };
                let mut changed = false;
                let _ = ast::visit_expressions_mut(e, |expr| {
                    if let Some(counted) = counted_in(expr) {
                        *expr = counted;
                        changed = true;
                    }
                    ControlFlow::<()>::Continue(())
                });
                // Two such items would have the same expression name, which DataFusion
                // refuses; the client sees the names taken before the rewrite.
                if let (true, SelectItem::UnnamedExpr(e)) = (changed, &*item) {
                    *item = SelectItem::ExprWithAlias {
                        expr: e.clone(),
                        alias: ast::Ident::new(format!("pgwide_in_{position}")),
                    };
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// The counting form of an `IN (SELECT ...)` expression, if `expr` is one.
fn counted_in(expr: &Expr) -> Option<Expr> {
    let Expr::InSubquery {
        expr: value,
        subquery,
        negated,
    } = expr
    else {
        return None;
    };
    // Rows of the subquery where `condition` (over its value `v`) holds.
    let count = |condition: &str| match plain_select(subquery) {
        Some((item, from, filter)) => {
            let item_condition = condition.replace("{v}", &format!("({item})"));
            format!("(SELECT count(*) FROM {from} WHERE ({filter}) AND ({item_condition}))")
        }
        None => {
            let item_condition = condition.replace("{v}", "pgwide_in.v");
            format!("(SELECT count(*) FROM ({subquery}) AS pgwide_in(v) WHERE {item_condition})")
        }
    };
    let all = count("true");
    let equal = count(&format!("{{v}} = ({value})"));
    let nulls = count("{v} IS NULL");
    let not = if *negated { "NOT " } else { "" };
    parse_expr(&format!(
        "{not}(CASE WHEN {all} = 0 THEN false WHEN ({value}) IS NULL THEN NULL \
         WHEN {equal} > 0 THEN true WHEN {nulls} > 0 THEN NULL ELSE false END)"
    ))
}
