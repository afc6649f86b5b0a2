//! Copies partitions from sled into the partition cache on a thread of its own.
//!
//! A copy reads the whole partition, about as much as ten 100-row range reads. Made by
//! the read that asked for it, it held up that read and, since a connection thread
//! serves several connections, every other client of that thread: at 1,000,000 rows the
//! first read of each of 1,000 partitions after a write to it paid for a copy, enough
//! transactions to reach the range workload's p99. The read that asks for a copy now
//! reads sled like any uncached read and hands the copy to this thread.
//!
//! Requests wait in a short queue. When it is full the request is given up (the cache
//! counts the partition's reads anew), so a burst of first reads cannot pile up copies
//! that the writes in between would spoil anyway.

use super::partition_cache::{LoadTicket, Partition, PartitionBuilder, PartitionCache};
use super::StorageResult;
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Copies that may wait for the copier thread.
const QUEUED_COPIES: usize = 64;

/// A request to copy the partition `prefix`, as the cache's `Load` named it.
struct CopyRequest {
    prefix: Vec<u8>,
    ticket: LoadTicket,
}

/// The copier thread; dropping it lets the thread finish its copy and joins it.
pub(crate) struct PartitionCopier {
    cache: Arc<PartitionCache>,
    requests: Option<SyncSender<CopyRequest>>,
    thread: Option<JoinHandle<()>>,
}

impl PartitionCopier {
    /// Starts the thread that copies partitions of `db` into `cache`.
    pub(crate) fn start(db: sled::Db, cache: Arc<PartitionCache>) -> std::io::Result<Self> {
        let (requests, queue) = mpsc::sync_channel::<CopyRequest>(QUEUED_COPIES);
        let thread_cache = Arc::clone(&cache);
        let thread = std::thread::Builder::new()
            .name("pgwide-partition-copier".into())
            .spawn(move || {
                lower_priority();
                for CopyRequest { prefix, ticket } in queue {
                    match copy_partition(&db, &prefix) {
                        Ok(copy) => {
                            thread_cache.offer(&prefix, ticket, copy);
                        }
                        Err(e) => {
                            tracing::warn!("copying a partition into the cache failed: {e}");
                            thread_cache.abandon(&prefix, ticket);
                        }
                    }
                }
            })?;
        Ok(PartitionCopier {
            cache,
            requests: Some(requests),
            thread: Some(thread),
        })
    }

    /// Asks for the copy a `Load` named; returns at once.
    pub(crate) fn request(&self, prefix: &[u8], ticket: LoadTicket) {
        let request = CopyRequest {
            prefix: prefix.to_vec(),
            ticket,
        };
        let Some(requests) = &self.requests else {
            self.cache.abandon(&request.prefix, request.ticket);
            return;
        };
        match requests.try_send(request) {
            Ok(()) => {}
            Err(TrySendError::Full(request) | TrySendError::Disconnected(request)) => {
                self.cache.abandon(&request.prefix, request.ticket);
            }
        }
    }
}

impl Drop for PartitionCopier {
    fn drop(&mut self) {
        // Closing the queue ends the thread's loop; joining it releases its sled handle,
        // so the database can be opened again right after.
        self.requests.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How much less CPU time the copier thread gets than the connection threads when both
/// want it (Linux nice: each step is about 25%).
const COPIER_NICENESS: i32 = 10;

/// Makes the calling thread yield to the connection threads. Copying is background work:
/// at the same priority, on a machine whose cores the queries keep busy, each copy took
/// a time slice from a connection thread and stalled its clients as much as copying on
/// that thread did. A failure only leaves the priority as it was.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: setpriority has no memory effects; `who` 0 is the calling thread on
        // Linux, where niceness is per thread.
        let failed = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, COPIER_NICENESS) } != 0;
        if failed {
            tracing::debug!(
                "could not lower the partition copier's priority: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// Copies the partition `prefix` out of sled, or `None` if it is too large to cache.
fn copy_partition(db: &sled::Db, prefix: &[u8]) -> StorageResult<Option<Partition>> {
    let mut builder = PartitionBuilder::new();
    for item in db.scan_prefix(prefix) {
        let (key, value) = item.map_err(|e| super::StorageError::Io(e.to_string()))?;
        if !builder.push(&key, &value) {
            return Ok(None);
        }
    }
    Ok(builder.finish())
}

#[cfg(test)]
mod tests {
    use super::super::partition_cache::Lookup;
    use super::*;
    use std::time::{Duration, Instant};

    /// Reads `prefix` until the cache asks for a copy.
    fn ticket_for(cache: &PartitionCache, prefix: &[u8]) -> LoadTicket {
        for _ in 0..64 {
            if let Lookup::Load(ticket) = cache.lookup(prefix) {
                return ticket;
            }
        }
        panic!("the cache never asked for a copy");
    }

    #[test]
    fn a_requested_copy_arrives_in_the_cache_with_the_partitions_entries() {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::Config::new().path(dir.path()).open().unwrap();
        db.insert(b"p1a", b"1").unwrap();
        db.insert(b"p1b", b"2").unwrap();
        db.insert(b"p2a", b"other partition").unwrap();
        let cache = Arc::new(PartitionCache::new(1 << 20));
        let copier = PartitionCopier::start(db.clone(), Arc::clone(&cache)).unwrap();
        let ticket = ticket_for(&cache, b"p1");
        // Until the copy is in, reads of the partition go to sled.
        copier.request(b"p1", ticket);
        let deadline = Instant::now() + Duration::from_secs(10);
        let copy = loop {
            match cache.lookup(b"p1") {
                Lookup::Hit(copy) => break copy,
                _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                _ => panic!("the copy never arrived"),
            }
        };
        let mut seen = Vec::new();
        copy.visit(
            &super::super::KeyRange::prefix(b"p1"),
            super::super::Direction::Forward,
            usize::MAX,
            &mut |k, v| {
                seen.push((k.to_vec(), v.to_vec()));
                true
            },
        );
        assert_eq!(
            seen,
            vec![
                (b"p1a".to_vec(), b"1".to_vec()),
                (b"p1b".to_vec(), b"2".to_vec())
            ]
        );
        // Dropping the copier joins its thread; the database closes with the last handle.
        drop(copier);
    }

    #[test]
    fn a_request_the_copier_cannot_take_is_given_up_and_counted_anew() {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::Config::new().path(dir.path()).open().unwrap();
        let cache = Arc::new(PartitionCache::new(1 << 20));
        // A copier whose thread has stopped takes no requests (as when its queue is
        // full): each is given up at once.
        let mut copier = PartitionCopier::start(db, Arc::clone(&cache)).unwrap();
        copier.requests.take();
        if let Some(thread) = copier.thread.take() {
            thread.join().unwrap();
        }
        let ticket = ticket_for(&cache, b"p1");
        copier.request(b"p1", ticket);
        // Not stuck as "being copied": the reads count up to a new copy.
        let _again = ticket_for(&cache, b"p1");
    }
}
