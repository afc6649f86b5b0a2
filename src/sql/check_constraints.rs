//! CHECK constraints judged for the engine (`engine::check`) on each row a batch
//! leaves (`CheckRules`): each condition (declared through `ddl::checks`) is compiled
//! once per table version with the fast path's compiler and evaluated with SQL's NULL
//! semantics, so a row passes unless the condition is false. A condition that compiler
//! cannot evaluate is refused when declared, never skipped.

use super::expr::{self, compile, Params, Scalar};
use super::relation::{Relation, RelationKind};
use super::select::output_type;
use super::sql_types::{Datum, SqlError, SqlResult, SqlType};
use crate::engine::{EngineError, EngineResult, Row, RowRules, RowView, TableMeta};
use crate::sqlstate::SqlState;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A CHECK condition compiled against `table`'s columns.
pub(super) struct CompiledCheck {
    relation: Relation,
    condition: Scalar,
}

pub(super) fn compile_check(table: &Arc<TableMeta>, expression: &str) -> SqlResult<CompiledCheck> {
    let parsed = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(expression)
        .and_then(|mut parser| parser.parse_expr())
        .map_err(|e| SqlError::syntax(e.to_string()))?;
    let mut relation = Relation::new(Arc::clone(table), RelationKind::Table, None);
    let params = Params::new(&[]);
    let condition = compile(
        &parsed,
        &mut relation,
        &mut params.clone(),
        Some(SqlType::Bool),
    )?;
    let boolean = output_type(&condition, Some(&relation), &params) == SqlType::Bool;
    if !boolean {
        return Err(SqlError::new(
            SqlState::DatatypeMismatch,
            format!("argument of CHECK must be type boolean: {expression}"),
        ));
    }
    Ok(CompiledCheck {
        relation,
        condition,
    })
}

/// Judges rows for the engine: each table's checks compiled once per version of the
/// table (a new `TableMeta` after any change to it compiles them again).
#[derive(Default)]
pub struct CheckRules {
    /// By table id: the table version compiled for, and its checks by name.
    compiled: Mutex<HashMap<u32, CompiledTable>>,
}

/// The version of a table its checks were compiled for, and the checks.
type CompiledTable = (Arc<TableMeta>, Arc<TableChecks>);

/// A table's checks, compiled, by name.
type TableChecks = Vec<(String, CompiledCheck)>;

impl CheckRules {
    fn checks_of(&self, table: &Arc<TableMeta>) -> EngineResult<Arc<TableChecks>> {
        let mut compiled = self.compiled.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((version, checks)) = compiled.get(&table.id) {
            if Arc::ptr_eq(version, table) {
                return Ok(Arc::clone(checks));
            }
        }
        let mut checks = Vec::with_capacity(table.checks.len());
        for check in &table.checks {
            let made =
                compile_check(table, &check.expression).map_err(|e| EngineError::CheckFailed {
                    constraint: check.name.clone(),
                    message: e.to_string(),
                })?;
            checks.push((check.name.clone(), made));
        }
        let checks = Arc::new(checks);
        compiled.insert(table.id, (Arc::clone(table), Arc::clone(&checks)));
        Ok(checks)
    }
}

impl RowRules for CheckRules {
    fn check(&self, table: &Arc<TableMeta>, row: &Row) -> EngineResult<()> {
        let view = RowView::of(row);
        for (name, check) in self.checks_of(table)?.iter() {
            let mut outcome = Ok(Datum::Null);
            check.relation.materialize(&view, None, |values| {
                outcome = expr::eval(&check.condition, &values, &[]);
            });
            match outcome {
                Ok(Datum::Bool(false)) => {
                    return Err(EngineError::CheckViolation {
                        table: table.name.clone(),
                        constraint: name.clone(),
                    })
                }
                Ok(_) => {}
                Err(e) => {
                    return Err(EngineError::CheckFailed {
                        constraint: name.clone(),
                        message: e.to_string(),
                    })
                }
            }
        }
        Ok(())
    }
}
