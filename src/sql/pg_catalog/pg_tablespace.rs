//! `pg_catalog.pg_tablespace`: PostgreSQL's two built-in tablespaces, `pg_default`,
//! which every table is in, and `pg_global`, with no privileges or options set.

use super::memory_table::{t, Col, V};
use super::oids::OWNER_OID;

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("spcname", 'n'),
    ("spcowner", 'i'),
    ("spcacl", 'a'),
    ("spcoptions", 'a'),
];

/// `pg_default` and `pg_global` with PostgreSQL's OIDs.
pub fn rows() -> Vec<Vec<V>> {
    [(1663, "pg_default"), (1664, "pg_global")]
        .into_iter()
        .map(|(oid, name)| vec![V::I(oid), t(name), V::I(OWNER_OID), V::N, V::N])
        .collect()
}
