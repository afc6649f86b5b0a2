//! Background garbage collection: removes cell versions no read can see any more (past
//! Max Versions or the TTL) and rows that have expired entirely, reclaiming space.
//! Visibility never depends on GC having run; it only makes removal real.

use super::catalog::TableMeta;
use super::codec::table_prefix;
use super::error::EngineResult;
use super::scan::RowScanner;
use super::Engine;
use crate::storage::{Check, Direction, KeyRange, WriteBatch};
use std::sync::Arc;
use std::time::Duration;

/// What one GC pass removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcReport {
    pub rows_examined: u64,
    pub versions_removed: u64,
    pub rows_removed: u64,
}

impl Engine {
    /// One pass over one table.
    pub async fn gc_table(&self, table: &TableMeta) -> EngineResult<GcReport> {
        let mut report = GcReport::default();
        let range = KeyRange::prefix(&table_prefix(table.id));
        let mut scanner = RowScanner::new(self.backend.as_ref(), table, range, Direction::Forward);
        // The scanner decodes whole rows (no `for_read`): GC writes them back.
        while let Some((mut row, _)) = scanner.next_row().await? {
            report.rows_examined += 1;
            let now = self.now_ms();
            let row_dead = row.marker.is_some() && !row.exists(&table.options, now);
            let before = row.cells.len();
            let mut batch = WriteBatch::default();
            // `expected` is the row as stored now: the write only applies if it still is.
            let expected = if row_dead {
                batch.delete(row.key.clone());
                row.encode()
            } else {
                let visible: Vec<_> = row.visible_cells(&table.options, now).cloned().collect();
                if visible.len() == before {
                    continue;
                }
                let expected = row.encode();
                row.cells = visible;
                match row.encode() {
                    Some(value) => batch.put(row.key.clone(), value),
                    None => continue,
                }
                expected
            };
            // A write in between wins and this row waits for the next pass.
            let check = Check {
                key: row.key.clone(),
                expected,
            };
            if self.backend.write_if(&[check], batch).await? {
                if row_dead {
                    report.rows_removed += 1;
                    report.versions_removed += before as u64;
                } else {
                    report.versions_removed += (before - row.cells.len()) as u64;
                }
            }
        }
        Ok(report)
    }

    /// One pass over every table of every instance.
    pub async fn gc_all(&self) -> EngineResult<GcReport> {
        let mut total = GcReport::default();
        for instance in self.instances() {
            for table in self.tables(&instance.name)? {
                let report = self.gc_table(&table).await?;
                total.rows_examined += report.rows_examined;
                total.versions_removed += report.versions_removed;
                total.rows_removed += report.rows_removed;
            }
        }
        Ok(total)
    }

    /// Runs GC every `interval` until the engine is dropped.
    pub fn spawn_gc(self: &Arc<Self>, interval: Duration) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(interval);
            ticker.tick().await;
            loop {
                ticker.tick().await;
                let Some(engine) = weak.upgrade() else { return };
                match engine.gc_all().await {
                    Ok(report) if report.versions_removed + report.rows_removed > 0 => {
                        tracing::info!(?report, "gc pass")
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!("gc pass failed: {e}"),
                }
            }
        })
    }
}
