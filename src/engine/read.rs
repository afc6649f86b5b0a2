//! Reads: GetRow, BatchGetRow and paged GetRange, each reporting its capacity units.

use super::capacity::Capacity;
use super::catalog::TableMeta;
use super::codec::{bound_key, decode_pk, decode_pk_ref, row_prefix};
use super::error::{EngineError, EngineResult};
use super::partition_load::{partition_key_of, PartitionRuns};
use super::scan::RowScanner;
use super::stored::{ReadOptions, StoredRow};
use super::types::{PkBound, PkValue, PrimaryKey, Row};
use super::validate::check_pk_value;
use super::view::RowView;
use super::Engine;
use crate::storage::{prefix_successor, Direction, KeyRange};
use std::ops::Bound;

#[derive(Debug, Clone, PartialEq)]
pub struct GetRowResult {
    pub row: Option<Row>,
    pub capacity: Capacity,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BatchGetResult {
    /// One entry per requested key, in request order.
    pub rows: Vec<Option<Row>>,
    pub capacity: Capacity,
}

/// A GetRange request. FORWARD reads `[start, end)` ascending; BACKWARD reads from
/// `start` (inclusive, the larger key) down to `end` (exclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct RangeRequest {
    pub start: Vec<PkBound>,
    pub end: Vec<PkBound>,
    pub direction: Direction,
    /// Most rows to return in this page (capped by the page limits).
    pub limit: Option<usize>,
    pub read: ReadOptions,
}

/// What [`Engine::get_range_views`] read of a GetRange page.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeVisit {
    /// Rows lent to the caller.
    pub returned: usize,
    /// Where the next page starts (inclusive), or `None` when the range is done.
    pub next_start: Option<PrimaryKey>,
    pub capacity: Capacity,
    /// Rows examined, including those that do not exist for readers.
    pub rows_scanned: u64,
}

/// One page of a GetRange.
#[derive(Debug, Clone, PartialEq)]
pub struct RangePage {
    pub rows: Vec<Row>,
    /// Where the next page starts (inclusive), or `None` when the range is done.
    pub next_start: Option<PrimaryKey>,
    pub capacity: Capacity,
    /// Rows examined, including those the filter left out.
    pub rows_scanned: u64,
}

impl Engine {
    /// Checks a full primary key against the table's PK columns.
    pub fn check_pk(&self, table: &TableMeta, pk: &[PkValue]) -> EngineResult<()> {
        if pk.len() != table.pk.len() {
            return Err(EngineError::PkArity {
                expected: table.pk.len(),
                given: pk.len(),
            });
        }
        for (column, value) in table.pk.iter().zip(pk) {
            if value.pk_type() != column.ty {
                return Err(EngineError::PkTypeMismatch {
                    column: column.name.clone(),
                    expected: column.ty,
                    given: value.pk_type(),
                    value: value.to_string(),
                });
            }
            check_pk_value(&column.name, value, &self.limits)?;
        }
        Ok(())
    }

    fn check_read(&self, read: &ReadOptions) -> EngineResult<()> {
        if let Some(columns) = &read.columns {
            if columns.len() > self.limits.max_columns_to_get {
                return Err(EngineError::TooManyColumnsToGet {
                    count: columns.len(),
                    limit: self.limits.max_columns_to_get,
                });
            }
        }
        Ok(())
    }

    /// One row as stored (visible or not), with its stored bytes for a writer's
    /// "unchanged since read" check.
    pub(crate) async fn load_row(
        &self,
        table: &TableMeta,
        pk: &[PkValue],
    ) -> EngineResult<(StoredRow, Option<Vec<u8>>)> {
        let key = row_prefix(table.id, pk);
        match self.backend.get(&key).await? {
            Some(value) => Ok((StoredRow::decode(pk.to_vec(), key, &value)?, Some(value))),
            None => Ok((StoredRow::absent(pk.to_vec(), key), None)),
        }
    }

    /// One row as `read` sees it at `now`, decoded only as far as the read needs.
    async fn read_row_at(
        &self,
        table: &TableMeta,
        pk: &[PkValue],
        read: &ReadOptions,
        now: i64,
    ) -> EngineResult<Option<Row>> {
        let key = row_prefix(table.id, pk);
        let Some(value) = self.reader(read)?.get(&key).await? else {
            return Ok(None);
        };
        let (stored, skipped) = StoredRow::decode_for_read(pk.to_vec(), key, &value, read)?;
        Ok(stored.into_read_with(&table.options, now, read, skipped))
    }

