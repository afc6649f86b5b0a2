//! The relation a system function's `regclass` argument names, given as a name (`t`,
//! `public.t`, `"T"`, `pg_catalog.pg_class`) or as an OID: a table, a sequence, an
//! index, a view or a catalog relation; and the database a database argument names. As
//! PostgreSQL's `regclass` input does, an unknown name is an error (42P01, 3D000); an
//! unknown OID is nothing (the functions answer NULL for it).

use super::udf::{int, string};
use crate::engine::{Engine, IndexMeta, TableMeta};
use crate::sql::pg_catalog;
use crate::sql::sql_error::SqlError;
use crate::sqlstate::SqlState;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use std::sync::Arc;

/// A relation a function argument names.
pub(super) enum NamedRelation {
    Table(Arc<TableMeta>),
    Sequence,
    /// A secondary index, or (`None`) a table's primary-key index, which is the table's
    /// own row keys.
    Index(Option<IndexMeta>),
    /// A `pg_catalog`, `information_schema` or `pgwide` relation, computed when read.
    Catalog,
    /// A view, which stores nothing.
    View,
}

/// The relation `object` names in `instance`; `None` for an OID nothing has.
pub(super) fn resolve(
    engine: &Engine,
    instance: &str,
    object: &ScalarValue,
) -> Result<Option<NamedRelation>> {
    if let Some(given) = string(Some(object)) {
        return by_name(engine, instance, given).map(Some);
    }
    let Some(oid) = int(Some(object)) else {
        return Ok(None);
    };
    if let Some((table, is_pk_index)) = pg_catalog::table_by_oid(engine, instance, oid) {
        return Ok(Some(match is_pk_index {
            true => NamedRelation::Index(None),
            false => NamedRelation::Table(table),
        }));
    }
    if engine
        .sequences(instance)
        .iter()
        .any(|s| pg_catalog::sequence_oid(s) == oid)
    {
        return Ok(Some(NamedRelation::Sequence));
    }
    if let Some((_, index)) = pg_catalog::index_by_oid(engine, instance, oid) {
        return Ok(Some(NamedRelation::Index(Some(index))));
    }
    if engine
        .views(instance)
        .iter()
        .any(|v| pg_catalog::view_oid(v) == oid)
    {
        return Ok(Some(NamedRelation::View));
    }
    // The catalog relations clients name by OID.
    let catalog = [
        "pg_class",
        "pg_type",
        "pg_attribute",
        "pg_proc",
        "pg_namespace",
    ]
    .iter()
    .any(|name| pg_catalog::catalog_relation_oid(name) == Some(oid));
    Ok(catalog.then_some(NamedRelation::Catalog))
}

fn by_name(engine: &Engine, instance: &str, given: &str) -> Result<NamedRelation> {
    let missing = || {
        sql_error(
            SqlState::UndefinedTable,
            format!("relation \"{given}\" does not exist"),
        )
    };
    // Read as `parse_ident` reads it: `a.b`, `"A"."b c"`, unquoted names folded.
    let parts = super::pg_arrays::parse_ident(given).ok_or_else(missing)?;
    let (schema, name) = match parts.as_slice() {
        [name] => (None, name.as_str()),
        [schema, name] => (Some(schema.as_str()), name.as_str()),
        _ => return Err(missing()),
    };
    match schema {
        None | Some("public") => {}
        Some(
            catalog
            @ (pg_catalog::PG_CATALOG | pg_catalog::INFORMATION_SCHEMA | pg_catalog::PGWIDE),
        ) => {
            return match pg_catalog::is_catalog_relation(&format!("{catalog}.{name}")) {
                true => Ok(NamedRelation::Catalog),
                false => Err(missing()),
            };
        }
        Some(other) => {
            return Err(sql_error(
                SqlState::InvalidSchemaName,
                format!("schema \"{other}\" does not exist"),
            ))
        }
    }
    if let Ok(table) = engine.table(instance, name) {
        return Ok(NamedRelation::Table(table));
    }
    if engine.sequence(instance, name).is_ok() {
        return Ok(NamedRelation::Sequence);
    }
    if let Some((_, index)) = engine.index(instance, name) {
        return Ok(NamedRelation::Index(Some(index)));
    }
    if engine.view(instance, name).is_some() {
        return Ok(NamedRelation::View);
    }
    let tables = engine.tables(instance).unwrap_or_default();
    if tables.iter().any(|t| pg_catalog::pkey_name(t) == name) {
        return Ok(NamedRelation::Index(None));
    }
    // An unqualified name finds pg_catalog's relations, which is on every search path.
    if schema.is_none() && pg_catalog::is_catalog_relation(name) {
        return Ok(NamedRelation::Catalog);
    }
    Err(missing())
}

/// The database (instance) `object` names or has the OID of: 3D000 for an unknown
/// name, `None` for an unknown OID.
pub(super) fn resolve_database(engine: &Engine, object: &ScalarValue) -> Result<Option<String>> {
    let instances = engine.instances();
    if let Some(name) = string(Some(object)) {
        if instances.iter().any(|i| i.name == name) {
            return Ok(Some(name.to_string()));
        }
        return Err(sql_error(
            SqlState::InvalidCatalogName,
            format!("database \"{name}\" does not exist"),
        ));
    }
    let oid = int(Some(object));
    Ok(instances
        .into_iter()
        .find(|i| Some(pg_catalog::database_oid(i)) == oid)
        .map(|i| i.name))
}

/// A SQL error raised from inside a function.
pub(super) fn sql_error(state: SqlState, message: String) -> DataFusionError {
    DataFusionError::External(Box::new(SqlError::new(state, message)))
}
