//! The engine: Alibaba Cloud Table Store's data model over an ordered key-value
//! [`Backend`]. Tables with 1-4 column primary keys, schema-free attribute columns with
//! millisecond-versioned cells, TTL / Max Versions / Max Version Offset, conditional row
//! writes, batch operations, paged GetRange and capacity units. It knows nothing of SQL.

mod capacity;
mod catalog;
mod check;
mod clock;
mod codec;
mod condition;
mod dirty_rows;
mod dropped_columns;
mod error;
mod foreign_key;
mod gc;
mod index;
mod key_advice;
mod limits;
mod options;
mod partition_load;
mod partition_sizes;
mod read;
mod read_snapshot;
mod rekeyed_tables;
mod renamed_columns;
mod row_format;
mod scan;
mod size;
mod staging;
mod stored;
mod stream;
mod throughput;
mod types;
mod unique_holder;
mod validate;
mod view;
mod write;

pub use capacity::{Capacity, TableStats, TableStatsSnapshot};
pub use catalog::{
    AttrColumn, EnumTypeMeta, Generated, GeneratedKind, InstanceMeta, LabelPosition, PkColumn,
    SequenceMeta, SequenceSpec, SequenceType, SequenceUndo, TableMeta, TableSpec, ViewColumn,
    ViewMeta, MAX_LABEL_BYTES,
};
pub use check::{CheckMeta, RowRules};
pub use clock::{Clock, ManualClock, SystemClock};
pub use codec::{decode_pk, encode_pk};
pub use condition::{ColumnCondition, CompareOp, Condition, ConditionFailure, RowExistence};
pub use error::{EngineError, EngineResult};
pub use foreign_key::{ForeignKeyMeta, ReferentialAction};
pub use gc::GcReport;
pub use index::{IndexMeta, IndexSpec};
pub use key_advice::{
    advise, bytes_text, Advice, AdviceKind, TableEvidence, DEFAULT_PARTITION_SIZE_ADVICE,
};
pub use limits::Limits;
pub use options::{OptionValue, TableOptions};
pub use partition_load::{KeyLoad, LoadSnapshot};
pub use partition_sizes::{PartitionSize, PartitionSizes};
pub use read::{BatchGetResult, GetRowResult, RangePage, RangeRequest, RangeVisit};
pub use read_snapshot::ReadSnapshot;
pub use size::TableSize;
pub use staging::{StagedMark, StagedView, StagedWrites};
pub use stored::ReadOptions;
pub use stream::{CellOperation, ColumnChange, StreamAppended, StreamOperation, StreamRecord};
pub use throughput::RecentThroughput;
pub use types::{
    single_precision, Cell, Declared, IntegerWidth, PkBound, PkRef, PkType, PkValue, PrimaryKey,
    Row, SqlKind, Value, ValueRef, ValueType,
};
pub use unique_holder::{proposed_index_values, unique_claim};
pub use validate::{check_instance_name, check_name};
pub use view::{CellRef, RowView};
pub use write::{BatchMode, ColumnOp, RowChange, RowWrite, WriteOutcome, WriteResult};

pub use crate::storage::{Direction, SyncTicket};

use crate::storage::{Backend, KeyRange, Snapshotting, WriteBatch};
use capacity::StatsRegistry;
use catalog::Catalog;
use std::sync::Arc;

/// The name of the instance that exists from the first start.
pub const DEFAULT_INSTANCE: &str = "postgres";

/// The Table Store engine over one backend.
pub struct Engine {
    /// `snapshots`, as the backend every read and write goes through.
    backend: Arc<dyn Backend>,
    /// The store, able to give REPEATABLE READ snapshots (`read_snapshot`).
    snapshots: Arc<Snapshotting>,
    clock: Arc<dyn Clock>,
    limits: Limits,
    catalog: Catalog,
    stats: StatsRegistry,
    swept: gc::SweptTables,
    /// Rows writes left holding hidden versions, for the next GC pass (`dirty_rows`).
    dirty: dirty_rows::DirtyRows,
    /// Held shared by every write from its check that its tables are current to its
    /// commit (and by a read of an index's entries), and exclusively by TRUNCATE while
    /// it gives a table a new id and by CREATE / DROP INDEX while they add or remove
    /// an index: a write either commits before (and is truncated) or sees the new id,
    /// and either commits before an index exists or keeps it up to date.
    table_ids: tokio::sync::RwLock<()>,
    /// Judges rows against CHECK constraints (`check`), installed by the SQL layer.
    row_rules: std::sync::OnceLock<Arc<dyn RowRules>>,
    /// The positions of the tables' stream records (`stream`).
    stream: stream::StreamLog,
}

