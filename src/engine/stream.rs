//! The Stream of a table with `stream_enabled`: a record of every committed change to
//! its rows, kept `stream_expiration_hours` and then removed, as Table Store's Stream.
//!
//! A record is written in the same backend batch as the change it records, so a crash
//! leaves both or neither. Its position comes from one engine-wide counter, stored in
//! that batch too: positions only grow (with gaps where a batch was retried), across
//! tables and restarts. Batches that carry records commit one at a time, each taking
//! its positions while it holds the stream's lock, so a record becomes visible only
//! after every record with a lower position: a consumer that has read up to position
//! `p` and asks for those after it misses none. (Batches without records do not wait.)
//!
//! Key layout (see `codec`): `0x04 table_id:u32 position:u64` holds a record;
//! `0x05 0x00` the next position; `0x05 0x01 table_id:u32` the highest position removed
//! from the table's stream by expiry or by TRUNCATE, below which a read is refused: the
//! consumer would have missed records.

use super::catalog::TableMeta;
use super::error::{EngineError, EngineResult};
use super::stored::StoredRow;
use super::types::{PkValue, Value};
use super::write::{ColumnOp, RowChange, RowWrite};
use super::Engine;
use crate::storage::{Direction, KeyRange, WriteBatch};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

const RECORD_PREFIX: u8 = 0x04;
const STATE_PREFIX: u8 = 0x05;
const NEXT_POSITION_KEY: [u8; 2] = [STATE_PREFIX, 0x00];
const MILLIS_PER_HOUR: i64 = 3_600_000;
/// Records one read of a table's stream returns at most per backend scan.
const SCAN_CHUNK: usize = 1000;

/// What a change did to its row, as Table Store's stream records name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StreamOperation {
    /// PutRow: the row was replaced by the cells written.
    Put,
    /// UpdateRow: the columns named changed, the others stayed.
    Update,
    /// DeleteRow.
    Delete,
}

impl StreamOperation {
    pub fn name(self) -> &'static str {
        match self {
            StreamOperation::Put => "PUT",
            StreamOperation::Update => "UPDATE",
            StreamOperation::Delete => "DELETE",
        }
    }
}

/// What a change did to one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CellOperation {
    /// A value written at a version.
    Put,
    DeleteOneVersion,
    DeleteAllVersions,
}

impl CellOperation {
    pub fn name(self) -> &'static str {
        match self {
            CellOperation::Put => "PUT",
            CellOperation::DeleteOneVersion => "DELETE_ONE_VERSION",
            CellOperation::DeleteAllVersions => "DELETE_ALL_VERSIONS",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnChange {
    pub column: String,
    pub operation: CellOperation,
    /// The version written or deleted; `None` for DeleteAllVersions.
    pub version: Option<i64>,
    /// The value written (Put only).
    pub value: Option<Value>,
}

/// One change to one row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamRecord {
    /// Set when the record is read: its key holds it.
    #[serde(skip)]
    pub position: u64,
    /// When the change was committed, in ms since the Unix epoch.
    pub commit_ms: i64,
    pub operation: StreamOperation,
    pub pk: Vec<PkValue>,
    pub columns: Vec<ColumnChange>,
}

/// The record of `write`, applied to a row that is now `after`. A value the server
/// chose (its current time as the version, an increment's sum) is read from `after`.
pub(super) fn record_of(write: &RowWrite, after: &StoredRow, commit_ms: i64) -> StreamRecord {
    let (operation, ops): (_, &[ColumnOp]) = match &write.change {
        RowChange::Put(ops) => (StreamOperation::Put, ops),
        RowChange::Update(ops) => (StreamOperation::Update, ops),
        RowChange::Delete => (StreamOperation::Delete, &[]),
    };
    let written = |column: &str, version: Option<i64>| {
        after
            .cells
            .iter()
            .filter(|c| c.column == column && version.is_none_or(|v| c.version == v))
            .max_by_key(|c| c.version)
            .map(|c| (c.version, c.value.clone()))
    };
    let columns = ops
        .iter()
        .filter_map(|op| match op {
            ColumnOp::Put {
                column, version, ..
            } => {
                let (version, value) = written(column, *version)?;
                Some(ColumnChange {
                    column: column.clone(),
                    operation: CellOperation::Put,
                    version: Some(version),
                    value: Some(value),
                })
            }
            // A NULL plus a number stays without a value: nothing was written.
            ColumnOp::Increment { column, .. } | ColumnOp::Add { column, .. } => {
                let (version, value) = written(column, None)?;
                Some(ColumnChange {
                    column: column.clone(),
                    operation: CellOperation::Put,
                    version: Some(version),
                    value: Some(value),
                })
            }
            ColumnOp::DeleteVersion { column, version } => Some(ColumnChange {
                column: column.clone(),
                operation: CellOperation::DeleteOneVersion,
                version: Some(*version),
                value: None,
            }),
            ColumnOp::DeleteAll { column } => Some(ColumnChange {
                column: column.clone(),
                operation: CellOperation::DeleteAllVersions,
                version: None,
                value: None,
            }),
        })
        .collect();
    StreamRecord {
        position: 0,
        commit_ms,
        operation,
        pk: write.pk.clone(),
        columns,
    }
}

fn records_prefix(table_id: u32) -> Vec<u8> {
    let mut key = vec![RECORD_PREFIX];
    key.extend_from_slice(&table_id.to_be_bytes());
    key
}

fn record_key(table_id: u32, position: u64) -> Vec<u8> {
    let mut key = records_prefix(table_id);
    key.extend_from_slice(&position.to_be_bytes());
    key
}

fn removed_through_key(table_id: u32) -> Vec<u8> {
    let mut key = vec![STATE_PREFIX, 0x01];
    key.extend_from_slice(&table_id.to_be_bytes());
    key
}

fn position_of(key: &[u8]) -> EngineResult<u64> {
    key.get(5..13)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(u64::from_be_bytes)
        .ok_or_else(|| EngineError::Corrupt("a stream record key without a position".into()))
}

fn decode_u64(value: Option<Vec<u8>>) -> EngineResult<u64> {
    match value {
        None => Ok(0),
        Some(bytes) => <[u8; 8]>::try_from(bytes.as_slice())
            .map(u64::from_be_bytes)
            .map_err(|_| EngineError::Corrupt("a stream position of the wrong length".into())),
    }
}

/// New records of a table's stream, announced once committed: what wakes the
/// clients that LISTEN for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamAppended {
    pub table: String,
    /// The position of the table's last new record.
    pub position: u64,
}

