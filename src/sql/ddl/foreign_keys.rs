//! `FOREIGN KEY ... REFERENCES` and a column's `REFERENCES`: the engine's foreign keys
//! (`engine::foreign_key`), checked on every write as its batch commits. What pgwide
//! would not enforce as declared is refused: `MATCH FULL`, `ON ... SET DEFAULT`,
//! `NOT ENFORCED`, `NOT VALID`, and actions that would rewrite a child's primary key.

use super::table_name;
use crate::engine::{Engine, ForeignKeyMeta, ReferentialAction, TableMeta};
use crate::sql::expr::fold;
use crate::sql::sql_types::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, ColumnOption, CreateTable, ForeignKeyConstraint, TableConstraint};

fn refused(what: &str) -> SqlError {
    SqlError::unsupported(format!(
        "{what} is not supported yet: pgwide would not enforce it as declared"
    ))
}

/// A foreign key as declared, before its names are resolved against the catalog.
pub struct DeclaredForeignKey {
    name: Option<String>,
    columns: Vec<String>,
    parent: String,
    /// Empty: the parent's primary key.
    parent_columns: Vec<String>,
    on_delete: ReferentialAction,
    on_update: ReferentialAction,
    deferrable: bool,
    initially_deferred: bool,
}

/// Reads a `FOREIGN KEY` constraint (`column` for a `REFERENCES` on one column, whose
/// constraint `name` is written before it).
pub fn declared(
    constraint: &ForeignKeyConstraint,
    name: Option<&ast::Ident>,
    column: Option<&ast::Ident>,
) -> SqlResult<DeclaredForeignKey> {
    if matches!(
        constraint.match_kind,
        Some(ast::ConstraintReferenceMatchKind::Full | ast::ConstraintReferenceMatchKind::Partial)
    ) {
        return Err(refused("MATCH FULL or MATCH PARTIAL"));
    }
    let characteristics = constraint.characteristics.unwrap_or_default();
    if characteristics.enforced == Some(false) {
        return Err(refused("a NOT ENFORCED foreign key"));
    }
    let initially_deferred = characteristics.initially == Some(ast::DeferrableInitial::Deferred);
    if initially_deferred && characteristics.deferrable == Some(false) {
        return Err(SqlError::syntax(
            "constraint declared INITIALLY DEFERRED must be DEFERRABLE",
        ));
    }
    let columns = match column {
        Some(column) => vec![fold(column)],
        None => constraint.columns.iter().map(fold).collect(),
    };
    Ok(DeclaredForeignKey {
        name: name.or(constraint.name.as_ref()).map(fold),
        columns,
        parent: table_name(&constraint.foreign_table)?,
        parent_columns: constraint.referred_columns.iter().map(fold).collect(),
        on_delete: action(constraint.on_delete, "ON DELETE")?,
        on_update: action(constraint.on_update, "ON UPDATE")?,
        deferrable: characteristics.deferrable == Some(true) || initially_deferred,
        initially_deferred,
    })
}

fn action(action: Option<ast::ReferentialAction>, clause: &str) -> SqlResult<ReferentialAction> {
    Ok(match action {
        None | Some(ast::ReferentialAction::NoAction) => ReferentialAction::NoAction,
        Some(ast::ReferentialAction::Restrict) => ReferentialAction::Restrict,
        Some(ast::ReferentialAction::Cascade) => ReferentialAction::Cascade,
        Some(ast::ReferentialAction::SetNull) => ReferentialAction::SetNull,
        Some(ast::ReferentialAction::SetDefault) => {
            return Err(refused(&format!("{clause} SET DEFAULT")))
        }
    })
}

/// The foreign keys a CREATE TABLE declares, on its columns and on the table.
pub fn declared_in(create: &CreateTable) -> SqlResult<Vec<DeclaredForeignKey>> {
    super::declared_constraints(
        create,
        |option| match option {
            ColumnOption::ForeignKey(constraint) => Some(constraint),
            _ => None,
        },
        |constraint| match constraint {
            TableConstraint::ForeignKey(constraint) => Some(constraint),
            _ => None,
        },
        declared,
    )
}

