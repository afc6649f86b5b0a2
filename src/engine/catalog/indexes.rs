//! A table's secondary indexes in the catalog: they live in its `TableMeta`, so a
//! write sees the indexes of the table as it commits (`Catalog::current`) and a plan
//! made before an index existed is made again (the catalog version moves). Index
//! names share the namespace of tables and sequences, as relations in PostgreSQL do.

use super::{Catalog, TableMeta};
use crate::engine::error::{EngineError, EngineResult};
use crate::engine::index::{IndexMeta, IndexSpec};
use crate::engine::validate::check_name;
use crate::storage::WriteBatch;
use std::sync::Arc;

impl Catalog {
    /// The table of `table`'s id as the catalog has it now (renamed, altered or given
    /// new indexes since `table` was read); `None` if it was dropped or truncated.
    pub fn current(&self, table: &TableMeta) -> Option<Arc<TableMeta>> {
        let state = self.read();
        let tables = state.tables.get(&table.instance)?;
        match tables.get(&table.name) {
            Some(now) if now.id == table.id => Some(Arc::clone(now)),
            _ => tables.values().find(|t| t.id == table.id).cloned(),
        }
    }

    /// The table an index of this name belongs to, and the index's position in it.
    pub fn index_table(&self, instance: &str, name: &str) -> Option<(Arc<TableMeta>, usize)> {
        let state = self.read();
        state.tables.get(instance)?.values().find_map(|table| {
            let at = table.indexes.iter().position(|i| i.name == name)?;
            Some((Arc::clone(table), at))
        })
    }

    /// Whether a table, sequence, index or view of `instance` is called `name`: they
    /// share one namespace, as PostgreSQL's relations do.
    pub(super) fn relation_exists(&self, instance: &str, name: &str) -> bool {
        let state = self.read();
        let table_or_index = state.tables.get(instance).is_some_and(|tables| {
            tables.contains_key(name)
                || tables
                    .values()
                    .any(|t| t.indexes.iter().any(|i| i.name == name))
        });
        table_or_index
            || state
                .sequences
                .get(instance)
                .is_some_and(|s| s.contains_key(name))
            || state
                .views
                .get(instance)
                .is_some_and(|v| v.contains_key(name))
    }

    /// Adds an index, not yet ready, to table `table`; returns the table and the
    /// index's position in it.
    pub async fn add_index(
        &self,
        instance: &str,
        table: &str,
        spec: IndexSpec,
    ) -> EngineResult<(Arc<TableMeta>, usize)> {
        check_name(&spec.name)?;
        let _ddl = self.ddl.lock().await;
        let mut meta = (*self.table(instance, table)?).clone();
        if self.relation_exists(instance, &spec.name) {
            return Err(EngineError::TableExists { name: spec.name });
        }
        for (i, column) in spec.columns.iter().enumerate() {
            if meta.pk_index(column).is_none() && meta.column(column).is_none() {
                return Err(EngineError::NoSuchColumn {
                    table: meta.name.clone(),
                    column: column.clone(),
                });
            }
            if spec.columns[..i].contains(column) {
                return Err(EngineError::ColumnExists {
                    name: column.clone(),
                });
            }
            if meta.declared.mixed.contains(column) {
                return Err(EngineError::MixedColumn {
                    table: meta.name.clone(),
                    column: column.clone(),
                });
            }
        }
        let mut batch = WriteBatch::default();
        meta.indexes.push(IndexMeta {
            id: self.allocate_id(&mut batch),
            name: spec.name,
            columns: spec.columns,
            unique: spec.unique,
            constraint: spec.constraint,
            ready: false,
        });
        let at = meta.indexes.len() - 1;
        Ok((self.store_table(meta, batch).await?, at))
    }

    /// Marks a built index as one reads may use.
    pub async fn index_built(&self, table: &TableMeta, id: u32) -> EngineResult<()> {
        self.alter_table(&table.instance, &table.name, |meta| {
            match meta.indexes.iter_mut().find(|i| i.id == id) {
                Some(index) => {
                    index.ready = true;
                    Ok(())
                }
                None => Err(EngineError::IndexNotFound {
                    name: format!("#{id}"),
                }),
            }
        })
        .await
        .map(|_| ())
    }

    /// Removes index `name` from its table; returns it (the caller deletes its
    /// entries).
    pub async fn remove_index(&self, instance: &str, name: &str) -> EngineResult<IndexMeta> {
        let (table, _) = self
            .index_table(instance, name)
            .ok_or_else(|| EngineError::IndexNotFound { name: name.into() })?;
        let mut removed = None;
        self.alter_table(instance, &table.name, |meta| {
            let at = meta
                .indexes
                .iter()
                .position(|i| i.name == name)
                .ok_or_else(|| EngineError::IndexNotFound { name: name.into() })?;
            removed = Some(meta.indexes.remove(at));
            Ok(())
        })
        .await?;
        removed.ok_or_else(|| EngineError::IndexNotFound { name: name.into() })
    }
}
