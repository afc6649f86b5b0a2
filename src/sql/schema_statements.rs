//! Statements that change the schema: CREATE TABLE [AS], ALTER TABLE, DROP TABLE,
//! COMMENT ON, CREATE / DROP SCHEMA and CREATE / DROP DATABASE. `ddl` turns their clauses into Table Store table specs;
//! this module runs them. Only superusers may change the schema.

use super::ddl;
use super::deferred_drops;
use super::dml;
use super::expr::fold;
use super::expr::Params;
use super::read_statements::plan_query;
use super::session_state::SessionState;
use super::sql_types::{Datum, SqlError, SqlResult, StatementResult};
use super::statement_handler::{Claim, StatementHandler};
use super::statement_parser::{carried_alter_sequence, carried_owner_change, AlterSequence};
use super::transaction_block::SchemaUndo;
use super::view_statements;
use crate::engine::EngineError;
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, Statement};

/// The handler of schema changes.
pub(super) struct SchemaChanges;

/// A schema change, planned when it runs: what it does depends on the catalog then.
pub(super) enum SchemaChange {
    CreateTable(Box<ast::CreateTable>),
    AlterTable(Box<ast::AlterTable>),
    Drop {
        object_type: ast::ObjectType,
        if_exists: bool,
        names: Vec<ast::ObjectName>,
        cascade: bool,
    },
    CreateDatabase {
        name: ast::ObjectName,
        if_not_exists: bool,
    },
    /// `ALTER DATABASE name OWNER TO postgres`, the owner every database has.
    AlterDatabaseOwner {
        name: String,
    },
    CreateSequence(Box<Statement>),
    AlterSequence(Box<AlterSequence>),
    CreateIndex(Box<ast::CreateIndex>),
    Comment {
        target: ddl::comments::Commented,
        comment: Option<String>,
    },
    CreateSchema {
        name: ast::SchemaName,
        if_not_exists: bool,
    },
    CreateType {
        name: ast::ObjectName,
        representation: Option<ast::UserDefinedTypeRepresentation>,
    },
    AlterType(ast::AlterType),
    CreateView(Box<ast::CreateView>),
}

impl StatementHandler for SchemaChanges {
    type Plan = SchemaChange;

