//! CREATE INDEX and DROP INDEX, and the unique indexes behind `UNIQUE` constraints:
//! secondary indexes of the engine (`engine::index`), kept in the same atomic batch as
//! their rows. What an index would declare that pgwide does not do (an expression, a
//! partial index, INCLUDE, another access method) is refused rather than ignored.

use super::table_name;
use crate::engine::{Engine, EngineError, IndexSpec, TableMeta};
use crate::sql::expr::fold;
use crate::sql::sql_types::{SqlError, SqlResult, SqlType};
use crate::sql::values::declared_type;
use crate::sqlstate::SqlState;
use sqlparser::ast::{
    self, ColumnOption, CreateIndex, CreateTable, Expr, NullsDistinctOption, ObjectName,
    TableConstraint, UniqueConstraint,
};

/// Operator classes whose equality is the type's own: the index finds what `=` finds.
/// (Django declares `varchar_pattern_ops` beside each indexed text column.)
const OPERATOR_CLASSES: &[&str] = &[
    "text_ops",
    "varchar_ops",
    "bpchar_ops",
    "int2_ops",
    "int4_ops",
    "int8_ops",
    "text_pattern_ops",
    "varchar_pattern_ops",
    "bpchar_pattern_ops",
];

fn refused(what: &str) -> SqlError {
    SqlError::unsupported(format!(
        "{what} is not supported yet: pgwide indexes columns' values, by equality and order"
    ))
}

/// Runs `CREATE [UNIQUE] INDEX [CONCURRENTLY] [IF NOT EXISTS] [name] ON t [USING btree]
/// (column [opclass] [ASC | DESC] [NULLS FIRST | LAST], ...)`; returns the name of the
/// index it made, `None` when IF NOT EXISTS found one.
pub async fn create(
    engine: &Engine,
    instance: &str,
    create: &CreateIndex,
) -> SqlResult<Option<String>> {
    if let Some(using) = &create.using {
        let method = using.to_string().to_lowercase();
        if method != "btree" && method != "hash" {
            return Err(refused(&format!("an index USING {method}")));
        }
    }
    if create.predicate.is_some() {
        return Err(refused("a partial index (CREATE INDEX ... WHERE)"));
    }
    if !create.include.is_empty() {
        return Err(refused("INCLUDE in an index"));
    }
    if create.nulls_distinct == Some(false) {
        return Err(refused("NULLS NOT DISTINCT"));
    }
    if !create.with.is_empty()
        || !create.index_options.is_empty()
        || !create.alter_options.is_empty()
    {
        return Err(refused("an index's storage options"));
    }
    let table = table_name(&create.table_name)?;
    let meta = engine.table(instance, &table)?;
    let mut columns = Vec::with_capacity(create.columns.len());
    for column in &create.columns {
        let name = match &column.column.expr {
            Expr::Identifier(ident) => fold(ident),
            other => return Err(refused(&format!("an index on the expression {other}"))),
        };
        if let Some(class) = &column.operator_class {
            let class = fold_name(class);
            if !OPERATOR_CLASSES.contains(&class.as_str()) {
                return Err(refused(&format!("the operator class {class}")));
            }
        }
        columns.push(name);
    }
    check_columns(&meta, &columns, create.unique)?;
    let name = match &create.name {
        Some(name) => index_name(name)?,
        None => default_name(engine, instance, &table, &columns, "idx"),
    };
    let spec = IndexSpec {
        name: name.clone(),
        columns,
        unique: create.unique,
        constraint: false,
    };
    match engine.create_index(instance, &table, spec).await {
        Err(EngineError::TableExists { .. }) if create.if_not_exists => Ok(None),
        other => other.map(|_| Some(name)).map_err(SqlError::from),
    }
}

