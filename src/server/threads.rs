//! Connection threads: single-threaded tokio runtimes, each on its own OS thread, over
//! which accepted connections are spread round robin. A connection then lives on one
//! thread, and its socket is registered with that thread's own event loop.
//!
//! Why: on a small machine shared with its clients, the multi-threaded runtime's workers
//! keep waking each other to steal work, and every wake-up takes a core from someone. On
//! 2 cores with pgbench's 8 clients that doubled the point-get p99. With a thread per
//! core nothing is stolen or handed over; a busy thread's connections wait for it, as a
//! PostgreSQL backend waits for its process's time slice.

use std::thread::JoinHandle;
use tokio::runtime::{Builder, Handle};
use tokio::sync::oneshot;

/// Running connection threads; `stop` ends them.
pub struct ConnectionThreads {
    threads: Vec<Running>,
}

struct Running {
    handle: Handle,
    stop: oneshot::Sender<()>,
    thread: JoinHandle<()>,
}

impl ConnectionThreads {
    /// Starts `count` threads, each driving its own single-threaded runtime.
    pub fn start(count: usize) -> std::io::Result<Self> {
        let mut threads = Vec::with_capacity(count);
        for i in 0..count {
            let runtime = Builder::new_current_thread().enable_all().build()?;
            let handle = runtime.handle().clone();
            let (stop, stopped) = oneshot::channel::<()>();
            let thread = std::thread::Builder::new()
                .name(format!("pgwide-conn-{i}"))
                .spawn(move || {
                    // A current-thread runtime runs its spawned tasks only inside
                    // `block_on`, so the thread blocks here until it is stopped.
                    runtime.block_on(async {
                        let _ = stopped.await;
                    });
                })?;
            threads.push(Running {
                handle,
                stop,
                thread,
            });
        }
        Ok(ConnectionThreads { threads })
    }

    /// The runtimes to spawn connections on (`ServerOptions::connection_runtimes`).
    pub fn handles(&self) -> Vec<Handle> {
        self.threads.iter().map(|t| t.handle.clone()).collect()
    }

    /// Stops every thread and waits for it. Call after the server has returned: a task
    /// still on a thread is dropped with its runtime.
    pub fn stop(self) {
        for running in self.threads {
            let _ = running.stop.send(());
            if running.thread.join().is_err() {
                tracing::error!("a connection thread panicked");
            }
        }
    }
}
