//! What a statement's result reports to its session after the session returned it: the
//! client reads a query's rows and sends a COPY's data later, so an error among them,
//! or a COPY's rows for the open transaction block, reach the session this way.

use crate::engine::StagedWrites;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// What a statement's result reports to its session after `run` returned it: the
/// client reads a query's rows and sends a COPY's data later.
#[derive(Default)]
pub struct Aftermath {
    /// The client got an error (a query's rows failed, a COPY failed): an open
    /// transaction block is aborted, as after any error.
    failed: AtomicBool,
    /// A transaction block's writes with a COPY's rows staged after them, for the
    /// session to take in place of its own.
    staged: Mutex<Option<StagedWrites>>,
}

impl Aftermath {
    pub fn fail(&self) {
        self.failed.store(true, Ordering::Relaxed);
    }

    /// Whether an error was reported since the last call.
    pub fn take_failed(&self) -> bool {
        self.failed.swap(false, Ordering::Relaxed)
    }

    /// The staged writes a COPY left since the last call.
    pub fn take_staged(&self) -> Option<StagedWrites> {
        self.staged_writes().take()
    }

    /// Leaves a transaction block's writes, a COPY's rows staged after them, for the
    /// session to take.
    pub fn stage(&self, writes: StagedWrites) {
        *self.staged_writes() = Some(writes);
    }

    fn staged_writes(&self) -> std::sync::MutexGuard<'_, Option<StagedWrites>> {
        // Only a panic while storing could poison it, which leaves a whole value.
        self.staged
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