/// Refuses columns an index cannot take: one the table lacks (42703), and for a
/// unique index, a type whose stored form is not one per value, so that equal values
/// could be stored apart (a `jsonb`'s `1.0` and `1`, an interval's `1 mon` and `30
/// days`).
fn check_columns(table: &TableMeta, columns: &[String], unique: bool) -> SqlResult<()> {
    for column in columns {
        let Some(ty) = declared_type(table, column) else {
            return Err(SqlError::new(
                SqlState::UndefinedColumn,
                format!("column \"{column}\" does not exist"),
            ));
        };
        match ty {
            SqlType::Json => {
                return Err(SqlError::new(
                    SqlState::UndefinedObject,
                    "data type json has no default operator class for access method \"btree\"",
                ))
            }
            SqlType::Jsonb | SqlType::Interval | SqlType::Array(_) if unique => {
                return Err(refused(&format!(
                    "a unique index on a column of type {}",
                    ty.name()
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Runs `DROP INDEX [IF EXISTS] name, ...`.
pub async fn drop(
    engine: &Engine,
    instance: &str,
    if_exists: bool,
    names: &[ObjectName],
) -> SqlResult<()> {
    for name in names {
        let name = index_name(name)?;
        if let Some((table, index)) = engine.index(instance, &name) {
            super::foreign_keys::refuse_index_in_use(engine, &table, &name)?;
            if index.constraint {
                return Err(SqlError::new(
                    SqlState::DependentObjectsStillExist,
                    format!(
                        "cannot drop index {name} because constraint {name} on table {} \
                         requires it",
                        table.name
                    ),
                ));
            }
        }
        match engine.drop_index(instance, &name).await {
            Err(EngineError::IndexNotFound { .. }) if if_exists => {}
            other => other?,
        }
    }
    Ok(())
}

/// `ALTER TABLE t DROP CONSTRAINT [IF EXISTS] name`: a `UNIQUE` constraint goes with
/// its index; the primary key cannot go (a Table Store table is keyed by it).
pub async fn drop_constraint(
    engine: &Engine,
    instance: &str,
    table: &str,
    name: &ast::Ident,
    if_exists: bool,
) -> SqlResult<()> {
    let name = fold(name);
    let meta = engine.table(instance, table)?;
    if name == crate::sql::pg_catalog::pkey_name(&meta) {
        return Err(SqlError::unsupported(format!(
            "dropping the primary key \"{name}\" is not supported: a Table Store table is \
             stored by its key"
        )));
    }
    if meta.foreign_keys.iter().any(|fk| fk.name == name) {
        return Ok(engine.drop_foreign_key(instance, table, &name).await?);
    }
    if meta.checks.iter().any(|c| c.name == name) {
        return Ok(engine.drop_check(instance, table, &name).await?);
    }
    match meta.indexes.iter().find(|i| i.constraint && i.name == name) {
        Some(_) => {
            super::foreign_keys::refuse_index_in_use(engine, &meta, &name)?;
            Ok(engine.drop_index(instance, &name).await?)
        }
        None if if_exists => Ok(()),
        None => Err(SqlError::new(
            SqlState::UndefinedObject,
            format!("constraint \"{name}\" of relation \"{table}\" does not exist"),
        )),
    }
}

/// An index name, in `public` or unqualified as a table name is.
fn index_name(name: &ObjectName) -> SqlResult<String> {
    table_name(name).map_err(|_| {
        SqlError::new(
            SqlState::UndefinedObject,
            format!("index \"{name}\" does not exist"),
        )
    })
}

fn fold_name(name: &ObjectName) -> String {
    name.0
        .last()
        .and_then(|part| part.as_ident())
        .map(fold)
        .unwrap_or_else(|| name.to_string().to_lowercase())
}

/// The name PostgreSQL gives an index it names itself: the table, the columns and
/// `suffix` joined by `_` (`users_email_key`), cut to 63 bytes, and a number added
/// while the name is taken.
pub fn default_name(
    engine: &Engine,
    instance: &str,
    table: &str,
    columns: &[String],
    suffix: &str,
) -> String {
    let taken = |name: &str| {
        engine.table(instance, name).is_ok()
            || engine.sequence(instance, name).is_ok()
            || engine.index(instance, name).is_some()
    };
    super::numbered_name(&format!("{table}_{}", columns.join("_")), suffix, taken)
}

/// Creates the unique index a `UNIQUE` constraint stands for, named as given, else as
/// PostgreSQL names it (`<table>_<columns>_key`); returns its name.
pub async fn create_unique_constraint(
    engine: &Engine,
    instance: &str,
    table: &str,
    unique: UniqueColumns,
) -> SqlResult<String> {
    let meta = engine.table(instance, table)?;
    check_columns(&meta, &unique.columns, true)?;
    let name = match &unique.name {
        Some(name) => fold(name),
        None => default_name(engine, instance, table, &unique.columns, "key"),
    };
    let spec = IndexSpec {
        name: name.clone(),
        columns: unique.columns,
        unique: true,
        constraint: true,
    };
    engine.create_index(instance, table, spec).await?;
    Ok(name)
}

/// A `UNIQUE` constraint pgwide enforces: its name if given, and its columns.
pub struct UniqueColumns {
    pub name: Option<ast::Ident>,
    pub columns: Vec<String>,
}

/// The columns of a `UNIQUE` constraint (`column` for one written on a column),
/// refusing what pgwide would not enforce as declared: `DEFERRABLE` (checked at
/// COMMIT), `NULLS NOT DISTINCT`, index options.
pub fn unique_columns(
    constraint: &UniqueConstraint,
    name: Option<&ast::Ident>,
    column: Option<&ast::Ident>,
) -> SqlResult<UniqueColumns> {
    if constraint
        .characteristics
        .as_ref()
        .is_some_and(|c| c.deferrable == Some(true) || c.enforced == Some(false))
    {
        return Err(refused("a DEFERRABLE or NOT ENFORCED UNIQUE constraint"));
    }
    if constraint.nulls_distinct == NullsDistinctOption::NotDistinct {
        return Err(refused("NULLS NOT DISTINCT"));
    }
    if !constraint.index_options.is_empty() {
        return Err(refused("a UNIQUE constraint's index options"));
    }
    let mut columns = Vec::new();
    for part in &constraint.columns {
        match &part.column.expr {
            Expr::Identifier(ident) => columns.push(fold(ident)),
            other => return Err(refused(&format!("a UNIQUE constraint on {other}"))),
        }
    }
    if let Some(column) = column {
        columns = vec![fold(column)];
    }
    Ok(UniqueColumns {
        name: name.or(constraint.name.as_ref()).cloned(),
        columns,
    })
}

/// The `UNIQUE` constraints of a CREATE TABLE, on its columns and on the table.
pub fn unique_constraints(create: &CreateTable) -> SqlResult<Vec<UniqueColumns>> {
    super::declared_constraints(
        create,
        |option| match option {
            ColumnOption::Unique(constraint) => Some(constraint),
            _ => None,
        },
        |constraint| match constraint {
            TableConstraint::Unique(constraint) => Some(constraint),
            _ => None,
        },
        unique_columns,
    )
}
