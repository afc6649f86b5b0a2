//! A row as stored — marker plus every cell version, visible or not — and the rules that
//! turn it into what a read sees: TTL and Max Versions computed at read time from the
//! table's current options, then the read's own version range, max versions, filter and
//! projection.

use super::codec::{decode_suffix, decode_value, KeySuffix, RowMarker};
use super::condition::ColumnCondition;
use super::error::{EngineError, EngineResult};
use super::options::TableOptions;
use super::types::{Cell, PrimaryKey, Row, Value};

/// One stored version of one cell.
#[derive(Debug, Clone)]
pub(crate) struct StoredCell {
    pub key: Vec<u8>,
    pub column: String,
    pub version: i64,
    pub value: Value,
}

/// Every key of one row.
#[derive(Debug, Clone)]
pub(crate) struct StoredRow {
    pub pk: PrimaryKey,
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
    /// Builds a stored row from its entries in key order (`prefix_len` = bytes of the
    /// table prefix plus the encoded PK).
    pub fn from_entries(
        pk: PrimaryKey,
        prefix_len: usize,
        entries: Vec<(Vec<u8>, Vec<u8>)>,
    ) -> EngineResult<Self> {
        let mut row = StoredRow {
            pk,
            marker_key: Vec::new(),
            marker: None,
            cells: Vec::with_capacity(entries.len()),
        };
        for (key, value) in entries {
            let suffix = key
                .get(prefix_len..)
                .ok_or_else(|| EngineError::Corrupt("short row key".into()))?;
            match decode_suffix(suffix)? {
                KeySuffix::Marker => {
                    row.marker = Some((value.clone(), RowMarker::decode(&value)?));
                    row.marker_key = key;
                }
                KeySuffix::Cell { column, version } => {
                    let column = column.to_string();
                    row.cells.push(StoredCell {
                        column,
                        version,
                        value: decode_value(&value)?,
                        key,
                    });
                }
            }
        }
        Ok(row)
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
        if !self.exists(options, now_ms) {
            return None;
        }
        let per_column = read.max_versions.unwrap_or(1).max(1);
        let mut column: Option<&str> = None;
        let mut taken = 0i64;
        let cells: Vec<Cell> = self
            .visible_cells(options, now_ms)
            .filter(|c| {
                read.version_range
                    .is_none_or(|(start, end)| c.version >= start && c.version < end)
            })
            .filter(|c| {
                if column != Some(c.column.as_str()) {
                    column = Some(c.column.as_str());
                    taken = 0;
                }
                taken += 1;
                taken <= per_column
            })
            .map(|c| Cell {
                column: c.column.clone(),
                version: c.version,
                value: c.value.clone(),
            })
            .collect();
        let mut row = Row {
            pk: self.pk.clone(),
            cells,
        };
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
