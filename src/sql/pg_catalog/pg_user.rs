//! `pg_catalog.pg_user`: the roles of `pg_roles` that can log in.

use super::memory_table::{Col, V};
use super::pg_roles::role_rows;
use crate::auth::Roles;

pub const COLUMNS: &[Col] = &[
    ("usename", 'n'),
    ("usesysid", 'i'),
    ("usecreatedb", 'b'),
    ("usesuper", 'b'),
    ("userepl", 'b'),
    ("usebypassrls", 'b'),
    ("passwd", 't'),
    ("valuntil", 't'),
    ("useconfig", 'a'),
];

/// One row per role with LOGIN.
pub fn rows(roles: Option<&Roles>) -> Vec<Vec<V>> {
    role_rows(roles)
        .into_iter()
        .filter(|r| r.login)
        .map(|r| {
            vec![
                V::T(r.name),
                V::I(r.oid),
                V::B(r.superuser),
                V::B(r.superuser),
                V::B(false),
                V::B(r.superuser),
                r.password,
                V::N,
                V::N,
            ]
        })
        .collect()
}
