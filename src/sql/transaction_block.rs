//! Transaction blocks: the writes a block stages until COMMIT, the tables it created,
//! whether a failed statement aborted it, and its savepoints. `transaction_statements`
//! runs BEGIN, COMMIT, ROLLBACK and the savepoint statements on it; reads in the block
//! see its staged writes.
//!
//! DDL in a block: a table the block creates, or an ALTER TABLE, takes effect at once
//! (for other sessions too) and is undone if the block rolls back, at ROLLBACK, a
//! failed COMMIT, a ROLLBACK TO a savepoint before it, or the connection's end: the
//! table is dropped, the altered table gets its declarations back; CREATE SEQUENCE
//! likewise. Schema changes pgwide could not undo (dropping a table or sequence the
//! block did not create) are refused in a block (`schema_statements`).

use super::ddl::drop_column::DroppedColumn;
use super::expr::fold;
use super::sql_error::{SqlError, SqlResult};
use crate::engine::{Engine, EngineError, ReadSnapshot, StagedMark, StagedWrites, TableMeta};
use crate::sqlstate::SqlState;
use sqlparser::ast::Ident;
use std::sync::Arc;

/// A schema change of a block, as what undoes it.
pub(super) enum SchemaUndo {
    /// The block created the table: drop it.
    DropTable(String),
    /// The block created the index: drop it.
    DropIndex(String),
    /// The block created the sequence: drop it.
    DropSequence(String),
    /// The block created the enum type: drop it.
    DropType(String),
    /// The block created, replaced or dropped view `name`: put back the view as it was
    /// `before` (none: drop it).
    RestoreView {
        name: String,
        before: Option<crate::engine::ViewMeta>,
    },
    /// The block altered the sequence: put back its definition as it was.
    RestoreSequence(crate::engine::SequenceUndo),
    /// The block renamed table `to` to `from`: rename it back.
    RenameTable { from: String, to: String },
    /// The block renamed column `to` of `table` to `from`: rename it back.
    RenameColumn {
        table: String,
        from: String,
        to: String,
    },
    /// The block altered the table: give it back its declarations as in `before`,
    /// forgetting the columns it `added`.
    RestoreTable {
        before: Arc<TableMeta>,
        added: Vec<String>,
    },
    /// Nothing to undo: what the block dropped, to be deleted once it commits
    /// (`deferred_drops`).
    AtCommit(DeferredDrop),
}

impl SchemaUndo {
    /// The name of the table or sequence changed.
    fn object(&self) -> &str {
        match self {
            SchemaUndo::DropTable(name)
            | SchemaUndo::DropSequence(name)
            | SchemaUndo::DropType(name)
            | SchemaUndo::DropIndex(name) => name,
            SchemaUndo::RenameTable { from, .. } => from,
            SchemaUndo::RestoreView { name, .. } => name,
            SchemaUndo::RestoreSequence(undo) => &undo.before.spec.name,
            SchemaUndo::RenameColumn { table, .. } => table,
            SchemaUndo::RestoreTable { before, .. } => &before.name,
            SchemaUndo::AtCommit(DeferredDrop::Table(name) | DeferredDrop::Index(name)) => name,
        }
    }
}

/// A LISTEN (`Listen`) or UNLISTEN of a channel, or of all of them (`UnlistenAll`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ListenChange {
    Listen(String),
    Unlisten(String),
    UnlistenAll,
}

/// A savepoint: its name, and where the block's writes, schema changes, LISTENs and the
/// session's notifications stood when it was set.
struct Savepoint {
    name: String,
    staged: StagedMark,
    schema_changes: usize,
    notifications: usize,
    listens: usize,
}

/// An open transaction block.
pub(super) struct Transaction {
    /// When BEGIN ran: `now()` in the block.
    pub(super) started: std::time::SystemTime,
    pub(super) staged: StagedWrites,
    /// A statement failed: everything up to the block's end is refused (25P02) and
    /// COMMIT rolls back.
    pub(super) failed: bool,
    /// The block's schema changes, oldest first: undone, newest first, if it rolls back.
    schema_changes: Vec<SchemaUndo>,
    /// LISTEN and UNLISTEN in the block, oldest first, applied at COMMIT (`None`:
    /// `UNLISTEN *`).
    pub(super) listens: Vec<ListenChange>,
    /// How many of the session's notifications were pending at BEGIN: the block's own
    /// come after, and go if it rolls back.
    pub(super) notifications_at_begin: usize,
    /// Open savepoints, oldest first: a name, where the staged writes stood when it was
    /// set and how many schema changes the block had made, so ROLLBACK TO drops the
    /// writes staged and undoes the schema changes made after it.
    savepoints: Vec<Savepoint>,
    /// Columns the block dropped: their cells are deleted once it commits.
    dropped_columns: Vec<DroppedColumn>,
    /// A REPEATABLE READ block's snapshot, taken at its first statement that reads.
    pub(super) snapshot: Option<ReadSnapshot>,
}

