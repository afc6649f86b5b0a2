//! `pg_catalog.pg_am`: the access methods clients expect by name, `heap` for tables
//! and `btree` for the primary-key indexes.

use super::memory_table::{t, Col, V};

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("amname", 'n'),
    ("amhandler", 't'),
    ("amtype", 't'),
];

/// `heap` and `btree`, with PostgreSQL's OIDs.
pub fn rows() -> Vec<Vec<V>> {
    vec![
        vec![V::I(2), t("heap"), t("heap_tableam_handler"), t("t")],
        vec![V::I(403), t("btree"), t("bthandler"), t("i")],
    ]
}
