//! The `pg_catalog.pg_tables` view: every table of the instance, in `public`, owned
//! by the one owner; it has indexes when it has a visible primary key or a secondary
//! index.

use super::memory_table::{t, Col, V};
use super::oids::OWNER;
use super::table_columns::pk_columns;
use crate::engine::TableMeta;
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("schemaname", 'n'),
    ("tablename", 'n'),
    ("tableowner", 'n'),
    ("tablespace", 'n'),
    ("hasindexes", 'b'),
    ("hasrules", 'b'),
    ("hastriggers", 'b'),
    ("rowsecurity", 'b'),
];

/// One row per table.
pub fn rows(tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    tables
        .iter()
        .map(|table| {
            vec![
                t("public"),
                V::T(table.name.clone()),
                t(OWNER),
                V::N,
                V::B(!pk_columns(table).is_empty() || !table.indexes.is_empty()),
                V::B(false),
                V::B(false),
                V::B(false),
            ]
        })
        .collect()
}
