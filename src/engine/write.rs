//! Writes: PutRow, UpdateRow, DeleteRow and BatchWriteRow, with row-existence and column
//! conditions. Every write reads the rows it touches, applies itself to a working copy
//! (so later writes in one batch see earlier ones), and commits the changed rows in one
//! backend batch guarded by a compare-and-swap on each row's stored bytes; a concurrent
//! change to any of those rows makes the batch retry from a fresh read.

mod checks;
mod foreign_keys;

use super::capacity::Capacity;
use super::catalog::{AttrColumn, TableMeta};
use super::codec::{decode_pk, row_prefix, table_prefix};
use super::condition::{Condition, ConditionFailure, RowExistence};
use super::error::{EngineError, EngineResult};
use super::index::{self, RowChangeSeen};
use super::partition_load::{partition_key_of, PartitionWrite};
use super::row_format::{encode_single_versions, RowMarker};
use super::stored::{StoredCell, StoredRow};
use super::stream::{self, StreamRecord};
use super::types::{PkValue, PrimaryKey, Row, SqlKind, Value, ValueType};
use super::validate::{check_name, check_value};
use super::Engine;
use crate::storage::{Check, SyncTicket, WriteBatch};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

/// How many times a batch is retried when a row it read changed before it committed.
const MAX_ATTEMPTS: usize = 32;
/// A server-assigned version moves past an existing one less than this far ahead of now,
/// so versions stay strictly increasing for writes within the same millisecond.
const SAME_MOMENT_MS: i64 = 1000;

/// One operation on one column in UpdateRow.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnOp {
    /// Writes `value` at `version` (`None` = the server's current time).
    Put {
        column: String,
        value: Value,
        version: Option<i64>,
    },
    DeleteVersion {
        column: String,
        version: i64,
    },
    DeleteAll {
        column: String,
    },
    /// Adds `by` to the newest Integer value (a missing column counts as 0): Table
    /// Store's increment.
    Increment {
        column: String,
        by: i64,
    },
    /// SQL's `SET c = c + by`: adds `by` to the newest Integer value; a column with no
    /// value (NULL) keeps none, as `NULL + by` is NULL.
    Add {
        column: String,
        by: i64,
    },
}

impl ColumnOp {
    pub fn column(&self) -> &str {
        match self {
            ColumnOp::Put { column, .. }
            | ColumnOp::DeleteVersion { column, .. }
            | ColumnOp::DeleteAll { column }
            | ColumnOp::Increment { column, .. }
            | ColumnOp::Add { column, .. } => column,
        }
    }
}

/// What a write does to its row.
#[derive(Debug, Clone, PartialEq)]
pub enum RowChange {
    /// PutRow: replaces the whole row with these cells (only `ColumnOp::Put`).
    Put(Vec<ColumnOp>),
    /// UpdateRow: applies the operations, keeping other columns.
    Update(Vec<ColumnOp>),
    /// DeleteRow.
    Delete,
}

/// A write of one row.
#[derive(Debug, Clone, PartialEq)]
pub struct RowWrite {
    pub pk: PrimaryKey,
    pub change: RowChange,
    pub condition: Condition,
    /// Return the row as it is after the write (for RETURNING and increments).
    pub return_row: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum WriteOutcome {
    /// Applied; the row after the write when asked for (`None` after a delete).
    Applied(Option<Row>),
    /// The condition did not hold; nothing of this row changed.
    ConditionFailed(ConditionFailure),
    /// Not applied because another row of an atomic batch failed its condition.
    NotApplied,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WriteResult {
    /// One outcome per write, in order.
    pub outcomes: Vec<WriteOutcome>,
    pub capacity: Capacity,
}

impl WriteResult {
    pub fn applied(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| matches!(o, WriteOutcome::Applied(_)))
            .count()
    }

    /// The first failed condition, with the index of its write.
    pub fn first_failure(&self) -> Option<(usize, ConditionFailure)> {
        self.outcomes.iter().enumerate().find_map(|(i, o)| match o {
            WriteOutcome::ConditionFailed(f) => Some((i, *f)),
            _ => None,
        })
    }
}

/// Whether one failed condition stops the whole batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchMode {
    /// All rows or none (a SQL statement, a transaction's commit).
    Atomic,
    /// Each row on its own (Table Store's BatchWriteRow, ON CONFLICT DO NOTHING).
    Independent,
}

/// A row being written: its stored bytes as read, and the row as changed so far.
struct WorkingRow {
    original: Option<Vec<u8>>,
    row: StoredRow,
}

/// A row a batch touches.
enum Working {
    Row(WorkingRow),
    /// A row taken as absent and written by one PutRow, already encoded (see
    /// `new_row_value`). A later write of the batch to the same row decodes it into a
    /// `Row` first.
    New(Vec<u8>),
}

/// Whether a write waits for its sync before returning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sync {
    Wait,
    Later,
}

/// Rows by key, each with the stored revision a transaction saw when it first touched
/// it (`None`: there was no row). Its COMMIT requires them unchanged.
pub(crate) type Revisions = HashMap<Vec<u8>, Option<u64>>;

/// What a transaction's commit requires of rows beyond its writes' conditions.
#[derive(Default)]
struct Commitment<'a> {
    /// The revisions its rows must still have.
    expected: Option<Arc<Revisions>>,
    /// Rows it locked (`Engine::lock_rows`): read into the batch, unchanged, so the
    /// commit's checks cover them.
    locked: &'a [(Arc<TableMeta>, PrimaryKey)],
    /// Maintenance (GC, a dropped column's cells, undoing a failed COPY): applied
    /// whatever the tables' reserved write throughput.
    unmetered: bool,
}

