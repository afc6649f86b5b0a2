//! `pg_catalog`, `information_schema` and `pgwide` as DataFusion schemas, so psql's
//! meta-commands and other clients' introspection queries run. Each relation has its
//! own file giving its columns and building its rows from the engine's catalog when a
//! query names it, so it is always current. This file holds the schema provider, which
//! sends each relation name to its file.

mod computed_view;
mod empty_tables;
mod information_schema;
mod memory_table;
mod oids;
mod pg_am;
mod pg_attribute;
mod pg_authid;
mod pg_class;
mod pg_collation;
mod pg_constraint;
mod pg_database;
mod pg_depend;
mod pg_description;
mod pg_enum;
mod pg_get_keywords;
mod pg_index;
mod pg_indexes;
mod pg_namespace;
mod pg_proc;
mod pg_roles;
mod pg_settings_view;
mod pg_stat_activity;
mod pg_stat_tables;
mod pg_statio_tables;
mod pg_tables;
mod pg_tablespace;
mod pg_type;
mod pg_user;
mod pg_views;
mod pgwide_key_advice;
mod pgwide_partitions;
mod pgwide_table_stats;
mod pgwide_tables;
mod table_columns;
mod table_sizes;

pub use empty_tables::EMPTY_TABLES;
pub use oids::{
    attnum, attribute_count, catalog_relation_oid, check_by_oid, database_oid, foreign_key_by_oid,
    index_by_oid, index_oid, sequence_oid, table_by_oid, table_oid, view_oid, INFORMATION_SCHEMA,
    INFORMATION_SCHEMA_OID, OWNER, OWNER_OID, PGWIDE, PG_CATALOG, PG_CATALOG_OID, PUBLIC_OID,
};
pub use pg_constraint::{check_definition, foreign_key_definition};
pub use pg_description::comment;
pub use pg_enum::{type_name as enum_type_name, type_oid_by_name as enum_type_oid_by_name};
pub use pg_indexes::definition as index_definition;
pub use pg_roles::{role_rows, DATABASE_OWNER};
pub use pg_type::{format_type, format_type_with_typmod, type_oid_by_name};
pub use pg_views::definition_of as view_definition;
pub use table_columns::{pk_columns, pkey_name};

use crate::engine::{Engine, TableMeta, ViewMeta};
use crate::sql::query::SharedSettings;
use crate::sql::settings::{partition_size_advice, PARTITION_SIZE_ADVICE};
use crate::sql::sql_types::SqlError;
use crate::sqlstate::SqlState;
use async_trait::async_trait;
use computed_view::{ComputeRows, ComputedView};
use datafusion::catalog::{SchemaProvider, TableProvider};
use datafusion::error::{DataFusionError, Result};
use memory_table::{mem_table, Col, V};
use std::sync::Arc;
use table_sizes::{BuildView, SizedView};

/// The relations of `pg_catalog` built from the engine's catalog.
const PG_TABLES: &[&str] = &[
    "pg_namespace",
    "pg_class",
    "pg_attribute",
    "pg_attrdef",
    "pg_type",
    "pg_index",
    "pg_indexes",
    "pg_constraint",
    "pg_database",
    "pg_depend",
    "pg_description",
    "pg_roles",
    "pg_authid",
    "pg_user",
    "pg_settings",
    "pg_am",
    "pg_collation",
    "pg_tablespace",
    "pg_tables",
    "pg_proc",
    "pg_get_keywords",
    "pg_enum",
    "pg_views",
    "pg_stat_activity",
    "pg_stat_gssapi",
];
/// The statistics views of `pg_catalog`, which count table sizes when scanned.
const PG_SIZED_VIEWS: &[&str] = &[
    "pg_stat_all_tables",
    "pg_stat_user_tables",
    "pg_statio_all_tables",
    "pg_statio_user_tables",
];
const INFO_TABLES: &[&str] = &[
    "schemata",
    "tables",
    "columns",
    "table_constraints",
    "key_column_usage",
    "referential_constraints",
    "constraint_column_usage",
    "views",
];

/// The relations a catalog schema serves.
fn relation_names(kind: Kind) -> Box<dyn Iterator<Item = &'static str>> {
    match kind {
        Kind::PgCatalog => Box::new(
            PG_TABLES
                .iter()
                .copied()
                .chain(PG_SIZED_VIEWS.iter().copied())
                .chain(EMPTY_TABLES.iter().map(|e| e.0)),
        ),
        Kind::InformationSchema => Box::new(INFO_TABLES.iter().copied()),
        Kind::Pgwide => Box::new(["tables", "table_stats", "partitions", "key_advice"].into_iter()),
    }
}

/// Whether `name` (bare, or qualified by `pg_catalog.`, `information_schema.` or
/// `pgwide.`) is one of the catalog relations pgwide serves. A bare name is looked up
/// in `pg_catalog`, which is on every search path.
pub fn is_catalog_relation(name: &str) -> bool {
    let (kind, bare) = match name.split_once('.') {
        Some((PG_CATALOG, bare)) => (Kind::PgCatalog, bare),
        Some((INFORMATION_SCHEMA, bare)) => (Kind::InformationSchema, bare),
        Some((PGWIDE, bare)) => (Kind::Pgwide, bare),
        Some(_) => return false,
        None => (Kind::PgCatalog, name),
    };
    relation_names(kind).any(|n| n == bare)
}

