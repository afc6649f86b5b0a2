//! `pgwide.partitions`: how each table's data and load spread over its partition keys.
//! Per table, the [`TOP`] largest partition keys by stored bytes (from a cached walk of
//! the table, `Engine::partition_sizes`) and the [`TOP`] busiest by read and write
//! capacity units over the last one to two minutes (running counters,
//! `Engine::partition_load`), each with both its size and its load
//! (docs/table-store.md §9.2).

use super::memory_table::{count, Col, V};
use crate::engine::{decode_pk, Engine, KeyLoad, TableMeta};
use crate::sql::sql_types::{Datum, SqlResult};
use crate::sql::values::{coerce_for_output, declared_type, pk_sql_type, pk_to_datum, render};
use std::collections::HashMap;

/// The partition keys shown per table by size, and again by load.
pub const TOP: usize = 10;

pub const COLUMNS: &[Col] = &[
    ("instance", 't'),
    ("table", 't'),
    ("partition_key", 't'),
    ("rows", 'i'),
    ("bytes", 'i'),
    ("size_rank", 'i'),
    ("read_cu", 'i'),
    ("write_cu", 'i'),
    ("row_writes", 'i'),
    ("load_rank", 'i'),
    ("sized_at", 'z'),
    ("load_since", 'z'),
];

/// The rows of every table of `instance`: its largest partition keys, then the busiest
/// of the others.
pub async fn rows(engine: &Engine, instance: &str) -> SqlResult<Vec<Vec<V>>> {
    let mut rows = Vec::new();
    for table in engine.tables(instance).unwrap_or_default() {
        rows.extend(table_rows(engine, instance, &table).await?);
    }
    Ok(rows)
}

async fn table_rows(engine: &Engine, instance: &str, table: &TableMeta) -> SqlResult<Vec<Vec<V>>> {
    let sizes = engine.partition_sizes(table).await?;
    let load = engine.partition_load(table);
    let loads: HashMap<&[u8], &KeyLoad> =
        load.keys.iter().map(|(k, l)| (k.as_slice(), l)).collect();
    let busiest: Vec<&[u8]> = load
        .keys
        .iter()
        .take(TOP)
        .map(|(k, _)| k.as_slice())
        .collect();
    let load_rank = |key: &[u8]| busiest.iter().position(|b| *b == key).map(|r| r as i64 + 1);
    let idle = KeyLoad::default();
    let mut rows = Vec::new();
    let row = |key: &[u8], size: (u64, u64), size_rank: Option<i64>| {
        let key_load = loads.get(key).copied().unwrap_or(&idle);
        vec![
            V::T(instance.to_string()),
            V::T(table.name.clone()),
            V::T(partition_key_text(table, key)),
            count(size.0),
            count(size.1),
            size_rank.map_or(V::N, V::I),
            count(key_load.read_cu),
            count(key_load.write_cu),
            count(key_load.row_writes),
            load_rank(key).map_or(V::N, V::I),
            V::I(sizes.walked_ms.saturating_mul(1000)),
            V::I(load.since_ms.saturating_mul(1000)),
        ]
    };
    let largest = &sizes.largest[..sizes.largest.len().min(TOP)];
    for (rank, size) in largest.iter().enumerate() {
        rows.push(row(
            &size.partition_key,
            (size.rows, size.bytes),
            Some(rank as i64 + 1),
        ));
    }
    for key in &busiest {
        if largest.iter().any(|s| s.partition_key == *key) {
            continue;
        }
        let size = engine.partition_size(table, key).await?;
        rows.push(row(key, (size.rows, size.bytes), None));
    }
    Ok(rows)
}

/// An encoded partition key of `table` as a datum of its column's SQL type.
pub fn partition_key_datum(table: &TableMeta, key: &[u8]) -> Option<Datum> {
    let column = table.pk.first()?;
    let (values, _) = decode_pk(key, &[column.ty]).ok()?;
    let value = values.first()?;
    let ty = declared_type(table, &column.name).unwrap_or_else(|| pk_sql_type(column.ty));
    Some(coerce_for_output(pk_to_datum(&value.into()), ty))
}

/// An encoded partition key of `table` in PostgreSQL's text for its type.
pub fn partition_key_text(table: &TableMeta, key: &[u8]) -> String {
    match partition_key_datum(table, key) {
        Some(Datum::Text(text)) => text,
        Some(Datum::Int(i)) => i.to_string(),
        Some(other) => {
            let shown = render(&other);
            shown
                .strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .map(str::to_string)
                .unwrap_or(shown)
        }
        None => format!(
            "\\x{}",
            key.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ),
    }
}