/// The rows a batch touches, as read and as changed so far.
struct WorkingSet {
    now: i64,
    rows: HashMap<Vec<u8>, Working>,
    /// Take the row of a PutRow that expects none as absent, without reading it (see
    /// `apply`). Only for a batch that commits through the backend's checks.
    assume_new_rows: bool,
    /// Some row was taken as absent unread: outcomes hold only if the commit's checks
    /// confirm it.
    unconfirmed: bool,
    /// A transaction's commit: the revisions its rows must still have.
    expected: Option<Arc<Revisions>>,
    /// The tables with indexes among those written, by id, as the catalog has them
    /// while the batch commits: their entries change with their rows.
    indexed: HashMap<u32, Arc<TableMeta>>,
    /// The tables among those written that foreign keys involve.
    foreign_keys: foreign_keys::ForeignKeyTables,
    /// The tables with CHECK constraints among those written, by id, as the catalog
    /// has them while the batch commits.
    checked: HashMap<u32, Arc<TableMeta>>,
    /// The tables among those written whose stream is on.
    streamed: Vec<Arc<TableMeta>>,
    /// The stream records of the writes applied so far, with their tables (`stream`).
    records: Vec<(Arc<TableMeta>, StreamRecord)>,
}

impl WorkingSet {
    fn new(now: i64) -> Self {
        WorkingSet {
            now,
            rows: HashMap::new(),
            assume_new_rows: false,
            unconfirmed: false,
            expected: None,
            indexed: HashMap::new(),
            foreign_keys: Default::default(),
            checked: HashMap::new(),
            streamed: Vec::new(),
            records: Vec::new(),
        }
    }

    /// A working set for a transaction's commit: a row whose stored revision is not the
    /// one in `expected` is a `WriteConflict`.
    fn expecting(mut self, expected: Option<Arc<Revisions>>) -> Self {
        self.expected = expected;
        self
    }

    /// A working set that takes the rows of PutRows expecting no row as absent: a bulk
    /// load or INSERT then costs one backend read per row (the commit's check) instead
    /// of two. A row that exists after all fails that check, and the write's retry,
    /// made without this, reads it and reports the condition failure. An attempt that
    /// ends without those checks (a failed condition in an atomic batch, or nothing to
    /// store) proves nothing, so it is retried with reads (`unconfirmed`).
    fn assuming_new_rows(mut self, assume: bool) -> Self {
        self.assume_new_rows = assume;
        self
    }

    /// The working copy of a row, read from the backend on first touch, or with
    /// `assume_absent` taken as absent without a read (see `assuming_new_rows`).
    async fn working_row(
        &mut self,
        engine: &Engine,
        table: &TableMeta,
        pk: &[super::types::PkValue],
        assume_absent: bool,
    ) -> EngineResult<&mut StoredRow> {
        let key = row_prefix(table.id, pk);
        // One hash of the key per row touched: a bulk load's rows are all new.
        let working = match self.rows.entry(key) {
            Entry::Occupied(mut entry) => {
                if let Working::New(value) = entry.get() {
                    // A later write of a row the batch encoded directly: decode it first.
                    let row = StoredRow::decode(pk.to_vec(), entry.key().clone(), value)?;
                    entry.insert(Working::Row(WorkingRow {
                        original: None,
                        row,
                    }));
                }
                entry.into_mut()
            }
            Entry::Vacant(entry) => {
                let expected = self.expected.as_ref().and_then(|e| e.get(entry.key()));
                let (row, original) = if assume_absent && !matches!(expected, Some(Some(_))) {
                    self.unconfirmed = true;
                    (StoredRow::absent(pk.to_vec(), entry.key().clone()), None)
                } else {
                    engine.load_row(table, pk).await?
                };
                if expected.is_some_and(|&revision| revision != row.marker.map(|m| m.revision)) {
                    return Err(EngineError::WriteConflict);
                }
                entry.insert(Working::Row(WorkingRow { original, row }))
            }
        };
        match working {
            Working::Row(working) => Ok(&mut working.row),
            Working::New(_) => Err(EngineError::Corrupt("a new row was not decoded".into())),
        }
    }

    /// Whether a transaction's commit expects the row to be stored (it was when the
    /// transaction touched it), so it must be read, never taken as absent.
    fn expects_a_row(&self, table: &TableMeta, pk: &[super::types::PkValue]) -> bool {
        self.expected.as_ref().is_some_and(|expected| {
            matches!(expected.get(&row_prefix(table.id, pk)), Some(Some(_)))
        })
    }

    /// Checks the write's condition against the working row and, if it holds, applies it.
    async fn apply(
        &mut self,
        engine: &Engine,
        table: &TableMeta,
        write: &RowWrite,
    ) -> EngineResult<(WriteOutcome, Capacity)> {
        let now = self.now;
        let streamed = self.streamed.iter().find(|t| t.id == table.id).cloned();
        // A streamed write's record reads the row as written: it is decoded, not blind.
        let blind = streamed.is_none()
            && self.assume_new_rows
            && !self.expects_a_row(table, &write.pk)
            && matches!(write.change, RowChange::Put(_))
            && write.condition.row == RowExistence::ExpectNotExist
            && write.condition.column.is_none();
        if blind {
            if let Some((value, cost)) = new_row_value(table, write, now) {
                if let Entry::Vacant(entry) = self.rows.entry(row_prefix(table.id, &write.pk)) {
                    self.unconfirmed = true;
                    entry.insert(Working::New(value));
                    return Ok((WriteOutcome::Applied(None), cost));
                }
            }
        }
        let row = self.working_row(engine, table, &write.pk, blind).await?;
        let applied = apply_write(row, table, write, now)?;
        if let Some(streamed) = streamed {
            if matches!(applied.outcome, WriteOutcome::Applied(_)) {
                let record = stream::record_of(write, row, now);
                self.records.push((streamed, record));
            }
        }
        Ok((applied.outcome, applied.cost))
    }

