//! Views in the catalogs: `pg_views`, `information_schema.views`, and each view's rows
//! in `pg_class` (`relkind` `v`), `pg_attribute`, `information_schema.tables` (`VIEW`)
//! and `information_schema.columns`. A view's OID derives from its catalog id as a
//! table's does (`16384 + 2 * id`), and its definition is its query as pgwide keeps it.

use super::memory_table::{t, Col, V};
use super::oids::{view_oid, OWNER, PG_CATALOG};
use super::pg_attribute::storage;
use super::pg_type::TYPES;
use crate::engine::{Engine, EnumTypeMeta, ViewColumn, ViewMeta};
use crate::sql::sql_types::SqlType;
use std::sync::Arc;

/// `character varying`, which a view column of a `VARCHAR` table column keeps.
const VARCHAR_OID: u32 = 1043;
const NUMERIC_OID: u32 = 1700;

pub const COLUMNS: &[Col] = &[
    ("schemaname", 'n'),
    ("viewname", 'n'),
    ("viewowner", 'n'),
    ("definition", 't'),
];

/// `pg_views`: one row per view.
pub fn rows(views: &[Arc<ViewMeta>]) -> Vec<Vec<V>> {
    views
        .iter()
        .map(|view| {
            vec![
                t("public"),
                V::T(view.name.clone()),
                t(OWNER),
                V::T(definition(view)),
            ]
        })
        .collect()
}

/// A view's definition as `pg_get_viewdef` and `pg_views` show it: its query, ended
/// with a semicolon as PostgreSQL's is.
pub fn definition(view: &ViewMeta) -> String {
    format!(" {};", view.query)
}

/// The definition of the view with OID `oid`, or named `name`.
pub fn definition_of(
    engine: &Engine,
    instance: &str,
    oid: Option<i64>,
    name: Option<&str>,
) -> Option<String> {
    let view = match (oid, name) {
        (Some(oid), _) => engine
            .views(instance)
            .into_iter()
            .find(|view| view_oid(view) == oid)?,
        (None, Some(name)) => {
            let name = name.strip_prefix("public.").unwrap_or(name);
            engine.view(instance, name)?
        }
        (None, None) => return None,
    };
    Some(definition(&view))
}

/// Each view's `pg_class` row.
pub fn class_rows(views: &[Arc<ViewMeta>]) -> Vec<Vec<V>> {
    views
        .iter()
        .map(|view| {
            super::pg_class::relation_row(
                view_oid(view),
                view.name.clone(),
                "v",
                0,
                view.columns.len(),
                false,
                V::N,
            )
        })
        .collect()
}

/// Each view column's `pg_attribute` row (`pg_attribute::COLUMNS`).
pub fn attribute_rows(views: &[Arc<ViewMeta>]) -> Vec<Vec<V>> {
    views
        .iter()
        .flat_map(|view| {
            view.columns.iter().enumerate().map(|(i, column)| {
                let text = matches!(column.type_oid, 25 | VARCHAR_OID);
                vec![
                    V::I(view_oid(view)),
                    V::T(column.name.clone()),
                    V::I(i64::from(column.type_oid)),
                    V::I(i as i64 + 1),
                    V::I(-1),
                    V::I(i64::from(column.typmod)),
                    V::B(false),
                    V::B(false),
                    V::B(false),
                    t(""),
                    t(""),
                    V::I(if text { 100 } else { 0 }),
                    t(SqlType::from_oid(column.type_oid).map_or("p", storage)),
                    V::I(-1),
                    V::I(0),
                    V::B(false),
                    V::B(true),
                    t(""),
                ]
            })
        })
        .collect()
}

/// Each view's `information_schema.tables` row (`information_schema::TABLES`).
pub fn information_schema_tables_rows(db: &str, views: &[Arc<ViewMeta>]) -> Vec<Vec<V>> {
    views
        .iter()
        .map(|view| {
            vec![
                t(db),
                t("public"),
                V::T(view.name.clone()),
                t("VIEW"),
                t("NO"),
            ]
        })
        .collect()
}

