//! `pg_catalog.pg_index`: each table's primary key as a unique btree index, its OID
//! one above the table's. A table keyed by the hidden `_rowid` has none.

use super::memory_table::{Col, V};
use super::oids::table_oid;
use super::table_columns::{pk_attnums, pk_columns};
use crate::engine::TableMeta;
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

/// One row per table with a visible primary key.
pub fn rows(tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    tables
        .iter()
        .filter(|table| !pk_columns(table).is_empty())
        .map(row)
        .collect()
}

fn row(table: &Arc<TableMeta>) -> Vec<V> {
    let key = pk_attnums(table);
    let n = key.len() as i64;
    vec![
        V::I(table_oid(table) + 1),
        V::I(table_oid(table)),
        V::I(n),
        V::I(n),
        V::B(true),
        V::B(true),
        V::B(false),
        V::B(true),
        V::B(false),
        V::B(true),
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
