//! `pgwide.table_stats`: each table's capacity units and operation counts since the
//! server started (the engine's per-table totals; not persisted).

use super::memory_table::{count, Col, V};
use crate::engine::{Engine, TableMeta};
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("instance", 't'),
    ("table", 't'),
    ("read_cu", 'i'),
    ("write_cu", 'i'),
    ("reads", 'i'),
    ("writes", 'i'),
    ("rows_scanned", 'i'),
];

/// One row per table of `instance`.
pub fn rows(engine: &Engine, instance: &str, tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    tables
        .iter()
        .map(|table| {
            let stats = engine.table_stats(table);
            vec![
                V::T(instance.to_string()),
                V::T(table.name.clone()),
                count(stats.read_cu),
                count(stats.write_cu),
                count(stats.reads),
                count(stats.writes),
                count(stats.rows_scanned),
            ]
        })
        .collect()
}
