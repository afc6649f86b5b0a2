//! Read snapshots over any backend: a read-only view of the store as it was at one
//! moment, for the transactions that must read one state of everything (a REPEATABLE
//! READ READ ONLY block, which is how pg_dump reads).
//!
//! Copy-on-write. `Snapshotting` wraps the backend every write goes through. While no
//! snapshot is open a write passes straight through, at the cost of an atomic load and
//! two atomic adds. While one is open, writes take the careful path one at a time: before
//! a write is applied, the value each key it writes holds is kept for every open snapshot
//! that has kept none for that key yet. That is the value the key had when the snapshot
//! was taken, since every write after that kept the key's value before changing it. A
//! snapshot read reads the store and then lays what the snapshot kept over it: in that
//! order, a read that saw a newer value finds the older one kept, because it was kept
//! before the newer value was written.
//!
//! What a snapshot costs others: while one is open, writes apply one at a time (they
//! still share syncs: a write waits for durability after letting the next one go), and
//! every key written is held in memory once per snapshot, up to `MAX_KEPT_BYTES`; past
//! that the snapshot is dropped and its reads fail (`StorageError::SnapshotTooOld`), as
//! PostgreSQL's `old_snapshot_threshold` does.
//!
//! Like the caches, this is correct only over a backend no one else writes to.

use crate::storage::{
    Backend, Check, Direction, DurabilityTickets, Entry, KeyRange, OrderedKv, PartitionReads,
    ReadAround, StorageError, StorageResult, SyncTicket, WriteBatch,
};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// The most bytes (keys and values) one snapshot keeps for the writes made while it is
/// open, before it gives up.
pub const MAX_KEPT_BYTES: usize = 512 * 1024 * 1024;

/// Entries read from the store per call while a snapshot read merges what it kept.
const MERGE_PAGE: usize = 256;

/// A backend whose state at a moment can be read while writes go on (`open_snapshot`).
pub struct Snapshotting {
    inner: Arc<dyn Backend>,
    /// Snapshots open or being opened: while not zero, writes take the careful path.
    careful: AtomicUsize,
    /// Writes on the fast path now; opening a snapshot waits until there are none.
    fast_writes: AtomicUsize,
    /// Told when the last fast write ends.
    drained: tokio::sync::Notify,
    /// Held by a careful write from the moment it reads what it will overwrite until it
    /// has applied, and by the opening of a snapshot: careful writes and openings happen
    /// one at a time, in the order they asked.
    serial: tokio::sync::Mutex<()>,
    /// The snapshots open now.
    open: Mutex<Vec<Weak<Kept>>>,
}

/// What one snapshot kept: for every key written since it was taken, the value the key
/// had then (`None`: absent).
#[derive(Default)]
struct Kept {
    state: Mutex<KeptState>,
}

#[derive(Default)]
struct KeptState {
    values: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    bytes: usize,
    /// Past `MAX_KEPT_BYTES`: `values` was dropped and the snapshot can no longer answer.
    gave_up: bool,
}

impl Kept {
    fn lock(&self) -> std::sync::MutexGuard<'_, KeptState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A fast-path write under way; counted out when dropped, with its future.
struct FastWrite<'s>(&'s Snapshotting);

impl Drop for FastWrite<'_> {
    fn drop(&mut self) {
        if self.0.fast_writes.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.drained.notify_waiters();
        }
    }
}

impl Snapshotting {
    pub fn new(inner: Arc<dyn Backend>) -> Self {
        Snapshotting {
            inner,
            careful: AtomicUsize::new(0),
            fast_writes: AtomicUsize::new(0),
            drained: tokio::sync::Notify::new(),
            serial: tokio::sync::Mutex::new(()),
            open: Mutex::new(Vec::new()),
        }
    }

