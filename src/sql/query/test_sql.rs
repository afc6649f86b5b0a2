//! Test helpers for the modules that rewrite queries before DataFusion plans them: a
//! query parsed as the session parses it, and its text after a rewrite.

use sqlparser::ast::{Query, Statement};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// The one query `sql` holds, parsed with the dialect the session parses queries in.
pub fn query(sql: &str) -> Query {
    match Parser::parse_sql(&PostgreSqlDialect {}, sql)
        .unwrap()
        .pop()
        .unwrap()
    {
        Statement::Query(q) => *q,
        other => panic!("not a query: {other}"),
    }
}

/// `sql` after `rewrite`, as SQL text.
pub fn rewritten(sql: &str, rewrite: fn(&mut Query)) -> String {
    let mut q = query(sql);
    rewrite(&mut q);
    q.to_string()
}
