//! `pgwide.table_stats`: each table's capacity units and operation counts since the
//! server started (the engine's per-table totals; not persisted), its reserved
//! throughput, what it consumed over the last minute and how many statements that
//! throughput refused (docs/table-store.md §9.1).

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
    ("reserved_read_cu", 'i'),
    ("reserved_write_cu", 'i'),
    ("read_cu_last_minute", 'i'),
    ("write_cu_last_minute", 'i'),
    ("peak_read_cu_per_second", 'i'),
    ("peak_write_cu_per_second", 'i'),
    ("throttled_reads", 'i'),
    ("throttled_writes", 'i'),
];

/// One row per table of `instance`.
pub fn rows(engine: &Engine, instance: &str, tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    tables
        .iter()
        .map(|table| {
            let stats = engine.table_stats(table);
            let recent = engine.recent_throughput(table);
            vec![
                V::T(instance.to_string()),
                V::T(table.name.clone()),
                count(stats.read_cu),
                count(stats.write_cu),
                count(stats.reads),
                count(stats.writes),
                count(stats.rows_scanned),
                V::I(table.options.reserved_read_cu),
                V::I(table.options.reserved_write_cu),
                count(recent.read_cu_last_minute),
                count(recent.write_cu_last_minute),
                count(recent.peak_read_cu_per_second),
                count(recent.peak_write_cu_per_second),
                count(recent.throttled_reads),
                count(recent.throttled_writes),
            ]
        })
        .collect()
}
