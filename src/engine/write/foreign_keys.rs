//! Foreign keys as a batch commits: every row the batch leaves referencing a parent
//! must find that parent row (as the batch leaves it, or stored), and every parent row
//! it deletes or re-keys takes its constraint's action on the child rows still showing
//! its old values: the batch fails, or the child rows are deleted, updated or set to
//! NULL in the same batch (and those changes are checked in turn).
//!
//! The stored parent rows a check relied on join the commit's compare-and-swap, so a
//! parent deleted meanwhile fails the commit and the batch retries. A child row
//! inserted while another batch deletes its parent is not seen by that batch's look
//! for children (nothing is locked); see docs/table-store.md §7.2.

use super::{apply_write, Working, WorkingSet};
use crate::engine::catalog::{Catalog, TableMeta};
use crate::engine::codec::{decode_pk, row_prefix, table_prefix};
use crate::engine::condition::Condition;
use crate::engine::error::{EngineError, EngineResult};
use crate::engine::foreign_key::{
    complete, parent_key, parent_lookup, shown_key, violation, ForeignKeyMeta, ParentLookup,
    ReferentialAction,
};
use crate::engine::index::shown_columns;
use crate::engine::scan::{RowScanner, ScanStep};
use crate::engine::stored::StoredRow;
use crate::engine::stream;
use crate::engine::types::{PrimaryKey, Value};
use crate::engine::write::{ColumnOp, RowChange, RowWrite};
use crate::engine::Engine;
use crate::storage::{Check, Direction, KeyRange};
use std::collections::HashMap;
use std::sync::Arc;

/// The tables of a batch that foreign keys involve, as the catalog has them while it
/// commits: those with foreign keys, and those other tables reference.
#[derive(Default)]
pub(super) struct ForeignKeyTables {
    tables: HashMap<u32, Arc<TableMeta>>,
    /// Parent table id → the tables referencing it, with the key's position.
    referenced: HashMap<u32, Vec<(Arc<TableMeta>, usize)>>,
}

impl ForeignKeyTables {
    /// Notes `table` (as the catalog has it now) if foreign keys involve it.
    pub(super) fn consider(&mut self, catalog: &Catalog, table: &Arc<TableMeta>) {
        if self.tables.contains_key(&table.id) {
            return;
        }
        let referencing = catalog.referencing(&table.instance, &table.name);
        if table.foreign_keys.is_empty() && referencing.is_empty() {
            return;
        }
        self.tables.insert(table.id, Arc::clone(table));
        if !referencing.is_empty() {
            self.referenced.insert(table.id, referencing);
        }
    }

    fn table_of(&self, key: &[u8]) -> Option<Arc<TableMeta>> {
        let id: [u8; 4] = key.get(1..5)?.try_into().ok()?;
        self.tables.get(&u32::from_be_bytes(id)).cloned()
    }
}

impl WorkingSet {
    /// Checks the batch's rows against the foreign keys that involve them and takes
    /// the parents' actions, adding to `checks` the stored rows the outcome relied on.
    pub(super) async fn enforce_foreign_keys(
        &mut self,
        engine: &Engine,
        checks: &mut Vec<Check>,
    ) -> EngineResult<()> {
        if self.foreign_keys.tables.is_empty() {
            return Ok(());
        }
        let mut pending: Vec<Vec<u8>> = self
            .rows
            .keys()
            .filter(|key| self.foreign_keys.table_of(key).is_some())
            .cloned()
            .collect();
        while let Some(key) = pending.pop() {
            let Some(table) = self.foreign_keys.table_of(&key) else {
                continue;
            };
            let before = self.before_row(&key)?;
            let Some(after) = self.after_row(&key, &table)? else {
                continue;
            };
            if !table.foreign_keys.is_empty() {
                self.check_parents(engine, &table, before.as_ref(), &after, checks)
                    .await?;
            }
            let referencing = self
                .foreign_keys
                .referenced
                .get(&table.id)
                .cloned()
                .unwrap_or_default();
            for (child, at) in referencing {
                self.act_on_children(engine, &table, &child, at, before.as_ref(), &after)
                    .await?
                    .into_iter()
                    .for_each(|key| pending.push(key));
            }
        }
        Ok(())
    }

