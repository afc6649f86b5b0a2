//! `pg_catalog`, `information_schema` and `pgwide` as DataFusion schemas, so psql's
//! meta-commands and other clients' introspection queries run. Each table is built as a
//! `MemTable` from the engine's catalog when a query names it, so it is always current.
//! OIDs of tables derive from the engine's table id, which is never reused, so they are
//! stable across restarts. This file holds the schema provider, the OID conventions and
//! the table builder; the rows are in `pg_tables` and `information_schema`.

use crate::engine::{Engine, TableMeta};
use crate::sql::relation::{Relation, RelationKind, Source};
use crate::sql::types::SqlType;
use async_trait::async_trait;
use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Int64Builder, ListBuilder, RecordBatch, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::{SchemaProvider, TableProvider};
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use std::sync::Arc;

pub const PG_CATALOG: &str = "pg_catalog";
pub const INFORMATION_SCHEMA: &str = "information_schema";
pub const PGWIDE: &str = "pgwide";

/// OIDs PostgreSQL gives its built-in namespaces; clients hard-code them.
pub const PG_CATALOG_OID: i64 = 11;
pub const PUBLIC_OID: i64 = 2200;
pub const INFORMATION_SCHEMA_OID: i64 = 13_000;
/// The one role pgwide reports as owner of everything (PostgreSQL's bootstrap superuser).
pub const OWNER_OID: i64 = 10;
pub const OWNER: &str = "postgres";

pub use crate::sql::relation::{attnum, table_oid};

/// The table whose primary-key index (or constraint) has this OID, or which has it.
pub fn table_by_oid(engine: &Engine, instance: &str, oid: i64) -> Option<(Arc<TableMeta>, bool)> {
    let tables = engine.tables(instance).ok()?;
    tables.into_iter().find_map(|t| {
        let own = table_oid(&t);
        (own == oid || own + 1 == oid).then(|| (Arc::clone(&t), own + 1 == oid))
    })
}

/// The name of a table's primary-key index and constraint, as PostgreSQL names them.
pub fn pkey_name(table: &TableMeta) -> String {
    format!("{}_pkey", table.name)
}

/// The visible columns of a table with their SQL types and whether each is in the PK.
pub fn columns(table: &Arc<TableMeta>) -> Vec<(String, SqlType, bool)> {
    Relation::new(Arc::clone(table), RelationKind::Table, None)
        .columns
        .into_iter()
        .filter(|c| !c.hidden)
        .map(|c| {
            let pk = matches!(c.source, Source::Pk(_));
            (c.name, c.ty, pk)
        })
        .collect()
}

/// The PK columns a client sees: none for a table keyed by the hidden `_rowid`.
pub fn pk_columns(table: &TableMeta) -> Vec<String> {
    if table.auto_rowid {
        return Vec::new();
    }
    table.pk.iter().map(|c| c.name.clone()).collect()
}

/// The attnums of a table's primary-key columns, in key order (`pg_index.indkey`).
pub fn pk_attnums(table: &Arc<TableMeta>) -> Vec<String> {
    pk_columns(table)
        .iter()
        .filter_map(|c| attnum(table, c))
        .map(|n| n.to_string())
        .collect()
}

/// The types pgwide uses, with the few more clients look up by name.
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
        other => other,
    };
    TYPES
        .iter()
        .find(|(_, n, _)| *n == alias)
        .map(|(oid, _, _)| *oid)
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

/// One cell of a catalog row.
pub(super) enum V {
    I(i64),
    T(String),
    B(bool),
    A(Vec<String>),
    N,
}

pub(super) fn t(s: &str) -> V {
    V::T(s.to_string())
}

