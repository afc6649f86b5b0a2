//! Foreign keys: columns of a child table whose values, when none of them is NULL
//! (MATCH SIMPLE), must be shown by a row of the parent table in its primary key or in
//! a unique index's columns. They live in the child's `TableMeta`, name the parent by
//! name, and are checked as each batch commits (`write::foreign_keys`), so every write
//! path (INSERT, UPDATE, upsert, COPY, a transaction's COMMIT) is held to them.
//!
//! What a parent's deleted or re-keyed row does to the child rows still showing its
//! values is the constraint's action: refuse (`NO ACTION`, `RESTRICT`), `CASCADE`, or
//! `SET NULL`.

use super::catalog::TableMeta;
use super::codec::{decode_pk, row_prefix, table_prefix};
use super::error::{EngineError, EngineResult};
use super::index::{lookup_prefix, shown_columns, IndexMeta};
use super::scan::{RowScanner, ScanStep};
use super::stored::StoredRow;
use super::types::{PkType, PkValue, PrimaryKey, Value, ValueType};
use super::Engine;
use crate::storage::{Check, Direction, KeyRange};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What happens to child rows when the parent row they reference goes or changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReferentialAction {
    /// The write fails (PostgreSQL checks at the statement's end; pgwide at the
    /// batch's commit, which is the statement's end outside a transaction block).
    NoAction,
    /// The write fails.
    Restrict,
    /// The child rows are deleted (on delete) or take the new values (on update).
    Cascade,
    /// The child rows' referencing columns become NULL.
    SetNull,
}

/// One foreign key of a child table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKeyMeta {
    /// Unique across instances and never reused (drawn with tables' and indexes'
    /// ids): the constraint's identity in the SQL catalog. Set when it is added.
    #[serde(default)]
    pub id: u32,
    /// The constraint's name, unique among the child table's constraints.
    pub name: String,
    /// The child's referencing columns, key or attribute.
    pub columns: Vec<String>,
    /// The parent table, in the child's instance.
    pub parent: String,
    /// The parent's referenced columns, one per referencing column: its primary key's
    /// columns or a unique index's, in any order.
    pub parent_columns: Vec<String>,
    pub on_delete: ReferentialAction,
    pub on_update: ReferentialAction,
    /// Declared `DEFERRABLE` / `INITIALLY DEFERRED` (shown in the catalog; the check is
    /// at commit either way).
    #[serde(default)]
    pub deferrable: bool,
    #[serde(default)]
    pub initially_deferred: bool,
}

/// How a child's values find the parent row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ParentLookup {
    /// The referenced columns are the parent's primary key: for each key column, the
    /// position of its value among the foreign key's.
    PrimaryKey(Vec<usize>),
    /// They are a ready unique index's columns: the index, and for each of its
    /// columns the position of its value among the foreign key's.
    Unique(IndexMeta, Vec<usize>),
}

/// How `fk`'s values find a row of `parent`, or `None` when its referenced columns are
/// neither the primary key nor a ready unique index's columns.
pub(crate) fn parent_lookup(parent: &TableMeta, fk: &ForeignKeyMeta) -> Option<ParentLookup> {
    let positions = |columns: Vec<&str>| -> Option<Vec<usize>> {
        if columns.len() != fk.parent_columns.len() {
            return None;
        }
        columns
            .iter()
            .map(|column| fk.parent_columns.iter().position(|c| c == column))
            .collect()
    };
    if !parent.auto_rowid {
        if let Some(at) = positions(parent.pk.iter().map(|c| c.name.as_str()).collect()) {
            return Some(ParentLookup::PrimaryKey(at));
        }
    }
    parent
        .indexes
        .iter()
        .filter(|index| index.unique && index.ready)
        .find_map(|index| {
            let at = positions(index.columns.iter().map(String::as_str).collect())?;
            Some(ParentLookup::Unique(index.clone(), at))
        })
}

/// The parent's primary key holding `values` (the foreign key's, none NULL), or `None`
/// when one cannot be a key of that type (a value of another type matches no row).
pub(crate) fn parent_key(
    positions: &[usize],
    types: &[PkType],
    values: &[Value],
) -> Option<PrimaryKey> {
    positions
        .iter()
        .zip(types)
        .map(|(&at, ty)| match (values.get(at)?, ty) {
            (Value::Integer(i), PkType::Integer) => Some(PkValue::Integer(*i)),
            (Value::String(s), PkType::String) => Some(PkValue::String(s.clone())),
            (Value::Binary(b), PkType::Binary) => Some(PkValue::Binary(b.clone())),
            _ => None,
        })
        .collect()
}

/// The value type `column` of `table` stores, key or attribute.
pub(crate) fn column_value_type(table: &TableMeta, column: &str) -> Option<ValueType> {
    match table.pk_index(column) {
        Some(k) => Some(match table.pk[k].ty {
            PkType::Integer => ValueType::Integer,
            PkType::String => ValueType::String,
            PkType::Binary => ValueType::Binary,
        }),
        None => table.column(column).map(|c| c.ty),
    }
}

/// The values `fk`'s referencing columns show, all of them not NULL; `None` when one
/// is NULL (MATCH SIMPLE: such a row references nothing).
pub(crate) fn complete(values: Option<Vec<Option<Value>>>) -> Option<Vec<Value>> {
    values?.into_iter().collect()
}

