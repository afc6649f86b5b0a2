//! `pgwide.tables`: what the Table Store model knows of each table in one row — its
//! primary key, its options, and its counted rows and stored bytes (see
//! `table_sizes`).

use super::memory_table::{count, mem_table, Col, V};
use super::table_columns::pk_columns;
use crate::engine::{Engine, TableMeta, TableOptions, TableSize};
use datafusion::catalog::TableProvider;
use datafusion::error::Result;
use std::collections::HashMap;
use std::sync::Arc;

/// The instance, table and PK columns, one column per table option, then the size.
pub fn columns() -> Vec<Col> {
    let mut cols: Vec<Col> = vec![("instance", 't'), ("table", 't'), ("pk_columns", 'a')];
    let option_names: Vec<&'static str> = TableOptions::default()
        .as_pairs()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    cols.extend(option_names.iter().map(|n| (*n, 't')));
    cols.extend([("row_estimate", 'i'), ("bytes", 'i')]);
    cols
}

/// One row per table of `instance`.
pub fn rows(
    instance: &str,
    tables: &[Arc<TableMeta>],
    sizes: &HashMap<u32, TableSize>,
) -> Vec<Vec<V>> {
    tables
        .iter()
        .map(|table| {
            let mut row = vec![
                V::T(instance.to_string()),
                V::T(table.name.clone()),
                V::A(pk_columns(table)),
            ];
            row.extend(table.options.as_pairs().into_iter().map(|(_, v)| V::T(v)));
            let size = sizes.get(&table.id).copied().unwrap_or_default();
            row.extend([count(size.rows), count(size.bytes)]);
            row
        })
        .collect()
}

/// The view's table (a `table_sizes::BuildView`).
pub fn view(
    _engine: &Engine,
    instance: &str,
    tables: &[Arc<TableMeta>],
    sizes: &HashMap<u32, TableSize>,
) -> Result<Arc<dyn TableProvider>> {
    mem_table(&columns(), rows(instance, tables, sizes))
}
