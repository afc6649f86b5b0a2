//! INSERT (with VALUES or a SELECT), UPDATE and DELETE: planned by `dml` into Table
//! Store writes, which go to the open transaction block's staged writes or straight
//! to the engine; and TRUNCATE (`truncate_statement`).

use super::ddl;
use super::dml::{self, DeletePlan, InsertPlan, UpdatePlan};
use super::expr::Params;
use super::queried_writes::{beyond_fast_path, QueriedWrite};
use super::read_statements::{plan_query, SelectStatement};
use super::session_state::SessionState;
use super::sql_types::{Datum, OutputColumn, SqlError, SqlResult, StatementResult};
use super::statement_handler::{Claim, StatementHandler};
use super::truncate_statement::TruncatePlan;
use super::values::declared_type;
use crate::auth::Privilege;
use crate::engine::TableMeta;
use sqlparser::ast::{self, Statement};
use std::sync::Arc;

/// The handler of INSERT, UPDATE and DELETE.
pub(super) struct Writes;

/// A planned write.
pub(super) enum WriteStatement {
    Insert(InsertPlan),
    /// `INSERT ... SELECT`: the query's rows are read first, then written atomically.
    InsertSelect(InsertPlan, SelectStatement),
    Update(UpdatePlan),
    Delete(DeletePlan),
    /// An UPDATE or DELETE beyond the fast path, whose rows a query computes.
    Queried(QueriedWrite),
    Truncate(TruncatePlan),
}

impl StatementHandler for Writes {
    type Plan = WriteStatement;

    fn writes(plan: &WriteStatement) -> Option<&'static str> {
        Some(match plan {
            WriteStatement::Insert(_) | WriteStatement::InsertSelect(..) => "INSERT",
            WriteStatement::Update(_) => "UPDATE",
            WriteStatement::Delete(_) => "DELETE",
            WriteStatement::Queried(queried) => queried.command(),
            WriteStatement::Truncate(_) => "TRUNCATE TABLE",
        })
    }

    fn plan(
        state: &SessionState,
        statement: Box<Statement>,
        params: &mut Params,
    ) -> Claim<WriteStatement> {
        let (engine, instance) = (&state.engine, state.instance.as_str());
        Claim::Planned(match *statement {
            Statement::Insert(insert) => plan_insert(state, &insert, params),
            Statement::Update(update) => {
                let before = params.clone();
                match dml::plan_update(engine, instance, &update, params) {
                    Ok(plan) => Ok(WriteStatement::Update(plan)),
                    Err(fast) => queried(fast, params, before, |params| {
                        QueriedWrite::plan_update(state, &update, params)
                    }),
                }
            }
            Statement::Delete(delete) => {
                let before = params.clone();
                match dml::plan_delete(engine, instance, &delete, params) {
                    Ok(plan) => Ok(WriteStatement::Delete(plan)),
                    Err(fast) => queried(fast, params, before, |params| {
                        QueriedWrite::plan_delete(state, &delete, params)
                    }),
                }
            }
            Statement::Truncate(truncate) => {
                TruncatePlan::plan(state, &truncate).map(WriteStatement::Truncate)
            }
            _ => return Claim::NotMine(statement),
        })
    }

    fn columns(plan: &WriteStatement) -> Arc<Vec<OutputColumn>> {
        match plan {
            WriteStatement::Insert(p) | WriteStatement::InsertSelect(p, _) => p.columns(),
            WriteStatement::Update(p) => p.columns(),
            WriteStatement::Delete(p) => p.columns(),
            WriteStatement::Queried(p) => p.columns(),
            WriteStatement::Truncate(_) => Arc::new(Vec::new()),
        }
    }

    fn authorize(state: &SessionState, plan: &WriteStatement) -> SqlResult<()> {
        if state.access.unrestricted() {
            return Ok(());
        }
        let check = |table: &TableMeta, privilege| -> SqlResult<()> {
            Ok(state.access.check_table(table, privilege)?)
        };
        match plan {
            WriteStatement::Insert(p) => {
                check(p.table(), Privilege::Insert)?;
                if p.may_update() {
                    check(p.table(), Privilege::Update)?;
                }
                if p.returns_rows() {
                    check(p.table(), Privilege::Select)?;
                }
                Ok(())
            }
            WriteStatement::InsertSelect(p, select) => {
                check(p.table(), Privilege::Insert)?;
                select.authorize(state)
            }
            WriteStatement::Update(p) => {
                check(p.table(), Privilege::Update)?;
                if p.reads_rows() {
                    check(p.table(), Privilege::Select)?;
                }
                Ok(())
            }
            WriteStatement::Delete(p) => {
                check(p.table(), Privilege::Delete)?;
                if p.reads_rows() {
                    check(p.table(), Privilege::Select)?;
                }
                Ok(())
            }
            WriteStatement::Queried(p) => {
                let privilege = match p.is_update() {
                    true => Privilege::Update,
                    false => Privilege::Delete,
                };
                check(p.table(), privilege)?;
                p.authorize(state)
            }
            // PostgreSQL's own TRUNCATE privilege is DELETE's here: both remove rows.
            WriteStatement::Truncate(p) => p
                .tables()
                .iter()
                .try_for_each(|table| check(table, Privilege::Delete)),
        }
    }

    fn cacheable(plan: &WriteStatement) -> bool {
        !matches!(
            plan,
            WriteStatement::InsertSelect(..)
                | WriteStatement::Queried(_)
                | WriteStatement::Truncate(_)
        )
    }

    async fn execute(
        state: &mut SessionState,
        plan: &WriteStatement,
        params: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        match plan {
            WriteStatement::Insert(p) => {
                dml::execute_insert(&mut state.write_target(), p, &params).await
            }
            WriteStatement::InsertSelect(p, select) => {
                let rows = select.read_all(state, params.clone()).await?;
                dml::execute_insert_rows(&mut state.write_target(), p, rows, &params).await
            }
            WriteStatement::Update(p) => {
                dml::execute_update(&mut state.write_target(), p, &params).await
            }
            WriteStatement::Delete(p) => {
                dml::execute_delete(&mut state.write_target(), p, &params).await
            }
            WriteStatement::Queried(p) => p.execute(state, params).await,
            WriteStatement::Truncate(p) => p.execute(state).await,
        }
    }
}