    fn writes(plan: &SchemaChange) -> Option<&'static str> {
        Some(match plan {
            SchemaChange::CreateTable(_) => "CREATE TABLE",
            SchemaChange::AlterTable(_) => "ALTER TABLE",
            SchemaChange::Drop { .. } => "DROP",
            SchemaChange::CreateDatabase { .. } => "CREATE DATABASE",
            SchemaChange::AlterDatabaseOwner { .. } => "ALTER DATABASE",
            SchemaChange::CreateSequence(_) => "CREATE SEQUENCE",
            SchemaChange::AlterSequence(_) => "ALTER SEQUENCE",
            SchemaChange::CreateIndex(_) => "CREATE INDEX",
            SchemaChange::Comment { .. } => "COMMENT",
            SchemaChange::CreateSchema { .. } => "CREATE SCHEMA",
            SchemaChange::CreateType { .. } => "CREATE TYPE",
            SchemaChange::AlterType(_) => "ALTER TYPE",
            SchemaChange::CreateView(_) => "CREATE VIEW",
        })
    }

    fn plan(_: &SessionState, statement: Box<Statement>, _: &mut Params) -> Claim<SchemaChange> {
        if let Some(alter) = carried_alter_sequence(&statement) {
            return Claim::Planned(alter.map(|alter| SchemaChange::AlterSequence(Box::new(alter))));
        }
        if let Some(name) = carried_owner_change(&statement) {
            return Claim::Planned(Ok(SchemaChange::AlterDatabaseOwner { name }));
        }
        Claim::Planned(Ok(match *statement {
            Statement::CreateTable(create) => SchemaChange::CreateTable(Box::new(create)),
            Statement::AlterTable(alter) => SchemaChange::AlterTable(Box::new(alter)),
            Statement::Drop {
                object_type,
                if_exists,
                names,
                cascade,
                ..
            } => SchemaChange::Drop {
                object_type,
                if_exists,
                names,
                cascade,
            },
            Statement::CreateDatabase {
                db_name,
                if_not_exists,
                location,
                managed_location,
                clone,
                default_charset,
                default_collation,
                ..
            } => {
                // Other dialects' clauses (Hive's LOCATION, Snowflake's CLONE, MySQL's
                // CHARACTER SET and COLLATE) are refused rather than ignored.
                let foreign = location.is_some()
                    || managed_location.is_some()
                    || clone.is_some()
                    || default_charset.is_some()
                    || default_collation.is_some();
                if foreign {
                    return Claim::Planned(Err(SqlError::syntax(
                        "CREATE DATABASE takes PostgreSQL's options: [WITH] OWNER, TEMPLATE, \
                         ENCODING, LOCALE, LC_COLLATE, LC_CTYPE, LOCALE_PROVIDER, TABLESPACE, \
                         ALLOW_CONNECTIONS, CONNECTION LIMIT, IS_TEMPLATE",
                    )));
                }
                SchemaChange::CreateDatabase {
                    name: db_name,
                    if_not_exists,
                }
            }
            create @ Statement::CreateSequence { .. } => {
                SchemaChange::CreateSequence(Box::new(create))
            }
            Statement::CreateIndex(create) => SchemaChange::CreateIndex(Box::new(create)),
            Statement::CreateType {
                name,
                representation,
            } => SchemaChange::CreateType {
                name,
                representation,
            },
            Statement::AlterType(alter) => SchemaChange::AlterType(alter),
            Statement::CreateView(create) => SchemaChange::CreateView(Box::new(create)),
            // `COMMENT IF EXISTS` is another dialect's: refused, not ignored.
            Statement::Comment {
                if_exists: true, ..
            } => return Claim::Planned(Err(SqlError::syntax("COMMENT IF EXISTS is not SQL"))),
            Statement::Comment {
                object_type,
                object_name,
                comment,
                ..
            } => match ddl::comments::commented(&object_type, &object_name) {
                Ok(target) => SchemaChange::Comment { target, comment },
                Err(e) => return Claim::Planned(Err(e)),
            },
            // Other dialects' schema options are refused rather than ignored.
            Statement::CreateSchema {
                with,
                options,
                default_collate_spec,
                clone,
                ..
            } if with.is_some()
                || options.is_some()
                || default_collate_spec.is_some()
                || clone.is_some() =>
            {
                return Claim::Planned(Err(SqlError::unsupported(
                    "CREATE SCHEMA with options, a collation or CLONE",
                )))
            }
            Statement::CreateSchema {
                schema_name,
                if_not_exists,
                ..
            } => SchemaChange::CreateSchema {
                name: schema_name,
                if_not_exists,
            },
            _ => return Claim::NotMine(statement),
        }))
    }

    fn authorize(state: &SessionState, plan: &SchemaChange) -> SqlResult<()> {
        let action = match plan {
            SchemaChange::CreateTable(_) => "create table",
            SchemaChange::AlterTable(_) => "alter table",
            SchemaChange::Drop {
                object_type: ast::ObjectType::Database,
                ..
            } => "drop database",
            SchemaChange::Drop {
                object_type: ast::ObjectType::Table,
                ..
            } => "drop table",
            SchemaChange::Drop {
                object_type: ast::ObjectType::Sequence,
                ..
            } => "drop sequence",
            SchemaChange::CreateSequence(_) => "create sequence",
            SchemaChange::AlterSequence(_) => "alter sequence",
            SchemaChange::CreateIndex(_) => "create index",
            SchemaChange::Drop {
                object_type: ast::ObjectType::Index,
                ..
            } => "drop index",
            SchemaChange::Drop {
                object_type: ast::ObjectType::Type,
                ..
            } => "drop type",
            SchemaChange::Drop {
                object_type: ast::ObjectType::View,
                ..
            } => "drop view",
            // Refused as unsupported when it runs.
            SchemaChange::Drop { .. } => return Ok(()),
            SchemaChange::CreateDatabase { .. } => "create database",
            SchemaChange::AlterDatabaseOwner { .. } => "alter database",
            SchemaChange::Comment { .. } => "comment on",
            SchemaChange::CreateSchema { .. } => "create schema",
            SchemaChange::CreateType { .. } => "create type",
            SchemaChange::AlterType(_) => "alter type",
            SchemaChange::CreateView(_) => "create view",
        };
        Ok(state.access.require_superuser(action)?)
    }

    async fn execute(
        state: &mut SessionState,
        plan: &SchemaChange,
        _: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        if state.transaction.is_some() {
            refuse_in_block(state, plan)?;
        }
        let (engine, instance) = (&state.engine, state.instance.as_str());
        let tag = match plan {
            SchemaChange::CreateTable(create) => {
                let name = ddl::table_name(&create.name)?;
                let existed = engine.table(instance, &name).is_ok();
                let result = match create.query.is_some() {
                    true => create_table_as(state, create).await?,
                    false => {
                        ddl::create_table(engine, instance, create).await?;
                        StatementResult::command("CREATE TABLE")
                    }
                };
                if let (Some(block), false) = (state.transaction.as_mut(), existed) {
                    block.changed_schema(SchemaUndo::DropTable(name));
                }
                return Ok(result);
            }
            SchemaChange::AlterTable(alter) => {
                view_statements::refuse_alter_under_views(state, alter)?;
                alter_table(state, alter).await?;
                "ALTER TABLE"
            }
            SchemaChange::CreateView(create) => {
                view_statements::create(state, create).await?;
                "CREATE VIEW"
            }
            SchemaChange::Drop {
                object_type: ast::ObjectType::View,
                if_exists,
                names,
                cascade,
            } => {
                view_statements::drop(state, names, *if_exists, *cascade).await?;
                "DROP VIEW"
            }
            SchemaChange::Drop {
                object_type,
                if_exists,
                names,
                cascade,
            } if state.transaction.is_some()
                && matches!(object_type, ast::ObjectType::Table | ast::ObjectType::Index) =>
            {
                match object_type {
                    ast::ObjectType::Table => {
                        drop_views_reading_tables(state, names, *cascade).await?;
                        deferred_drops::drop_tables(state, names, *if_exists, *cascade).await?;
                        "DROP TABLE"
                    }
                    _ => {
                        deferred_drops::drop_indexes(state, names, *if_exists).await?;
                        "DROP INDEX"
                    }
                }
            }
            SchemaChange::Drop {
                object_type,
                if_exists,
                names,
                cascade,
            } => {
                if *object_type == ast::ObjectType::Table {
                    drop_views_reading_tables(state, names, *cascade).await?;
                }
                let (engine, instance) = (&state.engine, state.instance.as_str());
                let tag =
                    ddl::drop(engine, instance, *object_type, *if_exists, names, *cascade).await?;
                if let Some(block) = state.transaction.as_mut() {
                    // Dropped for good: nothing to drop if the block rolls back.
                    let dropped: Vec<String> = names
                        .iter()
                        .filter_map(|n| ddl::table_name(n).ok())
                        .collect();
                    block.dropped(&dropped);
                }
                tag
            }
            SchemaChange::CreateSequence(create) => {
                let Statement::CreateSequence {
                    temporary,
                    if_not_exists,
                    name,
                    data_type,
                    sequence_options,
                    owned_by,
                } = &**create
                else {
                    return Err(SqlError::internal("a CREATE SEQUENCE plan without one"));
                };
                if *temporary {
                    return Err(SqlError::unsupported(
                        "a TEMPORARY sequence (dropped at the session's end) is not supported yet",
                    ));
                }
                let sequence = ddl::table_name(name)?;
                let existed = engine.sequence(instance, &sequence).is_ok();
                ddl::sequences::create(
                    engine,
                    instance,
                    name,
                    *if_not_exists,
                    data_type.as_ref(),
                    sequence_options,
                    owned_by.as_ref(),
                )
                .await?;
                if let (Some(block), false) = (state.transaction.as_mut(), existed) {
                    block.changed_schema(SchemaUndo::DropSequence(sequence));
                }
                "CREATE SEQUENCE"
            }
            SchemaChange::AlterSequence(alter) => {
                match ddl::sequences::alter(engine, instance, alter).await? {
                    Some(before) => {
                        if let Some(block) = state.transaction.as_mut() {
                            block.changed_schema(SchemaUndo::RestoreSequence(before));
                        }
                    }
                    None => state.notices.push(format!(
                        "relation \"{}\" does not exist, skipping",
                        ddl::table_name(&alter.name)?
                    )),
                }
                "ALTER SEQUENCE"
            }
            SchemaChange::CreateIndex(create) => {
                let made = ddl::indexes::create(engine, instance, create).await?;
                if let (Some(block), Some(made)) = (state.transaction.as_mut(), made) {
                    block.changed_schema(SchemaUndo::DropIndex(made));
                }
                "CREATE INDEX"
            }
            SchemaChange::CreateSchema {
                name,
                if_not_exists,
            } => {
                ddl::schemas::create(name, *if_not_exists)?;
                "CREATE SCHEMA"
            }
            SchemaChange::CreateType {
                name,
                representation,
            } => {
                let (name, made) =
                    ddl::enum_types::create(engine, instance, name, representation.as_ref())
                        .await?;
                if let (Some(block), true) = (state.transaction.as_mut(), made) {
                    block.changed_schema(SchemaUndo::DropType(name));
                }
                "CREATE TYPE"
            }
            SchemaChange::AlterType(alter) => {
                ddl::enum_types::alter(engine, instance, alter).await?;
                "ALTER TYPE"
            }
            SchemaChange::Comment { target, comment } => {
                let before = engine.table(instance, &target.table)?;
                ddl::comments::set(engine, instance, target, comment.as_deref()).await?;
                if let Some(block) = state.transaction.as_mut() {
                    block.changed_schema(SchemaUndo::RestoreTable {
                        before,
                        added: Vec::new(),
                    });
                }
                "COMMENT"
            }
            SchemaChange::CreateDatabase {
                name,
                if_not_exists,
            } => {
                let (_, name) = ddl::object_name(name)?;
                match engine.create_instance(&name).await {
                    Err(EngineError::InstanceExists { .. }) if *if_not_exists => {}
                    other => {
                        other?;
                    }
                }
                "CREATE DATABASE"
            }
            SchemaChange::AlterDatabaseOwner { name } => {
                if !engine.instances().iter().any(|i| i.name == *name) {
                    return Err(SqlError::new(
                        SqlState::InvalidCatalogName,
                        format!("database \"{name}\" does not exist"),
                    ));
                }
                "ALTER DATABASE"
            }
        };
        Ok(StatementResult::command(tag))
    }
}