impl Engine {
    /// Opens the engine, creating the default instance on first start.
    pub async fn open(
        backend: Arc<dyn Backend>,
        clock: Arc<dyn Clock>,
        limits: Limits,
    ) -> EngineResult<Self> {
        let snapshots = Arc::new(Snapshotting::new(backend));
        let backend: Arc<dyn Backend> = Arc::clone(&snapshots) as Arc<dyn Backend>;
        let catalog = Catalog::load(Arc::clone(&backend)).await?;
        let engine = Engine {
            backend,
            snapshots,
            clock,
            limits,
            catalog,
            stats: StatsRegistry::default(),
            swept: gc::SweptTables::default(),
            dirty: dirty_rows::DirtyRows::default(),
            table_ids: tokio::sync::RwLock::new(()),
            row_rules: std::sync::OnceLock::new(),
            stream: stream::StreamLog::default(),
        };
        if engine.catalog.instance(DEFAULT_INSTANCE).is_err() {
            engine
                .catalog
                .create_instance(DEFAULT_INSTANCE, engine.now_ms(), &engine.limits)
                .await?;
        }
        Ok(engine)
    }

    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    // ---- instances ----

    pub fn instances(&self) -> Vec<InstanceMeta> {
        self.catalog.instances()
    }

    pub fn instance(&self, name: &str) -> EngineResult<InstanceMeta> {
        self.catalog.instance(name)
    }

    pub async fn create_instance(&self, name: &str) -> EngineResult<InstanceMeta> {
        self.catalog
            .create_instance(name, self.now_ms(), &self.limits)
            .await
    }

    /// Drops an instance and every table in it.
    pub async fn drop_instance(&self, name: &str) -> EngineResult<()> {
        for table in self.catalog.tables(name)? {
            self.drop_table(name, &table.name).await?;
        }
        self.catalog.drop_instance(name).await
    }

    // ---- tables ----

    pub async fn create_table(
        &self,
        instance: &str,
        spec: TableSpec,
    ) -> EngineResult<Arc<TableMeta>> {
        self.catalog
            .create_table(instance, spec, self.now_ms(), &self.limits)
            .await
    }

    /// UpdateTable: sets options; raising TTL or Max Versions makes not-yet-collected
    /// data visible again at once, since visibility is computed at read time.
    pub async fn alter_table_options(
        &self,
        instance: &str,
        name: &str,
        changes: &[(String, OptionValue)],
    ) -> EngineResult<Arc<TableMeta>> {
        let limits = &self.limits;
        let streamed_before = self.table(instance, name)?.options.stream_enabled;
        let meta = self
            .catalog
            .alter_table(instance, name, |meta| {
                let mut options = meta.options.clone();
                for (option, value) in changes {
                    options.set(option, value, limits)?;
                }
                meta.options = options;
                Ok(())
            })
            .await?;
        self.swept.forget(meta.id);
        if meta.options.stream_enabled && !streamed_before {
            // Changes made while the stream was off have no records: a consumer
            // resuming from before must learn that it missed them.
            self.restart_stream(meta.id, meta.id).await?;
        }
        Ok(meta)
    }

