//! BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE and ROLLBACK TO: the statements that
//! open, end and mark a transaction block (`transaction_block`); and LOCK TABLE, which
//! holds for the block's length.
//!
//! `LOCK TABLE ... IN ACCESS SHARE MODE`, pg_dump's, keeps a table's schema from
//! changing under a block that reads it. pgwide makes no one wait for it: a REPEATABLE
//! READ block whose snapshot a schema change overtakes fails its next statement with
//! 40001 instead (`engine::read_snapshot`), so there the lock is kept, in its way. In a
//! READ COMMITTED block, or in a stronger mode, which would make writers wait, pgwide
//! could not keep it and refuses it (0A000).

use super::expr::Params;
use super::session_state::SessionState;
use super::settings::{check, transaction_mode};
use super::sql_error::{SqlError, SqlResult};
use super::sql_types::{Datum, StatementResult};
use super::statement_handler::{Claim, StatementHandler};
use super::transaction_block::{commit, open, undo_schema, Transaction};
use crate::auth::Privilege;
use crate::engine::TableMeta;
use sqlparser::ast::{Ident, LockTableMode, Statement};
use std::sync::Arc;

/// The handler of transaction control statements.
pub(super) struct Transactions;

/// A transaction control statement.
pub(super) enum TransactionCommand {
    /// `BEGIN [ISOLATION LEVEL ...] [READ ONLY | READ WRITE]`: the isolation level and
    /// access mode given, if any (else the `default_transaction_*` settings').
    Begin {
        isolation: Option<&'static str>,
        read_only: Option<bool>,
    },
    Commit,
    Rollback,
    Savepoint(Ident),
    Release(Ident),
    RollbackTo(Ident),
    /// `LOCK TABLE ... IN ACCESS SHARE MODE`, of these tables.
    LockShared(Vec<Arc<TableMeta>>),
}

impl TransactionCommand {
    /// Whether the statement may run in a block a failed statement aborted: the ones
    /// that end the block or undo the failure.
    pub(super) fn runs_in_failed_block(&self) -> bool {
        matches!(
            self,
            TransactionCommand::Commit
                | TransactionCommand::Rollback
                | TransactionCommand::RollbackTo(_)
        )
    }
}

impl StatementHandler for Transactions {
    type Plan = TransactionCommand;

    fn plan(
        state: &SessionState,
        statement: Box<Statement>,
        _: &mut Params,
    ) -> Claim<TransactionCommand> {
        Claim::Planned(Ok(match *statement {
            Statement::StartTransaction { modes, .. } => {
                let (mut isolation, mut read_only) = (None, None);
                for mode in &modes {
                    let (name, value) = transaction_mode(mode);
                    if let Err(e) = check(name, value, true) {
                        return Claim::Planned(Err(e));
                    }
                    match name {
                        "transaction_read_only" => read_only = Some(value == "on"),
                        _ => isolation = Some(value),
                    }
                }
                TransactionCommand::Begin {
                    isolation,
                    read_only,
                }
            }
            Statement::Commit { .. } => TransactionCommand::Commit,
            Statement::Rollback {
                savepoint: None, ..
            } => TransactionCommand::Rollback,
            Statement::Rollback {
                savepoint: Some(name),
                ..
            } => TransactionCommand::RollbackTo(name),
            Statement::Savepoint { name } => TransactionCommand::Savepoint(name),
            Statement::Lock(lock) => match plan_lock(state, &lock) {
                Ok(tables) => TransactionCommand::LockShared(tables),
                Err(e) => return Claim::Planned(Err(e)),
            },
            Statement::ReleaseSavepoint { name } => TransactionCommand::Release(name),
            _ => return Claim::NotMine(statement),
        }))
    }

    fn authorize(state: &SessionState, plan: &TransactionCommand) -> SqlResult<()> {
        // ACCESS SHARE asks for SELECT, as in PostgreSQL.
        match plan {
            TransactionCommand::LockShared(tables) if !state.access.unrestricted() => tables
                .iter()
                .try_for_each(|table| Ok(state.access.check_table(table, Privilege::Select)?)),
            _ => Ok(()),
        }
    }

