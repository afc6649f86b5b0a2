//! A session's open cursors (`DECLARE ... CURSOR`): each one's columns and the stream
//! of rows it has not handed out yet. `cursor_statements` declares, fetches and closes
//! them; the session keeps them (`SessionState::cursors`) and ends those without HOLD
//! with their transaction block.
//!
//! The rows are read as FETCH asks for them, not all at DECLARE: a cursor over a large
//! table (Django's `.iterator()`) never holds more than one FETCH's rows in memory.

use super::sql_types::{Datum, OutputColumn, RowStream, SqlResult};
use futures::StreamExt;
use std::sync::{Arc, Mutex};

/// A declared cursor.
pub(super) struct Cursor {
    columns: Arc<Vec<OutputColumn>>,
    /// The query's rows from the next one on. (A mutex only so the session state stays
    /// `Sync`; only its session's statements touch it, one at a time.)
    rows: Mutex<Option<RowStream>>,
    /// Declared `WITH HOLD`: it outlives its transaction block.
    hold: bool,
}

impl Cursor {
    pub(super) fn new(columns: Arc<Vec<OutputColumn>>, rows: RowStream, hold: bool) -> Self {
        Cursor {
            columns,
            rows: Mutex::new(Some(rows)),
            hold,
        }
    }

    /// The columns its rows have.
    pub(super) fn columns(&self) -> Arc<Vec<OutputColumn>> {
        Arc::clone(&self.columns)
    }

    /// Whether the cursor survives the end of the block it was declared in.
    pub(super) fn held(&self) -> bool {
        self.hold
    }

    /// The next `count` rows (all that are left for `None`; fewer if fewer are left).
    pub(super) async fn take(&self, count: Option<usize>) -> SqlResult<Vec<Vec<Datum>>> {
        let taken = match self.rows.lock() {
            Ok(mut rows) => rows.take(),
            Err(_) => None,
        };
        let Some(mut rows) = taken else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut ended = false;
        while count.is_none_or(|n| out.len() < n) {
            match rows.next().await {
                Some(row) => out.push(row?),
                None => {
                    ended = true;
                    break;
                }
            }
        }
        if !ended {
            if let Ok(mut slot) = self.rows.lock() {
                *slot = Some(rows);
            }
        }
        Ok(out)
    }
}
