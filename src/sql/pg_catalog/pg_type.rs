//! `pg_catalog.pg_type`: the types pgwide uses and the few more clients look up by
//! name, with the lookups by name (`to_regtype`, `::regtype`) and by OID
//! (`format_type`) that the system functions answer from the same list.

use super::memory_table::{t, Col, V};
use super::oids::{OWNER_OID, PG_CATALOG_OID};
use crate::sql::sql_types::SqlType;

/// The types pgwide uses, with the few more clients look up by name: OID, name, length.
pub const TYPES: &[(i64, &str, i64)] = &[
    (16, "bool", 1),
    (17, "bytea", -1),
    (18, "char", 1),
    (19, "name", 64),
    (20, "int8", 8),
    (21, "int2", 2),
    (23, "int4", 4),
    (25, "text", -1),
    (26, "oid", 4),
    (700, "float4", 4),
    (701, "float8", 8),
    (1043, "varchar", -1),
    (1082, "date", 4),
    (1114, "timestamp", 8),
    (1184, "timestamptz", 8),
    (2950, "uuid", 16),
    (1700, "numeric", -1),
    (1083, "time", 8),
    (1186, "interval", 16),
    (114, "json", -1),
    (3802, "jsonb", -1),
    (1000, "_bool", -1),
    (1001, "_bytea", -1),
    (1005, "_int2", -1),
    (1007, "_int4", -1),
    (1009, "_text", -1),
    (1016, "_int8", -1),
    (1021, "_float4", -1),
    (1022, "_float8", -1),
    (1182, "_date", -1),
    (1115, "_timestamp", -1),
    (1185, "_timestamptz", -1),
    (2951, "_uuid", -1),
];

/// The OID of a type named as `to_regtype` and `'name'::regtype` accept it: its
/// `pg_type` name or SQL spelling, optionally `pg_catalog.`-qualified, any case.
pub fn type_oid_by_name(name: &str) -> Option<i64> {
    let name = name.trim().to_lowercase();
    let name = name.strip_prefix("pg_catalog.").unwrap_or(&name);
    let name = name.trim_matches('"');
    let alias = match name {
        "boolean" => "bool",
        "smallint" => "int2",
        "integer" | "int" => "int4",
        "bigint" => "int8",
        "real" => "float4",
        "double precision" => "float8",
        "character varying" => "varchar",
        "timestamp without time zone" => "timestamp",
        "timestamp with time zone" => "timestamptz",
        "time without time zone" => "time",
        other => other,
    };
    TYPES
        .iter()
        .find(|(_, n, _)| *n == alias)
        .map(|(oid, _, _)| *oid)
}

/// The name `format_type(oid, typmod)` prints: a numeric's precision and scale follow
/// its name (`numeric(10,2)`), as a varchar's length does (`character varying(3)`), a
/// timestamp's digits its first word (`timestamp(3) without time zone`).
pub fn format_type_with_typmod(oid: i64, typmod: Option<i64>) -> Option<String> {
    let name = format_type(oid)?;
    Some(match (oid, typmod) {
        (1043, Some(typmod)) if typmod >= 4 => format!("{name}({})", typmod - 4),
        (1700, Some(typmod)) if typmod >= 4 => {
            let packed = typmod - 4;
            format!("{name}({},{})", packed >> 16, packed & 0xffff)
        }
        // `timestamp(3) without time zone`: the digits follow the first word.
        (1114 | 1184, Some(digits)) if (0..=6).contains(&digits) => match name.split_once(' ') {
            Some((first, rest)) => format!("{first}({digits}) {rest}"),
            None => format!("{name}({digits})"),
        },
        _ => name.to_string(),
    })
}

/// The name `format_type` prints for a type OID.
pub fn format_type(oid: i64) -> Option<&'static str> {
    u32::try_from(oid)
        .ok()
        .and_then(SqlType::from_oid)
        .filter(|_| oid != 1043 && oid != 19)
        .map(SqlType::name)
        .or(match oid {
            18 => Some("\"char\""),
            19 => Some("name"),
            26 => Some("oid"),
            1043 => Some("character varying"),
            _ => None,
        })
}

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("typname", 'n'),
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
];

/// One row per type of [`TYPES`], all base types in `pg_catalog`.
pub fn rows() -> Vec<Vec<V>> {
    TYPES
        .iter()
        .map(|&(oid, n, len)| row(oid, n, len))
        .collect()
}

fn row(oid: i64, n: &str, len: i64) -> Vec<V> {
    // An array type's element type (`typelem`), e.g. `int4` for `_int4`.
    let element = u32::try_from(oid)
        .ok()
        .and_then(SqlType::from_oid)
        .and_then(|ty| match ty {
            SqlType::Array(of) => Some(i64::from(of.element().oid())),
            _ => None,
        });
    let collation = if matches!(oid, 25 | 1043 | 19 | 1009) {
        100
    } else {
        0
    };
    vec![
        V::I(oid),
        t(n),
        V::I(PG_CATALOG_OID),
        V::I(OWNER_OID),
        V::I(len),
        t("b"),
        t(match oid {
            16 => "B",
            20 | 21 | 23 | 26 | 700 | 701 | 1700 => "N",
            18 | 19 | 25 | 1043 => "S",
            1082 | 1114 | 1184 | 1083 => "D",
            1186 => "T",
            _ if element.is_some() => "A",
            _ => "U",
        }),
        V::I(0),
        V::I(element.unwrap_or(0)),
        V::I(0),
        V::I(0),
        V::I(-1),
        V::B(false),
        V::I(collation),
        t(","),
        V::B(len > 0),
        V::B(true),
        t(match len {
            8 => "d",
            4 => "i",
            2 => "s",
            1 => "c",
            _ => "i",
        }),
        // `numeric` is kept in line (`m`), as its columns' `attstorage` says.
        t(match (oid, len > 0) {
            (1700, _) => "m",
            (_, true) => "p",
            (_, false) => "x",
        }),
        V::I(0),
        V::N,
        V::N,
        V::T(format!("{n}in")),
        V::T(format!("{n}out")),
        V::T(format!("{n}recv")),
        V::T(format!("{n}send")),
        V::N,
    ]
}
