//! Group commit: writers apply their batch in memory, then wait for one shared sync that
//! covers every write applied before it started. A dedicated thread runs the syncs, so
//! concurrent writers share one `fsync` instead of paying one each.
//!
//! A sync runs only when someone needs one: a writer that waits (`register`), a wait for
//! an earlier write (`wait_durable`), or writes registered without waiting
//! (`register_unwaited`: background GC's rewrites, and the log's placeholders for a bulk
//! load's batches) that have queued `UNWAITED_SYNC_BYTES` of log since the last sync,
//! which bounds the log kept in memory. A COPY thus syncs once, at its end, not once per
//! chunk.

use std::sync::{Arc, Condvar, Mutex};
use tokio::sync::watch;

/// Something that makes everything written so far durable.
pub(crate) trait Syncer: Send + Sync + 'static {
    fn sync(&self) -> std::io::Result<()>;
}

struct State {
    /// Sequence number of the newest applied write.
    applied: u64,
    /// The newest sequence number someone needs durable.
    wanted: u64,
    /// Log bytes of writes registered unwaited since the last sync began.
    unwaited_bytes: usize,
    shutdown: bool,
}

/// Unwaited writes ask for a sync once they have queued this many bytes of log.
const UNWAITED_SYNC_BYTES: usize = 4 * 1024 * 1024;

/// Hands out sequence numbers to applied writes and reports when they are durable.
pub(crate) struct GroupCommit {
    state: Mutex<State>,
    wake: Condvar,
    /// The newest sequence number known durable, or the error of the last failed sync.
    synced: watch::Sender<Result<u64, String>>,
    /// The sync thread, joined on shutdown: it holds a handle to the database, which
    /// must be closed (and its file lock released) before the directory can be reopened.
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl GroupCommit {
    /// Starts the sync thread.
    pub(crate) fn start(syncer: Arc<dyn Syncer>) -> Arc<Self> {
        let (synced, _) = watch::channel(Ok(0));
        let commit = Arc::new(GroupCommit {
            state: Mutex::new(State {
                applied: 0,
                wanted: 0,
                unwaited_bytes: 0,
                shutdown: false,
            }),
            wake: Condvar::new(),
            synced,
            worker: Mutex::new(None),
        });
        let worker = Arc::clone(&commit);
        match std::thread::Builder::new()
            .name("pgwide-sync".into())
            .spawn(move || worker.run(syncer))
        {
            Ok(handle) => {
                *commit.worker.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
            }
            Err(e) => tracing::error!("cannot start the sync thread: {e}"),
        }
        commit
    }

    /// Records one applied write and returns its sequence number. Call it while the
    /// write's effects are visible, so the sync that covers the number covers the write.
    /// The writer is about to wait for it, so a sync starts.
    pub(crate) fn register(&self) -> u64 {
        let mut state = self.lock();
        state.applied += 1;
        let seq = state.applied;
        state.wanted = seq;
        self.wake.notify_one();
        seq
    }

    /// Like `register`, for a write nobody waits for yet, whose log record is
    /// `record_bytes` long: it is synced with the next sync someone needs.
    pub(crate) fn register_unwaited(&self, record_bytes: usize) -> u64 {
        let mut state = self.lock();
        state.applied += 1;
        let seq = state.applied;
        state.unwaited_bytes += record_bytes;
        if state.unwaited_bytes >= UNWAITED_SYNC_BYTES {
            state.wanted = seq;
            self.wake.notify_one();
        }
        seq
    }

    /// Asks for a sync covering `seq` (a write registered unwaited) and waits for it.
    pub(crate) async fn wait_durable(&self, seq: u64) -> Result<(), String> {
        {
            let mut state = self.lock();
            if state.wanted < seq {
                state.wanted = seq;
                self.wake.notify_one();
            }
        }
        self.wait_synced(seq).await
    }

    /// Waits until a sync covering `seq` has finished; `register` has already asked for
    /// it, so a commit takes the state lock once.
    pub(crate) async fn wait_synced(&self, seq: u64) -> Result<(), String> {
        let mut rx = self.synced.subscribe();
        let outcome = rx
            .wait_for(|synced| match synced {
                Ok(done) => *done >= seq,
                Err(_) => true,
            })
            .await
            .map_err(|_| "the sync thread stopped".to_string())?;
        match &*outcome {
            Ok(_) => Ok(()),
            Err(e) => Err(e.clone()),
        }
    }

    /// Stops the sync thread after a final sync and waits for it to end.
    pub(crate) fn shutdown(&self) {
        self.lock().shutdown = true;
        self.wake.notify_one();
        let handle = self.worker.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(handle) = handle {
            if handle.thread().id() != std::thread::current().id() && handle.join().is_err() {
                tracing::error!("the sync thread panicked");
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn run(&self, syncer: Arc<dyn Syncer>) {
        let mut synced_up_to = 0u64;
        loop {
            let (target, shutdown) = {
                let mut state = self.lock();
                while state.wanted <= synced_up_to && !state.shutdown {
                    state = self.wake.wait(state).unwrap_or_else(|p| p.into_inner());
                }
                // Everything applied so far goes into this sync, wanted or not.
                state.unwaited_bytes = 0;
                (state.applied, state.shutdown)
            };
            if target > synced_up_to {
                match syncer.sync() {
                    Ok(()) => {
                        synced_up_to = target;
                        let _previous = self.synced.send_replace(Ok(target));
                    }
                    Err(e) => {
                        tracing::error!("sync failed; writes are not acknowledged: {e}");
                        let _previous = self.synced.send_replace(Err(format!("sync failed: {e}")));
                        // Let waiters see the failure, then retry on the next write.
                        std::thread::sleep(std::time::Duration::from_millis(10));
                    }
                }
            }
            if shutdown {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    #[derive(Default)]
    struct CountingSyncer(AtomicUsize);

    impl Syncer for CountingSyncer {
        fn sync(&self) -> std::io::Result<()> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    fn syncs_reach(syncer: &CountingSyncer, at_least: usize) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if syncer.0.load(Ordering::SeqCst) >= at_least {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    #[tokio::test]
    async fn unwaited_writes_sync_when_waited_for_or_when_their_log_grows() {
        let syncer = Arc::new(CountingSyncer::default());
        let commit = GroupCommit::start(Arc::clone(&syncer) as Arc<dyn Syncer>);
        let first = commit.register_unwaited(100);
        let second = commit.register_unwaited(100);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            syncer.0.load(Ordering::SeqCst),
            0,
            "nobody needed a sync yet"
        );

        // Waiting for the first covers the second too: one sync of everything applied.
        commit.wait_durable(first).await.unwrap();
        commit.wait_durable(second).await.unwrap();
        assert_eq!(syncer.0.load(Ordering::SeqCst), 1);

        // Enough unwaited log asks for a sync on its own.
        for _ in 0..4 {
            commit.register_unwaited(UNWAITED_SYNC_BYTES / 4);
        }
        assert!(
            syncs_reach(&syncer, 2),
            "4 MiB of unwaited log was never synced"
        );

        // A waiting writer starts a sync at once.
        let waited = commit.register();
        commit.wait_synced(waited).await.unwrap();
        assert!(syncer.0.load(Ordering::SeqCst) >= 3);

        // Shutdown syncs what nobody waited for.
        commit.register_unwaited(1);
        let before = syncer.0.load(Ordering::SeqCst);
        commit.shutdown();
        assert_eq!(syncer.0.load(Ordering::SeqCst), before + 1);
    }
}
