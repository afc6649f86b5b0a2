//! `pg_catalog.pg_depend`: the dependencies clients look up here: a sequence owned by
//! the column whose values it generates (`a` for a SERIAL's, `i` for an identity
//! column's), as SQLAlchemy and Alembic find a column's sequence; and a column default
//! on the sequence its `nextval` reads (`n`), by which pg_dump knows to create the
//! sequence before it sets the default.

use super::memory_table::{t, Col, V};
use super::oids::{attnum, sequence_oid, table_oid, PG_CLASS_OID};
use super::pg_attribute::attrdef_oid;
use super::table_columns::{column_default, columns};
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

/// `pg_attrdef`'s OID, the `classid` of a column default's dependencies.
const PG_ATTRDEF_OID: i64 = 2604;

/// One row per sequence a table's column owns, then one per column default that reads
/// a sequence.
pub fn rows(tables: &[Arc<TableMeta>], sequences: &[Arc<SequenceMeta>]) -> Vec<Vec<V>> {
    let mut rows = owned_sequences(tables, sequences);
    for table in tables {
        for (attnum, (column, ..)) in (1..).zip(columns(table)) {
            let Some(default) = column_default(table, &column) else {
                continue;
            };
            let Some(sequence) = sequences
                .iter()
                .find(|s| reads_sequence(&default, &s.spec.name))
            else {
                continue;
            };
            rows.push(vec![
                V::I(PG_ATTRDEF_OID),
                V::I(attrdef_oid(table, attnum)),
                V::I(0),
                V::I(PG_CLASS_OID),
                V::I(sequence_oid(sequence)),
                V::I(0),
                t("n"),
            ]);
        }
    }
    rows
}

/// Whether a default's text calls `nextval` of sequence `name`.
fn reads_sequence(default: &str, name: &str) -> bool {
    let quoted = crate::sql::expr::quote_ident(name).replace('\'', "''");
    [name.to_string(), quoted]
        .iter()
        .flat_map(|n| [format!("nextval('{n}'"), format!("nextval('public.{n}'")])
        .any(|call| default.contains(&call))
}

/// One row per sequence a table's column owns.
fn owned_sequences(tables: &[Arc<TableMeta>], sequences: &[Arc<SequenceMeta>]) -> Vec<Vec<V>> {
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
