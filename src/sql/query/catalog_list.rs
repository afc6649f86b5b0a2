//! The DataFusion catalog of one instance: schema `public` holds its tables and schema
//! `versions` their versions relations, both looked up in the engine's catalog when a
//! query names them, so DDL from any session is seen at once.

use super::pg_settings::SharedSettings;
use super::provider::EngineTable;
use super::stream_relation::{StreamRelation, STREAM_SCHEMA};
use crate::engine::{Engine, EngineError};
use crate::sql::activity::SessionBackend;
use crate::sql::pg_catalog::{CatalogSchema, Kind, INFORMATION_SCHEMA, PGWIDE, PG_CATALOG};
use crate::sql::relation::{RelationKind, VERSIONS_SCHEMA};
use async_trait::async_trait;
use datafusion::catalog::{
    CatalogProvider, CatalogProviderList, MemoryCatalogProviderList, SchemaProvider, TableProvider,
};
use datafusion::error::{DataFusionError, Result};
use std::sync::Arc;

/// The schema of an instance's tables.
pub const PUBLIC: &str = "public";

/// A catalog list holding the one catalog named after `instance`.
pub fn catalog_list(
    engine: Arc<Engine>,
    instance: &str,
    roles: Option<Arc<crate::auth::Roles>>,
    backend: Option<&SessionBackend>,
    viewer: (String, bool),
    settings: SharedSettings,
) -> Arc<dyn CatalogProviderList> {
    let list = MemoryCatalogProviderList::new();
    let catalog = InstanceCatalog {
        public: Arc::new(InstanceSchema {
            engine: Arc::clone(&engine),
            instance: instance.to_string(),
            kind: RelationKind::Table,
        }),
        versions: Arc::new(InstanceSchema {
            engine: Arc::clone(&engine),
            instance: instance.to_string(),
            kind: RelationKind::Versions,
        }),
        stream: Arc::new(StreamSchema {
            engine: Arc::clone(&engine),
            instance: instance.to_string(),
        }),
        introspection: [Kind::PgCatalog, Kind::InformationSchema, Kind::Pgwide].map(|kind| {
            Arc::new(CatalogSchema {
                engine: Arc::clone(&engine),
                instance: instance.to_string(),
                kind,
                roles: roles.clone(),
                backends: backend.map(|b| Arc::clone(&b.backends)),
                viewer: viewer.clone(),
                settings: Some(settings.clone()),
            })
        }),
    };
    list.register_catalog(instance.to_string(), Arc::new(catalog));
    Arc::new(list)
}

#[derive(Debug)]
struct InstanceCatalog {
    public: Arc<InstanceSchema>,
    versions: Arc<InstanceSchema>,
    stream: Arc<StreamSchema>,
    /// pg_catalog, information_schema and pgwide, in that order.
    introspection: [Arc<CatalogSchema>; 3],
}

impl CatalogProvider for InstanceCatalog {
    fn schema_names(&self) -> Vec<String> {
        [
            PUBLIC,
            VERSIONS_SCHEMA,
            STREAM_SCHEMA,
            PG_CATALOG,
            INFORMATION_SCHEMA,
            PGWIDE,
        ]
        .map(String::from)
        .to_vec()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        match name {
            PUBLIC => Some(Arc::clone(&self.public) as Arc<dyn SchemaProvider>),
            VERSIONS_SCHEMA => Some(Arc::clone(&self.versions) as Arc<dyn SchemaProvider>),
            STREAM_SCHEMA => Some(Arc::clone(&self.stream) as Arc<dyn SchemaProvider>),
            PG_CATALOG => Some(Arc::clone(&self.introspection[0]) as Arc<dyn SchemaProvider>),
            INFORMATION_SCHEMA => {
                Some(Arc::clone(&self.introspection[1]) as Arc<dyn SchemaProvider>)
            }
            PGWIDE => Some(Arc::clone(&self.introspection[2]) as Arc<dyn SchemaProvider>),
            _ => None,
        }
    }
}

struct InstanceSchema {
    engine: Arc<Engine>,
    instance: String,
    kind: RelationKind,
}

impl std::fmt::Debug for InstanceSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InstanceSchema({}, {:?})", self.instance, self.kind)
    }
}

#[async_trait]
impl SchemaProvider for InstanceSchema {
    fn table_names(&self) -> Vec<String> {
        self.engine
            .tables(&self.instance)
            .map(|tables| tables.iter().map(|t| t.name.clone()).collect())
            .unwrap_or_default()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        match self.engine.table(&self.instance, name) {
            Ok(meta) => Ok(Some(Arc::new(EngineTable::new(meta, self.kind)))),
            Err(EngineError::TableNotFound { .. }) => Ok(None),
            Err(e) => Err(DataFusionError::External(Box::new(
                crate::sql::SqlError::from(e),
            ))),
        }
    }

    fn table_exist(&self, name: &str) -> bool {
        self.engine.table(&self.instance, name).is_ok()
    }
}

/// Schema `stream`: the stream relation of each table whose stream is on.
struct StreamSchema {
    engine: Arc<Engine>,
    instance: String,
}

impl std::fmt::Debug for StreamSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StreamSchema({})", self.instance)
    }
}

#[async_trait]
impl SchemaProvider for StreamSchema {
    fn table_names(&self) -> Vec<String> {
        self.engine
            .tables(&self.instance)
            .map(|tables| {
                tables
                    .iter()
                    .filter(|t| t.options.stream_enabled)
                    .map(|t| t.name.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let meta = match self.engine.table(&self.instance, name) {
            Ok(meta) => meta,
            Err(EngineError::TableNotFound { .. }) => return Ok(None),
            Err(e) => {
                return Err(DataFusionError::External(Box::new(
                    crate::sql::SqlError::from(e),
                )))
            }
        };
        if !meta.options.stream_enabled {
            return Err(DataFusionError::External(Box::new(
                crate::sql::SqlError::new(
                    crate::sqlstate::SqlState::ObjectNotInPrerequisiteState,
                    format!(
                        "table \"{name}\" has no stream: ALTER TABLE {name} SET \
                         (stream_enabled = true) starts one"
                    ),
                ),
            )));
        }
        Ok(Some(Arc::new(StreamRelation::new(
            Arc::clone(&self.engine),
            meta,
        ))))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.engine.table(&self.instance, name).is_ok()
    }
}
