//! LISTEN, UNLISTEN and NOTIFY (`notifications`). Outside a transaction block a LISTEN
//! or UNLISTEN takes effect at once; inside one at COMMIT, and not at all if the block
//! rolls back, as in PostgreSQL. A NOTIFY waits in the session's pending notifications
//! until its transaction commits.

use super::expr::{fold, Params};
use super::session_state::SessionState;
use super::sql_error::{SqlError, SqlResult};
use super::sql_types::{Datum, StatementResult};
use super::statement_handler::{Claim, StatementHandler};
use super::transaction_block::ListenChange;
use crate::sqlstate::SqlState;
use sqlparser::ast::Statement;

/// The handler of LISTEN, UNLISTEN and NOTIFY.
pub(super) struct Notifications;

/// A planned LISTEN (`Listen`), UNLISTEN (`Listen` of a removal) or NOTIFY.
pub(super) enum NotificationCommand {
    Listen(ListenChange),
    Notify { channel: String, payload: String },
}

impl StatementHandler for Notifications {
    type Plan = NotificationCommand;

    fn plan(_: &SessionState, statement: Box<Statement>, _: &mut Params) -> Claim<Self::Plan> {
        Claim::Planned(Ok(match *statement {
            Statement::LISTEN { channel } => {
                NotificationCommand::Listen(ListenChange::Listen(fold(&channel)))
            }
            // sqlparser reads `UNLISTEN *` as a channel named `*`.
            Statement::UNLISTEN { channel }
                if channel.quote_style.is_none() && channel.value == "*" =>
            {
                NotificationCommand::Listen(ListenChange::UnlistenAll)
            }
            Statement::UNLISTEN { channel } => {
                NotificationCommand::Listen(ListenChange::Unlisten(fold(&channel)))
            }
            Statement::NOTIFY { channel, payload } => NotificationCommand::Notify {
                channel: fold(&channel),
                payload: payload.unwrap_or_default(),
            },
            _ => return Claim::NotMine(statement),
        }))
    }

    async fn execute(
        state: &mut SessionState,
        plan: &NotificationCommand,
        _: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        let Some(backend) = &state.backend else {
            return Err(SqlError::unsupported(
                "LISTEN, UNLISTEN and NOTIFY need a connection to a pgwide server",
            ));
        };
        let tag = match plan {
            NotificationCommand::Listen(change) => {
                match state.transaction.as_mut() {
                    Some(block) => block.listens.push(change.clone()),
                    None => state.apply_listens(std::slice::from_ref(change)),
                }
                match change {
                    ListenChange::Listen(_) => "LISTEN",
                    ListenChange::Unlisten(_) | ListenChange::UnlistenAll => "UNLISTEN",
                }
            }
            NotificationCommand::Notify { channel, payload } => {
                if backend.backends.notification_queue_full(channel) {
                    return Err(SqlError::new(
                        SqlState::ProgramLimitExceeded,
                        "too many notifications in the NOTIFY queue",
                    ));
                }
                state.notifications.push(channel, payload)?;
                "NOTIFY"
            }
        };
        Ok(StatementResult::command(tag))
    }
}
