//! The embedded default backend: sled in one directory, plus a write-ahead log. Keys live
//! in sled's default tree, or, when a bulk load wrote them, in packs of many rows in a
//! second tree; `store` reads the two as one ordered map.
//!
//! A write is durable once its record in the write-ahead log (`wal`) is synced; concurrent
//! writers share that sync (group commit). sled itself is synced at checkpoints, on close,
//! and when a bulk load waits for its batches: those are kept in sled only, and the log
//! holds just their sequence numbers (`DurableBy::SledSync`). sled 0.34's `flush()` only
//! calls `sync_file_range` on its log and never syncs blob files (values over a quarter
//! segment), so every sync of sled follows it with `fsync` of the log, of new blob files
//! and of their directory; a checkpoint does so before any log file is deleted.
//! Writes are applied under one mutex so conditional checks and their batch are atomic,
//! and so records reach the log in the order sled applied them; the expensive part, the
//! sync, happens outside it.
//!
//! The row and partition caches are not here: they wrap this backend like any other
//! (`storage/cached.rs`). A point read that opened a pack lends it to them
//! (`ReadAround`, `opened_pack`).
//!
//! The empty key is reserved: it holds a log sequence number up to which sled holds every
//! record (see `Store::apply` and `checkpoint`).

use super::apply_thread::ApplyThread;
use super::opened_pack::OpenedPack;
use super::store::{Bytes, Store};
use super::sync::{GroupCommit, Syncer};
use super::wal::{self, Wal, SEQUENCE_KEY};
use crate::storage::{
    Check, Direction, DurabilityTickets, Entry, KeyRange, Mutation, OpenedBlock, OrderedKv,
    PartitionReads, ReadAround, StorageError, StorageResult, SyncTicket, WriteBatch,
};
use async_trait::async_trait;
use std::collections::HashSet;
use std::fs::File;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How the sled backend is opened.
#[derive(Debug, Clone)]
pub struct SledOptions {
    /// Sync every acknowledged write to disk (group commit). Off only for throwaway data.
    pub durable: bool,
    /// sled's page cache size in bytes. sled counts more than the memory a node holds:
    /// at 1,000,000 rows after an UPDATE run, 512 MB had it dropping nodes at 750 MiB
    /// resident, and 2,048 MB took no more.
    pub cache_capacity: u64,
    /// When the write-ahead log has grown this many bytes, sled is synced and the log
    /// files it then covers are deleted (a checkpoint).
    pub checkpoint_bytes: u64,
}

impl Default for SledOptions {
    fn default() -> Self {
        SledOptions {
            durable: true,
            cache_capacity: 2048 * 1024 * 1024,
            checkpoint_bytes: 64 * 1024 * 1024,
        }
    }
}

/// sled behind the `Backend` trait.
pub struct SledBackend {
    writer: Writer,
    sled_syncer: Arc<SledSyncer>,
    /// Deletes checkpointed log files off the sync thread; waited for on close.
    log_removal: Arc<LogRemoval>,
    /// Applies bulk batches (`write_if_unsynced`) in the order they are handed over.
    bulk: ApplyThread,
}

/// What applying a batch needs; cheap to clone, so a batch can be applied on another
/// thread (`write_if_unsynced`).
#[derive(Clone)]
struct Writer {
    /// sled's trees: loose keys and packs (`store`).
    store: Arc<Store>,
    /// Held while a batch is checked and applied; holds the last record's sequence number.
    write_lock: Arc<Mutex<u64>>,
    /// The write-ahead log and the sync thread that writes it, when durable.
    durability: Option<(Arc<Wal>, Arc<GroupCommit>)>,
    /// Syncs sled, for the batches kept in sled only (`DurableBy::SledSync`).
    sled: Arc<SledSyncer>,
    sled_only: Arc<SledOnlyBatches>,
}

/// Group-commit numbers of the batches kept in sled only, not in the log.
#[derive(Default)]
struct SledOnlyBatches {
    /// The newest such batch applied.
    newest: AtomicU64,
    /// Every such batch up to this one is durable: a sled sync began after it applied.
    synced: AtomicU64,
}

fn io_err(e: impl std::fmt::Display) -> StorageError {
    StorageError::Io(e.to_string())
}