impl Transaction {
    /// `BEGIN`, with `pending_notifications` from before it.
    pub(super) fn begin(pending_notifications: usize) -> Self {
        Transaction {
            listens: Vec::new(),
            notifications_at_begin: pending_notifications,
            started: std::time::SystemTime::now(),
            staged: StagedWrites::default(),
            failed: false,
            schema_changes: Vec::new(),
            savepoints: Vec::new(),
            dropped_columns: Vec::new(),
            snapshot: None,
        }
    }

    /// `SAVEPOINT name`, with `pending_notifications` from before it.
    pub(super) fn savepoint(&mut self, name: &Ident, pending_notifications: usize) {
        self.savepoints.push(Savepoint {
            name: fold(name),
            staged: self.staged.mark(),
            schema_changes: self.schema_changes.len(),
            notifications: pending_notifications,
            listens: self.listens.len(),
        });
    }

    /// `RELEASE SAVEPOINT name`: keeps the writes since it, forgets it and later ones.
    pub(super) fn release(&mut self, name: &Ident) -> SqlResult<()> {
        let at = self.savepoint_index(name)?;
        self.staged.release(self.savepoints.len() - at);
        self.savepoints.truncate(at);
        Ok(())
    }

    /// `ROLLBACK TO SAVEPOINT name`: drops the writes and LISTENs since it, keeps it,
    /// and ends an abort the block was in. Returns the schema changes made since, for
    /// the caller to undo, and how many of the session's notifications to keep.
    pub(super) fn rollback_to(&mut self, name: &Ident) -> SqlResult<(Vec<SchemaUndo>, usize)> {
        let at = self.savepoint_index(name)?;
        let savepoint = &self.savepoints[at];
        let (created, notifications) = (savepoint.schema_changes, savepoint.notifications);
        self.listens.truncate(savepoint.listens);
        self.staged.rollback_to(savepoint.staged);
        self.staged.release(self.savepoints.len() - (at + 1));
        self.savepoints.truncate(at + 1);
        self.failed = false;
        Ok((self.schema_changes.split_off(created), notifications))
    }

    /// The (renamed) tables the block dropped, to be deleted once it commits.
    pub(super) fn tables_dropped_at_commit(&self) -> Vec<String> {
        self.schema_changes
            .iter()
            .filter_map(|change| match change {
                SchemaUndo::AtCommit(DeferredDrop::Table(name)) => Some(name.clone()),
                _ => None,
            })
            .collect()
    }

    /// Records columns the block dropped, whose cells go once it commits.
    pub(super) fn drop_cells_at_commit(&mut self, columns: Vec<DroppedColumn>) {
        self.dropped_columns.extend(columns);
    }

    /// Records a schema change, to be undone if the block rolls back.
    pub(super) fn changed_schema(&mut self, undo: SchemaUndo) {
        self.schema_changes.push(undo);
    }

    /// Whether the block created table (or sequence, or index) `name`.
    pub(super) fn created(&self, name: &str) -> bool {
        self.schema_changes.iter().any(
            |u| matches!(u, SchemaUndo::DropTable(t) | SchemaUndo::DropSequence(t) | SchemaUndo::DropType(t) | SchemaUndo::DropIndex(t) if t == name),
        )
    }

    /// Forgets the schema changes to tables or sequences the block then dropped:
    /// nothing is left to undo.
    pub(super) fn dropped(&mut self, objects: &[String]) {
        self.schema_changes
            .retain(|u| !objects.iter().any(|o| o == u.object()));
    }

    /// The block's schema changes, taken to be undone.
    pub(super) fn take_schema_changes(&mut self) -> Vec<SchemaUndo> {
        std::mem::take(&mut self.schema_changes)
    }

    /// The position of the newest savepoint called `name` (3B001 when there is none).
    fn savepoint_index(&self, name: &Ident) -> SqlResult<usize> {
        let name = fold(name);
        self.savepoints
            .iter()
            .rposition(|savepoint| savepoint.name == name)
            .ok_or_else(|| {
                SqlError::new(
                    SqlState::InvalidSavepointSpecification,
                    format!("savepoint \"{name}\" does not exist"),
                )
            })
    }
}

/// The open block, for a statement (`what`) that only runs inside one (25P01 outside).
pub(super) fn open<'t>(
    block: &'t mut Option<Transaction>,
    what: &str,
) -> SqlResult<&'t mut Transaction> {
    block.as_mut().ok_or_else(|| {
        SqlError::new(
            SqlState::NoActiveSqlTransaction,
            format!("{what} can only be used in transaction blocks"),
        )
    })
}

