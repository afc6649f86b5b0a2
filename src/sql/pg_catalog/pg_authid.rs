//! `pg_catalog.pg_authid`: the roles of `pg_roles` with their stored password
//! verifiers, which is why PostgreSQL lets only a superuser read it. `pg_dumpall`
//! reads it to recreate every role with its password.

use super::memory_table::{Col, V};
use super::pg_roles::role_rows;
use crate::auth::Roles;

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("rolname", 'n'),
    ("rolsuper", 'b'),
    ("rolinherit", 'b'),
    ("rolcreaterole", 'b'),
    ("rolcreatedb", 'b'),
    ("rolcanlogin", 'b'),
    ("rolreplication", 'b'),
    ("rolbypassrls", 'b'),
    ("rolconnlimit", 'i'),
    ("rolpassword", 't'),
    ("rolvaliduntil", 't'),
];

/// One row per role, its verifier in `rolpassword`.
pub fn rows(roles: Option<&Roles>) -> Vec<Vec<V>> {
    role_rows(roles)
        .into_iter()
        .map(|r| {
            vec![
                V::I(r.oid),
                V::T(r.name),
                V::B(r.superuser),
                V::B(true),
                V::B(r.superuser),
                V::B(r.superuser),
                V::B(r.login),
                V::B(false),
                V::B(r.superuser),
                V::I(-1),
                r.verifier,
                V::N,
            ]
        })
        .collect()
}