impl SledBackend {
    /// Opens (or creates) the database in `dir`, replaying the write-ahead log.
    pub fn open(dir: &Path, options: SledOptions) -> StorageResult<Self> {
        std::fs::create_dir_all(dir).map_err(io_err)?;
        let config = sled::Config::new()
            .path(dir)
            .cache_capacity(options.cache_capacity);
        let db = open_when_unlocked(&config).map_err(io_err)?;
        let store = Arc::new(Store::open(db.clone())?);
        let sled_syncer = Arc::new(SledSyncer {
            db: db.clone(),
            log: File::open(dir.join("db")).map_err(io_err)?,
            dir: dir.to_path_buf(),
            synced_blobs: Mutex::new(HashSet::new()),
        });
        // Recovery runs in every mode: a log left by a durable run must not be replayed
        // later over newer writes.
        let wal_dir = dir.join("wal");
        let last = replay(&store, &wal_dir)?;
        // The log is deleted below: sled must know it holds everything up to `last`.
        db.insert(SEQUENCE_KEY, &last.to_be_bytes())
            .map_err(io_err)?;
        sled_syncer.sync().map_err(io_err)?;
        // The directory entries of a new database must survive a crash too.
        sled_syncer.sync_dir(dir).map_err(io_err)?;
        let wal = Arc::new(Wal::start_fresh(&wal_dir, options.checkpoint_bytes).map_err(io_err)?);
        let write_lock = Arc::new(Mutex::new(last));
        let log_removal = Arc::new(LogRemoval::default());
        let durability = if options.durable {
            let syncer = WalSyncer {
                wal: Arc::clone(&wal),
                sled: Arc::clone(&sled_syncer),
                write_lock: Arc::clone(&write_lock),
                log_removal: Arc::clone(&log_removal),
            };
            Some((wal, GroupCommit::start(Arc::new(syncer))))
        } else {
            None
        };
        Ok(SledBackend {
            writer: Writer {
                store,
                write_lock,
                durability,
                sled: Arc::clone(&sled_syncer),
                sled_only: Arc::default(),
            },
            sled_syncer,
            log_removal,
            bulk: ApplyThread::start("pgwide-apply").map_err(io_err)?,
        })
    }

    /// How many packs hold bulk-loaded entries (see `store`).
    pub fn packs(&self) -> usize {
        self.writer.store.packs()
    }

    /// How many key spans the packs may lie in (see `pack_spans`).
    pub fn pack_spans(&self) -> usize {
        self.writer.store.pack_spans()
    }

    /// Approximate bytes sled occupies on disk.
    pub fn size_on_disk(&self) -> u64 {
        self.writer.store.loose().size_on_disk().unwrap_or(0)
    }

    /// Makes everything written durable in sled itself, stops the sync thread and
    /// deletes the log files sled now covers.
    pub fn close(&self) -> StorageResult<()> {
        // Bulk batches handed over before the server stopped (a COPY cut off mid-way)
        // are applied first, so the checkpoint covers them and nothing is applied after
        // it, into a log no sync thread writes any more.
        self.bulk.drain();
        if let Some((wal, commit)) = &self.writer.durability {
            commit.shutdown();
            self.log_removal.wait();
            let old =
                checkpoint(wal, &self.sled_syncer, &self.writer.write_lock).map_err(io_err)?;
            wal.remove(old).map_err(io_err)?;
        } else {
            self.sled_syncer.sync().map_err(io_err)?;
        }
        Ok(())
    }
}

