//! RENAME COLUMN: a key column is named only in the catalog (rows are keyed by the
//! key's values); an attribute column's cells carry its name, so every row holding
//! one is rewritten under the new name. Rows and catalog change in one backend batch,
//! so a crash leaves either the old name everywhere or the new one; writes wait
//! meanwhile (the exclusive table lock), as PostgreSQL's ACCESS EXCLUSIVE lock makes
//! them. The batch holds every rewritten row: the table's size in memory.

use super::catalog::ensure_renamable;
use super::check::CheckMeta;
use super::codec::table_prefix;
use super::error::{EngineError, EngineResult};
use super::scan::{RowScanner, ScanStep};
use super::{Engine, TableMeta};
use crate::storage::{Direction, KeyRange, WriteBatch};
use std::sync::Arc;

impl Engine {
    /// Renames column `old` of table `table` to `new`, with `checks` as the table's
    /// CHECK constraints afterwards (their SQL is the caller's to rewrite). A row
    /// holding cells of an undeclared column already called `new` is `ColumnExists`:
    /// the two columns' values would merge.
    pub async fn rename_column(
        &self,
        instance: &str,
        table: &str,
        old: &str,
        new: &str,
        checks: Vec<CheckMeta>,
    ) -> EngineResult<Arc<TableMeta>> {
        super::check_name(new)?;
        // Writes in flight finish first, and none starts until the rename is stored.
        let _exclusive = self.table_ids.write().await;
        let meta = self.table(instance, table)?;
        ensure_renamable(&meta, old, new)?;
        let mut rows = WriteBatch::default();
        if meta.pk_index(old).is_none() {
            let range = KeyRange::prefix(&table_prefix(meta.id));
            let mut scanner =
                RowScanner::new(self.backend.as_ref(), &meta, range, Direction::Forward);
            loop {
                let mut row = match scanner.step().await? {
                    ScanStep::Row(row) => row,
                    ScanStep::PassedOver => continue,
                    ScanStep::End => break,
                };
                if row.cells.iter().any(|c| c.column == new) {
                    return Err(EngineError::ColumnExists { name: new.into() });
                }
                if !row.cells.iter().any(|c| c.column == old) {
                    continue;
                }
                for cell in row.cells.iter_mut().filter(|c| c.column == old) {
                    cell.column = new.to_string();
                }
                // Cells are stored by column, newest version first within one.
                row.cells.sort_by(|a, b| a.column.cmp(&b.column));
                if let Some(value) = row.encode() {
                    rows.put(row.key.clone(), value);
                }
            }
        }
        self.catalog
            .rename_column(instance, table, old, new, checks, rows)
            .await
    }
}