    /// Adds the index entries the batch's rows change to `batch` (see `index`).
    async fn stage_index_entries(
        &self,
        engine: &Engine,
        batch: &mut WriteBatch,
        checks: &mut Vec<Check>,
    ) -> EngineResult<()> {
        let table_of = |key: &[u8]| {
            let id: [u8; 4] = key.get(1..5)?.try_into().ok()?;
            self.indexed.get(&u32::from_be_bytes(id))
        };
        // Rows a PutRow encoded directly, decoded here: their entries need their cells.
        let mut decoded = Vec::new();
        for (key, working) in &self.rows {
            if let (Some(table), Working::New(value)) = (table_of(key), working) {
                let (pk, _) = decode_pk(&key[table_prefix(table.id).len()..], &table.pk_types())?;
                decoded.push((table, StoredRow::decode(pk, key.clone(), value)?));
            }
        }
        let mut changes: Vec<RowChangeSeen<'_>> = decoded
            .iter()
            .map(|(table, row)| RowChangeSeen {
                table,
                before: None,
                after: row,
            })
            .collect();
        for (key, working) in &self.rows {
            let (Some(table), Working::Row(working)) = (table_of(key), working) else {
                continue;
            };
            let before = match &working.original {
                Some(value) => Some(StoredRow::decode(
                    working.row.pk.clone(),
                    key.clone(),
                    value,
                )?),
                None => None,
            };
            changes.push(RowChangeSeen {
                table,
                before,
                after: &working.row,
            });
        }
        index::stage_entries(engine, &changes, self.now, batch, checks).await
    }

    /// Stores the changed rows if none of the touched rows changed since they were read;
    /// `None` when one did. With `Sync::Wait` the rows are durable on return; with
    /// `Sync::Later` the ticket says what to wait for.
    async fn commit(mut self, engine: &Engine, sync: Sync) -> EngineResult<Option<SyncTicket>> {
        let unconfirmed = self.unconfirmed;
        let mut checks = Vec::with_capacity(self.rows.len());
        self.enforce_foreign_keys(engine, &mut checks).await?;
        self.enforce_checks(engine)?;
        let mut batch = WriteBatch::default();
        if !self.indexed.is_empty() {
            self.stage_index_entries(engine, &mut batch, &mut checks)
                .await?;
        }
        // Held until the batch is written: see `stream` on why positions need it.
        let records = match std::mem::take(&mut self.records) {
            records if records.is_empty() => None,
            records => Some(engine.stage_stream_records(records, &mut batch).await?),
        };
        for (key, working) in self.rows {
            let working = match working {
                Working::Row(working) => working,
                Working::New(value) => {
                    batch.put(key.clone(), value);
                    checks.push(Check {
                        key,
                        expected: None,
                    });
                    continue;
                }
            };
            let stored = working.row.encode();
            if stored != working.original {
                match stored {
                    Some(value) => batch.put(key.clone(), value),
                    None => batch.delete(key.clone()),
                }
            }
            checks.push(Check {
                key,
                expected: working.original,
            });
        }
        if batch.is_empty() {
            if unconfirmed {
                return Ok(None);
            }
            return Ok(Some(SyncTicket::default()));
        }
        let ticket = match sync {
            Sync::Wait => engine
                .backend
                .write_if(&checks, batch)
                .await?
                .then_some(SyncTicket::default()),
            Sync::Later => engine.backend.write_if_unsynced(checks, batch).await?,
        };
        if let (Some(records), Some(_)) = (records, &ticket) {
            records.announce(engine);
        }
        Ok(ticket)
    }
}

impl Engine {
    /// PutRow.
    pub async fn put_row(
        &self,
        table: &Arc<TableMeta>,
        write: RowWrite,
    ) -> EngineResult<WriteResult> {
        self.write_rows(vec![(Arc::clone(table), write)], BatchMode::Atomic)
            .await
    }

    /// BatchWriteRow: up to `max_batch_write_rows` rows and `max_batch_write_bytes`, each
    /// applied or refused on its own condition.
    pub async fn batch_write_row(
        &self,
        writes: Vec<(Arc<TableMeta>, RowWrite)>,
    ) -> EngineResult<WriteResult> {
        if writes.len() > self.limits.max_batch_write_rows {
            return Err(EngineError::BatchTooLarge {
                what: "BatchWriteRow",
                count: writes.len(),
                limit: self.limits.max_batch_write_rows,
            });
        }
        let bytes: usize = writes.iter().map(|(_, w)| write_size(w)).sum();
        if bytes > self.limits.max_batch_write_bytes {
            return Err(EngineError::RequestTooLarge {
                bytes,
                limit: self.limits.max_batch_write_bytes,
            });
        }
        self.write_rows(writes, BatchMode::Independent).await
    }

    /// Applies writes to one or more tables in a single atomic backend batch. With
    /// `Atomic`, a failed condition leaves everything unchanged.
    pub async fn write_rows(
        &self,
        writes: Vec<(Arc<TableMeta>, RowWrite)>,
        mode: BatchMode,
    ) -> EngineResult<WriteResult> {
        self.write_rows_with(writes, mode, Sync::Wait)
            .await
            .map(|(result, _)| result)
    }

    /// `write_rows` that returns once the rows are applied and visible, before they are
    /// durable. For bulk loads: they write many batches and acknowledge once, after
    /// `wait_durable` of the last ticket, so the batches share syncs.
    ///
    /// A batch of PutRows of new rows (a bulk load's) reads nothing first, so it reaches
    /// the backend within the future's first poll, and such batches apply in the order
    /// their futures are first polled (see `Backend::write_if_unsynced`). Only a retry,
    /// after a row turned out to exist, waits before it writes.
    pub async fn write_rows_unsynced(
        &self,
        writes: Vec<(Arc<TableMeta>, RowWrite)>,
        mode: BatchMode,
    ) -> EngineResult<(WriteResult, SyncTicket)> {
        self.write_rows_with(writes, mode, Sync::Later).await
    }

