//! `SELECT ... FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE [OF t]
//! [NOWAIT]`, as ORMs lock the rows they are about to change (Django's
//! `select_for_update()` and `update_or_create()`). pgwide has no lock another
//! session waits on; in a transaction block the rows the SELECT reads are held to the
//! block's COMMIT instead (`Engine::lock_rows`): if another session changes one of
//! them first, COMMIT fails with 40001 and nothing of the block lands, so no change
//! slips in between the read and the block's writes, which is what the lock is for.
//! The other session is not made to wait, and a FOR SHARE conflicts as a FOR UPDATE
//! does. Outside a block a lock ends with its statement, so the SELECT just reads.
//!
//! Refused (0A000): `SKIP LOCKED` (pgwide cannot tell which rows another session
//! holds), a query the fast path does not read alone (joins, aggregates: PostgreSQL
//! refuses the aggregates too), and `OF` a table the query does not read (42P01).

use super::dml::{matched_rows, WriteTarget};
use super::expr::{fold, Params};
use super::relation::RelationKind;
use super::select::{plan_select, FastPath, SelectPlan};
use super::session_state::SessionState;
use super::sql_types::{Datum, SqlError, SqlResult};
use crate::sqlstate::SqlState;
use sqlparser::ast;
use std::sync::Arc;

/// Plans a SELECT with a locking clause on the fast path.
pub(super) fn plan_locking(
    state: &SessionState,
    query: &ast::Query,
    params: &mut Params,
) -> SqlResult<Arc<SelectPlan>> {
    if query
        .locks
        .iter()
        .any(|lock| matches!(lock.nonblock, Some(ast::NonBlock::SkipLocked)))
    {
        return Err(SqlError::unsupported(
            "SKIP LOCKED is not supported: pgwide takes no row locks another session \
             holds, so it cannot tell which rows to skip",
        ));
    }
    let mut unlocked = query.clone();
    unlocked.locks.clear();
    let plan = match plan_select(&state.engine, &state.instance, &unlocked, params)? {
        FastPath::Planned(plan) => plan,
        FastPath::Declined(why) => {
            return Err(SqlError::unsupported(format!(
                "SELECT ... FOR UPDATE / FOR SHARE is supported on a query of one table's \
                 rows, without aggregates, grouping or DISTINCT ({why})"
            )))
        }
    };
    if let Some(read) = &plan.read {
        if read.relation.kind != RelationKind::Table {
            return Err(SqlError::unsupported(
                "SELECT ... FOR UPDATE / FOR SHARE of a table's versions is not supported",
            ));
        }
        for lock in &query.locks {
            let Some(of) = &lock.of else { continue };
            let name =
                of.0.last()
                    .and_then(|part| part.as_ident())
                    .map(fold)
                    .unwrap_or_default();
            if !read.relation.qualifiers.contains(&name) {
                return Err(SqlError::new(
                    SqlState::UndefinedTable,
                    format!("relation \"{name}\" in FOR UPDATE clause not found in FROM clause"),
                ));
            }
        }
    }
    Ok(Arc::new(plan))
}

/// In a transaction block, holds the rows `plan` reads to the block's COMMIT.
pub(super) async fn lock_rows(
    state: &mut SessionState,
    plan: &SelectPlan,
    params: &[Datum],
) -> SqlResult<()> {
    let (Some(read), Some(_)) = (&plan.read, &state.transaction) else {
        return Ok(());
    };
    let target: WriteTarget<'_> = state.write_target();
    let pks: Vec<_> = matched_rows(&target, read, params)
        .await?
        .into_iter()
        .map(|(pk, _)| pk)
        .collect();
    let table = Arc::clone(&read.relation.table);
    if let Some(block) = state.transaction.as_mut() {
        state
            .engine
            .lock_rows(&mut block.staged, &table, &pks)
            .await?;
    }
    Ok(())
}
