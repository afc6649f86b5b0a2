//! Walks a key range of one table row by row, fetching rows from the backend in
//! bounded chunks so a scan over millions of rows holds only a chunk in memory. Each row
//! is one entry (see `row_format`), decoded straight from the backend's buffers as it
//! lends them (`Backend::visit`), so an entry is never copied whole.

use super::catalog::TableMeta;
use super::codec::{decode_pk, decode_pk_value};
use super::error::{EngineError, EngineResult};
use super::options::TableOptions;
use super::row_format::Skipped;
use super::stored::{collectable, ReadOptions, StoredRow};
use super::types::{PkType, PrimaryKey};
use crate::storage::{Backend, Direction, KeyRange};
use std::collections::VecDeque;
use std::ops::Bound;

/// Most rows fetched per backend call.
const CHUNK_ROWS: usize = 256;
/// Fewest rows fetched per backend call.
const MIN_CHUNK_ROWS: usize = 4;

/// What `RowScanner::step` came to.
pub(crate) enum ScanStep {
    Row(StoredRow),
    /// A whole chunk was passed over (`only_collectable`); the range may hold more.
    PassedOver,
    End,
}

pub(crate) struct RowScanner<'a> {
    cursor: Cursor<'a>,
    pk_types: Vec<PkType>,
    /// Rows fetched and not yet returned.
    rows: VecDeque<(StoredRow, Skipped)>,
    /// Set by `for_read`: rows are decoded for that read only.
    read: Option<ReadOptions>,
    /// Set by `only_collectable`: the table's options and the time GC judges by.
    collect: Option<(TableOptions, i64)>,
    /// Rows `only_collectable` passed over without decoding them.
    passed_over: u64,
}

/// Where a scan is in its key range, and how it asks the backend for the next chunk.
struct Cursor<'a> {
    backend: &'a dyn Backend,
    /// Bytes before the encoded PK in every key (the table prefix).
    table_prefix_len: usize,
    /// The keys not fetched yet.
    range: KeyRange,
    /// The key prefix of the one partition the range lies in, if it lies in one: the
    /// backend may then serve it from memory (`Backend::visit_partition`).
    partition: Option<Vec<u8>>,
    direction: Direction,
    exhausted: bool,
    /// Rows to fetch with the next backend call; grows towards `CHUNK_ROWS`.
    chunk: usize,
}

impl<'a> RowScanner<'a> {
    pub fn new(
        backend: &'a dyn Backend,
        table: &TableMeta,
        range: KeyRange,
        direction: Direction,
    ) -> Self {
        let pk_types = table.pk_types();
        let table_prefix_len = super::codec::table_prefix(table.id).len();
        RowScanner {
            cursor: Cursor {
                backend,
                partition: partition_of(&range, table_prefix_len, &pk_types),
                table_prefix_len,
                range,
                direction,
                exhausted: false,
                chunk: CHUNK_ROWS,
            },
            pk_types,
            rows: VecDeque::new(),
            read: None,
            collect: None,
            passed_over: 0,
        }
    }

    /// Starts with a backend call sized for `rows` rows, not a full chunk, so a short
    /// GetRange page does not read rows it will never return.
    pub fn expect_rows(mut self, rows: usize) -> Self {
        self.cursor.chunk = rows.clamp(MIN_CHUNK_ROWS, CHUNK_ROWS);
        self
    }

    /// Decodes rows only as far as `read` needs them (`StoredRow::decode_for_read`): the
    /// rows then serve that read and must not be written back.
    pub fn for_read(mut self, read: &ReadOptions) -> Self {
        self.read = Some(read.clone());
        self
    }

    /// Returns only rows GC has something to remove from at `now_ms` (`collectable`);
    /// the others are counted (`passed_over`) but not decoded.
    pub fn only_collectable(mut self, options: &TableOptions, now_ms: i64) -> Self {
        self.collect = Some((options.clone(), now_ms));
        self
    }

    /// How many rows `only_collectable` passed over so far.
    pub fn passed_over(&self) -> u64 {
        self.passed_over
    }

    /// Fetches one more chunk of rows.
    async fn fill(&mut self) -> EngineResult<()> {
        let (pk_types, rows, read, collect, passed_over) = (
            &self.pk_types,
            &mut self.rows,
            self.read.as_ref(),
            self.collect.as_ref(),
            &mut self.passed_over,
        );
        let add = |key: &[u8], pk: &[u8], value: &[u8]| -> EngineResult<bool> {
            if let Some((options, now_ms)) = collect {
                if !collectable(value, options, *now_ms)? {
                    *passed_over += 1;
                    return Ok(true);
                }
            }
            let (pk_values, used) = decode_pk(pk, pk_types)?;
            if used != pk.len() {
                return Err(EngineError::Corrupt("row key longer than its PK".into()));
            }
            rows.push_back(match read {
                // A row decoded for a read is never written back, so it needs no key.
                Some(read) => StoredRow::decode_for_read(pk_values, Vec::new(), value, read)?,
                None => (
                    StoredRow::decode(pk_values, key.to_vec(), value)?,
                    Skipped::default(),
                ),
            });
            Ok(true)
        };
        self.cursor.fetch(add).await
    }