impl Writer {
    /// Checks and applies a batch; returns its group-commit number (0 when not durable),
    /// or `None` when a check failed.
    fn apply(
        &self,
        checks: &[Check],
        batch: WriteBatch,
        durable_by: DurableBy,
    ) -> StorageResult<Option<u64>> {
        if batch.mutations.iter().any(|m| m.key() == SEQUENCE_KEY) {
            return Err(StorageError::Io("the empty key is reserved".into()));
        }
        let mut last = self.write_lock.lock().unwrap_or_else(|p| p.into_inner());
        if !self.checks_hold(checks)? {
            return Ok(None);
        }
        let sequence = *last + 1;
        let mut record = Vec::new();
        if self.durability.is_some() {
            // A batch kept in sled only still takes its place in the log, as a record
            // without mutations, so recovery finds no gap in the numbers.
            let logged: &[Mutation] = match durable_by {
                DurableBy::SledSync => &[],
                DurableBy::LogNow | DurableBy::LogLater => &batch.mutations,
            };
            wal::encode_record(sequence, logged, &mut record);
        }
        self.store.apply(sequence, batch.mutations)?;
        *last = sequence;
        Ok(Some(match &self.durability {
            Some((wal, commit)) => {
                wal.append_encoded(&record);
                match durable_by {
                    DurableBy::LogNow => commit.register(),
                    DurableBy::LogLater => commit.register_unwaited(record.len()),
                    DurableBy::SledSync => {
                        let ticket = commit.register_unwaited(record.len());
                        self.sled_only.newest.fetch_max(ticket, Ordering::SeqCst);
                        ticket
                    }
                }
            }
            None => 0,
        }))
    }

    /// The newest batch kept in sled only, if a sled sync is needed for every such
    /// batch up to `ticket` to be durable.
    fn sled_sync_needed(&self, ticket: u64) -> Option<u64> {
        let newest = self.sled_only.newest.load(Ordering::SeqCst);
        (self.sled_only.synced.load(Ordering::SeqCst) < newest.min(ticket)).then_some(newest)
    }

    /// Syncs sled, which makes every batch kept in sled only up to `newest` durable:
    /// they were all applied before `newest` was noted. Blocks.
    fn sync_sled_only(&self, newest: u64) -> std::io::Result<()> {
        self.sled.sync()?;
        self.sled_only.synced.fetch_max(newest, Ordering::SeqCst);
        Ok(())
    }

