//! The row and partition caches, as a backend that wraps another (`Cached<B>`), the way
//! TiKV's `hybrid_engine` wraps its disk engine. Point reads go through a cache of single
//! rows (`row_cache`); range reads the engine names a partition for
//! (`PartitionReads::visit_partition`) through a cache of whole partitions
//! (`partition_cache`); a point read the inner backend served from a block of rows offers
//! the block's other rows to the row cache (`read_around`, over `ReadAround`). Everything
//! else passes through.
//!
//! The invalidation rule, which both caches keep. Every write begins in both caches
//! before the inner backend is asked to apply it, and ends in them only once the inner
//! call has returned: its span covers its whole apply. Beginning removes what the write
//! touches (its keys from the row cache; every partition holding one of them from the
//! partition cache) and counts the write under way; ending counts it done. A fill (a row,
//! or a partition's copy, read from the inner backend) takes a ticket before it reads,
//! and none is handed out while a write to its shard or partition is under way; the fill
//! is kept only if no write to its shard or partition has begun since the ticket.
//!
//! Why that is enough. Take a fill and a write of something it holds. If the write began
//! before the ticket, it had ended by then, since no ticket is handed out while it is
//! under way: it had applied, and the fill's read saw it. If it began after the ticket
//! and before the fill was offered, the offer is refused. If it began after the offer, it
//! removed what the fill put in. So whatever a cache holds is what the inner backend
//! holds, and no read returns a value older than a write that has begun to apply.
//!
//! A write's span must really cover its apply, also when its future is dropped before it
//! returns: every backend's writes are applied before their future resolves or not at
//! all (`OrderedKv`). The guards take only the caches' own short locks, and no cache lock
//! is held while the inner backend is called, so a write waiting on the inner backend
//! with its guards out holds up no one. What the span costs is that a row cache shard or
//! partition a write touches takes no fills until the write returns, for a durable write
//! after its sync.
//!
//! The caches are correct only over a backend no one else writes to: a write that does
//! not pass through here is never seen. sled in one process is such a backend.

mod partition_cache;
mod read_around;
mod row_cache;

use crate::storage::{
    Backend, Check, Direction, DurabilityTickets, Entry, KeyRange, Mutation, OrderedKv,
    PartitionReads, ReadAround, StorageResult, SyncTicket, WriteBatch,
};
use async_trait::async_trait;
use partition_cache::{Lookup, Partition, PartitionBuilder, PartitionCache};
use row_cache::{Probe, RowCache, RowWriteGuard};

/// How much memory the caches may hold.
#[derive(Debug, Clone)]
pub struct CacheOptions {
    /// Memory for whole partitions kept for range reads (`partition_cache`); 0 turns
    /// the cache off.
    pub partition_cache_bytes: u64,
    /// Memory for single rows kept for point reads (`row_cache`); 0 turns the cache off.
    pub row_cache_bytes: u64,
}

impl Default for CacheOptions {
    fn default() -> Self {
        CacheOptions {
            partition_cache_bytes: 512 * 1024 * 1024,
            row_cache_bytes: 512 * 1024 * 1024,
        }
    }
}

/// `B` with the row and partition caches in front of it.
pub struct Cached<B> {
    inner: B,
    /// Whole partitions kept for range reads; `None` when turned off.
    partitions: Option<PartitionCache>,
    /// Single rows kept for point reads; `None` when turned off.
    rows: Option<RowCache>,
}

/// A write under way in both caches; dropped once the inner backend has applied it.
struct Writing<'c> {
    _partitions: Option<partition_cache::WriteGuard<'c>>,
    _rows: Option<RowWriteGuard<'c>>,
}

impl<B: Backend> Cached<B> {
    /// Puts caches of the sizes `options` gives in front of `inner`.
    pub fn new(inner: B, options: CacheOptions) -> Self {
        let budget = |bytes: u64| usize::try_from(bytes).unwrap_or(usize::MAX);
        Cached {
            inner,
            partitions: (options.partition_cache_bytes > 0)
                .then(|| PartitionCache::new(budget(options.partition_cache_bytes))),
            rows: (options.row_cache_bytes > 0)
                .then(|| RowCache::new(budget(options.row_cache_bytes))),
        }
    }

    /// The backend the caches are in front of.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    /// How many rows the row cache holds (0 without one).
    pub fn cached_rows(&self) -> usize {
        self.rows.as_ref().map_or(0, |rows| rows.len())
    }

