//! `information_schema`: the SQL-standard views of an instance's tables (`schemata`,
//! `tables`, `columns`, `table_constraints`, `key_column_usage`), built per query from
//! the engine's catalog like `pg_catalog`. Each view has its columns and a function
//! building its rows; the catalog is the instance, named `db` below.

use super::memory_table::{t, Col, V};
use super::oids::{INFORMATION_SCHEMA, OWNER, PG_CATALOG};
use super::pg_type::TYPES;
use super::table_columns::{all_columns, column_default, identity, pk_columns, pkey_name};
use crate::engine::{EnumTypeMeta, ForeignKeyMeta, ReferentialAction, TableMeta};
use crate::sql::sql_types::SqlType;
use std::sync::Arc;

pub const SCHEMATA: &[Col] = &[
    ("catalog_name", 'n'),
    ("schema_name", 'n'),
    ("schema_owner", 'n'),
];

/// `public`, `pg_catalog` and `information_schema`.
pub fn schemata_rows(db: &str) -> Vec<Vec<V>> {
    ["public", PG_CATALOG, INFORMATION_SCHEMA]
        .iter()
        .map(|s| vec![t(db), t(s), t(OWNER)])
        .collect()
}

pub const TABLES: &[Col] = &[
    ("table_catalog", 'n'),
    ("table_schema", 'n'),
    ("table_name", 'n'),
    ("table_type", 't'),
    ("is_insertable_into", 't'),
];

/// One row per table, all base tables in `public`.
pub fn tables_rows(db: &str, tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    tables
        .iter()
        .map(|table| {
            vec![
                t(db),
                t("public"),
                V::T(table.name.clone()),
                t("BASE TABLE"),
                t("YES"),
            ]
        })
        .collect()
}

pub const COLUMNS: &[Col] = &[
    ("table_catalog", 'n'),
    ("table_schema", 'n'),
    ("table_name", 'n'),
    ("column_name", 'n'),
    ("ordinal_position", 'i'),
    ("column_default", 't'),
    ("is_nullable", 't'),
    ("data_type", 't'),
    ("udt_name", 'n'),
    ("character_maximum_length", 'i'),
    ("numeric_precision", 'i'),
    ("numeric_scale", 'i'),
    ("udt_catalog", 'n'),
    ("udt_schema", 'n'),
    ("is_identity", 't'),
    ("identity_generation", 't'),
    ("is_generated", 't'),
    ("is_updatable", 't'),
];

/// One row per visible column of each table; key and `NOT NULL` columns are not
/// nullable. A column of an enum type is `USER-DEFINED`, its type named by `udt_name`
/// in `public`.
pub fn columns_rows(
    db: &str,
    tables: &[Arc<TableMeta>],
    enum_types: &[Arc<EnumTypeMeta>],
) -> Vec<Vec<V>> {
    all_columns(tables)
        .map(|(table, i, (name, ty, not_null))| {
            let oid = super::pg_attribute::type_oid(table, &name, ty);
            let enum_type = ty
                .enum_type_id()
                .and_then(|id| enum_types.iter().find(|e| e.id == id));
            let udt = match enum_type {
                Some(meta) => meta.name.as_str(),
                None => TYPES.iter().find(|t| t.0 == oid).map_or("text", |t| t.1),
            };
            let data_type = match (oid, ty) {
                (super::pg_attribute::VARCHAR_OID, _) => "character varying",
                (_, SqlType::Array(_)) => "ARRAY",
                (_, SqlType::Enum(_)) => "USER-DEFINED",
                _ => ty.name(),
            };
            let max_chars = table.max_chars(&name).map_or(V::N, |n| V::I(i64::from(n)));
            let identity = identity(table, &name);
            let default = column_default(table, &name).map_or(V::N, V::T);
            vec![
                t(db),
                t("public"),
                V::T(table.name.clone()),
                V::T(name),
                V::I(i as i64 + 1),
                default,
                t(if not_null { "NO" } else { "YES" }),
                t(data_type),
                t(udt),
                max_chars,
                precision(ty),
                scale(ty),
                t(db),
                t(if enum_type.is_some() {
                    "public"
                } else {
                    PG_CATALOG
                }),
                t(if identity.is_empty() { "NO" } else { "YES" }),
                match identity {
                    "a" => t("ALWAYS"),
                    "d" => t("BY DEFAULT"),
                    _ => V::N,
                },
                t("NEVER"),
                t("YES"),
            ]
        })
        .collect()
}