/// Adds a declared foreign key to table `table`, checking the rows already there;
/// returns its name.
pub async fn add(
    engine: &Engine,
    instance: &str,
    table: &str,
    declared: DeclaredForeignKey,
) -> SqlResult<String> {
    let child = engine.table(instance, table)?;
    let parent = match declared.parent == child.name {
        true => child.clone(),
        false => engine.table(instance, &declared.parent)?,
    };
    let parent_columns = match declared.parent_columns.is_empty() {
        false => declared.parent_columns,
        true if parent.auto_rowid => {
            return Err(SqlError::new(
                SqlState::InvalidForeignKey,
                format!(
                    "there is no primary key for referenced table \"{}\"",
                    parent.name
                ),
            ))
        }
        true => parent.pk.iter().map(|c| c.name.clone()).collect(),
    };
    if parent_columns.len() != declared.columns.len() {
        return Err(SqlError::new(
            SqlState::InvalidForeignKey,
            "number of referencing and referenced columns for foreign key disagree",
        ));
    }
    for (action, clause) in [
        (declared.on_update, "ON UPDATE"),
        (declared.on_delete, "ON DELETE"),
    ] {
        let rewrites = match action {
            ReferentialAction::SetNull => true,
            ReferentialAction::Cascade => clause == "ON UPDATE",
            _ => false,
        };
        if rewrites && declared.columns.iter().any(|c| child.pk_index(c).is_some()) {
            return Err(refused(&format!(
                "{clause} CASCADE or SET NULL on a foreign key of primary-key columns (a \
                 Table Store row cannot change its key)"
            )));
        }
    }
    let name = match declared.name {
        Some(name) => name,
        None => default_name(&child, &declared.columns),
    };
    let fk = ForeignKeyMeta {
        id: 0,
        name: name.clone(),
        columns: declared.columns,
        parent: parent.name.clone(),
        parent_columns,
        on_delete: declared.on_delete,
        on_update: declared.on_update,
        deferrable: declared.deferrable,
        initially_deferred: declared.initially_deferred,
    };
    engine.add_foreign_key(instance, table, fk).await?;
    Ok(name)
}

/// The name PostgreSQL gives a foreign key it names itself: `<table>_<columns>_fkey`,
/// cut to 63 bytes, numbered while the table has a constraint of that name.
fn default_name(table: &TableMeta, columns: &[String]) -> String {
    let taken = |name: &str| {
        table.foreign_keys.iter().any(|fk| fk.name == name)
            || table.indexes.iter().any(|i| i.name == name)
    };
    let base = format!("{}_{}", table.name, columns.join("_"));
    super::numbered_name(&base, "fkey", taken)
}

/// 2BP01 unless every table with a foreign key to one of `tables` is among them: what
/// DROP TABLE and TRUNCATE without CASCADE require.
pub fn refuse_referenced(
    engine: &Engine,
    instance: &str,
    tables: &[String],
    truncate: bool,
) -> SqlResult<()> {
    for parent in tables {
        let outside = engine
            .referencing(instance, parent)
            .into_iter()
            .find(|(child, _)| !tables.contains(&child.name));
        let Some((child, fk)) = outside else {
            continue;
        };
        return Err(match truncate {
            true => SqlError::new(
                SqlState::FeatureNotSupported,
                format!(
                    "cannot truncate a table referenced in a foreign key constraint: table \
                     \"{}\" references \"{parent}\" (truncate \"{}\" at the same time, or use \
                     TRUNCATE ... CASCADE)",
                    child.name, child.name
                ),
            ),
            false => SqlError::new(
                SqlState::DependentObjectsStillExist,
                format!(
                    "cannot drop table {parent} because other objects depend on it: \
                     constraint {} on table {} depends on table {parent} (use DROP ... \
                     CASCADE to drop the dependent objects too)",
                    fk.name, child.name
                ),
            ),
        });
    }
    Ok(())
}

/// DROP TABLE ... CASCADE: drops the foreign keys other tables have to `tables`.
pub async fn drop_referencing(engine: &Engine, instance: &str, tables: &[String]) -> SqlResult<()> {
    for parent in tables {
        for (child, fk) in engine.referencing(instance, parent) {
            if !tables.contains(&child.name) {
                engine
                    .drop_foreign_key(instance, &child.name, &fk.name)
                    .await?;
            }
        }
    }
    Ok(())
}

/// 2BP01 if a foreign key relies on unique index `index` of table `table` to find its
/// parent rows.
pub fn refuse_index_in_use(engine: &Engine, table: &TableMeta, index: &str) -> SqlResult<()> {
    let Some(meta) = table.indexes.iter().find(|i| i.name == index) else {
        return Ok(());
    };
    for (child, fk) in engine.referencing(&table.instance, &table.name) {
        let mut columns = fk.parent_columns.clone();
        columns.sort();
        let mut indexed = meta.columns.clone();
        indexed.sort();
        let by_pk = {
            let mut pk: Vec<String> = table.pk.iter().map(|c| c.name.clone()).collect();
            pk.sort();
            pk == columns && !table.auto_rowid
        };
        if meta.unique && columns == indexed && !by_pk {
            return Err(SqlError::new(
                SqlState::DependentObjectsStillExist,
                format!(
                    "cannot drop index {index} because constraint {} on table {} requires it",
                    fk.name, child.name
                ),
            ));
        }
    }
    Ok(())
}
