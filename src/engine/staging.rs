//! Writes staged by an open SQL transaction: checked and previewed against the stored
//! rows without being stored, then committed as one atomic batch.
//!
//! A transaction keeps the rows it has written as it sees them (`StagedWrites::view`):
//! each row is read from the backend when first written and every later write of the
//! block is applied to that copy. What the block wrote before a statement adds only a
//! map lookup to that statement's cost; replaying every earlier write at each statement
//! made a block of n INSERTs take time quadratic in n. An undo log of the view's
//! changes undoes a failed statement and a ROLLBACK TO SAVEPOINT.
//!
//! Write-write conflicts are the first committer's win: the block notes each row's
//! revision when it first reads it, and COMMIT fails with `WriteConflict`, applying
//! nothing, if another session changed a row the block wrote in between (see
//! `Engine::commit_staged`). Rows the block only incremented are exempt: COMMIT applies
//! an increment to the value stored then, so a concurrent change is not overwritten
//! (pgbench's TPC-B-like script increments balances in blocks), and neither are rows
//! whose writes failed their condition (an `ON CONFLICT DO NOTHING` that did nothing).

use super::capacity::Capacity;
use super::catalog::TableMeta;
use super::codec::{encode_pk, row_prefix, table_prefix};
use super::error::{EngineError, EngineResult};
use super::read::RangeRequest;
use super::stored::{ReadOptions, StoredRow};
use super::types::{PkBound, PrimaryKey, Row};
use super::unique_holder::{duplicate, row_claims, RowClaim, StagedClaims};
use super::write::Revisions;
use super::write::{
    apply_write, BatchMode, ColumnOp, RowChange, RowWrite, WriteOutcome, WriteResult,
};
use super::Engine;
use crate::storage::Direction;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The rows a transaction wrote, by row key, as the transaction sees them.
type ViewRows = BTreeMap<Vec<u8>, StoredRow>;

/// The writes of one open transaction, in order, and the rows they touched.
#[derive(Clone, Default)]
pub struct StagedWrites {
    /// Every write that applied when staged. COMMIT applies them again, over the rows
    /// as stored at that moment, so it sees any change another session made since.
    writes: Vec<(Arc<TableMeta>, RowWrite)>,
    /// The rows `writes` touched, read when first touched and with `writes` applied.
    /// Shared with the reads of a statement (`StagedWrites::view`), so copied only when
    /// a write comes while such a read is still running.
    rows: Arc<ViewRows>,
    /// Each change to `rows`: the row key and what it held before (`None`: the row was
    /// not in the view yet), oldest first.
    undo: Vec<(Vec<u8>, Option<StoredRow>)>,
    /// Marks (savepoints) that can still roll back: while there are none, the undo log
    /// is needed only during a statement.
    open_marks: usize,
    /// The stored revision of every row the block read to write it, when last read
    /// into the view.
    loaded: Arc<Revisions>,
    /// The rows COMMIT requires unchanged, with their revisions from `loaded`: those
    /// the block wrote other than by increments. Kept through a ROLLBACK TO SAVEPOINT:
    /// the block's later decisions may rest on what it saw.
    revisions: Arc<Revisions>,
    /// The unique values the rows of `rows` claimed as written (`unique_holder`).
    claims: Arc<StagedClaims>,
    /// Rows a `SELECT ... FOR UPDATE` (or `FOR SHARE`) read: COMMIT requires them
    /// unchanged too (their revisions are in `revisions`), though the block may not
    /// write them. Kept through a ROLLBACK TO SAVEPOINT, as `revisions` is.
    locked: Vec<(Arc<TableMeta>, PrimaryKey)>,
}

/// A unique value a statement gave a row, to be checked once the statement's writes
/// are all staged.
struct NewClaim {
    table: Arc<TableMeta>,
    row_key: Vec<u8>,
    claim: RowClaim,
}

/// A point a transaction's staged writes can be rolled back to (a savepoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StagedMark {
    writes: usize,
    undo: usize,
}

/// What reads in a transaction see of its writes: a snapshot of the rows it wrote.
#[derive(Clone)]
pub struct StagedView {
    rows: Arc<ViewRows>,
    claims: Arc<StagedClaims>,
}

