//! The storage layer: a small ordered key-value interface and its implementations.
//!
//! The engine stores everything (catalog and rows) as ordered byte keys through the
//! `Backend` trait, so it knows nothing of sled; a backend knows nothing of tables.
//! `Backend` is a core every backend implements (`OrderedKv`) and capabilities beside it
//! (`DurabilityTickets`, `PartitionReads`, `ReadAround`). `memory` is the in-memory
//! backend; `sled` holds everything that knows sled; `cached` wraps any backend in the
//! row and partition caches; `snapshots` wraps any backend so that its state at a moment
//! can be read while writes go on. Every backend must pass the conformance suite in
//! `tests/storage_conformance.rs`.

mod cached;
mod memory;
mod sled;
mod snapshots;

pub use cached::{CacheOptions, Cached};
pub use memory::MemoryBackend;
pub use sled::{SledBackend, SledOptions};
pub use snapshots::{Snapshot, Snapshotting, MAX_KEPT_BYTES};

use async_trait::async_trait;
use std::ops::Bound;

/// A key-value pair as stored.
pub type Entry = (Vec<u8>, Vec<u8>);

/// Errors of the storage layer. Details stay in the message; the engine maps every variant
/// to an internal error the client sees without internals.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("storage I/O error: {0}")]
    Io(String),
    #[error("storage is corrupt: {0}")]
    Corrupt(String),
    #[error("write batch of {ops} operations exceeds the backend limit of {limit}")]
    BatchTooLarge { ops: usize, limit: usize },
    /// A read snapshot kept more than `limit` bytes of values written since it was
    /// taken, and gave them up (`snapshots`).
    #[error("snapshot too old: more than {limit} bytes were written while it was open")]
    SnapshotTooOld { limit: usize },
    /// A write through a read snapshot, which is read-only.
    #[error("a read snapshot cannot be written")]
    ReadOnlySnapshot,
}

pub type StorageResult<T> = Result<T, StorageError>;

/// Scan order over keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Backward,
}

/// A range of keys with inclusive or exclusive bounds on either end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRange {
    pub start: Bound<Vec<u8>>,
    pub end: Bound<Vec<u8>>,
}

impl KeyRange {
    /// Every key that starts with `prefix`.
    pub fn prefix(prefix: &[u8]) -> Self {
        let end = match prefix_successor(prefix) {
            Some(next) => Bound::Excluded(next),
            None => Bound::Unbounded,
        };
        KeyRange {
            start: Bound::Included(prefix.to_vec()),
            end,
        }
    }

    /// `[start, end)`.
    pub fn half_open(start: Vec<u8>, end: Vec<u8>) -> Self {
        KeyRange {
            start: Bound::Included(start),
            end: Bound::Excluded(end),
        }
    }

    /// Whether the range can hold no key at all (start at or past end).
    pub fn is_empty(&self) -> bool {
        match (&self.start, &self.end) {
            (Bound::Unbounded, _) | (_, Bound::Unbounded) => false,
            (Bound::Included(s), Bound::Included(e)) => s > e,
            (Bound::Included(s), Bound::Excluded(e))
            | (Bound::Excluded(s), Bound::Included(e))
            | (Bound::Excluded(s), Bound::Excluded(e)) => s >= e,
        }
    }

    /// Whether every key of this range starts with `prefix`.
    pub fn within_prefix(&self, prefix: &[u8]) -> bool {
        let starts_inside = match &self.start {
            Bound::Unbounded => prefix.is_empty(),
            Bound::Included(k) | Bound::Excluded(k) => k.as_slice() >= prefix,
        };
        let ends_inside = match (prefix_successor(prefix), &self.end) {
            (None, _) => true,
            (Some(_), Bound::Unbounded) => false,
            (Some(next), Bound::Excluded(k)) => *k <= next,
            (Some(next), Bound::Included(k)) => *k < next,
        };
        starts_inside && ends_inside
    }

    /// The part of this range after `key` (forward) or before it (backward), used to
    /// resume a scan where a page ended.
    pub fn resume_after(&self, key: &[u8], direction: Direction) -> KeyRange {
        match direction {
            Direction::Forward => KeyRange {
                start: Bound::Excluded(key.to_vec()),
                end: self.end.clone(),
            },
            Direction::Backward => KeyRange {
                start: self.start.clone(),
                end: Bound::Excluded(key.to_vec()),
            },
        }
    }
}

