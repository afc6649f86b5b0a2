//! Each table's load by partition key over the last one to two minutes, kept as running
//! counters in memory (nothing is read from storage for it, and nothing survives a
//! restart): the read and write capacity units each partition key took, and how many
//! row writes went past the end of the table's partition-key order, the mark of a
//! sequential partition key (docs/table-store.md §9.2).
//!
//! Counting every partition key of a table with millions of them would cost memory
//! without bound, so a window keeps at most [`TRACKED_KEYS`] of them: past twice that,
//! the least loaded are dropped in one batch and a dropped key that comes back counts
//! from zero again. A key's count is then a lower bound of its true load, short by at
//! most the largest load ever dropped in the window (`LoadSnapshot::dropped_max`); the
//! window's totals stay exact. A hot partition key is never the one dropped.

use super::capacity::Capacity;
use super::catalog::TableMeta;
use super::codec::encode_pk_value;
use super::types::PkValue;
use super::Engine;
use std::collections::HashMap;
use std::sync::Mutex;

/// How long one window lasts; the load shown covers the current window and the one
/// before it.
pub const WINDOW_MS: i64 = 60_000;

/// The partition keys a window counts at most before it drops the least loaded.
pub const TRACKED_KEYS: usize = 1024;

/// What one partition key took in a window.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct KeyLoad {
    pub read_cu: u64,
    pub write_cu: u64,
    pub row_writes: u64,
}

impl KeyLoad {
    fn total_cu(&self) -> u64 {
        self.read_cu + self.write_cu
    }

    fn add(&mut self, other: &KeyLoad) {
        self.read_cu += other.read_cu;
        self.write_cu += other.write_cu;
        self.row_writes += other.row_writes;
    }
}

/// One row write for the load counters: its partition key (as the key codec encodes
/// it, so byte order is value order), its write CUs, and whether it stores the row
/// (a put or update, not a delete).
pub struct PartitionWrite {
    pub partition_key: Vec<u8>,
    pub write_cu: u64,
    pub stores_row: bool,
}

/// The partition key of a row with primary key `pk`, encoded as the key codec does.
pub fn partition_key_of(pk: &[PkValue]) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(first) = pk.first() {
        encode_pk_value(&mut out, first);
    }
    out
}

/// The partition keys one range page charges by name: past these, the page is a scan
/// spreading over many keys, and the rest of its rows count in the table's total only,
/// which keeps a long scan from costing a counter update per row.
const RUNS_PER_PAGE: usize = 64;

/// The bytes a range read returned per partition key, for the load counters: rows come
/// in key order, so each partition key's rows are one run.
#[derive(Debug, Default)]
pub struct PartitionRuns {
    runs: Vec<(Vec<u8>, usize)>,
    /// The bytes of rows past the first [`RUNS_PER_PAGE`] partition keys.
    spread_bytes: usize,
}

impl PartitionRuns {
    /// A row of `bytes` of partition key `partition_key` (encoded).
    pub fn add(&mut self, partition_key: &[u8], bytes: usize) {
        let room = self.runs.len() < RUNS_PER_PAGE;
        match self.runs.last_mut() {
            Some((key, run)) if key.as_slice() == partition_key => *run += bytes,
            _ if room => self.runs.push((partition_key.to_vec(), bytes)),
            _ => self.spread_bytes += bytes,
        }
    }
}

/// The load of a table's partition keys over the current and the previous window.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LoadSnapshot {
    /// When the oldest window shown began (ms since the Unix epoch, engine clock).
    pub since_ms: i64,
    /// Every partition key's load added up, dropped keys included.
    pub total: KeyLoad,
    /// Row writes that stored a partition key greater than any the table had.
    pub writes_past_end: u64,
    /// The partition keys counted, the most loaded (read + write CU) first.
    pub keys: Vec<(Vec<u8>, KeyLoad)>,
    /// The most load a dropped key had: each count is at most this much short.
    pub dropped_max: u64,
}

/// The load counters of one table.
#[derive(Debug, Default)]
pub struct PartitionLoad {
    windows: Mutex<Windows>,
}

#[derive(Debug, Default)]
struct Windows {
    current: Window,
    previous: Option<Window>,
    /// The greatest partition key stored since the server started: a write past it is
    /// a write at the end of the partition-key order.
    greatest_key: Option<Vec<u8>>,
}

#[derive(Debug, Default)]
struct Window {
    start_ms: i64,
    keys: HashMap<Vec<u8>, KeyLoad>,
    total: KeyLoad,
    writes_past_end: u64,
    dropped_max: u64,
}