impl StagedWrites {
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// The rows written so far, for reads; later writes do not change it.
    pub fn view(&self) -> StagedView {
        StagedView {
            rows: Arc::clone(&self.rows),
            claims: Arc::clone(&self.claims),
        }
    }

    /// A point to roll back to later; it stays open until `release`d.
    pub fn mark(&mut self) -> StagedMark {
        self.open_marks += 1;
        StagedMark {
            writes: self.writes.len(),
            undo: self.undo.len(),
        }
    }

    /// Closes `count` marks; once none is open the undo log is dropped.
    pub fn release(&mut self, count: usize) {
        self.open_marks = self.open_marks.saturating_sub(count);
        if self.open_marks == 0 {
            self.undo = Vec::new();
        }
    }

    /// Drops every write staged after `mark` and restores the rows they changed; the
    /// mark stays open.
    pub fn rollback_to(&mut self, mark: StagedMark) {
        self.writes.truncate(mark.writes);
        self.undo_to(mark.undo);
    }

    /// Puts back the view as it was when the undo log was `len` long.
    fn undo_to(&mut self, len: usize) {
        if self.undo.len() <= len {
            return;
        }
        let rows = Arc::make_mut(&mut self.rows);
        for (key, before) in self.undo.drain(len..).rev() {
            match before {
                Some(row) => rows.insert(key, row),
                None => rows.remove(&key),
            };
        }
    }
}

/// Whether `write` only increments columns: applied at COMMIT to the value stored
/// then, it overwrites nothing another session wrote.
fn increments_only(write: &RowWrite) -> bool {
    matches!(&write.change, RowChange::Update(ops)
        if ops.iter().all(|op| matches!(op, ColumnOp::Increment { .. } | ColumnOp::Add { .. })))
}

impl StagedView {
    /// Whether the transaction wrote any row of `table`.
    pub fn touches(&self, table: &TableMeta) -> bool {
        let prefix = table_prefix(table.id);
        self.rows
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(key, _)| key.starts_with(&prefix))
    }

    pub(crate) fn row(&self, key: &[u8]) -> Option<&StoredRow> {
        self.rows.get(key)
    }

    /// The keys of the rows that claimed `claim` when written (they may have changed
    /// since: check each).
    pub(crate) fn claimed<'a>(&'a self, claim: &[u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.claims
            .get(claim)
            .into_iter()
            .flatten()
            .map(Vec::as_slice)
    }
}

impl Engine {
    /// Stages `writes` after the writes already in `staged`: each is checked against the
    /// row as the transaction sees it and, if it holds, applied to that row and kept for
    /// COMMIT. Nothing is stored. An error, or with `Atomic` a failed condition, leaves
    /// `staged` as it was; the failed condition's outcome then comes with every other
    /// write `NotApplied`.
    pub async fn stage_writes(
        &self,
        staged: &mut StagedWrites,
        writes: Vec<(Arc<TableMeta>, RowWrite)>,
        mode: BatchMode,
    ) -> EngineResult<WriteResult> {
        let now = self.now_ms();
        for (table, write) in &writes {
            self.check_write(table, write, now)?;
        }
        let undo_start = staged.undo.len();
        let mut new_claims = Vec::new();
        let mut result = self
            .stage_each(staged, &writes, mode, now, &mut new_claims)
            .await;
        if result.is_ok() {
            // A duplicate is the statement's error, as PostgreSQL checks a unique
            // index as each statement writes (COMMIT checks again, against the
            // rows stored then).
            if let Err(e) = self.check_new_claims(staged, &new_claims, now).await {
                result = Err(e);
            }
        }
        let failed = match &result {
            Ok(result) => mode == BatchMode::Atomic && result.first_failure().is_some(),
            Err(_) => true,
        };
        if failed {
            staged.undo_to(undo_start);
            return result;
        }
        let result = result?;
        for (write, outcome) in writes.into_iter().zip(&result.outcomes) {
            if matches!(outcome, WriteOutcome::Applied(_)) {
                staged.writes.push(write);
            }
        }
        if staged.open_marks == 0 {
            staged.undo.clear();
        }
        Ok(result)
    }

