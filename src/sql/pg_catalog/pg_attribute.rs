//! `pg_catalog.pg_attribute`: the visible columns of every table, numbered from 1 in
//! table order; PK columns are `NOT NULL`, text columns have the `default` collation.

use super::memory_table::{t, Col, V};
use super::oids::table_oid;
use super::table_columns::{all_columns, column_default, identity};
use crate::engine::TableMeta;
use crate::sql::sql_types::SqlType;
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("attrelid", 'i'),
    ("attname", 'n'),
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
    ("attacl", 'a'),
    ("attalign", 't'),
    // Per-column options, foreign-data options and the value a column added with a
    // default gives old rows: pgwide keeps none as PostgreSQL does (NULL).
    ("attoptions", 'a'),
    ("attfdwoptions", 'a'),
    ("attmissingval", 'a'),
];

/// One row per visible column of each table.
pub fn rows(tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    all_columns(tables)
        .map(|(table, i, (name, ty, not_null))| row(table, i, name, ty, not_null))
        .collect()
}

/// The row of `table`'s column at index `i` (attnum `i + 1`).
fn row(table: &Arc<TableMeta>, i: usize, name: String, ty: SqlType, not_null: bool) -> Vec<V> {
    let text = ty == SqlType::Text;
    let identity = identity(table, &name);
    let has_default = column_default(table, &name).is_some();
    let typmod = typmod(table, &name, ty);
    let oid = type_oid(table, &name, ty);
    vec![
        V::I(table_oid(table)),
        V::T(name),
        V::I(oid),
        V::I(i as i64 + 1),
        V::I(-1),
        V::I(typmod),
        V::B(not_null),
        V::B(has_default),
        V::B(false),
        t(identity),
        t(""),
        V::I(if text { 100 } else { 0 }),
        t(storage(ty)),
        V::I(-1),
        V::I(0),
        V::B(false),
        V::B(true),
        t(""),
        V::N,
        t(alignment(ty)),
    ]
}

/// `attalign`: how PostgreSQL aligns a value of the type: 8-byte values on doubles (`d`),
/// 4-byte values and variable-length ones on ints (`i`), `smallint` on shorts (`s`),
/// one-byte values and `uuid` on chars (`c`).
fn alignment(ty: SqlType) -> &'static str {
    match ty {
        SqlType::Int8
        | SqlType::Float8
        | SqlType::Timestamp
        | SqlType::TimestampTz
        | SqlType::Time
        | SqlType::Interval => "d",
        SqlType::Int2 => "s",
        SqlType::Bool | SqlType::Uuid => "c",
        _ => "i",
    }
}

/// `atttypid`: the column's type, a text column declared `VARCHAR` shown as one (1043).
pub fn type_oid(table: &TableMeta, column: &str, ty: SqlType) -> i64 {
    match ty == SqlType::Text && table.is_varchar(column) {
        true => VARCHAR_OID,
        false => i64::from(ty.oid()),
    }
}

/// `attstorage` as PostgreSQL has it for the type: variable-length types are kept
/// out of line when large (`x`), `numeric` in line (`m`), fixed-size ones plain (`p`).
pub fn storage(ty: SqlType) -> &'static str {
    match ty {
        SqlType::Text
        | SqlType::Name
        | SqlType::Bytea
        | SqlType::Json
        | SqlType::Jsonb
        | SqlType::Array(_) => "x",
        SqlType::Numeric(_) => "m",
        _ => "p",
    }
}

/// The OID of `character varying`.
pub const VARCHAR_OID: i64 = 1043;

/// `atttypmod`: a `NUMERIC(p,s)`'s precision and scale, a `TIMESTAMP(p)`'s digits of a
/// second, a `VARCHAR(n)`'s length plus 4 (PostgreSQL's header size); -1 for every
/// other type.
pub fn typmod(table: &TableMeta, column: &str, ty: SqlType) -> i64 {
    match ty {
        SqlType::Text => table.max_chars(column).map_or(-1, |n| i64::from(n) + 4),
        SqlType::Numeric(Some(typmod)) => i64::from(typmod.atttypmod()),
        SqlType::Timestamp | SqlType::TimestampTz => {
            table.time_precision(column).map_or(-1, i64::from)
        }
        _ => -1,
    }
}

pub const ATTRDEF_COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("adrelid", 'i'),
    ("adnum", 'i'),
    ("adbin", 't'),
];

/// The OID of column `attnum`'s default: unique among the catalog's OIDs, the table's
/// times a column.
pub fn attrdef_oid(table: &TableMeta, attnum: i64) -> i64 {
    table_oid(table) * 2000 + attnum
}

/// `pg_attrdef`: one row per column with a default (`table_columns::column_default`),
/// its expression's text as `adbin` (which `pg_get_expr` prints as it is).
pub fn attrdef_rows(tables: &[Arc<TableMeta>]) -> Vec<Vec<V>> {
    all_columns(tables)
        .filter_map(|(table, i, (name, ..))| {
            let default = column_default(table, &name)?;
            let attnum = i as i64 + 1;
            Some(vec![
                V::I(attrdef_oid(table, attnum)),
                V::I(table_oid(table)),
                V::I(attnum),
                V::T(default),
            ])
        })
        .collect()
}
