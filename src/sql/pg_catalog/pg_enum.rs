//! Enum types in the catalogs: `pg_enum`'s labels, and the two `pg_type` rows each
//! enum type has in PostgreSQL (the type, `typtype = 'e'`, and its array type `_name`),
//! with the lookups `format_type` and `to_regtype` make of them.

use super::memory_table::{t, Col, V};
use super::oids::{OWNER_OID, PUBLIC_OID};
use crate::engine::{Engine, EnumTypeMeta};
use crate::sql::sql_types::SqlType;
use std::sync::Arc;

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("enumtypid", 'i'),
    ("enumsortorder", 'i'),
    ("enumlabel", 'n'),
];

/// An enum type's OID (`SqlType::enum_of`).
pub fn type_oid(meta: &EnumTypeMeta) -> i64 {
    i64::from(SqlType::enum_of(meta.id).oid())
}

/// One row per label, `enumsortorder` counting from 1 in the type's order. A label's
/// OID is its type's and its position's, so it changes when a label is added before
/// it; nothing pgwide serves refers to one.
pub fn rows(types: &[Arc<EnumTypeMeta>]) -> Vec<Vec<V>> {
    types
        .iter()
        .flat_map(|meta| {
            let type_oid = type_oid(meta);
            meta.labels.iter().enumerate().map(move |(i, label)| {
                let position = i64::try_from(i).unwrap_or(i64::MAX);
                vec![
                    V::I(type_oid * 65_536 + position),
                    V::I(type_oid),
                    V::I(position + 1),
                    t(label),
                ]
            })
        })
        .collect()
}

/// `pg_type`'s rows for the enum types, in the column order of `pg_type::COLUMNS`.
pub fn type_rows(types: &[Arc<EnumTypeMeta>]) -> Vec<Vec<V>> {
    types
        .iter()
        .flat_map(|meta| {
            let oid = type_oid(meta);
            [
                type_row(oid, &meta.name, Kind::Enum),
                type_row(oid + 1, &format!("_{}", meta.name), Kind::ArrayOf(oid)),
            ]
        })
        .collect()
}

enum Kind {
    Enum,
    ArrayOf(i64),
}

fn type_row(oid: i64, name: &str, kind: Kind) -> Vec<V> {
    let (len, typtype, category, element, array, functions) = match kind {
        Kind::Enum => (4, "e", "E", 0, oid + 1, "enum"),
        Kind::ArrayOf(element) => (-1, "b", "A", element, 0, "array"),
    };
    vec![
        V::I(oid),
        t(name),
        V::I(PUBLIC_OID),
        V::I(OWNER_OID),
        V::I(len),
        t(typtype),
        t(category),
        V::I(0),
        V::I(element),
        V::I(array),
        V::I(0),
        V::I(-1),
        V::B(false),
        V::I(0),
        t(","),
        V::B(len > 0),
        V::B(true),
        t(if len > 0 { "i" } else { "d" }),
        t(if len > 0 { "p" } else { "x" }),
        V::I(0),
        V::N,
        V::N,
        V::T(format!("{functions}_in")),
        V::T(format!("{functions}_out")),
        V::T(format!("{functions}_recv")),
        V::T(format!("{functions}_send")),
        V::N,
    ]
}

/// The name of the enum type (or enum array type, `mood[]`) with this OID.
pub fn type_name(engine: &Engine, instance: &str, oid: i64) -> Option<String> {
    engine.enum_types(instance).into_iter().find_map(|meta| {
        let own = type_oid(&meta);
        match oid - own {
            0 => Some(meta.name.clone()),
            1 => Some(format!("{}[]", meta.name)),
            _ => None,
        }
    })
}

/// The OID of the enum type `name` names (bare or `public.`-qualified, quoted or not),
/// or of its array type (`mood[]`, `_mood`).
pub fn type_oid_by_name(engine: &Engine, instance: &str, name: &str) -> Option<i64> {
    let name = name.trim();
    let name = name.strip_prefix("public.").unwrap_or(name);
    let (name, array) = match name.strip_suffix("[]") {
        Some(element) => (element, true),
        None => match name.strip_prefix('_') {
            Some(element) if engine.enum_type(instance, element).is_some() => (element, true),
            _ => (name, false),
        },
    };
    let name = match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
        Some(quoted) => quoted.to_string(),
        None => name.to_lowercase(),
    };
    let meta = engine.enum_type(instance, &name)?;
    Some(type_oid(&meta) + i64::from(array))
}
