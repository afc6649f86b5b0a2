//! `pg_catalog.pg_database`: one database per engine instance, its OID above
//! PostgreSQL's reserved range; all UTF8 with the `C` locale.

use super::memory_table::{t, Col, V};
use super::oids::OWNER_OID;
use crate::engine::Engine;

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("datname", 'n'),
    ("datdba", 'i'),
    ("encoding", 'i'),
    ("datlocprovider", 't'),
    ("datistemplate", 'b'),
    ("datallowconn", 'b'),
    ("datconnlimit", 'i'),
    ("datfrozenxid", 't'),
    ("datminmxid", 't'),
    ("dattablespace", 'i'),
    ("datcollate", 'n'),
    ("datctype", 'n'),
    ("daticulocale", 't'),
    ("datcollversion", 't'),
    ("datacl", 'a'),
];

/// One row per instance of the engine.
pub fn rows(engine: &Engine) -> Vec<Vec<V>> {
    engine
        .instances()
        .into_iter()
        .map(|i| {
            vec![
                V::I(super::oids::database_oid(&i)),
                V::T(i.name),
                V::I(OWNER_OID),
                V::I(6),
                t("c"),
                V::B(false),
                V::B(true),
                V::I(-1),
                // Transaction ids pgwide does not have (it never wraps around): the
                // values of a freshly created PostgreSQL 15 database.
                t("716"),
                t("1"),
                V::I(1663),
                t("C"),
                t("C"),
                V::N,
                // PostgreSQL records no collation version for the `C` locale.
                V::N,
                V::N,
            ]
        })
        .collect()
}
