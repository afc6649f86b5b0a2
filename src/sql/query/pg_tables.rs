//! The rows of each `pg_catalog` table: namespaces, classes (tables and their PK
//! indexes, with options as `reloptions`), attributes, types, the PK as index and
//! constraint, databases (instances), the one role, settings, access methods.

use super::pg_catalog::*;
use crate::engine::TableMeta;
use crate::sql::types::SqlType;
use datafusion::catalog::TableProvider;
use datafusion::error::Result;
use std::sync::Arc;

impl CatalogSchema {
    pub(super) fn pg_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some((_, cols)) = EMPTY_TABLES.iter().find(|e| e.0 == name) {
            return mem_table(cols, Vec::new()).map(Some);
        }
        let tables = self.tables();
        let (cols, rows): (&[Col], Vec<Vec<V>>) = match name {
            "pg_namespace" => (
                &[
                    ("oid", 'i'),
                    ("nspname", 't'),
                    ("nspowner", 'i'),
                    ("nspacl", 'a'),
                ],
                [
                    (PG_CATALOG_OID, PG_CATALOG),
                    (PUBLIC_OID, "public"),
                    (INFORMATION_SCHEMA_OID, INFORMATION_SCHEMA),
                ]
                .iter()
                .map(|(oid, n)| vec![V::I(*oid), t(n), V::I(OWNER_OID), V::N])
                .collect(),
            ),
            "pg_class" => (PG_CLASS, tables.iter().flat_map(pg_class_rows).collect()),
            "pg_attribute" => (
                &[
                    ("attrelid", 'i'),
                    ("attname", 't'),
                    ("atttypid", 'i'),
                    ("attnum", 'i'),
                    ("attlen", 'i'),
                    ("atttypmod", 'i'),
                    ("attnotnull", 'b'),
                    ("atthasdef", 'b'),
                    ("attisdropped", 'b'),
                    ("attidentity", 't'),
                    ("attgenerated", 't'),
                    ("attcollation", 'i'),
                    ("attstorage", 't'),
                    ("attstattarget", 'i'),
                    ("attndims", 'i'),
                    ("atthasmissing", 'b'),
                    ("attislocal", 'b'),
                    ("attcompression", 't'),
                ],
                tables
                    .iter()
                    .flat_map(|table| {
                        columns(table)
                            .into_iter()
                            .enumerate()
                            .map(move |(i, (name, ty, pk))| {
                                let text = ty == SqlType::Text;
                                vec![
                                    V::I(table_oid(table)),
                                    V::T(name),
                                    V::I(i64::from(ty.oid())),
                                    V::I(i as i64 + 1),
                                    V::I(-1),
                                    V::I(-1),
                                    V::B(pk),
                                    V::B(false),
                                    V::B(false),
                                    t(""),
                                    t(""),
                                    V::I(if text { 100 } else { 0 }),
                                    t(if matches!(ty, SqlType::Text | SqlType::Bytea) {
                                        "x"
                                    } else {
                                        "p"
                                    }),
                                    V::I(-1),
                                    V::I(0),
                                    V::B(false),
                                    V::B(true),
                                    t(""),
                                ]
                            })
                    })
                    .collect(),
            ),
            "pg_type" => (
                &[
                    ("oid", 'i'),
                    ("typname", 't'),
                    ("typnamespace", 'i'),
                    ("typowner", 'i'),
                    ("typlen", 'i'),
                    ("typtype", 't'),
                    ("typcategory", 't'),
                    ("typrelid", 'i'),
                    ("typelem", 'i'),
                    ("typarray", 'i'),
                    ("typbasetype", 'i'),
                    ("typtypmod", 'i'),
                    ("typnotnull", 'b'),
                    ("typcollation", 'i'),
                    ("typdelim", 't'),
                    ("typbyval", 'b'),
                    ("typisdefined", 'b'),
                    ("typalign", 't'),
                    ("typstorage", 't'),
                    ("typndims", 'i'),
                    ("typdefault", 't'),
                    ("typdefaultbin", 't'),
                    ("typinput", 't'),
                    ("typoutput", 't'),
                    ("typreceive", 't'),
                    ("typsend", 't'),
                    ("typacl", 'a'),
                ],
                TYPES
                    .iter()
                    .map(|(oid, n, len)| {
                        let collation = if matches!(*oid, 25 | 1043 | 19) {
                            100
                        } else {
                            0
                        };
                        vec![
                            V::I(*oid),
                            t(n),
                            V::I(PG_CATALOG_OID),
                            V::I(OWNER_OID),
                            V::I(*len),
                            t("b"),
                            t(match *oid {
                                16 => "B",
                                20 | 21 | 23 | 26 | 700 | 701 => "N",
                                18 | 19 | 25 | 1043 => "S",
                                _ => "U",
                            }),
                            V::I(0),
                            V::I(0),
                            V::I(0),
                            V::I(0),
                            V::I(-1),
                            V::B(false),
                            V::I(collation),
                            t(","),
                            V::B(*len > 0),
                            V::B(true),
                            t(match *len {
                                8 => "d",
                                4 => "i",
                                2 => "s",
                                1 => "c",
                                _ => "i",
                            }),
                            t(if *len > 0 { "p" } else { "x" }),
                            V::I(0),
                            V::N,
                            V::N,
                            V::T(format!("{n}in")),
                            V::T(format!("{n}out")),
                            V::T(format!("{n}recv")),
                            V::T(format!("{n}send")),
                            V::N,
                        ]
                    })
                    .collect(),
            ),
            "pg_index" => (
                &[
                    ("indexrelid", 'i'),
                    ("indrelid", 'i'),
                    ("indnatts", 'i'),
                    ("indnkeyatts", 'i'),
                    ("indisunique", 'b'),
                    ("indisprimary", 'b'),
                    ("indisexclusion", 'b'),
                    ("indimmediate", 'b'),
                    ("indisclustered", 'b'),
                    ("indisvalid", 'b'),
                    ("indcheckxmin", 'b'),
                    ("indisready", 'b'),
                    ("indislive", 'b'),
                    ("indisreplident", 'b'),
                    ("indkey", 't'),
                    ("indexprs", 't'),
                    ("indpred", 't'),
                    ("indoption", 't'),
                    ("indcollation", 't'),
                    ("indclass", 't'),
                    ("indnullsnotdistinct", 'b'),
                ],
                tables
                    .iter()
                    .filter(|table| !pk_columns(table).is_empty())
                    .map(|table| {
                        let key = pk_attnums(table);
                        let n = key.len() as i64;
                        vec![
                            V::I(table_oid(table) + 1),
                            V::I(table_oid(table)),
                            V::I(n),
                            V::I(n),
                            V::B(true),
                            V::B(true),
                            V::B(false),
                            V::B(true),
                            V::B(false),
                            V::B(true),
                            V::B(false),
                            V::B(true),
                            V::B(true),
                            V::B(false),
                            V::T(key.join(" ")),
                            V::N,
                            V::N,
                            V::T(vec!["0"; key.len()].join(" ")),
                            V::T(vec!["0"; key.len()].join(" ")),
                            V::T(vec!["0"; key.len()].join(" ")),
                            V::B(false),
                        ]
                    })
                    .collect(),
            ),
            "pg_constraint" => (
                &[
                    ("oid", 'i'),
                    ("conname", 't'),
                    ("connamespace", 'i'),
                    ("contype", 't'),
                    ("condeferrable", 'b'),
                    ("condeferred", 'b'),
                    ("convalidated", 'b'),
                    ("conrelid", 'i'),
                    ("contypid", 'i'),
                    ("conindid", 'i'),
                    ("confrelid", 'i'),
                    ("conislocal", 'b'),
                    ("coninhcount", 'i'),
                    ("connoinherit", 'b'),
                    ("conkey", 'a'),
                    ("confkey", 'a'),
                    ("conbin", 't'),
                ],
                tables
                    .iter()
                    .filter(|table| !pk_columns(table).is_empty())
                    .map(|table| {
                        let key = pk_attnums(table);
                        vec![
                            V::I(table_oid(table) + 1),
                            V::T(pkey_name(table)),
                            V::I(PUBLIC_OID),
                            t("p"),
                            V::B(false),
                            V::B(false),
                            V::B(true),
                            V::I(table_oid(table)),
                            V::I(0),
                            V::I(table_oid(table) + 1),
                            V::I(0),
                            V::B(true),
                            V::I(0),
                            V::B(true),
                            V::A(key),
                            V::N,
                            V::N,
                        ]
                    })
                    .collect(),
            ),
            "pg_database" => (
                &[
                    ("oid", 'i'),
                    ("datname", 't'),
                    ("datdba", 'i'),
                    ("encoding", 'i'),
                    ("datlocprovider", 't'),
                    ("datistemplate", 'b'),
                    ("datallowconn", 'b'),
                    ("datconnlimit", 'i'),
                    ("dattablespace", 'i'),
                    ("datcollate", 't'),
                    ("datctype", 't'),
                    ("daticulocale", 't'),
                    ("datacl", 'a'),
                ],
                self.engine
                    .instances()
                    .into_iter()
                    .map(|i| {
                        vec![
                            V::I(16_384 + i64::from(i.id)),
                            V::T(i.name),
                            V::I(OWNER_OID),
                            V::I(6),
                            t("c"),
                            V::B(false),
                            V::B(true),
                            V::I(-1),
                            V::I(1663),
                            t("C"),
                            t("C"),
                            V::N,
                            V::N,
                        ]
                    })
                    .collect(),
            ),
            "pg_roles" => (
                &[
                    ("oid", 'i'),
                    ("rolname", 't'),
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
                ],
                self.role_rows()
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
                    .collect(),
            ),
            "pg_user" => (
                &[
                    ("usename", 't'),
                    ("usesysid", 'i'),
                    ("usecreatedb", 'b'),
                    ("usesuper", 'b'),
                    ("userepl", 'b'),
                    ("usebypassrls", 'b'),
                    ("passwd", 't'),
                    ("valuntil", 't'),
                    ("useconfig", 'a'),
                ],
                self.role_rows()
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
                    .collect(),
            ),
            "pg_settings" => (
                &[
                    ("name", 't'),
                    ("setting", 't'),
                    ("unit", 't'),
                    ("category", 't'),
                    ("short_desc", 't'),
                    ("context", 't'),
                    ("vartype", 't'),
                    ("source", 't'),
                    ("boot_val", 't'),
                    ("reset_val", 't'),
                ],
                crate::sql::settings::Settings::new(OWNER)
                    .all()
                    .into_iter()
                    .map(|(name, value)| {
                        vec![
                            V::T(name),
                            V::T(value.clone()),
                            V::N,
                            t("pgwide"),
                            t(""),
                            t("user"),
                            t("string"),
                            t("default"),
                            V::T(value.clone()),
                            V::T(value),
                        ]
                    })
                    .collect(),
            ),
            "pg_am" => (
                &[
                    ("oid", 'i'),
                    ("amname", 't'),
                    ("amhandler", 't'),
                    ("amtype", 't'),
                ],
                vec![
                    vec![V::I(2), t("heap"), t("heap_tableam_handler"), t("t")],
                    vec![V::I(403), t("btree"), t("bthandler"), t("i")],
                ],
            ),
            "pg_collation" => (
                &[
                    ("oid", 'i'),
                    ("collname", 't'),
                    ("collnamespace", 'i'),
                    ("collowner", 'i'),
                    ("collprovider", 't'),
                    ("collencoding", 'i'),
                    ("collcollate", 't'),
                    ("collctype", 't'),
                ],
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
                    .collect(),
            ),
            "pg_tablespace" => (
                &[("oid", 'i'), ("spcname", 't'), ("spcowner", 'i')],
                vec![vec![V::I(1663), t("pg_default"), V::I(OWNER_OID)]],
            ),
            "pg_tables" => (
                &[
                    ("schemaname", 't'),
                    ("tablename", 't'),
                    ("tableowner", 't'),
                    ("tablespace", 't'),
                    ("hasindexes", 'b'),
                    ("hasrules", 'b'),
                    ("hastriggers", 'b'),
                    ("rowsecurity", 'b'),
                ],
                tables
                    .iter()
                    .map(|table| {
                        vec![
                            t("public"),
                            V::T(table.name.clone()),
                            t(OWNER),
                            V::N,
                            V::B(!pk_columns(table).is_empty()),
                            V::B(false),
                            V::B(false),
                            V::B(false),
                        ]
                    })
                    .collect(),
            ),
            "pg_proc" => (
                &[
                    ("oid", 'i'),
                    ("proname", 't'),
                    ("pronamespace", 'i'),
                    ("proowner", 'i'),
                    ("prorettype", 'i'),
                    ("prokind", 't'),
                    ("proretset", 'b'),
                    ("proargtypes", 't'),
                ],
                Vec::new(),
            ),
            "pg_get_keywords" => (super::pg_keywords::COLUMNS, super::pg_keywords::rows()),
            _ => return Ok(None),
        };
        mem_table(cols, rows).map(Some)
    }
}

