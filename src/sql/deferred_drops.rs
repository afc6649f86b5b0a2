//! DROP TABLE and DROP INDEX inside a transaction block, of objects the block did not
//! create (Alembic's `downgrade` and Knex's `migrate:rollback` run them in one): what
//! they delete could not come back if the block rolled back, so the deletion waits for
//! COMMIT. A table is renamed out of the way at once (`pgwide_dropped_<id>`: its name
//! is free, reads of it are 42P01, a ROLLBACK renames it back) and dropped when the
//! block commits; an index stays until then (reads through it see what a scan would),
//! and is dropped when the block commits, unless a ROLLBACK TO SAVEPOINT took the
//! DROP INDEX back.

use super::ddl;
use super::session_state::SessionState;
use super::sql_types::{SqlError, SqlResult};
use super::transaction_block::{DeferredDrop, SchemaUndo};
use crate::sqlstate::SqlState;
use sqlparser::ast::ObjectName;

/// The name a table dropped in a block has until the block commits.
fn hidden_name(id: u32) -> String {
    format!("pgwide_dropped_{id}")
}

/// `DROP TABLE [IF EXISTS] names [CASCADE]` in a block: the tables the block created
/// are dropped at once, the others renamed out of the way until COMMIT. CASCADE is
/// taken when it has nothing to drop (Django drops each table with it, the
/// referencing ones first); foreign keys of tables that stay are not dropped in a
/// block (0A000): a ROLLBACK could not give them back.
pub async fn drop_tables(
    state: &mut SessionState,
    names: &[ObjectName],
    if_exists: bool,
    cascade: bool,
) -> SqlResult<()> {
    let (engine, instance) = (&state.engine, state.instance.clone());
    let mut tables = Vec::with_capacity(names.len());
    for name in names {
        let name = ddl::table_name(name)?;
        match engine.table(&instance, &name) {
            Ok(_) => tables.push(name),
            Err(_) if if_exists => {}
            Err(e) => return Err(e.into()),
        }
    }
    // Tables the block dropped before are going too: their keys do not hold these.
    let mut going = tables.clone();
    if let Some(block) = &state.transaction {
        going.extend(block.tables_dropped_at_commit());
    }
    match ddl::foreign_keys::refuse_referenced(engine, &instance, &going, false) {
        Err(_) if cascade => {
            return Err(SqlError::unsupported(
                "DROP TABLE ... CASCADE of a table other tables' foreign keys reference, \
                 inside a transaction block: pgwide could not give the foreign keys back if \
                 the block rolled back (drop the referencing tables first, or run it outside \
                 the block)",
            ))
        }
        result => result?,
    }
    for name in tables {
        let Some(block) = state.transaction.as_mut() else {
            return Err(SqlError::internal("a deferred DROP TABLE outside a block"));
        };
        if block.created(&name) {
            state.engine.drop_table(&instance, &name).await?;
            block.dropped(std::slice::from_ref(&name));
            continue;
        }
        let table = state.engine.table(&instance, &name)?;
        let hidden = hidden_name(table.id);
        state.engine.rename_table(&instance, &name, &hidden).await?;
        block.changed_schema(SchemaUndo::RenameTable {
            from: hidden.clone(),
            to: name,
        });
        block.changed_schema(SchemaUndo::AtCommit(DeferredDrop::Table(hidden)));
    }
    Ok(())
}

/// `DROP INDEX [IF EXISTS] names` in a block: an index the block created is dropped at
/// once, the others when it commits.
pub async fn drop_indexes(
    state: &mut SessionState,
    names: &[ObjectName],
    if_exists: bool,
) -> SqlResult<()> {
    let instance = state.instance.clone();
    for name in names {
        let name = ddl::table_name(name).map_err(|_| missing_index(name))?;
        let Some((table, index)) = state.engine.index(&instance, &name) else {
            if if_exists {
                continue;
            }
            return Err(missing_index(&name));
        };
        if index.constraint {
            return Err(SqlError::new(
                SqlState::DependentObjectsStillExist,
                format!(
                    "cannot drop index {name} because constraint {name} on table {} requires it",
                    table.name
                ),
            ));
        }
        ddl::foreign_keys::refuse_index_in_use(&state.engine, &table, &name)?;
        let Some(block) = state.transaction.as_mut() else {
            return Err(SqlError::internal("a deferred DROP INDEX outside a block"));
        };
        if block.created(&name) {
            state.engine.drop_index(&instance, &name).await?;
            block.dropped(std::slice::from_ref(&name));
        } else {
            block.changed_schema(SchemaUndo::AtCommit(DeferredDrop::Index(name)));
        }
    }
    Ok(())
}

fn missing_index(name: impl std::fmt::Display) -> SqlError {
    SqlError::new(
        SqlState::UndefinedObject,
        format!("index \"{name}\" does not exist"),
    )
}
