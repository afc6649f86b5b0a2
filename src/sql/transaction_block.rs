//! Transaction blocks: the writes a block stages until COMMIT, whether a failed
//! statement aborted it, and its savepoints. `transaction_statements` runs BEGIN,
//! COMMIT, ROLLBACK and the savepoint statements on it; reads in the block see its
//! staged writes.

use super::expr::fold;
use super::sql_error::{SqlError, SqlResult};
use crate::engine::{Engine, EngineError, StagedMark, StagedWrites};
use crate::sqlstate::SqlState;
use sqlparser::ast::Ident;

/// An open transaction block.
pub(super) struct Transaction {
    /// When BEGIN ran: `now()` in the block.
    pub(super) started: std::time::SystemTime,
    pub(super) staged: StagedWrites,
    /// A statement failed: everything up to the block's end is refused (25P02) and
    /// COMMIT rolls back.
    pub(super) failed: bool,
    /// Open savepoints, oldest first: a name and where the staged writes stood when it
    /// was set, so ROLLBACK TO drops the writes staged after it.
    savepoints: Vec<(String, StagedMark)>,
}

impl Transaction {
    /// `BEGIN`.
    pub(super) fn begin() -> Self {
        Transaction {
            started: std::time::SystemTime::now(),
            staged: StagedWrites::default(),
            failed: false,
            savepoints: Vec::new(),
        }
    }

    /// `SAVEPOINT name`.
    pub(super) fn savepoint(&mut self, name: &Ident) {
        let mark = self.staged.mark();
        self.savepoints.push((fold(name), mark));
    }

    /// `RELEASE SAVEPOINT name`: keeps the writes since it, forgets it and later ones.
    pub(super) fn release(&mut self, name: &Ident) -> SqlResult<()> {
        let at = self.savepoint_index(name)?;
        self.staged.release(self.savepoints.len() - at);
        self.savepoints.truncate(at);
        Ok(())
    }

    /// `ROLLBACK TO SAVEPOINT name`: drops the writes since it, keeps it, and ends an
    /// abort the block was in.
    pub(super) fn rollback_to(&mut self, name: &Ident) -> SqlResult<()> {
        let at = self.savepoint_index(name)?;
        self.staged.rollback_to(self.savepoints[at].1);
        self.staged.release(self.savepoints.len() - (at + 1));
        self.savepoints.truncate(at + 1);
        self.failed = false;
        Ok(())
    }

    /// The position of the newest savepoint called `name` (3B001 when there is none).
    fn savepoint_index(&self, name: &Ident) -> SqlResult<usize> {
        let name = fold(name);
        self.savepoints
            .iter()
            .rposition(|(n, _)| *n == name)
            .ok_or_else(|| {
                SqlError::new(
                    SqlState::InvalidSavepointSpecification,
                    format!("savepoint \"{name}\" does not exist"),
                )
            })
    }
}

/// The open block, for a statement (`what`) that only runs inside one (25P01 outside).
pub(super) fn open<'t>(
    block: &'t mut Option<Transaction>,
    what: &str,
) -> SqlResult<&'t mut Transaction> {
    block.as_mut().ok_or_else(|| {
        SqlError::new(
            SqlState::NoActiveSqlTransaction,
            format!("{what} can only be used in transaction blocks"),
        )
    })
}

/// COMMIT of `block` (ended by the caller): applies its staged writes atomically, or
/// rolls back a block a statement aborted. Returns the command tag; a write-write
/// conflict is 40001 and nothing of the block is applied.
pub(super) async fn commit(engine: &Engine, block: Option<Transaction>) -> SqlResult<&'static str> {
    match block {
        None => Ok("COMMIT"),
        Some(t) if t.failed => Ok("ROLLBACK"),
        Some(t) if t.staged.is_empty() => Ok("COMMIT"),
        Some(t) => match engine.commit_staged(t.staged).await {
            Ok(_) => Ok("COMMIT"),
            Err(EngineError::WriteConflict) => Err(SqlError::new(
                SqlState::SerializationFailure,
                "could not serialize access due to concurrent update; the transaction was rolled back",
            )),
            Err(e) => Err(e.into()),
        },
    }
}
