//! Reading the rows of a planned access path from the engine: point reads, batch reads
//! and paged range reads, with the open transaction's staged writes laid over them and
//! the residual predicate applied, as a stream of relation rows.

mod paged_rows;

pub use paged_rows::ReadMeter;

use super::access::{Access, ReadPlan};
use super::expr::{bind, eval, is_true};
use super::notices::Notices;
use super::relation::RelationKind;
use super::sql_types::{Datum, SqlResult};
use crate::engine::{Engine, ReadSnapshot, RowView, StagedView};
use futures::stream::{self, StreamExt};
use paged_rows::{PagedRows, Shape};
use std::collections::VecDeque;
use std::sync::Arc;

/// What a read needs at execution time.
#[derive(Clone)]
pub struct ReadContext {
    pub engine: Arc<Engine>,
    /// The open transaction's staged writes, if any, which reads must see.
    pub staged: Option<StagedView>,
    /// `SET pgwide.as_of`: read the newest version at or before this time (ms).
    pub as_of: Option<i64>,
    /// The REPEATABLE READ block's snapshot, which reads see instead of the latest rows.
    pub snapshot: Option<ReadSnapshot>,
    /// Counts pages, rows and capacity units for EXPLAIN ANALYZE.
    pub meter: Option<Arc<ReadMeter>>,
    /// Where cells shown as NULL (stored type not the column's) are reported.
    pub notices: Option<Arc<Notices>>,
    /// When the open transaction block began; `None` outside one, where the statement
    /// is the transaction and starts when it runs. What `now()` reports.
    pub transaction_start: Option<std::time::SystemTime>,
}

/// Reads the rows of a plan: a stream of relation rows (slot values), after the residual.
pub async fn read_rows(
    ctx: &ReadContext,
    plan: Arc<ReadPlan>,
    params: Arc<Vec<Datum>>,
    want: Option<usize>,
) -> SqlResult<stream::BoxStream<'static, SqlResult<Vec<Datum>>>> {
    let table = Arc::clone(&plan.relation.table);
    let mut read = plan.read_options(&params)?;
    // As of T: each cell shows its newest version at or before T, and rows written
    // only after T are not there.
    read.as_of = ctx.as_of;
    read.snapshot = ctx.snapshot.clone();
    let meter = ctx.meter.clone().unwrap_or_default();
    let staged = ctx.staged.as_ref().filter(|s| s.touches(&table)).cloned();
    let engine = Arc::clone(&ctx.engine);
    let shape: Shape = {
        let notices = ctx.notices.clone();
        let plan = Arc::clone(&plan);
        let params = Arc::clone(&params);
        let residual = plan.residual.as_ref().map(|r| bind(r, &params));
        Arc::new(
            move |row: &RowView<'_>, out: &mut VecDeque<SqlResult<Vec<Datum>>>| {
                plan.relation
                    .materialize(row, notices.as_deref(), |values| match &residual {
                        None => out.push_back(Ok(values)),
                        Some(residual) => match eval(residual, &values, &params) {
                            Ok(d) if is_true(&d) => out.push_back(Ok(values)),
                            Ok(_) => {}
                            Err(e) => out.push_back(Err(e)),
                        },
                    });
            },
        )
    };
    let keys = match &plan.access {
        Access::Keys(_) => Some(plan.keys(&params)?),
        // A block's own writes to the table are not in the index yet, and a read as of
        // another time or of a snapshot may want rows by values they showed then: all
        // three scan.
        Access::Index { .. }
            if staged.is_none() && ctx.as_of.is_none() && ctx.snapshot.is_none() =>
        {
            plan.index_keys(&engine, &params).await?
        }
        _ => None,
    };
    if let Some(keys) = keys {
        let mut out = VecDeque::new();
        for chunk in keys.chunks(engine.limits().max_batch_get_rows.max(1)) {
            let rows = match &staged {
                Some(staged) => engine.preview_rows(staged, &table, chunk, &read).await?,
                None if chunk.len() == 1 => {
                    let got = engine.get_row(&table, &chunk[0], &read).await?;
                    meter.record(1, got.capacity.read);
                    vec![got.row]
                }
                None => {
                    let got = engine.batch_get_row(&table, chunk, &read).await?;
                    meter.record(chunk.len() as u64, got.capacity.read);
                    got.rows
                }
            };
            rows.into_iter()
                .flatten()
                .for_each(|row| shape(&RowView::of(&row), &mut out));
        }
        return Ok(stream::iter(out).boxed());
    }
    let Some(mut request) = plan.range_request(&params, read)? else {
        return Ok(stream::empty().boxed());
    };
    // EXPLAIN ANALYZE: the partition keys the range goes through.
    let shape: Shape = match meter.counts_partitions() {
        false => shape,
        true => {
            let meter = Arc::clone(&meter);
            Arc::new(move |row: &RowView<'_>, out: &mut VecDeque<_>| {
                meter.saw_partition(row.pk().first());
                shape(row, out)
            })
        }
    };
    if let Some(staged) = staged {
        let overlay = engine.staged_range(&staged, &table, &request);
        return Ok(PagedRows::new(engine, table, meter, shape, request)
            .over_staged(overlay)
            .boxed());
    }
    // Without a residual every engine row is a result row, so LIMIT goes to the engine.
    if plan.residual.is_none() && plan.relation.kind == RelationKind::Table {
        request.limit = want;
    }
    Ok(PagedRows::new(engine, table, meter, shape, request).boxed())
}