    /// Takes a snapshot of the store as it is once every write under way has applied.
    /// Reads through it see that state until it is dropped; it cannot be written.
    pub async fn open_snapshot(self: &Arc<Self>) -> Snapshot {
        // From here on new writes are careful; the guard undoes it if this future is
        // dropped before the snapshot exists.
        self.careful.fetch_add(1, Ordering::SeqCst);
        let mut opening = Opening(Some(Arc::clone(self)));
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if self.fast_writes.load(Ordering::SeqCst) == 0 {
                break;
            }
            drained.await;
        }
        let kept = Arc::new(Kept::default());
        {
            let _serial = self.serial.lock().await;
            self.open_lock().push(Arc::downgrade(&kept));
        }
        opening.0 = None;
        Snapshot {
            store: Arc::clone(self),
            kept,
        }
    }

    fn open_lock(&self) -> std::sync::MutexGuard<'_, Vec<Weak<Kept>>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Joins the fast path if no snapshot is open or being opened. Decided without
    /// waiting, so a write reaches the inner backend within its first poll as before.
    fn enter_fast(&self) -> Option<FastWrite<'_>> {
        if self.careful.load(Ordering::SeqCst) != 0 {
            return None;
        }
        self.fast_writes.fetch_add(1, Ordering::SeqCst);
        let entered = FastWrite(self);
        // An opening that began meanwhile waits for this write or sees it leave.
        (self.careful.load(Ordering::SeqCst) == 0).then_some(entered)
    }

    /// Applies a write while snapshots are open: keeps, for each of them, what the keys
    /// it writes hold now, then applies it, with no other careful write in between.
    /// Returns once the write is applied and visible, with its ticket, as
    /// `write_if_unsynced` does.
    async fn write_carefully(
        &self,
        checks: Vec<Check>,
        batch: WriteBatch,
    ) -> StorageResult<Option<SyncTicket>> {
        let _serial = self.serial.lock().await;
        let snapshots: Vec<Arc<Kept>> = {
            let mut open = self.open_lock();
            open.retain(|kept| kept.strong_count() > 0);
            open.iter().filter_map(Weak::upgrade).collect()
        };
        for mutation in &batch.mutations {
            let key = mutation.key();
            let wanting: Vec<&Arc<Kept>> = snapshots
                .iter()
                .filter(|kept| {
                    let state = kept.lock();
                    !state.gave_up && !state.values.contains_key(key)
                })
                .collect();
            if wanting.is_empty() {
                continue;
            }
            let value = self.inner.get(key).await?;
            for kept in wanting {
                keep(&mut kept.lock(), key, &value);
            }
        }
        self.inner.write_if_unsynced(checks, batch).await
    }
}

/// Keeps `value` as the value `key` had, unless the snapshot has one already.
fn keep(state: &mut KeptState, key: &[u8], value: &Option<Vec<u8>>) {
    if state.gave_up || state.values.contains_key(key) {
        return;
    }
    state.bytes += key.len() + value.as_ref().map_or(0, Vec::len);
    if state.bytes > MAX_KEPT_BYTES {
        state.values = BTreeMap::new();
        state.gave_up = true;
        return;
    }
    state.values.insert(key.to_vec(), value.clone());
}

/// A snapshot being opened; if dropped before it opens, new writes need not be careful
/// for it.
struct Opening(Option<Arc<Snapshotting>>);

