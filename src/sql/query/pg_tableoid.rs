//! `tableoid`, the system column every PostgreSQL table has: the OID of the table a row
//! is in. pg_dump selects it from each catalog relation it reads. pgwide's catalog
//! relations are built per query, without system columns, so a `tableoid` of one is
//! rewritten into that relation's OID, a constant (`pg_namespace.tableoid` is 2615).
//! A bare `tableoid` is rewritten where its SELECT reads one catalog relation alone.
//! Inner queries go first, so an inner query's own relations decide for it, and a
//! `tableoid` it takes from an outer query's relation is left for the outer one.

use super::sql_ast::{first, last};
use crate::sql::pg_catalog::{catalog_relation_oid, PG_CATALOG};
use sqlparser::ast::{self, Expr, Query, SetExpr, TableFactor, Value};
use std::collections::HashMap;
use std::ops::ControlFlow;

/// Rewrites every `tableoid` of a catalog relation in `query` into its OID.
pub fn rewrite(query: &mut Query) {
    let _ = ast::VisitMut::visit(query, &mut TableOids);
}

struct TableOids;

impl ast::VisitorMut for TableOids {
    type Break = ();

    fn post_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        rewrite_body(&mut query.body);
        ControlFlow::Continue(())
    }
}

fn rewrite_body(body: &mut SetExpr) {
    match body {
        SetExpr::Select(select) => {
            let mut oids = HashMap::new();
            let mut relations = 0;
            for table in &select.from {
                std::iter::once(&table.relation)
                    .chain(table.joins.iter().map(|j| &j.relation))
                    .for_each(|factor| {
                        relations += 1;
                        if let Some((name, oid)) = catalog_relation(factor) {
                            oids.insert(name, oid);
                        }
                    });
            }
            if oids.is_empty() {
                return;
            }
            let only = match (relations, oids.values().next()) {
                (1, Some(oid)) => Some(*oid),
                _ => None,
            };
            let _ = ast::visit_expressions_mut(select.as_mut(), |expr| {
                let oid = match expr {
                    Expr::Identifier(ident) if ident.value.eq_ignore_ascii_case("tableoid") => only,
                    Expr::CompoundIdentifier(parts)
                        if parts.len() == 2 && parts[1].value.eq_ignore_ascii_case("tableoid") =>
                    {
                        oids.get(&parts[0].value.to_lowercase()).copied()
                    }
                    _ => None,
                };
                if let Some(oid) = oid {
                    *expr = Expr::value(Value::Number(oid.to_string(), false));
                }
                ControlFlow::<()>::Continue(())
            });
        }
        SetExpr::SetOperation { left, right, .. } => {
            rewrite_body(left);
            rewrite_body(right);
        }
        _ => {}
    }
}

/// The name a catalog relation in FROM goes by (its alias, else its name) and its OID.
fn catalog_relation(factor: &TableFactor) -> Option<(String, i64)> {
    let TableFactor::Table { name, alias, .. } = factor else {
        return None;
    };
    let relation = last(name);
    let qualified = name.0.len() == 2 && first(name) == PG_CATALOG;
    if !(qualified || name.0.len() == 1) {
        return None;
    }
    let oid = catalog_relation_oid(&relation)?;
    let called = alias
        .as_ref()
        .map_or(relation, |alias| alias.name.value.to_lowercase());
    Some((called, oid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::statement_parser::parse;

    fn rewritten(sql: &str) -> String {
        let Some(ast::Statement::Query(mut query)) = parse(sql).expect("parses").pop() else {
            panic!("not a query: {sql}");
        };
        rewrite(&mut query);
        query.to_string()
    }

    #[test]
    fn a_catalog_relations_tableoid_is_its_oid() {
        assert_eq!(
            rewritten("SELECT n.tableoid, n.oid FROM pg_namespace n"),
            "SELECT 2615, n.oid FROM pg_namespace n"
        );
        assert_eq!(
            rewritten("SELECT tableoid, oid FROM pg_catalog.pg_collation"),
            "SELECT 3456, oid FROM pg_catalog.pg_collation"
        );
        // Two relations: a bare tableoid is ambiguous, a qualified one is not.
        assert_eq!(
            rewritten(
                "SELECT c.tableoid, tableoid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            ),
            "SELECT 1259, tableoid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        );
        // An inner query's own relation decides for it.
        assert_eq!(
            rewritten("SELECT tableoid, (SELECT max(tableoid) FROM pg_type) FROM pg_proc"),
            "SELECT 1255, (SELECT max(1247) FROM pg_type) FROM pg_proc"
        );
        // A user table's is left alone (pgwide's tables have no system columns).
        assert_eq!(
            rewritten("SELECT tableoid FROM book"),
            "SELECT tableoid FROM book"
        );
    }
}