/// A relation's columns and rows.
type Rows = (&'static [Col], Vec<Vec<V>>);

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
    /// The server's connections, for `pg_stat_activity`; `None` outside a server.
    pub backends: Option<Arc<dyn crate::sql::activity::Backends>>,
    /// The session's role, and whether it is a superuser: what `pg_stat_activity`
    /// shows it of other roles' connections.
    pub viewer: (String, bool),
    /// The session's settings (`pgwide.key_advice` reads its size limit there).
    pub settings: Option<SharedSettings>,
}

impl std::fmt::Debug for CatalogSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CatalogSchema({}, {:?})", self.instance, self.kind)
    }
}

#[async_trait]
impl SchemaProvider for CatalogSchema {
    fn table_names(&self) -> Vec<String> {
        relation_names(self.kind).map(String::from).collect()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(build) = self.sized_view(name) {
            let view = SizedView::new(Arc::clone(&self.engine), &self.instance, name, build)?;
            return Ok(Some(Arc::new(view)));
        }
        if self.kind == Kind::PgCatalog && name == "pg_authid" && !self.viewer.1 {
            // Its rolpassword column holds every role's password verifier.
            return Err(DataFusionError::External(Box::new(SqlError::new(
                SqlState::InsufficientPrivilege,
                "permission denied for table pg_authid",
            ))));
        }
        if let Some(view) = self.computed_view(name)? {
            return Ok(Some(Arc::new(view)));
        }
        let relation = match self.kind {
            Kind::PgCatalog => self.pg_table(name),
            Kind::InformationSchema => self.info_table(name),
            Kind::Pgwide if name == "table_stats" => Some((
                pgwide_table_stats::COLUMNS,
                pgwide_table_stats::rows(&self.engine, &self.instance, &self.tables()),
            )),
            Kind::Pgwide => None,
        };
        relation
            .map(|(cols, rows)| mem_table(cols, rows))
            .transpose()
    }

    fn table_exist(&self, name: &str) -> bool {
        self.table_names().iter().any(|n| n == name)
    }
}

impl CatalogSchema {
    fn tables(&self) -> Vec<Arc<TableMeta>> {
        self.engine.tables(&self.instance).unwrap_or_default()
    }

    fn views(&self) -> Vec<Arc<ViewMeta>> {
        self.engine.views(&self.instance)
    }

    /// `name` if it is a relation computed from storage at each scan.
    fn computed_view(&self, name: &str) -> Result<Option<ComputedView>> {
        if self.kind != Kind::Pgwide {
            return Ok(None);
        }
        let engine = Arc::clone(&self.engine);
        let instance = self.instance.clone();
        let (name, columns, compute): (_, _, ComputeRows) = match name {
            "partitions" => (
                "partitions",
                pgwide_partitions::COLUMNS,
                Arc::new(move || {
                    let (engine, instance) = (Arc::clone(&engine), instance.clone());
                    Box::pin(async move {
                        pgwide_partitions::rows(&engine, &instance)
                            .await
                            .map_err(|e| DataFusionError::External(Box::new(e)))
                    })
                }),
            ),
            "key_advice" => {
                let settings = self.settings.clone();
                (
                    "key_advice",
                    pgwide_key_advice::COLUMNS,
                    Arc::new(move || {
                        let (engine, instance) = (Arc::clone(&engine), instance.clone());
                        // Checked when it was set: a value read back always parses.
                        let size_advice = settings
                            .as_ref()
                            .and_then(|s| s.get(PARTITION_SIZE_ADVICE))
                            .and_then(|value| partition_size_advice(&value).ok());
                        Box::pin(async move {
                            pgwide_key_advice::rows(&engine, &instance, size_advice)
                                .await
                                .map_err(|e| DataFusionError::External(Box::new(e)))
                        })
                    }),
                )
            }
            _ => return Ok(None),
        };
        ComputedView::new(name, columns, compute).map(Some)
    }

    /// How to build `name` if it is a view that needs table sizes (see `table_sizes`).
    fn sized_view(&self, name: &str) -> Option<BuildView> {
        let build: BuildView = match (self.kind, name) {
            (Kind::PgCatalog, "pg_stat_all_tables" | "pg_stat_user_tables") => pg_stat_tables::view,
            (Kind::PgCatalog, "pg_statio_all_tables" | "pg_statio_user_tables") => {
                pg_statio_tables::view
            }
            (Kind::Pgwide, "tables") => pgwide_tables::view,
            _ => return None,
        };
        Some(build)
    }

