//! What this session's sequences handed out, for `currval` and `lastval`: the values
//! `nextval` returned and those INSERTs took for generated keys, as PostgreSQL keeps
//! them per session; and whether the statement running may advance a sequence at all
//! (not in a read-only transaction).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

#[derive(Debug, Default)]
pub struct SequenceValues {
    values: Mutex<Values>,
    read_only: AtomicBool,
}

#[derive(Debug, Default)]
struct Values {
    current: HashMap<String, i64>,
    last: Option<i64>,
}

impl SequenceValues {
    /// Says whether the statement about to run is in a read-only transaction, where
    /// `nextval` and `setval` are refused.
    pub fn set_read_only(&self, read_only: bool) {
        self.read_only.store(read_only, Ordering::Relaxed);
    }

    pub fn read_only(&self) -> bool {
        self.read_only.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Values> {
        self.values.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `sequence` handed out `value` (nextval, or a generated key).
    pub fn took(&self, sequence: &str, value: i64) {
        let mut values = self.lock();
        values.current.insert(sequence.to_string(), value);
        values.last = Some(value);
    }

    /// `setval(sequence, value)` with `is_called`: currval says `value`, lastval stays.
    pub fn set(&self, sequence: &str, value: i64) {
        self.lock().current.insert(sequence.to_string(), value);
    }

    /// What `currval(sequence)` returns, if this session took a value from it.
    pub fn current(&self, sequence: &str) -> Option<i64> {
        self.lock().current.get(sequence).copied()
    }

    /// What `lastval()` returns.
    pub fn last(&self) -> Option<i64> {
        self.lock().last
    }
}
