//! A table's CHECK constraints in the catalog: kept in its `TableMeta`, like its
//! indexes and foreign keys, so a write is checked against the table as it commits.

use super::{Catalog, TableMeta};
use crate::engine::check::CheckMeta;
use crate::engine::error::{EngineError, EngineResult};
use crate::engine::validate::check_name;
use crate::storage::WriteBatch;
use std::sync::Arc;

impl Catalog {
    /// Adds `check` to table `table`; rows already there are not checked here.
    pub async fn add_check(
        &self,
        instance: &str,
        table: &str,
        check: CheckMeta,
    ) -> EngineResult<Arc<TableMeta>> {
        check_name(&check.name)?;
        let _ddl = self.ddl.lock().await;
        let mut meta = (*self.table(instance, table)?).clone();
        if super::foreign_keys::has_constraint(&meta, &check.name) {
            return Err(EngineError::ConstraintExists {
                name: check.name,
                table: meta.name,
            });
        }
        let mut batch = WriteBatch::default();
        let mut check = check;
        check.id = self.allocate_id(&mut batch);
        meta.checks.push(check);
        self.store_table(meta, batch).await
    }

    /// Removes CHECK constraint `name` from table `table`.
    pub async fn remove_check(&self, instance: &str, table: &str, name: &str) -> EngineResult<()> {
        self.alter_table(instance, table, |meta| {
            let at = meta
                .checks
                .iter()
                .position(|c| c.name == name)
                .ok_or_else(|| EngineError::ConstraintNotFound {
                    name: name.into(),
                    table: meta.name.clone(),
                })?;
            meta.checks.remove(at);
            Ok(())
        })
        .await
        .map(|_| ())
    }
}
