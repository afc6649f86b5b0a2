//! `pg_catalog.pg_constraint`: each table's primary key as a `p` constraint named
//! `<table>_pkey`, sharing its OID with the PK index, and each `UNIQUE` constraint as a
//! `u` constraint, its OID one above its index's, and each foreign key and CHECK
//! constraint as an `f` or `c` constraint with its own OID (`oids::constraint_oid`).

use super::memory_table::{t, Col, V};
use super::oids::{attnum, constraint_oid, index_oid, table_oid, PUBLIC_OID};
use super::table_columns::{pk_attnums, pk_columns, pkey_name};
use crate::engine::{CheckMeta, ForeignKeyMeta, ReferentialAction, TableMeta};
use crate::sql::expr::quote_ident;
use sqlparser::ast::{self, Expr};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("conname", 'n'),
    ("connamespace", 'i'),
    ("contype", 't'),
    ("condeferrable", 'b'),
    ("condeferred", 'b'),
    ("convalidated", 'b'),
    ("conrelid", 'i'),
    ("contypid", 'i'),
    ("conindid", 'i'),
    ("confrelid", 'i'),
    ("conislocal", 'b'),
    ("coninhcount", 'i'),
    ("connoinherit", 'b'),
    ("conkey", 'a'),
    ("confkey", 'a'),
    ("conbin", 't'),
    ("confupdtype", 't'),
    ("confdeltype", 't'),
    ("confmatchtype", 't'),
    ("conparentid", 'i'),
];

/// One row per table with a visible primary key, and one per `UNIQUE` constraint.
pub fn rows(tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    let mut rows: Vec<Vec<V>> = tables
        .iter()
        .filter(|table| !pk_columns(table).is_empty())
        .map(|table| {
            let index = table_oid(table) + 1;
            row(
                table,
                index,
                index,
                pkey_name(table),
                "p",
                pk_attnums(table),
            )
        })
        .collect();
    for table in tables {
        for index in table.indexes.iter().filter(|i| i.constraint) {
            let key = index
                .columns
                .iter()
                .map(|c| attnum(table, c).unwrap_or(0).to_string())
                .collect();
            let oid = index_oid(index);
            rows.push(row(table, oid + 1, oid, index.name.clone(), "u", key));
        }
        for fk in &table.foreign_keys {
            if let Some(foreign) = foreign_key_row(tables, table, fk) {
                rows.push(foreign);
            }
        }
        for check in &table.checks {
            let mut columns: Vec<String> = Vec::new();
            if let Ok(expression) = parse(&check.expression) {
                let _ = ast::visit_expressions(&expression, |e| {
                    if let Expr::Identifier(ident) = e {
                        let attnum = attnum(table, &crate::sql::expr::fold(ident));
                        let attnum = attnum.unwrap_or(0).to_string();
                        if !columns.contains(&attnum) {
                            columns.push(attnum);
                        }
                    }
                    std::ops::ControlFlow::<()>::Continue(())
                });
            }
            rows.push(row(
                table,
                constraint_oid(check.id),
                0,
                check.name.clone(),
                "c",
                columns,
            ));
        }
    }
    rows
}

/// A foreign key's row: its parent's OID, columns and the index that finds parent rows.
fn foreign_key_row(
    tables: &[Arc<TableMeta>],
    table: &Arc<TableMeta>,
    fk: &ForeignKeyMeta,
) -> Option<Vec<V>> {
    let parent = tables.iter().find(|t| t.name == fk.parent)?;
    let attnums = |table: &Arc<TableMeta>, columns: &[String]| -> Vec<String> {
        columns
            .iter()
            .map(|c| attnum(table, c).unwrap_or(0).to_string())
            .collect()
    };
    let by_key = {
        let mut pk: Vec<&String> = parent.pk.iter().map(|c| &c.name).collect();
        let mut referenced: Vec<&String> = fk.parent_columns.iter().collect();
        pk.sort();
        referenced.sort();
        pk == referenced
    };
    let index = match by_key {
        true => table_oid(parent) + 1,
        false => parent
            .indexes
            .iter()
            .find(|i| {
                let mut columns: Vec<&String> = i.columns.iter().collect();
                let mut referenced: Vec<&String> = fk.parent_columns.iter().collect();
                columns.sort();
                referenced.sort();
                i.unique && columns == referenced
            })
            .map_or(0, index_oid),
    };
    let mut row = row(
        table,
        constraint_oid(fk.id),
        index,
        fk.name.clone(),
        "f",
        attnums(table, &fk.columns),
    );
    row[4] = V::B(fk.deferrable);
    row[5] = V::B(fk.initially_deferred);
    row[10] = V::I(table_oid(parent));
    row[15] = V::A(attnums(parent, &fk.parent_columns));
    row[17] = t(action_code(fk.on_update));
    row[18] = t(action_code(fk.on_delete));
    row[19] = t("s");
    Some(row)
}

