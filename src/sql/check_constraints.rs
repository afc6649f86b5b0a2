//! CHECK constraints: declared in CREATE TABLE, ADD COLUMN or ALTER TABLE ... ADD
//! CONSTRAINT, kept by the engine as SQL text (`engine::check`), and judged here, for
//! the engine, on each row a batch leaves (`CheckRules`): the expression is compiled
//! once per table version with the fast path's compiler and evaluated with SQL's NULL
//! semantics, so a row passes unless the condition is false. An expression that
//! compiler cannot evaluate is refused when declared, never skipped.

use super::ddl::numbered_name;
use super::expr::{self, compile, fold, Params, Scalar};
use super::select::output_type;
use super::relation::{Relation, RelationKind};
use super::sql_types::{Datum, SqlError, SqlResult, SqlType};
use crate::engine::{
    CheckMeta, Engine, EngineError, EngineResult, Row, RowRules, RowView, TableMeta,
};
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, ColumnOption, CreateTable, Expr, TableConstraint, Visit, Visitor};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

/// A CHECK constraint as declared: its name if given, and its condition.
pub struct DeclaredCheck {
    name: Option<String>,
    expression: Expr,
    /// Written on this column (names the constraint after it).
    column: Option<String>,
}

/// Reads a CHECK constraint (`column` for one written on a column).
pub fn declared(
    constraint: &ast::CheckConstraint,
    name: Option<&ast::Ident>,
    column: Option<&ast::Ident>,
) -> SqlResult<DeclaredCheck> {
    if constraint.enforced == Some(false) {
        return Err(SqlError::unsupported(
            "a NOT ENFORCED CHECK constraint is not supported: pgwide would not enforce it",
        ));
    }
    Ok(DeclaredCheck {
        name: name.or(constraint.name.as_ref()).map(fold),
        expression: (*constraint.expr).clone(),
        column: column.map(fold),
    })
}

/// The CHECK constraints a CREATE TABLE declares, on its columns and on the table.
pub fn declared_in(create: &CreateTable) -> SqlResult<Vec<DeclaredCheck>> {
    let mut found = Vec::new();
    for column in &create.columns {
        for option in &column.options {
            if let ColumnOption::Check(constraint) = &option.option {
                found.push(declared(
                    constraint,
                    option.name.as_ref(),
                    Some(&column.name),
                )?);
            }
        }
    }
    for constraint in &create.constraints {
        if let TableConstraint::Check(constraint) = constraint {
            found.push(declared(constraint, None, None)?);
        }
    }
    Ok(found)
}

/// Adds a declared CHECK constraint to table `table`, checking the rows already there;
/// returns its name.
pub async fn add(
    engine: &Engine,
    instance: &str,
    table: &str,
    declared: DeclaredCheck,
) -> SqlResult<String> {
    let meta = engine.table(instance, table)?;
    if has_subquery(&declared.expression) {
        return Err(SqlError::unsupported(
            "cannot use subquery in check constraint",
        ));
    }
    let expression = declared.expression.to_string();
    // Refused now if it cannot be evaluated, rather than on the first write.
    compile_check(&meta, &expression)?;
    let name = match declared.name {
        Some(name) => name,
        None => default_name(&meta, &declared.expression, declared.column),
    };
    let check = CheckMeta {
        id: 0,
        name: name.clone(),
        expression,
    };
    engine.add_check(instance, table, check).await?;
    Ok(name)
}

/// PostgreSQL's name for a CHECK constraint it names itself: `<table>_<column>_check`
/// when the condition reads one column, else `<table>_check`, numbered while the table
/// has a constraint of that name.
fn default_name(table: &TableMeta, expression: &Expr, column: Option<String>) -> String {
    let mut columns: Vec<String> = Vec::new();
    let _ = ast::visit_expressions(expression, |e| {
        if let Expr::Identifier(ident) = e {
            let name = fold(ident);
            if !columns.contains(&name) {
                columns.push(name);
            }
        }
        ControlFlow::<()>::Continue(())
    });
    let base = match (column, columns.as_slice()) {
        (_, [only]) => format!("{}_{only}", table.name),
        _ => table.name.clone(),
    };
    let taken = |name: &str| {
        table.checks.iter().any(|c| c.name == name)
            || table.foreign_keys.iter().any(|fk| fk.name == name)
            || table.indexes.iter().any(|i| i.name == name)
    };
    numbered_name(&base, "check", taken)
}

fn has_subquery(expression: &Expr) -> bool {
    struct Finder(bool);
    impl Visitor for Finder {
        type Break = ();
        fn pre_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
            self.0 = true;
            ControlFlow::Break(())
        }
    }
    let mut finder = Finder(false);
    let _ = expression.visit(&mut finder);
    finder.0
}

/// A CHECK condition compiled against `table`'s columns.
struct CompiledCheck {
    relation: Relation,
    condition: Scalar,
}

fn compile_check(table: &Arc<TableMeta>, expression: &str) -> SqlResult<CompiledCheck> {
    let parsed = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(expression)
        .and_then(|mut parser| parser.parse_expr())
        .map_err(|e| SqlError::syntax(e.to_string()))?;
    let mut relation = Relation::new(Arc::clone(table), RelationKind::Table, None);
    let params = Params::new(&[]);
    let condition = compile(&parsed, &mut relation, &mut params.clone(), Some(SqlType::Bool))?;
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