    /// Waits until every write up to `ticket` is durable.
    pub async fn wait_durable(&self, ticket: SyncTicket) -> EngineResult<()> {
        Ok(self.backend.wait_durable(ticket).await?)
    }

    /// An atomic `write_rows` that applies only if every row in `expected` still has
    /// the revision given there (`WriteConflict` otherwise): a transaction's commit.
    /// The `locked` rows, which it may not write, are held to it too.
    pub(crate) async fn write_rows_expecting(
        &self,
        writes: Vec<(Arc<TableMeta>, RowWrite)>,
        expected: Arc<Revisions>,
        locked: &[(Arc<TableMeta>, PrimaryKey)],
    ) -> EngineResult<WriteResult> {
        let commitment = Commitment {
            expected: Some(expected),
            locked,
            unmetered: false,
        };
        self.write_rows_checked(writes, BatchMode::Atomic, Sync::Wait, commitment)
            .await
            .map(|(result, _)| result)
    }

    /// An atomic `write_rows` for the engine's and the server's own upkeep, which
    /// no table's reserved write throughput refuses (docs/table-store.md §9.1).
    pub(crate) async fn write_rows_unmetered(
        &self,
        writes: Vec<(Arc<TableMeta>, RowWrite)>,
    ) -> EngineResult<WriteResult> {
        let commitment = Commitment {
            unmetered: true,
            ..Commitment::default()
        };
        self.write_rows_checked(writes, BatchMode::Atomic, Sync::Wait, commitment)
            .await
            .map(|(result, _)| result)
    }

    async fn write_rows_with(
        &self,
        writes: Vec<(Arc<TableMeta>, RowWrite)>,
        mode: BatchMode,
        sync: Sync,
    ) -> EngineResult<(WriteResult, SyncTicket)> {
        self.write_rows_checked(writes, mode, sync, Commitment::default())
            .await
    }

    async fn write_rows_checked(
        &self,
        writes: Vec<(Arc<TableMeta>, RowWrite)>,
        mode: BatchMode,
        sync: Sync,
        commitment: Commitment<'_>,
    ) -> EngineResult<(WriteResult, SyncTicket)> {
        let now = self.now_ms();
        for (table, write) in &writes {
            self.check_write(table, write, now)?;
        }
        for attempt in 0..MAX_ATTEMPTS {
            if attempt > 0 {
                back_off(attempt).await;
            }
            if let Some((result, ticket)) = self
                .try_write(&writes, mode, sync, attempt == 0, &commitment)
                .await?
            {
                self.learn_written_columns(&writes, &result).await?;
                return Ok((result, ticket));
            }
        }
        Err(EngineError::WriteConflict)
    }

    /// One attempt; `None` when a row changed underneath and the batch must retry.
    async fn try_write(
        &self,
        writes: &[(Arc<TableMeta>, RowWrite)],
        mode: BatchMode,
        sync: Sync,
        first_attempt: bool,
        commitment: &Commitment<'_>,
    ) -> EngineResult<Option<(WriteResult, SyncTicket)>> {
        // Held to the commit: a TRUNCATE cannot give a table a new id in between.
        let _ids = self.table_ids.read().await;
        let mut checked: Vec<u32> = Vec::new();
        let mut indexed = HashMap::new();
        let mut foreign_keys = foreign_keys::ForeignKeyTables::default();
        let mut with_checks = HashMap::new();
        let mut streamed = Vec::new();
        let mut metered = Vec::new();
        for (table, _) in writes {
            if checked.contains(&table.id) {
                continue;
            }
            let Some(current) = self.catalog.current(table) else {
                return Err(EngineError::TableReplaced {
                    name: table.name.clone(),
                });
            };
            if current.options.reserved_write_cu > 0 && !commitment.unmetered {
                metered.push(Arc::clone(&current));
            }
            foreign_keys.consider(&self.catalog, &current);
            if !current.checks.is_empty() {
                with_checks.insert(table.id, Arc::clone(&current));
            }
            if current.options.stream_enabled {
                streamed.push(Arc::clone(&current));
            }
            if !current.indexes.is_empty() {
                indexed.insert(table.id, current);
            }
            checked.push(table.id);
        }
        let mut set = WorkingSet::new(self.now_ms())
            .assuming_new_rows(first_attempt)
            .expecting(commitment.expected.clone());
        set.indexed = indexed;
        set.foreign_keys = foreign_keys;
        set.checked = with_checks;
        set.streamed = streamed;
        let mut outcomes = Vec::with_capacity(writes.len());
        let mut capacity = Capacity::default();
        let mut per_table: HashMap<u32, Capacity> = HashMap::new();
        let mut per_partition: HashMap<u32, Vec<PartitionWrite>> = HashMap::new();
        for (index, (table, write)) in writes.iter().enumerate() {
            let (outcome, cost) = match set.apply(self, table, write).await {
                Ok(applied) => applied,
                // A later write of the batch may have failed only because of a row taken
                // as absent unread (an increment of a column the row really has): the
                // retry, with reads, finds out.
                Err(_) if set.unconfirmed => return Ok(None),
                Err(e) => return Err(e),
            };
            capacity += cost;
            *per_table.entry(table.id).or_default() += cost;
            if mode == BatchMode::Atomic && matches!(outcome, WriteOutcome::ConditionFailed(_)) {
                if set.unconfirmed {
                    return Ok(None);
                }
                let mut outcomes = vec![WriteOutcome::NotApplied; writes.len()];
                outcomes[index] = outcome;
                let result = WriteResult {
                    outcomes,
                    capacity: cost,
                };
                return Ok(Some((result, SyncTicket::default())));
            }
            // The load by partition key is the users' load: a DDL's own rewrite is not.
            if matches!(outcome, WriteOutcome::Applied(_)) && !commitment.unmetered {
                per_partition
                    .entry(table.id)
                    .or_default()
                    .push(PartitionWrite {
                        partition_key: partition_key_of(&write.pk),
                        write_cu: cost.write,
                        stores_row: !matches!(write.change, RowChange::Delete),
                    });
            }
            outcomes.push(outcome);
        }
        for (table, pk) in commitment.locked {
            // Read with its revision checked; the commit checks it is still as read.
            set.working_row(self, table, pk, false).await?;
        }
        let unconfirmed = set.unconfirmed;
        let now = self.now_ms();
        // Charged before the batch is applied, so a refused one writes nothing.
        let mut budgets = self.take_write_budgets(&per_table, &metered, now)?;
        let ticket = match set.commit(self, sync).await {
            Ok(Some(ticket)) => ticket,
            Ok(None) => {
                budgets.give_back();
                return Ok(None);
            }
            // A row taken as absent unread may exist after all, and then holds the
            // values it seemed to claim, or is no insert at all (ON CONFLICT DO
            // NOTHING): the retry, with reads, finds out.
            Err(
                EngineError::UniqueViolation { .. }
                | EngineError::ForeignKeyViolation { .. }
                | EngineError::ForeignKeyReferenced { .. }
                | EngineError::CheckViolation { .. },
            ) if unconfirmed => {
                budgets.give_back();
                return Ok(None);
            }
            Err(e) => {
                budgets.give_back();
                return Err(e);
            }
        };
        for (id, cost) in per_table {
            let stats = self.stats.table(id);
            stats.record_write(cost, now);
            if let Some(partition_writes) = per_partition.get(&id) {
                stats.partitions.record_writes(partition_writes, now);
            }
        }
        Ok(Some((WriteResult { outcomes, capacity }, ticket)))
    }

