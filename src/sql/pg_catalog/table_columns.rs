//! A table's columns and primary key as the catalog relations show them: hidden
//! columns (the versions columns, `_rowid`) left out, and the PK index and constraint
//! named as declared, else `<table>_pkey` as PostgreSQL names them.

use super::oids::attnum;
use crate::engine::{GeneratedKind, TableMeta};
use crate::sql::relation::{Relation, RelationKind, Source};
use crate::sql::sql_types::SqlType;
use std::sync::Arc;

/// The name of a table's primary-key index and constraint.
pub fn pkey_name(table: &TableMeta) -> String {
    table.pk_constraint_name()
}

/// The visible columns of a table with their SQL types and whether each is `NOT NULL`
/// (a key column or one declared so).
pub fn columns(table: &Arc<TableMeta>) -> Vec<(String, SqlType, bool)> {
    Relation::new(Arc::clone(table), RelationKind::Table, None)
        .columns
        .into_iter()
        .filter(|c| !c.hidden)
        .map(|c| {
            let not_null = matches!(c.source, Source::Pk(_)) || table.is_not_null(&c.name);
            (c.name, c.ty, not_null)
        })
        .collect()
}

/// Every visible column of `tables`, each with its table and its place (0-based; the
/// attnum less one): what the per-column catalogs list a row for.
pub fn all_columns(
    tables: &[Arc<TableMeta>],
) -> impl Iterator<Item = (&Arc<TableMeta>, usize, (String, SqlType, bool))> {
    tables.iter().flat_map(|table| {
        columns(table)
            .into_iter()
            .enumerate()
            .map(move |(i, column)| (table, i, column))
    })
}

/// `pg_attribute.attidentity`: `a` for `GENERATED ALWAYS AS IDENTITY`, `d` for `BY
/// DEFAULT`, empty otherwise (a `SERIAL` column is no identity).
pub fn identity(table: &TableMeta, column: &str) -> &'static str {
    match table.generated.get(column).map(|g| g.kind) {
        Some(GeneratedKind::Always) => "a",
        Some(GeneratedKind::ByDefault) => "d",
        Some(GeneratedKind::Serial) | None => "",
    }
}

/// The default PostgreSQL shows for a column: a `SERIAL` column's `nextval`, or the
/// expression its `DEFAULT` declares.
pub fn column_default(table: &TableMeta, column: &str) -> Option<String> {
    table
        .generated
        .get(column)
        .filter(|g| g.kind == GeneratedKind::Serial)
        .map(|g| format!("nextval('{}'::regclass)", g.sequence))
        .or_else(|| table.defaults.get(column).cloned())
}

/// The PK columns a client sees: none for a table keyed by the hidden `_rowid`.
pub fn pk_columns(table: &TableMeta) -> Vec<String> {
    if table.auto_rowid {
        return Vec::new();
    }
    table.pk.iter().map(|c| c.name.clone()).collect()
}

/// The attnums of a table's primary-key columns, in key order (`pg_index.indkey`).
pub fn pk_attnums(table: &Arc<TableMeta>) -> Vec<String> {
    pk_columns(table)
        .iter()
        .filter_map(|c| attnum(table, c))
        .map(|n| n.to_string())
        .collect()
}
