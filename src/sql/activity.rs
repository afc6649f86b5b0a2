//! The server's connections as the SQL layer sees them: what `pg_stat_activity` lists,
//! the session's own process id (`pg_backend_pid()`), and the signals
//! `pg_cancel_backend` and `pg_terminate_backend` send. The server keeps its
//! connections and lends them to every session as [`Backends`]; the SQL layer only
//! reads them and signals.

use super::notifications::{Inbox, Notification};
use std::sync::Arc;
use std::time::SystemTime;

/// One connection, as `pg_stat_activity` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct BackendActivity {
    pub pid: i32,
    pub database: String,
    pub user: String,
    pub application_name: String,
    /// The client's address and port; `None` for a local (Unix) socket.
    pub client: Option<std::net::SocketAddr>,
    pub backend_start: SystemTime,
    /// When the open transaction block began; `None` outside one.
    pub xact_start: Option<SystemTime>,
    /// When the last (or running) statement began.
    pub query_start: Option<SystemTime>,
    pub state_change: Option<SystemTime>,
    /// `active`, `idle`, `idle in transaction` or `idle in transaction (aborted)`.
    pub state: &'static str,
    /// The running statement's text, or the last one's.
    pub query: String,
}

/// The server's connections.
pub trait Backends: Send + Sync + std::fmt::Debug {
    /// Every connection, in pid order.
    fn list(&self) -> Vec<BackendActivity>;

    /// Interrupts the statement connection `pid` runs (57014 for its client);
    /// `false` if there is no such connection.
    fn cancel(&self, pid: i32) -> bool;

    /// Ends connection `pid` (FATAL 57P01 for its client), interrupting the statement
    /// it runs if `interrupt` (not the caller's own: that one ends first); `false` if
    /// there is no such connection.
    fn terminate(&self, pid: i32, interrupt: bool) -> bool;

    /// Delivers notifications to every connection listening on their channels.
    fn notify(&self, notifications: &[Notification]);

    /// Whether a connection listening on `channel` has no room for another
    /// notification.
    fn notification_queue_full(&self, channel: &str) -> bool;
}

/// A session's own connection: its process id, the channels it listens on and the
/// notifications waiting for it, and the server's connections.
#[derive(Debug, Clone)]
pub struct SessionBackend {
    pub pid: i32,
    pub inbox: Arc<Inbox>,
    pub backends: Arc<dyn Backends>,
}