    /// Adds a known attribute column (metadata only), with what its declared SQL type
    /// says beyond its value type and its `DEFAULT` expression, if any.
    pub async fn add_column(
        &self,
        instance: &str,
        name: &str,
        column: AttrColumn,
        declared: Declared,
        default: Option<String>,
    ) -> EngineResult<Arc<TableMeta>> {
        check_name(&column.name)?;
        self.catalog
            .alter_table(instance, name, |meta| {
                if meta.column(&column.name).is_some() || meta.pk_index(&column.name).is_some() {
                    return Err(EngineError::ColumnExists {
                        name: column.name.clone(),
                    });
                }
                meta.column_order.push(column.name.clone());
                meta.declare(&column.name, declared);
                if let Some(default) = default {
                    meta.defaults.insert(column.name.clone(), default);
                }
                meta.columns.push(column);
                Ok(())
            })
            .await
    }

    /// ALTER COLUMN ... TYPE within the column's value type: what the new declaration
    /// says (an integer width, a length limit, `VARCHAR` or `TEXT`) replaces the old;
    /// the caller has checked the stored values against it.
    pub async fn redeclare_column(
        &self,
        instance: &str,
        name: &str,
        column: &str,
        declared: Declared,
    ) -> EngineResult<Arc<TableMeta>> {
        self.catalog
            .alter_table(instance, name, |meta| {
                let key = meta.pk_index(column).is_some();
                if !key && meta.column(column).is_none() {
                    return Err(EngineError::NoSuchColumn {
                        table: meta.name.clone(),
                        column: column.into(),
                    });
                }
                meta.declared.redeclare(column, declared, key);
                Ok(())
            })
            .await
    }

    /// Declares an attribute column `NOT NULL` (`true`) or not; a key column is always
    /// NOT NULL, so it cannot drop it. The caller has checked the rows (`SET NOT NULL`
    /// on a column some row lacks is 23502 in PostgreSQL).
    pub async fn set_not_null(
        &self,
        instance: &str,
        name: &str,
        column: &str,
        not_null: bool,
    ) -> EngineResult<Arc<TableMeta>> {
        self.catalog
            .alter_table(instance, name, |meta| {
                if meta.pk_index(column).is_some() {
                    return match not_null {
                        true => Ok(()),
                        false => Err(EngineError::KeyColumnNotNull {
                            column: column.into(),
                        }),
                    };
                }
                if meta.column(column).is_none() {
                    return Err(EngineError::NoSuchColumn {
                        table: meta.name.clone(),
                        column: column.into(),
                    });
                }
                match not_null {
                    true => meta.declared.not_null.insert(column.into()),
                    false => meta.declared.not_null.remove(column),
                };
                Ok(())
            })
            .await
    }

    /// Sets (`Some`) or drops (`None`) a column's `DEFAULT` expression.
    pub async fn set_column_default(
        &self,
        instance: &str,
        name: &str,
        column: &str,
        default: Option<String>,
    ) -> EngineResult<Arc<TableMeta>> {
        self.catalog
            .alter_table(instance, name, |meta| {
                if meta.column(column).is_none() && meta.pk_index(column).is_none() {
                    return Err(EngineError::NoSuchColumn {
                        table: meta.name.clone(),
                        column: column.into(),
                    });
                }
                match default {
                    Some(default) => meta.defaults.insert(column.into(), default),
                    None => meta.defaults.remove(column),
                };
                Ok(())
            })
            .await
    }

    /// Sets (`Some`) or removes (`None`) the comment on a table (`column` `None`) or on
    /// one of its columns.
    pub async fn set_comment(
        &self,
        instance: &str,
        name: &str,
        column: Option<&str>,
        comment: Option<String>,
    ) -> EngineResult<Arc<TableMeta>> {
        self.catalog
            .alter_table(instance, name, |meta| {
                let Some(column) = column else {
                    meta.comment = comment;
                    return Ok(());
                };
                if meta.column(column).is_none() && meta.pk_index(column).is_none() {
                    return Err(EngineError::NoSuchColumn {
                        table: meta.name.clone(),
                        column: column.into(),
                    });
                }
                match comment {
                    Some(comment) => meta.declared.comments.insert(column.into(), comment),
                    None => meta.declared.comments.remove(column),
                };
                Ok(())
            })
            .await
    }

