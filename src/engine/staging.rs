//! Writes staged by an open SQL transaction: checked and previewed against the stored
//! rows without being stored, then committed as one atomic batch. A transaction sees its
//! own writes through [`Engine::preview_rows`] and [`Engine::preview_range`].

use super::capacity::Capacity;
use super::catalog::TableMeta;
use super::codec::encode_pk;
use super::error::{EngineError, EngineResult};
use super::read::RangeRequest;
use super::stored::ReadOptions;
use super::types::{PkBound, PrimaryKey, Row};
use super::write::{BatchMode, RowWrite, WorkingSet, WriteOutcome, WriteResult};
use super::Engine;
use crate::storage::Direction;
use std::sync::Arc;

/// The writes of one transaction, in order, each of which applied when staged.
pub type StagedWrites = Vec<(Arc<TableMeta>, RowWrite)>;

impl Engine {
    /// Replays `staged` on working copies of their rows; a staged write whose condition
    /// no longer holds means another session changed the row (SQLSTATE 40001).
    async fn replay(&self, staged: &StagedWrites) -> EngineResult<WorkingSet> {
        let mut set = WorkingSet::new(self.now_ms());
        for (table, write) in staged {
            let (outcome, _) = set.apply(self, table, write).await?;
            if !matches!(outcome, WriteOutcome::Applied(_)) {
                return Err(EngineError::WriteConflict);
            }
        }
        Ok(set)
    }

    /// What `writes` would do after `staged`, without storing anything. With `Atomic`, a
    /// failed condition marks every other write `NotApplied`.
    pub async fn stage_writes(
        &self,
        staged: &StagedWrites,
        writes: &[(Arc<TableMeta>, RowWrite)],
        mode: BatchMode,
    ) -> EngineResult<WriteResult> {
        for (table, write) in writes {
            self.check_write(table, write, self.now_ms())?;
        }
        let mut set = self.replay(staged).await?;
        let mut outcomes = Vec::with_capacity(writes.len());
        let mut capacity = Capacity::default();
        for (index, (table, write)) in writes.iter().enumerate() {
            let (outcome, cost) = set.apply(self, table, write).await?;
            capacity += cost;
            if mode == BatchMode::Atomic && matches!(outcome, WriteOutcome::ConditionFailed(_)) {
                let mut outcomes = vec![WriteOutcome::NotApplied; writes.len()];
                outcomes[index] = outcome;
                return Ok(WriteResult { outcomes, capacity });
            }
            outcomes.push(outcome);
        }
        Ok(WriteResult { outcomes, capacity })
    }

    /// Commits a transaction's staged writes atomically.
    pub async fn commit_staged(&self, staged: StagedWrites) -> EngineResult<WriteResult> {
        let result = self.write_rows(staged, BatchMode::Atomic).await?;
        if result.first_failure().is_some() {
            return Err(EngineError::WriteConflict);
        }
        Ok(result)
    }

    /// Rows by primary key as a transaction with `staged` writes sees them.
    pub async fn preview_rows(
        &self,
        staged: &StagedWrites,
        table: &TableMeta,
        pks: &[PrimaryKey],
        read: &ReadOptions,
    ) -> EngineResult<Vec<Option<Row>>> {
        let mut set = self.replay(staged).await?;
        let now = self.now_ms();
        let mut rows = Vec::with_capacity(pks.len());
        for pk in pks {
            self.check_pk(table, pk)?;
            let row = set.row(self, table, pk).await?;
            rows.push(row.read(&table.options, now, read));
        }
        Ok(rows)
    }

    /// A whole range (every page, then `limit`) as a transaction with `staged` writes
    /// sees it: the stored rows with the staged rows of that range laid over them.
    pub async fn preview_range(
        &self,
        staged: &StagedWrites,
        table: &TableMeta,
        request: &RangeRequest,
    ) -> EngineResult<Vec<Row>> {
        let mut unlimited = request.clone();
        unlimited.limit = None;
        let mut stored = Vec::new();
        loop {
            let page = self.get_range(table, &unlimited).await?;
            stored.extend(page.rows);
            match page.next_start {
                Some(next) => unlimited.start = next.into_iter().map(PkBound::Value).collect(),
                None => break,
            }
        }
        let mut touched: Vec<PrimaryKey> = staged
            .iter()
            .filter(|(t, _)| t.id == table.id)
            .map(|(_, w)| w.pk.clone())
            .filter(|pk| in_range(pk, request))
            .collect();
        touched.sort();
        touched.dedup();
        let previews = self
            .preview_rows(staged, table, &touched, &request.read)
            .await?;
        stored.retain(|row| !touched.contains(&row.pk));
        stored.extend(previews.into_iter().flatten());
        let key = |row: &Row| encode_pk(&row.pk);
        match request.direction {
            Direction::Forward => stored.sort_by_key(key),
            Direction::Backward => stored.sort_by_key(|row| std::cmp::Reverse(key(row))),
        }
        if let Some(limit) = request.limit {
            stored.truncate(limit);
        }
        Ok(stored)
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
