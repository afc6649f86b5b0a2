//! ADD PRIMARY KEY in the catalog: the metadata of a table created without a primary
//! key as the columns it is given key it, under ids reserved before its rows are copied,
//! and the swap from the old metadata in one write (`Engine::add_primary_key`).

use super::{rowid_counter_key, Catalog, PkColumn, TableMeta, ROWID_COLUMN};
use crate::engine::error::{EngineError, EngineResult};
use crate::storage::WriteBatch;
use std::sync::Arc;

impl Catalog {
    /// Table `table` keyed by `key` (1 to 4 of its attribute columns, each of a key
    /// type matching its values') instead of its hidden `_rowid`. It and its indexes
    /// get new ids, reserved for good now: rows a copy that a crash interrupted left
    /// under them can never be taken for another table's. Nothing else is stored until
    /// `replace_rekeyed`. `name`: the key's constraint name, if not `<table>_pkey`.
    pub async fn rekeyed(
        &self,
        table: &TableMeta,
        key: Vec<PkColumn>,
        name: Option<String>,
    ) -> EngineResult<TableMeta> {
        if !table.auto_rowid {
            return Err(EngineError::PrimaryKeyExists {
                table: table.name.clone(),
            });
        }
        if key.is_empty() || key.len() > 4 {
            return Err(EngineError::PkColumnCount { count: key.len() });
        }
        for (i, column) in key.iter().enumerate() {
            if key[..i].iter().any(|c| c.name == column.name) {
                return Err(EngineError::ColumnExists {
                    name: column.name.clone(),
                });
            }
            let Some(attribute) = table.column(&column.name) else {
                return Err(EngineError::NoSuchColumn {
                    table: table.name.clone(),
                    column: column.name.clone(),
                });
            };
            if attribute.ty != column.ty.value_type() {
                return Err(EngineError::BadPkType {
                    column: column.name.clone(),
                    given: attribute.ty.name().into(),
                });
            }
        }
        let _ddl = self.ddl.lock().await;
        if let Some(name) = name
            .as_ref()
            .filter(|n| self.relation_exists(&table.instance, n))
        {
            return Err(EngineError::TableExists { name: name.clone() });
        }
        let mut meta = table.clone();
        let mut ids = WriteBatch::default();
        meta.id = self.allocate_id(&mut ids);
        for index in &mut meta.indexes {
            index.id = self.allocate_id(&mut ids);
        }
        self.backend.write(ids).await?;
        meta.columns
            .retain(|c| !key.iter().any(|k| k.name == c.name));
        meta.column_order.retain(|c| c != ROWID_COLUMN);
        // A key column is never NULL: the catalog keeps NOT NULL for attributes only.
        for column in &key {
            meta.declared.not_null.remove(&column.name);
        }
        meta.pk = key;
        meta.auto_rowid = false;
        meta.pk_name = name;
        Ok(meta)
    }

    /// Puts `rekeyed` (from `rekeyed`, its rows copied) in the place of `old` in one
    /// write, with the hidden `_rowid`'s counter deleted. If a schema change altered the
    /// table meanwhile, nothing changes and it is `TableReplaced`.
    pub async fn replace_rekeyed(
        &self,
        old: &Arc<TableMeta>,
        rekeyed: TableMeta,
    ) -> EngineResult<Arc<TableMeta>> {
        let _ddl = self.ddl.lock().await;
        let current = self.table(&old.instance, &old.name)?;
        if !Arc::ptr_eq(&current, old) {
            return Err(EngineError::TableReplaced {
                name: old.name.clone(),
            });
        }
        let mut batch = WriteBatch::default();
        batch.delete(rowid_counter_key(old.id));
        self.store_table(rekeyed, batch).await
    }
}
