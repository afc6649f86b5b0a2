//! Walks a key range of one table row by row, fetching entries from the backend in
//! bounded chunks so a scan over millions of rows holds only a chunk in memory.

use super::catalog::TableMeta;
use super::codec::decode_pk;
use super::error::EngineResult;
use super::stored::StoredRow;
use super::types::{PkType, PrimaryKey};
use crate::storage::{Backend, Direction, Entry, KeyRange};
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
    buffer: VecDeque<Entry>,
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
            buffer: VecDeque::new(),
            exhausted: false,
            chunk: CHUNK_ENTRIES,
        }
    }

    /// Starts with a backend call sized for `rows` rows of one cell each, not a full
    /// chunk, so a short GetRange page does not copy entries it will never return.
    pub fn expect_rows(mut self, rows: usize) -> Self {
        self.chunk = rows
            .saturating_mul(2)
            .saturating_add(2)
            .clamp(MIN_CHUNK_ENTRIES, CHUNK_ENTRIES);
        self
    }

    /// Makes sure at least one entry is buffered unless the range is done.
    async fn fill(&mut self) -> EngineResult<()> {
        if !self.buffer.is_empty() || self.exhausted {
            return Ok(());
        }
        let entries = self
            .backend
            .scan(&self.range, self.direction, self.chunk)
            .await?;
        if entries.len() < self.chunk {
            self.exhausted = true;
        }
        self.chunk = (self.chunk * 2).min(CHUNK_ENTRIES);
        if let Some((last, _)) = entries.last() {
            self.range = self.range.resume_after(last, self.direction);
        }
        self.buffer.extend(entries);
        Ok(())
    }

    fn decode_front_pk(&self) -> EngineResult<Option<(PrimaryKey, usize)>> {
        let Some((key, _)) = self.buffer.front() else {
            return Ok(None);
        };
        let (pk, used) = decode_pk(&key[self.table_prefix_len..], &self.pk_types)?;
        Ok(Some((pk, self.table_prefix_len + used)))
    }

    /// The PK of the next row, without consuming it.
    pub async fn peek_pk(&mut self) -> EngineResult<Option<PrimaryKey>> {
        self.fill().await?;
        Ok(self.decode_front_pk()?.map(|(pk, _)| pk))
    }

    /// The next row with all of its stored entries.
    pub async fn next_row(&mut self) -> EngineResult<Option<StoredRow>> {
        self.fill().await?;
        let Some((pk, prefix_len)) = self.decode_front_pk()? else {
            return Ok(None);
        };
        let prefix = match self.buffer.front() {
            Some((key, _)) => key[..prefix_len].to_vec(),
            None => return Ok(None),
        };
        let mut entries = Vec::new();
        loop {
            while let Some((key, _)) = self.buffer.front() {
                // The PK encoding is prefix-free, so sharing the full row prefix means
                // the same row.
                if !key.starts_with(&prefix) {
                    break;
                }
                if let Some(entry) = self.buffer.pop_front() {
                    entries.push(entry);
                }
            }
            if !self.buffer.is_empty() || self.exhausted {
                break;
            }
            self.fill().await?;
        }
        if self.direction == Direction::Backward {
            entries.reverse();
        }
        StoredRow::from_entries(pk, prefix_len, entries).map(Some)
    }
}
