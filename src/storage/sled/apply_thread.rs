//! The thread that applies bulk batches for the sled backend, one after another, in the
//! order they were handed over.
//!
//! Why a thread of its own rather than tokio's blocking pool: a bulk load keeps two
//! batches in flight (COPY prepares the next chunk while the one before is applied), and
//! they must apply in the order COPY read them. A duplicate key is then refused on the
//! later of its two lines, as PostgreSQL reports it. The blocking pool may run two tasks
//! at once, on two threads racing for the write lock.
//!
//! A job's future dropped before the job has ended waits for it to end: a write must not
//! apply after its future is gone, or the caches in front of the backend would end the
//! write before it applied (`storage/cached.rs`). The wait ends, since no job waits on
//! the caller's runtime; it lasts as long as the job and those queued before it.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::mpsc;
use std::task::{Context, Poll};
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
    /// is first polled; the future yields its result. Dropped before that, the future
    /// waits for the job to end.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Pending<T> {
        let (done, result) = oneshot::channel();
        // Never sent on: the job drops it when it ends, run or not, panicked or not.
        let (running, ended) = mpsc::channel::<()>();
        let job: Job = Box::new(move || {
            let _running = running;
            // The caller may have stopped waiting; the work is done either way.
            let _ = done.send(work());
        });
        // A job the thread no longer takes is dropped here, which ends it.
        let queued = self
            .jobs
            .as_ref()
            .map(|jobs| jobs.send(job).is_ok())
            .unwrap_or(false);
        Pending {
            result: queued.then_some(result),
            ended: Some(ended),
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

/// The result of a queued job, to come.
pub(crate) struct Pending<T> {
    /// `None` when the job could not be queued.
    result: Option<oneshot::Receiver<T>>,
    /// Disconnected once the job has ended; `None` once that is known.
    ended: Option<mpsc::Receiver<()>>,
}

impl<T> Future for Pending<T> {
    type Output = Result<T, NotApplied>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(result) = self.result.as_mut() else {
            self.ended = None;
            return Poll::Ready(Err(NotApplied));
        };
        let outcome = match Pin::new(result).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(outcome) => outcome.map_err(|_| NotApplied),
        };
        // The result is sent at the job's end: nothing is left for a drop to wait for.
        self.ended = None;
        Poll::Ready(outcome)
    }
}

impl<T> Drop for Pending<T> {
    fn drop(&mut self) {
        if let Some(ended) = self.ended.take() {
            // Returns once the job has dropped its sender, when it ends.
            let _ = ended.recv();
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
    fn a_job_whose_future_is_dropped_has_run_when_the_drop_returns() {
        let thread = ApplyThread::start("test-apply").unwrap();
        let ran = Arc::new(Mutex::new(Vec::new()));
        for i in 0..3 {
            let job_ran = Arc::clone(&ran);
            drop(thread.run(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                job_ran.lock().unwrap().push(i);
            }));
            assert_eq!(ran.lock().unwrap().len(), i + 1, "job {i}");
        }
        let failed = thread.run(|| panic!("job failure"));
        drop(failed);
        assert_eq!(*ran.lock().unwrap(), vec![0, 1, 2]);
    }

    #[test]
    fn drain_returns_once_every_queued_job_has_run() {
        let thread = ApplyThread::start("test-apply").unwrap();
        let ran = Arc::new(Mutex::new(Vec::new()));
        // Kept, not dropped: a dropped job's future waits for it itself.
        let pending: Vec<_> = (0..3)
            .map(|i| {
                let ran = Arc::clone(&ran);
                thread.run(move || {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    ran.lock().unwrap().push(i);
                })
            })
            .collect();
        thread.drain();
        assert_eq!(*ran.lock().unwrap(), vec![0, 1, 2]);
        // The thread keeps running jobs afterwards.
        thread.drain();
        drop(pending);
    }

    #[test]
    fn dropping_runs_what_was_queued() {
        let thread = ApplyThread::start("test-apply").unwrap();
        let ran = Arc::new(Mutex::new(0));
        // Never awaited, and dropped only after the thread: the work still happens.
        let pending: Vec<_> = (0..5)
            .map(|_| {
                let ran = Arc::clone(&ran);
                thread.run(move || *ran.lock().unwrap() += 1)
            })
            .collect();
        drop(thread);
        assert_eq!(*ran.lock().unwrap(), 5);
        drop(pending);
    }
}