    /// Applies each write to the view, logging what it changed; stops at the first
    /// failed condition of an atomic batch (the caller undoes the rest).
    async fn stage_each(
        &self,
        staged: &mut StagedWrites,
        writes: &[(Arc<TableMeta>, RowWrite)],
        mode: BatchMode,
        now: i64,
        new_claims: &mut Vec<NewClaim>,
    ) -> EngineResult<WriteResult> {
        let mut outcomes = Vec::with_capacity(writes.len());
        let mut capacity = Capacity::default();
        for (index, (table, write)) in writes.iter().enumerate() {
            let mut key = row_prefix(table.id, &write.pk);
            let before = staged.rows.get(&key).cloned();
            let unread = match before {
                Some(_) => None,
                None => Some(self.load_row(table, &write.pk).await?.0),
            };
            if let Some(row) = &unread {
                let revision = row.marker.map(|m| m.revision);
                Arc::make_mut(&mut staged.loaded).insert(key.clone(), revision);
            }
            let guarded_key = (!increments_only(write)).then(|| key.clone());
            // Logged before the write changes the row, so an error half way through it
            // is undone too.
            let undo_len = staged.undo.len();
            staged.undo.push((key.clone(), before));
            let unique = table.indexes.iter().any(|i| i.unique);
            let rows = Arc::make_mut(&mut staged.rows);
            let row = match unread {
                // The key is needed below only to note the row's unique values.
                Some(row) if unique => rows.entry(key.clone()).or_insert(row),
                Some(row) => rows.entry(std::mem::take(&mut key)).or_insert(row),
                None => rows
                    .get_mut(&key)
                    .ok_or_else(|| EngineError::Corrupt("staged row vanished".into()))?,
            };
            let claims_before = match unique {
                true => row_claims(table, row, now),
                false => Vec::new(),
            };
            let applied = apply_write(row, table, write, now)?;
            capacity += applied.cost;
            if unique && matches!(applied.outcome, WriteOutcome::Applied(_)) {
                let claims = Arc::make_mut(&mut staged.claims);
                for claim in row_claims(table, row, now) {
                    let holders = claims.entry(claim.claim.clone()).or_default();
                    if holders.last() != Some(&key) {
                        holders.push(key.clone());
                    }
                    if !claims_before.iter().any(|c| c.claim == claim.claim) {
                        new_claims.push(NewClaim {
                            table: Arc::clone(table),
                            row_key: key.clone(),
                            claim,
                        });
                    }
                }
            }
            if let (Some(key), WriteOutcome::Applied(_)) = (guarded_key, &applied.outcome) {
                if let Some(revision) = staged.loaded.get(&key).copied() {
                    Arc::make_mut(&mut staged.revisions)
                        .entry(key)
                        .or_insert(revision);
                }
            }
            if !matches!(applied.outcome, WriteOutcome::Applied(_)) {
                // The row is unchanged; a row read only for this write leaves the view,
                // so later reads see it as stored then.
                staged.undo_to(undo_len);
                if mode == BatchMode::Atomic {
                    let mut outcomes = vec![WriteOutcome::NotApplied; writes.len()];
                    outcomes[index] = applied.outcome;
                    return Ok(WriteResult { outcomes, capacity });
                }
            }
            outcomes.push(applied.outcome);
        }
        Ok(WriteResult { outcomes, capacity })
    }

