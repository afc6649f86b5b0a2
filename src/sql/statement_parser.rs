//! SQL text into sqlparser statements, in PostgreSQL's dialect, with the spellings
//! sqlparser reads another way rewritten first.

use super::role_statements;
use super::sql_error::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use sqlparser::ast::Statement;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser, ParserError};

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

/// How deeply expressions and queries may nest, in sqlparser's count (one per
/// parenthesis, about two per nested subquery or OR). sqlparser's default of 50 refused
/// WHERE clauses PostgreSQL plans. Parsing, compiling and planning recurse per level:
/// 100 fits a 2 MiB stack in a debug build (the server's threads have 16 MiB,
/// `server::THREAD_STACK_BYTES`), where 150 did not.
pub const MAX_NESTING: usize = 100;

fn parse_sql(sql: &str) -> SqlResult<Vec<Statement>> {
    let dialect = PostgreSqlDialect {};
    Parser::new(&dialect)
        .with_recursion_limit(MAX_NESTING)
        .try_with_sql(sql)
        .and_then(|mut parser| parser.parse_statements())
        .map_err(|e| match e {
            ParserError::RecursionLimitExceeded => SqlError::new(
                SqlState::StatementTooComplex,
                format!("stack depth limit exceeded: the statement nests more than {MAX_NESTING} levels deep"),
            ),
            other => SqlError::syntax(other.to_string().replace("sql parser error: ", "")),
        })
}