    async fn execute(
        state: &mut SessionState,
        plan: &TransactionCommand,
        _: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        let tag = match plan {
            TransactionCommand::Begin {
                isolation,
                read_only,
            } => {
                if state.transaction.is_none() {
                    state.transaction = Some(Transaction::begin(state.notifications.len()));
                    let read_only = read_only.unwrap_or_else(|| {
                        state.settings.value("default_transaction_read_only") == Some("on")
                    });
                    let mode = if read_only { "on" } else { "off" };
                    state.settings.set_local("transaction_read_only", mode)?;
                    // Each block starts at the default level, as in PostgreSQL.
                    let isolation = match isolation {
                        Some(isolation) => isolation.to_string(),
                        None => state
                            .settings
                            .value("default_transaction_isolation")
                            .unwrap_or("read committed")
                            .to_string(),
                    };
                    state
                        .settings
                        .set_local("transaction_isolation", &isolation)?;
                    if let Err(refused) = state.check_transaction_modes(false) {
                        // Nothing was begun.
                        state.end_transaction();
                        return Err(refused);
                    }
                }
                "BEGIN"
            }
            TransactionCommand::Commit => {
                let block = state.end_transaction();
                let listens = block.as_ref().map(|b| b.listens.clone());
                let before = block.as_ref().map(|b| b.notifications_at_begin);
                let tag = commit(&state.engine, &state.instance, block).await;
                // The block's notifications and LISTENs count only if it committed.
                match (&tag, listens) {
                    (Ok("COMMIT"), Some(listens)) => state.apply_listens(&listens),
                    _ => state
                        .notifications
                        .truncate(before.unwrap_or_else(|| state.notifications.len())),
                }
                tag?
            }
            TransactionCommand::Rollback => {
                if let Some(mut block) = state.end_transaction() {
                    state.notifications.truncate(block.notifications_at_begin);
                    let changes = block.take_schema_changes();
                    undo_schema(&state.engine, &state.instance, &changes).await;
                }
                "ROLLBACK"
            }
            TransactionCommand::Savepoint(name) => {
                let pending = state.notifications.len();
                open(&mut state.transaction, "SAVEPOINT")?.savepoint(name, pending);
                "SAVEPOINT"
            }
            TransactionCommand::Release(name) => {
                open(&mut state.transaction, "RELEASE SAVEPOINT")?.release(name)?;
                "RELEASE"
            }
            TransactionCommand::RollbackTo(name) => {
                let (changes, notifications) =
                    open(&mut state.transaction, "ROLLBACK TO SAVEPOINT")?.rollback_to(name)?;
                state.notifications.truncate(notifications);
                undo_schema(&state.engine, &state.instance, &changes).await;
                "ROLLBACK"
            }
            TransactionCommand::LockShared(_) => {
                open(&mut state.transaction, "LOCK TABLE")?;
                if state.settings.value("transaction_isolation") != Some("repeatable read") {
                    return Err(SqlError::unsupported(
                        "LOCK TABLE is supported only in REPEATABLE READ READ ONLY blocks, \
                         whose snapshot fails with 40001 if the table's schema changes: \
                         pgwide makes no one wait for a lock",
                    ));
                }
                "LOCK TABLE"
            }
        };
        Ok(StatementResult::command(tag))
    }
}

/// The tables of a `LOCK TABLE`, which must be in ACCESS SHARE MODE (see the module
/// comment).
fn plan_lock(state: &SessionState, lock: &sqlparser::ast::Lock) -> SqlResult<Vec<Arc<TableMeta>>> {
    match &lock.lock_mode {
        Some(LockTableMode::AccessShare) => {}
        mode => {
            let mode = mode
                .as_ref()
                .map_or("ACCESS EXCLUSIVE".to_string(), ToString::to_string);
            return Err(SqlError::unsupported(format!(
                "LOCK TABLE ... IN {mode} MODE is not supported: pgwide makes no one wait \
                 for a lock; ACCESS SHARE MODE is accepted in REPEATABLE READ READ ONLY \
                 blocks"
            )));
        }
    }
    lock.tables
        .iter()
        .map(|target| {
            let name = super::ddl::table_name(&target.name)?;
            Ok(state.engine.table(&state.instance, &name)?)
        })
        .collect()
}