/// The smallest key greater than every key with this prefix, if any.
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut next = prefix.to_vec();
    while let Some(last) = next.pop() {
        if last < u8::MAX {
            next.push(last + 1);
            return Some(next);
        }
    }
    None
}

/// One mutation in a write batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
}

impl Mutation {
    /// The key the mutation writes.
    pub fn key(&self) -> &[u8] {
        match self {
            Mutation::Put(key, _) | Mutation::Delete(key) => key,
        }
    }
}

/// An expectation checked atomically before a conditional batch is applied:
/// the key holds exactly `expected` (`None` = the key is absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub key: Vec<u8>,
    pub expected: Option<Vec<u8>>,
}

/// A set of mutations applied all-or-nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    pub mutations: Vec<Mutation>,
}

impl WriteBatch {
    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.mutations.push(Mutation::Put(key, value));
    }

    pub fn delete(&mut self, key: Vec<u8>) {
        self.mutations.push(Mutation::Delete(key));
    }

    pub fn len(&self) -> usize {
        self.mutations.len()
    }

    pub fn is_empty(&self) -> bool {
        self.mutations.is_empty()
    }
}

/// Names an applied write for `DurabilityTickets::wait_durable`; later writes have larger
/// tickets, so waiting for the largest covers them all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct SyncTicket(pub(crate) u64);

/// The ordered-bytes core every backend implements: byte keys in order, point and range
/// reads, and atomic batches of writes, conditional or not. Writes are atomic per call and
/// durable when the call returns; a conditional write applies only if every check holds,
/// atomically.
///
/// A write is applied before its future resolves. A future dropped before then leaves
/// its write applied or not, never still to come: the caches in front of a backend end a
/// write when its future is gone (`storage/cached.rs`). This holds for every write,
/// `DurabilityTickets` ones included.
///
/// What a backend may offer beyond ordered bytes is a capability trait of its own
/// (`DurabilityTickets`, `PartitionReads`, `ReadAround`), as TiKV's `engine_traits` splits
/// an engine's capabilities; `Backend` is all of them together.
#[async_trait]
pub trait OrderedKv: Send + Sync + 'static {
    /// The value stored under `key`.
    async fn get(&self, key: &[u8]) -> StorageResult<Option<Vec<u8>>>;

    /// Up to `limit` entries of `range`, in key order or reverse key order.
    async fn scan(
        &self,
        range: &KeyRange,
        direction: Direction,
        limit: usize,
    ) -> StorageResult<Vec<Entry>>;

    /// Calls `visit` with up to `limit` entries of `range`, in order, until it returns
    /// `false`. Backends that keep values in memory override it to lend their buffers
    /// instead of copying each entry out, which is most of the cost of a short read.
    async fn visit(
        &self,
        range: &KeyRange,
        direction: Direction,
        limit: usize,
        visit: &mut (dyn for<'k> FnMut(&'k [u8], &'k [u8]) -> bool + Send),
    ) -> StorageResult<()> {
        for (key, value) in self.scan(range, direction, limit).await? {
            if !visit(&key, &value) {
                break;
            }
        }
        Ok(())
    }

    /// Applies `batch` only if every check holds; returns whether it was applied.
    /// Acknowledged (returned `true`) batches are durable.
    async fn write_if(&self, checks: &[Check], batch: WriteBatch) -> StorageResult<bool>;

    /// The most operations (checks plus mutations) one `write_if` may carry; past it the
    /// write fails with `StorageError::BatchTooLarge`. The engine splits work that is
    /// allowed to be split to stay within it.
    fn max_batch_ops(&self) -> usize {
        usize::MAX
    }

    /// Applies `batch` unconditionally.
    async fn write(&self, batch: WriteBatch) -> StorageResult<()> {
        self.write_if(&[], batch).await.map(|_| ())
    }

    /// Stores `value` only if `key` currently holds `expected`.
    async fn compare_and_swap(
        &self,
        key: &[u8],
        expected: Option<Vec<u8>>,
        value: Option<Vec<u8>>,
    ) -> StorageResult<bool> {
        let mut batch = WriteBatch::default();
        match value {
            Some(v) => batch.put(key.to_vec(), v),
            None => batch.delete(key.to_vec()),
        }
        let check = Check {
            key: key.to_vec(),
            expected,
        };
        self.write_if(&[check], batch).await
    }
}

