//! ADD PRIMARY KEY on a table created without one, whose rows the hidden `_rowid`
//! keys: the way PostgreSQL keys a table after loading it, and what pg_dump writes
//! after each table's COPY. In Table Store a table's primary key decides where each
//! row is stored, so this makes a new table: the rows are copied under a new table id,
//! keyed by the chosen columns' values (which leave the attribute columns; every version
//! of the other cells comes along), with the entries of its indexes under new ids. One
//! catalog write then swaps the new table in, and the old rows are deleted after, as
//! TRUNCATE does.
//!
//! Writes to every table wait for the whole copy, as PostgreSQL's ACCESS EXCLUSIVE lock
//! makes writes to the table wait; reads go on, from the old rows. A row without a value
//! in a key column (`KeyColumnHasNulls`) or two rows with the same key
//! (`DuplicateInIndex`) stop it: what was copied is deleted and the table stays as it
//! was. A crash before the swap leaves the table as it was too, with the copy's rows
//! behind under ids never used again.

use super::catalog::{PkColumn, TableMeta};
use super::codec::{encode_pk, row_prefix, table_prefix};
use super::error::{EngineError, EngineResult};
use super::index::{pk_as_value, row_entries, shown_value};
use super::scan::{RowScanner, ScanStep};
use super::types::{PkValue, Row, Value};
use super::validate::check_pk_value;
use super::Engine;
use crate::storage::{Direction, KeyRange, WriteBatch};
use std::collections::HashSet;
use std::sync::Arc;

impl Engine {
    /// Keys table `table`, created without a primary key, by `key`: attribute columns
    /// whose stored values are of the key types given; `name` is the key's constraint
    /// name if not `<table>_pkey`. Returns the table as it is now.
    pub async fn add_primary_key(
        &self,
        instance: &str,
        table: &str,
        key: Vec<PkColumn>,
        name: Option<String>,
    ) -> EngineResult<Arc<TableMeta>> {
        // Writes in flight finish first, and none starts until the swap is done.
        let _exclusive = self.table_ids.write().await;
        let old = self.table(instance, table)?;
        let rekeyed = self.catalog.rekeyed(&old, key, name).await?;
        // A consumer of the old id's stream must learn that its records are gone.
        let copied = match self.copy_rekeyed(&old, &rekeyed).await {
            Ok(()) => self.restart_stream(rekeyed.id, old.id).await,
            Err(e) => Err(e),
        };
        if let Err(e) = copied {
            self.discard_copy(&rekeyed).await;
            return Err(e);
        }
        let stored = match self.catalog.replace_rekeyed(&old, rekeyed.clone()).await {
            Ok(stored) => stored,
            Err(e) => {
                self.discard_copy(&rekeyed).await;
                return Err(e);
            }
        };
        // The statement is done: rows left behind under the old id are only garbage.
        if let Err(e) = self.delete_table_data(&old).await {
            tracing::warn!(table = %old.name, error = %e, "could not delete the rows a table had before ADD PRIMARY KEY");
        }
        Ok(stored)
    }

    /// Writes every row of `old` that exists now under `rekeyed`'s id and key, with
    /// its index entries.
    async fn copy_rekeyed(&self, old: &TableMeta, rekeyed: &TableMeta) -> EngineResult<()> {
        let range = KeyRange::prefix(&table_prefix(old.id));
        let mut scanner = RowScanner::new(self.backend.as_ref(), old, range, Direction::Forward);
        let room = self.backend.max_batch_ops().min(COPY_BATCH);
        let mut batch = WriteBatch::default();
        // The keys `batch` writes: the backend cannot tell of them yet.
        let mut pending: HashSet<Vec<u8>> = HashSet::new();
        let now = self.now_ms();
        loop {
            let mut row = match scanner.step().await? {
                ScanStep::Row(row) => row,
                ScanStep::PassedOver => continue,
                ScanStep::End => break,
            };
            let Some(current) = row.current(&old.options, now) else {
                continue;
            };
            let pk = rekeyed
                .pk
                .iter()
                .map(|column| self.key_value(rekeyed, column, &current))
                .collect::<EngineResult<Vec<_>>>()?;
            let key = row_prefix(rekeyed.id, &pk);
            if pending.contains(&key) || self.backend.get(&key).await?.is_some() {
                return Err(duplicate_key(rekeyed, &pk));
            }
            row.drop_hidden_versions(&old.options, now);
            row.cells.retain(|c| rekeyed.pk_index(&c.column).is_none());
            row.pk = pk;
            row.key = key.clone();
            let entries = row_entries(rekeyed, &row, now);
            if !batch.is_empty() && batch.len() + 1 + entries.len() > room {
                self.backend.write(std::mem::take(&mut batch)).await?;
                pending.clear();
            }
            let encoded_pk = encode_pk(&row.pk);
            for (_, entry) in entries {
                batch.put(entry.key, encoded_pk.clone());
            }
            if let Some(value) = row.encode() {
                batch.put(key.clone(), value);
            }
            pending.insert(key);
        }
        if !batch.is_empty() {
            self.backend.write(batch).await?;
        }
        Ok(())
    }

    /// Row `row`'s value in key column `column`, which it must have.
    fn key_value(&self, table: &TableMeta, column: &PkColumn, row: &Row) -> EngineResult<PkValue> {
        let value = match row.latest(&column.name).map(|cell| &cell.value) {
            None => {
                return Err(EngineError::KeyColumnHasNulls {
                    table: table.name.clone(),
                    column: column.name.clone(),
                })
            }
            Some(Value::Integer(i)) => PkValue::Integer(*i),
            Some(Value::String(s)) => PkValue::String(s.clone()),
            Some(Value::Binary(b)) => PkValue::Binary(b.clone()),
            Some(other) => {
                return Err(EngineError::BadPkType {
                    column: column.name.clone(),
                    given: other.value_type().name().into(),
                })
            }
        };
        check_pk_value(&column.name, &value, &self.limits)?;
        Ok(value)
    }

    /// Deletes what a copy that will not be swapped in wrote.
    async fn discard_copy(&self, rekeyed: &TableMeta) {
        if let Err(e) = self.delete_table_data(rekeyed).await {
            tracing::warn!(table = %rekeyed.name, error = %e, "could not delete the rows of an ADD PRIMARY KEY that failed");
        }
    }
}

/// Rows and index entries one backend batch of the copy writes at most.
const COPY_BATCH: usize = 1000;

/// PostgreSQL's error for a primary key two rows share, naming the constraint.
fn duplicate_key(table: &TableMeta, pk: &[PkValue]) -> EngineError {
    let shown: Vec<String> = pk.iter().map(|v| shown_value(&pk_as_value(v))).collect();
    EngineError::DuplicateInIndex {
        index: table.pk_constraint_name(),
        columns: table
            .pk
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        values: shown.join(", "),
    }
}
