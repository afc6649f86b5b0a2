//! Background garbage collection: removes cell versions no read can see any more (past
//! Max Versions or the TTL) and rows that have expired entirely, reclaiming space.
//! Visibility never depends on GC having run; it only makes removal real.
//!
//! Writes store only the versions reads can see under the options they went by
//! (`write::apply_write`), so hidden data comes from time, under a TTL, and from lowered
//! options: hidden by the ALTER itself, or kept by a write that raced the ALTER with the
//! options from before. The background sweep therefore skips a table without a TTL whose
//! Max Versions is as at its last pass and that has lost no rewrite since: without that,
//! every minute would decode every row of every table. An ALTER makes the next pass a
//! whole one. A pass whose rewrite of a row lost to a write in between records the row,
//! and the next pass examines only the rows so recorded (`dirty_rows`), once a whole pass
//! has begun tracking them. A racing write that no pass catches leaves versions stored
//! but never shown, until a restart or another ALTER makes a pass whole.

use super::catalog::TableMeta;
use super::codec::{decode_pk, table_prefix};
use super::error::EngineResult;
use super::scan::{RowScanner, ScanStep};
use super::stored::{collectable, StoredRow};
use super::Engine;
use crate::storage::{Check, Direction, KeyRange, WriteBatch};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What one GC pass removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcReport {
    pub rows_examined: u64,
    pub versions_removed: u64,
    pub rows_removed: u64,
    /// Stream records removed for being older than their table's
    /// `stream_expiration_hours`.
    pub stream_records_removed: u64,
}

/// A table as it was when a background pass over it began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SweptState {
    /// The table's count of committed writes that left a hidden version.
    collectable_writes: u64,
    max_versions: i64,
}

/// The tables a background pass found nothing more to collect in, by table id.
#[derive(Default)]
pub(super) struct SweptTables(Mutex<HashMap<u32, SweptState>>);

impl SweptTables {
    fn get(&self, table: u32) -> Option<SweptState> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&table)
            .copied()
    }

    fn set(&self, table: u32, state: SweptState) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(table, state);
    }

    /// Makes the next pass over `table` a whole one. Its options changed: a write made
    /// while Max Versions was higher left no hidden version then, so it was not counted,
    /// yet hides one once Max Versions is lowered again; the table's count and options
    /// would then match what the last pass saw.
    pub(super) fn forget(&self, table: u32) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&table);
    }
}

/// How long a background pass works before it rests, and how many times that long it
/// rests. A pass over a large table decodes every row that may hold a hidden version:
/// at full speed, over 1.6 million rows after an UPDATE run, it took most of a core for
/// about five seconds, cut the UPDATEs from about 17k to 6k-7k a second meanwhile and
/// doubled their p99. Resting three quarters of the time (as PostgreSQL's autovacuum
/// does with its cost delay) makes the pass slower and leaves the machine to the
/// statements.
const WORK_SLICE: Duration = Duration::from_millis(10);
const REST_PER_WORK: u32 = 3;

/// Paces a pass: a background pass rests after each slice of work, a direct call
/// (`gc_table`, `gc_all`) runs through.
struct Pace {
    /// How long a pass works before it rests; `None` = it never rests.
    work_slice: Option<Duration>,
    worked_since: Instant,
    /// How many times the pass rested.
    rests: u64,
}

impl Pace {
    fn new(background: bool) -> Self {
        Pace {
            work_slice: background.then_some(WORK_SLICE),
            worked_since: Instant::now(),
            rests: 0,
        }
    }

    async fn rest_if_due(&mut self) {
        let Some(work_slice) = self.work_slice else {
            return;
        };
        let worked = self.worked_since.elapsed();
        if worked >= work_slice {
            tokio::time::sleep(worked * REST_PER_WORK).await;
            self.worked_since = Instant::now();
            self.rests += 1;
        }
    }
}

impl Engine {
    /// One pass over one table, at full speed.
    pub async fn gc_table(&self, table: &TableMeta) -> EngineResult<GcReport> {
        self.gc_table_paced(table, &mut Pace::new(false)).await
    }

