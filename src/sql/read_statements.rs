//! SELECT and EXPLAIN: a SELECT runs on the fast path (point gets and primary-key
//! ranges, see `select`) where it applies, else DataFusion plans it; EXPLAIN [ANALYZE]
//! shows either one's access paths.

use super::explain::{self, explain_fast_path};
use super::expr::Params;
use super::query::{self, QueryEngine, QueryPlan};
use super::relation::VERSIONS_SCHEMA;
use super::row_locks;
use super::select::{execute_select, plan_select, FastPath, SelectPlan};
use super::session_state::SessionState;
use super::sql_types::{Datum, OutputColumn, SqlError, SqlResult, StatementResult};
use super::statement_handler::{Claim, StatementHandler};
use crate::auth::Privilege;
use crate::engine::EngineError;
use futures::{StreamExt, TryStreamExt};
use sqlparser::ast::{self, Statement};
use std::sync::Arc;

/// The handler of SELECT and EXPLAIN.
pub(super) struct Reads;

/// A planned read.
pub(super) enum ReadStatement {
    Select(SelectStatement),
    /// A SELECT with FOR UPDATE / FOR SHARE (`row_locks`), on the fast path.
    Locking(Arc<SelectPlan>),
    /// EXPLAIN [ANALYZE] of a SELECT.
    Explain {
        select: SelectStatement,
        analyze: bool,
    },
}

/// A planned SELECT.
pub(super) enum SelectStatement {
    /// Shared, so running a prepared or cached plan does not copy it.
    FastPath(Arc<SelectPlan>),
    /// A SELECT the fast path does not handle, planned by DataFusion.
    DataFusion(Box<QueryPlan>),
}

impl StatementHandler for Reads {
    type Plan = ReadStatement;

    fn plan(
        state: &SessionState,
        statement: Box<Statement>,
        params: &mut Params,
    ) -> Claim<ReadStatement> {
        match *statement {
            Statement::Query(query) if !query.locks.is_empty() => Claim::Planned(
                row_locks::plan_locking(state, &query, params).map(ReadStatement::Locking),
            ),
            Statement::Query(query) => {
                Claim::Planned(plan_query(state, &query, params).map(ReadStatement::Select))
            }
            Statement::Explain {
                statement, analyze, ..
            } => Claim::Planned(match *statement {
                Statement::Query(query) => plan_query(state, &query, params)
                    .map(|select| ReadStatement::Explain { select, analyze }),
                _ => Err(SqlError::unsupported("EXPLAIN works on SELECT statements")),
            }),
            _ => Claim::NotMine(statement),
        }
    }

    fn columns(plan: &ReadStatement) -> Arc<Vec<OutputColumn>> {
        match plan {
            ReadStatement::Select(select) => select.columns(),
            ReadStatement::Locking(plan) => Arc::clone(&plan.columns),
            ReadStatement::Explain { .. } => explain::columns(),
        }
    }

    fn authorize(state: &SessionState, plan: &ReadStatement) -> SqlResult<()> {
        match plan {
            ReadStatement::Select(select) | ReadStatement::Explain { select, .. } => {
                select.authorize(state)
            }
            // A lock needs UPDATE besides SELECT, as in PostgreSQL.
            ReadStatement::Locking(plan) => match &plan.read {
                Some(read) if !state.access.unrestricted() => {
                    let table = &read.relation.table;
                    state.access.check_table(table, Privilege::Select)?;
                    Ok(state.access.check_table(table, Privilege::Update)?)
                }
                _ => Ok(()),
            },
        }
    }

    fn cacheable(plan: &ReadStatement) -> bool {
        // A DataFusion plan holds its literals as constants of its own, not as
        // parameters the cache could rebind.
        matches!(plan, ReadStatement::Select(SelectStatement::FastPath(_)))
    }