    /// Validates a write before anything is read: key, names, sizes, versions.
    pub(crate) fn check_write(
        &self,
        table: &TableMeta,
        write: &RowWrite,
        now: i64,
    ) -> EngineResult<()> {
        self.check_pk(table, &write.pk)?;
        for (column, value) in table.pk.iter().zip(&write.pk) {
            match value {
                PkValue::Integer(i) => check_width(table, &column.name, *i)?,
                // A key is never truncated: a longer one is refused even if the rest is
                // blanks.
                PkValue::String(s) => check_length(table, &column.name, s, false)?,
                _ => {}
            }
        }
        let ops = match &write.change {
            RowChange::Put(ops) | RowChange::Update(ops) => ops,
            RowChange::Delete => return Ok(()),
        };
        if ops.len() > self.limits.max_columns_per_write {
            return Err(EngineError::TooManyColumns {
                count: ops.len(),
                limit: self.limits.max_columns_per_write,
            });
        }
        for op in ops {
            let column = op.column();
            check_name(column)?;
            if table.pk_index(column).is_some() {
                return Err(EngineError::PkColumnAsAttribute {
                    column: column.into(),
                });
            }
            if let ColumnOp::Put { value, version, .. } = op {
                check_value(column, value, &self.limits)?;
                match value {
                    Value::Integer(i) => check_width(table, column, *i)?,
                    Value::Double(f) => check_single_precision(table, column, *f)?,
                    Value::String(s) => {
                        check_length(table, column, s, true)?;
                        if let Some(SqlKind::Enum { type_id }) = table.kind(column) {
                            self.catalog.check_enum_value(type_id, s)?;
                        }
                    }
                    _ => {}
                }
                if let Some(version) = version {
                    self.check_version(table, column, *version, now)?;
                }
            }
        }
        Ok(())
    }

    /// An explicit version must fall in `[now - offset, now + offset)` (in seconds) and
    /// must not already be expired under the TTL.
    fn check_version(
        &self,
        table: &TableMeta,
        column: &str,
        version: i64,
        now: i64,
    ) -> EngineResult<()> {
        let offset = table.options.max_version_offset;
        let now_s = now.div_euclid(1000);
        let v_s = version.div_euclid(1000);
        if version < 0 || v_s < now_s - offset || v_s >= now_s + offset {
            return Err(EngineError::VersionOutOfRange {
                column: column.into(),
                version,
                min: (now_s - offset) * 1000,
                max: (now_s + offset) * 1000,
            });
        }
        if !table.options.alive(version, now) {
            return Err(EngineError::ExpiredWrite {
                column: column.into(),
                version,
                ttl: table.options.ttl,
            });
        }
        Ok(())
    }

    /// Adds attribute columns first seen in these writes to their tables' known columns.
    async fn learn_written_columns(
        &self,
        writes: &[(Arc<TableMeta>, RowWrite)],
        result: &WriteResult,
    ) -> EngineResult<()> {
        for ((table, write), outcome) in writes.iter().zip(&result.outcomes) {
            if !matches!(outcome, WriteOutcome::Applied(_)) {
                continue;
            }
            let (RowChange::Put(ops) | RowChange::Update(ops)) = &write.change else {
                continue;
            };
            let mut unknown: Vec<AttrColumn> = Vec::new();
            let mut mixed: Vec<String> = Vec::new();
            for op in ops {
                let (column, ty) = match op {
                    ColumnOp::Put { column, value, .. } => (column, value.value_type()),
                    ColumnOp::Increment { column, .. } => (column, ValueType::Integer),
                    _ => continue,
                };
                match table.column(column) {
                    None => unknown.push(AttrColumn {
                        name: column.clone(),
                        ty,
                    }),
                    Some(known)
                        if known.ty != ty
                            && !table.declared.mixed.contains(column)
                            && table.is_schema_free(column) =>
                    {
                        mixed.push(column.clone())
                    }
                    Some(_) => {}
                }
            }
            if unknown.is_empty() && mixed.is_empty() {
                continue;
            }
            // The table may have been learned from by an earlier write of this batch.
            let current = self.catalog.table(&table.instance, &table.name)?;
            let learned_now: Vec<AttrColumn> = unknown
                .iter()
                .filter(|c| current.column(&c.name).is_none())
                .cloned()
                .collect();
            // A column learned by an earlier write with another type is mixed now.
            mixed.extend(unknown.iter().filter_map(|c| {
                let known = current.column(&c.name)?;
                (known.ty != c.ty).then(|| c.name.clone())
            }));
            if !learned_now.is_empty() {
                self.catalog.learn_columns(&current, &learned_now).await?;
            }
            if !mixed.is_empty() {
                let current = self.catalog.table(&table.instance, &table.name)?;
                self.catalog.mix_columns(&current, &mixed).await?;
            }
        }
        Ok(())
    }
}