    async fn gc_table_paced(&self, table: &TableMeta, pace: &mut Pace) -> EngineResult<GcReport> {
        let mut report = GcReport::default();
        let range = KeyRange::prefix(&table_prefix(table.id));
        // The scanner decodes whole rows (no `for_read`): GC writes them back.
        let mut scanner = RowScanner::new(self.backend.as_ref(), table, range, Direction::Forward)
            .only_collectable(&table.options, self.now_ms());
        // Paced chunk by chunk, not only row by row: the rows GC passes over undecoded
        // (nothing to collect) never reach this loop, so a pass over a table of such
        // rows, the first after a start or any over a table with a TTL, did not rest.
        loop {
            pace.rest_if_due().await;
            match scanner.step().await? {
                ScanStep::Row(row) => self.collect_row(table, row, &mut report).await?,
                ScanStep::PassedOver => {}
                ScanStep::End => break,
            }
        }
        report.rows_examined += scanner.passed_over();
        Ok(report)
    }

    /// A pass over the rows with these keys only (`DirtyRows`), in key order.
    async fn gc_rows_paced(
        &self,
        table: &TableMeta,
        keys: Vec<Vec<u8>>,
        pace: &mut Pace,
    ) -> EngineResult<GcReport> {
        let mut report = GcReport::default();
        let prefix_len = table_prefix(table.id).len();
        let pk_types = table.pk_types();
        for key in keys {
            pace.rest_if_due().await;
            let Some(value) = self.backend.get(&key).await? else {
                continue;
            };
            if !collectable(&value, &table.options, self.now_ms())? {
                report.rows_examined += 1;
                continue;
            }
            let pk = key.get(prefix_len..).unwrap_or_default();
            let (pk, _) = decode_pk(pk, &pk_types)?;
            let row = StoredRow::decode(pk, key, &value)?;
            self.collect_row(table, row, &mut report).await?;
        }
        Ok(report)
    }

    /// Removes what no read can see any more from one row as stored, unless a write
    /// changed it since it was read.
    async fn collect_row(
        &self,
        table: &TableMeta,
        mut row: StoredRow,
        report: &mut GcReport,
    ) -> EngineResult<()> {
        report.rows_examined += 1;
        let now = self.now_ms();
        let row_dead = row.marker.is_some() && !row.exists(&table.options, now);
        let before = row.cells.len();
        let mut batch = WriteBatch::default();
        // `expected` is the row as stored now: the write only applies if it still is.
        let expected = if row_dead {
            batch.delete(row.key.clone());
            row.encode()
        } else {
            let visible: Vec<_> = row.visible_cells(&table.options, now).cloned().collect();
            if visible.len() == before {
                return Ok(());
            }
            let expected = row.encode();
            row.cells = visible;
            match row.encode() {
                Some(value) => batch.put(row.key.clone(), value),
                None => return Ok(()),
            }
            expected
        };
        // A write in between wins, and this row waits for the next pass (see below).
        let check = Check {
            key: row.key.clone(),
            expected,
        };
        // Not waited for to be durable: a crash can only lose the removal, which the
        // next pass repeats. Waiting would cost a sync per row collected (GC runs one
        // row at a time), tens of thousands after a burst of updates.
        let written = self
            .backend
            .write_if_unsynced(vec![check], batch)
            .await?
            .is_some();
        if !written {
            // The write in between may have hidden nothing new itself: the row and the
            // table are marked as a collectable write would, so the next pass neither
            // skips the table nor leaves the row out.
            self.mark_collectable(table.id, [row.key.clone()]);
        } else if row_dead {
            report.rows_removed += 1;
            report.versions_removed += before as u64;
        } else {
            report.versions_removed += (before - row.cells.len()) as u64;
        }
        Ok(())
    }

    /// Marks rows of `table` as holding something GC can remove (their rewrite was
    /// lost): the next background pass neither skips the table (its count of
    /// collectable writes moved) nor leaves the rows out of the ones it examines.
    pub(super) fn mark_collectable(&self, table: u32, keys: impl IntoIterator<Item = Vec<u8>>) {
        self.dirty.record(table, keys);
        self.stats.table(table).record_collectable_write();
    }

    /// One pass over every table of every instance that may hold something to collect,
    /// at full speed.
    pub async fn gc_all(&self) -> EngineResult<GcReport> {
        self.gc_all_paced(&mut Pace::new(false)).await
    }

