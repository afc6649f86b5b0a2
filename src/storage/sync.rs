//! Group commit: writers apply their batch in memory, then wait for one shared sync that
//! covers every write applied before it started. A dedicated thread runs the syncs, so
//! concurrent writers share one `fsync` instead of paying one each.

use std::sync::{Arc, Condvar, Mutex};
use tokio::sync::watch;

/// Something that makes everything written so far durable.
pub(crate) trait Syncer: Send + Sync + 'static {
    fn sync(&self) -> std::io::Result<()>;
}

struct State {
    /// Sequence number of the newest applied write.
    applied: u64,
    shutdown: bool,
}

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
    pub(crate) fn register(&self) -> u64 {
        let mut state = self.lock();
        state.applied += 1;
        let seq = state.applied;
        self.wake.notify_one();
        seq
    }

    /// Waits until a sync covering `seq` has finished.
    pub(crate) async fn wait_durable(&self, seq: u64) -> Result<(), String> {
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
                while state.applied == synced_up_to && !state.shutdown {
                    state = self.wake.wait(state).unwrap_or_else(|p| p.into_inner());
                }
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