/// Announcements a subscriber that falls behind may miss before it is told it lagged.
const ANNOUNCEMENTS_KEPT: usize = 1024;

/// The stream's lock, held by a batch with records from taking its positions to its
/// commit, with the next position once read from the store; and the announcements.
pub(super) struct StreamLog {
    next: tokio::sync::Mutex<Option<u64>>,
    appended: tokio::sync::broadcast::Sender<StreamAppended>,
}

impl Default for StreamLog {
    fn default() -> Self {
        StreamLog {
            next: tokio::sync::Mutex::new(None),
            appended: tokio::sync::broadcast::channel(ANNOUNCEMENTS_KEPT).0,
        }
    }
}

/// A batch's records, staged with their positions: the lock stays held until the
/// batch is written (or given up); [`StagedRecords::announce`] after it committed.
pub(super) struct StagedRecords<'a> {
    _lock: tokio::sync::MutexGuard<'a, Option<u64>>,
    appended: Vec<StreamAppended>,
}

impl StagedRecords<'_> {
    /// Tells the subscribers that the records are committed.
    pub(super) fn announce(self, engine: &Engine) {
        for appended in self.appended {
            // No subscriber (no server) is no failure.
            let _ = engine.stream.appended.send(appended);
        }
    }
}

impl Engine {
    /// The next free position, as the lock `next` keeps it or, the first time, as
    /// stored.
    async fn next_position(&self, next: &Option<u64>) -> EngineResult<u64> {
        match next {
            Some(position) => Ok(*position),
            None => Ok(decode_u64(self.backend.get(&NEXT_POSITION_KEY).await?)?.max(1)),
        }
    }

    /// Announcements of committed stream records, for LISTEN.
    pub fn subscribe_stream(&self) -> tokio::sync::broadcast::Receiver<StreamAppended> {
        self.stream.appended.subscribe()
    }