    async fn gc_all_paced(&self, pace: &mut Pace) -> EngineResult<GcReport> {
        let mut total = GcReport::default();
        let mut live = HashSet::new();
        for instance in self.instances() {
            for table in self.tables(&instance.name)? {
                live.insert(table.id);
                total.stream_records_removed += self.expire_stream_records(&table).await?;
                // Taken before the pass: a write that lands during it counts as new, so
                // the next pass looks again even if this one missed the row.
                let state = SweptState {
                    collectable_writes: self.stats.table(table.id).collectable_writes(),
                    max_versions: table.options.max_versions,
                };
                let expires = table.options.ttl >= 0;
                let swept = self.swept.get(table.id);
                if !expires && swept == Some(state) {
                    continue;
                }
                // Only the rows whose rewrite was lost, when nothing else can have
                // hidden data: no TTL, and the same Max Versions as when tracking began.
                let dirty = match swept {
                    Some(swept) if !expires && swept.max_versions == state.max_versions => {
                        self.dirty.take(table.id)
                    }
                    _ => None,
                };
                let report = match dirty {
                    Some(keys) => self.gc_rows_paced(&table, keys, pace).await?,
                    None => {
                        if !expires {
                            self.dirty.start_whole_pass(table.id);
                        }
                        self.gc_table_paced(&table, pace).await?
                    }
                };
                if !expires {
                    self.swept.set(table.id, state);
                }
                total.rows_examined += report.rows_examined;
                total.versions_removed += report.versions_removed;
                total.rows_removed += report.rows_removed;
            }
        }
        self.dirty.keep_only(&live);
        Ok(total)
    }

    /// Runs GC every `interval` until the engine is dropped.
    ///
    /// At normal priority, on purpose: passes on a thread of their own at nice 19 were
    /// tried. In that full benchmark run the range scans' p99 rose to 1.157 ms (0.671 in
    /// the run before) from the middle of their first turn on, as a starved pass over the
    /// rows the UPDATE run left would, its writes dropping partitions from the partition
    /// cache while it dragged on; and a starved thread may hold the write lock every
    /// writer waits for.
    pub fn spawn_gc(self: &Arc<Self>, interval: Duration) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(interval);
            // A pass over a large table can outlast the interval: the next one then
            // starts a whole interval after it ends, not at once to catch up.
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticker.tick().await;
            loop {
                ticker.tick().await;
                let Some(engine) = weak.upgrade() else { return };
                match engine.gc_all_paced(&mut Pace::new(true)).await {
                    Ok(report)
                        if report.versions_removed
                            + report.rows_removed
                            + report.stream_records_removed
                            > 0 =>
                    {
                        tracing::info!(?report, "gc pass")
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!("gc pass failed: {e}"),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{
        ColumnOp, Condition, Limits, ManualClock, PkColumn, PkType, PkValue, RowChange, RowWrite,
        TableSpec, Value, DEFAULT_INSTANCE,
    };
    use crate::storage::MemoryBackend;

    /// A whole background pass over rows with nothing to collect rests between the chunks
    /// it passes over, instead of running through the table at full speed.
    #[tokio::test]
    async fn a_paced_pass_rests_between_chunks_it_passes_over() {
        let engine = Engine::open(
            Arc::new(MemoryBackend::new()),
            Arc::new(ManualClock::new(1_700_000_000_000)),
            Limits::default(),
        )
        .await
        .unwrap();
        let spec = TableSpec {
            name: "t".into(),
            pk: vec![PkColumn {
                name: "id".into(),
                ty: PkType::Integer,
            }],
            ..TableSpec::default()
        };
        let table = engine.create_table(DEFAULT_INSTANCE, spec).await.unwrap();
        let rows = 1000;
        let writes = (0..rows)
            .map(|id| {
                let write = RowWrite {
                    pk: vec![PkValue::Integer(id)],
                    change: RowChange::Put(vec![ColumnOp::Put {
                        column: "a".into(),
                        value: Value::Integer(id),
                        version: None,
                    }]),
                    condition: Condition::IGNORE,
                    return_row: false,
                };
                (Arc::clone(&table), write)
            })
            .collect();
        engine
            .write_rows(writes, crate::engine::BatchMode::Atomic)
            .await
            .unwrap();
        // Rests whenever it is asked to, each time for three times the moment it worked.
        let mut pace = Pace {
            work_slice: Some(Duration::ZERO),
            worked_since: Instant::now(),
            rests: 0,
        };
        let report = engine.gc_all_paced(&mut pace).await.unwrap();
        assert_eq!(report.rows_examined, rows as u64);
        assert_eq!(report.versions_removed, 0);
        assert!(
            pace.rests >= 4,
            "{} rests over 1,000 rows passed over in chunks of at most 256",
            pace.rests
        );
    }
}
