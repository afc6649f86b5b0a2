//! `pg_catalog.pg_depend`: the one kind of dependency clients look up here, a sequence
//! owned by the column whose values it generates (`a` for a SERIAL's, `i` for an
//! identity column's), as SQLAlchemy and Alembic find a column's sequence.

use super::memory_table::{t, Col, V};
use super::oids::{attnum, sequence_oid, table_oid, PG_CLASS_OID};
use crate::engine::{GeneratedKind, SequenceMeta, TableMeta};
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("classid", 'i'),
    ("objid", 'i'),
    ("objsubid", 'i'),
    ("refclassid", 'i'),
    ("refobjid", 'i'),
    ("refobjsubid", 'i'),
    ("deptype", 't'),
];

/// One row per sequence a table's column owns.
pub fn rows(tables: &[Arc<TableMeta>], sequences: &[Arc<SequenceMeta>]) -> Vec<Vec<V>> {
    let mut rows = Vec::new();
    for sequence in sequences {
        let Some((owner, column)) = &sequence.spec.owner else {
            continue;
        };
        let Some(table) = tables.iter().find(|t| &t.name == owner) else {
            continue;
        };
        let identity = table
            .generated
            .get(column)
            .is_some_and(|g| g.kind != GeneratedKind::Serial);
        rows.push(vec![
            V::I(PG_CLASS_OID),
            V::I(sequence_oid(sequence)),
            V::I(0),
            V::I(PG_CLASS_OID),
            V::I(table_oid(table)),
            V::I(attnum(table, column).unwrap_or(0)),
            t(if identity { "i" } else { "a" }),
        ]);
    }
    rows
}
