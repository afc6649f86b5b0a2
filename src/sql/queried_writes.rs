//! UPDATE and DELETE whose SET or WHERE the fast path cannot evaluate: a function it
//! lacks (`repeat`, `now()`), a subquery, an array (`id = ANY($1)`). A query planned
//! like any SELECT finds the rows and computes their new values; the writes then go
//! as the fast path's do, one batch per statement, each row addressed by its key.
//!
//! Outside a transaction block each write also requires the columns the statement
//! read to be unchanged since the query read them; a row changed in between is read
//! and computed again, as PostgreSQL's read committed re-evaluates a row updated
//! concurrently (`dml::MAX_REEVALUATIONS` times, then 40001). In a block, COMMIT's
//! conflict check covers it.

use super::dml::{self, unchanged_since_read, Returning};
use super::expr::{fold, Params};
use super::read_statements::{plan_query, SelectStatement};
use super::relation::{resolve_relation, RelationKind};
use super::session_state::SessionState;
use super::sql_types::{Datum, OutputColumn, SqlError, SqlResult, SqlType, StatementResult};
use super::values::{attribute_value, datum_to_pk, declared_type};
use crate::engine::{
    BatchMode, ColumnOp, Condition, PkValue, RowChange, RowExistence, RowWrite, TableMeta,
    WriteOutcome,
};
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, Expr};
use std::ops::ControlFlow;
use std::sync::Arc;

/// An UPDATE or DELETE whose rows and values a query computes.
pub(super) struct QueriedWrite {
    table: Arc<TableMeta>,
    /// `SELECT <key columns>, <guarded columns>, <new values> | <returned items>
    /// FROM <table> WHERE <condition>`.
    query: SelectStatement,
    /// The attribute columns whose values the statement reads, in the query's output
    /// after the key columns.
    guarded: Vec<String>,
    change: Change,
}

enum Change {
    /// The columns SET assigns, in the query's output after the guarded columns;
    /// RETURNING, if any, is evaluated over the rows as written.
    Update {
        columns: Vec<(String, Option<SqlType>)>,
        returning: Option<Returning>,
    },
    /// RETURNING's items, if any, are the query's last columns.
    Delete {
        returning: Option<Arc<Vec<OutputColumn>>>,
    },
}

/// Whether a fast-path planning error means only that an expression is beyond it, so
/// the statement may be planned as a queried write.
pub(super) fn beyond_fast_path(error: &SqlError) -> bool {
    matches!(
        error,
        SqlError::Unsupported(_) | SqlError::UndefinedFunction(_)
    )
}

