//! DROP COLUMN: the column leaves the table's metadata at once (reads and writes stop
//! seeing it), and its cells are deleted from every row after, in batches. Inside a
//! transaction block the deletion waits for COMMIT, so a ROLLBACK that gives the
//! metadata back finds the values still there.

use super::catalog::TableMeta;
use super::condition::Condition;
use super::error::{EngineError, EngineResult};
use super::scan::{RowScanner, ScanStep};
use super::write::{ColumnOp, RowChange, RowWrite};
use super::Engine;
use crate::storage::{Direction, KeyRange};
use std::sync::Arc;

/// Rows whose cells one batch deletes.
const DELETE_BATCH: usize = 500;

impl Engine {
    /// Removes attribute column `column` from table `table`'s metadata: its type, its
    /// declarations, its default. Its cells stay until `delete_column_cells`.
    pub async fn hide_column(
        &self,
        instance: &str,
        table: &str,
        column: &str,
    ) -> EngineResult<Arc<TableMeta>> {
        // Writes in flight finish first: each one after sees the table without it.
        let _exclusive = self.table_ids.write().await;
        self.catalog
            .alter_table(instance, table, |meta| {
                if meta.column(column).is_none() {
                    return Err(EngineError::NoSuchColumn {
                        table: meta.name.clone(),
                        column: column.into(),
                    });
                }
                meta.columns.retain(|c| c.name != column);
                meta.column_order.retain(|c| c != column);
                meta.declared.forget(column);
                meta.defaults.remove(column);
                meta.generated.remove(column);
                Ok(())
            })
            .await
    }

    /// Deletes every cell of `column` from table `table`'s rows (a column
    /// `hide_column` removed), a batch of rows at a time.
    pub async fn delete_column_cells(
        &self,
        instance: &str,
        table: &str,
        column: &str,
    ) -> EngineResult<()> {
        let meta = self.table(instance, table)?;
        let range = KeyRange::prefix(&super::codec::table_prefix(meta.id));
        let mut scanner = RowScanner::new(self.backend.as_ref(), &meta, range, Direction::Forward);
        let mut writes = Vec::new();
        loop {
            let row = match scanner.step().await? {
                ScanStep::Row(row) => Some(row),
                ScanStep::PassedOver => continue,
                ScanStep::End => None,
            };
            if let Some(row) = &row {
                if row.cells.iter().any(|c| c.column == column) {
                    let write = RowWrite {
                        pk: row.pk.clone(),
                        change: RowChange::Update(vec![ColumnOp::DeleteAll {
                            column: column.into(),
                        }]),
                        condition: Condition::IGNORE,
                        return_row: false,
                    };
                    writes.push((Arc::clone(&meta), write));
                }
            }
            if writes.len() >= DELETE_BATCH || (row.is_none() && !writes.is_empty()) {
                self.write_rows_unmetered(std::mem::take(&mut writes))
                    .await?;
            }
            if row.is_none() {
                return Ok(());
            }
        }
    }
}
