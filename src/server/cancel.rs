//! Query cancellation. Every connection gets a process id and secret key (sent in
//! BackendKeyData) and registers a [`CancelHandle`]; a CancelRequest arrives on a new
//! connection, is matched by pid and key, and interrupts whatever the target
//! connection is awaiting — the SQL layer's execute, or the next row of a stream —
//! which then fails with SQLSTATE 57014. A request when nothing runs is ignored, as in
//! PostgreSQL. The session's `statement_timeout` interrupts the same way, from a
//! deadline set when the statement starts.

use super::activity::ConnectionActivity;
use crate::sql::notifications::Inbox;
use crate::sql::{Interruption, SqlError, SqlResult};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::futures::Notified;
use tokio::sync::Notify;
use tokio::time::Instant;

/// The cancel side of one connection.
#[derive(Debug)]
pub(crate) struct CancelHandle {
    pub pid: i32,
    pub secret: i32,
    running: AtomicBool,
    /// Set by a cancel of the running statement, for work that checks instead of
    /// awaiting (`Scope::interrupted`); cleared when a statement starts.
    requested: AtomicBool,
    notify: Notify,
    /// The session's `statement_timeout` in milliseconds (0 = none), read when a
    /// statement starts; the connection updates it before each message.
    statement_timeout_ms: AtomicU64,
    /// What the connection is doing, for `pg_stat_activity` (`activity`).
    pub activity: ConnectionActivity,
    /// The channels the connection listens on and the notifications waiting for it.
    pub inbox: Arc<Inbox>,
}

impl CancelHandle {
    /// Interrupts the running statement, if any.
    pub(crate) fn cancel(&self) {
        if self.running.load(Ordering::Acquire) {
            self.requested.store(true, Ordering::Release);
            self.notify.notify_waiters();
        }
    }

    /// The future a [`Scope`] waits on; create it with `pin!` and pass it to `scope`.
    pub(crate) fn notified(&self) -> Notified<'_> {
        self.notify.notified()
    }

    /// The timeout the next statement gets; `None` or zero means none.
    pub(crate) fn set_statement_timeout(&self, timeout: Option<Duration>) {
        let ms = timeout.map_or(0, |t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
        self.statement_timeout_ms.store(ms, Ordering::Relaxed);
    }

    /// Marks a statement as running until the scope is dropped. The waiter is
    /// registered before the flag is set, so a cancel seen as "running" always wakes it.
    /// The statement timeout counts from here.
    pub(crate) fn scope<'a, 'b>(
        &'b self,
        mut notified: Pin<&'a mut Notified<'b>>,
    ) -> Scope<'a, 'b> {
        notified.as_mut().enable();
        self.requested.store(false, Ordering::Release);
        self.running.store(true, Ordering::Release);
        let ms = self.statement_timeout_ms.load(Ordering::Relaxed);
        let deadline = (ms > 0).then(|| Instant::now() + Duration::from_millis(ms));
        Scope {
            handle: self,
            notified,
            deadline,
        }
    }
}

/// A statement in progress that a CancelRequest may interrupt.
pub(crate) struct Scope<'a, 'b> {
    handle: &'b CancelHandle,
    notified: Pin<&'a mut Notified<'b>>,
    /// When `statement_timeout` expires, if set.
    deadline: Option<Instant>,
}

impl Scope<'_, '_> {
    /// Runs `work` unless a cancel or the statement timeout comes first. Only SQL-layer
    /// futures go in here, never socket writes, so an interrupted write cannot corrupt
    /// the stream.
    pub(crate) async fn run<T>(
        &mut self,
        work: impl Future<Output = SqlResult<T>>,
    ) -> SqlResult<T> {
        let deadline = self.deadline;
        let expired = async move {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = self.notified.as_mut() => Err(canceled()),
            _ = expired => Err(timed_out()),
            result = work => result,
        }
    }
}

impl Scope<'_, '_> {
    /// The error to stop with if a cancel or the statement timeout has come, for work
    /// that goes on without awaiting (rows that are ready at once).
    pub(crate) fn interrupted(&self) -> Option<SqlError> {
        if self.handle.requested.load(Ordering::Acquire) {
            return Some(canceled());
        }
        if self
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
        {
            return Some(timed_out());
        }
        None
    }
}

impl Drop for Scope<'_, '_> {
    fn drop(&mut self) {
        self.handle.running.store(false, Ordering::Release);
    }
}

pub(crate) fn canceled() -> SqlError {
    SqlError::Canceled(Interruption::UserRequest)
}

pub(crate) fn timed_out() -> SqlError {
    SqlError::Canceled(Interruption::StatementTimeout)
}

/// All live connections' cancel handles, by pid.
#[derive(Debug, Default)]
pub(crate) struct CancelRegistry {
    handles: Mutex<HashMap<i32, Arc<CancelHandle>>>,
    next_pid: AtomicI32,
    seed: AtomicU64,
}

impl CancelRegistry {
    /// Registers a new connection; dropping the guard unregisters it.
    pub(crate) fn register(self: &Arc<Self>) -> Registration {
        let pid = self
            .next_pid
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_add(1000);
        let handle = Arc::new(CancelHandle {
            pid,
            secret: self.secret_key(pid),
            running: AtomicBool::new(false),
            requested: AtomicBool::new(false),
            notify: Notify::new(),
            statement_timeout_ms: AtomicU64::new(0),
            activity: ConnectionActivity::default(),
            inbox: Arc::default(),
        });
        if let Ok(mut handles) = self.handles.lock() {
            handles.insert(pid, Arc::clone(&handle));
        }
        Registration {
            registry: Arc::clone(self),
            handle,
        }
    }

    /// Handles a CancelRequest: only the right key cancels, as in PostgreSQL.
    pub(crate) fn cancel(&self, pid: i32, secret: &[u8]) {
        let handle = match self.handles.lock() {
            Ok(handles) => handles.get(&pid).cloned(),
            Err(_) => None,
        };
        match handle {
            Some(h) if secret == h.secret.to_be_bytes() => h.cancel(),
            _ => tracing::debug!(pid, "cancel request for an unknown process or wrong key"),
        }
    }

    /// Every registered connection's handle.
    pub(crate) fn handles(&self) -> Vec<Arc<CancelHandle>> {
        match self.handles.lock() {
            Ok(handles) => handles.values().cloned().collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Connection `pid`'s handle.
    pub(crate) fn handle(&self, pid: i32) -> Option<Arc<CancelHandle>> {
        self.handles.lock().ok()?.get(&pid).cloned()
    }

    /// An unpredictable key: SipHash with the process's random keys over a counter.
    fn secret_key(&self, pid: i32) -> i32 {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(self.seed.fetch_add(1, Ordering::Relaxed));
        h.write_i32(pid);
        if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            h.write_u128(now.as_nanos());
        }
        h.finish() as i32
    }
}

/// A connection's entry in the registry.
pub(crate) struct Registration {
    registry: Arc<CancelRegistry>,
    pub handle: Arc<CancelHandle>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Ok(mut handles) = self.registry.handles.lock() {
            handles.remove(&self.handle.pid);
        }
    }
}
