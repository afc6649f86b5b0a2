//! A table's foreign keys in the catalog: they live in the child's `TableMeta`, like
//! its indexes, so a write sees them as the table is when it commits; the tables that
//! reference a parent are found by looking through its instance's tables.

use super::{Catalog, TableMeta};
use crate::engine::error::{EngineError, EngineResult};
use crate::engine::foreign_key::{column_value_type, parent_lookup, ForeignKeyMeta};
use crate::engine::validate::check_name;
use crate::storage::WriteBatch;
use std::sync::Arc;

impl Catalog {
    /// Adds foreign key `fk` to table `table`: its columns must exist, its parent
    /// must exist and have a primary key or ready unique index on the referenced
    /// columns, of the same value types. Existing rows are not checked here.
    pub async fn add_foreign_key(
        &self,
        instance: &str,
        table: &str,
        fk: ForeignKeyMeta,
    ) -> EngineResult<Arc<TableMeta>> {
        check_name(&fk.name)?;
        let _ddl = self.ddl.lock().await;
        let mut meta = (*self.table(instance, table)?).clone();
        if has_constraint(&meta, &fk.name) {
            return Err(EngineError::ConstraintExists {
                name: fk.name,
                table: meta.name,
            });
        }
        // A table referencing itself is its own parent, as it is being changed.
        let parent = match fk.parent == meta.name {
            true => Arc::new(meta.clone()),
            false => self.table(instance, &fk.parent)?,
        };
        for column in &fk.columns {
            if meta.declared.mixed.contains(column) {
                return Err(EngineError::MixedColumn {
                    table: meta.name.clone(),
                    column: column.clone(),
                });
            }
            if column_value_type(&meta, column).is_none() {
                return Err(EngineError::NoSuchColumn {
                    table: meta.name.clone(),
                    column: column.clone(),
                });
            }
        }
        for column in &fk.parent_columns {
            if column_value_type(&parent, column).is_none() {
                return Err(EngineError::NoSuchColumn {
                    table: parent.name.clone(),
                    column: column.clone(),
                });
            }
        }
        if parent_lookup(&parent, &fk).is_none() {
            return Err(EngineError::NoUniqueMatch {
                parent: parent.name.clone(),
            });
        }
        for (column, parent_column) in fk.columns.iter().zip(&fk.parent_columns) {
            if column_value_type(&meta, column) != column_value_type(&parent, parent_column) {
                return Err(EngineError::ForeignKeyTypes {
                    constraint: fk.name.clone(),
                    column: column.clone(),
                    parent_column: parent_column.clone(),
                });
            }
        }
        let mut batch = WriteBatch::default();
        let mut fk = fk;
        fk.id = self.allocate_id(&mut batch);
        meta.foreign_keys.push(fk);
        self.store_table(meta, batch).await
    }

    /// Removes foreign key `name` from table `table`; returns it.
    pub async fn remove_foreign_key(
        &self,
        instance: &str,
        table: &str,
        name: &str,
    ) -> EngineResult<ForeignKeyMeta> {
        let mut removed = None;
        self.alter_table(instance, table, |meta| {
            let at = meta
                .foreign_keys
                .iter()
                .position(|fk| fk.name == name)
                .ok_or_else(|| EngineError::ConstraintNotFound {
                    name: name.into(),
                    table: meta.name.clone(),
                })?;
            removed = Some(meta.foreign_keys.remove(at));
            Ok(())
        })
        .await?;
        removed.ok_or_else(|| EngineError::ConstraintNotFound {
            name: name.into(),
            table: table.into(),
        })
    }

    /// The tables of `instance` with a foreign key to table `parent`, each with the
    /// key's position among its foreign keys.
    pub fn referencing(&self, instance: &str, parent: &str) -> Vec<(Arc<TableMeta>, usize)> {
        let state = self.read();
        let Some(tables) = state.tables.get(instance) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for table in tables.values() {
            for (at, fk) in table.foreign_keys.iter().enumerate() {
                if fk.parent == parent {
                    found.push((Arc::clone(table), at));
                }
            }
        }
        found
    }

    /// The tables whose foreign keys name `old` as their parent, with `new` there
    /// instead: a renamed table stays their parent. Their records go into `batch`.
    pub(super) fn renamed_parent(
        &self,
        instance: &str,
        old: &str,
        new: &str,
        batch: &mut WriteBatch,
    ) -> EngineResult<Vec<TableMeta>> {
        let mut changed = Vec::new();
        for (table, _) in self.referencing(instance, old) {
            if table.name == old || changed.iter().any(|t: &TableMeta| t.name == table.name) {
                continue;
            }
            let mut meta = (*table).clone();
            for fk in &mut meta.foreign_keys {
                if fk.parent == old {
                    fk.parent = new.into();
                }
            }
            batch.put(
                super::table_key(instance, &meta.name),
                super::to_json(&meta)?,
            );
            changed.push(meta);
        }
        Ok(changed)
    }
}

/// Whether `table` has a constraint (a foreign key, a check, or a unique constraint's
/// index) named `name`, or a primary key.
pub(super) fn has_constraint(table: &TableMeta, name: &str) -> bool {
    table.foreign_keys.iter().any(|fk| fk.name == name)
        || table.checks.iter().any(|c| c.name == name)
        || table.indexes.iter().any(|i| i.constraint && i.name == name)
        || (!table.auto_rowid && name == table.pk_constraint_name())
}
