//! PostgreSQL's notifications between the sessions of one server: `LISTEN`, `UNLISTEN`,
//! `NOTIFY` and `pg_notify`. Each connection has an [`Inbox`]: the channels it listens
//! on and the notifications delivered to it that its client has not been sent yet (the
//! server sends them while the connection is idle outside a transaction block, and
//! before a ReadyForQuery that ends one). A session's notifications wait in its
//! [`PendingNotifications`] until its transaction commits, as in PostgreSQL: at the end
//! of the statement outside a block, at COMMIT inside one; an error or a ROLLBACK
//! discards them. Notifications reach the listeners of the server they were sent on.

use super::sql_error::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;

/// PostgreSQL's limit: a payload must be shorter than 8000 bytes.
pub const MAX_PAYLOAD_BYTES: usize = 7999;

/// A channel name is an identifier: at most 63 bytes (PostgreSQL's `NAMEDATALEN` - 1).
pub const MAX_CHANNEL_BYTES: usize = 63;

/// Notifications one connection may have waiting before NOTIFY to its channels fails
/// (54000), as PostgreSQL's NOTIFY does when its queue is full: a listener that stays
/// in a transaction block holds them all.
pub const MAX_WAITING: usize = 1 << 20;

/// One notification, as the client is sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The process id of the connection that sent it.
    pub sender: i32,
    pub channel: String,
    pub payload: String,
}

/// One connection's channels and the notifications waiting to be sent to its client.
#[derive(Debug, Default)]
pub struct Inbox {
    state: Mutex<InboxState>,
    arrived: Notify,
}

#[derive(Debug, Default)]
struct InboxState {
    channels: BTreeSet<String>,
    waiting: VecDeque<Notification>,
}

impl Inbox {
    fn state(&self) -> MutexGuard<'_, InboxState> {
        // Nothing panics while holding it; a poisoned state is still whole.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn listen(&self, channel: &str) {
        self.state().channels.insert(channel.to_string());
    }

    /// Stops listening on `channel`, or on every channel (`None`, `UNLISTEN *`).
    pub fn unlisten(&self, channel: Option<&str>) {
        match channel {
            Some(channel) => {
                self.state().channels.remove(channel);
            }
            None => self.state().channels.clear(),
        }
    }

    /// The channels listened on, in name order (`pg_listening_channels()`).
    pub fn channels(&self) -> Vec<String> {
        self.state().channels.iter().cloned().collect()
    }

    /// Whether the connection listens on `channel` and has no room for another.
    pub fn is_full(&self, channel: &str) -> bool {
        let state = self.state();
        state.channels.contains(channel) && state.waiting.len() >= MAX_WAITING
    }

    /// Queues the notifications on channels the connection listens on.
    pub fn deliver(&self, notifications: &[Notification]) {
        let mut state = self.state();
        let before = state.waiting.len();
        for notification in notifications {
            if state.channels.contains(&notification.channel) {
                state.waiting.push_back(notification.clone());
            }
        }
        if state.waiting.len() > before {
            drop(state);
            self.arrived.notify_one();
        }
    }

    /// The notifications waiting, oldest first; the inbox is left empty.
    pub fn take(&self) -> Vec<Notification> {
        self.state().waiting.drain(..).collect()
    }

    /// Resolves once notifications were delivered since the last time it resolved.
    pub async fn arrived(&self) {
        self.arrived.notified().await
    }
}

/// The notifications a session's statements sent and its transaction has not committed
/// yet: channel and payload. Shared with the session's `pg_notify`, which adds to it.
#[derive(Debug, Default, Clone)]
pub struct PendingNotifications(Arc<Mutex<Vec<(String, String)>>>);

impl PendingNotifications {
    fn list(&self) -> MutexGuard<'_, Vec<(String, String)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a notification, checked as PostgreSQL checks one (22023).
    pub fn push(&self, channel: &str, payload: &str) -> SqlResult<()> {
        let invalid = |message: &str| Err(SqlError::new(SqlState::InvalidParameterValue, message));
        if channel.is_empty() {
            return invalid("channel name cannot be empty");
        }
        if channel.len() > MAX_CHANNEL_BYTES {
            return invalid("channel name too long");
        }
        if payload.len() > MAX_PAYLOAD_BYTES {
            return invalid("payload string too long");
        }
        self.list().push((channel.to_string(), payload.to_string()));
        Ok(())
    }

    /// How many are pending: a mark to go back to (`truncate`).
    pub fn len(&self) -> usize {
        self.list().len()
    }

    pub fn is_empty(&self) -> bool {
        self.list().is_empty()
    }

    /// Forgets the notifications added after `mark` (a statement that failed, a
    /// savepoint rolled back to).
    pub fn truncate(&self, mark: usize) {
        self.list().truncate(mark);
    }

    /// The pending notifications as `sender` sends them, each channel and payload once
    /// (PostgreSQL folds a transaction's repeats), in the order first sent; none is
    /// left pending.
    pub fn take(&self, sender: i32) -> Vec<Notification> {
        let mut sent: Vec<Notification> = Vec::new();
        for (channel, payload) in self.list().drain(..) {
            if !sent
                .iter()
                .any(|n| n.channel == channel && n.payload == payload)
            {
                sent.push(Notification {
                    sender,
                    channel,
                    payload,
                });
            }
        }
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inbox_keeps_only_its_channels_notifications() {
        let inbox = Inbox::default();
        inbox.listen("jobs");
        let note = |channel: &str| Notification {
            sender: 7,
            channel: channel.to_string(),
            payload: "x".to_string(),
        };
        inbox.deliver(&[note("jobs"), note("other"), note("jobs")]);
        assert_eq!(inbox.take(), vec![note("jobs"), note("jobs")]);
        assert!(inbox.take().is_empty());
        inbox.unlisten(None);
        inbox.deliver(&[note("jobs")]);
        assert!(inbox.take().is_empty());
    }

    #[test]
    fn a_transaction_sends_each_notification_once() {
        let pending = PendingNotifications::default();
        pending.push("a", "1").unwrap();
        pending.push("b", "1").unwrap();
        pending.push("a", "1").unwrap();
        pending.push("a", "2").unwrap();
        let sent: Vec<(String, String)> = pending
            .take(1)
            .into_iter()
            .map(|n| (n.channel, n.payload))
            .collect();
        let expected = [("a", "1"), ("b", "1"), ("a", "2")];
        assert_eq!(
            sent,
            expected
                .iter()
                .map(|(c, p)| (c.to_string(), p.to_string()))
                .collect::<Vec<_>>()
        );
        assert!(pending.is_empty());
        assert_eq!(pending.push("", "x").unwrap_err().code(), "22023");
        assert_eq!(
            pending.push("a", &"x".repeat(8000)).unwrap_err().code(),
            "22023"
        );
    }
}
