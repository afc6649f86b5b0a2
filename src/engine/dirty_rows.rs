//! The rows of each table whose GC rewrite lost to a write in between, since the table's
//! last background GC pass began (writes themselves store no hidden version).
//!
//! A pass over a table without a TTL then examines those rows only, instead of reading
//! the whole table again for a few rows.
//!
//! Tracking starts when a whole pass over the table begins: that pass sees every row
//! written before, and every lost rewrite after is recorded here (the record is made
//! after the losing pass took its set, so the next pass takes it). A table is not
//! tracked until then, after a restart for one, and stops being tracked past `MAX_ROWS`
//! rows, where examining them one by one would cost about what a whole pass costs; the
//! next pass is then a whole one.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// Most rows tracked per table: about 20 MB with 40-byte keys.
const MAX_ROWS: usize = 1 << 18;

#[derive(Default)]
pub(super) struct DirtyRows(Mutex<HashMap<u32, Tracked>>);

enum Tracked {
    /// The row keys recorded since the last pass began.
    Rows(HashSet<Vec<u8>>),
    /// More than `MAX_ROWS` were recorded: the next pass reads the whole table.
    Overflowed,
}

impl DirtyRows {
    /// Records row keys of `table` that may hold a hidden version; a table not tracked
    /// yet ignores them (its next pass reads the whole table anyway).
    pub(super) fn record(&self, table: u32, keys: impl IntoIterator<Item = Vec<u8>>) {
        let mut tables = self.lock();
        let Some(tracked) = tables.get_mut(&table) else {
            return;
        };
        if let Tracked::Rows(rows) = tracked {
            rows.extend(keys);
            if rows.len() > MAX_ROWS {
                *tracked = Tracked::Overflowed;
            }
        }
    }

    /// Begins tracking `table` afresh, as a pass over all its rows begins.
    pub(super) fn start_whole_pass(&self, table: u32) {
        self.lock().insert(table, Tracked::Rows(HashSet::new()));
    }

    /// The rows a pass beginning now must examine, in key order, and tracking goes on
    /// for the next pass; `None` when the pass must read the whole table.
    pub(super) fn take(&self, table: u32) -> Option<Vec<Vec<u8>>> {
        let mut tables = self.lock();
        match tables.get_mut(&table)? {
            Tracked::Rows(rows) => {
                let mut keys: Vec<_> = std::mem::take(rows).into_iter().collect();
                keys.sort_unstable();
                Some(keys)
            }
            Tracked::Overflowed => None,
        }
    }

    /// Stops tracking the tables not in `live` (dropped ones).
    pub(super) fn keep_only(&self, live: &HashSet<u32>) {
        self.lock().retain(|table, _| live.contains(table));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u32, Tracked>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(names: &[&str]) -> Vec<Vec<u8>> {
        names.iter().map(|n| n.as_bytes().to_vec()).collect()
    }

    #[test]
    fn rows_are_tracked_from_a_whole_pass_on_and_taken_once() {
        let dirty = DirtyRows::default();
        dirty.record(1, keys(&["before"]));
        assert_eq!(dirty.take(1), None, "untracked: a whole pass is due");
        dirty.start_whole_pass(1);
        dirty.record(1, keys(&["b", "a", "b"]));
        dirty.record(2, keys(&["other table"]));
        assert_eq!(dirty.take(1), Some(keys(&["a", "b"])));
        assert_eq!(
            dirty.take(1),
            Some(Vec::new()),
            "taken rows are not taken again"
        );
        dirty.record(1, keys(&["c"]));
        assert_eq!(dirty.take(1), Some(keys(&["c"])));
        assert_eq!(dirty.take(2), None);
    }

    #[test]
    fn too_many_rows_make_the_next_pass_a_whole_one() {
        let dirty = DirtyRows::default();
        dirty.start_whole_pass(7);
        dirty.record(7, (0..=MAX_ROWS as u32).map(|n| n.to_be_bytes().to_vec()));
        assert_eq!(dirty.take(7), None);
        dirty.start_whole_pass(7);
        dirty.record(7, keys(&["x"]));
        assert_eq!(dirty.take(7), Some(keys(&["x"])));
    }

    #[test]
    fn dropped_tables_stop_being_tracked() {
        let dirty = DirtyRows::default();
        dirty.start_whole_pass(1);
        dirty.start_whole_pass(2);
        dirty.keep_only(&HashSet::from([2]));
        dirty.record(1, keys(&["a"]));
        assert_eq!(dirty.take(1), None);
        assert_eq!(dirty.take(2), Some(Vec::new()));
    }
}
