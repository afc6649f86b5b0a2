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
    ("collisdeterministic", 'b'),
    ("collencoding", 'i'),
    ("collcollate", 't'),
    ("collctype", 't'),
    ("colliculocale", 't'),
    ("collversion", 't'),
];

/// The three built-in collations, with PostgreSQL's OIDs; `default`'s locale is the
/// database's (`C`), so it names none of its own, as in PostgreSQL.
pub fn rows() -> Vec<Vec<V>> {
    [
        (100, "default", "d", None),
        (950, "C", "c", Some("C")),
        (951, "POSIX", "c", Some("POSIX")),
    ]
    .iter()
    .map(|(oid, n, p, locale)| {
        let locale = || locale.map_or(V::N, t);
        vec![
            V::I(*oid),
            t(n),
            V::I(PG_CATALOG_OID),
            V::I(OWNER_OID),
            t(p),
            V::B(true),
            V::I(-1),
            locale(),
            locale(),
            V::N,
            V::N,
        ]
    })
    .collect()
}