/// `pg_constraint`'s letter for a referential action.
fn action_code(action: ReferentialAction) -> &'static str {
    match action {
        ReferentialAction::NoAction => "a",
        ReferentialAction::Restrict => "r",
        ReferentialAction::Cascade => "c",
        ReferentialAction::SetNull => "n",
    }
}

/// `pg_get_constraintdef` of a foreign key: `FOREIGN KEY (a) REFERENCES p(id) ON
/// DELETE CASCADE DEFERRABLE INITIALLY DEFERRED`, as PostgreSQL prints it.
pub fn foreign_key_definition(fk: &ForeignKeyMeta) -> String {
    let list = |columns: &[String]| {
        columns
            .iter()
            .map(|c| quote_ident(c))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut definition = format!(
        "FOREIGN KEY ({}) REFERENCES {}({})",
        list(&fk.columns),
        quote_ident(&fk.parent),
        list(&fk.parent_columns)
    );
    for (clause, action) in [("UPDATE", fk.on_update), ("DELETE", fk.on_delete)] {
        let action = match action {
            ReferentialAction::NoAction => continue,
            ReferentialAction::Restrict => "RESTRICT",
            ReferentialAction::Cascade => "CASCADE",
            ReferentialAction::SetNull => "SET NULL",
        };
        definition.push_str(&format!(" ON {clause} {action}"));
    }
    if fk.deferrable {
        definition.push_str(" DEFERRABLE");
    }
    if fk.initially_deferred {
        definition.push_str(" INITIALLY DEFERRED");
    }
    definition
}

fn row(
    table: &Arc<TableMeta>,
    oid: i64,
    index: i64,
    name: String,
    kind: &str,
    key: Vec<String>,
) -> Vec<V> {
    vec![
        V::I(oid),
        V::T(name),
        V::I(PUBLIC_OID),
        t(kind),
        V::B(false),
        V::B(false),
        V::B(true),
        V::I(table_oid(table)),
        V::I(0),
        V::I(index),
        V::I(0),
        V::B(true),
        V::I(0),
        V::B(true),
        V::A(key),
        V::N,
        V::N,
        t(" "),
        t(" "),
        t(" "),
        V::I(0),
    ]
}

fn parse(expression: &str) -> Result<Expr, sqlparser::parser::ParserError> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(expression)
        .and_then(|mut parser| parser.parse_expr())
}

/// `pg_get_constraintdef` of a CHECK constraint, parenthesized as PostgreSQL prints it:
/// `CHECK ((a > 0))`, `CHECK (((a > 1) AND (b < 5)))`; `pretty` (its second argument,
/// as psql's `\d` passes) without the parentheses: `CHECK (a > 0)`.
pub fn check_definition(check: &CheckMeta, pretty: bool) -> String {
    match (parse(&check.expression), pretty) {
        (Ok(expression), false) => format!("CHECK ({})", parenthesized(&expression)),
        (Ok(expression), true) => format!("CHECK ({expression})"),
        (Err(_), _) => format!("CHECK ({})", check.expression),
    }
}

fn parenthesized(expression: &Expr) -> String {
    match expression {
        Expr::BinaryOp { left, op, right } => {
            format!("({} {op} {})", parenthesized(left), parenthesized(right))
        }
        Expr::Nested(inner) => parenthesized(inner),
        Expr::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr,
        } => format!("(NOT {})", parenthesized(expr)),
        other => other.to_string(),
    }
}
