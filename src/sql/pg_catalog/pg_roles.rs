//! `pg_catalog.pg_roles`: the owner (`postgres`, OID 10) and every role of the role
//! store, with the role attributes pgwide has (superuser, login) and a masked password.
//! [`role_rows`] also feeds `pg_user` and `pg_authid`.

use super::memory_table::{t, Col, V};
use super::oids::{OWNER, OWNER_OID};
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
    ("rolconnlimit", 'i'),
    ("rolpassword", 't'),
    ("rolvaliduntil", 't'),
    ("rolbypassrls", 'b'),
    ("rolconfig", 'a'),
];

/// One row per role of [`role_rows`].
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
                V::I(-1),
                r.password,
                V::N,
                V::B(r.superuser),
                V::N,
            ]
        })
        .collect()
}

/// PostgreSQL 15's built-in role that stands for the owner of the current database,
/// which owns schema `public`.
pub const DATABASE_OWNER: &str = "pg_database_owner";
pub const DATABASE_OWNER_OID: i64 = 6171;

/// One role as pg_roles / pg_user show it.
pub struct RoleRow {
    pub oid: i64,
    pub name: String,
    pub superuser: bool,
    pub login: bool,
    /// `********` when the role has a password (never the verifier), else NULL.
    pub password: V,
    /// The stored SCRAM (or MD5) verifier, for `pg_authid`, which only a superuser reads.
    pub verifier: V,
}

/// The owner (`postgres`, OID 10) and every role of the store (`None`: the owner
/// alone). Role OIDs are a hash of the name, so they stay the same across restarts.
pub fn role_rows(roles: Option<&Roles>) -> Vec<RoleRow> {
    let mut rows = vec![
        RoleRow {
            oid: OWNER_OID,
            name: OWNER.to_string(),
            superuser: true,
            login: true,
            password: t("********"),
            verifier: V::N,
        },
        RoleRow {
            oid: DATABASE_OWNER_OID,
            name: DATABASE_OWNER.to_string(),
            superuser: false,
            login: false,
            password: V::N,
            verifier: V::N,
        },
    ];
    let Some(roles) = roles else {
        return rows;
    };
    for role in roles.list() {
        let password = if role.has_password() {
            t("********")
        } else {
            V::N
        };
        let verifier = role
            .scram
            .as_deref()
            .or(role.md5.as_deref())
            .map_or(V::N, t);
        if role.name == OWNER {
            rows[0].superuser = role.superuser;
            rows[0].login = role.login;
            rows[0].password = password;
            rows[0].verifier = verifier;
            continue;
        }
        // FNV-1a, folded above the OIDs PostgreSQL reserves for built-in objects.
        let hash = role.name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        rows.push(RoleRow {
            oid: 100_000 + (hash % 1_000_000_000) as i64,
            name: role.name,
            superuser: role.superuser,
            login: role.login,
            password,
            verifier,
        });
    }
    rows
}
