//! `pg_catalog.pg_collation`: `default`, `C` and `POSIX`, the collations PostgreSQL
//! always has.

use super::memory_table::{t, Col, V};
use super::oids::{OWNER_OID, PG_CATALOG_OID};

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("collname", 'n'),
    ("collnamespace", 'i'),
    ("collowner", 'i'),
    ("collprovider", 't'),
    ("collencoding", 'i'),
    ("collcollate", 't'),
    ("collctype", 't'),
];

/// The three built-in collations, with PostgreSQL's OIDs.
pub fn rows() -> Vec<Vec<V>> {
    [(100, "default", "d"), (950, "C", "c"), (951, "POSIX", "c")]
        .iter()
        .map(|(oid, n, p)| {
            vec![
                V::I(*oid),
                t(n),
                V::I(PG_CATALOG_OID),
                V::I(OWNER_OID),
                t(p),
                V::I(-1),
                t("C"),
                t("C"),
            ]
        })
        .collect()
}
