//! `pg_catalog.pg_constraint`: each table's primary key as a `p` constraint named
//! `<table>_pkey`, sharing its OID with the PK index. pgwide has no other constraints.

use super::memory_table::{t, Col, V};
use super::oids::{table_oid, PUBLIC_OID};
use super::table_columns::{pk_attnums, pk_columns, pkey_name};
use crate::engine::TableMeta;
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("conname", 't'),
    ("connamespace", 'i'),
    ("contype", 't'),
    ("condeferrable", 'b'),
    ("condeferred", 'b'),
    ("convalidated", 'b'),
    ("conrelid", 'i'),
    ("contypid", 'i'),
    ("conindid", 'i'),
    ("confrelid", 'i'),
    ("conislocal", 'b'),
    ("coninhcount", 'i'),
    ("connoinherit", 'b'),
    ("conkey", 'a'),
    ("confkey", 'a'),
    ("conbin", 't'),
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
    vec![
        V::I(table_oid(table) + 1),
        V::T(pkey_name(table)),
        V::I(PUBLIC_OID),
        t("p"),
        V::B(false),
        V::B(false),
        V::B(true),
        V::I(table_oid(table)),
        V::I(0),
        V::I(table_oid(table) + 1),
        V::I(0),
        V::B(true),
        V::I(0),
        V::B(true),
        V::A(key),
        V::N,
        V::N,
    ]
}