impl Drop for Opening {
    fn drop(&mut self) {
        if let Some(store) = self.0.take() {
            store.careful.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

#[async_trait]
impl OrderedKv for Snapshotting {
    async fn get(&self, key: &[u8]) -> StorageResult<Option<Vec<u8>>> {
        self.inner.get(key).await
    }

    async fn scan(
        &self,
        range: &KeyRange,
        direction: Direction,
        limit: usize,
    ) -> StorageResult<Vec<Entry>> {
        self.inner.scan(range, direction, limit).await
    }

    async fn visit(
        &self,
        range: &KeyRange,
        direction: Direction,
        limit: usize,
        visit: &mut (dyn for<'k> FnMut(&'k [u8], &'k [u8]) -> bool + Send),
    ) -> StorageResult<()> {
        self.inner.visit(range, direction, limit, visit).await
    }

    async fn write_if(&self, checks: &[Check], batch: WriteBatch) -> StorageResult<bool> {
        if let Some(_fast) = self.enter_fast() {
            return self.inner.write_if(checks, batch).await;
        }
        // Durability is waited for after the next careful write may go, so writes made
        // while a snapshot is open still share syncs.
        match self.write_carefully(checks.to_vec(), batch).await? {
            Some(ticket) => {
                self.inner.wait_durable(ticket).await?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn max_batch_ops(&self) -> usize {
        self.inner.max_batch_ops()
    }
}

#[async_trait]
impl DurabilityTickets for Snapshotting {
    async fn write_if_unsynced(
        &self,
        checks: Vec<Check>,
        batch: WriteBatch,
    ) -> StorageResult<Option<SyncTicket>> {
        if let Some(_fast) = self.enter_fast() {
            return self.inner.write_if_unsynced(checks, batch).await;
        }
        // Careful writes take `serial` in the order they are first polled, and hold it
        // until applied: batches still apply in that order.
        self.write_carefully(checks, batch).await
    }

    async fn wait_durable(&self, ticket: SyncTicket) -> StorageResult<()> {
        self.inner.wait_durable(ticket).await
    }
}

#[async_trait]
impl PartitionReads for Snapshotting {
    async fn visit_partition(
        &self,
        partition: &[u8],
        range: &KeyRange,
        direction: Direction,
        limit: usize,
        visit: &mut (dyn for<'k> FnMut(&'k [u8], &'k [u8]) -> bool + Send),
    ) -> StorageResult<()> {
        self.inner
            .visit_partition(partition, range, direction, limit, visit)
            .await
    }
}

#[async_trait]
impl ReadAround for Snapshotting {
    async fn get_around(
        &self,
        key: &[u8],
        found: &mut (dyn for<'v> FnMut(Option<&'v [u8]>, Option<&'v dyn crate::storage::OpenedBlock>)
                  + Send),
    ) -> StorageResult<()> {
        self.inner.get_around(key, found).await
    }
}

/// The store as it was when the snapshot was taken, as a read-only backend. Dropping it
/// ends the snapshot.
pub struct Snapshot {
    store: Arc<Snapshotting>,
    kept: Arc<Kept>,
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        let kept = Arc::downgrade(&self.kept);
        self.store
            .open_lock()
            .retain(|open| open.strong_count() > 0 && !open.ptr_eq(&kept));
        self.store.careful.fetch_sub(1, Ordering::SeqCst);
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.kept.lock();
        f.debug_struct("Snapshot")
            .field("kept_keys", &state.values.len())
            .field("kept_bytes", &state.bytes)
            .finish()
    }
}

impl Snapshot {
    /// What the snapshot kept for the keys of `range`, in `direction`'s order, or
    /// `SnapshotTooOld` if it gave up.
    fn kept_in(&self, range: &KeyRange, direction: Direction) -> StorageResult<Vec<KeptEntry>> {
        let state = self.kept.lock();
        if state.gave_up {
            return Err(StorageError::SnapshotTooOld {
                limit: MAX_KEPT_BYTES,
            });
        }
        if range.is_empty() {
            return Ok(Vec::new());
        }
        let bounds = (range.start.clone(), range.end.clone());
        let found = state.values.range::<Vec<u8>, _>(bounds);
        let entries = found.map(|(k, v)| (k.clone(), v.clone()));
        Ok(match direction {
            Direction::Forward => entries.collect(),
            Direction::Backward => entries.rev().collect(),
        })
    }
}

/// A key and what it held when the snapshot was taken (`None`: absent).
type KeptEntry = (Vec<u8>, Option<Vec<u8>>);

#[async_trait]
impl OrderedKv for Snapshot {
    async fn get(&self, key: &[u8]) -> StorageResult<Option<Vec<u8>>> {
        // The store first, then what was kept (see the module comment for why).
        let now = self.store.inner.get(key).await?;
        let state = self.kept.lock();
        if state.gave_up {
            return Err(StorageError::SnapshotTooOld {
                limit: MAX_KEPT_BYTES,
            });
        }
        Ok(match state.values.get(key) {
            Some(then) => then.clone(),
            None => now,
        })
    }

    async fn scan(
        &self,
        range: &KeyRange,
        direction: Direction,
        limit: usize,
    ) -> StorageResult<Vec<Entry>> {
        let mut entries = Vec::new();
        self.visit(range, direction, limit, &mut |key, value| {
            entries.push((key.to_vec(), value.to_vec()));
            true
        })
        .await?;
        Ok(entries)
    }

    async fn visit(
        &self,
        range: &KeyRange,
        direction: Direction,
        limit: usize,
        visit: &mut (dyn for<'k> FnMut(&'k [u8], &'k [u8]) -> bool + Send),
    ) -> StorageResult<()> {
        let mut rest = range.clone();
        let mut given = 0;
        while given < limit && !rest.is_empty() {
            let page = self.store.inner.scan(&rest, direction, MERGE_PAGE).await?;
            let last_page = page.len() < MERGE_PAGE;
            // The keys this page speaks for: all of `rest` if the store has no more,
            // else up to its last key. What was kept is read after the store.
            let covered = match (last_page, page.last()) {
                (false, Some((last, _))) => covered_up_to(&rest, last, direction),
                _ => rest.clone(),
            };
            let kept = self.kept_in(&covered, direction)?;
            for (key, value) in merge(page.iter(), kept, direction) {
                if given == limit {
                    return Ok(());
                }
                given += 1;
                if !visit(&key, &value) {
                    return Ok(());
                }
            }
            match (last_page, page.last()) {
                (false, Some((last, _))) => rest = rest.resume_after(last, direction),
                _ => break,
            }
        }
        Ok(())
    }

    async fn write_if(&self, _checks: &[Check], _batch: WriteBatch) -> StorageResult<bool> {
        Err(StorageError::ReadOnlySnapshot)
    }
}

/// The part of `range` from its start (in `direction`) up to and including `last`.
fn covered_up_to(range: &KeyRange, last: &[u8], direction: Direction) -> KeyRange {
    match direction {
        Direction::Forward => KeyRange {
            start: range.start.clone(),
            end: Bound::Included(last.to_vec()),
        },
        Direction::Backward => KeyRange {
            start: Bound::Included(last.to_vec()),
            end: range.end.clone(),
        },
    }
}

/// The store's entries with what the snapshot kept laid over them, in `direction`'s
/// order: a kept value replaces the stored one, a kept absence removes the key, and a
/// kept value of a key the store no longer has puts it back.
fn merge<'e>(
    stored: impl Iterator<Item = &'e Entry>,
    kept: Vec<KeptEntry>,
    direction: Direction,
) -> Vec<Entry> {
    let before = |a: &[u8], b: &[u8]| match direction {
        Direction::Forward => a < b,
        Direction::Backward => a > b,
    };
    let mut out = Vec::new();
    let mut stored = stored.peekable();
    let mut kept = kept.into_iter().peekable();
    loop {
        let take_stored = match (stored.peek(), kept.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((s, _)), Some((k, _))) => before(s, k),
        };
        if take_stored {
            if let Some((key, value)) = stored.next() {
                out.push((key.clone(), value.clone()));
            }
            continue;
        }
        if let Some((key, then)) = kept.next() {
            if stored.peek().is_some_and(|(s, _)| *s == key) {
                stored.next();
            }
            if let Some(value) = then {
                out.push((key, value));
            }
        }
    }
    out
}

#[async_trait]
impl DurabilityTickets for Snapshot {
    async fn write_if_unsynced(
        &self,
        _checks: Vec<Check>,
        _batch: WriteBatch,
    ) -> StorageResult<Option<SyncTicket>> {
        Err(StorageError::ReadOnlySnapshot)
    }
}

#[async_trait]
impl PartitionReads for Snapshot {}

#[async_trait]
impl ReadAround for Snapshot {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemoryBackend;

    fn put(key: &str, value: &str) -> WriteBatch {
        let mut batch = WriteBatch::default();
        batch.put(key.as_bytes().to_vec(), value.as_bytes().to_vec());
        batch
    }

    fn delete(key: &str) -> WriteBatch {
        let mut batch = WriteBatch::default();
        batch.delete(key.as_bytes().to_vec());
        batch
    }

    async fn keys_and_values(backend: &dyn Backend, direction: Direction) -> Vec<String> {
        let all = KeyRange {
            start: Bound::Unbounded,
            end: Bound::Unbounded,
        };
        let entries = backend
            .scan(&all, direction, usize::MAX)
            .await
            .expect("scan");
        entries
            .into_iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    String::from_utf8_lossy(&k),
                    String::from_utf8_lossy(&v)
                )
            })
            .collect()
    }

    #[tokio::test]
    async fn a_snapshot_reads_the_store_as_it_was_when_taken() {
        let store = Arc::new(Snapshotting::new(Arc::new(MemoryBackend::new())));
        for (k, v) in [("a", "1"), ("b", "2"), ("c", "3")] {
            store.write(put(k, v)).await.expect("write");
        }
        let snapshot = store.open_snapshot().await;
        store.write(put("a", "10")).await.expect("write");
        store.write(put("a", "11")).await.expect("write");
        store.write(delete("b")).await.expect("write");
        store.write(put("bb", "new")).await.expect("write");
        store.write(put("d", "4")).await.expect("write");

        assert_eq!(snapshot.get(b"a").await.expect("get"), Some(b"1".to_vec()));
        assert_eq!(snapshot.get(b"b").await.expect("get"), Some(b"2".to_vec()));
        assert_eq!(snapshot.get(b"bb").await.expect("get"), None);
        assert_eq!(
            keys_and_values(&snapshot, Direction::Forward).await,
            ["a=1", "b=2", "c=3"]
        );
        assert_eq!(
            keys_and_values(&snapshot, Direction::Backward).await,
            ["c=3", "b=2", "a=1"]
        );
        assert_eq!(
            keys_and_values(store.as_ref(), Direction::Forward).await,
            ["a=11", "bb=new", "c=3", "d=4"]
        );
        let writing = snapshot.write(put("x", "1")).await;
        assert!(matches!(writing, Err(StorageError::ReadOnlySnapshot)));
    }

    #[tokio::test]
    async fn snapshot_scans_honour_limits_across_pages() {
        let store = Arc::new(Snapshotting::new(Arc::new(MemoryBackend::new())));
        for i in 0..1000 {
            store
                .write(put(&format!("k{i:04}"), "old"))
                .await
                .expect("write");
        }
        let snapshot = store.open_snapshot().await;
        for i in (0..1000).step_by(2) {
            store
                .write(delete(&format!("k{i:04}")))
                .await
                .expect("write");
            store
                .write(put(&format!("k{i:04}x"), "new"))
                .await
                .expect("write");
        }
        let range = KeyRange::prefix(b"k");
        let first = snapshot
            .scan(&range, Direction::Forward, 600)
            .await
            .expect("scan");
        assert_eq!(first.len(), 600);
        assert!(first.iter().all(|(_, v)| v == b"old"));
        assert_eq!(first[599].0, b"k0599".to_vec());
        let last = snapshot
            .scan(&range, Direction::Backward, 3)
            .await
            .expect("scan");
        let keys: Vec<_> = last.iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(
            keys,
            [b"k0999".to_vec(), b"k0998".to_vec(), b"k0997".to_vec()]
        );
        drop(snapshot);
        let now = store
            .scan(&range, Direction::Forward, usize::MAX)
            .await
            .expect("scan");
        assert_eq!(now.len(), 1000);
    }

    #[tokio::test]
    async fn writes_after_the_snapshot_ends_are_fast_again_and_kept_nowhere() {
        let store = Arc::new(Snapshotting::new(Arc::new(MemoryBackend::new())));
        store.write(put("a", "1")).await.expect("write");
        let first = store.open_snapshot().await;
        store.write(put("a", "2")).await.expect("write");
        let second = store.open_snapshot().await;
        store.write(put("a", "3")).await.expect("write");
        assert_eq!(first.get(b"a").await.expect("get"), Some(b"1".to_vec()));
        assert_eq!(second.get(b"a").await.expect("get"), Some(b"2".to_vec()));
        drop(first);
        drop(second);
        assert_eq!(store.careful.load(Ordering::SeqCst), 0);
        assert!(store.open_lock().is_empty());
        assert!(store.enter_fast().is_some());
    }

    #[tokio::test]
    async fn a_failed_conditional_write_keeps_the_snapshot_right() {
        let store = Arc::new(Snapshotting::new(Arc::new(MemoryBackend::new())));
        store.write(put("a", "1")).await.expect("write");
        let snapshot = store.open_snapshot().await;
        let wrong = Check {
            key: b"a".to_vec(),
            expected: Some(b"9".to_vec()),
        };
        let applied = store
            .write_if(&[wrong], put("a", "2"))
            .await
            .expect("write");
        assert!(!applied);
        store.write(put("a", "3")).await.expect("write");
        assert_eq!(snapshot.get(b"a").await.expect("get"), Some(b"1".to_vec()));
    }
}
