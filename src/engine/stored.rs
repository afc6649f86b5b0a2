//! A row as stored — marker plus every cell version, visible or not — and the rules that
//! turn it into what a read sees: TTL and Max Versions computed at read time from the
//! table's current options, then the read's own version range, max versions, filter and
//! projection.

use super::condition::ColumnCondition;
use super::error::EngineResult;
use super::options::TableOptions;
use super::row_format::{decode_columns, decode_row, encode_row, KeptVersions, RowMarker, Skipped};
use super::types::{Cell, PrimaryKey, Row, Value};

/// One stored version of one cell.
#[derive(Debug, Clone)]
pub(crate) struct StoredCell {
    pub column: String,
    pub version: i64,
    pub value: Value,
}

/// One row as stored under its key (see `row_format`).
#[derive(Debug, Clone)]
pub(crate) struct StoredRow {
    pub pk: PrimaryKey,
    /// The table prefix and the encoded PK: the row's key. Empty in rows a scan decoded
    /// for a read (`RowScanner::for_read`), which are never written back.
    pub key: Vec<u8>,
    /// `None` when the row is not stored.
    pub marker: Option<RowMarker>,
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
    /// Read as of this time (ms): only versions at or before it, and only rows that
    /// existed then (written at or before it).
    pub as_of: Option<i64>,
    /// Read the rows as they were when this REPEATABLE READ snapshot was taken.
    pub snapshot: Option<super::ReadSnapshot>,
}

/// Whether GC has anything to remove from the row stored as `value`: a column with more
/// versions than Max Versions, a version past the TTL, or an expired row without cells.
/// Looks at versions only, never decoding a value, so a GC pass passes over a row with
/// nothing to remove at little cost.
pub(crate) fn collectable(value: &[u8], options: &TableOptions, now_ms: i64) -> EngineResult<bool> {
    let (marker, _, skipped) = decode_columns(value, |_| false, KeptVersions::All)?;
    // Versions descend in time, and `alive` is monotonic: the oldest decides.
    let expired = match skipped.oldest {
        Some(oldest) => !options.alive(oldest, now_ms),
        None => !options.alive(marker.last_write_ms, now_ms),
    };
    Ok(expired || skipped.most_versions as i64 > options.max_versions)
}

/// Whether each of `cells` (column ascending, newest version first within a column) is
/// visible under the table's options: per column, the newest `max_versions` versions
/// that have not outlived the TTL.
fn visibility<'a>(
    cells: &'a [StoredCell],
    options: &'a TableOptions,
    now_ms: i64,
) -> impl Iterator<Item = bool> + 'a {
    let mut column: Option<&str> = None;
    let mut taken = 0i64;
    cells.iter().map(move |cell| {
        if column != Some(cell.column.as_str()) {
            column = Some(cell.column.as_str());
            taken = 0;
        }
        let visible = taken < options.max_versions && options.alive(cell.version, now_ms);
        taken += i64::from(visible);
        visible
    })
}

impl StoredRow {
    /// A row that is not stored (no marker, no cells) under `key`.
    pub fn absent(pk: PrimaryKey, key: Vec<u8>) -> Self {
        StoredRow {
            pk,
            key,
            marker: None,
            cells: Vec::new(),
        }
    }

    /// The row stored under `key` with value `value`.
    pub fn decode(pk: PrimaryKey, key: Vec<u8>, value: &[u8]) -> EngineResult<Self> {
        let (marker, cells) = decode_row(value)?;
        Ok(StoredRow {
            pk,
            key,
            marker: Some(marker),
            cells,
        })
    }

    /// The row stored under `key` as a read with `read` needs it: only the columns it
    /// returns or filters on (all of them without columns_to_get), and a summary of the
    /// rest for `into_read_with`. Such a row is for reading only: never write it back.
    pub fn decode_for_read(
        pk: PrimaryKey,
        key: Vec<u8>,
        value: &[u8],
        read: &ReadOptions,
    ) -> EngineResult<(Self, Skipped)> {
        let Some(columns) = &read.columns else {
            return Ok((Self::decode(pk, key, value)?, Skipped::default()));
        };
        let mut filtered = Vec::new();
        if let Some(filter) = &read.filter {
            filter.columns(&mut filtered);
        }
        // The common read (see `into_read_with`) shows each column's newest version.
        let kept_versions = if read.max_versions.unwrap_or(1) <= 1
            && read.version_range.is_none()
            && read.as_of.is_none()
        {
            KeptVersions::Newest
        } else {
            KeptVersions::All
        };
        let wanted = |name: &[u8]| {
            columns
                .iter()
                .chain(&filtered)
                .any(|wanted| wanted.as_bytes() == name)
        };
        let (marker, cells, skipped) = decode_columns(value, wanted, kept_versions)?;
        let row = StoredRow {
            pk,
            key,
            marker: Some(marker),
            cells,
        };
        Ok((row, skipped))
    }