/// Waits before retry `attempt` of a write that lost a race. A write that retried at
/// once could lose to the same hot row's other writers every time (eight tasks
/// incrementing one new row did, 32 times in a row): first yield so the winner finishes,
/// then sleep a little longer each time.
async fn back_off(attempt: usize) {
    if attempt < 4 {
        tokio::task::yield_now().await;
    } else {
        let micros = 100 * (attempt as u64 - 3).min(20);
        tokio::time::sleep(std::time::Duration::from_micros(micros)).await;
    }
}

/// What one write did to its row.
pub(crate) struct AppliedWrite {
    pub outcome: WriteOutcome,
    pub cost: Capacity,
}

/// Checks `write`'s condition against `row` as it is at `now` and, if it holds, applies
/// the write to it. On an error (an increment that overflows) the row may be partly
/// changed: the caller throws it away.
pub(crate) fn apply_write(
    row: &mut StoredRow,
    table: &TableMeta,
    write: &RowWrite,
    now: i64,
) -> EngineResult<AppliedWrite> {
    let before = row.current(&table.options, now);
    let mut cost = Capacity::default();
    if write.condition.reads_row() || has_increment(&write.change) {
        cost += Capacity::read(before.as_ref().map_or(0, Row::size));
    }
    if let Err(failure) = write.condition.check(before.as_ref()) {
        return Ok(AppliedWrite {
            outcome: WriteOutcome::ConditionFailed(failure),
            cost,
        });
    }
    apply_change(row, table, &write.change, now)?;
    check_not_null(row, table, &write.change, now)?;
    // The row's whole value is rewritten anyway, so it is stored with only what reads
    // can see. Left in, a version the write pushed past Max Versions (every UPDATE of a
    // table with the default max_versions = 1) cost a second rewrite of the row in a
    // later GC pass: 166,616 and 181,644 in the two passes during the benchmark's
    // UPDATE turns, competing with whatever ran beside them. Removal is lazy by design
    // (docs/table-store.md §6): data dropped early just cannot come back when the
    // table's options are raised again.
    row.drop_hidden_versions(&table.options, now);
    cost += Capacity::write(write_size(write));
    let after = if write.return_row {
        row.current(&table.options, now)
    } else {
        None
    };
    Ok(AppliedWrite {
        outcome: WriteOutcome::Applied(after),
        cost,
    })
}

/// A PutRow of a row known to be absent, encoded directly: the stored value and the
/// cost that `apply_write` on an absent row, then `StoredRow::encode`, would give. That
/// path copies every column name and value into a row before encoding it, which was
/// half of a COPY's work on its connection's thread. `None` when the write is not the
/// plain case this covers: only server-versioned puts of distinct columns, no row
/// returned, every cell visible (so no version is left for GC), no value to round or
/// cut to a length limit.
fn new_row_value(table: &TableMeta, write: &RowWrite, now: i64) -> Option<(Vec<u8>, Capacity)> {
    let RowChange::Put(ops) = &write.change else {
        return None;
    };
    // (A table with REAL or TIMESTAMP(p) columns takes `apply_write`, which rounds their
    // values.)
    if write.return_row
        || write.condition.row != RowExistence::ExpectNotExist
        || write.condition.column.is_some()
        || table.options.max_versions < 1
        || !table.options.alive(now, now)
        || !table.declared.single_precision.is_empty()
        || !table.declared.time_precision.is_empty()
    {
        return None;
    }
    // A NOT NULL column the write leaves out is for `apply_write` to refuse.
    let given = |column: &String| ops.iter().any(|op| op.column() == column);
    if !table.declared.not_null.iter().all(given) {
        return None;
    }
    let mut cells = Vec::with_capacity(ops.len());
    for op in ops {
        match op {
            ColumnOp::Put {
                column,
                value,
                version: None,
            } if !over_length(table, column, value) => cells.push((column.as_str(), now, value)),
            _ => return None,
        }
    }
    cells.sort_unstable_by(|a, b| a.0.cmp(b.0));
    if cells.windows(2).any(|pair| pair[0].0 == pair[1].0) {
        return None;
    }
    let marker = RowMarker {
        revision: 1,
        last_write_ms: now,
    };
    let mut cost = Capacity::default();
    if write.condition.reads_row() {
        cost += Capacity::read(0);
    }
    cost += Capacity::write(write_size(write));
    Some((encode_single_versions(&marker, &cells), cost))
}

fn has_increment(change: &RowChange) -> bool {
    matches!(change, RowChange::Update(ops) if ops.iter().any(|op| matches!(op, ColumnOp::Increment { .. } | ColumnOp::Add { .. })))
}

impl RowWrite {
    /// Bytes the write puts, as counted for write capacity units and the batch limit.
    pub fn size(&self) -> usize {
        write_size(self)
    }
}

