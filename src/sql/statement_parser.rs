//! SQL text into sqlparser statements, in PostgreSQL's dialect, with the spellings
//! sqlparser reads another way rewritten first.

mod alter_sequence;
mod database_options;
pub(super) mod do_blocks;
mod fetch_spelling;
mod lock_strength;
mod reset_time_zone;
mod sequence_options;
pub(super) mod set_constraints;
mod token_text;
mod user_statements;

use super::role_statements;
use super::sql_error::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
pub(super) use alter_sequence::{carried as carried_alter_sequence, AlterSequence};
pub(super) use database_options::carried_owner_change;
pub(super) use fetch_spelling::MOVE_MARKER;
use sqlparser::ast::{BinaryOperator, Expr, Query, Statement, Visit, Visitor};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser, ParserError};
use std::ops::ControlFlow;

/// The statements of `sql`; a syntax error is 42601.
pub(super) fn parse(sql: &str) -> SqlResult<Vec<Statement>> {
    if let Some((respelled, create_users)) = user_statements::respell(sql) {
        let mut statements = parse(&respelled)?;
        for index in create_users {
            if let Some(statement) = statements.get_mut(index) {
                role_statements::default_login(statement);
            }
        }
        return Ok(statements);
    }
    if let Some(respelled) = do_blocks::respell(sql) {
        let (respelled, marked) = respelled?;
        let mut statements = parse_sql(&respelled)?;
        for index in marked {
            if let Some(statement) = statements.get_mut(index) {
                do_blocks::mark_ignoring_duplicate(statement);
            }
        }
        return Ok(statements);
    }
    if let Some(statements) = alter_sequence::parse(sql) {
        return statements;
    }
    if let Some(respelled) = database_options::respell(sql) {
        return parse_sql(&respelled?);
    }
    if let Some(reordered) = sequence_options::reorder(sql) {
        return parse_sql(&reordered);
    }
    if let Some(fetch) = fetch_spelling::move_as_fetch(sql) {
        let mut statements = parse(&fetch)?;
        statements.iter_mut().for_each(fetch_spelling::mark_move);
        return Ok(statements);
    }
    if let Some(respelled) = fetch_spelling::respell(sql) {
        return parse_sql(&respelled);
    }
    if let Some(respelled) = set_constraints::respell(sql) {
        return parse_sql(&respelled);
    }
    match parse_sql(sql) {
        // Tokenized again only when sqlparser refused a lock strength.
        Err(e) if e.message().contains("one of UPDATE or SHARE") => {
            match lock_strength::respell(sql) {
                Some(respelled) => parse_sql(&respelled),
                None => Err(e),
            }
        }
        // Tokenized again only when sqlparser stopped at a ZONE.
        Err(e) if e.message().contains("found: ZONE") => match reset_time_zone::respell(sql) {
            Some(respelled) => parse_sql(&respelled),
            None => Err(e),
        },
        parsed => parsed,
    }
}

/// How deeply expressions and queries may nest, in sqlparser's count (one per
/// parenthesis, about two per nested subquery or OR). sqlparser's default of 50 refused
/// WHERE clauses PostgreSQL plans. Parsing, compiling and planning recurse per level:
/// 100 fits a 2 MiB stack in a debug build (the server's threads have 16 MiB,
/// `server::THREAD_STACK_BYTES`), where 150 did not.
pub const MAX_NESTING: usize = 100;

/// How deeply queries may nest inside one another (subqueries, derived tables, CTEs).
/// DataFusion's optimizer takes about twice as long for each level past a dozen and
/// cannot be interrupted meanwhile: 20 levels took 1 s in a release build, 23 took 8 s.
/// At 16 a statement plans in a tenth of a second; queries applications send nest a
/// handful of levels.
pub const MAX_QUERY_NESTING: usize = 16;

/// How deeply an expression's operations may nest (`a + b + c` is two levels: operators
/// chain without parentheses, so sqlparser's count does not see them). Compiling and
/// planning recurse per level: a chain of some thousands of terms overflowed an 8 MiB
/// stack in a release build (found by the fuzzer); 400 fits the server's threads with
/// room to spare, and PostgreSQL's own limit (`max_stack_depth`) is also 54001.
pub const MAX_EXPRESSION_DEPTH: usize = 400;

fn parse_sql(sql: &str) -> SqlResult<Vec<Statement>> {
    let statements = parse_unchecked(sql)?;
    for statement in &statements {
        refuse_what_postgres_would(statement)?;
    }
    Ok(statements)
}

/// What PostgreSQL's grammar refuses and sqlparser's accepts: queries nested more than
/// `MAX_QUERY_NESTING` deep and expressions more than `MAX_EXPRESSION_DEPTH` (54001),
/// and a comparison whose operand is an unparenthesized comparison (`a = b = c`, 42601:
/// the comparison operators do not associate).
fn refuse_what_postgres_would(statement: &Statement) -> SqlResult<()> {
    struct Checks {
        depth: usize,
        expression_depth: usize,
        too_deep: bool,
        chained: Option<BinaryOperator>,
    }
    impl Visitor for Checks {
        type Break = ();
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth += 1;
            match self.depth > MAX_QUERY_NESTING {
                true => ControlFlow::Break(()),
                false => ControlFlow::Continue(()),
            }
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
            self.expression_depth += 1;
            if self.expression_depth > MAX_EXPRESSION_DEPTH {
                self.too_deep = true;
                return ControlFlow::Break(());
            }
            if let Expr::BinaryOp { left, op, right } = expr {
                let comparison =
                    |e: &Expr| matches!(e, Expr::BinaryOp { op, .. } if is_comparison(op));
                if is_comparison(op) && (comparison(left) || comparison(right)) {
                    self.chained = Some(op.clone());
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
            self.expression_depth -= 1;
            ControlFlow::Continue(())
        }
    }
    let mut checks = Checks {
        depth: 0,
        expression_depth: 0,
        too_deep: false,
        chained: None,
    };
    match (statement.visit(&mut checks), checks.chained) {
        (ControlFlow::Break(()), Some(op)) => Err(SqlError::syntax(format!(
            "syntax error at or near \"{op}\""
        ))),
        (ControlFlow::Break(()), None) if checks.too_deep => Err(SqlError::new(
            SqlState::StatementTooComplex,
            format!(
                "stack depth limit exceeded: an expression nests more than \
                 {MAX_EXPRESSION_DEPTH} operations deep"
            ),
        )),
        (ControlFlow::Break(()), None) => Err(SqlError::new(
            SqlState::StatementTooComplex,
            format!(
                "statement too complex: queries nest more than {MAX_QUERY_NESTING} levels deep"
            ),
        )),
        (ControlFlow::Continue(()), _) => Ok(()),
    }
}

fn is_comparison(op: &BinaryOperator) -> bool {
    use BinaryOperator::*;
    matches!(op, Eq | NotEq | Lt | LtEq | Gt | GtEq)
}

fn parse_unchecked(sql: &str) -> SqlResult<Vec<Statement>> {
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
