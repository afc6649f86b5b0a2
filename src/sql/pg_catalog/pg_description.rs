//! `pg_catalog.pg_description`: the comments `COMMENT ON TABLE` and `COMMENT ON
//! COLUMN` set, one row per table comment (`objsubid` 0) and per column comment (the
//! column's attnum), with `classoid` `pg_class`'s OID as PostgreSQL files them, and
//! the `public` schema's standard comment, which pg_dump looks for; and the lookups
//! `obj_description` and `col_description` answer from.

use super::memory_table::{Col, V};
use super::oids::{table_oid, PG_CLASS_OID, PUBLIC_OID};
use super::table_columns::columns;
use crate::engine::TableMeta;
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("objoid", 'i'),
    ("classoid", 'i'),
    ("objsubid", 'i'),
    ("description", 't'),
];

/// `pg_namespace`'s OID, the `classoid` of a schema's comment.
const PG_NAMESPACE_OID: i64 = 2615;

/// The comment PostgreSQL's initdb gives schema `public`.
pub const PUBLIC_SCHEMA_COMMENT: &str = "standard public schema";

/// The comments on `tables` and their columns, after `public`'s.
pub fn rows(tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    let mut rows = vec![vec![
        V::I(PUBLIC_OID),
        V::I(PG_NAMESPACE_OID),
        V::I(0),
        V::T(PUBLIC_SCHEMA_COMMENT.to_string()),
    ]];
    for table in tables {
        let oid = table_oid(table);
        let row = |subid: i64, text: &str| {
            vec![
                V::I(oid),
                V::I(PG_CLASS_OID),
                V::I(subid),
                V::T(text.to_string()),
            ]
        };
        if let Some(comment) = &table.comment {
            rows.push(row(0, comment));
        }
        for (attnum, (name, ..)) in (1..).zip(columns(table)) {
            if let Some(comment) = table.declared.comments.get(&name) {
                rows.push(row(attnum, comment));
            }
        }
    }
    rows
}

/// The comment on column `attnum` (from 1) of `table`, or on the table itself (0).
pub fn comment(table: &Arc<TableMeta>, attnum: i64) -> Option<String> {
    if attnum == 0 {
        return table.comment.clone();
    }
    let at = usize::try_from(attnum - 1).ok()?;
    let (name, ..) = columns(table).into_iter().nth(at)?;
    table.declared.comments.get(&name).cloned()
}
