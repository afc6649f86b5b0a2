//! How big a table or index is on the backend: its stored rows (entries) and the bytes
//! of their keys and values, counted by walking the keys, up to a limit for the
//! statistics views and `pgwide.tables`, all of them for `pg_relation_size` and its kin
//! (there is no maintained counter to go stale).

use super::catalog::TableMeta;
use super::codec::table_prefix;
use super::error::EngineResult;
use super::index::{index_prefix, IndexMeta};
use super::Engine;
use crate::storage::{Direction, KeyRange};

/// A table's stored rows and the bytes of their keys and values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableSize {
    pub rows: u64,
    pub bytes: u64,
    /// Whether every row was counted (the table has at most the limit's rows); otherwise
    /// both numbers are lower bounds.
    pub exact: bool,
}

impl Engine {
    /// Counts `table`'s stored rows and bytes, visiting at most `limit` rows. Rows whose
    /// cells have all expired (TTL) count until garbage collection removes them.
    pub async fn table_size(&self, table: &TableMeta, limit: usize) -> EngineResult<TableSize> {
        self.prefix_size(&table_prefix(table.id), limit).await
    }

    /// Counts a secondary index's stored entries and their bytes, all of them.
    pub async fn index_size(&self, index: &IndexMeta) -> EngineResult<TableSize> {
        self.prefix_size(&index_prefix(index.id), usize::MAX).await
    }

    /// The keys under `prefix` and the bytes of them and their values, visiting at most
    /// `limit` keys.
    pub(super) async fn prefix_size(&self, prefix: &[u8], limit: usize) -> EngineResult<TableSize> {
        let mut size = TableSize::default();
        let range = KeyRange::prefix(prefix);
        let mut visit = |key: &[u8], value: &[u8]| {
            size.rows += 1;
            size.bytes += (key.len() + value.len()) as u64;
            true
        };
        self.backend
            .visit(
                &range,
                Direction::Forward,
                limit.saturating_add(1),
                &mut visit,
            )
            .await?;
        size.exact = size.rows <= limit as u64;
        size.rows = size.rows.min(limit as u64);
        Ok(size)
    }
}
