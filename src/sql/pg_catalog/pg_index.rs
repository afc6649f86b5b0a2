//! `pg_catalog.pg_index`: each table's primary key as a unique btree index, its OID
//! one above the table's (a table keyed by the hidden `_rowid` has none), and its
//! secondary indexes.

use super::memory_table::{Col, V};
use super::oids::{attnum, index_oid, table_oid};
use super::table_columns::{pk_attnums, pk_columns};
use crate::engine::{IndexMeta, TableMeta};
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("indexrelid", 'i'),
    ("indrelid", 'i'),
    ("indnatts", 'i'),
    ("indnkeyatts", 'i'),
    ("indisunique", 'b'),
    ("indisprimary", 'b'),
    ("indisexclusion", 'b'),
    ("indimmediate", 'b'),
    ("indisclustered", 'b'),
    ("indisvalid", 'b'),
    ("indcheckxmin", 'b'),
    ("indisready", 'b'),
    ("indislive", 'b'),
    ("indisreplident", 'b'),
    ("indkey", 't'),
    ("indexprs", 't'),
    ("indpred", 't'),
    ("indoption", 't'),
    ("indcollation", 't'),
    ("indclass", 't'),
    ("indnullsnotdistinct", 'b'),
];

/// One row per table with a visible primary key, and one per secondary index.
pub fn rows(tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    let mut rows: Vec<Vec<V>> = tables
        .iter()
        .filter(|table| !pk_columns(table).is_empty())
        .map(|table| {
            row(
                table_oid(table) + 1,
                table,
                pk_attnums(table),
                true,
                true,
                true,
            )
        })
        .collect();
    for table in tables {
        rows.extend(
            table
                .indexes
                .iter()
                .map(|index| secondary_row(table, index)),
        );
    }
    rows
}

fn secondary_row(table: &Arc<TableMeta>, index: &IndexMeta) -> Vec<V> {
    let key = index
        .columns
        .iter()
        .map(|c| attnum(table, c).unwrap_or(0).to_string())
        .collect();
    row(
        index_oid(index),
        table,
        key,
        index.unique,
        false,
        index.ready,
    )
}

fn row(
    oid: i64,
    table: &Arc<TableMeta>,
    key: Vec<String>,
    unique: bool,
    primary: bool,
    valid: bool,
) -> Vec<V> {
    let n = key.len() as i64;
    vec![
        V::I(oid),
        V::I(table_oid(table)),
        V::I(n),
        V::I(n),
        V::B(unique),
        V::B(primary),
        V::B(false),
        V::B(true),
        V::B(false),
        V::B(valid),
        V::B(false),
        V::B(true),
        V::B(true),
        V::B(false),
        V::T(key.join(" ")),
        V::N,
        V::N,
        V::T(vec!["0"; key.len()].join(" ")),
        V::T(vec!["0"; key.len()].join(" ")),
        V::T(vec!["0"; key.len()].join(" ")),
        V::B(false),
    ]
}
