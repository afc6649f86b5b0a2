//! ON CONFLICT's arbiter: which uniqueness an INSERT's conflicts are judged by (the
//! primary key, one unique index, or with DO NOTHING and no target every one of
//! them), and, for each proposed row, the row it conflicts with.
//!
//! A conflict on a unique index is found by reading the index (`Engine::unique_holder`)
//! before writing. A row another session gives the same values in between still
//! loses to the index at commit (`UniqueViolation`), and the statement is decided
//! again, as PostgreSQL's speculative insertion retries.

use super::WriteTarget;
use crate::engine::{
    proposed_index_values, unique_claim, ColumnOp, EngineError, IndexMeta, PkValue, PrimaryKey,
    Row, TableMeta,
};
use crate::sql::sql_types::SqlResult;
use std::collections::HashSet;

/// Which conflicts ON CONFLICT handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arbiter {
    /// The primary key.
    Key,
    /// The unique index at this position of the table's indexes.
    Index(usize),
    /// No conflict target (DO NOTHING only): the key and every unique index.
    Any,
}

/// What a proposed row conflicts with.
pub(super) enum Conflicting {
    /// A row stored (or written earlier in the transaction), with its key.
    Stored(PrimaryKey, Row),
    /// An earlier row of the same statement that is to be inserted.
    Proposed,
}

/// A proposed row: its key, the PutRow operations, and the values given.
pub(super) type ProposedRow = (Vec<PkValue>, Vec<ColumnOp>, Vec<crate::sql::Datum>);

impl Arbiter {
    /// The unique indexes whose conflicts this arbiter judges.
    fn indexes<'a>(&self, table: &'a TableMeta) -> Vec<&'a IndexMeta> {
        match self {
            Arbiter::Key => Vec::new(),
            Arbiter::Index(i) => table.indexes.get(*i).into_iter().collect(),
            Arbiter::Any => table.indexes.iter().filter(|i| i.unique).collect(),
        }
    }

    fn judges_key(&self) -> bool {
        matches!(self, Arbiter::Key | Arbiter::Any)
    }

    /// Whether a unique violation raised by writing is one this arbiter judges (so
    /// another session won a race the statement lost, and it is decided again).
    pub(super) fn judges_violation(&self, table: &TableMeta, error: &EngineError) -> bool {
        match error {
            EngineError::UniqueViolation { index, .. } => {
                self.indexes(table).iter().any(|i| &i.name == index)
            }
            _ => false,
        }
    }

    /// For each proposed row, in order, what it conflicts with as `target` sees the
    /// table now: `None` for a row to be inserted. A row that conflicts is not
    /// inserted, so later rows do not conflict with its values.
    pub(super) async fn conflicts(
        &self,
        target: &WriteTarget<'_>,
        table: &TableMeta,
        rows: &[ProposedRow],
    ) -> SqlResult<Vec<Option<Conflicting>>> {
        let stored_by_key = match self.judges_key() {
            true => {
                let pks: Vec<PrimaryKey> = rows.iter().map(|(pk, _, _)| pk.clone()).collect();
                target.stored(table, &pks).await?
            }
            false => Vec::new(),
        };
        let indexes = self.indexes(table);
        let staged = target
            .staged
            .as_deref()
            .map(crate::engine::StagedWrites::view);
        let mut keys_written: HashSet<&[PkValue]> = HashSet::new();
        let mut values_written: HashSet<Vec<u8>> = HashSet::new();
        let mut conflicts = Vec::with_capacity(rows.len());
        'rows: for (n, (pk, ops, _)) in rows.iter().enumerate() {
            if self.judges_key() {
                if keys_written.contains(pk.as_slice()) {
                    conflicts.push(Some(Conflicting::Proposed));
                    continue;
                }
                if let Some(Some(row)) = stored_by_key.get(n) {
                    conflicts.push(Some(Conflicting::Stored(pk.clone(), row.clone())));
                    continue;
                }
            }
            let mut claimed = Vec::new();
            for index in &indexes {
                let Some(values) = proposed_index_values(table, index, pk, ops) else {
                    continue;
                };
                let claim = unique_claim(index, &values);
                if values_written.contains(&claim) {
                    conflicts.push(Some(Conflicting::Proposed));
                    continue 'rows;
                }
                let holder = target
                    .engine
                    .unique_holder(staged.as_ref(), table, index, &values)
                    .await?;
                if let Some(holder) = holder {
                    let row = target.stored(table, std::slice::from_ref(&holder)).await?;
                    if let Some(Some(row)) = row.into_iter().next() {
                        conflicts.push(Some(Conflicting::Stored(holder, row)));
                        continue 'rows;
                    }
                }
                claimed.push(claim);
            }
            keys_written.insert(pk);
            for claim in claimed {
                values_written.insert(claim);
            }
            conflicts.push(None);
        }
        Ok(conflicts)
    }
}
