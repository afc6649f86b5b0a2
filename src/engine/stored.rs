//! A row as stored — marker plus every cell version, visible or not — and the rules that
//! turn it into what a read sees: TTL and Max Versions computed at read time from the
//! table's current options, then the read's own version range, max versions, filter and
//! projection.

use super::codec::{cell_key, decode_suffix, decode_value, KeySuffix, RowMarker};
use super::condition::ColumnCondition;
use super::error::{EngineError, EngineResult};
use super::options::TableOptions;
use super::types::{Cell, PrimaryKey, Row, Value};

/// One stored version of one cell. Its key is not kept (reads never need it); writes
/// and GC rebuild it with [`StoredRow::cell_key`].
#[derive(Debug, Clone)]
pub(crate) struct StoredCell {
    pub column: String,
    pub version: i64,
    pub value: Value,
}

/// Every key of one row.
#[derive(Debug, Clone)]
pub(crate) struct StoredRow {
    pub pk: PrimaryKey,
    /// The table prefix and the encoded PK: every key of the row starts with it.
    pub prefix: Vec<u8>,
    pub marker_key: Vec<u8>,
    /// The marker's raw bytes (for compare-and-swap) and decoded form.
    pub marker: Option<(Vec<u8>, RowMarker)>,
    /// Column ascending, newest version first within a column.
    pub cells: Vec<StoredCell>,
}

/// What a read asks for beyond the key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadOptions {
    /// columns_to_get; `None` = every column.
    pub columns: Option<Vec<String>>,
    /// Versions per column to return; `None` = the newest only.
    pub max_versions: Option<i64>,
    /// Only versions in `[start, end)`.
    pub version_range: Option<(i64, i64)>,
    /// Rows whose cells do not match are left out.
    pub filter: Option<ColumnCondition>,
}

impl StoredRow {
    /// An empty row (no marker, no cells) whose keys start with `prefix`.
    pub fn new(pk: PrimaryKey, prefix: Vec<u8>) -> Self {
        StoredRow {
            pk,
            prefix,
            marker_key: Vec::new(),
            marker: None,
            cells: Vec::new(),
        }
    }

    /// Adds one stored entry of this row. Entries come in key order, or in reverse key
    /// order followed by [`StoredRow::finish_backward`]. The entry is decoded from the
    /// backend's buffers: nothing is copied but the column name and the value.
    pub fn push_entry(&mut self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        let suffix = key
            .get(self.prefix.len()..)
            .ok_or_else(|| EngineError::Corrupt("short row key".into()))?;
        match decode_suffix(suffix)? {
            KeySuffix::Marker => {
                self.marker = Some((value.to_vec(), RowMarker::decode(value)?));
                self.marker_key = key.to_vec();
            }
            KeySuffix::Cell { column, version } => {
                self.cells.push(StoredCell {
                    column: column.to_string(),
                    version,
                    value: decode_value(value)?,
                });
            }
        }
        Ok(())
    }

    /// Restores key order after entries were pushed in reverse key order.
    pub fn finish_backward(&mut self) {
        self.cells.reverse();
    }

    /// The key `cell` is stored under.
    pub fn cell_key(&self, cell: &StoredCell) -> Vec<u8> {
        cell_key(&self.prefix, &cell.column, cell.version)
    }

    /// Cells visible under the table's options: per column, the newest `max_versions`
    /// versions that have not outlived the TTL.
    pub fn visible_cells<'a>(
        &'a self,
        options: &'a TableOptions,
        now_ms: i64,
    ) -> impl Iterator<Item = &'a StoredCell> + 'a {
        let mut column: Option<&str> = None;
        let mut taken = 0i64;
        self.cells.iter().filter(move |cell| {
            if column != Some(cell.column.as_str()) {
                column = Some(cell.column.as_str());
                taken = 0;
            }
            if taken < options.max_versions && options.alive(cell.version, now_ms) {
                taken += 1;
                true
            } else {
                false
            }
        })
    }

    /// Whether the row exists for readers: it has a marker, and under a TTL it was
    /// written recently enough or still has a visible cell.
    pub fn exists(&self, options: &TableOptions, now_ms: i64) -> bool {
        match &self.marker {
            None => false,
            Some((_, marker)) => {
                options.ttl < 0
                    || options.alive(marker.last_write_ms, now_ms)
                    || self.visible_cells(options, now_ms).next().is_some()
            }
        }
    }

    /// The row as the read sees it, without filter or projection.
    pub fn current(&self, options: &TableOptions, now_ms: i64) -> Option<Row> {
        if !self.exists(options, now_ms) {
            return None;
        }
        Some(Row {
            pk: self.pk.clone(),
            cells: self
                .visible_cells(options, now_ms)
                .map(|c| Cell {
                    column: c.column.clone(),
                    version: c.version,
                    value: c.value.clone(),
                })
                .collect(),
        })
    }

    /// The row as a read with `read` options sees it; `None` if it does not exist or the
    /// filter leaves it out.
    pub fn read(&self, options: &TableOptions, now_ms: i64, read: &ReadOptions) -> Option<Row> {
        self.clone().into_read(options, now_ms, read)
    }

    /// [`StoredRow::read`] that moves the cells into the row instead of copying them.
    pub fn into_read(self, options: &TableOptions, now_ms: i64, read: &ReadOptions) -> Option<Row> {
        if !self.exists(options, now_ms) {
            return None;
        }
        let per_column = read.max_versions.unwrap_or(1).max(1);
        // Which cells the read returns, decided on borrowed cells first: per column (cells
        // of a column are adjacent), the table's visibility (`visible_cells`), then the
        // read's version range and max versions.
        let mut keep = Vec::with_capacity(self.cells.len());
        let mut column: Option<&str> = None;
        let (mut visible, mut taken) = (0i64, 0i64);
        for c in &self.cells {
            if column != Some(c.column.as_str()) {
                column = Some(c.column.as_str());
                visible = 0;
                taken = 0;
            }
            if visible >= options.max_versions || !options.alive(c.version, now_ms) {
                keep.push(false);
                continue;
            }
            visible += 1;
            if read
                .version_range
                .is_some_and(|(start, end)| c.version < start || c.version >= end)
            {
                keep.push(false);
                continue;
            }
            taken += 1;
            keep.push(taken <= per_column);
        }
        let cells: Vec<Cell> = self
            .cells
            .into_iter()
            .zip(keep)
            .filter_map(|(c, keep)| {
                keep.then_some(Cell {
                    column: c.column,
                    version: c.version,
                    value: c.value,
                })
            })
            .collect();
        let mut row = Row { pk: self.pk, cells };
        if let Some(filter) = &read.filter {
            if !filter.matches(&row) {
                return None;
            }
        }
        if let Some(columns) = &read.columns {
            row.cells
                .retain(|c| columns.iter().any(|wanted| *wanted == c.column));
        }
        Some(row)
    }
}