/// Before DROP TABLE: 42809 for a name that is a view's; the views that read the
/// tables refused, or with CASCADE dropped (`view_statements`).
async fn drop_views_reading_tables(
    state: &mut SessionState,
    names: &[ast::ObjectName],
    cascade: bool,
) -> SqlResult<()> {
    let mut tables = Vec::with_capacity(names.len());
    for name in names {
        let name = ddl::table_name(name)?;
        if state.engine.view(&state.instance, &name).is_some() {
            return Err(SqlError::new(
                SqlState::WrongObjectType,
                format!("\"{name}\" is not a table (use DROP VIEW to remove a view)"),
            ));
        }
        tables.push(name);
    }
    view_statements::drop_views_reading(state, &tables, cascade).await
}

/// In a transaction block, only what a rollback can undo: creating a table or a
/// sequence (dropped again), altering a table (its declarations restored), and dropping
/// a table or sequence the block itself created. Anything else
/// would survive a ROLLBACK, so it is refused, as PostgreSQL refuses CREATE DATABASE in
/// a block (25001).
fn refuse_in_block(state: &SessionState, plan: &SchemaChange) -> SqlResult<()> {
    let created = |name: &ast::ObjectName| {
        let name = ddl::table_name(name).unwrap_or_default();
        state
            .transaction
            .as_ref()
            .is_some_and(|block| block.created(&name))
    };
    let cannot_undo = |what: &str| {
        Err(SqlError::unsupported(format!(
            "{what} inside a transaction block: pgwide could not undo it if the block \
             rolled back (run it outside the block)"
        )))
    };
    match plan {
        SchemaChange::CreateTable(_) => Ok(()),
        SchemaChange::AlterTable(alter) => {
            // A foreign key dropped comes back with the table's declarations; a unique
            // constraint's index, once dropped, cannot.
            let table = ddl::table_name(&alter.name)
                .ok()
                .and_then(|name| state.engine.table(&state.instance, &name).ok());
            let is_foreign_key = |name: &ast::Ident| {
                table
                    .as_ref()
                    .is_some_and(|t| t.foreign_keys.iter().any(|fk| fk.name == fold(name)))
            };
            let drops_constraint = alter.operations.iter().any(|op| {
                matches!(op, ast::AlterTableOperation::DropConstraint { name, .. }
                    if !is_foreign_key(name)
                        && !state.transaction.as_ref().is_some_and(|b| b.created(&fold(name))))
            });
            if drops_constraint {
                return cannot_undo("DROP CONSTRAINT of a constraint the block did not create");
            }
            let drops_for_good = alter.operations.iter().any(|op| {
                let ast::AlterTableOperation::DropColumn { column_names, .. } = op else {
                    return false;
                };
                column_names.iter().any(|column| {
                    let column = fold(column);
                    table.as_ref().is_some_and(|t| {
                        t.generated.contains_key(&column)
                            || ddl::drop_column::indexes_on(t, &column)
                                .iter()
                                .any(|index| {
                                    !state.transaction.as_ref().is_some_and(|b| b.created(index))
                                })
                    })
                })
            });
            if drops_for_good {
                return cannot_undo(
                    "DROP COLUMN of a column with an index or a sequence the block did not create",
                );
            }
            // It re-keys the stored rows at once, and would miss the block's own.
            let adds_primary_key = alter.operations.iter().any(|op| {
                matches!(
                    op,
                    ast::AlterTableOperation::AddConstraint {
                        constraint: ast::TableConstraint::PrimaryKey(_),
                        ..
                    }
                )
            });
            if adds_primary_key {
                return cannot_undo("ADD PRIMARY KEY");
            }
            refuse_unseen_rows(state, alter)
        }
        // Deleted at COMMIT (`deferred_drops`).
        SchemaChange::Drop {
            object_type: ast::ObjectType::Table | ast::ObjectType::Index,
            ..
        } => Ok(()),
        SchemaChange::Drop {
            object_type: ast::ObjectType::Database,
            ..
        } => Err(SqlError::new(
            SqlState::ActiveSqlTransaction,
            "DROP DATABASE cannot run inside a transaction block",
        )),
        SchemaChange::Drop {
            object_type: ast::ObjectType::Sequence,
            names,
            ..
        } if names.iter().all(created) => Ok(()),
        SchemaChange::Drop {
            object_type: ast::ObjectType::Sequence,
            ..
        } => cannot_undo("DROP SEQUENCE of a sequence the block did not create"),
        SchemaChange::Drop {
            object_type: ast::ObjectType::Type,
            names,
            ..
        } if names.iter().all(created) => Ok(()),
        SchemaChange::Drop {
            object_type: ast::ObjectType::Type,
            ..
        } => cannot_undo("DROP TYPE of a type the block did not create"),
        SchemaChange::AlterType(alter) if created(&alter.name) => Ok(()),
        // Views are put back as they were (`view_statements`).
        SchemaChange::CreateView(_)
        | SchemaChange::Drop {
            object_type: ast::ObjectType::View,
            ..
        } => Ok(()),
        SchemaChange::AlterType(_) => cannot_undo("ALTER TYPE of a type the block did not create"),
        // A restart cannot be undone: values handed out since would come again.
        SchemaChange::AlterSequence(alter) if alter.restart.is_some() && !created(&alter.name) => {
            cannot_undo("ALTER SEQUENCE ... RESTART of a sequence the block did not create")
        }
        SchemaChange::AlterSequence(_) => Ok(()),
        SchemaChange::CreateSequence(_)
        | SchemaChange::CreateIndex(_)
        | SchemaChange::Comment { .. }
        | SchemaChange::CreateSchema { .. }
        | SchemaChange::CreateType { .. } => Ok(()),
        SchemaChange::Drop { .. } | SchemaChange::AlterDatabaseOwner { .. } => Ok(()),
        SchemaChange::CreateDatabase { .. } => Err(SqlError::new(
            SqlState::ActiveSqlTransaction,
            "CREATE DATABASE cannot run inside a transaction block",
        )),
    }
}

