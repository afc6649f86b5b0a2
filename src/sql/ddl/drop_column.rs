//! `ALTER TABLE t DROP [COLUMN] [IF EXISTS] c [CASCADE | RESTRICT]`: what depends on
//! the column goes with it, as in PostgreSQL (its indexes and unique constraints, the
//! table's foreign keys and CHECK constraints on it, the sequence a SERIAL column
//! owns), a foreign key of another table referencing it only with CASCADE (2BP01
//! otherwise); then the column leaves the table (`Engine::hide_column`). Its cells are
//! deleted by the caller: at once, or at COMMIT in a transaction block.

use super::foreign_keys::refuse_index_in_use;
use crate::engine::{Engine, TableMeta};
use crate::sql::expr::fold;
use crate::sql::sql_types::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, Expr};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

/// A column dropped from a table's metadata whose cells are still to be deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedColumn {
    pub table: String,
    pub column: String,
}

/// Drops column `column` of table `table`; `None` if IF EXISTS found none.
pub async fn drop(
    engine: &Engine,
    instance: &str,
    table: &str,
    column: &ast::Ident,
    if_exists: bool,
    cascade: bool,
) -> SqlResult<Option<DroppedColumn>> {
    let column = fold(column);
    let meta = engine.table(instance, table)?;
    if meta.pk_index(&column).is_some() {
        return Err(SqlError::unsupported(format!(
            "dropping the primary-key column \"{column}\" is not supported: a Table Store \
             row is stored by its key"
        )));
    }
    if meta.column(&column).is_none() {
        return match if_exists {
            true => Ok(None),
            false => Err(SqlError::new(
                SqlState::UndefinedColumn,
                format!("column \"{column}\" of relation \"{table}\" does not exist"),
            )),
        };
    }
    for (child, fk) in engine.referencing(instance, table) {
        if child.name == meta.name || !fk.parent_columns.contains(&column) {
            continue;
        }
        if !cascade {
            return Err(SqlError::new(
                SqlState::DependentObjectsStillExist,
                format!(
                    "cannot drop column {column} of table {table} because other objects \
                     depend on it: constraint {} on table {} depends on it (use DROP ... \
                     CASCADE to drop the dependent objects too)",
                    fk.name, child.name
                ),
            ));
        }
        engine
            .drop_foreign_key(instance, &child.name, &fk.name)
            .await?;
    }
    let meta = engine.table(instance, table)?;
    for fk in &meta.foreign_keys {
        if fk.columns.contains(&column)
            || (fk.parent == meta.name && fk.parent_columns.contains(&column))
        {
            engine.drop_foreign_key(instance, table, &fk.name).await?;
        }
    }
    for check in &meta.checks {
        if reads_column(&check.expression, &column) {
            engine.drop_check(instance, table, &check.name).await?;
        }
    }
    let meta = engine.table(instance, table)?;
    for index in indexes_on(&meta, &column) {
        refuse_index_in_use(engine, &meta, &index)?;
        engine.drop_index(instance, &index).await?;
    }
    // The column's generator, and any sequence made its own with OWNED BY.
    let owner = Some((meta.name.clone(), column.clone()));
    let mut sequences: Vec<String> = engine
        .sequences(instance)
        .into_iter()
        .filter(|s| s.spec.owner == owner)
        .map(|s| s.spec.name.clone())
        .collect();
    if let Some(generated) = meta.generated.get(&column) {
        if !sequences.contains(&generated.sequence) {
            sequences.push(generated.sequence.clone());
        }
    }
    engine.hide_column(instance, table, &column).await?;
    for sequence in sequences {
        engine.drop_sequence(instance, &sequence).await?;
    }
    Ok(Some(DroppedColumn {
        table: meta.name.clone(),
        column,
    }))
}

/// The indexes of `table` that include `column`.
pub fn indexes_on(table: &TableMeta, column: &str) -> Vec<String> {
    table
        .indexes
        .iter()
        .filter(|i| i.columns.iter().any(|c| c == column))
        .map(|i| i.name.clone())
        .collect()
}

/// Whether SQL condition `expression` reads `column`.
fn reads_column(expression: &str, column: &str) -> bool {
    let Ok(parsed) = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(expression)
        .and_then(|mut parser| parser.parse_expr())
    else {
        return false;
    };
    let mut reads = false;
    let _ = ast::visit_expressions(&parsed, |e| {
        if let Expr::Identifier(ident) = e {
            reads |= fold(ident) == column;
        }
        ControlFlow::<()>::Continue(())
    });
    reads
}
