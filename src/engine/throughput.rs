//! Reserved read/write throughput (docs/table-store.md §9.1): a table's
//! `reserved_read_cu` / `reserved_write_cu` cap the capacity units it consumes per
//! second, and a per-second window of what it consumed over the last minute feeds
//! `pgwide.table_stats`.
//!
//! Each limited direction is a token bucket that holds at most one second's budget
//! (the limit, in CU) and refills continuously at the limit per second. A write is
//! admitted only if the bucket holds all it costs, and is then charged before it is
//! applied, so a refused statement writes nothing. A read's cost is known only once
//! it has read, so a read is admitted while the bucket is not empty and charged after:
//! one read may overdraw the budget by its own cost, and the reads after it are
//! refused until the refill has paid the debt back.
//!
//! Time is the engine's clock, so tests drive the refill with a manual clock.

use super::capacity::{Capacity, TableStats};
use super::{Engine, EngineError, EngineResult, TableMeta};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How many one-second slots the consumption window keeps.
const WINDOW_SECONDS: usize = 60;

/// Which budget a limit applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
}

impl Direction {
    /// The table option that sets this budget.
    pub fn option(self) -> &'static str {
        match self {
            Direction::Read => "reserved_read_cu",
            Direction::Write => "reserved_write_cu",
        }
    }
}

/// Why a statement was refused: what it needed and what the budget had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub direction: Direction,
    pub limit: u64,
    /// CU the operation needs (for a read, the least any read costs: 1).
    pub needed: u64,
    /// Whole CU the bucket held when it refused.
    pub available: u64,
}

/// A token bucket of capacity units.
#[derive(Debug, Default)]
struct Bucket {
    /// The limit the bucket was last filled for; 0 before its first use.
    limit: u64,
    /// CU that may still be spent; negative after a read overdrew it.
    tokens: f64,
    /// When `tokens` was last brought up to date.
    at_ms: i64,
}

impl Bucket {
    /// Brings the bucket to `now_ms` under `limit`. A changed limit (an ALTER TABLE)
    /// takes effect at once: a raised one starts full, a lowered one keeps no more
    /// than its own second's budget.
    fn refill(&mut self, limit: u64, now_ms: i64) {
        let depth = limit as f64;
        if self.limit != limit {
            self.tokens = if limit > self.limit {
                depth
            } else {
                self.tokens.min(depth)
            };
            self.limit = limit;
            self.at_ms = now_ms;
            return;
        }
        let elapsed_ms = (now_ms - self.at_ms).max(0) as f64;
        self.tokens = (self.tokens + elapsed_ms * depth / 1000.0).min(depth);
        self.at_ms = self.at_ms.max(now_ms);
    }

    fn available(&self) -> u64 {
        self.tokens.max(0.0).floor() as u64
    }
}

/// One second of consumption. Atomics, not a lock: every read and write of every
/// table (a point get too) records here. The writer that first sees a new second
/// claims the slot and zeroes it; a count another writer adds in between is lost,
/// which a statistic can afford.
#[derive(Debug, Default)]
struct Slot {
    second: AtomicI64,
    read_cu: AtomicU64,
    write_cu: AtomicU64,
}

/// A table's budgets and its consumption over the last minute.
#[derive(Debug)]
pub struct Throughput {
    read: Mutex<Bucket>,
    write: Mutex<Bucket>,
    window: [Slot; WINDOW_SECONDS],
    throttled_reads: AtomicU64,
    throttled_writes: AtomicU64,
}

/// What `pgwide.table_stats` shows of a table's last minute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecentThroughput {
    /// CU consumed in the last 60 seconds, this one included.
    pub read_cu_last_minute: u64,
    pub write_cu_last_minute: u64,
    /// The most CU consumed in any one of those seconds.
    pub peak_read_cu_per_second: u64,
    pub peak_write_cu_per_second: u64,
    /// Statements refused for want of budget since the server started.
    pub throttled_reads: u64,
    pub throttled_writes: u64,
}

impl Default for Throughput {
    fn default() -> Self {
        Throughput {
            read: Mutex::default(),
            write: Mutex::default(),
            window: std::array::from_fn(|_| Slot::default()),
            throttled_reads: AtomicU64::new(0),
            throttled_writes: AtomicU64::new(0),
        }
    }
}

