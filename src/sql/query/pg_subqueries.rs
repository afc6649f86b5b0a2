//! Subqueries of catalog queries in forms DataFusion cannot plan, rewritten into ones
//! it can: `x = ANY(ARRAY(SELECT ...))`, `UNION ALL` branches over always-empty
//! catalog tables, a lone CTE, and `x IN (SELECT ...)` inside a select list.

use super::empty_catalog::set_empty;
use super::sql_ast::{last, parse_expr};
use sqlparser::ast::{self, Expr, FunctionArguments, Query, SetExpr, TableFactor};
use std::ops::ControlFlow;

/// The query of `ARRAY(SELECT ...)`, with its union branches that can never return a
/// row removed (see [`prune_empty_branches`]).
pub fn array_subquery(expr: &Expr) -> Option<Query> {
    let Expr::Function(f) = expr else {
        return None;
    };
    let FunctionArguments::Subquery(q) = &f.args else {
        return None;
    };
    if last(&f.name) != "array" {
        return None;
    }
    let mut q = (**q).clone();
    prune_empty_branches(&mut q);
    inline_single_cte(&mut q);
    Some(q)
}

/// Drops `UNION ALL` branches (also in CTEs) that inner-join an always-empty catalog
/// table: pgAdmin walks role membership with a recursive CTE over `pg_auth_members`,
/// which pgwide never fills, and DataFusion cannot run that recursion correlated.
fn prune_empty_branches(query: &mut Query) {
    if let Some(with) = &mut query.with {
        for cte in &mut with.cte_tables {
            prune_empty_branches(&mut cte.query);
        }
        let recursive = with.cte_tables.iter().any(|cte| {
            let name = cte.alias.name.value.to_lowercase();
            ast::visit_relations(&*cte.query, |r| {
                if last(r) == name {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .is_break()
        });
        with.recursive &= recursive;
    }
    if let SetExpr::SetOperation {
        op: ast::SetOperator::Union,
        set_quantifier: ast::SetQuantifier::All,
        left,
        right,
    } = &*query.body
    {
        if set_empty(right) {
            query.body = left.clone();
        }
    }
}

/// A query that is one `SELECT column FROM ... [WHERE ...]` with nothing else: its
/// column, FROM list and condition (`true` without one).
pub(super) fn plain_select(query: &Query) -> Option<(String, String, String)> {
    if query.with.is_some() || query.order_by.is_some() || query.limit_clause.is_some() {
        return None;
    }
    let SetExpr::Select(select) = &*query.body else {
        return None;
    };
    let grouped = !matches!(&select.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty());
    if grouped || select.distinct.is_some() || select.having.is_some() || select.from.is_empty() {
        return None;
    }
    let [ast::SelectItem::UnnamedExpr(item) | ast::SelectItem::ExprWithAlias { expr: item, .. }] =
        select.projection.as_slice()
    else {
        return None;
    };
    // Only a column: DataFusion decorrelates `inner column = outer expression`.
    if !matches!(item, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
        return None;
    }
    let from = select
        .from
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let filter = select
        .selection
        .as_ref()
        .map_or_else(|| "true".to_string(), ToString::to_string);
    Some((item.to_string(), from, filter))
}

/// `WITH c AS (SELECT ...) SELECT col FROM c`, as the inner SELECT computing `col`
/// (what is left of pgAdmin's membership walk once its recursion is pruned).
fn inline_single_cte(query: &mut Query) {
    let Some(with) = &query.with else {
        return;
    };
    let [cte] = with.cte_tables.as_slice() else {
        return;
    };
    if with.recursive || query.order_by.is_some() || query.limit_clause.is_some() {
        return;
    }
    let SetExpr::Select(outer) = &*query.body else {
        return;
    };
    let reads_cte = matches!(
        outer.from.as_slice(),
        [from] if from.joins.is_empty()
            && matches!(&from.relation, TableFactor::Table { name, alias: None, args: None, .. }
                if last(name) == cte.alias.name.value.to_lowercase())
    );
    if !reads_cte || outer.selection.is_some() || outer.projection.len() != 1 {
        return;
    }
    let column = match &outer.projection[0] {
        ast::SelectItem::UnnamedExpr(e) => crate::sql::expr::output_name(e),
        _ => return,
    };
    let mut inner = (*cte.query).clone();
    let SetExpr::Select(select) = &mut *inner.body else {
        return;
    };
    let Some(item) = select.projection.iter().find(|item| match item {
        ast::SelectItem::UnnamedExpr(e) => crate::sql::expr::output_name(e) == column,
        ast::SelectItem::ExprWithAlias { alias, .. } => crate::sql::expr::fold(alias) == column,
        _ => false,
    }) else {
        return;
    };
    select.projection = vec![item.clone()];
    *query = inner;
}

/// `x IN (SELECT ...)` inside a select list (in a CASE, say) as a scalar subquery that
/// counts the matches: DataFusion runs IN subqueries only as filters, but plans a
/// correlated scalar subquery anywhere.
fn select_list_in_subqueries(query: &mut Query) {
    let SetExpr::Select(select) = &mut *query.body else {
        return;
    };
    for item in &mut select.projection {
        let (ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }) =
            item
        else {
            continue;
        };
        let _ = ast::visit_expressions_mut(e, |expr| {
            if let Expr::InSubquery {
                expr: value,
                subquery,
                negated,
            } = expr
            {
                let not = if *negated { "NOT " } else { "" };
                // A plain `SELECT v FROM ... WHERE p` is counted in place: DataFusion
                // cannot decorrelate an outer reference inside a derived table.
                let sql = match plain_select(subquery) {
                    Some((item, from, filter)) => format!(
                        "{not}(SELECT count(*) > 0 FROM {from} WHERE ({filter}) AND ({item}) = {value})"
                    ),
                    None => format!(
                        "{not}(SELECT count(*) > 0 FROM ({subquery}) AS pgwide_in(v) WHERE pgwide_in.v = {value})"
                    ),
                };
                if let Some(counted) = parse_expr(&sql) {
                    *expr = counted;
                }
            }
            ControlFlow::<()>::Continue(())
        });
    }
}

/// Rewrites the IN subqueries of every select list of `query`.
pub fn rewrite(query: &mut Query) {
    let _ = ast::VisitMut::visit(query, &mut EachQuery(select_list_in_subqueries));
}

/// Calls its function on every query of a statement, innermost first.
struct EachQuery<F>(F);

impl<F: FnMut(&mut Query)> ast::VisitorMut for EachQuery<F> {
    type Break = ();
    fn post_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        (self.0)(query);
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::pg_compat::rewrite;

    fn rewritten(sql: &str) -> String {
        super::super::test_sql::rewritten(sql, rewrite)
    }

    #[test]
    fn any_of_an_array_subquery_is_in_with_empty_recursion_pruned() {
        assert_eq!(
            rewritten(
                "SELECT 'x' = ANY(ARRAY(WITH RECURSIVE cte AS (SELECT r.oid, r.rolname FROM pg_roles r \
                 WHERE r.oid = o.oid UNION ALL SELECT m.roleid, p.rolname FROM cte c \
                 JOIN pg_auth_members m ON m.member = c.oid JOIN pg_roles p ON p.oid = m.roleid) \
                 SELECT rolname FROM cte)) FROM pg_roles o"
            ),
            "SELECT (SELECT count(*) > 0 FROM pg_catalog.pg_roles r WHERE (r.oid = o.oid) \
             AND (r.rolname) = 'x') FROM pg_catalog.pg_roles o"
        );
    }
}