    /// The value to store for this row; `None` when the row is deleted.
    pub fn encode(&self) -> Option<Vec<u8>> {
        self.marker
            .as_ref()
            .map(|marker| encode_row(marker, &self.cells))
    }

    /// Cells visible under the table's options: per column, the newest `max_versions`
    /// versions that have not outlived the TTL.
    pub fn visible_cells<'a>(
        &'a self,
        options: &'a TableOptions,
        now_ms: i64,
    ) -> impl Iterator<Item = &'a StoredCell> + 'a {
        self.cells
            .iter()
            .zip(visibility(&self.cells, options, now_ms))
            .filter_map(|(cell, visible)| visible.then_some(cell))
    }

    /// Drops the versions no read can see (those `visible_cells` leaves out). Every
    /// write calls it; most hide nothing, and those allocate nothing here.
    pub fn drop_hidden_versions(&mut self, options: &TableOptions, now_ms: i64) {
        if visibility(&self.cells, options, now_ms).all(|visible| visible) {
            return;
        }
        let verdicts: Vec<bool> = visibility(&self.cells, options, now_ms).collect();
        let mut verdicts = verdicts.into_iter();
        self.cells.retain(|_| verdicts.next().unwrap_or(false));
    }

    /// Whether the row exists for readers: it has a marker, and under a TTL it still
    /// has a visible cell or, having no cells at all, was written recently enough. A
    /// row whose cells all outlived the TTL is gone, however recent its last write.
    pub fn exists(&self, options: &TableOptions, now_ms: i64) -> bool {
        self.exists_with(options, now_ms, &Skipped::default())
    }

    /// [`StoredRow::exists`] of a row from `decode_for_read`, with the columns it
    /// `skipped`: their newest version counts as a visible cell when alive (versions
    /// descend, and Max Versions is at least 1, so that version is visible).
    fn exists_with(&self, options: &TableOptions, now_ms: i64, skipped: &Skipped) -> bool {
        let Some(marker) = &self.marker else {
            return false;
        };
        if options.ttl < 0 {
            return true;
        }
        if self.cells.is_empty() && skipped.newest.is_none() {
            return options.alive(marker.last_write_ms, now_ms);
        }
        self.visible_cells(options, now_ms).next().is_some()
            || skipped
                .newest
                .is_some_and(|version| options.alive(version, now_ms))
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
        self.into_read_with(options, now_ms, read, Skipped::default())
    }

    /// [`StoredRow::into_read`] of a row from `decode_for_read`, whose `skipped` columns
    /// still count for whether the row exists.
    pub fn into_read_with(
        self,
        options: &TableOptions,
        now_ms: i64,
        read: &ReadOptions,
        skipped: Skipped,
    ) -> Option<Row> {
        if !self.exists_with(options, now_ms, &skipped) {
            return None;
        }
        if let Some(as_of) = read.as_of {
            // The marker only knows the last write, so a row rewritten since `as_of`
            // existed then if one of its versions is that old.
            let existed = self.marker.is_some_and(|m| m.last_write_ms <= as_of)
                || self.cells.iter().any(|c| c.version <= as_of)
                || skipped.oldest.is_some_and(|version| version <= as_of);
            if !existed {
                return None;
            }
        }
        let per_column = read.max_versions.unwrap_or(1).max(1);
        let mut cells = self.cells;
        if per_column == 1 && read.version_range.is_none() && read.as_of.is_none() {
            // The common read: each column's newest version, if alive. Versions descend,
            // so a column's alive versions are a prefix of it, and Max Versions (at least
            // 1) shows the first of them. No per-cell bookkeeping needed.
            cells.retain(|c| options.alive(c.version, now_ms));
            cells.dedup_by(|later, first| later.column == first.column);
        } else {
            // Decided on borrowed cells first: per column (cells of a column are
            // adjacent), the table's visibility (`visible_cells`), then the read's version
            // range and max versions.
            let mut keep = Vec::with_capacity(cells.len());
            let mut column: Option<&str> = None;
            let (mut visible, mut taken) = (0i64, 0i64);
            for c in &cells {
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
                    || read.as_of.is_some_and(|as_of| c.version > as_of)
                {
                    keep.push(false);
                    continue;
                }
                taken += 1;
                keep.push(taken <= per_column);
            }
            let mut verdicts = keep.into_iter();
            cells.retain(|_| verdicts.next().unwrap_or(false));
        }
        // Same fields, so this reuses the vector's allocation.
        let cells: Vec<Cell> = cells
            .into_iter()
            .map(|c| Cell {
                column: c.column,
                version: c.version,
                value: c.value,
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