impl PartitionLoad {
    /// Counts reads: each partition key with the read CUs it took.
    pub fn record_reads<'a>(&self, reads: impl IntoIterator<Item = (&'a [u8], u64)>, now_ms: i64) {
        let mut windows = self.lock();
        let window = windows.at(now_ms);
        for (partition_key, read_cu) in reads {
            let load = KeyLoad {
                read_cu,
                ..KeyLoad::default()
            };
            window.add(partition_key, &load);
        }
    }

    /// Counts one range page's reads.
    pub fn record_runs(&self, runs: &PartitionRuns, now_ms: i64) {
        let reads = runs
            .runs
            .iter()
            .map(|(key, bytes)| (key.as_slice(), Capacity::units(*bytes)));
        self.record_reads(reads, now_ms);
        if runs.spread_bytes > 0 {
            let mut windows = self.lock();
            windows.at(now_ms).total.read_cu += Capacity::units(runs.spread_bytes);
        }
    }

    /// Counts the row writes of one committed batch.
    pub fn record_writes(&self, writes: &[PartitionWrite], now_ms: i64) {
        let mut windows = self.lock();
        let mut past_end = 0;
        for write in writes.iter().filter(|w| w.stores_row) {
            match &mut windows.greatest_key {
                Some(greatest) if write.partition_key > *greatest => {
                    past_end += 1;
                    greatest.clone_from(&write.partition_key);
                }
                Some(_) => {}
                // The first write since the server started has nothing to be past.
                None => windows.greatest_key = Some(write.partition_key.clone()),
            }
        }
        let window = windows.at(now_ms);
        window.writes_past_end += past_end;
        for write in writes {
            let load = KeyLoad {
                read_cu: 0,
                write_cu: write.write_cu,
                row_writes: 1,
            };
            window.add(&write.partition_key, &load);
        }
    }

    /// The current and previous windows' load as of `now_ms`.
    pub fn snapshot(&self, now_ms: i64) -> LoadSnapshot {
        let mut windows = self.lock();
        windows.at(now_ms);
        let mut keys: HashMap<Vec<u8>, KeyLoad> = HashMap::new();
        let mut snapshot = LoadSnapshot {
            since_ms: windows.current.start_ms,
            ..LoadSnapshot::default()
        };
        for window in windows.previous.iter().chain([&windows.current]) {
            snapshot.since_ms = snapshot.since_ms.min(window.start_ms);
            snapshot.total.add(&window.total);
            snapshot.writes_past_end += window.writes_past_end;
            snapshot.dropped_max += window.dropped_max;
            for (key, load) in &window.keys {
                keys.entry(key.clone()).or_default().add(load);
            }
        }
        snapshot.keys = keys.into_iter().collect();
        snapshot
            .keys
            .sort_by(|a, b| b.1.total_cu().cmp(&a.1.total_cu()).then(a.0.cmp(&b.0)));
        snapshot
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Windows> {
        // The counters are plain numbers: a panic elsewhere cannot leave them broken.
        self.windows.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Engine {
    /// `table`'s load by partition key over the current and the previous window.
    pub fn partition_load(&self, table: &TableMeta) -> LoadSnapshot {
        self.stats
            .table(table.id)
            .partitions
            .snapshot(self.now_ms())
    }
}

impl Windows {
    /// The window `now_ms` falls in, started (and the old ones moved on) if need be. A
    /// clock that went back counts into the current window.
    fn at(&mut self, now_ms: i64) -> &mut Window {
        let start = now_ms - now_ms.rem_euclid(WINDOW_MS);
        if start > self.current.start_ms {
            let ended = std::mem::replace(
                &mut self.current,
                Window {
                    start_ms: start,
                    ..Window::default()
                },
            );
            self.previous = (ended.start_ms == start - WINDOW_MS).then_some(ended);
        }
        &mut self.current
    }
}

impl Window {
    fn add(&mut self, partition_key: &[u8], load: &KeyLoad) {
        self.total.add(load);
        if let Some(counted) = self.keys.get_mut(partition_key) {
            counted.add(load);
            return;
        }
        self.keys.insert(partition_key.to_vec(), *load);
        if self.keys.len() > 2 * TRACKED_KEYS {
            self.drop_least_loaded();
        }
    }

    /// Keeps the [`TRACKED_KEYS`] most loaded keys.
    fn drop_least_loaded(&mut self) {
        let mut loads: Vec<u64> = self.keys.values().map(KeyLoad::total_cu).collect();
        let (_, &mut kept_min, _) = loads.select_nth_unstable_by(TRACKED_KEYS - 1, |a, b| b.cmp(a));
        // Of the keys as loaded as the least kept one, only as many stay as fit.
        let above = loads.iter().filter(|&&l| l > kept_min).count();
        let mut ties_left = TRACKED_KEYS - above;
        let mut dropped_max = self.dropped_max;
        self.keys.retain(|_, load| {
            let total = load.total_cu();
            let keep = total > kept_min || (total == kept_min && ties_left > 0);
            if keep && total == kept_min {
                ties_left -= 1;
            }
            if !keep {
                dropped_max = dropped_max.max(total);
            }
            keep
        });
        self.dropped_max = dropped_max;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(key: &[u8], cu: u64) -> PartitionWrite {
        PartitionWrite {
            partition_key: key.to_vec(),
            write_cu: cu,
            stores_row: true,
        }
    }

    #[test]
    fn counts_reads_and_writes_per_partition_key() {
        let load = PartitionLoad::default();
        load.record_writes(&[write(b"a", 2), write(b"b", 1), write(b"a", 3)], 1_000);
        load.record_reads([(&b"b"[..], 4)], 2_000);
        let snapshot = load.snapshot(3_000);
        assert_eq!(snapshot.total.write_cu, 6);
        assert_eq!(snapshot.total.read_cu, 4);
        assert_eq!(snapshot.keys[0].0, b"a");
        assert_eq!(snapshot.keys[0].1.write_cu, 5);
        assert_eq!(snapshot.keys[0].1.row_writes, 2);
        assert_eq!(snapshot.keys[1].1.read_cu, 4);
        assert_eq!(snapshot.dropped_max, 0);
    }

    #[test]
    fn a_long_scan_names_its_first_partition_keys_and_counts_the_rest() {
        let load = PartitionLoad::default();
        let mut runs = PartitionRuns::default();
        for key in 0..1000u32 {
            runs.add(&key.to_be_bytes(), 10);
            runs.add(&key.to_be_bytes(), 10);
        }
        load.record_runs(&runs, 0);
        let snapshot = load.snapshot(0);
        assert_eq!(snapshot.keys.len(), RUNS_PER_PAGE);
        assert_eq!(snapshot.keys[0].1.read_cu, 1);
        // 936 partition keys' 18,720 bytes are 5 CU, charged to no key.
        assert_eq!(snapshot.total.read_cu, RUNS_PER_PAGE as u64 + 5);
    }

    #[test]
    fn shows_the_previous_window_and_forgets_older_ones() {
        let load = PartitionLoad::default();
        load.record_writes(&[write(b"a", 1)], 10);
        load.record_writes(&[write(b"b", 1)], WINDOW_MS + 10);
        let snapshot = load.snapshot(WINDOW_MS + 20);
        assert_eq!(snapshot.since_ms, 0);
        assert_eq!(snapshot.total.write_cu, 2);
        let snapshot = load.snapshot(2 * WINDOW_MS + 20);
        assert_eq!(snapshot.since_ms, WINDOW_MS);
        assert_eq!(snapshot.keys.len(), 1);
        assert_eq!(load.snapshot(4 * WINDOW_MS).total, KeyLoad::default());
    }

    #[test]
    fn counts_writes_past_the_greatest_partition_key() {
        let load = PartitionLoad::default();
        let sequential: Vec<_> = (0..100u32).map(|i| write(&i.to_be_bytes(), 1)).collect();
        load.record_writes(&sequential, 0);
        // The first write has nothing before it; every later one is past the end.
        assert_eq!(load.snapshot(0).writes_past_end, 99);
        let older: Vec<_> = (0..50u32).map(|i| write(&i.to_be_bytes(), 1)).collect();
        load.record_writes(&older, 0);
        assert_eq!(load.snapshot(0).writes_past_end, 99);
        let delete = PartitionWrite {
            partition_key: 1000u32.to_be_bytes().to_vec(),
            write_cu: 1,
            stores_row: false,
        };
        load.record_writes(&[delete], 0);
        assert_eq!(load.snapshot(0).writes_past_end, 99);
    }

    #[test]
    fn keeps_the_busiest_keys_when_there_are_too_many() {
        let load = PartitionLoad::default();
        load.record_writes(&[write(b"hot", 1000)], 0);
        let many: Vec<_> = (0..10 * TRACKED_KEYS as u32)
            .map(|i| write(&i.to_be_bytes(), 1))
            .collect();
        load.record_writes(&many, 0);
        let snapshot = load.snapshot(0);
        assert!(snapshot.keys.len() <= 2 * TRACKED_KEYS);
        assert_eq!(
            snapshot.keys[0],
            (
                b"hot".to_vec(),
                KeyLoad {
                    read_cu: 0,
                    write_cu: 1000,
                    row_writes: 1,
                }
            )
        );
        assert_eq!(snapshot.total.write_cu, 1000 + 10 * TRACKED_KEYS as u64);
        assert_eq!(snapshot.dropped_max, 1);
    }
}
