//! Walks a key range of one table row by row, fetching entries from the backend in
//! bounded chunks so a scan over millions of rows holds only a chunk in memory. Rows are
//! decoded straight from the backend's buffers as it lends them (`Backend::visit`), so
//! an entry is never copied whole.

use super::catalog::TableMeta;
use super::codec::decode_pk;
use super::error::{EngineError, EngineResult};
use super::stored::StoredRow;
use super::types::{PkType, PrimaryKey};
use crate::storage::{Backend, Direction, KeyRange};
use std::collections::VecDeque;

/// Most entries fetched per backend call.
const CHUNK_ENTRIES: usize = 512;
/// Fewest entries fetched per backend call.
const MIN_CHUNK_ENTRIES: usize = 16;

pub(crate) struct RowScanner<'a> {
    backend: &'a dyn Backend,
    pk_types: Vec<PkType>,
    /// Bytes before the encoded PK in every key (the table prefix).
    table_prefix_len: usize,
    range: KeyRange,
    direction: Direction,
    /// Rows whose every entry has been seen.
    rows: VecDeque<StoredRow>,
    /// The row the last chunk ended in; the next chunk may hold more of its entries.
    partial: Option<StoredRow>,
    exhausted: bool,
    /// Entries to fetch with the next backend call; grows towards `CHUNK_ENTRIES`.
    chunk: usize,
}

impl<'a> RowScanner<'a> {
    pub fn new(
        backend: &'a dyn Backend,
        table: &TableMeta,
        range: KeyRange,
        direction: Direction,
    ) -> Self {
        RowScanner {
            backend,
            pk_types: table.pk_types(),
            table_prefix_len: super::codec::table_prefix(table.id).len(),
            range,
            direction,
            rows: VecDeque::new(),
            partial: None,
            exhausted: false,
            chunk: CHUNK_ENTRIES,
        }
    }

    /// Starts with a backend call sized for `rows` rows of one cell each, not a full
    /// chunk, so a short GetRange page does not read entries it will never return.
    pub fn expect_rows(mut self, rows: usize) -> Self {
        self.chunk = rows
            .saturating_mul(2)
            .saturating_add(2)
            .clamp(MIN_CHUNK_ENTRIES, CHUNK_ENTRIES);
        self
    }

    /// Fetches one more chunk, adding each entry to its row.
    async fn fill(&mut self) -> EngineResult<()> {
        let mut seen = 0usize;
        let mut last_key: Option<Vec<u8>> = None;
        let mut failed: Option<EngineError> = None;
        let chunk = self.chunk;
        let (pk_types, table_prefix_len) = (&self.pk_types, self.table_prefix_len);
        let (rows, partial, direction) = (&mut self.rows, &mut self.partial, self.direction);
        let mut add = |key: &[u8], value: &[u8]| -> EngineResult<()> {
            // The PK encoding is prefix-free, so sharing the full row prefix means the
            // same row.
            let same_row = partial.as_ref().is_some_and(|r| key.starts_with(&r.prefix));
            if !same_row {
                let rest = key
                    .get(table_prefix_len..)
                    .ok_or_else(|| EngineError::Corrupt("short row key".into()))?;
                let (pk, used) = decode_pk(rest, pk_types)?;
                let row = StoredRow::new(pk, key[..table_prefix_len + used].to_vec());
                if let Some(done) = partial.replace(row) {
                    rows.push_back(finish(done, direction));
                }
            }
            match partial.as_mut() {
                Some(row) => row.push_entry(key, value),
                None => Err(EngineError::Corrupt("scan lost its row".into())),
            }
        };
        self.backend
            .visit(&self.range, self.direction, chunk, &mut |key, value| {
                seen += 1;
                if let Err(e) = add(key, value) {
                    failed = Some(e);
                    return false;
                }
                if seen == chunk {
                    last_key = Some(key.to_vec());
                }
                true
            })
            .await?;
        if let Some(e) = failed {
            return Err(e);
        }
        match last_key {
            Some(last) if seen >= chunk => {
                self.range = self.range.resume_after(&last, self.direction);
            }
            _ => {
                self.exhausted = true;
                if let Some(done) = self.partial.take() {
                    self.rows.push_back(finish(done, self.direction));
                }
            }
        }
        self.chunk = (self.chunk * 2).min(CHUNK_ENTRIES);
        Ok(())
    }

    /// The PK of the next row, without consuming it.
    pub async fn peek_pk(&mut self) -> EngineResult<Option<PrimaryKey>> {
        while self.rows.is_empty() && self.partial.is_none() && !self.exhausted {
            self.fill().await?;
        }
        Ok(self
            .rows
            .front()
            .or(self.partial.as_ref())
            .map(|row| row.pk.clone()))
    }

    /// The next row with all of its stored entries.
    pub async fn next_row(&mut self) -> EngineResult<Option<StoredRow>> {
        while self.rows.is_empty() && !self.exhausted {
            self.fill().await?;
        }
        Ok(self.rows.pop_front())
    }
}

fn finish(mut row: StoredRow, direction: Direction) -> StoredRow {
    if direction == Direction::Backward {
        row.finish_backward();
    }
    row
}
