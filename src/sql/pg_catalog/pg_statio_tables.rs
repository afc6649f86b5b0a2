//! `pg_catalog.pg_statio_all_tables` and `pg_statio_user_tables` (the same rows:
//! every table is a user table). pgwide keeps no block statistics, so every count is 0.

use super::memory_table::{mem_table, t, Col, V};
use super::oids::table_oid;
use crate::engine::{Engine, TableMeta, TableSize};
use datafusion::catalog::TableProvider;
use datafusion::error::Result;
use std::collections::HashMap;
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("relid", 'i'),
    ("schemaname", 'n'),
    ("relname", 'n'),
    ("heap_blks_read", 'i'),
    ("heap_blks_hit", 'i'),
    ("idx_blks_read", 'i'),
    ("idx_blks_hit", 'i'),
    ("toast_blks_read", 'i'),
    ("toast_blks_hit", 'i'),
    ("tidx_blks_read", 'i'),
    ("tidx_blks_hit", 'i'),
];

/// One row per table.
pub fn rows(tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    tables
        .iter()
        .map(|table| {
            let mut row = vec![
                V::I(table_oid(table)),
                t("public"),
                V::T(table.name.clone()),
            ];
            row.extend((3..COLUMNS.len()).map(|_| V::I(0)));
            row
        })
        .collect()
}

/// The view's table (a `table_sizes::BuildView`). It is served as a sized view like
/// `pg_stat_all_tables`, though its rows do not use the sizes.
pub fn view(
    _engine: &Engine,
    _instance: &str,
    tables: &[Arc<TableMeta>],
    _sizes: &HashMap<u32, TableSize>,
) -> Result<Arc<dyn TableProvider>> {
    mem_table(COLUMNS, rows(tables))
}
