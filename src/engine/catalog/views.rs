//! Views: PostgreSQL's `CREATE VIEW name AS query`. A view stores no rows: the catalog
//! keeps its query as SQL text, the columns it had when it was made (names and types,
//! as the SQL layer describes them) and the relations its query reads, so that a table
//! a view reads is not dropped from under it. The SQL layer expands a view where a
//! statement names it (`sql::views`).

use super::{from_json, to_json, Catalog, CATALOG_PREFIX};
use crate::engine::error::{EngineError, EngineResult};
use crate::storage::WriteBatch;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub(super) const VIEW_TAG: u8 = b'V';

/// A view as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewMeta {
    /// Drawn from the counter tables and sequences draw from, so never reused; kept
    /// when the view is replaced, as PostgreSQL keeps a replaced view's OID.
    pub id: u32,
    pub instance: String,
    pub name: String,
    /// The view's query, as SQL text.
    pub query: String,
    /// The view's columns in order.
    pub columns: Vec<ViewColumn>,
    /// The tables and views the query reads, by name.
    pub reads: Vec<String>,
}

/// A column of a view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewColumn {
    /// The view's name for it (a column alias of `CREATE VIEW v (a, b)`, or the
    /// query's own name for it).
    pub name: String,
    /// The query's name for it when the view was made: the view selects its columns
    /// by these, so a column added later to a table its `SELECT *` reads stays out of
    /// it, as in PostgreSQL, which expands `*` when the view is made.
    pub source: String,
    /// The column's type, as the SQL layer names it (a PostgreSQL type OID).
    pub type_oid: u32,
    /// The type's modifier (`atttypmod`), -1 for none.
    pub typmod: i32,
}

pub(super) fn view_key(instance: &str, name: &str) -> Vec<u8> {
    let mut key = vec![CATALOG_PREFIX, VIEW_TAG];
    key.extend_from_slice(instance.as_bytes());
    key.push(0);
    key.extend_from_slice(name.as_bytes());
    key
}

pub(super) fn load(raw: &[u8]) -> EngineResult<ViewMeta> {
    from_json(raw)
}

impl Catalog {
    pub fn view(&self, instance: &str, name: &str) -> Option<Arc<ViewMeta>> {
        self.read()
            .views
            .get(instance)
            .and_then(|views| views.get(name))
            .cloned()
    }

    pub fn views(&self, instance: &str) -> Vec<Arc<ViewMeta>> {
        self.read()
            .views
            .get(instance)
            .map(|views| views.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether `instance` has any view: statements skip looking for views when not.
    pub fn has_views(&self, instance: &str) -> bool {
        self.read()
            .views
            .get(instance)
            .is_some_and(|views| !views.is_empty())
    }

    /// The views that read relation `name` (a table or another view).
    pub fn views_reading(&self, instance: &str, name: &str) -> Vec<Arc<ViewMeta>> {
        self.views(instance)
            .into_iter()
            .filter(|view| view.reads.iter().any(|read| read == name))
            .collect()
    }

    /// Creates view `name`, or with `replace` replaces the one of that name (keeping its
    /// id). Whether the new columns may replace the old ones is the SQL layer's to say;
    /// every relation the view reads must exist.
    pub async fn create_view(
        &self,
        instance: &str,
        name: &str,
        query: String,
        columns: Vec<ViewColumn>,
        reads: Vec<String>,
        replace: bool,
    ) -> EngineResult<Arc<ViewMeta>> {
        crate::engine::check_name(name)?;
        for column in &columns {
            check_column_name(column)?;
        }
        let _ddl = self.ddl.lock().await;
        self.instance(instance)?;
        for read in &reads {
            if self.table(instance, read).is_err() && self.view(instance, read).is_none() {
                return Err(EngineError::TableNotFound { name: read.clone() });
            }
        }
        let existing = self.view(instance, name);
        let mut batch = WriteBatch::default();
        let id = match existing {
            Some(existing) if replace => existing.id,
            Some(_) => return Err(EngineError::TableExists { name: name.into() }),
            None if self.relation_exists(instance, name) => {
                return Err(EngineError::TableExists { name: name.into() })
            }
            // A view's name is also its row type's in PostgreSQL.
            None if self.enum_type(instance, name).is_some() => {
                return Err(EngineError::TypeExists { name: name.into() })
            }
            None => self.allocate_id(&mut batch),
        };
        let meta = ViewMeta {
            id,
            instance: instance.into(),
            name: name.into(),
            query,
            columns,
            reads,
        };
        self.store_view(meta, batch).await
    }

    /// Puts back a view exactly as it was (a rolled-back DROP VIEW or CREATE OR
    /// REPLACE VIEW).
    pub async fn restore_view(&self, meta: ViewMeta) -> EngineResult<Arc<ViewMeta>> {
        let _ddl = self.ddl.lock().await;
        self.store_view(meta, WriteBatch::default()).await
    }

    /// Drops a view; the SQL layer has dropped or refused the views that read it.
    pub async fn drop_view(&self, instance: &str, name: &str) -> EngineResult<()> {
        let _ddl = self.ddl.lock().await;
        if self.view(instance, name).is_none() {
            return Err(EngineError::TableNotFound { name: name.into() });
        }
        let mut batch = WriteBatch::default();
        batch.delete(view_key(instance, name));
        self.backend.write(batch).await?;
        if let Some(views) = self.write().views.get_mut(instance) {
            views.remove(name);
        }
        Ok(())
    }

    /// Writes `meta` (with whatever `batch` holds) and caches it.
    async fn store_view(
        &self,
        meta: ViewMeta,
        mut batch: WriteBatch,
    ) -> EngineResult<Arc<ViewMeta>> {
        batch.put(view_key(&meta.instance, &meta.name), to_json(&meta)?);
        self.backend.write(batch).await?;
        let meta = Arc::new(meta);
        self.write()
            .views
            .entry(meta.instance.clone())
            .or_default()
            .insert(meta.name.clone(), Arc::clone(&meta));
        Ok(meta)
    }
}

/// A view column may be named anything a query can name a column (`count`, `?column?`,
/// `a b`), as in PostgreSQL; only an empty name or one past PostgreSQL's 63 bytes is not.
fn check_column_name(column: &ViewColumn) -> EngineResult<()> {
    match column.name.is_empty() || column.name.len() > 63 {
        true => Err(EngineError::InvalidName {
            name: column.name.clone(),
        }),
        false => Ok(()),
    }
}
