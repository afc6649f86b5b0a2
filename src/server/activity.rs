//! What each connection is doing, for `pg_stat_activity`: who it is (set once the
//! startup is done), its state and statement (set as messages come and as
//! ReadyForQuery goes), and the terminate signal `pg_terminate_backend` sends. The
//! registry of connections (`cancel::CancelRegistry`) lends them to the SQL layer as
//! [`Backends`].

use super::cancel::CancelRegistry;
use crate::sql::activity::{BackendActivity, Backends};
use crate::sql::notifications::Notification;
use crate::sql::TransactionStatus;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;
use tokio::sync::Notify;

/// How much of a statement's text `pg_stat_activity` shows: PostgreSQL's default
/// `track_activity_query_size` (1024 bytes, less one for its terminator).
const QUERY_TEXT_BYTES: usize = 1023;

/// One connection's activity.
#[derive(Debug)]
pub(crate) struct ConnectionActivity {
    identity: OnceLock<Identity>,
    started: SystemTime,
    now: Mutex<Now>,
    terminated: AtomicBool,
    terminate: Notify,
}

/// Who a connection is, known once its startup is done.
#[derive(Debug)]
struct Identity {
    database: String,
    user: String,
    client: Option<SocketAddr>,
}

/// What a connection is doing.
#[derive(Debug)]
struct Now {
    /// Given at startup, changed by `SET application_name`.
    application_name: String,
    state: &'static str,
    query: String,
    query_start: Option<SystemTime>,
    xact_start: Option<SystemTime>,
    state_change: Option<SystemTime>,
}

impl Default for ConnectionActivity {
    fn default() -> Self {
        ConnectionActivity {
            identity: OnceLock::new(),
            started: SystemTime::now(),
            now: Mutex::new(Now {
                application_name: String::new(),
                state: "idle",
                query: String::new(),
                query_start: None,
                xact_start: None,
                state_change: None,
            }),
            terminated: AtomicBool::new(false),
            terminate: Notify::new(),
        }
    }
}

impl ConnectionActivity {
    /// Records who the connection is; the first call wins.
    pub(crate) fn identify(
        &self,
        database: &str,
        user: &str,
        application_name: &str,
        client: Option<SocketAddr>,
    ) {
        let _ = self.identity.set(Identity {
            database: database.to_string(),
            user: user.to_string(),
            client,
        });
        self.set_application_name(application_name);
    }

    /// `SET application_name` changed it.
    pub(crate) fn set_application_name(&self, name: &str) {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        now.application_name = name.to_string();
    }

    /// A statement starts: the connection is active with it. A transaction starts with
    /// the first statement after the connection was idle outside a block. The text kept
    /// is cut to PostgreSQL's default `track_activity_query_size`, so a huge statement
    /// is not copied whole, and reuses its buffer, so the hot path does not allocate.
    pub(crate) fn statement_started(&self, sql: &str) {
        let at = SystemTime::now();
        let mut cut = sql.len().min(QUERY_TEXT_BYTES);
        while !sql.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        now.state = "active";
        now.query.clear();
        now.query.push_str(&sql[..cut]);
        now.query_start = Some(at);
        now.state_change = Some(at);
        now.xact_start.get_or_insert(at);
    }

    /// ReadyForQuery goes out: the connection is idle, in a block or not.
    pub(crate) fn ready(&self, status: TransactionStatus) {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        let state = match status {
            TransactionStatus::Idle => "idle",
            TransactionStatus::InTransaction => "idle in transaction",
            TransactionStatus::Failed => "idle in transaction (aborted)",
        };
        if now.state != state {
            now.state = state;
            now.state_change = Some(SystemTime::now());
        }
        if status == TransactionStatus::Idle {
            now.xact_start = None;
        }
    }

    /// Asks the connection to end.
    pub(crate) fn terminate(&self) {
        self.terminated.store(true, Ordering::Release);
        self.terminate.notify_one();
    }

    /// Completes once the connection is asked to end.
    pub(crate) async fn terminated(&self) {
        while !self.terminated.load(Ordering::Acquire) {
            self.terminate.notified().await;
        }
    }

    fn snapshot(&self, pid: i32) -> Option<BackendActivity> {
        let identity = self.identity.get()?;
        let now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        Some(BackendActivity {
            pid,
            database: identity.database.clone(),
            user: identity.user.clone(),
            application_name: now.application_name.clone(),
            client: identity.client,
            backend_start: self.started,
            xact_start: now.xact_start,
            query_start: now.query_start,
            state_change: now.state_change,
            state: now.state,
            query: now.query.clone(),
        })
    }
}

impl Backends for CancelRegistry {
    fn list(&self) -> Vec<BackendActivity> {
        let mut list: Vec<BackendActivity> = self
            .handles()
            .iter()
            .filter_map(|h| h.activity.snapshot(h.pid))
            .collect();
        list.sort_by_key(|b| b.pid);
        list
    }

    fn cancel(&self, pid: i32) -> bool {
        match self.handle(pid) {
            Some(handle) => {
                handle.cancel();
                true
            }
            None => false,
        }
    }

    fn terminate(&self, pid: i32, interrupt: bool) -> bool {
        match self.handle(pid) {
            Some(handle) => {
                handle.activity.terminate();
                if interrupt {
                    handle.cancel();
                }
                true
            }
            None => false,
        }
    }

    fn notify(&self, notifications: &[Notification]) {
        for handle in self.handles() {
            handle.inbox.deliver(notifications);
        }
    }

    fn notification_queue_full(&self, channel: &str) -> bool {
        self.handles().iter().any(|h| h.inbox.is_full(channel))
    }
}
