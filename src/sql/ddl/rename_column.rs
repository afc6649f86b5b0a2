//! `ALTER TABLE t RENAME [COLUMN] a TO b`: the engine renames the column wherever
//! the catalog names it and moves its cells (`Engine::rename_column`); the table's
//! CHECK conditions, kept as SQL text, are rewritten here to name `b`.

use crate::engine::{CheckMeta, Engine, EngineError};
use crate::sql::expr::{fold, quote_ident};
use crate::sql::sql_types::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, Expr};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

/// Renames column `old` of `table` to `new`.
pub async fn rename_column(
    engine: &Engine,
    instance: &str,
    table: &str,
    old: &str,
    new: &str,
) -> SqlResult<()> {
    let meta = engine.table(instance, table)?;
    // The hidden key of a table declared without one is no column of its.
    if meta.auto_rowid && meta.pk_index(old).is_some() {
        return Err(SqlError::new(
            SqlState::UndefinedColumn,
            format!("column \"{old}\" does not exist"),
        ));
    }
    let checks = meta
        .checks
        .iter()
        .map(|check| {
            Ok(CheckMeta {
                expression: renamed_in(&check.expression, old, new)?,
                ..check.clone()
            })
        })
        .collect::<SqlResult<Vec<_>>>()?;
    match engine
        .rename_column(instance, table, old, new, checks)
        .await
    {
        Ok(_) => Ok(()),
        Err(EngineError::NoSuchColumn { column, .. }) => Err(SqlError::new(
            SqlState::UndefinedColumn,
            format!("column \"{column}\" does not exist"),
        )),
        Err(EngineError::ColumnExists { name }) => Err(SqlError::new(
            SqlState::DuplicateColumn,
            format!("column \"{name}\" of relation \"{table}\" already exists"),
        )),
        Err(e) => Err(e.into()),
    }
}

/// A CHECK condition's SQL with column `old` named `new`. A condition names only its
/// own table's columns, bare or qualified by the table's name.
fn renamed_in(expression: &str, old: &str, new: &str) -> SqlResult<String> {
    let mut parsed = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(expression)
        .and_then(|mut parser| parser.parse_expr())
        .map_err(|e| SqlError::internal(format!("a stored CHECK condition: {e}")))?;
    let renamed = |ident: &mut ast::Ident| {
        if fold(ident) == old {
            *ident = match quote_ident(new).starts_with('"') {
                true => ast::Ident::with_quote('"', new),
                false => ast::Ident::new(new),
            };
        }
    };
    let _ = ast::visit_expressions_mut(&mut parsed, |expr| {
        match expr {
            Expr::Identifier(ident) => renamed(ident),
            Expr::CompoundIdentifier(parts) => {
                if let Some(last) = parts.last_mut() {
                    renamed(last);
                }
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(parsed.to_string())
}

#[cfg(test)]
mod tests {
    use super::renamed_in;
    use crate::sql::sql_types::SqlResult;

    #[test]
    fn conditions_name_the_new_column() -> SqlResult<()> {
        assert_eq!(
            renamed_in("price > 0 AND t.price < cost", "price", "amount")?,
            "amount > 0 AND t.amount < cost"
        );
        assert_eq!(
            renamed_in("\"Price\" > 0", "Price", "New Price")?,
            "\"New Price\" > 0"
        );
        assert_eq!(
            renamed_in("length(name) > 2", "price", "amount")?,
            "length(name) > 2"
        );
        Ok(())
    }
}