/// ALTER TABLE, all or nothing: if one of its operations fails, those before it are
/// undone. In a block, it is undone if the block rolls back.
async fn alter_table(state: &mut SessionState, alter: &ast::AlterTable) -> SqlResult<()> {
    let (engine, instance) = (&state.engine, state.instance.as_str());
    let before = ddl::table_name(&alter.name)
        .ok()
        .and_then(|name| engine.table(instance, &name).ok());
    let Some(before) = before else {
        // A missing table is 42P01 (or nothing, with IF EXISTS) before anything changes.
        return ddl::alter_table(engine, instance, alter).await.map(|_| ());
    };
    if let Some(renamed) = renamed_column(alter) {
        return rename_column(state, alter, &before, renamed).await;
    }
    let added: Vec<String> = alter
        .operations
        .iter()
        .filter_map(|op| match op {
            ast::AlterTableOperation::AddColumn { column_def, .. } => Some(fold(&column_def.name)),
            _ => None,
        })
        .collect();
    // The unique indexes its UNIQUE constraints made, which restoring the table's
    // declarations does not drop.
    let made_indexes = |engine: &crate::engine::Engine| -> Vec<String> {
        engine
            .table(instance, &before.name)
            .map(|now| {
                now.indexes
                    .iter()
                    .filter(|i| !before.indexes.iter().any(|b| b.id == i.id))
                    .map(|i| i.name.clone())
                    .collect()
            })
            .unwrap_or_default()
    };
    let dropped = match ddl::alter_table(engine, instance, alter).await {
        Ok(dropped) => dropped,
        Err(e) => {
            undo_failed_alter(
                engine,
                instance,
                alter,
                &before,
                &added,
                made_indexes(engine),
            )
            .await;
            return Err(e);
        }
    };
    let made = made_indexes(engine);
    let Some(block) = state.transaction.as_mut() else {
        for column in dropped {
            engine
                .delete_column_cells(instance, &column.table, &column.column)
                .await?;
        }
        return Ok(());
    };
    // Their cells go at COMMIT: a ROLLBACK gives the columns back with their values.
    block.drop_cells_at_commit(dropped);
    let renamed = alter.operations.iter().find_map(|op| match op {
        ast::AlterTableOperation::RenameTable {
            table_name: ast::RenameTableNameKind::To(new_name),
        } => ddl::table_name(new_name).ok(),
        _ => None,
    });
    block.changed_schema(match renamed {
        Some(new_name) => SchemaUndo::RenameTable {
            from: new_name,
            to: before.name.clone(),
        },
        None => SchemaUndo::RestoreTable { before, added },
    });
    // Undone before the table is restored: undo runs newest first.
    for index in made {
        block.changed_schema(SchemaUndo::DropIndex(index));
    }
    Ok(())
}