    /// Adds `records` (with their tables) to `batch` under fresh positions, with the next
    /// position; the returned guard must live until the batch is written.
    pub(super) async fn stage_stream_records(
        &self,
        records: Vec<(Arc<TableMeta>, StreamRecord)>,
        batch: &mut WriteBatch,
    ) -> EngineResult<StagedRecords<'_>> {
        let mut next = self.stream.next.lock().await;
        let mut position = self.next_position(&next).await?;
        let mut appended: Vec<StreamAppended> = Vec::new();
        for (table, record) in records {
            let value = serde_json::to_vec(&record)
                .map_err(|e| EngineError::Corrupt(format!("a stream record: {e}")))?;
            batch.put(record_key(table.id, position), value);
            match appended.iter_mut().find(|a| a.table == table.name) {
                Some(last) => last.position = position,
                None => appended.push(StreamAppended {
                    table: table.name.clone(),
                    position,
                }),
            }
            position += 1;
        }
        batch.put(NEXT_POSITION_KEY.to_vec(), position.to_be_bytes().to_vec());
        // Taken even if the batch is not written: positions may skip, never repeat.
        *next = Some(position);
        Ok(StagedRecords {
            _lock: next,
            appended,
        })
    }

    /// Up to `limit` records of `table`'s stream after position `after` (from the
    /// first kept when `None`), in position order. `StreamRecordsRemoved` when records
    /// after `after` were removed: the consumer would miss them.
    pub async fn stream_records(
        &self,
        table: &TableMeta,
        after: Option<u64>,
        limit: usize,
    ) -> EngineResult<Vec<StreamRecord>> {
        let removed_through = decode_u64(self.backend.get(&removed_through_key(table.id)).await?)?;
        if let Some(after) = after {
            if after < removed_through {
                return Err(EngineError::StreamRecordsRemoved {
                    table: table.name.clone(),
                    after,
                    removed_through,
                });
            }
        }
        let start = record_key(table.id, after.map_or(0, |a| a.saturating_add(1)));
        let prefix = records_prefix(table.id);
        let mut range = KeyRange::half_open(
            start,
            crate::storage::prefix_successor(&prefix).unwrap_or_default(),
        );
        let mut records = Vec::new();
        while records.len() < limit {
            let chunk = (limit - records.len()).min(SCAN_CHUNK);
            let entries = self.backend.scan(&range, Direction::Forward, chunk).await?;
            let Some((last, _)) = entries.last() else {
                break;
            };
            range = range.resume_after(&last.clone(), Direction::Forward);
            let full = entries.len() == chunk;
            for (key, value) in entries {
                let mut record: StreamRecord = serde_json::from_slice(&value)
                    .map_err(|e| EngineError::Corrupt(format!("a stream record: {e}")))?;
                record.position = position_of(&key)?;
                records.push(record);
            }
            if !full {
                break;
            }
        }
        Ok(records)
    }

    /// Removes the records of `table`'s stream older than its `stream_expiration_hours`
    /// and raises the position below which reads are refused; returns how many went.
    pub(super) async fn expire_stream_records(&self, table: &TableMeta) -> EngineResult<u64> {
        let horizon = self.now_ms() - table.options.stream_expiration_hours * MILLIS_PER_HOUR;
        let range = KeyRange::prefix(&records_prefix(table.id));
        let chunk = self
            .backend
            .max_batch_ops()
            .saturating_sub(1)
            .clamp(1, SCAN_CHUNK);
        let mut removed = 0;
        loop {
            let entries = self.backend.scan(&range, Direction::Forward, chunk).await?;
            let mut batch = WriteBatch::default();
            let mut through = None;
            for (key, value) in &entries {
                let record: StreamRecord = serde_json::from_slice(value)
                    .map_err(|e| EngineError::Corrupt(format!("a stream record: {e}")))?;
                // Positions follow commit order, so the first record still young
                // ends what expires.
                if record.commit_ms >= horizon {
                    break;
                }
                through = Some(position_of(key)?);
                batch.delete(key.clone());
            }
            let Some(through) = through else {
                return Ok(removed);
            };
            removed += batch.len() as u64;
            batch.put(
                removed_through_key(table.id),
                through.to_be_bytes().to_vec(),
            );
            self.backend.write(batch).await?;
        }
    }

    /// Deletes a table's stream (DROP TABLE, or the old id of a TRUNCATE or ADD
    /// PRIMARY KEY).
    pub(super) async fn delete_stream(&self, table_id: u32) -> EngineResult<()> {
        self.delete_prefix(&records_prefix(table_id)).await?;
        let mut batch = WriteBatch::default();
        batch.delete(removed_through_key(table_id));
        Ok(self.backend.write(batch).await?)
    }

    /// Makes the stream of `table_id` refuse reads from before now if the stream
    /// of `before` (the same table, or its id before TRUNCATE or ADD PRIMARY KEY) had
    /// records a consumer may have read: the changes in between have none. A table
    /// that never had a stream gets none of this, so a first consumer may read from
    /// position 0.
    pub(super) async fn restart_stream(&self, table_id: u32, before: u32) -> EngineResult<()> {
        let had_records = self
            .backend
            .get(&removed_through_key(before))
            .await?
            .is_some()
            || !self
                .backend
                .scan(
                    &KeyRange::prefix(&records_prefix(before)),
                    Direction::Forward,
                    1,
                )
                .await?
                .is_empty();
        if !had_records {
            return Ok(());
        }
        // A position of its own, which no record takes, marks the missing changes: a
        // consumer that read up to any record before is refused.
        let mut next = self.stream.next.lock().await;
        let position = self.next_position(&next).await?;
        let mut batch = WriteBatch::default();
        batch.put(
            removed_through_key(table_id),
            position.to_be_bytes().to_vec(),
        );
        batch.put(
            NEXT_POSITION_KEY.to_vec(),
            (position + 1).to_be_bytes().to_vec(),
        );
        *next = Some(position + 1);
        self.backend.write(batch).await?;
        Ok(())
    }
}
