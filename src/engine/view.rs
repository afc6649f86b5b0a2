//! A row as a read sees it, borrowed instead of owned: `RowView` lends the key values
//! and the cells of a row straight from the buffers the backend lends a scan, so a range
//! read hands each row to its consumer (the SQL layer builds its result row from it)
//! without building a `StoredRow` and a `Row` first. Those cost several allocations per
//! row (key vector and strings, cell vector, column names), which in a 100-row range
//! read was a fifth of the server's CPU.
//!
//! Only the common read decodes this way: each column's newest visible value, no
//! filter, no version range, not as of a time ([`RowView::serves`]). Any other read,
//! and every `Row`, can still be lent as a view ([`RowView::of`]).

use super::codec::decode_pk_ref;
use super::error::{EngineError, EngineResult};
use super::options::TableOptions;
use super::row_format::{visit_columns_through, KeptVersions};
use super::stored::ReadOptions;
use super::types::{Cell, PkRef, PkType, Row, ValueRef};
use smallvec::SmallVec;

/// Key columns a table may have (1 to 4, docs/table-store.md §2), kept inline in a view.
const INLINE_PK_COLUMNS: usize = 4;
/// Cells a view keeps inline before it allocates: a range read asks for a few columns.
const INLINE_CELLS: usize = 8;

/// One cell version of a view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellRef<'a> {
    pub column: &'a str,
    pub version: i64,
    pub value: ValueRef<'a>,
}

/// A row as a read sees it: key values and visible cells (column ascending, newest
/// version first within a column), borrowed.
#[derive(Debug, Clone, PartialEq)]
pub struct RowView<'a> {
    pk: SmallVec<[PkRef<'a>; INLINE_PK_COLUMNS]>,
    cells: SmallVec<[CellRef<'a>; INLINE_CELLS]>,
}

impl<'a> RowView<'a> {
    /// Whether a read with `read` options can be decoded as views
    /// ([`RowView::decode`]): the read of each column's newest visible value, which is
    /// what SQL reads of a table ask for.
    pub fn serves(read: &ReadOptions) -> bool {
        read.max_versions.unwrap_or(1) <= 1
            && read.version_range.is_none()
            && read.as_of.is_none()
            && read.filter.is_none()
    }

    /// `row`, lent as a view.
    pub fn of(row: &'a Row) -> Self {
        RowView {
            pk: row.pk.iter().map(PkRef::from).collect(),
            cells: row
                .cells
                .iter()
                .map(|c| CellRef {
                    column: &c.column,
                    version: c.version,
                    value: c.value.as_ref(),
                })
                .collect(),
        }
    }

    /// The row stored with encoded key `pk` (after the table prefix) and value `value`
    /// as a read with `read` (which [`RowView::serves`]) sees it at `now_ms`; `None`
    /// when the row does not exist for readers. The same rules as
    /// `StoredRow::into_read_with` on its common path: the row exists if there is no
    /// TTL, or the newest version of any of its columns is alive, or it has no columns
    /// and its last write is alive;
    /// each asked-for column shows its newest version if that is alive.
    pub(crate) fn decode(
        pk: &'a [u8],
        pk_types: &[PkType],
        value: &'a [u8],
        read: &ReadOptions,
        options: &TableOptions,
        now_ms: i64,
    ) -> EngineResult<Option<Self>> {
        debug_assert!(Self::serves(read));
        let wanted = |name: &[u8]| {
            read.columns
                .as_ref()
                .is_none_or(|columns| columns.iter().any(|c| c.as_bytes() == name))
        };
        // Without a TTL the columns a read does not want cannot change what it returns
        // (their versions only matter to whether an expiring row still exists), so the
        // decode stops after the last wanted column (names ascend in a row): a range read
        // of the first of four attributes reads about a quarter of each row.
        let through = match (&read.columns, options.ttl < 0) {
            (Some(columns), true) => Some(
                columns
                    .iter()
                    .map(|c| c.as_bytes())
                    .max()
                    .unwrap_or_default(),
            ),
            _ => None,
        };
        let mut cells: SmallVec<[CellRef<'a>; INLINE_CELLS]> = SmallVec::new();
        let (marker, skipped) = visit_columns_through(
            value,
            wanted,
            KeptVersions::Newest,
            through,
            |column, version, value| {
                cells.push(CellRef {
                    column,
                    version,
                    value,
                })
            },
        )?;
        let alive = |version: i64| options.alive(version, now_ms);
        let has_cells = !cells.is_empty() || skipped.newest.is_some();
        let exists = options.ttl < 0
            || (!has_cells && alive(marker.last_write_ms))
            || cells.iter().any(|c| alive(c.version))
            || skipped.newest.is_some_and(alive);
        if !exists {
            return Ok(None);
        }
        cells.retain(|c| alive(c.version));
        Ok(Some(RowView {
            pk: decode_pk_refs(pk, pk_types)?,
            cells,
        }))
    }

    /// The key values, one per PK column in declared order.
    pub fn pk(&self) -> &[PkRef<'a>] {
        &self.pk
    }

    pub fn cells(&self) -> &[CellRef<'a>] {
        &self.cells
    }

    /// The newest visible version of `column`.
    pub fn latest(&self, column: &str) -> Option<&CellRef<'a>> {
        self.cells.iter().find(|c| c.column == column)
    }

    /// Bytes of the row as counted for read capacity units (see [`Row::size`]).
    pub fn size(&self) -> usize {
        self.pk.iter().map(PkRef::size).sum::<usize>()
            + self
                .cells
                .iter()
                .map(|c| c.column.len() + c.value.size())
                .sum::<usize>()
    }

    /// The row, owned.
    pub fn to_row(&self) -> Row {
        Row {
            pk: self.pk.iter().map(PkRef::to_value).collect(),
            cells: self
                .cells
                .iter()
                .map(|c| Cell {
                    column: c.column.to_owned(),
                    version: c.version,
                    value: c.value.to_value(),
                })
                .collect(),
        }
    }
}

/// Decodes an encoded primary key that must be exactly `types` long.
fn decode_pk_refs<'a>(
    bytes: &'a [u8],
    types: &[PkType],
) -> EngineResult<SmallVec<[PkRef<'a>; INLINE_PK_COLUMNS]>> {
    let mut pk = SmallVec::new();
    let mut at = 0;
    for &ty in types {
        let rest = bytes
            .get(at..)
            .ok_or_else(|| EngineError::Corrupt("short row key".into()))?;
        let (value, used) = decode_pk_ref(rest, ty)?;
        pk.push(value);
        at += used;
    }
    if at != bytes.len() {
        return Err(EngineError::Corrupt("row key longer than its PK".into()));
    }
    Ok(pk)
}