/// COMMIT of `block` (ended by the caller) in `instance`: applies its staged writes
/// atomically, or rolls back a block a statement aborted. Returns the command tag; a
/// write-write conflict is 40001 and nothing of the block is applied. A block that
/// does not commit drops the tables it created.
pub(super) async fn commit(
    engine: &Engine,
    instance: &str,
    block: Option<Transaction>,
) -> SqlResult<&'static str> {
    let Some(block) = block else {
        return Ok("COMMIT");
    };
    if block.failed {
        undo_schema(engine, instance, &block.schema_changes).await;
        return Ok("ROLLBACK");
    }
    let dropped = block.dropped_columns;
    if !block.staged.is_empty() {
        if let Err(e) = engine.commit_staged(block.staged).await {
            undo_schema(engine, instance, &block.schema_changes).await;
            return Err(match e {
                EngineError::WriteConflict => SqlError::new(
                    SqlState::SerializationFailure,
                    "could not serialize access due to concurrent update; the transaction was rolled back",
                ),
                other => other.into(),
            });
        }
    }
    delete_dropped_cells(engine, instance, &dropped).await;
    let deferred: Vec<DeferredDrop> = block
        .schema_changes
        .into_iter()
        .filter_map(|change| match change {
            SchemaUndo::AtCommit(drop) => Some(drop),
            _ => None,
        })
        .collect();
    run_deferred_drops(engine, instance, &deferred).await;
    Ok("COMMIT")
}

/// Deletes the cells of the columns a committed block dropped, unless a column is back
/// (a ROLLBACK TO SAVEPOINT restored it). A failure is logged: the column is gone from
/// the table either way.
async fn delete_dropped_cells(engine: &Engine, instance: &str, dropped: &[DroppedColumn]) {
    for column in dropped {
        let back = engine
            .table(instance, &column.table)
            .is_ok_and(|t| t.column(&column.column).is_some());
        if back {
            continue;
        }
        if let Err(e) = engine
            .delete_column_cells(instance, &column.table, &column.column)
            .await
        {
            tracing::warn!(table = %column.table, column = %column.column, error = %e, "could not delete the cells of a dropped column");
        }
    }
}

/// Undoes the schema changes of a block that rolled back, newest first: drops the
/// tables and sequences it created, renames tables and columns back, gives the tables it altered
/// their declarations back. A change
/// that cannot be undone is logged: the rollback itself has happened.
pub(super) async fn undo_schema(engine: &Engine, instance: &str, changes: &[SchemaUndo]) {
    for change in changes.iter().rev() {
        let undone = match change {
            SchemaUndo::DropTable(table) => engine.drop_table(instance, table).await.map(|_| ()),
            SchemaUndo::DropSequence(name) => engine.drop_sequence(instance, name).await,
            SchemaUndo::DropType(name) => match engine.drop_enum_type(instance, name).await {
                Err(EngineError::TypeNotFound { .. }) => Ok(()),
                other => other,
            },
            SchemaUndo::DropIndex(name) => engine.drop_index(instance, name).await,
            SchemaUndo::RestoreView { name, before } => match before {
                Some(before) => engine.restore_view(before.clone()).await.map(|_| ()),
                None => engine.drop_view(instance, name).await,
            },
            SchemaUndo::RestoreSequence(undo) => engine.restore_sequence(undo).await,
            SchemaUndo::RenameTable { from, to } => {
                engine.rename_table(instance, from, to).await.map(|_| ())
            }
            SchemaUndo::RenameColumn { table, from, to } => {
                match super::ddl::rename_column::rename_column(engine, instance, table, from, to)
                    .await
                {
                    Ok(()) => Ok(()),
                    Err(e) => {
                        tracing::warn!(table = %table, column = %from, error = %e.message(), "could not rename a column back");
                        Ok(())
                    }
                }
            }
            SchemaUndo::RestoreTable { before, added } => {
                engine.restore_table(before, added).await.map(|_| ())
            }
            SchemaUndo::AtCommit(_) => Ok(()),
        };
        match undone {
            Ok(()) | Err(EngineError::TableNotFound { .. }) => {}
            Err(e) => tracing::warn!(
                object = change.object(),
                error = %e,
                "could not undo a schema change of a rolled back transaction"
            ),
        }
    }
}

/// What a committed block still has to drop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeferredDrop {
    /// The table, renamed to this name when the block dropped it.
    Table(String),
    Index(String),
}

/// Drops what a committed block deferred. A failure is logged: the block has
/// committed, and a table left renamed is still out of the way.
async fn run_deferred_drops(engine: &Engine, instance: &str, drops: &[DeferredDrop]) {
    for drop in drops {
        let done = match drop {
            DeferredDrop::Table(hidden) => engine.drop_table(instance, hidden).await,
            DeferredDrop::Index(name) => engine.drop_index(instance, name).await,
        };
        match done {
            Ok(()) | Err(EngineError::TableNotFound { .. } | EngineError::IndexNotFound { .. }) => {
            }
            Err(e) => {
                tracing::warn!(object = ?drop, error = %e, "could not drop what a committed block dropped")
            }
        }
    }
}