    /// GetRow: one row by its full primary key.
    pub async fn get_row(
        &self,
        table: &TableMeta,
        pk: &[PkValue],
        read: &ReadOptions,
    ) -> EngineResult<GetRowResult> {
        self.check_pk(table, pk)?;
        self.check_read(read)?;
        let now = self.now_ms();
        let stats = self.admit_read(table, now)?;
        let row = self.read_row_at(table, pk, read, now).await?;
        let capacity = Capacity::read(row.as_ref().map_or(0, Row::size));
        Self::finish_read(&stats, table, capacity, 1, now);
        let partition_key = partition_key_of(pk);
        stats
            .partitions
            .record_reads([(partition_key.as_slice(), capacity.read)], now);
        Ok(GetRowResult { row, capacity })
    }

    /// BatchGetRow: up to `max_batch_get_rows` rows of one table.
    pub async fn batch_get_row(
        &self,
        table: &TableMeta,
        pks: &[PrimaryKey],
        read: &ReadOptions,
    ) -> EngineResult<BatchGetResult> {
        if pks.len() > self.limits.max_batch_get_rows {
            return Err(EngineError::BatchTooLarge {
                what: "BatchGetRow",
                count: pks.len(),
                limit: self.limits.max_batch_get_rows,
            });
        }
        for pk in pks {
            self.check_pk(table, pk)?;
        }
        self.check_read(read)?;
        let now = self.now_ms();
        let stats = self.admit_read(table, now)?;
        let mut rows = Vec::with_capacity(pks.len());
        let mut capacity = Capacity::default();
        let mut partition_reads = Vec::with_capacity(pks.len());
        for pk in pks {
            let row = self.read_row_at(table, pk, read, now).await?;
            let cost = Capacity::read(row.as_ref().map_or(0, Row::size));
            partition_reads.push((partition_key_of(pk), cost.read));
            capacity += cost;
            rows.push(row);
        }
        Self::finish_read(&stats, table, capacity, pks.len() as u64, now);
        stats.partitions.record_reads(
            partition_reads
                .iter()
                .map(|(key, cu)| (key.as_slice(), *cu)),
            now,
        );
        Ok(BatchGetResult { rows, capacity })
    }

    /// GetRange: one page of at most `limit` rows, `max_range_rows` rows or
    /// `max_range_bytes` bytes, with where the next page starts.
    pub async fn get_range(
        &self,
        table: &TableMeta,
        request: &RangeRequest,
    ) -> EngineResult<RangePage> {
        let (range, limit) = self.range_of(table, request)?;
        let now = self.now_ms();
        let stats = self.admit_read(table, now)?;
        let mut scanner =
            RowScanner::new(self.reader(&request.read)?, table, range, request.direction)
                .expect_rows(limit.saturating_add(1))
                .for_read(&request.read);
        let mut rows = Vec::new();
        let mut bytes = 0usize;
        let mut rows_scanned = 0u64;
        let mut next_start = None;
        let mut runs = PartitionRuns::default();
        let mut partition_key = Vec::new();
        if limit == 0 {
            // A zero-row page still says where the range continues.
            next_start = scanner.peek_pk().await?;
        }
        while let Some(stored) = match limit {
            0 => None,
            _ => scanner.next_row().await?,
        } {
            rows_scanned += 1;
            let (stored, skipped) = stored;
            if let Some(row) = stored.into_read_with(&table.options, now, &request.read, skipped) {
                bytes += row.size();
                partition_key.clear();
                if let Some(first) = row.pk.first() {
                    super::codec::encode_pk_value(&mut partition_key, first);
                }
                runs.add(&partition_key, row.size());
                rows.push(row);
            }
            if rows.len() >= limit || bytes >= self.limits.max_range_bytes {
                next_start = scanner.peek_pk().await?;
                break;
            }
        }
        let capacity = Capacity::read(bytes);
        Self::finish_read(&stats, table, capacity, rows_scanned, now);
        stats.partitions.record_runs(&runs, now);
        Ok(RangePage {
            rows,
            next_start,
            capacity,
            rows_scanned,
        })
    }

