//! `pg_catalog.pg_constraint`: each table's primary key as a `p` constraint named
//! `<table>_pkey`, sharing its OID with the PK index, and each `UNIQUE` constraint as a
//! `u` constraint, its OID one above its index's.

use super::memory_table::{t, Col, V};
use super::oids::{attnum, index_oid, table_oid, PUBLIC_OID};
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

/// One row per table with a visible primary key, and one per `UNIQUE` constraint.
pub fn rows(tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    let mut rows: Vec<Vec<V>> = tables
        .iter()
        .filter(|table| !pk_columns(table).is_empty())
        .map(|table| {
            let index = table_oid(table) + 1;
            row(
                table,
                index,
                index,
                pkey_name(table),
                "p",
                pk_attnums(table),
            )
        })
        .collect();
    for table in tables {
        for index in table.indexes.iter().filter(|i| i.constraint) {
            let key = index
                .columns
                .iter()
                .map(|c| attnum(table, c).unwrap_or(0).to_string())
                .collect();
            let oid = index_oid(index);
            rows.push(row(table, oid + 1, oid, index.name.clone(), "u", key));
        }
    }
    rows
}

fn row(
    table: &Arc<TableMeta>,
    oid: i64,
    index: i64,
    name: String,
    kind: &str,
    key: Vec<String>,
) -> Vec<V> {
    vec![
        V::I(oid),
        V::T(name),
        V::I(PUBLIC_OID),
        t(kind),
        V::B(false),
        V::B(false),
        V::B(true),
        V::I(table_oid(table)),
        V::I(0),
        V::I(index),
        V::I(0),
        V::B(true),
        V::I(0),
        V::B(true),
        V::A(key),
        V::N,
        V::N,
    ]
}
