//! CHECK constraints. Their expressions are SQL, which the engine does not read: it
//! keeps each as text in its table's metadata and asks the SQL layer's [`RowRules`]
//! (installed with [`Engine::set_row_rules`]) whether a row a batch leaves satisfies
//! them, as the batch commits, so every write path is held to them. A table with
//! checks refuses writes while no rules are installed rather than skip them.

use super::catalog::TableMeta;
use super::error::{EngineError, EngineResult};
use super::scan::{RowScanner, ScanStep};
use super::types::Row;
use super::Engine;
use crate::storage::{Direction, KeyRange};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One CHECK constraint of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckMeta {
    /// Unique across instances and never reused: its identity in the SQL catalog.
    #[serde(default)]
    pub id: u32,
    /// Unique among the table's constraints.
    pub name: String,
    /// The condition, as SQL text; a row satisfies it unless it is false.
    pub expression: String,
}

/// Judges rows against their table's CHECK constraints.
pub trait RowRules: Send + Sync {
    /// `CheckViolation` (or the evaluation's own failure) unless `row` satisfies each
    /// of `table`'s checks.
    fn check(&self, table: &Arc<TableMeta>, row: &Row) -> EngineResult<()>;
}

impl Engine {
    /// Installs the judge of CHECK constraints; the first one installed stays.
    pub fn set_row_rules(&self, rules: Arc<dyn RowRules>) {
        let _ = self.row_rules.set(rules);
    }

    /// Checks `row` of `table` against its CHECK constraints.
    pub(crate) fn check_row(&self, table: &Arc<TableMeta>, row: &Row) -> EngineResult<()> {
        match self.row_rules.get() {
            Some(rules) => rules.check(table, row),
            None => Err(EngineError::CheckFailed {
                constraint: table
                    .checks
                    .first()
                    .map(|c| c.name.clone())
                    .unwrap_or_default(),
                message: "no SQL layer is installed to evaluate it".into(),
            }),
        }
    }

    /// ALTER TABLE ... ADD CHECK (and CREATE TABLE's): adds `check` to table `table`,
    /// then checks the rows already there, removing it again if one fails it.
    pub async fn add_check(
        &self,
        instance: &str,
        table: &str,
        check: CheckMeta,
    ) -> EngineResult<()> {
        let meta = {
            // Writes in flight finish first: each one after is checked.
            let _exclusive = self.table_ids.write().await;
            self.catalog
                .add_check(instance, table, check.clone())
                .await?
        };
        if let Err(e) = self.check_stored_rows(&meta, &check.name).await {
            if let Err(undo) = self
                .catalog
                .remove_check(instance, &meta.name, &check.name)
                .await
            {
                tracing::warn!(constraint = %check.name, error = %undo, "could not remove a CHECK constraint rows failed");
            }
            return Err(e);
        }
        Ok(())
    }

    /// ALTER TABLE ... DROP CONSTRAINT of a CHECK constraint.
    pub async fn drop_check(&self, instance: &str, table: &str, name: &str) -> EngineResult<()> {
        self.catalog.remove_check(instance, table, name).await
    }

    /// `CheckViolation` (PostgreSQL's wording for ADD CONSTRAINT) for the first stored
    /// row of `table` that fails its check `name`.
    async fn check_stored_rows(&self, table: &Arc<TableMeta>, name: &str) -> EngineResult<()> {
        let mut only_this = (**table).clone();
        only_this.checks.retain(|c| c.name == name);
        let only_this = Arc::new(only_this);
        let range = KeyRange::prefix(&super::codec::table_prefix(table.id));
        let mut scanner = RowScanner::new(self.backend.as_ref(), table, range, Direction::Forward);
        loop {
            let row = match scanner.step().await? {
                ScanStep::Row(row) => row,
                ScanStep::PassedOver => continue,
                ScanStep::End => return Ok(()),
            };
            let Some(current) = row.current(&table.options, self.now_ms()) else {
                continue;
            };
            if let Err(EngineError::CheckViolation { constraint, .. }) =
                self.check_row(&only_this, &current)
            {
                return Err(EngineError::CheckViolatedByRows {
                    constraint,
                    table: table.name.clone(),
                });
            }
        }
    }
}