/// `(a, b)=(1, x)`: the key as PostgreSQL's foreign-key errors show it.
pub(crate) fn shown_key(columns: &[String], values: &[Value]) -> String {
    format!(
        "({})=({})",
        columns.join(", "),
        values
            .iter()
            .map(super::index::shown_value)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// What a look for a parent row found in storage.
pub(crate) struct StoredParent {
    pub found: bool,
    /// The keys read and their values as read: a commit that relied on them requires
    /// them unchanged.
    pub read: Vec<Check>,
}

impl Engine {
    /// ALTER TABLE ... ADD FOREIGN KEY (and CREATE TABLE's): adds `fk` to table
    /// `table`, then checks the rows already there, removing it again if one
    /// references no parent row. Writes from the moment it is added are checked.
    pub async fn add_foreign_key(
        &self,
        instance: &str,
        table: &str,
        fk: ForeignKeyMeta,
    ) -> EngineResult<()> {
        let child = {
            // Writes in flight finish first: each one after sees the new key.
            let _exclusive = self.table_ids.write().await;
            self.catalog
                .add_foreign_key(instance, table, fk.clone())
                .await?
        };
        if let Err(e) = self.check_existing_rows(&child, &fk).await {
            if let Err(undo) = self
                .catalog
                .remove_foreign_key(instance, &child.name, &fk.name)
                .await
            {
                tracing::warn!(constraint = %fk.name, error = %undo, "could not remove a foreign key whose rows failed it");
            }
            return Err(e);
        }
        Ok(())
    }

    /// ALTER TABLE ... DROP CONSTRAINT of a foreign key.
    pub async fn drop_foreign_key(
        &self,
        instance: &str,
        table: &str,
        name: &str,
    ) -> EngineResult<()> {
        self.catalog
            .remove_foreign_key(instance, table, name)
            .await
            .map(|_| ())
    }

    /// The tables with a foreign key to table `parent`, each with that key.
    pub fn referencing(
        &self,
        instance: &str,
        parent: &str,
    ) -> Vec<(Arc<TableMeta>, ForeignKeyMeta)> {
        self.catalog
            .referencing(instance, parent)
            .into_iter()
            .map(|(table, at)| {
                let fk = table.foreign_keys[at].clone();
                (table, fk)
            })
            .collect()
    }

    /// `ForeignKeyViolation` for the first stored row of `child` that references no
    /// row of its parent.
    async fn check_existing_rows(
        &self,
        child: &TableMeta,
        fk: &ForeignKeyMeta,
    ) -> EngineResult<()> {
        let parent = self.catalog.table(&child.instance, &fk.parent)?;
        let lookup = parent_lookup(&parent, fk).ok_or_else(|| EngineError::NoUniqueMatch {
            parent: parent.name.clone(),
        })?;
        let range = KeyRange::prefix(&table_prefix(child.id));
        let mut scanner = RowScanner::new(self.backend.as_ref(), child, range, Direction::Forward);
        loop {
            let row = match scanner.step().await? {
                ScanStep::Row(row) => row,
                ScanStep::PassedOver => continue,
                ScanStep::End => return Ok(()),
            };
            let now = self.now_ms();
            let Some(values) = complete(shown_columns(child, &fk.columns, &row, now)) else {
                continue;
            };
            if !self
                .stored_parent(&parent, &lookup, &values, &|_| false)
                .await?
                .found
            {
                return Err(violation(child, fk, &values));
            }
        }
    }

    /// Whether a stored row of `parent` shows `values` (in the foreign key's column
    /// order) in the referenced columns, leaving out rows `staged` says a batch is
    /// changing (the batch looks at those itself).
    pub(crate) async fn stored_parent(
        &self,
        parent: &TableMeta,
        lookup: &ParentLookup,
        values: &[Value],
        staged: &(dyn Fn(&[u8]) -> bool + Sync),
    ) -> EngineResult<StoredParent> {
        let now = self.now_ms();
        let mut read = Vec::new();
        let (key, columns, expected) = match lookup {
            ParentLookup::PrimaryKey(positions) => {
                let Some(pk) = parent_key(positions, &parent.pk_types(), values) else {
                    return Ok(StoredParent { found: false, read });
                };
                (row_prefix(parent.id, &pk), None, None)
            }
            ParentLookup::Unique(index, positions) => {
                let in_index_order: Vec<Value> =
                    positions.iter().map(|&at| values[at].clone()).collect();
                let entry = lookup_prefix(index, &in_index_order);
                let holder = self.backend.get(&entry).await?;
                read.push(Check {
                    key: entry,
                    expected: holder.clone(),
                });
                let Some(holder) = holder else {
                    return Ok(StoredParent { found: false, read });
                };
                let mut key = table_prefix(parent.id);
                key.extend_from_slice(&holder);
                let wanted: Vec<Option<Value>> = in_index_order.into_iter().map(Some).collect();
                (key, Some(index.columns.clone()), Some(wanted))
            }
        };
        if staged(&key) {
            return Ok(StoredParent { found: false, read });
        }
        let stored = self.backend.get(&key).await?;
        read.push(Check {
            key: key.clone(),
            expected: stored.clone(),
        });
        let Some(value) = stored else {
            return Ok(StoredParent { found: false, read });
        };
        let (pk, _) = decode_pk(&key[table_prefix(parent.id).len()..], &parent.pk_types())?;
        let row = StoredRow::decode(pk, key, &value)?;
        let found = match (columns, expected) {
            (Some(columns), Some(expected)) => {
                shown_columns(parent, &columns, &row, now) == Some(expected)
            }
            _ => row.exists(&parent.options, now),
        };
        Ok(StoredParent { found, read })
    }
}

/// The error for a child row of `child` whose `values` no parent row shows.
pub(crate) fn violation(child: &TableMeta, fk: &ForeignKeyMeta, values: &[Value]) -> EngineError {
    EngineError::ForeignKeyViolation {
        table: child.name.clone(),
        constraint: fk.name.clone(),
        detail: format!(
            "Key {} is not present in table \"{}\".",
            shown_key(&fk.columns, values),
            fk.parent
        ),
    }
}