/// Bytes a write puts, as counted for write capacity units and the batch byte limit.
fn write_size(write: &RowWrite) -> usize {
    let pk: usize = write.pk.iter().map(|v| v.size()).sum();
    let cells: usize = match &write.change {
        RowChange::Put(ops) | RowChange::Update(ops) => ops
            .iter()
            .map(|op| {
                op.column().len()
                    + match op {
                        ColumnOp::Put { value, .. } => value.size(),
                        ColumnOp::Increment { .. } | ColumnOp::Add { .. } => 8,
                        _ => 0,
                    }
            })
            .sum(),
        RowChange::Delete => 0,
    };
    pk + cells
}

/// The version a server-assigned write of `column` gets.
fn server_version(row: &StoredRow, column: &str, now: i64) -> i64 {
    match row.cells.iter().find(|c| c.column == column) {
        Some(newest) if newest.version >= now && newest.version < now + SAME_MOMENT_MS => {
            newest.version + 1
        }
        _ => now,
    }
}

/// Applies one change to the working row.
fn apply_change(
    row: &mut StoredRow,
    table: &TableMeta,
    change: &RowChange,
    now: i64,
) -> EngineResult<()> {
    match change {
        RowChange::Delete => {
            row.cells.clear();
            row.marker = None;
            return Ok(());
        }
        RowChange::Put(ops) => {
            // Increments read the old row, so compute server versions before clearing.
            let versions: Vec<Option<i64>> = ops
                .iter()
                .map(|op| match op {
                    ColumnOp::Put {
                        column,
                        version: None,
                        ..
                    } => Some(server_version(row, column, now)),
                    _ => None,
                })
                .collect();
            row.cells.clear();
            for (op, server) in ops.iter().zip(versions) {
                if let ColumnOp::Put {
                    column,
                    value,
                    version,
                } = op
                {
                    let version = version.or(server).unwrap_or(now);
                    put_cell(row, column, version, as_stored(table, column, value));
                }
            }
        }
        RowChange::Update(ops) => {
            for op in ops {
                match op {
                    ColumnOp::Put {
                        column,
                        value,
                        version,
                    } => {
                        let version = version.unwrap_or_else(|| server_version(row, column, now));
                        put_cell(row, column, version, as_stored(table, column, value));
                    }
                    ColumnOp::DeleteVersion { column, version } => {
                        if let Some(at) = row
                            .cells
                            .iter()
                            .position(|c| c.column == *column && c.version == *version)
                        {
                            row.cells.remove(at);
                        }
                    }
                    ColumnOp::DeleteAll { column } => {
                        row.cells.retain(|c| c.column != *column);
                    }
                    ColumnOp::Increment { column, by } | ColumnOp::Add { column, by } => {
                        let current = row
                            .visible_cells(&table.options, now)
                            .find(|c| c.column == *column)
                            .map(|c| c.value.clone());
                        let base = match current {
                            // NULL + by is NULL: nothing to write.
                            None if matches!(op, ColumnOp::Add { .. }) => continue,
                            None => 0,
                            Some(Value::Integer(i)) => i,
                            Some(other) => {
                                return Err(EngineError::IncrementType {
                                    column: column.clone(),
                                    found: other.value_type(),
                                })
                            }
                        };
                        let next = base.checked_add(*by).ok_or_else(|| {
                            EngineError::IncrementOverflow {
                                column: column.clone(),
                            }
                        })?;
                        check_width(table, column, next)?;
                        let version = server_version(row, column, now);
                        put_cell(row, column, version, Value::Integer(next));
                    }
                }
            }
        }
    }
    let revision = row.marker.as_ref().map_or(0, |m| m.revision) + 1;
    row.marker = Some(RowMarker {
        revision,
        last_write_ms: now,
    });
    Ok(())
}

/// Writes one cell version, replacing a version with the same timestamp.
fn put_cell(row: &mut StoredRow, column: &str, version: i64, value: Value) {
    let cell = StoredCell {
        column: column.to_string(),
        version,
        value,
    };
    // Keep column ascending, newest version first, as a scan would return them.
    match row.cells.binary_search_by(|c| {
        c.column
            .as_str()
            .cmp(column)
            .then_with(|| version.cmp(&c.version))
    }) {
        Ok(at) => row.cells[at] = cell,
        Err(at) => row.cells.insert(at, cell),
    }
}

/// `RealOutOfRange` if `column` was declared single precision and `value` is finite but
/// past its range, or not zero but nearer zero than its smallest value.
/// `NullInNotNull` if the row a write leaves behind (unless it deleted the row) lacks a
/// value in a `NOT NULL` column.
fn check_not_null(
    row: &StoredRow,
    table: &TableMeta,
    change: &RowChange,
    now: i64,
) -> EngineResult<()> {
    if table.declared.not_null.is_empty() || matches!(change, RowChange::Delete) {
        return Ok(());
    }
    let current = row.current(&table.options, now);
    let missing = table.declared.not_null.iter().find(|column| {
        current
            .as_ref()
            .is_none_or(|row| row.latest(column).is_none())
    });
    match missing {
        Some(column) => Err(EngineError::NullInNotNull {
            table: table.name.clone(),
            column: column.clone(),
        }),
        None => Ok(()),
    }
}

fn check_single_precision(table: &TableMeta, column: &str, value: f64) -> EngineResult<()> {
    if !table.is_single_precision(column) {
        return Ok(());
    }
    match super::types::single_precision(value) {
        Ok(_) => Ok(()),
        Err(overflow) => Err(EngineError::RealOutOfRange {
            column: column.into(),
            overflow,
        }),
    }
}

/// `ValueTooLong` if `column` was declared `VARCHAR(n)` and `value` is longer, unless
/// (when `blanks_truncate`) only blanks are past the limit: PostgreSQL stores those
/// truncated (`as_stored`).
fn check_length(
    table: &TableMeta,
    column: &str,
    value: &str,
    blanks_truncate: bool,
) -> EngineResult<()> {
    let Some(limit) = table.max_chars(column) else {
        return Ok(());
    };
    let mut rest = value.chars().skip(limit as usize);
    let fits = match blanks_truncate {
        true => rest.all(|c| c == ' '),
        false => rest.next().is_none(),
    };
    match fits {
        true => Ok(()),
        false => Err(EngineError::ValueTooLong {
            column: column.into(),
            limit,
        }),
    }
}