pub const TABLE_CONSTRAINTS: &[Col] = &[
    ("constraint_catalog", 'n'),
    ("constraint_schema", 'n'),
    ("constraint_name", 'n'),
    ("table_catalog", 'n'),
    ("table_schema", 'n'),
    ("table_name", 'n'),
    ("constraint_type", 't'),
    ("is_deferrable", 't'),
    ("initially_deferred", 't'),
];

/// Each table's primary key, `UNIQUE` constraints and foreign keys.
pub fn table_constraints_rows(db: &str, tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    constraints(tables)
        .map(|c| {
            let yes_no = |b: bool| t(if b { "YES" } else { "NO" });
            let (deferrable, deferred) = c
                .foreign_key
                .map_or((false, false), |fk| (fk.deferrable, fk.initially_deferred));
            vec![
                t(db),
                t("public"),
                V::T(c.name),
                t(db),
                t("public"),
                V::T(c.table.name.clone()),
                t(c.kind),
                yes_no(deferrable),
                yes_no(deferred),
            ]
        })
        .collect()
}

/// One constraint of a table, as `information_schema` lists it.
struct Constraint<'a> {
    table: &'a Arc<TableMeta>,
    name: String,
    /// `constraint_type`.
    kind: &'static str,
    columns: Vec<String>,
    foreign_key: Option<&'a ForeignKeyMeta>,
}

/// Each table's primary key, `UNIQUE` constraints, foreign keys and CHECK constraints
/// (which have no key columns).
fn constraints(tables: &[Arc<TableMeta>]) -> impl Iterator<Item = Constraint<'_>> {
    tables.iter().flat_map(|table| {
        let key = pk_columns(table);
        let primary = (!key.is_empty()).then(|| Constraint {
            table,
            name: pkey_name(table),
            kind: "PRIMARY KEY",
            columns: key,
            foreign_key: None,
        });
        let unique = table
            .indexes
            .iter()
            .filter(|i| i.constraint)
            .map(move |i| Constraint {
                table,
                name: i.name.clone(),
                kind: "UNIQUE",
                columns: i.columns.clone(),
                foreign_key: None,
            });
        let foreign = table.foreign_keys.iter().map(move |fk| Constraint {
            table,
            name: fk.name.clone(),
            kind: "FOREIGN KEY",
            columns: fk.columns.clone(),
            foreign_key: Some(fk),
        });
        let checks = table.checks.iter().map(move |c| Constraint {
            table,
            name: c.name.clone(),
            kind: "CHECK",
            columns: Vec::new(),
            foreign_key: None,
        });
        primary
            .into_iter()
            .chain(unique)
            .chain(foreign)
            .chain(checks)
    })
}

pub const KEY_COLUMN_USAGE: &[Col] = &[
    ("constraint_catalog", 'n'),
    ("constraint_schema", 'n'),
    ("constraint_name", 'n'),
    ("table_catalog", 'n'),
    ("table_schema", 'n'),
    ("table_name", 'n'),
    ("column_name", 'n'),
    ("ordinal_position", 'i'),
    ("position_in_unique_constraint", 'i'),
];

/// One row per column of each key: primary, unique and foreign, in key order; a
/// foreign key's column with the position of the column it references in the
/// parent's key.
pub fn key_column_usage_rows(db: &str, tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    constraints(tables)
        .flat_map(|c| {
            let (table, name, fk) = (c.table, c.name, c.foreign_key);
            c.columns.into_iter().enumerate().map(move |(i, column)| {
                let position = fk.map_or(V::N, |fk| {
                    referenced_position(tables, fk, i).map_or(V::N, |p| V::I(p as i64 + 1))
                });
                vec![
                    t(db),
                    t("public"),
                    V::T(name.clone()),
                    t(db),
                    t("public"),
                    V::T(table.name.clone()),
                    V::T(column),
                    V::I(i as i64 + 1),
                    position,
                ]
            })
        })
        .collect()
}

