//! The one shape every kind of statement takes: a handler plans a statement of its
//! kind into its own plan type, says what columns and privileges the plan needs, and
//! executes it against the session's state. The session only routes a statement to the
//! handler that claims it and keeps the plan; it knows nothing of what a plan holds.
//!
//! Handlers are unit types with associated functions: they keep no state of their
//! own, everything lives in [`SessionState`].

use super::expr::Params;
use super::session_state::SessionState;
use super::sql_types::{Datum, OutputColumn, SqlResult, StatementResult};
use sqlparser::ast::Statement;
use std::future::Future;
use std::sync::Arc;

/// What a handler says of a statement it was offered.
pub(super) enum Claim<P> {
    /// The statement is of the handler's kind: its plan, or why it cannot be planned.
    Planned(SqlResult<P>),
    /// Not of the handler's kind: the statement back, for the next handler.
    NotMine(Box<Statement>),
}

pub(super) trait StatementHandler {
    /// A planned statement of this kind. Prepared statements and the plan cache keep
    /// it, so one plan runs many times with different parameters.
    type Plan: Send + Sync + 'static;

    /// Plans `statement` if it is of this handler's kind. Planning notes the types
    /// the statement's parameters need in `params`.
    fn plan(
        state: &SessionState,
        statement: Box<Statement>,
        params: &mut Params,
    ) -> Claim<Self::Plan>;

    /// The columns the plan's result has (none for a command).
    fn columns(_plan: &Self::Plan) -> Arc<Vec<OutputColumn>> {
        Arc::new(Vec::new())
    }

    /// 42501 unless the session's role may run the plan. Checked when a plan runs, not
    /// when it is made, so cached and prepared plans see a REVOKE at once.
    fn authorize(_state: &SessionState, _plan: &Self::Plan) -> SqlResult<()> {
        Ok(())
    }

    /// The command the plan runs, if it changes anything stored (rows, the schema,
    /// roles): a read-only transaction refuses it (25006, `session`).
    fn writes(_plan: &Self::Plan) -> Option<&'static str> {
        None
    }

    /// Whether the simple-query plan cache may keep the plan for statements that differ
    /// from this one only in their literals. Statements that change what later ones
    /// mean (DDL, settings) must not be cached.
    fn cacheable(_plan: &Self::Plan) -> bool {
        false
    }

    /// Runs the plan with `params` bound to its parameters.
    fn execute(
        state: &mut SessionState,
        plan: &Self::Plan,
        params: Vec<Datum>,
    ) -> impl Future<Output = SqlResult<StatementResult>> + Send;
}
