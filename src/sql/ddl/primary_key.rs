//! Primary-key constraints: `PRIMARY KEY (a, b)` in CREATE TABLE, and `ALTER TABLE t
//! ADD [CONSTRAINT t_pkey] PRIMARY KEY (a, b)` on a table created without one, whose
//! rows `Engine::add_primary_key` re-keys (pg_dump writes every primary key that way,
//! after the table's COPY). The catalog keeps the key's constraint name (Alembic names
//! its version table's key `alembic_version_pkc`), else shows PostgreSQL's default,
//! `<table>_pkey`; it keeps no index options, so DEFERRABLE or an index option, which
//! would be accepted and then ignored, is refused (0A000).

use super::{table_name, time_precision_refusal};
use crate::engine::{Engine, EngineError, PkColumn};
use crate::sql::expr::fold;
use crate::sql::sql_types::{SqlError, SqlResult};
use crate::sql::values::{declared_type, sql_pk_type};
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, Expr, PrimaryKeyConstraint};

/// The columns of primary key `constraint` of table `table`, and its name if it was
/// given one other than PostgreSQL's default, after refusing what the catalog would
/// not keep. `name` is the constraint's name when it is written before a column's
/// `PRIMARY KEY` (`a int CONSTRAINT a_key PRIMARY KEY`).
pub fn key_columns(
    constraint: &PrimaryKeyConstraint,
    name: Option<&ast::Ident>,
    table: &str,
) -> SqlResult<(Option<String>, Vec<String>)> {
    let refused = |what: &str| {
        SqlError::unsupported(format!(
            "{what} is not supported: pgwide keeps no such thing for a primary key"
        ))
    };
    let name = name
        .or(constraint.name.as_ref())
        .map(fold)
        .filter(|name| *name != format!("{table}_pkey"));
    if constraint
        .characteristics
        .as_ref()
        .is_some_and(|c| c.deferrable == Some(true) || c.enforced == Some(false))
    {
        return Err(refused("a DEFERRABLE or NOT ENFORCED primary key"));
    }
    if constraint.index_name.is_some()
        || constraint.index_type.is_some()
        || !constraint.index_options.is_empty()
    {
        return Err(refused("a primary key's index name, type or options"));
    }
    let mut columns: Vec<String> = Vec::new();
    for part in &constraint.columns {
        let column = match &part.column.expr {
            Expr::Identifier(ident) => fold(ident),
            other => {
                return Err(SqlError::syntax(format!(
                    "primary key column {other} must be a column name"
                )))
            }
        };
        if columns.contains(&column) {
            return Err(SqlError::new(
                SqlState::DuplicateColumn,
                format!("column \"{column}\" appears twice in primary key constraint"),
            ));
        }
        columns.push(column);
    }
    Ok((name, columns))
}

/// `ALTER TABLE table ADD PRIMARY KEY (...)`.
pub async fn add(
    engine: &Engine,
    instance: &str,
    table: &ast::ObjectName,
    constraint: &PrimaryKeyConstraint,
) -> SqlResult<()> {
    let name = table_name(table)?;
    let meta = engine.table(instance, &name)?;
    if !meta.auto_rowid {
        return Err(EngineError::PrimaryKeyExists { table: name }.into());
    }
    let (constraint_name, columns) = key_columns(constraint, None, &name)?;
    let mut key = Vec::new();
    for column in columns {
        let ty = declared_type(&meta, &column).ok_or_else(|| {
            SqlError::new(
                SqlState::UndefinedColumn,
                format!("column \"{column}\" named in key does not exist"),
            )
        })?;
        let pk_type = sql_pk_type(ty).ok_or_else(|| {
            SqlError::new(
                SqlState::DatatypeMismatch,
                format!(
                    "primary key column \"{column}\" has type {}: a key column must be an \
                     integer, text, bytea, uuid, date, time or timestamp",
                    ty.name()
                ),
            )
        })?;
        if meta.time_precision(&column).is_some() {
            return Err(time_precision_refusal(ty.name()));
        }
        key.push(PkColumn {
            name: column,
            ty: pk_type,
        });
    }
    engine
        .add_primary_key(instance, &name, key, constraint_name)
        .await?;
    Ok(())
}