impl QueriedWrite {
    /// `UPDATE` or `DELETE`.
    pub(super) fn command(&self) -> &'static str {
        match self.change {
            Change::Update { .. } => "UPDATE",
            Change::Delete { .. } => "DELETE",
        }
    }

    pub(super) fn plan_update(
        state: &SessionState,
        update: &ast::Update,
        params: &mut Params,
    ) -> SqlResult<QueriedWrite> {
        let relation = dml::update_target(&state.engine, &state.instance, update)?;
        let table = Arc::clone(&relation.table);
        let mut columns = Vec::new();
        let mut values = Vec::new();
        for assignment in &update.assignments {
            let ast::AssignmentTarget::ColumnName(name) = &assignment.target else {
                return Err(SqlError::unsupported("tuple assignments are not supported"));
            };
            let column = super::ddl::object_name(name)?.1;
            if column == dml::VERSION_COLUMN || table.pk_index(&column).is_some() {
                return Err(SqlError::unsupported(format!(
                    "column \"{column}\" cannot be assigned a computed value"
                )));
            }
            crate::engine::check_name(&column)?;
            columns.push((column.clone(), declared_type(&table, &column)));
            values.push(assignment.value.to_string());
        }
        let mut read: Vec<&Expr> = update.assignments.iter().map(|a| &a.value).collect();
        read.extend(&update.selection);
        let guarded = columns_read(&table, &read);
        let returning = dml::plan_returning(relation, update.returning.as_ref(), params)?;
        let query = plan_select(
            state,
            &table,
            &guarded,
            &values,
            &update.table.relation,
            update.selection.as_ref(),
            params,
        )?;
        Ok(QueriedWrite {
            table,
            query,
            guarded,
            change: Change::Update { columns, returning },
        })
    }

    pub(super) fn plan_delete(
        state: &SessionState,
        delete: &ast::Delete,
        params: &mut Params,
    ) -> SqlResult<QueriedWrite> {
        let target = dml::delete_target(delete)?;
        let relation = resolve_relation(&state.engine, &state.instance, target)?;
        if relation.kind != RelationKind::Table {
            return Err(SqlError::unsupported(
                "this DELETE from a versions relation is not supported",
            ));
        }
        let table = Arc::clone(&relation.table);
        let guarded = columns_read(&table, &delete.selection.iter().collect::<Vec<_>>());
        let returned: Vec<String> = delete
            .returning
            .iter()
            .flatten()
            .map(ToString::to_string)
            .collect();
        let query = plan_select(
            state,
            &table,
            &guarded,
            &returned,
            target,
            delete.selection.as_ref(),
            params,
        )?;
        let returning = delete.returning.as_ref().map(|_| {
            let skip = table.pk.len() + guarded.len();
            Arc::new(query.columns().iter().skip(skip).cloned().collect())
        });
        Ok(QueriedWrite {
            table,
            query,
            guarded,
            change: Change::Delete { returning },
        })
    }

    pub(super) fn table(&self) -> &TableMeta {
        &self.table
    }

    pub(super) fn is_update(&self) -> bool {
        matches!(self.change, Change::Update { .. })
    }

    /// The columns RETURNING gives back; empty without RETURNING.
    pub(super) fn columns(&self) -> Arc<Vec<OutputColumn>> {
        match &self.change {
            Change::Update { returning, .. } => returning
                .as_ref()
                .map(Returning::columns)
                .unwrap_or_default(),
            Change::Delete { returning } => returning.clone().unwrap_or_default(),
        }
    }

    /// The query's own privilege checks (SELECT on the table and whatever it reads).
    pub(super) fn authorize(&self, state: &SessionState) -> SqlResult<()> {
        self.query.authorize(state)
    }

    pub(super) async fn execute(
        &self,
        state: &mut SessionState,
        params: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        let keys = self.table.pk.len();
        let in_block = state.transaction.is_some();
        let guards: Vec<(String, usize)> = self
            .guarded
            .iter()
            .enumerate()
            .map(|(i, column)| (column.clone(), keys + i))
            .collect();
        let mut count = 0;
        let mut returned = Vec::new();
        let mut again: Option<Vec<Vec<PkValue>>> = None;
        for attempt in 0..dml::MAX_REEVALUATIONS {
            let rows = self.query.read_all(state, params.clone()).await?;
            let mut matched = Vec::with_capacity(rows.len());
            let computed_from = keys + guards.len();
            for row in rows {
                // Every row has the query's columns: keys, guarded columns, then items.
                if row.len() < computed_from {
                    return Err(SqlError::internal("a queried write's row lacks its key"));
                }
                let pk = row[..keys]
                    .iter()
                    .zip(&self.table.pk)
                    .map(|(d, c)| datum_to_pk(d, c.ty, &c.name))
                    .collect::<SqlResult<Vec<_>>>()?;
                if again.as_ref().is_none_or(|again| again.contains(&pk)) {
                    matched.push((pk, row));
                }
            }
            let mut writes = Vec::with_capacity(matched.len());
            for (pk, row) in &matched {
                let existing = Condition::row(RowExistence::ExpectExist);
                let condition = match in_block || guards.is_empty() {
                    true => existing,
                    false => unchanged_since_read(&existing, &guards, row)?,
                };
                let (change, return_row) = match &self.change {
                    Change::Update { columns, returning } => (
                        RowChange::Update(new_values(&self.table, columns, &row[computed_from..])?),
                        returning.is_some(),
                    ),
                    Change::Delete { .. } => (RowChange::Delete, false),
                };
                writes.push((
                    Arc::clone(&self.table),
                    RowWrite {
                        pk: pk.clone(),
                        change,
                        condition,
                        return_row,
                    },
                ));
            }
            let outcomes = state
                .write_target()
                .write(writes, BatchMode::Independent)
                .await?;
            let mut changed = Vec::new();
            let mut written_rows = Vec::new();
            for (outcome, (pk, row)) in outcomes.into_iter().zip(matched) {
                match outcome {
                    WriteOutcome::Applied(written) => {
                        count += 1;
                        written_rows.extend(written);
                        if let Change::Delete { returning: Some(_) } = &self.change {
                            returned.push(row[computed_from..].to_vec());
                        }
                    }
                    WriteOutcome::ConditionFailed(_) if !in_block && !guards.is_empty() => {
                        changed.push(pk)
                    }
                    _ => {}
                }
            }
            if let Change::Update {
                returning: Some(returning),
                ..
            } = &self.change
            {
                returned.extend(returning.rows(&written_rows, &params)?);
            }
            if changed.is_empty() {
                let (tag, returning) = match &self.change {
                    Change::Update { .. } => (format!("UPDATE {count}"), self.columns()),
                    Change::Delete { .. } => (format!("DELETE {count}"), self.columns()),
                };
                let returns = match &self.change {
                    Change::Update { returning, .. } => returning.is_some(),
                    Change::Delete { returning } => returning.is_some(),
                };
                return Ok(dml::finish_rows(
                    tag,
                    returns.then_some(returning),
                    returned,
                ));
            }
            again = Some(changed);
            // Let the writer that got in between finish before reading the rows again.
            tokio::time::sleep(std::time::Duration::from_micros(50 << attempt.min(8))).await;
        }
        Err(SqlError::new(
            SqlState::SerializationFailure,
            "could not serialize access due to concurrent update",
        ))
    }
}