    /// [`Engine::get_range`] lending each row of the page to `each` as a view instead of
    /// returning it: rows of a read [`RowView::serves`] are decoded straight from the
    /// backend's buffers, without a `Row` built for each. The same page, limits,
    /// capacity and statistics as `get_range`.
    pub async fn get_range_views(
        &self,
        table: &TableMeta,
        request: &RangeRequest,
        mut each: impl FnMut(&RowView<'_>) + Send,
    ) -> EngineResult<RangeVisit> {
        if !RowView::serves(&request.read) {
            let page = self.get_range(table, request).await?;
            page.rows.iter().for_each(|row| each(&RowView::of(row)));
            return Ok(RangeVisit {
                returned: page.rows.len(),
                next_start: page.next_start,
                capacity: page.capacity,
                rows_scanned: page.rows_scanned,
            });
        }
        let (range, limit) = self.range_of(table, request)?;
        let now = self.now_ms();
        let stats = self.admit_read(table, now)?;
        let pk_types = table.pk_types();
        let max_bytes = self.limits.max_range_bytes;
        let (mut returned, mut bytes, mut rows_scanned) = (0usize, 0usize, 0u64);
        let mut next_start = None;
        let mut runs = PartitionRuns::default();
        RowScanner::new(self.reader(&request.read)?, table, range, request.direction)
            .expect_rows(limit.saturating_add(1))
            .visit(|pk, value| {
                if returned >= limit || bytes >= max_bytes {
                    // The page is full: this row is where the next one starts.
                    next_start = Some(decode_pk(pk, &pk_types)?.0);
                    return Ok(false);
                }
                rows_scanned += 1;
                let read = &request.read;
                if let Some(view) =
                    RowView::decode(pk, &pk_types, value, read, &table.options, now)?
                {
                    bytes += view.size();
                    returned += 1;
                    if let Some(&partition_type) = pk_types.first() {
                        let partition_key_len = decode_pk_ref(pk, partition_type)?.1;
                        runs.add(&pk[..partition_key_len], view.size());
                    }
                    each(&view);
                }
                Ok(true)
            })
            .await?;
        let capacity = Capacity::read(bytes);
        Self::finish_read(&stats, table, capacity, rows_scanned, now);
        stats.partitions.record_runs(&runs, now);
        Ok(RangeVisit {
            returned,
            next_start,
            capacity,
            rows_scanned,
        })
    }

    /// The checked key range of a GetRange request, and the most rows its page returns.
    fn range_of(
        &self,
        table: &TableMeta,
        request: &RangeRequest,
    ) -> EngineResult<(KeyRange, usize)> {
        self.check_read(&request.read)?;
        for bound in [&request.start, &request.end] {
            self.check_bound(table, bound)?;
        }
        let start_key = bound_key(table.id, &request.start);
        let end_key = bound_key(table.id, &request.end);
        let range = match request.direction {
            Direction::Forward => KeyRange {
                start: Bound::Included(start_key),
                end: Bound::Excluded(end_key),
            },
            // Backward: every key of the start row is included, every key of the end
            // row excluded, hence the prefix successors.
            Direction::Backward => KeyRange {
                start: match prefix_successor(&end_key) {
                    Some(k) => Bound::Included(k),
                    None => Bound::Excluded(end_key),
                },
                end: match prefix_successor(&start_key) {
                    Some(k) => Bound::Excluded(k),
                    None => Bound::Unbounded,
                },
            },
        };
        let limit = request
            .limit
            .unwrap_or(usize::MAX)
            .min(self.limits.max_range_rows);
        Ok((range, limit))
    }

    fn check_bound(&self, table: &TableMeta, bound: &[PkBound]) -> EngineResult<()> {
        if bound.len() != table.pk.len() {
            return Err(EngineError::PkArity {
                expected: table.pk.len(),
                given: bound.len(),
            });
        }
        for (column, b) in table.pk.iter().zip(bound) {
            if let PkBound::Value(v) = b {
                if v.pk_type() != column.ty {
                    return Err(EngineError::PkTypeMismatch {
                        column: column.name.clone(),
                        expected: column.ty,
                        given: v.pk_type(),
                        value: v.to_string(),
                    });
                }
            }
        }
        Ok(())
    }
}