/// Whether `value` is longer than `column`'s declared limit (and so must be truncated).
fn over_length(table: &TableMeta, column: &str, value: &Value) -> bool {
    match (value, table.max_chars(column)) {
        (Value::String(s), Some(limit)) => s.chars().nth(limit as usize).is_some(),
        _ => false,
    }
}

/// A value as a column stores it: a double rounded to the nearest `f32` in a column
/// declared single precision; a string cut to a `VARCHAR(n)` column's limit (what
/// `check_length` let past it is blanks); a timestamp rounded to a `TIMESTAMP(p)`'s
/// digits.
fn as_stored(table: &TableMeta, column: &str, value: &Value) -> Value {
    match value {
        Value::Integer(micros) if table.time_precision(column).is_some() => Value::Integer(
            super::types::round_timestamp(*micros, table.time_precision(column).unwrap_or(6)),
        ),
        Value::Double(f) if table.is_single_precision(column) => {
            Value::Double(f64::from(*f as f32))
        }
        Value::String(s) if over_length(table, column, value) => {
            let limit = table.max_chars(column).unwrap_or(u32::MAX) as usize;
            Value::String(s.chars().take(limit).collect())
        }
        other => other.clone(),
    }
}

/// `IntegerOutOfRange` if `column` was declared narrower than 64 bits and `value` does
/// not fit (PostgreSQL refuses 40000 in a `smallint` column).
fn check_width(table: &TableMeta, column: &str, value: i64) -> EngineResult<()> {
    match table.integer_width(column) {
        Some(width) if !width.holds(value) => Err(EngineError::IntegerOutOfRange {
            column: column.into(),
            width,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::catalog::PkColumn;
    use crate::engine::options::TableOptions;
    use crate::engine::types::{PkType, PkValue};
    use proptest::prelude::*;

    fn table(options: TableOptions) -> TableMeta {
        TableMeta {
            id: 7,
            instance: "i".into(),
            name: "t".into(),
            pk: vec![PkColumn {
                name: "id".into(),
                ty: PkType::Integer,
            }],
            columns: Vec::new(),
            options,
            auto_rowid: false,
            pk_name: None,
            created_ms: 0,
            column_order: Vec::new(),
            declared: Default::default(),
            generated: Default::default(),
            defaults: Default::default(),
            indexes: Vec::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            comment: None,
        }
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            ".{0,12}".prop_map(Value::String),
            any::<i64>().prop_map(Value::Integer),
            any::<bool>().prop_map(Value::Boolean),
            proptest::collection::vec(any::<u8>(), 0..20).prop_map(Value::Binary),
        ]
    }

    /// Mostly what COPY and INSERT write (server-versioned puts), sometimes a repeated
    /// column, an explicit version, another kind of op or a returned row.
    fn write() -> impl Strategy<Value = RowWrite> {
        let op = prop_oneof![
            8 => ("[a-d]", value()).prop_map(|(column, value)| ColumnOp::Put {
                column,
                value,
                version: None,
            }),
            1 => ("[a-d]", value(), 0i64..2_000_000).prop_map(|(column, value, v)| ColumnOp::Put {
                column,
                value,
                version: Some(v),
            }),
            1 => "[a-d]".prop_map(|column| ColumnOp::DeleteAll { column }),
        ];
        (
            proptest::collection::vec(op, 0..5),
            any::<i64>(),
            prop_oneof![
                4 => Just(RowExistence::ExpectNotExist),
                1 => Just(RowExistence::Ignore),
            ],
            proptest::bool::weighted(0.1),
        )
            .prop_map(|(ops, id, row, return_row)| RowWrite {
                pk: vec![PkValue::Integer(id)],
                change: RowChange::Put(ops),
                condition: Condition::row(row),
                return_row,
            })
    }

    proptest! {
        /// Where the direct encoding applies, it stores what the general path stores, at
        /// the same cost.
        #[test]
        fn a_new_row_encodes_as_the_general_path_would(
            write in write(),
            max_versions in 1i64..3,
            ttl in prop_oneof![Just(-1i64), 1i64..100],
            now in 1_000_000i64..2_000_000,
        ) {
            let options = TableOptions { ttl, max_versions, ..TableOptions::default() };
            let table = table(options);
            let Some((value, cost)) = new_row_value(&table, &write, now) else {
                // Only the plain case is encoded directly.
                let plain = write.condition.row == RowExistence::ExpectNotExist
                    && !write.return_row
                    && matches!(&write.change, RowChange::Put(ops) if {
                        let mut columns: Vec<&str> = ops.iter().map(ColumnOp::column).collect();
                        columns.sort_unstable();
                        columns.dedup();
                        columns.len() == ops.len()
                            && ops
                                .iter()
                                .all(|op| matches!(op, ColumnOp::Put { version: None, .. }))
                    });
                prop_assert!(!plain, "a plain new row was not encoded directly");
                return Ok(());
            };
            let key = row_prefix(table.id, &write.pk);
            let mut row = StoredRow::absent(write.pk.clone(), key.clone());
            let applied = apply_write(&mut row, &table, &write, now).expect("applies");
            prop_assert!(matches!(applied.outcome, WriteOutcome::Applied(None)));
            prop_assert_eq!(applied.cost, cost);
            prop_assert_eq!(row.encode(), Some(value.clone()));
            // And a later write of the batch sees the same row.
            let decoded = StoredRow::decode(write.pk.clone(), key, &value).expect("decodes");
            prop_assert_eq!(decoded.encode(), row.encode());
        }
    }
}
