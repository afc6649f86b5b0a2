//! `x IN (VALUES (a), (b))` as the list it is, `x IN (a, b)`: DataFusion plans a
//! VALUES subquery under IN as a table of one column it cannot name ("single
//! expression required"). psql's `\d` writes the relations a key may reference as
//! `IN (SELECT pg_partition_ancestors(t) UNION ALL VALUES (t))`; pgwide has no
//! partitions, so the first half is no rows and the list is `(t)`.

use super::sql_ast::last;
use sqlparser::ast::{self, Expr, Query, SetExpr, SetOperator, SetQuantifier};
use std::ops::ControlFlow;

/// Rewrites every `IN (VALUES ...)` of `query` whose rows are single values.
pub fn rewrite(query: &mut Query) {
    let _ = ast::VisitMut::visit(query, &mut InValues);
}

struct InValues;

impl ast::VisitorMut for InValues {
    type Break = ();

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        let Expr::InSubquery {
            expr: value,
            subquery,
            negated,
        } = expr
        else {
            return ControlFlow::Continue(());
        };
        let plain = subquery.with.is_none()
            && subquery.order_by.is_none()
            && subquery.limit_clause.is_none()
            && subquery.fetch.is_none();
        if let (true, Some(list)) = (plain, single_values(&subquery.body)) {
            *expr = Expr::InList {
                expr: value.clone(),
                list,
                negated: *negated,
            };
        }
        ControlFlow::Continue(())
    }
}

/// The values of a VALUES body whose rows have one column each, also behind a
/// `SELECT pg_partition_ancestors(...) UNION ALL`.
fn single_values(body: &SetExpr) -> Option<Vec<Expr>> {
    match body {
        SetExpr::Values(values) => values
            .rows
            .iter()
            .map(|row| match row.as_slice() {
                [value] => Some(value.clone()),
                _ => None,
            })
            .collect(),
        SetExpr::SetOperation {
            op: SetOperator::Union,
            set_quantifier: SetQuantifier::All,
            left,
            right,
        } if partition_ancestors(left) => single_values(right),
        _ => None,
    }
}

/// Whether `body` is `SELECT pg_partition_ancestors(...)`, which is no rows.
fn partition_ancestors(body: &SetExpr) -> bool {
    let SetExpr::Select(select) = body else {
        return false;
    };
    select.from.is_empty()
        && select.selection.is_none()
        && matches!(select.projection.as_slice(),
            [ast::SelectItem::UnnamedExpr(Expr::Function(f))]
                if last(&f.name) == "pg_partition_ancestors")
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn rewritten(sql: &str) -> String {
        let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).expect("parse");
        let ast::Statement::Query(query) = &mut statements[0] else {
            panic!("not a query");
        };
        rewrite(query);
        query.to_string()
    }

    #[test]
    fn in_values_is_a_list() {
        assert_eq!(
            rewritten("SELECT 1 WHERE 2 IN (VALUES (1), (2))"),
            "SELECT 1 WHERE 2 IN (1, 2)"
        );
        assert_eq!(
            rewritten(
                "SELECT c FROM t WHERE r NOT IN (SELECT pg_catalog.pg_partition_ancestors('1') \
                 UNION ALL VALUES ('1'::regclass))"
            ),
            "SELECT c FROM t WHERE r NOT IN ('1'::REGCLASS)"
        );
        assert_eq!(
            rewritten("SELECT 1 WHERE (1, 2) IN (VALUES (1, 2))"),
            "SELECT 1 WHERE (1, 2) IN (VALUES (1, 2))"
        );
    }
}