/// The cell operations that write `values` to `columns`: NULL deletes the column.
fn new_values(
    table: &TableMeta,
    columns: &[(String, Option<SqlType>)],
    values: &[Datum],
) -> SqlResult<Vec<ColumnOp>> {
    if values.len() != columns.len() {
        return Err(SqlError::internal(
            "a queried UPDATE's row lacks a new value",
        ));
    }
    columns
        .iter()
        .zip(values)
        .map(|((column, ty), value)| {
            Ok(match value {
                Datum::Null => ColumnOp::DeleteAll {
                    column: column.clone(),
                },
                value => ColumnOp::Put {
                    column: column.clone(),
                    value: attribute_value(table, column, value.clone(), *ty)?,
                    version: None,
                },
            })
        })
        .collect()
}

/// The table's declared attribute columns that `exprs` name (in a subquery too: a
/// column guarded needlessly costs only a condition).
fn columns_read(table: &TableMeta, exprs: &[&Expr]) -> Vec<String> {
    let mut names = Vec::new();
    for expr in exprs {
        let _ = ast::visit_expressions(*expr, |e| {
            let name = match e {
                Expr::Identifier(ident) => Some(fold(ident)),
                Expr::CompoundIdentifier(parts) => parts.last().map(fold),
                _ => None,
            };
            if let Some(name) = name {
                if table.pk_index(&name).is_none()
                    && table.column(&name).is_some()
                    && !names.contains(&name)
                {
                    names.push(name);
                }
            }
            ControlFlow::<()>::Continue(())
        });
    }
    names
}

/// Plans `SELECT <keys>, <guarded>, <items> FROM <relation> WHERE <selection>`.
fn plan_select(
    state: &SessionState,
    table: &TableMeta,
    guarded: &[String],
    items: &[String],
    relation: &ast::TableFactor,
    selection: Option<&Expr>,
    params: &mut Params,
) -> SqlResult<SelectStatement> {
    // The key and guarded columns are aliased, so RETURNING may name them again.
    let quoted = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
    let mut list: Vec<String> = (table.pk.iter().map(|c| &c.name))
        .chain(guarded)
        .enumerate()
        .map(|(i, name)| format!("{} AS \"?pgwide_{i}?\"", quoted(name)))
        .collect();
    list.extend(items.iter().cloned());
    let mut sql = format!("SELECT {} FROM {relation}", list.join(", "));
    if let Some(selection) = selection {
        sql.push_str(&format!(" WHERE {selection}"));
    }
    let query = match super::statement_parser::parse(&sql)?.pop() {
        Some(ast::Statement::Query(query)) => query,
        _ => return Err(SqlError::internal(format!("not a query: {sql}"))),
    };
    plan_query(state, &query, params)
}