    /// Gives a table back the declarations and options it had in `before` (a snapshot
    /// taken before an ALTER TABLE that failed part way or whose transaction block
    /// rolled back). `added` are the columns the ALTER added: they are forgotten again;
    /// other columns that became known since (written by other sessions) are kept.
    pub async fn restore_table(
        &self,
        before: &TableMeta,
        added: &[String],
    ) -> EngineResult<Arc<TableMeta>> {
        let meta = self
            .catalog
            .alter_table(&before.instance, &before.name, |meta| {
                if meta.id != before.id {
                    // Dropped and created again since: not the table the snapshot is of.
                    return Err(EngineError::TableNotFound {
                        name: before.name.clone(),
                    });
                }
                let forgotten =
                    |name: &String| added.contains(name) && !before.column_order.contains(name);
                meta.columns.retain(|c| !forgotten(&c.name));
                meta.column_order.retain(|c| !forgotten(c));
                // Columns the block dropped (their cells wait for COMMIT) come back.
                for column in &before.columns {
                    if meta.column(&column.name).is_none() {
                        meta.columns.push(column.clone());
                    }
                }
                if before
                    .column_order
                    .iter()
                    .any(|c| !meta.column_order.contains(c))
                {
                    let later: Vec<String> = meta
                        .column_order
                        .iter()
                        .filter(|c| !before.column_order.contains(c))
                        .cloned()
                        .collect();
                    meta.column_order = before.column_order.clone();
                    meta.column_order.extend(later);
                }
                meta.options = before.options.clone();
                meta.declared = before.declared.clone();
                meta.defaults = before.defaults.clone();
                meta.generated = before.generated.clone();
                meta.foreign_keys = before.foreign_keys.clone();
                meta.checks = before.checks.clone();
                meta.comment = before.comment.clone();
                Ok(())
            })
            .await?;
        self.swept.forget(meta.id);
        Ok(meta)
    }

    /// Renames a table: metadata only, its rows stay where they are.
    pub async fn rename_table(
        &self,
        instance: &str,
        name: &str,
        new_name: &str,
    ) -> EngineResult<Arc<TableMeta>> {
        self.catalog.rename_table(instance, name, new_name).await
    }

    /// Drops a table and deletes its data and its indexes' entries.
    pub async fn drop_table(&self, instance: &str, name: &str) -> EngineResult<()> {
        let meta = self.catalog.drop_table(instance, name).await?;
        self.delete_table_data(&meta).await
    }

    /// Deletes the rows stored under a table's id, its indexes' entries and its stream.
    async fn delete_table_data(&self, table: &TableMeta) -> EngineResult<()> {
        self.delete_prefix(&codec::table_prefix(table.id)).await?;
        self.delete_stream(table.id).await?;
        for index in &table.indexes {
            self.delete_prefix(&index::index_prefix(index.id)).await?;
        }
        Ok(())
    }

    /// CREATE INDEX: adds the index to the catalog, where every write from then on
    /// keeps it up to date, then writes the entries of the rows already stored and
    /// marks it ready for reads. If that fails (two rows share a unique index's
    /// values), the index is dropped again.
    pub async fn create_index(
        &self,
        instance: &str,
        table: &str,
        spec: IndexSpec,
    ) -> EngineResult<Arc<TableMeta>> {
        let (meta, at) = {
            // Writes in flight finish first: each one after sees the new index.
            let _exclusive = self.table_ids.write().await;
            self.catalog.add_index(instance, table, spec).await?
        };
        let index = meta.indexes[at].clone();
        if let Err(e) = self.build_index(&meta, at).await {
            if let Err(undo) = self.drop_index(instance, &index.name).await {
                tracing::warn!(index = %index.name, error = %undo, "could not drop an index whose build failed");
            }
            return Err(match e {
                EngineError::UniqueViolation {
                    index,
                    columns,
                    values,
                } => EngineError::DuplicateInIndex {
                    index,
                    columns,
                    values,
                },
                other => other,
            });
        }
        self.catalog.index_built(&meta, index.id).await?;
        self.table(instance, &meta.name)
    }

