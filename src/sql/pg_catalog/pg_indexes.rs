//! The `pg_catalog.pg_indexes` view, and the definitions `pg_get_indexdef` gives: each
//! table's primary-key index and its secondary indexes, as the `CREATE INDEX` that
//! would make them.

use super::memory_table::{t, Col, V};
use super::table_columns::{pk_columns, pkey_name};
use crate::engine::{IndexMeta, TableMeta};
use crate::sql::expr::quote_ident;
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("schemaname", 'n'),
    ("tablename", 'n'),
    ("indexname", 'n'),
    ("tablespace", 'n'),
    ("indexdef", 't'),
];

/// One row per index, the primary key's first.
pub fn rows(tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    let mut rows = Vec::new();
    for table in tables {
        let row = |name: String, definition: String| {
            vec![
                t("public"),
                V::T(table.name.clone()),
                V::T(name),
                V::N,
                V::T(definition),
            ]
        };
        if !pk_columns(table).is_empty() {
            rows.push(row(pkey_name(table), definition(table, None)));
        }
        for index in &table.indexes {
            rows.push(row(index.name.clone(), definition(table, Some(index))));
        }
    }
    rows
}

/// `CREATE [UNIQUE] INDEX name ON public.t USING btree (columns)` of a secondary index,
/// or of the primary key's with `None`.
pub fn definition(table: &TableMeta, index: Option<&IndexMeta>) -> String {
    let (unique, name, columns) = match index {
        Some(index) => (index.unique, index.name.clone(), index.columns.clone()),
        None => (true, pkey_name(table), pk_columns(table)),
    };
    format!(
        "CREATE {}INDEX {} ON public.{} USING btree ({})",
        if unique { "UNIQUE " } else { "" },
        quote_ident(&name),
        quote_ident(&table.name),
        columns
            .iter()
            .map(|c| quote_ident(c))
            .collect::<Vec<_>>()
            .join(", ")
    )
}
