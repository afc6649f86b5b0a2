//! BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE and ROLLBACK TO: the statements that
//! open, end and mark a transaction block (`transaction_block`).

use super::expr::Params;
use super::session_state::SessionState;
use super::settings::{check, transaction_mode};
use super::sql_error::SqlResult;
use super::sql_types::{Datum, StatementResult};
use super::statement_handler::{Claim, StatementHandler};
use super::transaction_block::{commit, open, undo_schema, Transaction};
use sqlparser::ast::{Ident, Statement};

/// The handler of transaction control statements.
pub(super) struct Transactions;

/// A transaction control statement.
pub(super) enum TransactionCommand {
    /// `BEGIN [READ ONLY | READ WRITE]`: the access mode given, if any (else
    /// `default_transaction_read_only`'s).
    Begin {
        read_only: Option<bool>,
    },
    Commit,
    Rollback,
    Savepoint(Ident),
    Release(Ident),
    RollbackTo(Ident),
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
        _: &SessionState,
        statement: Box<Statement>,
        _: &mut Params,
    ) -> Claim<TransactionCommand> {
        Claim::Planned(Ok(match *statement {
            Statement::StartTransaction { modes, .. } => {
                // The isolation level is checked, not kept: the only one accepted is what
                // pgwide always gives. The access mode is kept.
                let mut read_only = None;
                for mode in &modes {
                    let (name, value) = transaction_mode(mode);
                    if let Err(e) = check(name, value, true) {
                        return Claim::Planned(Err(e));
                    }
                    if name == "transaction_read_only" {
                        read_only = Some(value == "on");
                    }
                }
                TransactionCommand::Begin { read_only }
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
            Statement::ReleaseSavepoint { name } => TransactionCommand::Release(name),
            _ => return Claim::NotMine(statement),
        }))
    }

    async fn execute(
        state: &mut SessionState,
        plan: &TransactionCommand,
        _: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        let tag = match plan {
            TransactionCommand::Begin { read_only } => {
                if state.transaction.is_none() {
                    state.transaction = Some(Transaction::begin(state.notifications.len()));
                    let read_only = read_only.unwrap_or_else(|| {
                        state.settings.value("default_transaction_read_only") == Some("on")
                    });
                    let mode = if read_only { "on" } else { "off" };
                    state.settings.set_local("transaction_read_only", mode)?;
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
        };
        Ok(StatementResult::command(tag))
    }
}