    /// DROP INDEX: removes it from the catalog, then deletes its entries.
    pub async fn drop_index(&self, instance: &str, name: &str) -> EngineResult<()> {
        let index = {
            let _exclusive = self.table_ids.write().await;
            self.catalog.remove_index(instance, name).await?
        };
        self.delete_prefix(&index::index_prefix(index.id)).await
    }

    /// The table an index of this name belongs to, and the index.
    pub fn index(&self, instance: &str, name: &str) -> Option<(Arc<TableMeta>, IndexMeta)> {
        self.catalog.index_table(instance, name).map(|(table, at)| {
            let index = table.indexes[at].clone();
            (table, index)
        })
    }

    /// Empties tables at once: they get new ids, under which nothing is stored, in one
    /// catalog write (so a crash leaves them all whole or all empty), and the rows under
    /// the old ids are deleted after. Writes planned before it fail with
    /// `TableReplaced` rather than land under an old id.
    pub async fn truncate_tables(&self, instance: &str, names: &[&str]) -> EngineResult<()> {
        let old = {
            let _exclusive = self.table_ids.write().await;
            self.catalog.renumber_tables(instance, names).await?
        };
        for table in &old {
            // A consumer of the old records must learn that it missed the truncation.
            self.restart_stream(self.table(instance, &table.name)?.id, table.id)
                .await?;
        }
        for table in old {
            self.delete_table_data(&table).await?;
        }
        Ok(())
    }

    pub async fn create_sequence(
        &self,
        instance: &str,
        spec: SequenceSpec,
    ) -> EngineResult<Arc<SequenceMeta>> {
        self.catalog.create_sequence(instance, spec).await
    }

    pub async fn drop_sequence(&self, instance: &str, name: &str) -> EngineResult<()> {
        self.catalog.drop_sequence(instance, name).await
    }

    pub fn sequence(&self, instance: &str, name: &str) -> EngineResult<Arc<SequenceMeta>> {
        self.catalog.sequence(instance, name)
    }

    /// ALTER SEQUENCE (see `catalog::sequences`): returns what undoes it.
    pub async fn alter_sequence(
        &self,
        instance: &str,
        name: &str,
        spec: SequenceSpec,
        restart: Option<Option<i64>>,
    ) -> EngineResult<SequenceUndo> {
        self.catalog
            .alter_sequence(instance, name, spec, restart)
            .await
    }

    /// Undoes the ALTER SEQUENCE of a rolled-back transaction block.
    pub async fn restore_sequence(&self, undo: &SequenceUndo) -> EngineResult<()> {
        self.catalog.restore_sequence(undo).await
    }

    pub fn sequences(&self, instance: &str) -> Vec<Arc<SequenceMeta>> {
        self.catalog.sequences(instance)
    }

    /// The enum types of a database (see `catalog::enum_types`).
    pub fn enum_types(&self, instance: &str) -> Vec<Arc<EnumTypeMeta>> {
        self.catalog.enum_types(instance)
    }

    pub fn enum_type(&self, instance: &str, name: &str) -> Option<Arc<EnumTypeMeta>> {
        self.catalog.enum_type(instance, name)
    }

    pub fn enum_type_by_id(&self, id: u32) -> Option<Arc<EnumTypeMeta>> {
        self.catalog.enum_type_by_id(id)
    }

    pub async fn create_enum_type(
        &self,
        instance: &str,
        name: &str,
        labels: Vec<String>,
    ) -> EngineResult<Arc<EnumTypeMeta>> {
        self.catalog.create_enum_type(instance, name, labels).await
    }

    pub async fn drop_enum_type(&self, instance: &str, name: &str) -> EngineResult<()> {
        self.catalog.drop_enum_type(instance, name).await
    }

    pub async fn add_enum_label(
        &self,
        instance: &str,
        name: &str,
        label: &str,
        position: LabelPosition,
        if_not_exists: bool,
    ) -> EngineResult<bool> {
        self.catalog
            .add_enum_label(instance, name, label, position, if_not_exists)
            .await
    }

