//! `pg_catalog.pg_stat_all_tables` and `pg_stat_user_tables` (the same rows: every
//! table is a user table). Scans are the engine calls that read the table (`seq_scan`)
//! and the rows they examined (`seq_tup_read`), since the server started; the live rows
//! are the table's counted size (see `table_sizes`). pgwide keeps no per-kind write
//! counts or vacuum statistics: those columns are 0 (NULL for times).

use super::memory_table::{count, mem_table, t, Col, V};
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
    ("seq_scan", 'i'),
    ("seq_tup_read", 'i'),
    ("idx_scan", 'i'),
    ("idx_tup_fetch", 'i'),
    ("n_tup_ins", 'i'),
    ("n_tup_upd", 'i'),
    ("n_tup_del", 'i'),
    ("n_tup_hot_upd", 'i'),
    ("n_live_tup", 'i'),
    ("n_dead_tup", 'i'),
    ("n_mod_since_analyze", 'i'),
    ("n_ins_since_vacuum", 'i'),
    ("last_vacuum", 't'),
    ("last_autovacuum", 't'),
    ("last_analyze", 't'),
    ("last_autoanalyze", 't'),
    ("vacuum_count", 'i'),
    ("autovacuum_count", 'i'),
    ("analyze_count", 'i'),
    ("autoanalyze_count", 'i'),
];

/// One row per table, with the engine's per-table counts and its size.
pub fn rows(
    engine: &Engine,
    tables: &[Arc<TableMeta>],
    sizes: &HashMap<u32, TableSize>,
) -> Vec<Vec<V>> {
    tables
        .iter()
        .map(|table| {
            let stats = engine.table_stats(table);
            let live = sizes.get(&table.id).map_or(0, |s| s.rows);
            let mut row = vec![
                V::I(table_oid(table)),
                t("public"),
                V::T(table.name.clone()),
                count(stats.reads),
                count(stats.rows_scanned),
                V::I(0),
                V::I(0),
                V::I(0),
                V::I(0),
                V::I(0),
                V::I(0),
                count(live),
                V::I(0),
                V::I(0),
                V::I(0),
            ];
            row.extend([V::N, V::N, V::N, V::N]);
            row.extend((0..4).map(|_| V::I(0)));
            row
        })
        .collect()
}

/// The view's table (a `table_sizes::BuildView`).
pub fn view(
    engine: &Engine,
    _instance: &str,
    tables: &[Arc<TableMeta>],
    sizes: &HashMap<u32, TableSize>,
) -> Result<Arc<dyn TableProvider>> {
    mem_table(COLUMNS, rows(engine, tables, sizes))
}
