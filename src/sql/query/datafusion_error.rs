//! DataFusion errors as SQLSTATEs: missing tables and columns, syntax, unsupported
//! features, the memory limit, and run-time errors such as division by zero. Anything
//! else is an internal error with a short message; the full text goes to the log.

use crate::sql::sql_types::SqlError;
use crate::sqlstate::SqlState;
use datafusion::arrow::error::ArrowError;
use datafusion::common::{Column, SchemaError, TableReference};
use datafusion::error::DataFusionError;

/// Where no subquery can run, neither as a join nor as a subplan.
const SUBQUERY_NOT_HERE: &str = "this subquery is not supported here: a correlated subquery may \
     be in the select list, WHERE, HAVING, GROUP BY or ORDER BY, not in a JOIN's ON \
     condition or a window function's OVER (...); move it into WHERE or a subquery in FROM";

/// The message of a DataFusion error without its `Error during planning:` prefixes.
fn clean(message: &str) -> String {
    let mut m = message.trim();
    for prefix in [
        "Error during planning: ",
        "Execution error: ",
        "This feature is not implemented: ",
        "Schema error: ",
        "Arrow error: ",
        "Invalid argument error: ",
        "Compute error: ",
        "Cast error: ",
    ] {
        while let Some(rest) = m.strip_prefix(prefix) {
            m = rest;
        }
    }
    m.lines().next().unwrap_or(m).to_string()
}

/// The SQL error for a DataFusion error.
pub fn from_datafusion(error: &DataFusionError) -> SqlError {
    let root = error.find_root();
    match root {
        DataFusionError::External(inner) => {
            if let Some(sql) = inner.downcast_ref::<SqlError>() {
                return sql.clone();
            }
        }
        DataFusionError::SQL(e, _) => return SqlError::syntax(clean(&e.to_string())),
        // A subquery neither DataFusion nor a subplan could run (one in a JOIN's ON or
        // a window function) reaches the physical planner, which names only the node.
        DataFusionError::NotImplemented(m)
            if m.contains("Physical plan does not support logical expression")
                && (m.contains("Subquery") || m.contains("Exists")) =>
        {
            return SqlError::unsupported(SUBQUERY_NOT_HERE)
        }
        // A type name neither pgwide nor the database defines (`x::foo`).
        DataFusionError::NotImplemented(m) if m.starts_with("Unsupported SQL type ") => {
            let name = m.trim_start_matches("Unsupported SQL type ");
            return SqlError::new(
                SqlState::UndefinedObject,
                format!("type \"{}\" does not exist", name.trim_matches('"')),
            );
        }
        DataFusionError::NotImplemented(m) => return SqlError::unsupported(clean(m)),
        DataFusionError::Plan(m) if m.contains("subquery can only be used in") => {
            return SqlError::unsupported(SUBQUERY_NOT_HERE)
        }
        DataFusionError::ResourcesExhausted(m) => {
            return SqlError::new(
                SqlState::OutOfMemory,
                format!(
                    "out of memory for this query (see query_memory_mb): {}",
                    clean(m)
                ),
            )
        }
        DataFusionError::SchemaError(e, _) => {
            return match &**e {
                SchemaError::FieldNotFound { field, .. } => undefined_column(field),
                SchemaError::AmbiguousReference { .. } => {
                    SqlError::new(SqlState::AmbiguousColumn, clean(&e.to_string()))
                }
                SchemaError::DuplicateQualifiedField { .. }
                | SchemaError::DuplicateUnqualifiedField { .. } => {
                    SqlError::new(SqlState::DuplicateAlias, clean(&e.to_string()))
                }
            }
        }
        DataFusionError::ArrowError(e, _) => {
            return match &**e {
                ArrowError::DivideByZero => {
                    SqlError::new(SqlState::DivisionByZero, "division by zero")
                }
                ArrowError::CastError(m) => {
                    SqlError::new(SqlState::InvalidTextRepresentation, clean(m))
                }
                ArrowError::ArithmeticOverflow(m) => {
                    SqlError::new(SqlState::NumericValueOutOfRange, clean(m))
                }
                other => internal(&other.to_string()),
            }
        }
        _ => {}
    }
    let message = clean(&root.to_string());
    let lower = message.to_lowercase();
    if matches!(root, DataFusionError::Plan(_)) {
        if lower.contains("table") && lower.contains("not found") {
            return SqlError::new(SqlState::UndefinedTable, message);
        }
        if lower.contains("no field named") {
            return SqlError::new(SqlState::UndefinedColumn, message);
        }
        if lower.contains("must appear in the group by clause") {
            return SqlError::new(SqlState::GroupingError, message);
        }
        if lower.contains("function") && (lower.contains("invalid") || lower.contains("not found"))
        {
            return SqlError::undefined_function(message);
        }
        if lower.contains("coercion") || lower.contains("cannot") || lower.contains("type") {
            return SqlError::new(SqlState::DatatypeMismatch, message);
        }
        return SqlError::syntax(message);
    }
    if lower.contains("divide by zero") || lower.contains("division by zero") {
        return SqlError::new(SqlState::DivisionByZero, "division by zero");
    }
    if matches!(root, DataFusionError::Execution(_)) {
        return SqlError::new(SqlState::DataException, message);
    }
    internal(&message)
}

/// PostgreSQL's words for a column that does not exist: `column "x" does not exist`,
/// or `column t.x does not exist` when the query qualified it.
pub(super) fn undefined_column(column: &Column) -> SqlError {
    let message = match &column.relation {
        None => format!("column \"{}\" does not exist", column.name),
        Some(relation) => format!("column {relation}.{} does not exist", column.name),
    };
    SqlError::new(SqlState::UndefinedColumn, message)
}

/// PostgreSQL's words for a relation that does not exist, named as the query wrote it.
pub(super) fn undefined_table(reference: &TableReference) -> SqlError {
    let name = match reference.schema() {
        Some(schema) => format!("{schema}.{}", reference.table()),
        None => reference.table().to_string(),
    };
    SqlError::new(
        SqlState::UndefinedTable,
        format!("relation \"{name}\" does not exist"),
    )
}

fn internal(message: &str) -> SqlError {
    tracing::warn!("query failed: {message}");
    let short: String = message.chars().take(200).collect();
    SqlError::internal(format!("query failed: {short}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planning_errors_get_their_sqlstates() {
        let plan = |m: &str| from_datafusion(&DataFusionError::Plan(m.into())).code();
        assert_eq!(plan("table 'postgres.public.nope' not found"), "42P01");
        assert_eq!(plan("No field named x."), "42703");
        let code = from_datafusion(&DataFusionError::NotImplemented("x".into())).code();
        assert_eq!(code, "0A000");
        let code = from_datafusion(&DataFusionError::ResourcesExhausted("x".into())).code();
        assert_eq!(code, "53200");
        let arrow = DataFusionError::ArrowError(Box::new(ArrowError::DivideByZero), None);
        assert_eq!(from_datafusion(&arrow).code(), "22012");
        let wrapped = DataFusionError::Context("ctx".into(), Box::new(arrow));
        assert_eq!(from_datafusion(&wrapped).code(), "22012");
        let sql = SqlError::new(SqlState::DatatypeMismatch, "odd");
        let external = DataFusionError::External(Box::new(sql.clone()));
        assert_eq!(from_datafusion(&external), sql);
    }
}