    pub async fn rename_enum_label(
        &self,
        instance: &str,
        name: &str,
        from: &str,
        to: &str,
    ) -> EngineResult<()> {
        self.catalog
            .rename_enum_label(instance, name, from, to)
            .await
    }

    pub async fn rename_enum_type(&self, instance: &str, name: &str, to: &str) -> EngineResult<()> {
        self.catalog.rename_enum_type(instance, name, to).await
    }

    /// The views of a database (see `catalog::views`).
    pub fn views(&self, instance: &str) -> Vec<Arc<ViewMeta>> {
        self.catalog.views(instance)
    }

    pub fn view(&self, instance: &str, name: &str) -> Option<Arc<ViewMeta>> {
        self.catalog.view(instance, name)
    }

    pub fn has_sequences(&self, instance: &str) -> bool {
        self.catalog.has_sequences(instance)
    }

    pub fn has_views(&self, instance: &str) -> bool {
        self.catalog.has_views(instance)
    }

    pub fn views_reading(&self, instance: &str, name: &str) -> Vec<Arc<ViewMeta>> {
        self.catalog.views_reading(instance, name)
    }

    pub async fn create_view(
        &self,
        instance: &str,
        name: &str,
        query: String,
        columns: Vec<ViewColumn>,
        reads: Vec<String>,
        replace: bool,
    ) -> EngineResult<Arc<ViewMeta>> {
        self.catalog
            .create_view(instance, name, query, columns, reads, replace)
            .await
    }

    pub async fn restore_view(&self, meta: ViewMeta) -> EngineResult<Arc<ViewMeta>> {
        self.catalog.restore_view(meta).await
    }

    pub async fn drop_view(&self, instance: &str, name: &str) -> EngineResult<()> {
        self.catalog.drop_view(instance, name).await
    }

    /// The sequence's next value (see `catalog::sequences`).
    pub async fn nextval(&self, sequence: &SequenceMeta) -> EngineResult<i64> {
        self.catalog.nextval(sequence).await
    }

    /// Sets where the sequence continues: after `value` if `called`, else at it.
    pub async fn sequence_state(&self, sequence: &SequenceMeta) -> EngineResult<(i64, bool)> {
        self.catalog.sequence_state(sequence).await
    }

    pub async fn setval(
        &self,
        sequence: &SequenceMeta,
        value: i64,
        called: bool,
    ) -> EngineResult<()> {
        self.catalog.setval(sequence, value, called).await
    }

    /// Reserves `count` hidden `_rowid` values for a table without a declared PK.
    pub async fn allocate_rowids(&self, table: &TableMeta, count: i64) -> EngineResult<i64> {
        self.catalog.allocate_rowids(table, count).await
    }

    /// Changes whenever any table, instance or option changes; a plan made when it had
    /// another value may be stale.
    pub fn catalog_version(&self) -> u64 {
        self.catalog.version()
    }

    pub fn table(&self, instance: &str, name: &str) -> EngineResult<Arc<TableMeta>> {
        self.catalog.table(instance, name)
    }

    pub fn tables(&self, instance: &str) -> EngineResult<Vec<Arc<TableMeta>>> {
        self.catalog.tables(instance)
    }

    /// Capacity units and operation counts of a table since start.
    pub fn table_stats(&self, table: &TableMeta) -> TableStatsSnapshot {
        self.stats.table(table.id).snapshot()
    }

    /// The table's consumption over the last minute and its throttled statements.
    pub fn recent_throughput(&self, table: &TableMeta) -> RecentThroughput {
        self.stats.table(table.id).throughput.recent(self.now_ms())
    }

    /// Deletes every key under `prefix`, in backend-sized batches.
    async fn delete_prefix(&self, prefix: &[u8]) -> EngineResult<()> {
        let range = KeyRange::prefix(prefix);
        let chunk = self.backend.max_batch_ops().min(1000);
        loop {
            let entries = self.backend.scan(&range, Direction::Forward, chunk).await?;
            if entries.is_empty() {
                return Ok(());
            }
            let mut batch = WriteBatch::default();
            for (key, _) in entries {
                batch.delete(key);
            }
            self.backend.write(batch).await?;
        }
    }
}
