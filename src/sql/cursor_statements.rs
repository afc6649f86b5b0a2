//! SQL cursors, as psycopg's named cursors and Django's `.iterator()` use them:
//! `DECLARE name [NO SCROLL] CURSOR [WITH HOLD | WITHOUT HOLD] FOR query`, `FETCH
//! [FORWARD] [n | ALL | NEXT] [FROM | IN] name`, `MOVE` (the same, passing the rows
//! over: its tag counts them) and `CLOSE name | ALL`.
//!
//! A cursor's query is planned and started when it is declared; FETCH reads its next
//! rows (`open_cursors`), so a cursor over a table sees rows written after DECLARE
//! that its scan has not reached yet, where PostgreSQL's reads its snapshot. A cursor
//! without HOLD may only be declared in a transaction block and is closed when the
//! block ends; one WITH HOLD lives until CLOSE or the session's end. Cursors only move
//! forward here: `SCROLL`, backward fetches, `BINARY` and `INSENSITIVE` are refused
//! (0A000) rather than accepted and ignored.

use super::expr::{fold, Params};
use super::open_cursors::Cursor;
use super::read_statements::{plan_query, SelectStatement};
use super::session_state::SessionState;
use super::sql_types::{Datum, OutputColumn, SqlError, SqlResult, StatementResult};
use super::statement_handler::{Claim, StatementHandler};
use super::statement_parser::MOVE_MARKER;
use crate::sqlstate::SqlState;
use futures::StreamExt;
use sqlparser::ast::{self, CloseCursor, FetchDirection, Statement};
use std::sync::Arc;

pub(super) struct Cursors;

pub(super) enum CursorPlan {
    Declare {
        name: String,
        hold: bool,
        select: SelectStatement,
    },
    Fetch {
        name: String,
        /// How many rows; `None`: all that are left.
        count: Option<usize>,
        columns: Arc<Vec<OutputColumn>>,
        /// A MOVE: the rows are passed over, not returned.
        move_only: bool,
    },
    Close {
        /// `None`: CLOSE ALL.
        name: Option<String>,
    },
}

fn no_such_cursor(name: &str) -> SqlError {
    SqlError::new(
        SqlState::InvalidCursorName,
        format!("cursor \"{name}\" does not exist"),
    )
}

fn forward_only(what: &str) -> SqlError {
    SqlError::unsupported(format!(
        "{what} is not supported: pgwide's cursors move forward only"
    ))
}

/// The number of rows a FETCH direction asks for: `None` for all of them.
fn fetch_count(direction: &FetchDirection) -> SqlResult<Option<usize>> {
    let number = |limit: &ast::ValueWithSpan| -> SqlResult<i64> {
        match &limit.value {
            ast::Value::Number(n, _) => n
                .parse::<i64>()
                .map_err(|_| SqlError::syntax(format!("invalid FETCH count {n}"))),
            other => Err(SqlError::syntax(format!("invalid FETCH count {other}"))),
        }
    };
    let forward = |n: i64| match usize::try_from(n) {
        Ok(n) => Ok(Some(n)),
        Err(_) => Err(forward_only("FETCH with a negative count")),
    };
    match direction {
        FetchDirection::Next | FetchDirection::Forward { limit: None } => Ok(Some(1)),
        FetchDirection::Count { limit } | FetchDirection::Forward { limit: Some(limit) } => {
            forward(number(limit)?)
        }
        FetchDirection::All | FetchDirection::ForwardAll => Ok(None),
        other => Err(forward_only(&format!("FETCH {other}"))),
    }
}

/// Plans `DECLARE ... CURSOR FOR query`.
fn plan_declare(
    state: &SessionState,
    declare: &ast::Declare,
    params: &mut Params,
) -> SqlResult<CursorPlan> {
    let [name] = declare.names.as_slice() else {
        return Err(SqlError::syntax("DECLARE names one cursor"));
    };
    let Some(query) = &declare.for_query else {
        return Err(SqlError::unsupported(
            "DECLARE of a variable is not supported: only DECLARE ... CURSOR FOR a query",
        ));
    };
    if declare.binary == Some(true) {
        return Err(SqlError::unsupported(
            "a BINARY cursor is not supported (the protocol's binary format is)",
        ));
    }
    if declare.scroll == Some(true) {
        return Err(forward_only("a SCROLL cursor"));
    }
    // FETCH reads the query's rows as it goes (`open_cursors`), so the cursor sees
    // later writes: it could not keep an INSENSITIVE promise.
    if declare.sensitive == Some(true) {
        return Err(SqlError::unsupported(
            "an INSENSITIVE cursor is not supported: pgwide's cursors read their rows as \
             FETCH asks, and see rows written after DECLARE",
        ));
    }
    Ok(CursorPlan::Declare {
        name: fold(name),
        hold: declare.hold == Some(true),
        select: plan_query(state, query, params)?,
    })
}

