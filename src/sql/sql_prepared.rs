//! SQL-level prepared statements: `PREPARE name [(types)] AS statement`, `EXECUTE
//! name [(args)]` and `DEALLOCATE`, as PostgreSQL has them. A statement prepared in SQL
//! is planned exactly as one the extended protocol prepares (and planned again after
//! DDL); `EXECUTE` evaluates its arguments, casts them to the parameters' types as an
//! assignment would, and answers with the prepared statement's own result and tag.
//! The session keeps them by name for its lifetime; `DEALLOCATE` (or `DISCARD ALL`)
//! drops them.

use super::expr::{compile, eval, fold, NoColumns, Params};
use super::sql_types::{self, Datum, OutputColumn, SqlError, SqlResult, SqlType};
use super::values;
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, Statement};
use std::sync::Arc;

/// A planned PREPARE or EXECUTE.
pub(super) enum PreparedCommand {
    Prepare {
        name: String,
        /// The statement's text, planned when the PREPARE runs.
        sql: String,
        /// The declared parameter types (`None` where left to inference).
        types: Vec<Option<SqlType>>,
    },
    Execute {
        name: String,
        args: Vec<ast::Expr>,
        /// The prepared statement's result columns when the EXECUTE was planned.
        columns: Arc<Vec<OutputColumn>>,
    },
}

/// The command `statement` is, if it is a PREPARE or an EXECUTE. `columns_of` gives the
/// result columns of a prepared statement by name (`None`: no such statement).
pub(super) fn plan(
    statement: &Statement,
    columns_of: impl Fn(&str) -> Option<Arc<Vec<OutputColumn>>>,
) -> Option<SqlResult<PreparedCommand>> {
    Some(match statement {
        Statement::Prepare {
            name,
            data_types,
            statement,
        } if !preparable(statement) => Err(SqlError::syntax(format!(
            "PREPARE {name} AS takes a SELECT, VALUES, INSERT, UPDATE or DELETE, not {}",
            first_word(statement)
        ))),
        Statement::Prepare {
            name,
            data_types,
            statement,
        } => data_types
            .iter()
            .map(|t| parameter_type(t).map(Some))
            .collect::<SqlResult<Vec<_>>>()
            .map(|types| PreparedCommand::Prepare {
                name: fold(name),
                sql: statement.to_string(),
                types,
            }),
        Statement::Execute {
            name: Some(name),
            parameters,
            immediate: false,
            into,
            using,
            output: false,
            default: false,
            ..
        } if into.is_empty() && using.is_empty() => {
            let name = match name.0.as_slice() {
                [ast::ObjectNamePart::Identifier(ident)] => fold(ident),
                _ => return Some(Err(SqlError::syntax(format!("bad statement name {name}")))),
            };
            match columns_of(&name) {
                Some(columns) => Ok(PreparedCommand::Execute {
                    name,
                    args: parameters.clone(),
                    columns,
                }),
                None => Err(missing(&name)),
            }
        }
        _ => return None,
    })
}

/// Whether PostgreSQL's grammar lets `statement` be prepared (its PreparableStmt).
fn preparable(statement: &Statement) -> bool {
    matches!(
        statement,
        Statement::Query(_) | Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_)
    )
}

fn first_word(statement: &Statement) -> String {
    let text = statement.to_string();
    text.split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// 26000, as PostgreSQL reports a prepared statement that does not exist.
pub(super) fn missing(name: &str) -> SqlError {
    SqlError::new(
        SqlState::InvalidSqlStatementName,
        format!("prepared statement \"{name}\" does not exist"),
    )
}

/// 42P05, for a PREPARE of a name already taken.
pub(super) fn taken(name: &str) -> SqlError {
    SqlError::new(
        SqlState::DuplicatePreparedStatement,
        format!("prepared statement \"{name}\" already exists"),
    )
}

/// The values of EXECUTE's arguments, each of its parameter's type.
pub(super) fn arguments(
    name: &str,
    args: &[ast::Expr],
    types: &[SqlType],
) -> SqlResult<Vec<Datum>> {
    if args.len() != types.len() {
        return Err(SqlError::syntax(format!(
            "wrong number of parameters for prepared statement \"{name}\" (expected {}, \
             got {})",
            types.len(),
            args.len()
        )));
    }
    args.iter()
        .zip(types)
        .map(|(arg, ty)| {
            let mut params = Params::new(&[]);
            let scalar = compile(arg, &mut NoColumns, &mut params, Some(*ty))?;
            let value = eval(&scalar, &[], &[])?;
            // An untyped literal ('42') is read as the parameter's type, as PostgreSQL
            // reads an unknown-typed constant; anything else is assigned.
            match (&value, arg) {
                (Datum::Text(_), ast::Expr::Value(_)) => values::cast(value, *ty),
                _ => values::assignment(value, *ty),
            }
        })
        .collect()
}

/// A declared parameter type: a column type, or `oid` (`pg_catalog.oid`, as pg_dump
/// declares its prepared statements'), which pgwide's catalog gives as bigint.
fn parameter_type(data_type: &sqlparser::ast::DataType) -> SqlResult<SqlType> {
    match data_type {
        sqlparser::ast::DataType::Custom(name, modifiers)
            if modifiers.is_empty()
                && name
                    .0
                    .last()
                    .and_then(|p| p.as_ident())
                    .is_some_and(|i| i.value.eq_ignore_ascii_case("oid")) =>
        {
            Ok(SqlType::Int8)
        }
        other => sql_types::sql_type(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn statement(sql: &str) -> Statement {
        Parser::parse_sql(&PostgreSqlDialect {}, sql)
            .map(|mut s| s.remove(0))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    #[test]
    fn arguments_take_their_parameters_types() -> SqlResult<()> {
        let Statement::Execute { parameters, .. } = statement("EXECUTE q(1, '2', 'x', 3.5)") else {
            panic!("not an EXECUTE");
        };
        let types = [SqlType::Int8, SqlType::Int4, SqlType::Text, SqlType::Float8];
        let values = arguments("q", &parameters, &types)?;
        assert_eq!(values[1], Datum::Int(2));
        assert_eq!(values[2], Datum::Text("x".into()));
        let wrong = arguments("q", &parameters[..1], &types);
        assert!(matches!(wrong, Err(SqlError::Syntax(_))), "{wrong:?}");
        let bad = arguments("q", &parameters[2..3], &[SqlType::Int8]);
        assert!(bad.is_err(), "'x' read as a bigint: {bad:?}");
        Ok(())
    }

    #[test]
    fn an_execute_of_an_unknown_name_is_26000() {
        let planned = plan(&statement("EXECUTE nosuch"), |_| None);
        assert!(
            matches!(&planned, Some(Err(e)) if e.code() == "26000"),
            "{:?}",
            planned.map(|p| p.map(|_| ()))
        );
        assert!(plan(&statement("SELECT 1"), |_| None).is_none());
        // Only what PostgreSQL's grammar prepares: an EXECUTE inside one could recurse.
        let nested = plan(&statement("PREPARE a AS EXECUTE b"), |_| None);
        assert!(
            matches!(&nested, Some(Err(SqlError::Syntax(_)))),
            "{:?}",
            nested.map(|p| p.map(|_| ()))
        );
    }
}
