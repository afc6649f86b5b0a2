//! `pg_catalog.pg_class`: every table (`relkind` `r`, with its options as
//! `reloptions`) and its primary-key index (`relkind` `i`, one OID above the table's).

use super::memory_table::{t, Col, V};
use super::oids::{table_oid, OWNER_OID, PUBLIC_OID};
use super::table_columns::{columns, pk_columns, pkey_name};
use crate::engine::TableMeta;
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("relname", 't'),
    ("relnamespace", 'i'),
    ("reltype", 'i'),
    ("reloftype", 'i'),
    ("relowner", 'i'),
    ("relam", 'i'),
    ("relfilenode", 'i'),
    ("reltablespace", 'i'),
    ("relpages", 'i'),
    ("reltuples", 'i'),
    ("reltoastrelid", 'i'),
    ("relhasindex", 'b'),
    ("relisshared", 'b'),
    ("relpersistence", 't'),
    ("relkind", 't'),
    ("relnatts", 'i'),
    ("relchecks", 'i'),
    ("relhasrules", 'b'),
    ("relhastriggers", 'b'),
    ("relhassubclass", 'b'),
    ("relrowsecurity", 'b'),
    ("relforcerowsecurity", 'b'),
    ("relispopulated", 'b'),
    ("relreplident", 't'),
    ("relispartition", 'b'),
    ("relacl", 'a'),
    ("reloptions", 'a'),
    ("relpartbound", 't'),
];

/// The rows of every table and its primary-key index.
pub fn rows(tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    tables.iter().flat_map(table_rows).collect()
}

/// A table's `pg_class` row, and its primary-key index's.
fn table_rows(table: &Arc<TableMeta>) -> Vec<Vec<V>> {
    let oid = table_oid(table);
    let has_pk = !pk_columns(table).is_empty();
    let options = table
        .options
        .as_pairs()
        .into_iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let row = |oid: i64, name: String, kind: &str, am: i64, natts: usize, options: V| {
        vec![
            V::I(oid),
            V::T(name),
            V::I(PUBLIC_OID),
            V::I(0),
            V::I(0),
            V::I(OWNER_OID),
            V::I(am),
            V::I(oid),
            V::I(0),
            V::I(0),
            V::I(-1),
            V::I(0),
            V::B(kind == "r" && has_pk),
            V::B(false),
            t("p"),
            t(kind),
            V::I(natts as i64),
            V::I(0),
            V::B(false),
            V::B(false),
            V::B(false),
            V::B(false),
            V::B(false),
            V::B(true),
            t("d"),
            V::B(false),
            V::N,
            options,
            V::N,
        ]
    };
    let mut rows = vec![row(
        oid,
        table.name.clone(),
        "r",
        2,
        columns(table).len(),
        V::A(options),
    )];
    if has_pk {
        rows.push(row(
            oid + 1,
            pkey_name(table),
            "i",
            403,
            table.pk.len(),
            V::N,
        ));
    }
    rows
}