    /// The row under `key` as stored before the batch, if it was.
    fn before_row(&self, key: &[u8]) -> EngineResult<Option<StoredRow>> {
        match self.rows.get(key) {
            Some(Working::Row(working)) => working
                .original
                .as_ref()
                .map(|value| StoredRow::decode(working.row.pk.clone(), key.to_vec(), value))
                .transpose(),
            _ => Ok(None),
        }
    }

    /// The row under `key` as the batch leaves it, if the batch touches it.
    fn after_row(&self, key: &[u8], table: &TableMeta) -> EngineResult<Option<StoredRow>> {
        Ok(match self.rows.get(key) {
            Some(Working::Row(working)) => Some(working.row.clone()),
            Some(Working::New(value)) => {
                let (pk, _) = decode_pk(&key[table_prefix(table.id).len()..], &table.pk_types())?;
                Some(StoredRow::decode(pk, key.to_vec(), value)?)
            }
            None => None,
        })
    }

    /// `ForeignKeyViolation` unless each of `table`'s foreign keys whose values the
    /// write set or changed finds its parent row.
    async fn check_parents(
        &self,
        engine: &Engine,
        table: &Arc<TableMeta>,
        before: Option<&StoredRow>,
        after: &StoredRow,
        checks: &mut Vec<Check>,
    ) -> EngineResult<()> {
        let now = self.now;
        for fk in &table.foreign_keys {
            let Some(values) = complete(shown_columns(table, &fk.columns, after, now)) else {
                continue;
            };
            let unchanged = before.is_some_and(|before| {
                complete(shown_columns(table, &fk.columns, before, now)).as_ref() == Some(&values)
            });
            if unchanged {
                continue;
            }
            let parent = match fk.parent == table.name {
                true => Arc::clone(table),
                false => engine.catalog.table(&table.instance, &fk.parent)?,
            };
            let lookup = parent_lookup(&parent, fk).ok_or_else(|| EngineError::NoUniqueMatch {
                parent: parent.name.clone(),
            })?;
            if self.staged_parent_shows(&parent, &lookup, fk, &values)? {
                continue;
            }
            let rows = &self.rows;
            let staged = |key: &[u8]| rows.contains_key(key);
            let stored = engine
                .stored_parent(&parent, &lookup, &values, &staged)
                .await?;
            checks.extend(stored.read);
            if !stored.found {
                return Err(violation(table, fk, &values));
            }
        }
        Ok(())
    }

