//! `pg_catalog.pg_tablespace`: the one tablespace, `pg_default`, every table is in.

use super::memory_table::{t, Col, V};
use super::oids::OWNER_OID;

pub const COLUMNS: &[Col] = &[("oid", 'i'), ("spcname", 'n'), ("spcowner", 'i')];

/// `pg_default` with PostgreSQL's OID.
pub fn rows() -> Vec<Vec<V>> {
    vec![vec![V::I(1663), t("pg_default"), V::I(OWNER_OID)]]
}
