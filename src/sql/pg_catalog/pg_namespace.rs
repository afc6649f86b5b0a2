//! `pg_catalog.pg_namespace`: the three schemas a client sees, with the OIDs
//! PostgreSQL gives them. `public` is as PostgreSQL 15 makes it: owned by
//! `pg_database_owner`, usable by everyone; pg_dump leaves a `public` like that out of
//! a dump, so restoring one into PostgreSQL changes nothing about it.

use super::memory_table::{t, Col, V};
use super::oids::{
    INFORMATION_SCHEMA, INFORMATION_SCHEMA_OID, OWNER_OID, PG_CATALOG, PG_CATALOG_OID, PUBLIC_OID,
};
use super::pg_roles::{DATABASE_OWNER, DATABASE_OWNER_OID};

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("nspname", 'n'),
    ("nspowner", 'i'),
    ("nspacl", 'a'),
];

/// `pg_catalog` and `information_schema`, owned by the one owner, and `public`.
pub fn rows() -> Vec<Vec<V>> {
    let public_acl = vec![
        format!("{DATABASE_OWNER}=UC/{DATABASE_OWNER}"),
        format!("=U/{DATABASE_OWNER}"),
    ];
    vec![
        vec![V::I(PG_CATALOG_OID), t(PG_CATALOG), V::I(OWNER_OID), V::N],
        vec![
            V::I(PUBLIC_OID),
            t("public"),
            V::I(DATABASE_OWNER_OID),
            V::A(public_acl),
        ],
        vec![
            V::I(INFORMATION_SCHEMA_OID),
            t(INFORMATION_SCHEMA),
            V::I(OWNER_OID),
            V::N,
        ],
    ]
}
