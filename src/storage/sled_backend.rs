//! The embedded default backend: one sled tree in one directory.
//!
//! sled 0.34's `flush()` only calls `sync_file_range` on its log and never syncs blob files
//! (values over a quarter segment), so an acknowledged write could be lost on an OS crash.
//! This backend therefore follows every flush with `fsync` of the log, of new blob files and
//! of their directory, and shares that work among concurrent writers (group commit).
//! Writes are applied under one mutex so conditional checks and their batch are atomic;
//! the expensive part, the sync, happens outside it.

use super::sync::{GroupCommit, Syncer};
use super::{
    Backend, Check, Direction, Entry, KeyRange, Mutation, StorageError, StorageResult, WriteBatch,
};
use async_trait::async_trait;
use std::collections::HashSet;
use std::fs::File;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How the sled backend is opened.
#[derive(Debug, Clone)]
pub struct SledOptions {
    /// Sync every acknowledged write to disk (group commit). Off only for throwaway data.
    pub durable: bool,
    /// sled's page cache size in bytes.
    pub cache_capacity: u64,
}

impl Default for SledOptions {
    fn default() -> Self {
        SledOptions {
            durable: true,
            cache_capacity: 512 * 1024 * 1024,
        }
    }
}

/// sled behind the `Backend` trait.
pub struct SledBackend {
    db: sled::Db,
    write_lock: Mutex<()>,
    commit: Option<Arc<GroupCommit>>,
}

fn io_err(e: impl std::fmt::Display) -> StorageError {
    StorageError::Io(e.to_string())
}

impl SledBackend {
    /// Opens (or creates) the database in `dir`.
    pub fn open(dir: &Path, options: SledOptions) -> StorageResult<Self> {
        std::fs::create_dir_all(dir).map_err(io_err)?;
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(options.cache_capacity)
            .open()
            .map_err(io_err)?;
        let commit = if options.durable {
            let syncer = SledSyncer {
                db: db.clone(),
                log: File::open(dir.join("db")).map_err(io_err)?,
                dir: dir.to_path_buf(),
                synced_blobs: Mutex::new(HashSet::new()),
            };
            // The directory entries of a new database must survive a crash too.
            syncer.sync_dir(dir).map_err(io_err)?;
            Some(GroupCommit::start(Arc::new(syncer)))
        } else {
            None
        };
        Ok(SledBackend {
            db,
            write_lock: Mutex::new(()),
            commit,
        })
    }

    /// Makes everything written durable and stops the sync thread.
    pub fn close(&self) -> StorageResult<()> {
        self.db.flush().map_err(io_err)?;
        if let Some(commit) = &self.commit {
            commit.shutdown();
        }
        Ok(())
    }

    fn apply(&self, checks: &[Check], batch: WriteBatch) -> StorageResult<Option<u64>> {
        let _guard = self.write_lock.lock().unwrap_or_else(|p| p.into_inner());
        for check in checks {
            let current = self.db.get(&check.key).map_err(io_err)?;
            if current.as_deref() != check.expected.as_deref() {
                return Ok(None);
            }
        }
        let mut sled_batch = sled::Batch::default();
        for mutation in batch.mutations {
            match mutation {
                Mutation::Put(k, v) => sled_batch.insert(k, v),
                Mutation::Delete(k) => sled_batch.remove(k),
            }
        }
        self.db.apply_batch(sled_batch).map_err(io_err)?;
        Ok(Some(self.commit.as_ref().map_or(0, |c| c.register())))
    }
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
        each: &mut dyn FnMut(sled::IVec, sled::IVec) -> StorageResult<bool>,
    ) -> StorageResult<()> {
        let mut tail: std::collections::VecDeque<(sled::IVec, sled::IVec)> =
            std::collections::VecDeque::with_capacity(limit.min(1024));
        for item in self.db.range::<&[u8], _>((start, end)) {
            if tail.len() == limit {
                tail.pop_front();
            }
            tail.push_back(item.map_err(io_err)?);
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
        if let Some(commit) = &self.commit {
            commit.shutdown();
        }
    }
}

#[async_trait]
impl Backend for SledBackend {
    async fn get(&self, key: &[u8]) -> StorageResult<Option<Vec<u8>>> {
        Ok(self.db.get(key).map_err(io_err)?.map(|v| v.to_vec()))
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
        let iter = self
            .db
            .range::<Vec<u8>, _>((range.start.clone(), range.end.clone()));
        // Point reads scan with an unbounded limit; do not reserve for it.
        let mut out = Vec::with_capacity(limit.min(64));
        let mut push = |item: sled::Result<(sled::IVec, sled::IVec)>| -> StorageResult<bool> {
            let (k, v) = item.map_err(io_err)?;
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
                let (start, end) = (bound_ref(&range.start), bound_ref(&range.end));
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
        let iter = self
            .db
            .range::<&[u8], _>((bound_ref(&range.start), bound_ref(&range.end)));
        let mut seen = 0;
        let mut each = |item: sled::Result<(sled::IVec, sled::IVec)>| -> StorageResult<bool> {
            let (k, v) = item.map_err(io_err)?;
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
                let (start, end) = (bound_ref(&range.start), bound_ref(&range.end));
                self.reverse(start, end, limit, &mut |k, v| each(Ok((k, v))))?;
            }
        }
        Ok(())
    }

    async fn write_if(&self, checks: &[Check], batch: WriteBatch) -> StorageResult<bool> {
        let Some(seq) = self.apply(checks, batch)? else {
            return Ok(false);
        };
        if let Some(commit) = &self.commit {
            commit.wait_durable(seq).await.map_err(StorageError::Io)?;
        }
        Ok(true)
    }

    fn size_on_disk(&self) -> u64 {
        self.db.size_on_disk().unwrap_or(0)
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

impl Syncer for SledSyncer {
    fn sync(&self) -> std::io::Result<()> {
        self.db.flush().map_err(std::io::Error::other)?;
        self.sync_new_blobs()?;
        self.log.sync_data()
    }
}
