//! Transaction blocks: the writes a block stages until COMMIT, the tables it created,
//! whether a failed statement aborted it, and its savepoints. `transaction_statements`
//! runs BEGIN, COMMIT, ROLLBACK and the savepoint statements on it; reads in the block
//! see its staged writes.
//!
//! DDL in a block: a table the block creates exists at once (for other sessions too)
//! and is dropped again if the block rolls back, at ROLLBACK, a failed COMMIT, a
//! ROLLBACK TO a savepoint before it, or the connection's end. Schema changes pgwide
//! could not undo (dropping or altering a table the block did not create) are refused
//! in a block (`schema_statements`).

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
    /// Tables the block created, oldest first: dropped again if it rolls back.
    pub(super) created_tables: Vec<String>,
    /// Open savepoints, oldest first: a name, where the staged writes stood when it was
    /// set and how many tables the block had created, so ROLLBACK TO drops the writes
    /// staged and the tables created after it.
    savepoints: Vec<(String, StagedMark, usize)>,
}

impl Transaction {
    /// `BEGIN`.
    pub(super) fn begin() -> Self {
        Transaction {
            started: std::time::SystemTime::now(),
            staged: StagedWrites::default(),
            failed: false,
            created_tables: Vec::new(),
            savepoints: Vec::new(),
        }
    }

    /// `SAVEPOINT name`.
    pub(super) fn savepoint(&mut self, name: &Ident) {
        let mark = self.staged.mark();
        self.savepoints
            .push((fold(name), mark, self.created_tables.len()));
    }

    /// `RELEASE SAVEPOINT name`: keeps the writes since it, forgets it and later ones.
    pub(super) fn release(&mut self, name: &Ident) -> SqlResult<()> {
        let at = self.savepoint_index(name)?;
        self.staged.release(self.savepoints.len() - at);
        self.savepoints.truncate(at);
        Ok(())
    }

    /// `ROLLBACK TO SAVEPOINT name`: drops the writes since it, keeps it, and ends an
    /// abort the block was in. Returns the tables created since, for the caller to drop.
    pub(super) fn rollback_to(&mut self, name: &Ident) -> SqlResult<Vec<String>> {
        let at = self.savepoint_index(name)?;
        let (_, mark, created) = self.savepoints[at];
        self.staged.rollback_to(mark);
        self.staged.release(self.savepoints.len() - (at + 1));
        self.savepoints.truncate(at + 1);
        self.failed = false;
        Ok(self.created_tables.split_off(created))
    }

    /// The position of the newest savepoint called `name` (3B001 when there is none).
    fn savepoint_index(&self, name: &Ident) -> SqlResult<usize> {
        let name = fold(name);
        self.savepoints
            .iter()
            .rposition(|(n, _, _)| *n == name)
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

/// COMMIT of `block` (ended by the caller) in `instance`: applies its staged writes
/// atomically, or rolls back a block a statement aborted. Returns the command tag; a
/// write-write conflict is 40001 and nothing of the block is applied. A block that
/// does not commit drops the tables it created.
pub(super) async fn commit(
    engine: &Engine,
    instance: &str,
    block: Option<Transaction>,
) -> SqlResult<&'static str> {
    let Some(block) = block else {
        return Ok("COMMIT");
    };
    if block.failed {
        drop_created(engine, instance, &block.created_tables).await;
        return Ok("ROLLBACK");
    }
    if block.staged.is_empty() {
        return Ok("COMMIT");
    }
    match engine.commit_staged(block.staged).await {
        Ok(_) => Ok("COMMIT"),
        Err(e) => {
            drop_created(engine, instance, &block.created_tables).await;
            Err(match e {
                EngineError::WriteConflict => SqlError::new(
                    SqlState::SerializationFailure,
                    "could not serialize access due to concurrent update; the transaction was rolled back",
                ),
                other => other.into(),
            })
        }
    }
}

/// Drops the tables a block that rolled back had created, newest first. A table that
/// cannot be dropped is logged: the rollback itself has happened.
pub(super) async fn drop_created(engine: &Engine, instance: &str, tables: &[String]) {
    for table in tables.iter().rev() {
        match engine.drop_table(instance, table).await {
            Ok(()) | Err(EngineError::TableNotFound { .. }) => {}
            Err(e) => {
                tracing::warn!(%table, error = %e, "could not drop a table created by a rolled back transaction")
            }
        }
    }
}
