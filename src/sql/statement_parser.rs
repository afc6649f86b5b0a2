//! SQL text into sqlparser statements, in PostgreSQL's dialect, with the spellings
//! sqlparser reads another way rewritten first.

use super::role_statements;
use super::sql_error::{SqlError, SqlResult};
use sqlparser::ast::Statement;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// The statements of `sql`; a syntax error is 42601.
pub(super) fn parse(sql: &str) -> SqlResult<Vec<Statement>> {
    if let Some((rewritten, create_user)) = role_statements::rewrite_user_statements(sql) {
        let mut statements = parse_sql(&rewritten)?;
        if create_user {
            statements
                .iter_mut()
                .for_each(role_statements::default_login);
        }
        return Ok(statements);
    }
    parse_sql(sql)
}

fn parse_sql(sql: &str) -> SqlResult<Vec<Statement>> {
    Parser::parse_sql(&PostgreSqlDialect {}, sql)
        .map_err(|e| SqlError::syntax(e.to_string().replace("sql parser error: ", "")))
}
