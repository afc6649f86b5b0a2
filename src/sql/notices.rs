//! NOTICE messages a statement leaves for the client, such as a cell shown as NULL
//! because its stored type is not the column's. They are collected while rows stream
//! (from the fast path and from DataFusion scans alike) and sent by the server after
//! the statement; a statement over millions of odd cells sends a bounded number.

use crate::sqlstate::SqlState;
use std::sync::Mutex;

/// Notices kept per statement; the rest are counted in one closing notice.
const MAX_NOTICES: usize = 10;

#[derive(Debug, Default)]
pub struct Notices {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    notices: Vec<String>,
    suppressed: u64,
}

impl Notices {
    pub fn push(&self, message: String) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.notices.len() < MAX_NOTICES {
            state.notices.push(message);
        } else {
            state.suppressed += 1;
        }
    }

    /// Every notice since the last call, as NOTICE-severity messages (SQLSTATE 01000,
    /// PostgreSQL's plain warning class).
    pub fn take(&self) -> Vec<Notice> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<Notice> = state.notices.drain(..).map(notice).collect();
        if state.suppressed > 0 {
            out.push(notice(format!(
                "{} more notices like these were not sent",
                state.suppressed
            )));
            state.suppressed = 0;
        }
        out
    }
}

/// A NOTICE for the client: a message with PostgreSQL's plain warning SQLSTATE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub message: String,
}

impl Notice {
    pub fn sqlstate(&self) -> SqlState {
        SqlState::Warning
    }
}

fn notice(message: String) -> Notice {
    Notice { message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_notices_is_bounded() {
        let notices = Notices::default();
        for i in 0..25 {
            notices.push(format!("odd cell {i}"));
        }
        let sent = notices.take();
        assert_eq!(sent.len(), MAX_NOTICES + 1);
        assert_eq!(sent[0].message, "odd cell 0");
        assert!(sent[MAX_NOTICES].message.starts_with("15 more"));
        assert!(notices.take().is_empty());
    }
}
