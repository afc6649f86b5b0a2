//! Connection threads: single-threaded tokio runtimes, each on its own OS thread, over
//! which accepted connections are spread round robin. A connection then lives on one
//! thread, and its socket is registered with that thread's own event loop.
//!
//! Why: on a small machine shared with its clients, the multi-threaded runtime's workers
//! keep waking each other to steal work, and every wake-up takes a core from someone. On
//! 2 cores with pgbench's 8 clients that doubled the point-get p99. With a thread per
//! core nothing is stolen or handed over; a busy thread's connections wait for it, as a
//! PostgreSQL backend waits for its process's time slice.
//!
//! The threads can be tied to CPUs, spread evenly; `placement` says when and why.

use std::os::unix::thread::JoinHandleExt;
use std::thread::JoinHandle;
use tokio::runtime::{Builder, Handle};
use tokio::sync::oneshot;

use super::affinity;
use super::placement::{Assignment, Governor, Placement};

/// Running connection threads; `stop` ends them.
pub struct ConnectionThreads {
    threads: Vec<Running>,
    /// Moves the threads between tied and free (`Placement::Auto` only).
    governor: Option<Governor>,
}

struct Running {
    handle: Handle,
    stop: oneshot::Sender<()>,
    thread: JoinHandle<()>,
}

/// The stack of every thread that parses, plans or runs statements. A statement nested
/// `sql`'s maximum depth deep recurses once per level in the parser, the fast path's
/// compiler and DataFusion's planner; 2 MiB (Rust's default) overflowed in debug builds
/// well before that depth. Only the pages a thread touches take memory.
pub const THREAD_STACK_BYTES: usize = 16 << 20;

impl ConnectionThreads {
    /// Starts `count` threads, each driving its own single-threaded runtime.
    pub fn start(count: usize, placement: Placement) -> std::io::Result<Self> {
        let mut threads = Vec::with_capacity(count);
        for i in 0..count {
            let runtime = Builder::new_current_thread().enable_all().build()?;
            let handle = runtime.handle().clone();
            let (stop, stopped) = oneshot::channel::<()>();
            let thread = std::thread::Builder::new()
                .name(format!("pgwide-conn-{i}"))
                .stack_size(THREAD_STACK_BYTES)
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
        // `never` does not even read the CPUs, so it cannot warn that they are unreadable.
        let assigned = match placement {
            Placement::Never => None,
            Placement::Always | Placement::Auto => assignment(&threads),
        };
        if let Some(assignment) = &assigned {
            assignment.apply(true);
        }
        let governor = match (placement, assigned) {
            (Placement::Auto, Some(assignment)) => Some(Governor::start(assignment)?),
            _ => None,
        };
        Ok(ConnectionThreads { threads, governor })
    }

    /// The runtimes to spawn connections on (`ServerOptions::connection_runtimes`).
    pub fn handles(&self) -> Vec<Handle> {
        self.threads.iter().map(|t| t.handle.clone()).collect()
    }

    /// Stops every thread and waits for it. Call after the server has returned: a task
    /// still on a thread is dropped with its runtime.
    pub fn stop(self) {
        // The governor places these threads, so it goes before they do.
        if let Some(governor) = self.governor {
            governor.stop();
        }
        for running in self.threads {
            let _ = running.stop.send(());
            if running.thread.join().is_err() {
                tracing::error!("a connection thread panicked");
            }
        }
    }
}

/// Thread i goes to the i-th CPU the process may use, modulo their number. None when
/// there is nothing to even out: a single CPU, fewer threads than CPUs (the scheduler
/// gives each its own, and tying would crowd them onto the first CPUs), or CPUs that
/// cannot be read.
fn assignment(threads: &[Running]) -> Option<Assignment> {
    let allowed = match affinity::allowed_cpus() {
        Ok(cpus) if cpus.len() > 1 && threads.len() >= cpus.len() => cpus,
        Ok(_) => return None,
        Err(e) => {
            tracing::warn!("connection threads not tied to CPUs: {e}");
            return None;
        }
    };
    Some(Assignment {
        threads: threads.iter().map(|t| t.thread.as_pthread_t()).collect(),
        cpus: (0..threads.len())
            .map(|i| allowed[i % allowed.len()])
            .collect(),
        allowed,
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The CPUs each thread may run on, as its tasks see them.
    fn cpus_seen_by_threads(threads: &ConnectionThreads) -> Vec<Vec<usize>> {
        let waiter = Builder::new_current_thread().build().unwrap();
        threads
            .handles()
            .iter()
            .map(|handle| {
                let seen = handle.spawn(async { affinity::allowed_cpus().unwrap() });
                waiter.block_on(seen).unwrap()
            })
            .collect()
    }

    #[test]
    fn tied_threads_take_the_cpus_in_turn() {
        let cpus = affinity::allowed_cpus().unwrap();
        let threads = ConnectionThreads::start(cpus.len() + 1, Placement::Always).unwrap();
        let seen = cpus_seen_by_threads(&threads);
        threads.stop();
        let expected: Vec<Vec<usize>> = if cpus.len() > 1 {
            (0..=cpus.len())
                .map(|i| vec![cpus[i % cpus.len()]])
                .collect()
        } else {
            vec![cpus.clone(); 2]
        };
        assert_eq!(seen, expected);
    }

    #[test]
    fn fewer_threads_than_cpus_are_not_tied() {
        let cpus = affinity::allowed_cpus().unwrap();
        let count = cpus.len() - 1;
        let threads = ConnectionThreads::start(count, Placement::Always).unwrap();
        let seen = cpus_seen_by_threads(&threads);
        threads.stop();
        assert_eq!(seen, vec![cpus; count]);
    }

    #[test]
    fn threads_never_tied_keep_every_cpu() {
        let cpus = affinity::allowed_cpus().unwrap();
        let threads = ConnectionThreads::start(2, Placement::Never).unwrap();
        let seen = cpus_seen_by_threads(&threads);
        threads.stop();
        assert_eq!(seen, vec![cpus.clone(), cpus]);
    }

    #[test]
    fn auto_placement_starts_tied_and_frees_the_threads_while_another_thread_is_busy() {
        let cpus = affinity::allowed_cpus().unwrap();
        if cpus.len() < 2 {
            return; // nothing to spread over, so nothing is ever tied
        }
        let threads = ConnectionThreads::start(cpus.len(), Placement::Auto).unwrap();
        let one_each: Vec<Vec<usize>> = cpus.iter().map(|&cpu| vec![cpu]).collect();
        assert_eq!(cpus_seen_by_threads(&threads), one_each);
        let busy = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let spinning = std::sync::Arc::clone(&busy);
        let spinner = std::thread::spawn(move || {
            let mut x = 0u64;
            while spinning.load(std::sync::atomic::Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        });
        let every_cpu = vec![cpus.clone(); cpus.len()];
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let mut seen = cpus_seen_by_threads(&threads);
        while seen != every_cpu && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
            seen = cpus_seen_by_threads(&threads);
        }
        busy.store(false, std::sync::atomic::Ordering::Relaxed);
        spinner.join().unwrap();
        threads.stop();
        assert_eq!(seen, every_cpu, "freed while another thread spins");
    }
}