/// A column's kind: `i` bigint, `t` text, `b` boolean, `a` text[].
pub(super) type Col = (&'static str, char);

pub(super) fn mem_table(cols: &[Col], rows: Vec<Vec<V>>) -> Result<Arc<dyn TableProvider>> {
    let item = Arc::new(Field::new("item", DataType::Utf8, true));
    let fields: Vec<Field> = cols
        .iter()
        .map(|(name, kind)| {
            let ty = match kind {
                'i' => DataType::Int64,
                'b' => DataType::Boolean,
                'a' => DataType::List(Arc::clone(&item)),
                _ => DataType::Utf8,
            };
            Field::new(*name, ty, true)
        })
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (i, (_, kind)) in cols.iter().enumerate() {
        let cells = rows.iter().map(|r| r.get(i).unwrap_or(&V::N));
        arrays.push(match kind {
            'i' => {
                let mut b = Int64Builder::new();
                cells.for_each(|c| b.append_option(if let V::I(v) = c { Some(*v) } else { None }));
                Arc::new(b.finish())
            }
            'b' => {
                let mut b = BooleanBuilder::new();
                cells.for_each(|c| b.append_option(if let V::B(v) = c { Some(*v) } else { None }));
                Arc::new(b.finish())
            }
            'a' => {
                let mut b = ListBuilder::new(StringBuilder::new()).with_field(Arc::clone(&item));
                for c in cells {
                    match c {
                        V::A(values) => {
                            values.iter().for_each(|v| b.values().append_value(v));
                            b.append(true);
                        }
                        _ => b.append(false),
                    }
                }
                Arc::new(b.finish())
            }
            _ => {
                let mut b = StringBuilder::new();
                cells.for_each(|c| b.append_option(if let V::T(v) = c { Some(v) } else { None }));
                Arc::new(b.finish())
            }
        });
    }
    let batch = RecordBatch::try_new(Arc::clone(&schema), arrays)?;
    Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
}

/// Catalog tables that always exist but are empty in pgwide (no views, triggers,
/// policies, inheritance, publications, defaults, comments). Queries that inner-join
/// one are answered with no rows without planning (see `pg_compat`).
pub const EMPTY_TABLES: &[(&str, &[Col])] = &[
    (
        "pg_attrdef",
        &[
            ("oid", 'i'),
            ("adrelid", 'i'),
            ("adnum", 'i'),
            ("adbin", 't'),
        ],
    ),
    (
        "pg_description",
        &[
            ("objoid", 'i'),
            ("classoid", 'i'),
            ("objsubid", 'i'),
            ("description", 't'),
        ],
    ),
    (
        "pg_inherits",
        &[
            ("inhrelid", 'i'),
            ("inhparent", 'i'),
            ("inhseqno", 'i'),
            ("inhdetachpending", 'b'),
        ],
    ),
    (
        "pg_policy",
        &[("oid", 'i'), ("polname", 't'), ("polrelid", 'i')],
    ),
    (
        "pg_trigger",
        &[("oid", 'i'), ("tgrelid", 'i'), ("tgname", 't')],
    ),
    (
        "pg_rewrite",
        &[("oid", 'i'), ("ev_class", 'i'), ("rulename", 't')],
    ),
    (
        "pg_statistic_ext",
        &[("oid", 'i'), ("stxrelid", 'i'), ("stxname", 't')],
    ),
    (
        "pg_publication",
        &[("oid", 'i'), ("pubname", 't'), ("puballtables", 'b')],
    ),
    (
        "pg_publication_rel",
        &[("oid", 'i'), ("prpubid", 'i'), ("prrelid", 'i')],
    ),
    (
        "pg_publication_namespace",
        &[("oid", 'i'), ("pnpubid", 'i'), ("pnnspid", 'i')],
    ),
    (
        "pg_extension",
        &[("oid", 'i'), ("extname", 't'), ("extversion", 't')],
    ),
    (
        "pg_views",
        &[("schemaname", 't'), ("viewname", 't'), ("definition", 't')],
    ),
    ("pg_matviews", &[("schemaname", 't'), ("matviewname", 't')]),
    ("pg_sequence", &[("seqrelid", 'i')]),
    (
        "pg_auth_members",
        &[
            ("roleid", 'i'),
            ("member", 'i'),
            ("grantor", 'i'),
            ("admin_option", 'b'),
        ],
    ),
    (
        "pg_shdescription",
        &[("objoid", 'i'), ("classoid", 'i'), ("description", 't')],
    ),
    (
        "pg_depend",
        &[
            ("classid", 'i'),
            ("objid", 'i'),
            ("objsubid", 'i'),
            ("refclassid", 'i'),
            ("refobjid", 'i'),
            ("refobjsubid", 'i'),
            ("deptype", 't'),
        ],
    ),
    ("pg_foreign_table", &[("ftrelid", 'i'), ("ftserver", 'i')]),
    (
        "pg_partitioned_table",
        &[("partrelid", 'i'), ("partstrat", 't')],
    ),
    (
        "pg_enum",
        &[
            ("oid", 'i'),
            ("enumtypid", 'i'),
            ("enumsortorder", 'i'),
            ("enumlabel", 't'),
        ],
    ),
];

const PG_TABLES: &[&str] = &[
    "pg_namespace",
    "pg_class",
    "pg_attribute",
    "pg_type",
    "pg_index",
    "pg_constraint",
    "pg_database",
    "pg_roles",
    "pg_user",
    "pg_settings",
    "pg_am",
    "pg_collation",
    "pg_tablespace",
    "pg_tables",
    "pg_proc",
    "pg_get_keywords",
];
const INFO_TABLES: &[&str] = &[
    "schemata",
    "tables",
    "columns",
    "table_constraints",
    "key_column_usage",
];

/// Which of the three schemas a provider serves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    PgCatalog,
    InformationSchema,
    Pgwide,
}

/// One of the introspection schemas of an instance.
pub struct CatalogSchema {
    pub engine: Arc<Engine>,
    pub instance: String,
    pub kind: Kind,
    /// The role store pg_roles / pg_user / pg_authid list; `None`: the one owner.
    pub roles: Option<Arc<crate::auth::Roles>>,
}

impl std::fmt::Debug for CatalogSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CatalogSchema({}, {:?})", self.instance, self.kind)
    }
}

#[async_trait]
impl SchemaProvider for CatalogSchema {
    fn table_names(&self) -> Vec<String> {
        let names: Vec<&str> = match self.kind {
            Kind::PgCatalog => PG_TABLES
                .iter()
                .copied()
                .chain(super::pg_stats::VIEWS.iter().copied())
                .chain(EMPTY_TABLES.iter().map(|e| e.0))
                .collect(),
            Kind::InformationSchema => INFO_TABLES.to_vec(),
            Kind::Pgwide => vec!["tables", "table_stats"],
        };
        names.into_iter().map(String::from).collect()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if super::pg_stats::needs_sizes(self.kind, name) {
            let view = super::pg_stats::SizedView::new(self, name)?;
            return Ok(Some(Arc::new(view)));
        }
        self.build(name)
    }

    fn table_exist(&self, name: &str) -> bool {
        self.table_names().iter().any(|n| n == name)
    }
}

impl CatalogSchema {
    pub(super) fn tables(&self) -> Vec<Arc<TableMeta>> {
        self.engine.tables(&self.instance).unwrap_or_default()
    }

    fn build(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let table = match (self.kind, name) {
            (Kind::PgCatalog, _) => self.pg_table(name)?,
            (Kind::InformationSchema, _) => self.info_table(name)?,
            (Kind::Pgwide, "table_stats") => Some(self.pgwide_table_stats()?),
            _ => None,
        };
        Ok(table)
    }
}