/// The column an `ALTER TABLE ... RENAME COLUMN old TO new` renames, as (old, new).
fn renamed_column(alter: &ast::AlterTable) -> Option<(String, String)> {
    alter.operations.iter().find_map(|op| match op {
        ast::AlterTableOperation::RenameColumn {
            old_column_name,
            new_column_name,
        } => Some((fold(old_column_name), fold(new_column_name))),
        _ => None,
    })
}

/// ALTER TABLE ... RENAME COLUMN, alone in its statement as PostgreSQL's grammar has
/// it. In a block it is undone by renaming back; a block that has written to the
/// table already is refused, as its staged writes name the old column.
async fn rename_column(
    state: &mut SessionState,
    alter: &ast::AlterTable,
    table: &crate::engine::TableMeta,
    (old, new): (String, String),
) -> SqlResult<()> {
    if alter.operations.len() > 1 {
        return Err(SqlError::syntax(
            "RENAME COLUMN cannot be combined with other ALTER TABLE operations",
        ));
    }
    if let Some(block) = &state.transaction {
        if block.staged.view().touches(table) {
            return Err(SqlError::unsupported(format!(
                "RENAME COLUMN of table \"{}\" after this transaction block wrote to it is \
                 not supported: rename the column before writing, or in its own transaction",
                table.name
            )));
        }
    }
    ddl::alter_table(&state.engine, &state.instance, alter).await?;
    if let Some(block) = state.transaction.as_mut() {
        block.changed_schema(SchemaUndo::RenameColumn {
            table: table.name.clone(),
            from: new,
            to: old,
        });
    }
    Ok(())
}

