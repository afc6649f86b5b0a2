//! `pg_catalog.pg_class`: every table (`relkind` `r`, with the options it was given
//! as `reloptions`), its primary-key index (`relkind` `i`, one OID above the table's) and
//! secondary indexes (`relkind` `i`), and every sequence (`relkind` `S`), and
//! `pg_catalog.pg_sequence`: each sequence's definition.

use super::memory_table::{t, Col, V};
use super::oids::{index_oid, sequence_oid, table_oid, OWNER, OWNER_OID, PUBLIC_OID};
use super::table_columns::{columns, pk_columns, pkey_name};
use crate::auth::{Privilege, Roles};
use crate::engine::{SequenceMeta, SequenceType, TableMeta};
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("relname", 'n'),
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
    ("relallvisible", 'i'),
    ("relrewrite", 'i'),
    // Transaction ids PostgreSQL freezes below; pgwide has none to freeze.
    ("relfrozenxid", 'i'),
    ("relminmxid", 'i'),
];

/// Where `relchecks` is among the columns.
const RELCHECKS: usize = 17;
/// Where `relhastriggers` is among the columns.
const RELHASTRIGGERS: usize = 19;
/// Where `relacl` is among the columns.
const RELACL: usize = 26;

/// The rows of every table and its primary-key index, and of every sequence; a
/// table's `relacl` lists the privileges `roles` were granted on it.
pub fn rows(
    tables: &[Arc<TableMeta>],
    sequences: &[Arc<SequenceMeta>],
    roles: Option<&Roles>,
) -> Vec<Vec<V>> {
    let mut rows: Vec<Vec<V>> = Vec::new();
    for table in tables {
        let mut table_rows = table_rows(table);
        if let (Some(row), Some(acl)) = (table_rows.first_mut(), roles.and_then(|r| acl(r, table)))
        {
            row[RELACL] = V::A(acl);
        }
        // PostgreSQL keeps foreign keys with triggers on both tables, and psql's `\d`
        // lists a table's keys and the keys referencing it only when this is set.
        let has_triggers = !table.foreign_keys.is_empty()
            || tables
                .iter()
                .any(|t| t.foreign_keys.iter().any(|fk| fk.parent == table.name));
        if let Some(row) = table_rows.first_mut() {
            row[RELHASTRIGGERS] = V::B(has_triggers);
            row[RELCHECKS] = V::I(table.checks.len() as i64);
        }
        rows.extend(table_rows);
    }
    rows.extend(
        sequences
            .iter()
            .map(|s| relation_row(sequence_oid(s), s.spec.name.clone(), "S", 0, 3, false, V::N)),
    );
    rows
}

/// A table's access privileges as PostgreSQL's `aclitem[]` shows them
/// (`grantee=privileges/grantor`), once any role was granted one: the owner's own
/// first, then each grantee's, `arwd` being INSERT, SELECT, UPDATE, DELETE. `None`
/// while nobody was (PostgreSQL's NULL, the owner's default privileges).
fn acl(roles: &Roles, table: &TableMeta) -> Option<Vec<String>> {
    let grants: Vec<String> = roles
        .list()
        .into_iter()
        .filter_map(|role| {
            let grant = role
                .tables
                .iter()
                .find(|g| g.table_id == table.id && g.instance == table.instance)?;
            let letters: String = [
                (Privilege::Insert, 'a'),
                (Privilege::Select, 'r'),
                (Privilege::Update, 'w'),
                (Privilege::Delete, 'd'),
            ]
            .iter()
            .filter(|(p, _)| grant.privileges.contains(*p))
            .map(|(_, letter)| *letter)
            .collect();
            Some(format!("{}={letters}/{OWNER}", role.name))
        })
        .collect();
    if grants.is_empty() {
        return None;
    }
    let owner = format!("{OWNER}=arwdDxt/{OWNER}");
    Some(std::iter::once(owner).chain(grants).collect())
}

pub const SEQUENCE_COLUMNS: &[Col] = &[
    ("seqrelid", 'i'),
    ("seqtypid", 'i'),
    ("seqstart", 'i'),
    ("seqincrement", 'i'),
    ("seqmax", 'i'),
    ("seqmin", 'i'),
    ("seqcache", 'i'),
    ("seqcycle", 'b'),
];

/// `pg_sequence`: each sequence's type, start, increment, bounds, cache and cycle.
pub fn sequence_rows(sequences: &[Arc<SequenceMeta>]) -> Vec<Vec<V>> {
    sequences
        .iter()
        .map(|s| {
            let spec = &s.spec;
            let type_oid = match spec.value_type() {
                SequenceType::Int2 => 21,
                SequenceType::Int4 => 23,
                SequenceType::Int8 => 20,
            };
            vec![
                V::I(sequence_oid(s)),
                V::I(type_oid),
                V::I(spec.start),
                V::I(spec.increment),
                V::I(spec.max),
                V::I(spec.min),
                V::I(1),
                V::B(spec.cycle),
            ]
        })
        .collect()
}

/// One `pg_class` row: a relation of `kind` with `natts` columns.
pub(super) fn relation_row(
    oid: i64,
    name: String,
    kind: &str,
    am: i64,
    natts: usize,
    has_index: bool,
    options: V,
) -> Vec<V> {
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
        V::B(has_index),
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
        V::I(0),
        V::I(0),
        V::I(0),
        V::I(0),
    ]
}

/// A table's `pg_class` row, and its indexes'.
fn table_rows(table: &Arc<TableMeta>) -> Vec<Vec<V>> {
    let oid = table_oid(table);
    let has_pk = !pk_columns(table).is_empty();
    // Only the options a table was given, as PostgreSQL lists only storage parameters
    // that were set: a table with Table Store's defaults shows none, so pg_dump writes
    // no `WITH (...)` a PostgreSQL restore would refuse (`pgwide.tables` shows all).
    let defaults = crate::engine::TableOptions::default().as_pairs();
    let options: Vec<String> = table
        .options
        .as_pairs()
        .into_iter()
        .filter(|pair| !defaults.contains(pair))
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let options = match options.is_empty() {
        true => V::N,
        false => V::A(options),
    };
    let row = |oid: i64, name: String, kind: &str, am: i64, natts: usize, options: V| {
        let has_index = has_pk || !table.indexes.is_empty();
        relation_row(
            oid,
            name,
            kind,
            am,
            natts,
            kind == "r" && has_index,
            options,
        )
    };
    let mut rows = vec![row(
        oid,
        table.name.clone(),
        "r",
        2,
        columns(table).len(),
        options,
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
    for index in &table.indexes {
        rows.push(row(
            index_oid(index),
            index.name.clone(),
            "i",
            403,
            index.columns.len(),
            V::N,
        ));
    }
    rows
}