    /// Whether every check holds. Called under the write lock.
    ///
    /// Checks that a key is absent come many at a time from bulk loads (every row of a
    /// COPY chunk is new). When no key at all lies between the smallest and the largest
    /// of them, one range probe proves them all, instead of one lookup each; otherwise
    /// they are looked up one by one.
    fn checks_hold(&self, checks: &[Check]) -> StorageResult<bool> {
        let mut absent = checks
            .iter()
            .filter(|c| c.expected.is_none())
            .map(|c| &c.key[..]);
        let proven_absent = match (absent.next(), absent.next()) {
            (Some(first), Some(second)) => {
                let (low, high) = absent.fold(
                    (first.min(second), first.max(second)),
                    |(low, high), key| (low.min(key), high.max(key)),
                );
                self.store.is_vacant(low, high)?
            }
            _ => false,
        };
        for check in checks {
            if proven_absent && check.expected.is_none() {
                continue;
            }
            let current = self.get_user(&check.key)?;
            if current.as_deref() != check.expected.as_deref() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A value by key, with the reserved key hidden.
    fn get_user(&self, key: &[u8]) -> StorageResult<Option<Bytes>> {
        if key == SEQUENCE_KEY {
            return Ok(None);
        }
        self.store.get(key)
    }
}

/// How a batch becomes durable.
#[derive(Debug, Clone, Copy)]
enum DurableBy {
    /// Its log record, synced now: the writer waits for it (`write_if`).
    LogNow,
    /// Its log record, synced with the next sync someone needs (`write_if_unsynced`).
    LogLater,
    /// A sync of sled itself, which `wait_durable` runs: a bulk load's batch skips the
    /// log. Copying every row into the log cost about a sixth of a COPY's time, for a
    /// load that is acknowledged only once, at its end, and needs one sync then.
    ///
    /// sled recovers a prefix of its writes, so a crash loses such a batch only with
    /// everything sled applied after it. Recovery then replays the later records the log
    /// holds over its absence: nobody was told it was durable, as with any unsynced
    /// write, and every acknowledged write after it is a whole row in the log.
    SledSync,
}

/// Unsynced batches with at least this many mutations are applied on a blocking thread.
const BULK_BATCH_MUTATIONS: usize = 16;

/// How long an open waits for a lock that a just-closed database may still hold.
const LOCK_RELEASE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Opens sled, waiting briefly for its file lock. Dropping the last handle of a sled
/// database does not release the lock at once: sled's background flusher thread holds
/// it until that thread ends (sled issue #1289), so a reopen right after a close (a
/// restart in the same process, the reopen tests under load) can find it still held.
/// A lock held by another live process still fails, after the wait.
fn open_when_unlocked(config: &sled::Config) -> sled::Result<sled::Db> {
    let deadline = std::time::Instant::now() + LOCK_RELEASE_WAIT;
    loop {
        match config.open() {
            Err(sled::Error::Io(e))
                if e.to_string().contains("could not acquire lock")
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            opened => return opened,
        }
    }
}

/// Makes sled hold every record of the log files written so far durably, and returns
/// those files, which may then be deleted (`Wal::remove`). Runs on the sync thread (or
/// at close), between two log writes.
fn checkpoint(
    wal: &Wal,
    sled: &SledSyncer,
    write_lock: &Mutex<u64>,
) -> std::io::Result<Vec<PathBuf>> {
    // From here on records go to a new file; the old files hold only records applied
    // to sled before now.
    let old = wal.rotate()?;
    {
        // Every record up to `last` is applied; later ones get larger numbers and go to
        // the new file, so recovery from this number finds no gap.
        let last = write_lock.lock().unwrap_or_else(|p| p.into_inner());
        sled.db
            .insert(SEQUENCE_KEY, &last.to_be_bytes())
            .map_err(std::io::Error::other)?;
    }
    sled.sync()?;
    Ok(old)
}

/// Replays the log records sled does not hold yet; returns the last sequence number.
fn replay(store: &Store, wal_dir: &Path) -> StorageResult<u64> {
    let applied = match store.loose().get(SEQUENCE_KEY).map_err(io_err)? {
        Some(bytes) => u64::from_be_bytes(
            bytes
                .as_ref()
                .try_into()
                .map_err(|_| StorageError::Corrupt("bad log sequence number".into()))?,
        ),
        None => 0,
    };
    if !wal_dir.exists() {
        return Ok(applied);
    }
    let records =
        wal::records_after(wal_dir, applied).map_err(|e| StorageError::Corrupt(e.to_string()))?;
    let mut last = applied;
    if !records.is_empty() {
        tracing::info!("replaying {} write-ahead log records", records.len());
    }
    for record in records {
        store.apply(record.sequence, record.mutations)?;
        last = record.sequence;
    }
    Ok(last)
}

impl SledBackend {
    /// Walks the last `limit` entries of `[start, end)` from the largest key down, until
    /// `each` returns false.
    ///
    /// sled 0.34's reverse iterator can panic ("fucked up tree traversal next_back") on
    /// some tree shapes, so it is not used. A forward pass keeps the last `limit` entries
    /// instead: memory stays bounded by `limit`, and the time grows with the size of the
    /// range. A PK range under a partition key is small; a descending scan of a whole
    /// large table is slow.
    fn reverse(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        limit: usize,
        each: &mut dyn FnMut(Bytes, Bytes) -> StorageResult<bool>,
    ) -> StorageResult<()> {
        let mut tail: std::collections::VecDeque<(Bytes, Bytes)> =
            std::collections::VecDeque::with_capacity(limit.min(1024));
        for item in self.writer.store.range(start, end) {
            if tail.len() == limit {
                tail.pop_front();
            }
            tail.push_back(item?);
        }
        while let Some((k, v)) = tail.pop_back() {
            if !each(k, v)? {
                break;
            }
        }
        Ok(())
    }
}

impl Drop for SledBackend {
    fn drop(&mut self) {
        if let Some((_, commit)) = &self.writer.durability {
            commit.shutdown();
        }
        // A reopen lists the log files; none may vanish while it reads them.
        self.log_removal.wait();
    }
}

#[async_trait]
impl OrderedKv for SledBackend {
    async fn get(&self, key: &[u8]) -> StorageResult<Option<Vec<u8>>> {
        Ok(self.writer.get_user(key)?.map(|v| v.to_vec()))
    }

    async fn scan(
        &self,
        range: &KeyRange,
        direction: Direction,
        limit: usize,
    ) -> StorageResult<Vec<Entry>> {
        if range.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let start = user_start(bound_ref(&range.start));
        let iter = self.writer.store.range(start, bound_ref(&range.end));
        // Point reads scan with an unbounded limit; do not reserve for it.
        let mut out = Vec::with_capacity(limit.min(64));
        let mut push = |item: StorageResult<(Bytes, Bytes)>| -> StorageResult<bool> {
            let (k, v) = item?;
            out.push((k.to_vec(), v.to_vec()));
            Ok(out.len() < limit)
        };
        match direction {
            Direction::Forward => {
                for item in iter {
                    if !push(item)? {
                        break;
                    }
                }
            }
            Direction::Backward => {
                drop(iter);
                let end = bound_ref(&range.end);
                self.reverse(start, end, limit, &mut |k, v| push(Ok((k, v))))?;
            }
        }
        Ok(out)
    }

    async fn visit(
        &self,
        range: &KeyRange,
        direction: Direction,
        limit: usize,
        visit: &mut (dyn for<'k> FnMut(&'k [u8], &'k [u8]) -> bool + Send),
    ) -> StorageResult<()> {
        if range.is_empty() || limit == 0 {
            return Ok(());
        }
        let start = user_start(bound_ref(&range.start));
        let iter = self.writer.store.range(start, bound_ref(&range.end));
        let mut seen = 0;
        let mut each = |item: StorageResult<(Bytes, Bytes)>| -> StorageResult<bool> {
            let (k, v) = item?;
            seen += 1;
            Ok(visit(&k, &v) && seen < limit)
        };
        match direction {
            Direction::Forward => {
                for item in iter {
                    if !each(item)? {
                        break;
                    }
                }
            }
            Direction::Backward => {
                drop(iter);
                let end = bound_ref(&range.end);
                self.reverse(start, end, limit, &mut |k, v| each(Ok((k, v))))?;
            }
        }
        Ok(())
    }

    async fn write_if(&self, checks: &[Check], batch: WriteBatch) -> StorageResult<bool> {
        let Some(seq) = self.writer.apply(checks, batch, DurableBy::LogNow)? else {
            return Ok(false);
        };
        if let Some((_, commit)) = &self.writer.durability {
            commit.wait_synced(seq).await.map_err(StorageError::Io)?;
        }
        Ok(true)
    }
}

/// Partitions are read like any other range: the partition cache wraps this backend
/// (`storage/cached.rs`).
impl PartitionReads for SledBackend {}

#[async_trait]
impl ReadAround for SledBackend {
    async fn get_around(
        &self,
        key: &[u8],
        found: &mut (dyn for<'v> FnMut(Option<&'v [u8]>, Option<&'v dyn OpenedBlock>) + Send),
    ) -> StorageResult<()> {
        let value = self.writer.get_user(key)?;
        match value.as_ref().and_then(|value| value.pack()) {
            Some(pack) => found(
                value.as_deref(),
                Some(&OpenedPack::new(&self.writer.store, pack)),
            ),
            None => found(value.as_deref(), None),
        }
        Ok(())
    }
}

#[async_trait]
impl DurabilityTickets for SledBackend {
    async fn write_if_unsynced(
        &self,
        checks: Vec<Check>,
        batch: WriteBatch,
    ) -> StorageResult<Option<SyncTicket>> {
        // A bulk load's batch of many rows is applied on the apply thread: that leaves
        // the caller's thread free to prepare the next batch (COPY keeps two in flight)
        // and to serve other connections. A small batch (GC's rewrite of one row) costs
        // less than the hand-over and is applied here. Either way it is applied or queued
        // before this future first returns, so batches apply in the order handed over.
        // A bulk batch is kept in sled only, and `wait_durable` syncs sled for it.
        if batch.mutations.len() < BULK_BATCH_MUTATIONS {
            return Ok(self
                .writer
                .apply(&checks, batch, DurableBy::LogLater)?
                .map(SyncTicket));
        }
        let writer = self.writer.clone();
        let applied = self
            .bulk
            .run(move || writer.apply(&checks, batch, DurableBy::SledSync))
            .await
            .map_err(|_| StorageError::Io("applying a batch failed".into()))??;
        Ok(applied.map(SyncTicket))
    }

    async fn wait_durable(&self, ticket: SyncTicket) -> StorageResult<()> {
        let Some((_, commit)) = &self.writer.durability else {
            return Ok(());
        };
        commit
            .wait_durable(ticket.0)
            .await
            .map_err(StorageError::Io)?;
        let Some(newest) = self.writer.sled_sync_needed(ticket.0) else {
            return Ok(());
        };
        let writer = self.writer.clone();
        tokio::task::spawn_blocking(move || writer.sync_sled_only(newest))
            .await
            .map_err(io_err)?
            .map_err(io_err)
    }
}

/// A range's start with the reserved empty key left out.
fn user_start(start: Bound<&[u8]>) -> Bound<&[u8]> {
    match start {
        Bound::Unbounded | Bound::Included([]) => Bound::Excluded(SEQUENCE_KEY),
        other => other,
    }
}

/// A borrowed bound, so a range is handed to sled without copying its keys.
fn bound_ref(bound: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match bound {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// Makes sled's writes durable: its own flush, then real `fsync`s.
struct SledSyncer {
    db: sled::Db,
    log: File,
    dir: PathBuf,
    synced_blobs: Mutex<HashSet<PathBuf>>,
}

impl SledSyncer {
    fn sync_dir(&self, dir: &Path) -> std::io::Result<()> {
        File::open(dir)?.sync_all()
    }

    /// Syncs blob files written since the last call (sled writes them without a sync).
    fn sync_new_blobs(&self) -> std::io::Result<()> {
        let blobs = self.dir.join("blobs");
        let Ok(entries) = std::fs::read_dir(&blobs) else {
            return Ok(());
        };
        let mut synced = self.synced_blobs.lock().unwrap_or_else(|p| p.into_inner());
        let mut any_new = false;
        for entry in entries {
            let path = entry?.path();
            if synced.contains(&path) {
                continue;
            }
            match File::open(&path) {
                Ok(file) => file.sync_all()?,
                // sled removes blobs it no longer needs; a vanished one needs no sync.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
            synced.insert(path);
            any_new = true;
        }
        synced.retain(|p| p.exists());
        if any_new {
            self.sync_dir(&blobs)?;
        }
        Ok(())
    }
}

impl SledSyncer {
    /// Makes everything sled holds durable: its flush, then the `fsync`s it leaves out.
    fn sync(&self) -> std::io::Result<()> {
        self.db.flush().map_err(std::io::Error::other)?;
        self.sync_new_blobs()?;
        self.log.sync_data()
    }
}

/// The group commit's sync: the log's queued records, and a checkpoint when it is due.
struct WalSyncer {
    wal: Arc<Wal>,
    sled: Arc<SledSyncer>,
    write_lock: Arc<Mutex<u64>>,
    log_removal: Arc<LogRemoval>,
}

impl Syncer for WalSyncer {
    fn sync(&self) -> std::io::Result<()> {
        if self.wal.write_and_sync()? {
            let old = checkpoint(&self.wal, &self.sled, &self.write_lock)?;
            self.log_removal.start(&self.wal, old);
        }
        Ok(())
    }
}

/// Deletes log files a checkpoint made redundant, off the sync thread: unlinking a
/// 64 MiB log file took 43 ms on ext4 (the rotation and sled's sync before it, 3 ms),
/// and every writer waits for the sync thread. The files' records are all in sled, so
/// they may go at any time: whatever a crash leaves, the next start deletes after replay
/// has skipped it, and a later checkpoint or `close` lists it again.
#[derive(Default)]
struct LogRemoval {
    running: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl LogRemoval {
    fn start(&self, wal: &Arc<Wal>, old: Vec<PathBuf>) {
        if old.is_empty() {
            return;
        }
        let wal = Arc::clone(wal);
        let spawned = std::thread::Builder::new()
            .name("pgwide-wal-rm".into())
            .spawn(move || {
                if let Err(e) = wal.remove(old) {
                    tracing::warn!("deleting checkpointed log files failed: {e}");
                }
            });
        match spawned {
            // Checkpoints are 64 MiB of log apart: the previous removal has long ended.
            Ok(thread) => self.replace(Some(thread)),
            Err(e) => tracing::warn!("checkpointed log files left for the next checkpoint: {e}"),
        }
    }

    /// Waits for the removal under way, if any.
    fn wait(&self) {
        self.replace(None);
    }

    fn replace(&self, thread: Option<std::thread::JoinHandle<()>>) {
        let previous = std::mem::replace(
            &mut *self.running.lock().unwrap_or_else(|p| p.into_inner()),
            thread,
        );
        if let Some(previous) = previous {
            if previous.join().is_err() {
                tracing::error!("the log removal thread panicked");
            }
        }
    }
}