/// Undoes the operations of a failed ALTER TABLE that came before the one that failed:
/// drops the indexes it made and gives the table its declarations back.
async fn undo_failed_alter(
    engine: &crate::engine::Engine,
    instance: &str,
    alter: &ast::AlterTable,
    before: &std::sync::Arc<crate::engine::TableMeta>,
    added: &[String],
    made_indexes: Vec<String>,
) {
    if alter.operations.len() > 1 {
        for index in made_indexes {
            if let Err(undo) = engine.drop_index(instance, &index).await {
                tracing::warn!(index = %index, error = %undo, "could not drop an index of a failed ALTER TABLE");
            }
        }
        if let Err(undo) = engine.restore_table(before, added).await {
            tracing::warn!(table = %before.name, error = %undo, "could not undo the operations of a failed ALTER TABLE");
        }
    }
}

/// An ALTER TABLE in a block that would check the table's rows (ADD COLUMN ... NOT NULL
/// or DEFAULT, SET NOT NULL, a narrower TYPE) after the block wrote to it: the check reads the stored
/// rows, not the block's own, so it is refused (0A000) rather than passed wrongly.
fn refuse_unseen_rows(state: &SessionState, alter: &ast::AlterTable) -> SqlResult<()> {
    let (Some(block), Ok(name)) = (&state.transaction, ddl::table_name(&alter.name)) else {
        return Ok(());
    };
    let Ok(table) = state.engine.table(&state.instance, &name) else {
        return Ok(());
    };
    let checks_rows = alter.operations.iter().any(|op| match op {
        ast::AlterTableOperation::AddColumn { column_def, .. } => {
            column_def.options.iter().any(|o| {
                matches!(
                    o.option,
                    ast::ColumnOption::NotNull | ast::ColumnOption::Default(_)
                )
            })
        }
        ast::AlterTableOperation::AlterColumn { op, .. } => matches!(
            op,
            ast::AlterColumnOperation::SetNotNull | ast::AlterColumnOperation::SetDataType { .. }
        ),
        // A staged write of the column would bring it back at COMMIT.
        ast::AlterTableOperation::DropColumn { .. } => true,
        _ => false,
    });
    match checks_rows && block.staged.view().touches(&table) {
        true => Err(SqlError::unsupported(format!(
            "this ALTER TABLE checks the rows of \"{name}\", which this transaction block \
             has written to; pgwide checks the stored rows only (run it before the writes, or \
             outside the block)"
        ))),
        false => Ok(()),
    }
}