    /// `UniqueViolation` if a row a statement gave new unique values shares them with
    /// another row, stored or staged, once all the statement's writes are staged (so
    /// `UPDATE t SET u = 3 - u` may swap two values). An index still being built is
    /// left to COMMIT's check.
    async fn check_new_claims(
        &self,
        staged: &StagedWrites,
        new_claims: &[NewClaim],
        now: i64,
    ) -> EngineResult<()> {
        if new_claims.is_empty() {
            return Ok(());
        }
        let view = staged.view();
        for new in new_claims {
            let Some(row) = view.row(&new.row_key) else {
                continue;
            };
            // A later write of the statement may have changed the values again.
            let still = row_claims(&new.table, row, now)
                .iter()
                .any(|c| c.claim == new.claim.claim);
            let index = &new.table.indexes[new.claim.index];
            if !still || !index.ready {
                continue;
            }
            let holder = self
                .holder_other_than(
                    Some(&view),
                    &new.table,
                    index,
                    &new.claim.values,
                    Some(&row.pk),
                )
                .await;
            match holder {
                Ok(None) | Err(EngineError::WriteConflict) => {}
                Ok(Some(_)) => return Err(duplicate(index, &new.claim.values)),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Locks rows for the transaction, as `SELECT ... FOR UPDATE` asks, the optimistic
    /// way the block's writes are guarded: nothing waits, but COMMIT fails with
    /// `WriteConflict` if another session changed (or deleted, or made) one of them
    /// after this read, so no other writer's change to them lands between the lock and
    /// the commit. The revision kept is the one the block first saw the row at.
    pub async fn lock_rows(
        &self,
        staged: &mut StagedWrites,
        table: &Arc<TableMeta>,
        pks: &[PrimaryKey],
    ) -> EngineResult<()> {
        for pk in pks {
            self.check_pk(table, pk)?;
            let key = row_prefix(table.id, pk);
            let revision = match staged.loaded.get(&key) {
                Some(revision) => *revision,
                None => {
                    let (row, _) = self.load_row(table, pk).await?;
                    let revision = row.marker.map(|m| m.revision);
                    Arc::make_mut(&mut staged.loaded).insert(key.clone(), revision);
                    revision
                }
            };
            if let std::collections::hash_map::Entry::Vacant(entry) =
                Arc::make_mut(&mut staged.revisions).entry(key)
            {
                entry.insert(revision);
                staged.locked.push((Arc::clone(table), pk.clone()));
            }
        }
        Ok(())
    }

    /// Commits a transaction's staged writes atomically, if no row the transaction
    /// touched was changed by another since (`WriteConflict` otherwise, and nothing is
    /// applied): the first committer wins.
    pub async fn commit_staged(&self, staged: StagedWrites) -> EngineResult<WriteResult> {
        let result = self
            .write_rows_expecting(staged.writes, staged.revisions, &staged.locked)
            .await?;
        if result.first_failure().is_some() {
            return Err(EngineError::WriteConflict);
        }
        Ok(result)
    }

    /// Rows by primary key as a transaction with `staged` writes sees them.
    pub async fn preview_rows(
        &self,
        staged: &StagedView,
        table: &TableMeta,
        pks: &[PrimaryKey],
        read: &ReadOptions,
    ) -> EngineResult<Vec<Option<Row>>> {
        let now = self.now_ms();
        let mut rows = Vec::with_capacity(pks.len());
        for pk in pks {
            self.check_pk(table, pk)?;
            let row = match staged.row(&row_prefix(table.id, pk)) {
                Some(row) => row.read(&table.options, now, read),
                None => self
                    .load_row(table, pk)
                    .await?
                    .0
                    .into_read(&table.options, now, read),
            };
            rows.push(row);
        }
        Ok(rows)
    }

    /// The rows of `request`'s range that a transaction wrote, in scan order, each with
    /// its encoded key and as `request.read` sees it: `None` where the transaction
    /// deleted the row or the read leaves it out, so its stored version is not shown
    /// either. Laid over a scan of the stored rows (`sql::paged_rows`), they give the
    /// range as the transaction sees it, page by page.
    pub fn staged_range(
        &self,
        staged: &StagedView,
        table: &TableMeta,
        request: &RangeRequest,
    ) -> Vec<(Vec<u8>, Option<Row>)> {
        let prefix = table_prefix(table.id);
        let now = self.now_ms();
        // Row keys are the table prefix then the encoded PK, so map order is PK order.
        let mut rows: Vec<(Vec<u8>, Option<Row>)> = staged
            .rows
            .range(prefix.clone()..)
            .take_while(|(key, _)| key.starts_with(&prefix))
            .map(|(_, row)| row)
            .filter(|row| in_range(&row.pk, request))
            .map(|row| {
                let seen = row.read(&table.options, now, &request.read);
                (encode_pk(&row.pk), seen)
            })
            .collect();
        if request.direction == Direction::Backward {
            rows.reverse();
        }
        rows
    }
}

/// Whether `pk` lies in the request's range, compared as encoded keys.
fn in_range(pk: &PrimaryKey, request: &RangeRequest) -> bool {
    let key = encode_pk(pk);
    let bound = |b: &[PkBound]| {
        let mut out = Vec::new();
        b.iter()
            .for_each(|b| super::codec::encode_pk_bound(&mut out, b));
        out
    };
    let (start, end) = (bound(&request.start), bound(&request.end));
    match request.direction {
        Direction::Forward => key >= start && key < end,
        Direction::Backward => key <= start && key > end,
    }
}
