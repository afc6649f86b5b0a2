//! The SQL rows of a GetRange read, as a stream that fetches one engine page at a time,
//! when the rows of the previous page are used up. A page's SQL rows are shaped from the
//! engine's row views as the engine reads them (`Engine::get_range_views`). In a
//! transaction block the rows the block wrote in the range are laid over the stored ones
//! as the pages arrive (`PagedRows::over_staged`), so such a read streams too.
//!
//! A hand-written stream rather than `stream::try_unfold`: unfold builds a new future,
//! moving its whole state, for every row it yields, which cost about a tenth of a
//! 100-row range scan. Here a row that is already buffered is one `pop_front`.

use crate::engine::{
    encode_pk, Direction, Engine, EngineResult, PkBound, PrimaryKey, RangePage, RangeRequest,
    RangeVisit, Row, RowView, TableMeta,
};
use crate::sql::sql_types::{Datum, SqlResult};
use futures::future::BoxFuture;
use futures::Stream;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

/// Pages, rows and capacity units one scan consumed, for EXPLAIN ANALYZE; made with
/// `counting_partitions`, also the partition keys a range read went through.
#[derive(Debug, Default)]
pub struct ReadMeter {
    pages: AtomicU64,
    rows: AtomicU64,
    read_cu: AtomicU64,
    partitions: Option<PartitionCount>,
}

/// Partition keys seen by a range read: it reads in key order, so each change of the
/// first key column's value is a new one, and the count needs no set of them.
#[derive(Debug, Default)]
struct PartitionCount {
    /// A range read began (a read by keys counts no partitions: EXPLAIN's line says it).
    ranged: std::sync::atomic::AtomicBool,
    count: AtomicU64,
    last: std::sync::Mutex<Option<crate::engine::PkValue>>,
}

impl ReadMeter {
    /// A meter that also counts the partition keys of the range reads it meters.
    pub fn counting_partitions() -> Self {
        ReadMeter {
            partitions: Some(PartitionCount::default()),
            ..ReadMeter::default()
        }
    }

    /// Whether this meter counts partition keys (made with `counting_partitions`).
    pub fn is_counting_partitions(&self) -> bool {
        self.partitions.is_some()
    }

    /// Whether the range read about to start should report its rows' partition keys
    /// (`saw_partition`).
    pub fn counts_partitions(&self) -> bool {
        let Some(counter) = &self.partitions else {
            return false;
        };
        counter.ranged.store(true, Ordering::Relaxed);
        true
    }

    /// A row of partition key `partition` was read.
    pub fn saw_partition(&self, partition: Option<&crate::engine::PkRef<'_>>) {
        let Some(counter) = &self.partitions else {
            return;
        };
        let partition = partition.map(|p| p.to_value());
        let mut last = counter.last.lock().unwrap_or_else(|p| p.into_inner());
        if *last != partition {
            counter.count.fetch_add(1, Ordering::Relaxed);
            *last = partition;
        }
    }

    /// One engine call: `rows` examined for `read_cu` capacity units.
    pub fn record(&self, rows: u64, read_cu: u64) {
        self.pages.fetch_add(1, Ordering::Relaxed);
        self.rows.fetch_add(rows, Ordering::Relaxed);
        self.read_cu.fetch_add(read_cu, Ordering::Relaxed);
    }

    /// `rows scanned=N pages=P read CU=C`, and `partition keys read=K` when counted.
    pub fn summary(&self) -> String {
        let mut summary = format!(
            "rows scanned={} pages={} read CU={}",
            self.rows.load(Ordering::Relaxed),
            self.pages.load(Ordering::Relaxed),
            self.read_cu.load(Ordering::Relaxed)
        );
        if let Some(counter) = self
            .partitions
            .as_ref()
            .filter(|c| c.ranged.load(Ordering::Relaxed))
        {
            let count = counter.count.load(Ordering::Relaxed);
            summary.push_str(&format!(" partition keys read={count}"));
        }
        summary
    }
}