    /// A relation of `pg_catalog` other than the sized views.
    fn pg_table(&self, name: &str) -> Option<Rows> {
        if let Some((_, cols)) = EMPTY_TABLES.iter().find(|e| e.0 == name) {
            return Some((cols, Vec::new()));
        }
        let tables = self.tables();
        let roles = self.roles.as_deref();
        Some(match name {
            "pg_namespace" => (pg_namespace::COLUMNS, pg_namespace::rows()),
            "pg_class" => {
                let mut rows =
                    pg_class::rows(&tables, &self.engine.sequences(&self.instance), roles);
                rows.extend(pg_views::class_rows(&self.views()));
                (pg_class::COLUMNS, rows)
            }
            "pg_views" => (pg_views::COLUMNS, pg_views::rows(&self.views())),
            "pg_stat_gssapi" => {
                let backends = self.backends.as_ref().map(|b| b.list()).unwrap_or_default();
                (
                    pg_stat_activity::GSSAPI_COLUMNS,
                    pg_stat_activity::gssapi_rows(&backends),
                )
            }
            "pg_stat_activity" => {
                let backends = self.backends.as_ref().map(|b| b.list()).unwrap_or_default();
                let viewer = pg_stat_activity::Viewer {
                    user: &self.viewer.0,
                    superuser: self.viewer.1,
                };
                (
                    pg_stat_activity::COLUMNS,
                    pg_stat_activity::rows(&self.engine, roles, &backends, &viewer),
                )
            }
            "pg_depend" => (
                pg_depend::COLUMNS,
                pg_depend::rows(&tables, &self.engine.sequences(&self.instance)),
            ),
            "pg_description" => (pg_description::COLUMNS, pg_description::rows(&tables)),
            "pg_sequence" => (
                pg_class::SEQUENCE_COLUMNS,
                pg_class::sequence_rows(&self.engine.sequences(&self.instance)),
            ),
            "pg_attribute" => {
                let mut rows = pg_attribute::rows(&tables);
                rows.extend(pg_views::attribute_rows(&self.views()));
                (pg_attribute::COLUMNS, rows)
            }
            "pg_attrdef" => (
                pg_attribute::ATTRDEF_COLUMNS,
                pg_attribute::attrdef_rows(&tables),
            ),
            "pg_type" => {
                let mut rows = pg_type::rows();
                rows.extend(pg_enum::type_rows(&self.engine.enum_types(&self.instance)));
                (pg_type::COLUMNS, rows)
            }
            "pg_enum" => (
                pg_enum::COLUMNS,
                pg_enum::rows(&self.engine.enum_types(&self.instance)),
            ),
            "pg_index" => (pg_index::COLUMNS, pg_index::rows(&tables)),
            "pg_indexes" => (pg_indexes::COLUMNS, pg_indexes::rows(&tables)),
            "pg_constraint" => (pg_constraint::COLUMNS, pg_constraint::rows(&tables)),
            "pg_database" => (pg_database::COLUMNS, pg_database::rows(&self.engine)),
            "pg_roles" => (pg_roles::COLUMNS, pg_roles::rows(roles)),
            "pg_authid" => (pg_authid::COLUMNS, pg_authid::rows(roles)),
            "pg_user" => (pg_user::COLUMNS, pg_user::rows(roles)),
            "pg_settings" => (pg_settings_view::COLUMNS, pg_settings_view::rows()),
            "pg_am" => (pg_am::COLUMNS, pg_am::rows()),
            "pg_collation" => (pg_collation::COLUMNS, pg_collation::rows()),
            "pg_tablespace" => (pg_tablespace::COLUMNS, pg_tablespace::rows()),
            "pg_tables" => (pg_tables::COLUMNS, pg_tables::rows(&tables)),
            "pg_proc" => (pg_proc::COLUMNS, pg_proc::rows()),
            "pg_get_keywords" => (pg_get_keywords::COLUMNS, pg_get_keywords::rows()),
            _ => return None,
        })
    }

    /// A relation of `information_schema`.
    fn info_table(&self, name: &str) -> Option<Rows> {
        use information_schema as info;
        let tables = self.tables();
        let db = self.instance.as_str();
        Some(match name {
            "schemata" => (info::SCHEMATA, info::schemata_rows(db)),
            "tables" => {
                let mut rows = info::tables_rows(db, &tables);
                rows.extend(pg_views::information_schema_tables_rows(db, &self.views()));
                (info::TABLES, rows)
            }
            "columns" => {
                let enum_types = self.engine.enum_types(db);
                let mut rows = info::columns_rows(db, &tables, &enum_types);
                rows.extend(pg_views::information_schema_columns_rows(
                    db,
                    &self.views(),
                    &enum_types,
                ));
                (info::COLUMNS, rows)
            }
            "views" => (
                pg_views::INFORMATION_SCHEMA_VIEWS,
                pg_views::information_schema_views_rows(db, &self.views()),
            ),
            "table_constraints" => (
                info::TABLE_CONSTRAINTS,
                info::table_constraints_rows(db, &tables),
            ),
            "key_column_usage" => (
                info::KEY_COLUMN_USAGE,
                info::key_column_usage_rows(db, &tables),
            ),
            "constraint_column_usage" => (
                info::CONSTRAINT_COLUMN_USAGE,
                info::constraint_column_usage_rows(db, &tables),
            ),
            "referential_constraints" => (
                info::REFERENTIAL_CONSTRAINTS,
                info::referential_constraints_rows(db, &tables),
            ),
            _ => return None,
        })
    }
}