    /// Lends the remaining rows to `each` one at a time, as the backend lends them: the
    /// encoded PK (after the table prefix) and the stored value, undecoded. Stops at the
    /// end of the range, when `each` fails, or when it returns false; the scan is then
    /// over. Rows taken or peeked at with `next_row`/`peek_pk` are not visited.
    pub async fn visit(
        &mut self,
        mut each: impl FnMut(&[u8], &[u8]) -> EngineResult<bool> + Send,
    ) -> EngineResult<()> {
        while !self.cursor.exhausted {
            self.cursor.fetch(|_key, pk, value| each(pk, value)).await?;
        }
        Ok(())
    }

    /// The PK of the next row, without consuming it.
    pub async fn peek_pk(&mut self) -> EngineResult<Option<PrimaryKey>> {
        while self.rows.is_empty() && !self.cursor.exhausted {
            self.fill().await?;
        }
        Ok(self.rows.front().map(|(row, _)| row.pk.clone()))
    }

    /// The next row as stored (as far as decoded), with what `for_read` skipped of it.
    pub async fn next_row(&mut self) -> EngineResult<Option<(StoredRow, Skipped)>> {
        while self.rows.is_empty() && !self.cursor.exhausted {
            self.fill().await?;
        }
        Ok(self.rows.pop_front())
    }

    /// `next_row` that fetches at most one chunk, so a caller that paces itself (GC's
    /// background pass) can rest between chunks: `next_row` keeps fetching while
    /// `only_collectable` passes every row over, which over a table with nothing to
    /// collect is the whole table in one call.
    pub async fn step(&mut self) -> EngineResult<ScanStep> {
        if self.rows.is_empty() && !self.cursor.exhausted {
            self.fill().await?;
        }
        Ok(match self.rows.pop_front() {
            Some((row, _)) => ScanStep::Row(row),
            None if self.cursor.exhausted => ScanStep::End,
            None => ScanStep::PassedOver,
        })
    }
}

impl Cursor<'_> {
    /// Hands the next chunk of entries to `add` (key, encoded PK, value) and moves the
    /// range past them. `add` returning false stops the scan there.
    async fn fetch(
        &mut self,
        mut add: impl FnMut(&[u8], &[u8], &[u8]) -> EngineResult<bool> + Send,
    ) -> EngineResult<()> {
        let mut seen = 0usize;
        let mut last_key: Option<Vec<u8>> = None;
        let mut failed: Option<EngineError> = None;
        let mut stopped = false;
        let (chunk, table_prefix_len) = (self.chunk, self.table_prefix_len);
        let mut each = |key: &[u8], value: &[u8]| {
            seen += 1;
            let added = key
                .get(table_prefix_len..)
                .ok_or_else(|| EngineError::Corrupt("short row key".into()))
                .and_then(|pk| add(key, pk, value));
            match added {
                Ok(true) => {}
                Ok(false) => {
                    stopped = true;
                    return false;
                }
                Err(e) => {
                    failed = Some(e);
                    return false;
                }
            }
            if seen == chunk {
                last_key = Some(key.to_vec());
            }
            true
        };
        match &self.partition {
            Some(partition) => {
                self.backend
                    .visit_partition(partition, &self.range, self.direction, chunk, &mut each)
                    .await?
            }
            None => {
                self.backend
                    .visit(&self.range, self.direction, chunk, &mut each)
                    .await?
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        match last_key {
            Some(last) if !stopped => {
                self.range = self.range.resume_after(&last, self.direction);
            }
            _ => self.exhausted = true,
        }
        self.chunk = (self.chunk * 2).min(CHUNK_ROWS);
        Ok(())
    }
}

/// The key prefix of the partition (table prefix and first PK column) that holds every
/// key of `range`, if one does.
fn partition_of(range: &KeyRange, table_prefix_len: usize, pk_types: &[PkType]) -> Option<Vec<u8>> {
    let start = match &range.start {
        Bound::Included(key) | Bound::Excluded(key) => key,
        Bound::Unbounded => return None,
    };
    let first_column = start.get(table_prefix_len..)?;
    let (_, used) = decode_pk_value(first_column, *pk_types.first()?).ok()?;
    let partition = start.get(..table_prefix_len + used)?;
    range.within_prefix(partition).then(|| partition.to_vec())
}
