//! `pg_catalog.pg_stat_activity`: one row per connection of the server (`activity`),
//! with its database, role, client, state and statement. As in PostgreSQL, a role that
//! is not a superuser sees the statements of its own connections only (the others'
//! read `<insufficient privilege>`). Also `pg_stat_gssapi`, a row per connection,
//! none authenticated or encrypted by GSSAPI, which pgwide does not speak.

use super::memory_table::{t, Col, V};
use super::oids::database_oid;
use super::pg_roles::role_rows;
use crate::auth::Roles;
use crate::engine::Engine;
use crate::sql::activity::BackendActivity;
use std::time::{SystemTime, UNIX_EPOCH};

pub const COLUMNS: &[Col] = &[
    ("datid", 'i'),
    ("datname", 'n'),
    ("pid", 'i'),
    ("leader_pid", 'i'),
    ("usesysid", 'i'),
    ("usename", 'n'),
    ("application_name", 't'),
    ("client_addr", 't'),
    ("client_hostname", 't'),
    ("client_port", 'i'),
    ("backend_start", 'z'),
    ("xact_start", 'z'),
    ("query_start", 'z'),
    ("state_change", 'z'),
    ("wait_event_type", 't'),
    ("wait_event", 't'),
    ("state", 't'),
    ("backend_xid", 't'),
    ("backend_xmin", 't'),
    ("query_id", 'i'),
    ("query", 't'),
    ("backend_type", 't'),
];

/// Who reads the view: their role's name, and whether it is a superuser.
pub struct Viewer<'a> {
    pub user: &'a str,
    pub superuser: bool,
}

/// The rows of `backends`, as `viewer` may see them.
pub fn rows(
    engine: &Engine,
    roles: Option<&Roles>,
    backends: &[BackendActivity],
    viewer: &Viewer,
) -> Vec<Vec<V>> {
    let databases = engine.instances();
    let roles = role_rows(roles);
    backends
        .iter()
        .map(|b| {
            let datid = databases
                .iter()
                .find(|d| d.name == b.database)
                .map_or(V::N, |d| V::I(database_oid(d)));
            let usesysid = roles
                .iter()
                .find(|r| r.name == b.user)
                .map_or(V::N, |r| V::I(r.oid));
            let visible = viewer.superuser || viewer.user == b.user;
            let shown = |value: V| if visible { value } else { V::N };
            vec![
                datid,
                V::T(b.database.clone()),
                V::I(i64::from(b.pid)),
                V::N,
                usesysid,
                V::T(b.user.clone()),
                V::T(b.application_name.clone()),
                shown(b.client.map_or(V::N, |c| V::T(c.ip().to_string()))),
                V::N,
                // A local socket's port is -1, as PostgreSQL shows it.
                shown(V::I(b.client.map_or(-1, |c| i64::from(c.port())))),
                shown(micros(Some(b.backend_start))),
                shown(micros(b.xact_start)),
                shown(micros(b.query_start)),
                shown(micros(b.state_change)),
                V::N,
                V::N,
                shown(t(b.state)),
                V::N,
                V::N,
                V::N,
                match visible {
                    true => V::T(b.query.clone()),
                    false => t("<insufficient privilege>"),
                },
                t("client backend"),
            ]
        })
        .collect()
}

/// A time as a `timestamptz` cell: microseconds since the Unix epoch.
fn micros(time: Option<SystemTime>) -> V {
    let Some(time) = time else {
        return V::N;
    };
    match time.duration_since(UNIX_EPOCH) {
        Ok(since) => V::I(i64::try_from(since.as_micros()).unwrap_or(i64::MAX)),
        Err(_) => V::N,
    }
}

pub const GSSAPI_COLUMNS: &[Col] = &[
    ("pid", 'i'),
    ("gss_authenticated", 'b'),
    ("principal", 't'),
    ("encrypted", 'b'),
];

/// `pg_stat_gssapi`: each connection, without GSSAPI.
pub fn gssapi_rows(backends: &[BackendActivity]) -> Vec<Vec<V>> {
    backends
        .iter()
        .map(|b| vec![V::I(i64::from(b.pid)), V::B(false), V::N, V::B(false)])
        .collect()
}