/// A statement the fast path could not plan (`fast`), planned by `plan_queried` from
/// the parameters as they were before (`before`) when only an expression was beyond
/// the fast path. If that fails too for want of a feature, the fast path's reason is
/// the one reported.
fn queried(
    fast: SqlError,
    params: &mut Params,
    before: Params,
    plan_queried: impl FnOnce(&mut Params) -> SqlResult<QueriedWrite>,
) -> SqlResult<WriteStatement> {
    if !beyond_fast_path(&fast) {
        return Err(fast);
    }
    *params = before;
    match plan_queried(params) {
        Ok(plan) => Ok(WriteStatement::Queried(plan)),
        Err(SqlError::Unsupported(_)) => Err(fast),
        Err(other) => Err(other),
    }
}

/// INSERT ... VALUES, or INSERT ... SELECT with as many columns as targets. VALUES
/// holding an expression beyond the fast path (`repeat('x', 3)`, `now()`) are
/// planned as the query `SELECT * FROM (VALUES ...)`.
fn plan_insert(
    state: &SessionState,
    insert: &ast::Insert,
    params: &mut Params,
) -> SqlResult<WriteStatement> {
    // The columns' DEFAULTs, written into the statement (`ddl::defaults`).
    let table = match &insert.table {
        ast::TableObject::TableName(name) => state
            .engine
            .table(&state.instance, &ddl::table_name(name)?)
            .ok(),
        _ => None,
    };
    if let Some(filled) = table
        .as_ref()
        .map(|table| ddl::defaults::fill_insert(insert, table))
        .transpose()?
        .flatten()
    {
        return plan_insert(state, &filled, params);
    }
    let before = params.clone();
    let plan = match dml::plan_insert(&state.engine, &state.instance, insert, params) {
        Ok(plan) => plan,
        Err(fast) => {
            let values_query = insert.source.as_deref().filter(|source| {
                matches!(*source.body, ast::SetExpr::Values(_)) && beyond_fast_path(&fast)
            });
            let Some(values_query) = values_query else {
                return Err(fast);
            };
            *params = before;
            let mut typed = values_query.clone();
            if let Some(table) = &table {
                typed_literals(&mut typed, insert, table);
            }
            let mut insert = insert.clone();
            insert.source = Some(Box::new(values_as_query(&typed)?));
            return plan_insert(state, &insert, params);
        }
    };
    let Some(source) = insert.source.as_deref() else {
        return Ok(WriteStatement::Insert(plan));
    };
    if matches!(*source.body, ast::SetExpr::Values(_)) {
        return Ok(WriteStatement::Insert(plan));
    }
    let select = plan_query(state, source, params)?;
    let width = select.columns().len();
    // Without a column list, a query of fewer columns fills the first ones.
    if width < plan.width() && insert.columns.is_empty() {
        let mut named = insert.clone();
        named.columns = plan
            .first_columns(width)
            .into_iter()
            .map(|c| ast::ObjectName::from(vec![ast::Ident::with_quote('"', c)]))
            .collect();
        *params = before;
        return plan_insert(state, &named, params);
    }
    if width != plan.width() {
        let more = if width > plan.width() {
            "more expressions than target columns"
        } else {
            "more target columns than expressions"
        };
        return Err(SqlError::syntax(format!("INSERT has {more}")));
    }
    Ok(WriteStatement::InsertSelect(plan, select))
}

/// Casts each quoted literal of `values` written to a date, time, uuid, JSON or array
/// column to that column's type, as PostgreSQL types an INSERT's literals by their
/// columns: the query engine types VALUES by its rows, and a literal in one row beside
/// an `ARRAY[...]` or a typed value in another was an inconsistent column.
fn typed_literals(values: &mut ast::Query, insert: &ast::Insert, table: &TableMeta) {
    let ast::SetExpr::Values(rows) = values.body.as_mut() else {
        return;
    };
    let columns: Vec<String> = match insert.columns.is_empty() {
        true => table.column_order.clone(),
        false => insert
            .columns
            .iter()
            .map(|c| c.to_string().trim_matches('"').to_string())
            .collect(),
    };
    for row in rows.rows.iter_mut() {
        for (item, column) in row.iter_mut().zip(&columns) {
            let quoted = matches!(item, ast::Expr::Value(v)
                if matches!(v.value, ast::Value::SingleQuotedString(_)));
            let Some(ty) = declared_type(table, column).filter(|t| t.is_distinct_kind()) else {
                continue;
            };
            if !quoted {
                continue;
            }
            let cast = format!("CAST({item} AS {})", ty.name());
            let typed = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
                .try_with_sql(&cast)
                .and_then(|mut parser| parser.parse_expr());
            if let Ok(typed) = typed {
                *item = typed;
            }
        }
    }
}

/// `VALUES (...), (...)` as `SELECT * FROM (VALUES (...), (...)) AS "*VALUES*"`.
fn values_as_query(values: &ast::Query) -> SqlResult<ast::Query> {
    let sql = format!("SELECT * FROM ({values}) AS \"*VALUES*\"");
    match super::statement_parser::parse(&sql)?.pop() {
        Some(Statement::Query(query)) => Ok(*query),
        _ => Err(SqlError::internal(format!("not a query: {sql}"))),
    }
}
