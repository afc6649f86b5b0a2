//! Which row holds a unique index's values, as a transaction sees the table: asked by
//! `INSERT ... ON CONFLICT` of its arbiter index before it writes (as PostgreSQL's
//! speculative insertion does), and by a transaction block of each row a statement
//! gave new unique values, so a duplicate is 23505 at that statement, as in
//! PostgreSQL, and not only at COMMIT. The answer is a read: a row another session
//! claims the values with in between still loses to the index's compare-and-swap at
//! commit (`index::stage_entries`).
//!
//! A block's own rows are not in the index until it commits; the values they claim
//! are found through `StagedClaims`, so a block writing n rows asks n lookups, not n
//! scans of what it wrote.

use super::catalog::TableMeta;
use super::codec::row_prefix;
use super::error::{EngineError, EngineResult};
use super::index::{lookup_prefix, pk_as_value, shown_value, shown_values, IndexMeta};
use super::staging::StagedView;
use super::stored::StoredRow;
use super::types::{PkValue, PrimaryKey, Value};
use super::write::ColumnOp;
use super::Engine;
use std::collections::HashMap;

/// Claim key (`unique_claim`) → the keys of the rows of a transaction's view that
/// showed those values when last written. Entries are never removed: a row may have
/// changed since (or been rolled back to a savepoint), so each is checked again.
pub(crate) type StagedClaims = HashMap<Vec<u8>, Vec<Vec<u8>>>;

/// One unique index's values a row shows, none NULL.
pub(crate) struct RowClaim {
    /// The index's position among the table's indexes.
    pub index: usize,
    pub values: Vec<Value>,
    /// `unique_claim` of the values.
    pub claim: Vec<u8>,
}

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

/// The unique values `row` shows at `now`, one claim per unique index.
pub(crate) fn row_claims(table: &TableMeta, row: &StoredRow, now_ms: i64) -> Vec<RowClaim> {
    table
        .indexes
        .iter()
        .enumerate()
        .filter(|(_, index)| index.unique)
        .filter_map(|(position, index)| {
            let values: Vec<Value> = shown_values(table, index, row, now_ms)?
                .into_iter()
                .collect::<Option<_>>()?;
            Some(RowClaim {
                index: position,
                claim: unique_claim(index, &values),
                values,
            })
        })
        .collect()
}

/// The duplicate-key error of `values` in `index`.
pub(crate) fn duplicate(index: &IndexMeta, values: &[Value]) -> EngineError {
    EngineError::UniqueViolation {
        index: index.name.clone(),
        columns: index.columns.join(", "),
        values: values
            .iter()
            .map(shown_value)
            .collect::<Vec<_>>()
            .join(", "),
    }
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
        self.holder_other_than(staged, table, index, values, None)
            .await
    }

    /// `unique_holder`, passing over the row keyed `except`.
    pub(crate) async fn holder_other_than(
        &self,
        staged: Option<&StagedView>,
        table: &TableMeta,
        index: &IndexMeta,
        values: &[Value],
        except: Option<&PrimaryKey>,
    ) -> EngineResult<Option<PrimaryKey>> {
        let now = self.now_ms();
        let wanted: Vec<Option<Value>> = values.iter().cloned().map(Some).collect();
        let holds = |row: &StoredRow| {
            Some(&row.pk) != except
                && shown_values(table, index, row, now).as_ref() == Some(&wanted)
        };
        if let Some(staged) = staged {
            let claimed = staged.claimed(&unique_claim(index, values));
            if let Some(row) = claimed.filter_map(|key| staged.row(key)).find(|r| holds(r)) {
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
            // A row the block wrote is as the block left it, found above if it holds.
            if staged.is_some_and(|staged| staged.row(&key).is_some()) {
                continue;
            }
            let (row, _) = self.load_row(table, &pk).await?;
            if holds(&row) {
                return Ok(Some(pk));
            }
        }
        Ok(None)
    }
}
