//! `CHECK (condition)` on a column or a table, in CREATE TABLE, ADD COLUMN and ALTER
//! TABLE ... ADD CONSTRAINT: kept by the engine as SQL text (`engine::check`) and
//! judged on every write by `check_constraints`. A condition that judge cannot
//! evaluate is refused here, when declared.

use super::numbered_name;
use crate::engine::{CheckMeta, Engine, TableMeta};
use crate::sql::check_constraints::compile_check;
use crate::sql::expr::fold;
use crate::sql::sql_types::{SqlError, SqlResult};
use sqlparser::ast::{self, ColumnOption, CreateTable, Expr, TableConstraint, Visit, Visitor};
use std::ops::ControlFlow;

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
    super::declared_constraints(
        create,
        |option| match option {
            ColumnOption::Check(constraint) => Some(constraint),
            _ => None,
        },
        |constraint| match constraint {
            TableConstraint::Check(constraint) => Some(constraint),
            _ => None,
        },
        declared,
    )
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
