//! The names and OIDs clients hard-code or join on: the three introspection schemas,
//! PostgreSQL's built-in namespace OIDs, the one owner role, and the OIDs of tables and
//! their primary-key indexes, of secondary indexes and of sequences. A table's OID
//! derives from the engine's table id, which is never reused, so it is stable across
//! restarts; its PK index and constraint take the next OID.

use crate::engine::{
    CheckMeta, Engine, ForeignKeyMeta, IndexMeta, InstanceMeta, SequenceMeta, TableMeta, ViewMeta,
};
use std::sync::Arc;

pub use crate::sql::relation::{attnum, attribute_count, table_oid};

pub const PG_CATALOG: &str = "pg_catalog";
pub const INFORMATION_SCHEMA: &str = "information_schema";
pub const PGWIDE: &str = "pgwide";

/// OIDs PostgreSQL gives its built-in namespaces; clients hard-code them.
pub const PG_CATALOG_OID: i64 = 11;
pub const PUBLIC_OID: i64 = 2200;
pub const INFORMATION_SCHEMA_OID: i64 = 13_000;
/// The one role pgwide reports as owner of everything (PostgreSQL's bootstrap superuser).
pub const OWNER_OID: i64 = 10;
/// `pg_class`'s own OID, as `pg_depend.classid` names it (`'pg_class'::regclass`).
pub const PG_CLASS_OID: i64 = 1259;

/// The OIDs PostgreSQL gives the catalog relations clients name as `regclass`.
pub fn catalog_relation_oid(name: &str) -> Option<i64> {
    let name = name.strip_prefix("pg_catalog.").unwrap_or(name);
    Some(match name {
        "pg_class" => PG_CLASS_OID,
        "pg_type" => 1247,
        "pg_attribute" => 1249,
        "pg_proc" => 1255,
        "pg_namespace" => 2615,
        "pg_constraint" => 2606,
        "pg_index" => 2610,
        "pg_am" => 2601,
        "pg_amop" => 2602,
        "pg_amproc" => 2603,
        "pg_attrdef" => 2604,
        "pg_cast" => 2605,
        "pg_conversion" => 2607,
        "pg_depend" => 2608,
        "pg_description" => 2609,
        "pg_inherits" => 2611,
        "pg_language" => 2612,
        "pg_opclass" => 2616,
        "pg_operator" => 2617,
        "pg_rewrite" => 2618,
        "pg_trigger" => 2620,
        "pg_opfamily" => 2753,
        "pg_database" => 1262,
        "pg_authid" => 1260,
        "pg_tablespace" => 1213,
        "pg_aggregate" => 2600,
        "pg_sequence" => 2224,
        "pg_collation" => 3456,
        "pg_enum" => 3501,
        "pg_extension" => 3079,
        "pg_event_trigger" => 3466,
        "pg_default_acl" => 826,
        "pg_foreign_data_wrapper" => 2328,
        "pg_foreign_server" => 1417,
        "pg_largeobject_metadata" => 2995,
        "pg_init_privs" => 3394,
        "pg_policy" => 3256,
        "pg_range" => 3541,
        "pg_seclabel" => 3596,
        "pg_statistic_ext" => 3381,
        "pg_transform" => 3576,
        "pg_ts_config" => 3602,
        "pg_ts_dict" => 3600,
        "pg_ts_parser" => 3601,
        "pg_ts_template" => 3764,
        "pg_publication" => 6104,
        "pg_subscription" => 6100,
        _ => return None,
    })
}
pub const OWNER: &str = "postgres";

/// A database's (instance's) OID, from its catalog id.
pub fn database_oid(instance: &InstanceMeta) -> i64 {
    16_384 + i64::from(instance.id)
}

/// A sequence's OID: from its catalog id, which tables and sequences draw from one
/// counter, so it never meets a table's (`16384 + 2 * id`).
pub fn sequence_oid(sequence: &SequenceMeta) -> i64 {
    16_384 + 2 * i64::from(sequence.id)
}

/// A view's OID: from its catalog id, drawn from the counter tables and sequences draw
/// from (`16384 + 2 * id`).
pub fn view_oid(view: &ViewMeta) -> i64 {
    16_384 + 2 * i64::from(view.id)
}

/// The table whose primary-key index (or constraint) has this OID, or which has it.
pub fn table_by_oid(engine: &Engine, instance: &str, oid: i64) -> Option<(Arc<TableMeta>, bool)> {
    let tables = engine.tables(instance).ok()?;
    tables.into_iter().find_map(|t| {
        let own = table_oid(&t);
        (own == oid || own + 1 == oid).then(|| (Arc::clone(&t), own + 1 == oid))
    })
}

/// A secondary index's OID: from its catalog id, drawn from the counter tables and
/// sequences draw from (`16384 + 2 * id`).
pub fn index_oid(index: &IndexMeta) -> i64 {
    16_384 + 2 * i64::from(index.id)
}

/// The secondary index with this OID, and its table.
pub fn index_by_oid(
    engine: &Engine,
    instance: &str,
    oid: i64,
) -> Option<(Arc<TableMeta>, IndexMeta)> {
    let tables = engine.tables(instance).ok()?;
    tables.into_iter().find_map(|t| {
        let index = t.indexes.iter().find(|i| index_oid(i) == oid)?.clone();
        Some((Arc::clone(&t), index))
    })
}

/// A foreign key's or CHECK constraint's OID, from its catalog id: drawn from the
/// counter tables, sequences and indexes draw from (`16384 + 2 * id`).
pub fn constraint_oid(id: u32) -> i64 {
    16_384 + 2 * i64::from(id)
}

/// The foreign key with this OID, and its (child) table.
pub fn foreign_key_by_oid(
    engine: &Engine,
    instance: &str,
    oid: i64,
) -> Option<(Arc<TableMeta>, ForeignKeyMeta)> {
    let tables = engine.tables(instance).ok()?;
    tables.into_iter().find_map(|t| {
        let fk = t
            .foreign_keys
            .iter()
            .find(|fk| constraint_oid(fk.id) == oid)?
            .clone();
        Some((Arc::clone(&t), fk))
    })
}

/// The CHECK constraint with this OID, and its table.
pub fn check_by_oid(
    engine: &Engine,
    instance: &str,
    oid: i64,
) -> Option<(Arc<TableMeta>, CheckMeta)> {
    let tables = engine.tables(instance).ok()?;
    tables.into_iter().find_map(|t| {
        let check = t
            .checks
            .iter()
            .find(|c| constraint_oid(c.id) == oid)?
            .clone();
        Some((Arc::clone(&t), check))
    })
}