/// `CREATE TABLE t [WITH (...)] AS SELECT ...`: the query is read first, so a failing
/// query leaves no table; if writing its rows fails, the new table is dropped again.
async fn create_table_as(
    state: &mut SessionState,
    create: &ast::CreateTable,
) -> SqlResult<StatementResult> {
    let query = create
        .query
        .as_ref()
        .ok_or_else(|| SqlError::internal("CREATE TABLE AS without a query"))?;
    let name = ddl::table_name(&create.name)?;
    if create.if_not_exists && state.engine.table(&state.instance, &name).is_ok() {
        return Ok(StatementResult::command("CREATE TABLE AS"));
    }
    let mut params = state.params(&[]);
    let select = plan_query(state, query, &mut params)?;
    let spec = ddl::table_as_spec(create, &select.columns())?;
    let names: Vec<String> = spec
        .column_order
        .iter()
        .filter(|c| !(spec.auto_rowid && *c == ddl::ROWID))
        .cloned()
        .collect();
    let rows = select.read_all(state, Vec::new()).await?;
    state.engine.create_table(&state.instance, spec).await?;
    let written = async {
        let insert = dml::insert_into(state.engine.table(&state.instance, &name)?, &names)?;
        dml::execute_insert_rows(&mut state.write_target(), &insert, rows, &[]).await
    }
    .await;
    match written {
        Ok(StatementResult::Command { tag }) => {
            Ok(StatementResult::command(tag.replace("INSERT 0", "SELECT")))
        }
        Ok(_) => Err(SqlError::internal("CREATE TABLE AS returned rows")),
        Err(e) => {
            if let Err(dropped) = state.engine.drop_table(&state.instance, &name).await {
                tracing::warn!(table = %name, error = %dropped, "could not drop the table of a failed CREATE TABLE AS");
            }
            Err(e)
        }
    }
}