impl StatementHandler for Cursors {
    type Plan = CursorPlan;

    fn plan(
        state: &SessionState,
        statement: Box<Statement>,
        params: &mut Params,
    ) -> Claim<CursorPlan> {
        Claim::Planned(match *statement {
            Statement::Declare { stmts } => match stmts.as_slice() {
                [declare] => plan_declare(state, declare, params),
                _ => Err(SqlError::syntax("DECLARE declares one cursor at a time")),
            },
            Statement::Fetch {
                name,
                direction,
                into,
                ..
            } => {
                let name = fold(&name);
                let move_only = into.as_ref().is_some_and(|into| {
                    matches!(into.0.as_slice(), [ast::ObjectNamePart::Identifier(marker)]
                        if marker.value == MOVE_MARKER)
                });
                if into.is_some() && !move_only {
                    return Claim::Planned(Err(SqlError::unsupported("FETCH ... INTO")));
                }
                fetch_count(&direction).and_then(|count| {
                    let cursor = state
                        .cursors
                        .get(&name)
                        .ok_or_else(|| no_such_cursor(&name))?;
                    Ok(CursorPlan::Fetch {
                        count,
                        columns: match move_only {
                            true => Arc::new(Vec::new()),
                            false => cursor.columns(),
                        },
                        name,
                        move_only,
                    })
                })
            }
            Statement::Close { cursor } => Ok(CursorPlan::Close {
                name: match cursor {
                    CloseCursor::All => None,
                    CloseCursor::Specific { name } => Some(fold(&name)),
                },
            }),
            _ => return Claim::NotMine(statement),
        })
    }

    fn columns(plan: &CursorPlan) -> Arc<Vec<OutputColumn>> {
        match plan {
            CursorPlan::Fetch { columns, .. } => Arc::clone(columns),
            CursorPlan::Declare { .. } | CursorPlan::Close { .. } => Arc::new(Vec::new()),
        }
    }

    fn authorize(state: &SessionState, plan: &CursorPlan) -> SqlResult<()> {
        match plan {
            CursorPlan::Declare { select, .. } => select.authorize(state),
            CursorPlan::Fetch { .. } | CursorPlan::Close { .. } => Ok(()),
        }
    }

    async fn execute(
        state: &mut SessionState,
        plan: &CursorPlan,
        params: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        match plan {
            CursorPlan::Declare { name, hold, select } => {
                if !hold && state.transaction.is_none() {
                    return Err(SqlError::new(
                        SqlState::NoActiveSqlTransaction,
                        "DECLARE CURSOR can only be used in transaction blocks",
                    ));
                }
                if state.cursors.contains_key(name) {
                    return Err(SqlError::new(
                        SqlState::DuplicateCursor,
                        format!("cursor \"{name}\" already exists"),
                    ));
                }
                let columns = select.columns();
                let StatementResult::Query { rows, .. } = select.run(state, params).await? else {
                    return Err(SqlError::internal("a cursor's query gave no rows"));
                };
                state
                    .cursors
                    .insert(name.clone(), Cursor::new(columns, rows, *hold));
                Ok(StatementResult::Command {
                    tag: "DECLARE CURSOR".into(),
                })
            }
            CursorPlan::Fetch {
                name,
                count,
                columns,
                move_only,
            } => {
                let cursor = state
                    .cursors
                    .get(name)
                    .ok_or_else(|| no_such_cursor(name))?;
                let rows = cursor.take(*count).await?;
                if *move_only {
                    return Ok(StatementResult::command(format!("MOVE {}", rows.len())));
                }
                let tag = format!("FETCH {}", rows.len());
                Ok(StatementResult::Returning {
                    columns: Arc::clone(columns),
                    rows: futures::stream::iter(rows.into_iter().map(Ok)).boxed(),
                    tag,
                })
            }
            CursorPlan::Close { name: None } => {
                state.cursors.clear();
                Ok(StatementResult::Command {
                    tag: "CLOSE CURSOR ALL".into(),
                })
            }
            CursorPlan::Close { name: Some(name) } => match state.cursors.remove(name) {
                Some(_) => Ok(StatementResult::Command {
                    tag: "CLOSE CURSOR".into(),
                }),
                None => Err(no_such_cursor(name)),
            },
        }
    }
}
