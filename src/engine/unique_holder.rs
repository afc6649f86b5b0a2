//! Which row holds a unique index's values: the question `INSERT ... ON CONFLICT`
//! asks of its arbiter index before it writes, as PostgreSQL's speculative insertion
//! does. The answer is a read, so a row another session claims the values with
//! between the read and the write still loses to the index's compare-and-swap
//! (`index::stage_entries`); the statement is then decided again.

use super::catalog::TableMeta;
use super::codec::row_prefix;
use super::error::{EngineError, EngineResult};
use super::index::{lookup_prefix, pk_as_value, shown_values, IndexMeta};
use super::staging::StagedView;
use super::types::{PkValue, PrimaryKey, Value};
use super::write::ColumnOp;
use super::Engine;

/// The values a new row with key `pk`, written by `ops`, gives `index`'s columns;
/// `None` when one of them is NULL, as such a row conflicts with no other.
pub fn proposed_index_values(
    table: &TableMeta,
    index: &IndexMeta,
    pk: &[PkValue],
    ops: &[ColumnOp],
) -> Option<Vec<Value>> {
    index
        .columns
        .iter()
        .map(|column| match table.pk_index(column) {
            Some(k) => pk.get(k).map(pk_as_value),
            // The newest version written: an explicit one, or the server's time
            // (`None`), which is newer than any a client can give.
            None => ops
                .iter()
                .filter_map(|op| match op {
                    ColumnOp::Put {
                        column: c,
                        value,
                        version,
                    } if c == column => Some((version.unwrap_or(i64::MAX), value)),
                    _ => None,
                })
                .max_by_key(|(version, _)| *version)
                .map(|(_, value)| value.clone()),
        })
        .collect()
}

/// The key two rows showing the same `values` (none NULL) in a unique `index`
/// compete for: equal exactly when the values are equal as the index compares them.
pub fn unique_claim(index: &IndexMeta, values: &[Value]) -> Vec<u8> {
    lookup_prefix(index, values)
}

impl Engine {
    /// The key of the row that shows `values` (none of them NULL) in the unique
    /// `index` now, as a transaction with `staged` writes sees the table; `None` if
    /// no row does. An index CREATE INDEX is still building (or one dropped since the
    /// statement was planned) cannot answer: `WriteConflict`, to be retried.
    pub async fn unique_holder(
        &self,
        staged: Option<&StagedView>,
        table: &TableMeta,
        index: &IndexMeta,
        values: &[Value],
    ) -> EngineResult<Option<PrimaryKey>> {
        let now = self.now_ms();
        let wanted: Vec<Option<Value>> = values.iter().cloned().map(Some).collect();
        if let Some(staged) = staged {
            // The block's own rows are not in the index until it commits.
            if let Some(row) = staged
                .table_rows(table)
                .find(|row| shown_values(table, index, row, now).as_ref() == Some(&wanted))
            {
                return Ok(Some(row.pk.clone()));
            }
        }
        let usable = self
            .catalog
            .current(table)
            .is_some_and(|current| current.indexes.iter().any(|i| i.id == index.id && i.ready));
        if !usable {
            return Err(EngineError::WriteConflict);
        }
        // Entries may outlive the values they name (see `index`): each row is checked.
        for pk in self.read_index(table, index, values).await? {
            let key = row_prefix(table.id, &pk);
            if staged.is_some_and(|staged| staged.row(&key).is_some()) {
                continue;
            }
            let (row, _) = self.load_row(table, &pk).await?;
            if shown_values(table, index, &row, now).as_ref() == Some(&wanted) {
                return Ok(Some(pk));
            }
        }
        Ok(None)
    }
}
