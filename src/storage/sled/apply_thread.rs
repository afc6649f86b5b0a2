//! The thread that applies bulk batches for the sled backend, one after another, in the
//! order they were handed over.
//!
//! Why a thread of its own rather than tokio's blocking pool: a bulk load keeps two
//! batches in flight (COPY prepares the next chunk while the one before is applied), and
//! they must apply in the order COPY read them. A duplicate key is then refused on the
//! later of its two lines, as PostgreSQL reports it. The blocking pool may run two tasks
//! at once, on two threads racing for the write lock.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::thread::JoinHandle;
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

/// A running apply thread; dropping it lets the thread finish the jobs handed over, then
/// waits for it.
pub(crate) struct ApplyThread {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

/// The thread stopped (or the job panicked) before the job's result came back.
#[derive(Debug)]
pub(crate) struct NotApplied;

impl ApplyThread {
    pub(crate) fn start(name: &str) -> std::io::Result<ApplyThread> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                for job in queue {
                    // A job that panics drops its result sender, which its caller sees as
                    // an error; the jobs after it still run.
                    if catch_unwind(AssertUnwindSafe(job)).is_err() {
                        tracing::error!("a bulk apply job panicked");
                    }
                }
            })?;
        Ok(ApplyThread {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Queues `work` behind every job queued before it, now, before the returned future
    /// is first polled; the future yields its result.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> impl std::future::Future<Output = Result<T, NotApplied>> {
        let (done, result) = oneshot::channel();
        let job: Job = Box::new(move || {
            // The caller may have stopped waiting; the work is done either way.
            let _ = done.send(work());
        });
        let queued = self
            .jobs
            .as_ref()
            .map(|jobs| jobs.send(job).is_ok())
            .unwrap_or(false);
        async move {
            if !queued {
                return Err(NotApplied);
            }
            result.await.map_err(|_| NotApplied)
        }
    }

    /// Blocks the calling thread until every job queued before this call has run.
    pub(crate) fn drain(&self) {
        let Some(jobs) = &self.jobs else {
            return;
        };
        let (done, finished) = mpsc::channel::<()>();
        let marker: Job = Box::new(move || {
            let _ = done.send(());
        });
        if jobs.send(marker).is_ok() {
            // An error means the thread is gone, and with it every job.
            let _ = finished.recv();
        }
    }
}

impl Drop for ApplyThread {
    fn drop(&mut self) {
        // Closing the queue ends the thread once it has run what is queued.
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::error!("the bulk apply thread panicked");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[tokio::test]
    async fn jobs_run_in_the_order_they_were_queued() {
        let thread = ApplyThread::start("test-apply").unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        // Queued before any is awaited: the first is slow, so a pool of threads would
        // finish the second one first.
        let pending: Vec<_> = (0..8)
            .map(|i| {
                let log = Arc::clone(&log);
                thread.run(move || {
                    if i == 0 {
                        std::thread::sleep(std::time::Duration::from_millis(50));
                    }
                    log.lock().unwrap().push(i);
                    i * 10
                })
            })
            .collect();
        let mut results = Vec::new();
        for job in pending.into_iter().rev() {
            results.push(job.await.unwrap());
        }
        assert_eq!(results, vec![70, 60, 50, 40, 30, 20, 10, 0]);
        assert_eq!(*log.lock().unwrap(), (0..8).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_panicking_job_fails_alone() {
        let thread = ApplyThread::start("test-apply").unwrap();
        let failed = thread.run(|| -> u32 { panic!("job failure") });
        let next = thread.run(|| 7u32);
        assert!(failed.await.is_err());
        assert_eq!(next.await.unwrap(), 7);
    }

    #[test]
    fn drain_returns_once_every_queued_job_has_run() {
        let thread = ApplyThread::start("test-apply").unwrap();
        let ran = Arc::new(Mutex::new(Vec::new()));
        for i in 0..3 {
            let ran = Arc::clone(&ran);
            drop(thread.run(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                ran.lock().unwrap().push(i);
            }));
        }
        thread.drain();
        assert_eq!(*ran.lock().unwrap(), vec![0, 1, 2]);
        // The thread keeps running jobs afterwards.
        thread.drain();
    }

    #[test]
    fn dropping_runs_what_was_queued() {
        let thread = ApplyThread::start("test-apply").unwrap();
        let ran = Arc::new(Mutex::new(0));
        for _ in 0..5 {
            let ran = Arc::clone(&ran);
            // Never awaited: the work still happens.
            drop(thread.run(move || *ran.lock().unwrap() += 1));
        }
        drop(thread);
        assert_eq!(*ran.lock().unwrap(), 5);
    }
}