    async fn execute(
        state: &mut SessionState,
        plan: &ReadStatement,
        params: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        match plan {
            ReadStatement::Select(select) => select.run(state, params).await,
            ReadStatement::Locking(plan) => {
                row_locks::lock_rows(state, plan, &params).await?;
                let ctx = state.read_context()?;
                execute_select(&ctx, Arc::clone(plan), params).await
            }
            ReadStatement::Explain { select, analyze } => {
                let ctx = state.read_context()?;
                match select {
                    SelectStatement::FastPath(p) => {
                        explain_fast_path(ctx, p, params, *analyze).await
                    }
                    SelectStatement::DataFusion(p) => {
                        query::explain_query(state.query_engine()?, p, params, ctx, *analyze).await
                    }
                }
            }
        }
    }
}

impl SelectStatement {
    pub(super) fn columns(&self) -> Arc<Vec<OutputColumn>> {
        match self {
            SelectStatement::FastPath(p) => Arc::clone(&p.columns),
            SelectStatement::DataFusion(p) => Arc::clone(&p.columns),
        }
    }

    /// 42501 unless the session's role may read every table the SELECT reads.
    pub(super) fn authorize(&self, state: &SessionState) -> SqlResult<()> {
        if state.access.unrestricted() {
            return Ok(());
        }
        match self {
            SelectStatement::FastPath(p) => match &p.read {
                Some(read) => Ok(state
                    .access
                    .check_table(&read.relation.table, Privilege::Select)?),
                None => Ok(()),
            },
            SelectStatement::DataFusion(p) => {
                for name in p.scanned_tables() {
                    let ours = matches!(
                        name.schema(),
                        None | Some("public") | Some(VERSIONS_SCHEMA) | Some("stream")
                    );
                    if !ours {
                        continue;
                    }
                    match state.engine.table(&state.instance, name.table()) {
                        Ok(table) => state.access.check_table(&table, Privilege::Select)?,
                        // Dropped since planning: running the plan reports it.
                        Err(EngineError::TableNotFound { .. }) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Ok(())
            }
        }
    }

    /// Runs the SELECT: its rows, read as the client takes them.
    pub(super) async fn run(
        &self,
        state: &SessionState,
        params: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        let ctx = state.read_context()?;
        match self {
            SelectStatement::FastPath(p) => execute_select(&ctx, Arc::clone(p), params).await,
            SelectStatement::DataFusion(p) => {
                let columns = Arc::clone(&p.columns);
                let rows = state.query_engine()?.execute(p, params, ctx).await?;
                // The rows are read after the statement returned: an error among them
                // must still abort an open transaction block.
                let aftermath = Arc::clone(&state.aftermath);
                let rows = rows
                    .inspect(move |row| {
                        if row.is_err() {
                            aftermath.fail();
                        }
                    })
                    .boxed();
                Ok(StatementResult::Query { columns, rows })
            }
        }
    }

    /// All its rows, for statements that write what they read.
    pub(super) async fn read_all(
        &self,
        state: &SessionState,
        params: Vec<Datum>,
    ) -> SqlResult<Vec<Vec<Datum>>> {
        match self.run(state, params).await? {
            StatementResult::Query { rows, .. } => rows.try_collect().await,
            _ => Err(SqlError::internal("a SELECT returned no rows")),
        }
    }
}

/// A SELECT: the fast path where it applies, else DataFusion.
pub(super) fn plan_query(
    state: &SessionState,
    query: &ast::Query,
    params: &mut Params,
) -> SqlResult<SelectStatement> {
    if !query.locks.is_empty() {
        return Err(SqlError::unsupported(
            "FOR UPDATE / FOR SHARE is supported on a SELECT statement of its own, not \
             inside another statement, EXPLAIN or a cursor",
        ));
    }
    let given = params.types.clone();
    // Catalog schemas exist only in DataFusion; the fast path would report them missing.
    let fast = if query::is_catalog_query(query) {
        FastPath::Declined("catalog query".into())
    } else {
        plan_select(&state.engine, &state.instance, query, params)?
    };
    match fast {
        FastPath::Planned(plan) => Ok(SelectStatement::FastPath(Arc::new(plan))),
        FastPath::Declined(why) => {
            tracing::trace!(why, "the fast path declined a query");
            let planned = state.query_engine()?.plan(query, &given)?;
            params.types = QueryEngine::param_types(&planned)
                .into_iter()
                .map(Some)
                .collect();
            Ok(SelectStatement::DataFusion(Box::new(planned)))
        }
    }
}