/// Where the column foreign-key column `i` references stands in the parent's key (its
/// primary key or the unique constraint's columns).
fn referenced_position(tables: &[Arc<TableMeta>], fk: &ForeignKeyMeta, i: usize) -> Option<usize> {
    let parent = tables.iter().find(|t| t.name == fk.parent)?;
    let referenced = fk.parent_columns.get(i)?;
    let key = pk_columns(parent);
    match key.iter().position(|c| c == referenced) {
        Some(at) if key.len() == fk.parent_columns.len() => Some(at),
        _ => parent
            .indexes
            .iter()
            .filter(|index| index.unique && index.columns.len() == fk.parent_columns.len())
            .find_map(|index| index.columns.iter().position(|c| c == referenced)),
    }
}

pub const CONSTRAINT_COLUMN_USAGE: &[Col] = &[
    ("table_catalog", 'n'),
    ("table_schema", 'n'),
    ("table_name", 'n'),
    ("column_name", 'n'),
    ("constraint_catalog", 'n'),
    ("constraint_schema", 'n'),
    ("constraint_name", 'n'),
];

/// The columns each constraint uses: a key's own columns, a foreign key's referenced
/// ones (in the parent table), as PostgreSQL lists them.
pub fn constraint_column_usage_rows(db: &str, tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    let mut rows = Vec::new();
    for c in constraints(tables) {
        let (table, columns) = match c.foreign_key {
            Some(fk) => (fk.parent.clone(), fk.parent_columns.clone()),
            None => (c.table.name.clone(), c.columns.clone()),
        };
        for column in columns {
            rows.push(vec![
                t(db),
                t("public"),
                V::T(table.clone()),
                V::T(column),
                t(db),
                t("public"),
                V::T(c.name.clone()),
            ]);
        }
    }
    rows
}

pub const REFERENTIAL_CONSTRAINTS: &[Col] = &[
    ("constraint_catalog", 'n'),
    ("constraint_schema", 'n'),
    ("constraint_name", 'n'),
    ("unique_constraint_catalog", 'n'),
    ("unique_constraint_schema", 'n'),
    ("unique_constraint_name", 'n'),
    ("match_option", 't'),
    ("update_rule", 't'),
    ("delete_rule", 't'),
];

/// One row per foreign key: the parent's constraint it references and its actions.
pub fn referential_constraints_rows(db: &str, tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    let rule = |action: ReferentialAction| {
        t(match action {
            ReferentialAction::NoAction => "NO ACTION",
            ReferentialAction::Restrict => "RESTRICT",
            ReferentialAction::Cascade => "CASCADE",
            ReferentialAction::SetNull => "SET NULL",
        })
    };
    let mut rows = Vec::new();
    for table in tables {
        for fk in &table.foreign_keys {
            let parent = tables.iter().find(|t| t.name == fk.parent);
            let unique = parent.and_then(|parent| {
                let mut referenced = fk.parent_columns.clone();
                referenced.sort();
                let mut key = pk_columns(parent);
                key.sort();
                if key == referenced {
                    return Some(pkey_name(parent));
                }
                parent.indexes.iter().find_map(|i| {
                    let mut columns = i.columns.clone();
                    columns.sort();
                    (i.constraint && columns == referenced).then(|| i.name.clone())
                })
            });
            rows.push(vec![
                t(db),
                t("public"),
                V::T(fk.name.clone()),
                t(db),
                t("public"),
                unique.map_or(V::N, V::T),
                t("NONE"),
                rule(fk.on_update),
                rule(fk.on_delete),
            ]);
        }
    }
    rows
}

/// `numeric_precision`: binary digits for integers and floats, decimal digits for a
/// `NUMERIC(p,s)`, as PostgreSQL reports them.
pub(super) fn precision(ty: SqlType) -> V {
    match ty {
        SqlType::Int2 => V::I(16),
        SqlType::Int4 => V::I(32),
        SqlType::Int8 => V::I(64),
        SqlType::Float4 => V::I(24),
        SqlType::Float8 => V::I(53),
        SqlType::Numeric(Some(typmod)) => V::I(i64::from(typmod.precision)),
        _ => V::N,
    }
}

/// `numeric_scale`: 0 for integers, a `NUMERIC(p,s)`'s `s`.
pub(super) fn scale(ty: SqlType) -> V {
    match ty {
        SqlType::Int2 | SqlType::Int4 | SqlType::Int8 => V::I(0),
        SqlType::Numeric(Some(typmod)) => V::I(i64::from(typmod.scale)),
        _ => V::N,
    }
}