/// Capability: writes acknowledged before they are durable, with a ticket to wait for
/// that. A bulk load that acknowledges once at its end writes its batches this way and
/// waits once, so its batches share syncs instead of waiting for one each. A backend
/// without a separate sync step implements it empty: its writes are durable when they
/// return, and the default waits for nothing.
#[async_trait]
pub trait DurabilityTickets: OrderedKv {
    /// Like `write_if`, but returns once the batch is applied and visible, before it is
    /// durable: the ticket, handed to `wait_durable`, waits for that. The checks are
    /// handed over, not borrowed: a backend may apply the batch on another thread without
    /// copying a bulk load's keys.
    ///
    /// Batches apply in the order their futures are first polled: within that first poll
    /// a backend applies the batch, or queues it behind the batches before it. A bulk
    /// load relies on this to keep two batches in flight.
    async fn write_if_unsynced(
        &self,
        checks: Vec<Check>,
        batch: WriteBatch,
    ) -> StorageResult<Option<SyncTicket>> {
        Ok(self
            .write_if(&checks, batch)
            .await?
            .then_some(SyncTicket::default()))
    }

    /// Waits until every batch written up to `ticket` is durable.
    async fn wait_durable(&self, _ticket: SyncTicket) -> StorageResult<()> {
        Ok(())
    }
}

/// Capability: range reads that name their partition. The engine reads within one Table
/// Store partition with `visit_partition`, which says that every key of the range starts
/// with the partition's key prefix, so a backend that keeps whole partitions in memory
/// can serve the read from there. A backend without such a cache implements it empty:
/// the read is a plain `visit`.
#[async_trait]
pub trait PartitionReads: OrderedKv {
    /// Like `visit`, for a range whose keys all start with `partition`, the key prefix of
    /// one Table Store partition.
    async fn visit_partition(
        &self,
        _partition: &[u8],
        range: &KeyRange,
        direction: Direction,
        limit: usize,
        visit: &mut (dyn for<'k> FnMut(&'k [u8], &'k [u8]) -> bool + Send),
    ) -> StorageResult<()> {
        self.visit(range, direction, limit, visit).await
    }
}

/// Capability: read-around, for a backend that stores rows together in blocks (sled's
/// packs). A point read served from a block lends it to the caller, so that a cache over
/// the backend can take the block's other rows too, as a buffer pool caches the whole page
/// a row was read from (`storage/cached/read_around.rs`). A backend that stores no blocks
/// implements it empty: the read is a plain `get` and lends nothing.
#[async_trait]
pub trait ReadAround: OrderedKv {
    /// Reads `key` as `get` does, then calls `found` once with the value and the block it
    /// was read from, if it was read from one.
    async fn get_around(
        &self,
        key: &[u8],
        found: &mut (dyn for<'v> FnMut(Option<&'v [u8]>, Option<&'v dyn OpenedBlock>) + Send),
    ) -> StorageResult<()> {
        let value = self.get(key).await?;
        found(value.as_deref(), None);
        Ok(())
    }
}

/// A block of rows stored together, as the point read that lends it found it
/// (`ReadAround`).
pub trait OpenedBlock {
    /// Bytes the block takes.
    fn size(&self) -> usize;

    /// How many blocks the backend knows of, so a cache can tell whether it could hold
    /// much of them.
    fn known_blocks(&self) -> usize;

    /// Calls `each` with the key of every row in the block as it was read, in key order.
    fn keys<'b>(&'b self, each: &mut dyn FnMut(&'b [u8])) -> StorageResult<()>;

    /// Reads the block again, now, and calls `each` with the index in `keys` and the value
    /// of every one of `keys` that the block holds the current value of: not one deleted
    /// since, nor one a newer copy stored elsewhere shadows. Keys it cannot vouch for are
    /// left out, all of them when the block has gone.
    fn read_again(&self, keys: &[&[u8]], each: &mut dyn FnMut(usize, &[u8])) -> StorageResult<()>;
}

/// A backend as the engine holds it (`Arc<dyn Backend>`): the ordered-bytes core and
/// every capability, each of which a backend implements, if only empty. Every backend
/// must pass the conformance suite in `tests/storage_conformance.rs`.
pub trait Backend: OrderedKv + DurabilityTickets + PartitionReads + ReadAround {}

impl<T: OrderedKv + DurabilityTickets + PartitionReads + ReadAround + ?Sized> Backend for T {}