pub const INFORMATION_SCHEMA_VIEWS: &[Col] = &[
    ("table_catalog", 'n'),
    ("table_schema", 'n'),
    ("table_name", 'n'),
    ("view_definition", 't'),
    ("check_option", 't'),
    ("is_updatable", 't'),
    ("is_insertable_into", 't'),
    ("is_trigger_updatable", 't'),
    ("is_trigger_deletable", 't'),
    ("is_trigger_insertable_into", 't'),
];

/// `information_schema.views`: pgwide writes through no view, so none is updatable.
pub fn information_schema_views_rows(db: &str, views: &[Arc<ViewMeta>]) -> Vec<Vec<V>> {
    views
        .iter()
        .map(|view| {
            vec![
                t(db),
                t("public"),
                V::T(view.name.clone()),
                V::T(definition(view)),
                t("NONE"),
                t("NO"),
                t("NO"),
                t("NO"),
                t("NO"),
                t("NO"),
            ]
        })
        .collect()
}

/// Each view column's `information_schema.columns` row
/// (`information_schema::COLUMNS`): nullable, with no default, as PostgreSQL lists them.
pub fn information_schema_columns_rows(
    db: &str,
    views: &[Arc<ViewMeta>],
    enum_types: &[Arc<EnumTypeMeta>],
) -> Vec<Vec<V>> {
    views
        .iter()
        .flat_map(|view| {
            view.columns.iter().enumerate().map(move |(i, column)| {
                let (data_type, udt, udt_schema) = type_names(column, enum_types);
                let max_chars = match (column.type_oid, column.typmod) {
                    (VARCHAR_OID, typmod) if typmod >= 4 => V::I(i64::from(typmod) - 4),
                    _ => V::N,
                };
                let ty = SqlType::from_oid(column.type_oid);
                // A NUMERIC(p,s)'s typmod is `((p << 16) | s) + 4`.
                let numeric = (column.type_oid == NUMERIC_OID && column.typmod >= 4)
                    .then(|| (column.typmod - 4) as u32);
                let (precision, scale) = match numeric {
                    Some(m) => (V::I(i64::from(m >> 16)), V::I(i64::from(m & 0xffff))),
                    None => (
                        ty.map_or(V::N, super::information_schema::precision),
                        ty.map_or(V::N, super::information_schema::scale),
                    ),
                };
                vec![
                    t(db),
                    t("public"),
                    V::T(view.name.clone()),
                    V::T(column.name.clone()),
                    V::I(i as i64 + 1),
                    V::N,
                    t("YES"),
                    V::T(data_type),
                    V::T(udt),
                    max_chars,
                    precision,
                    scale,
                    t(db),
                    t(udt_schema),
                    t("NO"),
                    V::N,
                    t("NEVER"),
                    t("NO"),
                ]
            })
        })
        .collect()
}

/// A view column's `data_type`, `udt_name` and `udt_schema`.
fn type_names(
    column: &ViewColumn,
    enum_types: &[Arc<EnumTypeMeta>],
) -> (String, String, &'static str) {
    let enum_type = enum_types
        .iter()
        .find(|e| SqlType::enum_of(e.id).oid() == column.type_oid);
    if let Some(meta) = enum_type {
        return ("USER-DEFINED".into(), meta.name.clone(), "public");
    }
    let udt = TYPES
        .iter()
        .find(|t| t.0 == i64::from(column.type_oid))
        .map_or("text", |t| t.1);
    let data_type = match SqlType::from_oid(column.type_oid) {
        _ if column.type_oid == VARCHAR_OID => "character varying",
        Some(SqlType::Array(_)) => "ARRAY",
        Some(ty) => ty.name(),
        None => "USER-DEFINED",
    };
    (data_type.into(), udt.into(), PG_CATALOG)
}
