//! `pgwide.key_advice`: Table Store's primary-key advice applied to each table's data
//! and recent load (`engine::advise`): one row per piece of advice, naming the table,
//! the partition key when it is about one, the evidence in numbers and the remedy
//! (docs/table-store.md §9.2).

use super::memory_table::{Col, V};
use super::pgwide_partitions::{partition_key_datum, partition_key_text};
use crate::engine::{advise, Engine, TableEvidence, DEFAULT_PARTITION_SIZE_ADVICE};
use crate::sql::sql_types::SqlResult;
use crate::sql::values::render;

pub const COLUMNS: &[Col] = &[
    ("instance", 't'),
    ("table", 't'),
    ("advice", 't'),
    ("partition_key", 't'),
    ("evidence", 't'),
    ("remedy", 't'),
];

/// The advice for every table of `instance`; a partition key holding more than
/// `size_advice` bytes is too large.
pub async fn rows(
    engine: &Engine,
    instance: &str,
    size_advice: Option<u64>,
) -> SqlResult<Vec<Vec<V>>> {
    let size_advice = size_advice.unwrap_or(DEFAULT_PARTITION_SIZE_ADVICE);
    let mut rows = Vec::new();
    for table in engine.tables(instance).unwrap_or_default() {
        let sizes = engine.partition_sizes(&table).await?;
        let load = engine.partition_load(&table);
        let key_text = |key: &[u8]| {
            partition_key_datum(&table, key).map_or_else(|| format!("{key:?}"), |d| render(&d))
        };
        let time_text = |ms: i64| {
            chrono::DateTime::from_timestamp_millis(ms).map_or_else(
                || ms.to_string(),
                |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
            )
        };
        let evidence = TableEvidence {
            table: &table,
            sizes: &sizes,
            load: &load,
            size_advice,
            key_text: &key_text,
            time_text: &time_text,
        };
        for advice in advise(&evidence) {
            rows.push(vec![
                V::T(instance.to_string()),
                V::T(table.name.clone()),
                V::T(advice.kind.name().to_string()),
                advice
                    .partition_key
                    .as_deref()
                    .map_or(V::N, |key| V::T(partition_key_text(&table, key))),
                V::T(advice.evidence),
                V::T(advice.remedy),
            ]);
        }
    }
    Ok(rows)
}
