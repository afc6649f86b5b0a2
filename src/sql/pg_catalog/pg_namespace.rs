//! `pg_catalog.pg_namespace`: the three schemas a client sees, with the OIDs
//! PostgreSQL gives them.

use super::memory_table::{t, Col, V};
use super::oids::{
    INFORMATION_SCHEMA, INFORMATION_SCHEMA_OID, OWNER_OID, PG_CATALOG, PG_CATALOG_OID, PUBLIC_OID,
};

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("nspname", 'n'),
    ("nspowner", 'i'),
    ("nspacl", 'a'),
];

/// `pg_catalog`, `public` and `information_schema`, all owned by the one owner.
pub fn rows() -> Vec<Vec<V>> {
    [
        (PG_CATALOG_OID, PG_CATALOG),
        (PUBLIC_OID, "public"),
        (INFORMATION_SCHEMA_OID, INFORMATION_SCHEMA),
    ]
    .iter()
    .map(|(oid, n)| vec![V::I(*oid), t(n), V::I(OWNER_OID), V::N])
    .collect()
}