/// Turns one engine row into the SQL rows it yields (none when a residual rejects it).
pub(crate) type Shape =
    Arc<dyn Fn(&RowView<'_>, &mut VecDeque<SqlResult<Vec<Datum>>>) + Send + Sync>;

/// A fetched page: its SQL rows, shaped as the engine read them, or, when the block's
/// writes are laid over it, its engine rows.
enum Fetched {
    Shaped(RangeVisit, VecDeque<SqlResult<Vec<Datum>>>),
    Rows(RangePage),
}

type PageFetch = BoxFuture<'static, (RangeRequest, EngineResult<Fetched>)>;

pub(crate) struct PagedRows {
    engine: Arc<Engine>,
    table: Arc<TableMeta>,
    meter: Arc<ReadMeter>,
    shape: Shape,
    /// Rows of fetched pages not yet yielded.
    buffer: VecDeque<SqlResult<Vec<Datum>>>,
    /// The request for the next page; `None` once the range is exhausted.
    next: Option<RangeRequest>,
    /// The page being fetched.
    fetching: Option<PageFetch>,
    /// Pages fetched so far.
    pages: u64,
    /// Rows a transaction block wrote in the range (`Engine::staged_range`), in scan
    /// order, not yet laid over the stored rows.
    overlay: VecDeque<(Vec<u8>, Option<Row>)>,
    direction: Direction,
    /// With an overlay, the request's limit, counted here: the engine's count of stored
    /// rows is not the count of rows the block sees.
    left: Option<usize>,
}

impl PagedRows {
    pub(crate) fn new(
        engine: Arc<Engine>,
        table: Arc<TableMeta>,
        meter: Arc<ReadMeter>,
        shape: Shape,
        request: RangeRequest,
    ) -> Self {
        PagedRows {
            engine,
            table,
            meter,
            shape,
            buffer: VecDeque::new(),
            fetching: None,
            pages: 0,
            overlay: VecDeque::new(),
            direction: request.direction,
            left: None,
            next: Some(request),
        }
    }

    /// Lays `overlay` (from `Engine::staged_range` for the same request) over the stored
    /// rows: a staged row replaces the stored row of its key, or is added in key order.
    pub(crate) fn over_staged(mut self, overlay: Vec<(Vec<u8>, Option<Row>)>) -> Self {
        self.overlay = overlay.into();
        if let Some(request) = self.next.as_mut() {
            self.left = request.limit.take();
        }
        self
    }

    /// Yields `row`, unless the limit is reached.
    fn emit(&mut self, row: Row) {
        if let Some(left) = self.left.as_mut() {
            if *left == 0 {
                return;
            }
            *left -= 1;
        }
        (self.shape)(&RowView::of(&row), &mut self.buffer);
    }

    /// Yields the overlay's rows that come before `key` in scan order (all of them for
    /// `None`, the end of the range), and takes out the one at `key` if there is one.
    fn lay_over_until(&mut self, key: Option<&[u8]>) -> Option<Option<Row>> {
        while let Some((staged_key, _)) = self.overlay.front() {
            let before = match (key, self.direction) {
                (None, _) => true,
                (Some(key), Direction::Forward) => staged_key.as_slice() < key,
                (Some(key), Direction::Backward) => staged_key.as_slice() > key,
            };
            if !before {
                break;
            }
            if let Some((_, Some(row))) = self.overlay.pop_front() {
                self.emit(row);
            }
        }
        match (key, self.overlay.front()) {
            (Some(key), Some((staged_key, _))) if staged_key.as_slice() == key => {
                self.overlay.pop_front().map(|(_, row)| row)
            }
            _ => None,
        }
    }

    /// Takes in a page fetched for `current`: buffers its SQL rows and sets up the
    /// request for the next page.
    fn take_page(&mut self, current: RangeRequest, fetched: Fetched) {
        let (returned, next_start) = match fetched {
            Fetched::Shaped(visit, shaped) => {
                self.meter.record(visit.rows_scanned, visit.capacity.read);
                // Pages are fetched once the buffer is empty.
                debug_assert!(self.buffer.is_empty());
                self.buffer = shaped;
                (visit.returned, visit.next_start)
            }
            Fetched::Rows(page) => {
                self.meter.record(page.rows_scanned, page.capacity.read);
                let returned = page.rows.len();
                for row in page.rows {
                    let key = encode_pk(&row.pk);
                    match self.lay_over_until(Some(&key)) {
                        Some(staged) => staged.into_iter().for_each(|row| self.emit(row)),
                        None => self.emit(row),
                    }
                }
                (returned, page.next_start)
            }
        };
        self.follow(current, returned, next_start);
    }

    /// Sets up the request for the page after `current`, which returned `returned` rows
    /// and said the range goes on at `next_start`.
    fn follow(&mut self, current: RangeRequest, returned: usize, next_start: Option<PrimaryKey>) {
        let Some(next_start) = next_start else {
            self.lay_over_until(None);
            return;
        };
        if self.left == Some(0) {
            return;
        }
        let mut following = current;
        following.start = next_start.into_iter().map(PkBound::Value).collect();
        if let Some(limit) = following.limit {
            let left = limit.saturating_sub(returned);
            if left == 0 {
                return;
            }
            following.limit = Some(left);
        }
        self.next = Some(following);
    }
}

impl Stream for PagedRows {
    type Item = SqlResult<Vec<Datum>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        // Every field is Unpin (the fetch is boxed), so the stream may be moved freely.
        let this = self.get_mut();
        loop {
            if let Some(row) = this.buffer.pop_front() {
                return Poll::Ready(Some(row));
            }
            if let Some(fetch) = this.fetching.as_mut() {
                let (current, page) = match fetch.as_mut().poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(done) => done,
                };
                this.fetching = None;
                match page {
                    Ok(page) => this.take_page(current, page),
                    Err(e) => return Poll::Ready(Some(Err(e.into()))),
                }
                continue;
            }
            let Some(request) = this.next.take() else {
                return Poll::Ready(None);
            };
            let (engine, table) = (Arc::clone(&this.engine), Arc::clone(&this.table));
            let shape = Arc::clone(&this.shape);
            // Rows are shaped as they are read unless the block's writes go between them,
            // or the rows the block sees are counted here.
            let lay_over = !this.overlay.is_empty() || this.left.is_some();
            let later_page = this.pages > 0;
            this.pages += 1;
            this.fetching = Some(Box::pin(async move {
                // The engine's reads complete without waiting, so a long scan (a
                // `count(*)` through DataFusion) would never give its thread back. A
                // connection thread serves other connections too, a CancelRequest among
                // them: yield between pages (a 100-row range has one page, and no yield).
                if later_page {
                    tokio::task::yield_now().await;
                }
                let fetched = if lay_over {
                    engine.get_range(&table, &request).await.map(Fetched::Rows)
                } else {
                    let mut shaped = VecDeque::new();
                    engine
                        .get_range_views(&table, &request, |row| shape(row, &mut shaped))
                        .await
                        .map(|visit| Fetched::Shaped(visit, shaped))
                };
                (request, fetched)
            }));
        }
    }
}
