//! The session's `TimeZone` while one of its statements is planned or runs, for the
//! code that reads, shows or converts a `timestamptz` with no session at hand: the
//! casts in `values`, the constants `expr` folds, COPY's text. The session sets it
//! around planning and running each statement, and `in_zone` keeps it around the
//! rows and COPY data a result produces later, as the server reads them; outside a
//! statement, in tests and background work, it is UTC. DataFusion's functions read the
//! same zone from their config instead (`query::pg_time_zone`), as they may run on
//! other tasks.

use super::datetime::TimeZone;
use super::sql_types::{CopySink, Datum, RowStream, SqlResult, StatementResult};
use async_trait::async_trait;
use futures::Stream;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

tokio::task_local! {
    static SESSION_ZONE: TimeZone;
}

/// The zone of the statement running on this task.
pub fn current() -> TimeZone {
    SESSION_ZONE.try_with(|zone| *zone).unwrap_or_default()
}

/// Runs `work` (a statement's execution) in `zone`.
pub async fn scope<F: Future>(zone: TimeZone, work: F) -> F::Output {
    match already(zone) {
        true => work.await,
        false => SESSION_ZONE.scope(zone, work).await,
    }
}

/// Runs `work` (a statement's planning) in `zone`.
pub fn sync_scope<R>(zone: TimeZone, work: impl FnOnce() -> R) -> R {
    match already(zone) {
        true => work(),
        false => SESSION_ZONE.sync_scope(zone, work),
    }
}

/// Whether `zone` is the zone here without a scope: UTC, where no scope is set, which
/// is most sessions' case and costs nothing per statement.
fn already(zone: TimeZone) -> bool {
    zone == TimeZone::default() && SESSION_ZONE.try_with(|_| ()).is_err()
}

/// `result` with its rows or COPY sink kept in `zone` as the server reads or feeds
/// them after the statement has returned.
pub fn in_zone(zone: TimeZone, result: StatementResult) -> StatementResult {
    // Outside any scope the zone is UTC already: a UTC session's rows need no wrapper.
    if zone == TimeZone::default() {
        return result;
    }
    let rows = |rows: RowStream| -> RowStream { Box::pin(RowsInZone { zone, rows }) };
    match result {
        StatementResult::Query { columns, rows: r } => StatementResult::Query {
            columns,
            rows: rows(r),
        },
        StatementResult::Returning {
            columns,
            rows: r,
            tag,
        } => StatementResult::Returning {
            columns,
            rows: rows(r),
            tag,
        },
        StatementResult::CopyOut {
            columns,
            format,
            rows: r,
        } => StatementResult::CopyOut {
            columns,
            format,
            rows: rows(r),
        },
        StatementResult::CopyIn { columns, sink } => StatementResult::CopyIn {
            columns,
            sink: Box::new(SinkInZone { zone, sink }),
        },
        command @ StatementResult::Command { .. } => command,
    }
}

/// Rows made in a zone.
struct RowsInZone {
    zone: TimeZone,
    rows: RowStream,
}

impl Stream for RowsInZone {
    type Item = SqlResult<Vec<Datum>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let zone = self.zone;
        sync_scope(zone, || self.rows.as_mut().poll_next(cx))
    }
}

/// COPY FROM data read in a zone.
struct SinkInZone {
    zone: TimeZone,
    sink: Box<dyn CopySink>,
}

#[async_trait]
impl CopySink for SinkInZone {
    async fn data(&mut self, chunk: &[u8]) -> SqlResult<()> {
        scope(self.zone, self.sink.data(chunk)).await
    }

    async fn finish(self: Box<Self>) -> SqlResult<String> {
        scope(self.zone, self.sink.finish()).await
    }

    async fn abort(self: Box<Self>) {
        scope(self.zone, self.sink.abort()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_zone_is_the_scopes_and_utc_outside_one() {
        let berlin = TimeZone::parse("Europe/Berlin").expect("a zone");
        assert!(current().is_utc());
        assert_eq!(scope(berlin, async { current() }).await, berlin);
        assert_eq!(sync_scope(berlin, current), berlin);
        // UTC inside another zone's scope is set, not skipped.
        let utc = TimeZone::default();
        assert_eq!(sync_scope(berlin, || sync_scope(utc, current)), utc);
        assert!(current().is_utc());
    }

    #[tokio::test]
    async fn rows_read_after_the_statement_are_made_in_its_zone() {
        use futures::StreamExt;
        let berlin = TimeZone::parse("Europe/Berlin").expect("a zone");
        // A row computed as it is read, as a scan's rows are.
        let rows: RowStream = futures::stream::iter(0..2)
            .map(|_| Ok(vec![Datum::Text(format!("{:?}", current()))]))
            .boxed();
        let result = in_zone(
            berlin,
            StatementResult::Query {
                columns: std::sync::Arc::new(Vec::new()),
                rows,
            },
        );
        let StatementResult::Query { mut rows, .. } = result else {
            panic!("a query stays a query");
        };
        while let Some(row) = rows.next().await {
            assert_eq!(
                row.expect("a row"),
                vec![Datum::Text(format!("{berlin:?}"))]
            );
        }
    }
}