    /// Begins a write of `keys` in both caches (the module doc's rule); the write ends
    /// when the returned guards drop, which must be after the inner backend applied it.
    fn begin_write<'k>(&self, keys: impl Iterator<Item = &'k [u8]> + Clone) -> Writing<'_> {
        Writing {
            _rows: self
                .rows
                .as_ref()
                .map(|rows| rows.begin_write(keys.clone())),
            _partitions: self
                .partitions
                .as_ref()
                .map(|partitions| partitions.begin_write(keys)),
        }
    }

    /// Copies the partition `prefix` out of the inner backend, or `None` if it is too
    /// large to cache.
    async fn copy_partition(&self, prefix: &[u8]) -> StorageResult<Option<Partition>> {
        let mut builder = PartitionBuilder::new();
        let whole = KeyRange::prefix(prefix);
        self.inner
            .visit(&whole, Direction::Forward, usize::MAX, &mut |key, value| {
                builder.push(key, value)
            })
            .await?;
        Ok(builder.finish())
    }
}

/// The keys a batch writes.
fn keys_of(batch: &WriteBatch) -> impl Iterator<Item = &[u8]> + Clone {
    batch.mutations.iter().map(Mutation::key)
}

#[async_trait]
impl<B: Backend> OrderedKv for Cached<B> {
    async fn get(&self, key: &[u8]) -> StorageResult<Option<Vec<u8>>> {
        let Some(rows) = &self.rows else {
            return self.inner.get(key).await;
        };
        let mut ticket = match rows.probe(key) {
            Probe::Hit(value) => return Ok(Some(value)),
            Probe::Miss(ticket) => ticket,
        };
        let mut read = None;
        self.inner
            .get_around(key, &mut |value, block| {
                if let (Some(ticket), Some(value)) = (ticket.take(), value) {
                    rows.fill(ticket, key, value);
                }
                if let Some(block) = block {
                    read_around::offer_block(rows, key, block);
                }
                read = value.map(<[u8]>::to_vec);
            })
            .await?;
        Ok(read)
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
        let _writing = self.begin_write(keys_of(&batch));
        self.inner.write_if(checks, batch).await
    }

    fn max_batch_ops(&self) -> usize {
        self.inner.max_batch_ops()
    }

    async fn write(&self, batch: WriteBatch) -> StorageResult<()> {
        let _writing = self.begin_write(keys_of(&batch));
        self.inner.write(batch).await
    }

    async fn compare_and_swap(
        &self,
        key: &[u8],
        expected: Option<Vec<u8>>,
        value: Option<Vec<u8>>,
    ) -> StorageResult<bool> {
        let _writing = self.begin_write(std::iter::once(key));
        self.inner.compare_and_swap(key, expected, value).await
    }
}

#[async_trait]
impl<B: Backend> DurabilityTickets for Cached<B> {
    /// Begun in the caches and handed to the inner backend in the same first poll, so
    /// batches still apply in the order their futures are first polled.
    async fn write_if_unsynced(
        &self,
        checks: Vec<Check>,
        batch: WriteBatch,
    ) -> StorageResult<Option<SyncTicket>> {
        let _writing = self.begin_write(keys_of(&batch));
        self.inner.write_if_unsynced(checks, batch).await
    }

    async fn wait_durable(&self, ticket: SyncTicket) -> StorageResult<()> {
        self.inner.wait_durable(ticket).await
    }
}

#[async_trait]
impl<B: Backend> PartitionReads for Cached<B> {
    async fn visit_partition(
        &self,
        partition: &[u8],
        range: &KeyRange,
        direction: Direction,
        limit: usize,
        visit: &mut (dyn for<'k> FnMut(&'k [u8], &'k [u8]) -> bool + Send),
    ) -> StorageResult<()> {
        let cache = match &self.partitions {
            Some(cache) if !partition.is_empty() && range.within_prefix(partition) => cache,
            _ => {
                return self
                    .inner
                    .visit_partition(partition, range, direction, limit, visit)
                    .await
            }
        };
        let copy = match cache.lookup(partition) {
            Lookup::Hit(copy) => Some(copy),
            Lookup::Load(ticket) => match self.copy_partition(partition).await {
                Ok(copy) => cache.offer(partition, ticket, copy),
                Err(e) => {
                    cache.abandon(partition, ticket);
                    return Err(e);
                }
            },
            Lookup::Miss => None,
        };
        match copy {
            Some(copy) => {
                copy.visit(range, direction, limit, visit);
                Ok(())
            }
            None => {
                self.inner
                    .visit_partition(partition, range, direction, limit, visit)
                    .await
            }
        }
    }
}

/// The caches store no blocks: a point read through them lends none.
impl<B: Backend> ReadAround for Cached<B> {}