const PG_CLASS: &[Col] = &[
    ("oid", 'i'),
    ("relname", 't'),
    ("relnamespace", 'i'),
    ("reltype", 'i'),
    ("reloftype", 'i'),
    ("relowner", 'i'),
    ("relam", 'i'),
    ("relfilenode", 'i'),
    ("reltablespace", 'i'),
    ("relpages", 'i'),
    ("reltuples", 'i'),
    ("reltoastrelid", 'i'),
    ("relhasindex", 'b'),
    ("relisshared", 'b'),
    ("relpersistence", 't'),
    ("relkind", 't'),
    ("relnatts", 'i'),
    ("relchecks", 'i'),
    ("relhasrules", 'b'),
    ("relhastriggers", 'b'),
    ("relhassubclass", 'b'),
    ("relrowsecurity", 'b'),
    ("relforcerowsecurity", 'b'),
    ("relispopulated", 'b'),
    ("relreplident", 't'),
    ("relispartition", 'b'),
    ("relacl", 'a'),
    ("reloptions", 'a'),
    ("relpartbound", 't'),
];

/// A table's `pg_class` row, and its primary-key index's.
fn pg_class_rows(table: &Arc<TableMeta>) -> Vec<Vec<V>> {
    let oid = table_oid(table);
    let has_pk = !pk_columns(table).is_empty();
    let options = table
        .options
        .as_pairs()
        .into_iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let row = |oid: i64, name: String, kind: &str, am: i64, natts: usize, options: V| {
        vec![
            V::I(oid),
            V::T(name),
            V::I(PUBLIC_OID),
            V::I(0),
            V::I(0),
            V::I(OWNER_OID),
            V::I(am),
            V::I(oid),
            V::I(0),
            V::I(0),
            V::I(-1),
            V::I(0),
            V::B(kind == "r" && has_pk),
            V::B(false),
            t("p"),
            t(kind),
            V::I(natts as i64),
            V::I(0),
            V::B(false),
            V::B(false),
            V::B(false),
            V::B(false),
            V::B(false),
            V::B(true),
            t("d"),
            V::B(false),
            V::N,
            options,
            V::N,
        ]
    };
    let mut rows = vec![row(
        oid,
        table.name.clone(),
        "r",
        2,
        columns(table).len(),
        V::A(options),
    )];
    if has_pk {
        rows.push(row(
            oid + 1,
            pkey_name(table),
            "i",
            403,
            table.pk.len(),
            V::N,
        ));
    }
    rows
}

/// One row of pg_roles / pg_user.
struct RoleRow {
    oid: i64,
    name: String,
    superuser: bool,
    login: bool,
    /// `********` when the role has a password (never the verifier), else NULL.
    password: V,
}

impl CatalogSchema {
    /// The owner (`postgres`, OID 10) and every role of the store. Role OIDs are a
    /// hash of the name, so they stay the same across restarts.
    fn role_rows(&self) -> Vec<RoleRow> {
        let mut rows = vec![RoleRow {
            oid: OWNER_OID,
            name: OWNER.to_string(),
            superuser: true,
            login: true,
            password: t("********"),
        }];
        let Some(roles) = &self.roles else {
            return rows;
        };
        for role in roles.list() {
            let password = if role.has_password() {
                t("********")
            } else {
                V::N
            };
            if role.name == OWNER {
                rows[0].superuser = role.superuser;
                rows[0].login = role.login;
                rows[0].password = password;
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
            });
        }
        rows
    }
}
