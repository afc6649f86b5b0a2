//! Capacity units (docs/table-store.md §9): 1 CU per started 4 KB read or written,
//! reading a missing row costs 1 read CU. Every operation returns what it consumed, and
//! totals are kept per table.

use super::partition_load::PartitionLoad;
use super::partition_sizes::SizeCache;
use super::throughput::Throughput;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

const CU_BYTES: usize = 4096;

/// Capacity units consumed by one operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capacity {
    pub read: u64,
    pub write: u64,
}

impl Capacity {
    /// CUs for `bytes` of data: rounded up to whole 4 KB units, at least one.
    pub fn units(bytes: usize) -> u64 {
        bytes.div_ceil(CU_BYTES).max(1) as u64
    }

    pub fn read(bytes: usize) -> Self {
        Capacity {
            read: Self::units(bytes),
            write: 0,
        }
    }

    pub fn write(bytes: usize) -> Self {
        Capacity {
            read: 0,
            write: Self::units(bytes),
        }
    }
}

impl std::ops::AddAssign for Capacity {
    fn add_assign(&mut self, other: Capacity) {
        self.read += other.read;
        self.write += other.write;
    }
}

/// Running totals for one table since the server started.
#[derive(Debug, Default)]
pub struct TableStats {
    pub read_cu: AtomicU64,
    pub write_cu: AtomicU64,
    pub reads: AtomicU64,
    pub writes: AtomicU64,
    pub rows_scanned: AtomicU64,
    /// GC rewrites of the table's rows that lost to a write in between: a sign for the
    /// background GC that the table may hold something to collect (see `gc_all`).
    collectable_writes: AtomicU64,
    /// The reserved-throughput budgets and the last minute's consumption.
    pub throughput: Throughput,
    /// The recent load by partition key.
    pub partitions: PartitionLoad,
    /// The last walk of the table's partition sizes.
    pub(super) sizes: SizeCache,
}

/// A point-in-time copy of [`TableStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableStatsSnapshot {
    pub read_cu: u64,
    pub write_cu: u64,
    pub reads: u64,
    pub writes: u64,
    pub rows_scanned: u64,
}

impl TableStats {
    pub fn record_read(&self, cu: Capacity, rows_scanned: u64, now_ms: i64) {
        self.throughput.record(cu, now_ms);
        self.read_cu.fetch_add(cu.read, Ordering::Relaxed);
        self.write_cu.fetch_add(cu.write, Ordering::Relaxed);
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.rows_scanned.fetch_add(rows_scanned, Ordering::Relaxed);
    }

    pub fn record_write(&self, cu: Capacity, now_ms: i64) {
        self.throughput.record(cu, now_ms);
        self.read_cu.fetch_add(cu.read, Ordering::Relaxed);
        self.write_cu.fetch_add(cu.write, Ordering::Relaxed);
        self.writes.fetch_add(1, Ordering::Relaxed);
    }

    pub fn record_collectable_write(&self) {
        self.collectable_writes.fetch_add(1, Ordering::Relaxed);
    }

    pub fn collectable_writes(&self) -> u64 {
        self.collectable_writes.load(Ordering::Relaxed)
    }

    pub fn snapshot(&self) -> TableStatsSnapshot {
        TableStatsSnapshot {
            read_cu: self.read_cu.load(Ordering::Relaxed),
            write_cu: self.write_cu.load(Ordering::Relaxed),
            reads: self.reads.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            rows_scanned: self.rows_scanned.load(Ordering::Relaxed),
        }
    }
}

/// Stats of every table, by table id.
#[derive(Default)]
pub struct StatsRegistry {
    tables: RwLock<HashMap<u32, Arc<TableStats>>>,
}

impl StatsRegistry {
    pub fn table(&self, id: u32) -> Arc<TableStats> {
        if let Some(stats) = self
            .tables
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
        {
            return Arc::clone(stats);
        }
        let mut tables = self.tables.write().unwrap_or_else(|p| p.into_inner());
        Arc::clone(tables.entry(id).or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_examples() {
        // 7.6 KB written = 2 write CU; 0.1 KB read = 1 read CU; nothing read = 1 read CU.
        assert_eq!(Capacity::write(7600).write, 2);
        assert_eq!(Capacity::read(100).read, 1);
        assert_eq!(Capacity::read(0).read, 1);
        assert_eq!(Capacity::read(4096).read, 1);
        assert_eq!(Capacity::read(4097).read, 2);
    }
}