impl Throughput {
    fn bucket(&self, direction: Direction) -> std::sync::MutexGuard<'_, Bucket> {
        let bucket = match direction {
            Direction::Read => &self.read,
            Direction::Write => &self.write,
        };
        bucket.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn count_refusal(&self, direction: Direction) {
        let counter = match direction {
            Direction::Read => &self.throttled_reads,
            Direction::Write => &self.throttled_writes,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Takes `cost` write CU from a budget of `limit` per second (0: unlimited), or
    /// refuses and takes nothing.
    pub fn take_write(&self, limit: u64, cost: u64, now_ms: i64) -> Result<(), Refusal> {
        if limit == 0 {
            return Ok(());
        }
        let mut bucket = self.bucket(Direction::Write);
        bucket.refill(limit, now_ms);
        if bucket.tokens < cost as f64 {
            let available = bucket.available();
            drop(bucket);
            self.count_refusal(Direction::Write);
            return Err(Refusal {
                direction: Direction::Write,
                limit,
                needed: cost,
                available,
            });
        }
        bucket.tokens -= cost as f64;
        Ok(())
    }

    /// Gives back write CU taken for a write that was then not applied.
    pub fn return_write(&self, limit: u64, cost: u64) {
        if limit == 0 {
            return;
        }
        let mut bucket = self.bucket(Direction::Write);
        if bucket.limit == limit {
            bucket.tokens = (bucket.tokens + cost as f64).min(limit as f64);
        }
    }

    /// Whether a read may start under a budget of `limit` per second (0: unlimited).
    pub fn admit_read(&self, limit: u64, now_ms: i64) -> Result<(), Refusal> {
        if limit == 0 {
            return Ok(());
        }
        let mut bucket = self.bucket(Direction::Read);
        bucket.refill(limit, now_ms);
        if bucket.tokens < 1.0 {
            let available = bucket.available();
            drop(bucket);
            self.count_refusal(Direction::Read);
            return Err(Refusal {
                direction: Direction::Read,
                limit,
                needed: 1,
                available,
            });
        }
        Ok(())
    }

    /// Charges a read that ran; the budget may go below zero (see the module comment).
    pub fn charge_read(&self, limit: u64, cost: u64, now_ms: i64) {
        if limit == 0 {
            return;
        }
        let mut bucket = self.bucket(Direction::Read);
        bucket.refill(limit, now_ms);
        // At most one second's budget of debt: a huge scan delays the next reads by a
        // second, not by as long as it was big.
        bucket.tokens = (bucket.tokens - cost as f64).max(-(limit as f64));
    }

    /// Adds consumed CU to the second `now_ms` falls in.
    pub fn record(&self, cu: Capacity, now_ms: i64) {
        let second = now_ms.div_euclid(1000);
        let slot = &self.window[second.rem_euclid(WINDOW_SECONDS as i64) as usize];
        let held = slot.second.load(Ordering::Acquire);
        if held > second {
            // A minute-old count arriving late: its slot is a newer second's now.
            return;
        }
        if held < second
            && slot
                .second
                .compare_exchange(held, second, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            slot.read_cu.store(0, Ordering::Relaxed);
            slot.write_cu.store(0, Ordering::Relaxed);
        }
        slot.read_cu.fetch_add(cu.read, Ordering::Relaxed);
        slot.write_cu.fetch_add(cu.write, Ordering::Relaxed);
    }

    /// The last minute's consumption as of `now_ms`.
    pub fn recent(&self, now_ms: i64) -> RecentThroughput {
        let second = now_ms.div_euclid(1000);
        let mut recent = RecentThroughput {
            throttled_reads: self.throttled_reads.load(Ordering::Relaxed),
            throttled_writes: self.throttled_writes.load(Ordering::Relaxed),
            ..RecentThroughput::default()
        };
        for slot in &self.window {
            let at = slot.second.load(Ordering::Acquire);
            if at > second || second - at >= WINDOW_SECONDS as i64 {
                continue;
            }
            let (read, write) = (
                slot.read_cu.load(Ordering::Relaxed),
                slot.write_cu.load(Ordering::Relaxed),
            );
            recent.read_cu_last_minute += read;
            recent.write_cu_last_minute += write;
            recent.peak_read_cu_per_second = recent.peak_read_cu_per_second.max(read);
            recent.peak_write_cu_per_second = recent.peak_write_cu_per_second.max(write);
        }
        recent
    }
}

/// A limit option's value as a budget: 0 (or a negative, which validation refuses
/// anyway) is unlimited.
fn budget(option: i64) -> u64 {
    option.max(0) as u64
}

impl Engine {
    /// Refuses a read of `table` while its read budget for this second is spent; the
    /// stats to record the read in when it has run.
    pub(super) fn admit_read(
        &self,
        table: &TableMeta,
        now_ms: i64,
    ) -> EngineResult<Arc<TableStats>> {
        let stats = self.stats.table(table.id);
        let limit = budget(table.options.reserved_read_cu);
        stats
            .throughput
            .admit_read(limit, now_ms)
            .map_err(|refusal| refused(table, refusal))?;
        Ok(stats)
    }

    /// Records a read admitted by `admit_read` and charges its budget.
    pub(super) fn finish_read(
        stats: &TableStats,
        table: &TableMeta,
        capacity: Capacity,
        rows_scanned: u64,
        now_ms: i64,
    ) {
        let limit = budget(table.options.reserved_read_cu);
        stats.throughput.charge_read(limit, capacity.read, now_ms);
        stats.record_read(capacity, rows_scanned, now_ms);
    }

    /// Takes each table's write CU of a batch from its budget, all or none. `tables`
    /// are the tables as the catalog has them now, so an ALTER's new limit counts at
    /// once.
    pub(super) fn take_write_budgets(
        &self,
        costs: &HashMap<u32, Capacity>,
        tables: &[Arc<TableMeta>],
        now_ms: i64,
    ) -> EngineResult<WriteBudgets> {
        let mut taken = WriteBudgets::default();
        for table in tables {
            let limit = budget(table.options.reserved_write_cu);
            let Some(cost) = costs.get(&table.id).filter(|_| limit > 0) else {
                continue;
            };
            let stats = self.stats.table(table.id);
            if let Err(refusal) = stats.throughput.take_write(limit, cost.write, now_ms) {
                taken.give_back();
                return Err(refused(table, refusal));
            }
            taken.0.push((stats, limit, cost.write));
        }
        Ok(taken)
    }
}

/// Write CU taken from budgets for a batch not yet applied.
#[derive(Default)]
pub(super) struct WriteBudgets(Vec<(Arc<TableStats>, u64, u64)>);

impl WriteBudgets {
    /// Returns the CU: the batch was not applied.
    pub(super) fn give_back(&mut self) {
        for (stats, limit, cost) in self.0.drain(..) {
            stats.throughput.return_write(limit, cost);
        }
    }
}

fn refused(table: &TableMeta, refusal: Refusal) -> EngineError {
    EngineError::ThroughputExceeded {
        table: table.name.clone(),
        option: refusal.direction.option(),
        limit: refusal.limit,
        needed: refusal.needed,
        available: refusal.available,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_budget_refills_over_the_second_and_never_beyond_it() {
        let budget = Throughput::default();
        // Starts full: 50 one-CU writes pass, the 51st does not.
        for _ in 0..50 {
            assert!(budget.take_write(50, 1, 0).is_ok());
        }
        let refused = budget.take_write(50, 1, 0).unwrap_err();
        assert_eq!((refused.limit, refused.available), (50, 0));
        // 100 ms later, 5 CU have come back.
        assert!(budget.take_write(50, 5, 100).is_ok());
        assert!(budget.take_write(50, 1, 100).is_err());
        // An idle minute refills one second's budget, no more.
        assert!(budget.take_write(50, 51, 60_000).is_err());
        assert!(budget.take_write(50, 50, 60_000).is_ok());
        assert_eq!(budget.recent(60_000).throttled_writes, 3);
    }

    #[test]
    fn a_raised_limit_applies_at_once_and_returned_cu_come_back() {
        let budget = Throughput::default();
        assert!(budget.take_write(10, 10, 0).is_ok());
        assert!(budget.take_write(10, 1, 0).is_err());
        budget.return_write(10, 4);
        assert!(budget.take_write(10, 4, 0).is_ok());
        assert!(budget.take_write(1000, 1000, 0).is_ok());
        assert!(budget.take_write(0, 1_000_000, 0).is_ok());
    }

    #[test]
    fn a_read_may_overdraw_and_the_next_reads_wait_for_the_refill() {
        let budget = Throughput::default();
        assert!(budget.admit_read(10, 0).is_ok());
        budget.charge_read(10, 15, 0);
        assert!(budget.admit_read(10, 0).is_err());
        // -5 + 10 CU/s: one whole CU is back after 600 ms.
        assert!(budget.admit_read(10, 550).is_err());
        assert!(budget.admit_read(10, 600).is_ok());
    }

    #[test]
    fn the_window_sums_the_last_sixty_seconds() {
        let budget = Throughput::default();
        budget.record(Capacity { read: 3, write: 0 }, 1_000);
        budget.record(Capacity { read: 4, write: 2 }, 1_500);
        budget.record(Capacity { read: 0, write: 7 }, 30_000);
        let recent = budget.recent(30_000);
        assert_eq!(recent.read_cu_last_minute, 7);
        assert_eq!(recent.write_cu_last_minute, 9);
        assert_eq!(recent.peak_read_cu_per_second, 7);
        assert_eq!(recent.peak_write_cu_per_second, 7);
        // Second 1 leaves the window at second 61.
        assert_eq!(budget.recent(61_000).read_cu_last_minute, 0);
        assert_eq!(budget.recent(61_000).write_cu_last_minute, 7);
    }
}