    /// Whether a row of `parent` the batch writes shows `values` in `fk`'s referenced
    /// columns as the batch leaves it.
    fn staged_parent_shows(
        &self,
        parent: &TableMeta,
        lookup: &ParentLookup,
        fk: &ForeignKeyMeta,
        values: &[Value],
    ) -> EngineResult<bool> {
        let shows = |row: &StoredRow| {
            complete(shown_columns(parent, &fk.parent_columns, row, self.now)).as_deref()
                == Some(values)
        };
        match lookup {
            ParentLookup::PrimaryKey(positions) => {
                let Some(pk) = parent_key(positions, &parent.pk_types(), values) else {
                    return Ok(false);
                };
                let key = row_prefix(parent.id, &pk);
                Ok(self.after_row(&key, parent)?.is_some_and(|row| shows(&row)))
            }
            ParentLookup::Unique(..) => {
                let prefix = table_prefix(parent.id);
                for key in self.rows.keys().filter(|key| key.starts_with(&prefix)) {
                    if self.after_row(key, parent)?.is_some_and(|row| shows(&row)) {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
        }
    }

    /// When the write deleted `parent`'s row or changed its referenced values, takes
    /// `child`'s foreign key `at`'s action on the child rows still showing the old
    /// values; returns the keys of the rows it changed.
    async fn act_on_children(
        &mut self,
        engine: &Engine,
        parent: &TableMeta,
        child: &Arc<TableMeta>,
        at: usize,
        before: Option<&StoredRow>,
        after: &StoredRow,
    ) -> EngineResult<Vec<Vec<u8>>> {
        let now = self.now;
        let fk = &child.foreign_keys[at];
        let Some(before) = before else {
            return Ok(Vec::new());
        };
        let Some(old) = complete(shown_columns(parent, &fk.parent_columns, before, now)) else {
            return Ok(Vec::new());
        };
        let new = shown_columns(parent, &fk.parent_columns, after, now);
        if complete(new.clone()).as_ref() == Some(&old) {
            return Ok(Vec::new());
        }
        let children = self.children_showing(engine, child, fk, &old).await?;
        if children.is_empty() {
            return Ok(Vec::new());
        }
        let action = match &new {
            None => fk.on_delete,
            Some(_) => fk.on_update,
        };
        let change = match (action, new) {
            (ReferentialAction::NoAction | ReferentialAction::Restrict, _) => {
                return Err(EngineError::ForeignKeyReferenced {
                    table: parent.name.clone(),
                    on_child: format!("\"{}\" on table \"{}\"", fk.name, child.name),
                    detail: format!(
                        "Key {} is still referenced from table \"{}\".",
                        shown_key(&fk.parent_columns, &old),
                        child.name
                    ),
                })
            }
            (ReferentialAction::Cascade, None) => RowChange::Delete,
            (ReferentialAction::Cascade, Some(new)) => RowChange::Update(
                fk.columns
                    .iter()
                    .zip(new)
                    .map(|(column, value)| match value {
                        Some(value) => ColumnOp::Put {
                            column: column.clone(),
                            value,
                            version: None,
                        },
                        None => ColumnOp::DeleteAll {
                            column: column.clone(),
                        },
                    })
                    .collect(),
            ),
            (ReferentialAction::SetNull, _) => RowChange::Update(
                fk.columns
                    .iter()
                    .map(|column| ColumnOp::DeleteAll {
                        column: column.clone(),
                    })
                    .collect(),
            ),
        };
        if !child.indexes.is_empty() {
            self.indexed
                .entry(child.id)
                .or_insert_with(|| Arc::clone(child));
        }
        if !child.checks.is_empty() {
            self.checked
                .entry(child.id)
                .or_insert_with(|| Arc::clone(child));
        }
        self.foreign_keys.consider(&engine.catalog, child);
        let mut changed = Vec::with_capacity(children.len());
        for pk in children {
            let write = RowWrite {
                pk,
                change: change.clone(),
                condition: Condition::IGNORE,
                return_row: false,
            };
            let row = self.working_row(engine, child, &write.pk, false).await?;
            apply_write(row, child, &write, now)?;
            // A cascade is a change like any other to a streamed child.
            if child.options.stream_enabled {
                let record = stream::record_of(&write, row, now);
                self.records.push((Arc::clone(child), record));
            }
            changed.push(row_prefix(child.id, &write.pk));
        }
        Ok(changed)
    }

    /// The keys of `child`'s rows that show `values` in `fk`'s columns, as the batch
    /// leaves them: found through an index on those columns if the child has one,
    /// else by reading the whole table.
    async fn children_showing(
        &self,
        engine: &Engine,
        child: &TableMeta,
        fk: &ForeignKeyMeta,
        values: &[Value],
    ) -> EngineResult<Vec<PrimaryKey>> {
        let now = self.now;
        let prefix = table_prefix(child.id);
        let mut keys: Vec<Vec<u8>> = self
            .rows
            .keys()
            .filter(|key| key.starts_with(&prefix))
            .cloned()
            .collect();
        let index = child.indexes.iter().find(|index| {
            index.ready && index.columns.get(..fk.columns.len()) == Some(&fk.columns[..])
        });
        match index {
            Some(index) => {
                for pk in engine.read_index(child, index, values).await? {
                    keys.push(row_prefix(child.id, &pk));
                }
            }
            None => {
                let range = KeyRange::prefix(&prefix);
                let mut scanner =
                    RowScanner::new(engine.backend.as_ref(), child, range, Direction::Forward);
                loop {
                    let row = match scanner.step().await? {
                        ScanStep::Row(row) => row,
                        ScanStep::PassedOver => continue,
                        ScanStep::End => break,
                    };
                    let shown = complete(shown_columns(child, &fk.columns, &row, now));
                    if shown.as_deref() == Some(values) {
                        keys.push(row_prefix(child.id, &row.pk));
                    }
                }
            }
        }
        keys.sort_unstable();
        keys.dedup();
        let mut found = Vec::new();
        for key in keys {
            let row = match self.after_row(&key, child)? {
                Some(row) => row,
                None => {
                    let (pk, _) = decode_pk(&key[prefix.len()..], &child.pk_types())?;
                    match engine.backend.get(&key).await? {
                        Some(value) => StoredRow::decode(pk, key, &value)?,
                        None => continue,
                    }
                }
            };
            if complete(shown_columns(child, &fk.columns, &row, now)).as_deref() == Some(values) {
                found.push(row.pk);
            }
        }
        Ok(found)
    }
}
