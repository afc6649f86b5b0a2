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
        "Internal error: ",
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
    if let Some(error) = no_such_signature(&message) {
        return error;
    }
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

/// PostgreSQL's 42883 for DataFusion's words for a function or operator that has no
/// variant for the argument types given (`sum(text)`, `timestamptz + integer`), with
/// the types in PostgreSQL's names where DataFusion's message gives them.
fn no_such_signature(message: &str) -> Option<SqlError> {
    const CASTS: &str = "you might need to add explicit type casts";
    if let Some(rest) = message.split("Cannot coerce arithmetic expression ").nth(1) {
        let expression = rest.split(" to valid types").next().unwrap_or(rest);
        let named: Vec<String> = words_outside_parentheses(expression)
            .into_iter()
            .map(pg_type_name)
            .collect();
        return Some(SqlError::undefined_function(format!(
            "operator does not exist: {}; {CASTS}",
            named.join(" ")
        )));
    }
    if let Some(rest) = message
        .split("No function matches the given name and argument types '")
        .nth(1)
    {
        let call = rest.split('\'').next().unwrap_or(rest);
        let (name, arguments) = call.split_once('(')?;
        let arguments: Vec<String> = arguments
            .trim_end_matches(')')
            .split(", ")
            .filter(|a| !a.is_empty())
            .map(pg_type_name)
            .collect();
        return Some(SqlError::undefined_function(format!(
            "function {name}({}) does not exist; {CASTS}",
            arguments.join(", ")
        )));
    }
    let name = message
        .split("Function '")
        .nth(1)
        .filter(|_| message.contains("failed to match any signature"))?
        .split('\'')
        .next()?;
    Some(SqlError::undefined_function(format!(
        "function {name} does not exist for the argument types given; {CASTS}"
    )))
}

/// The space-separated words of `text`, a space inside parentheses kept in its word
/// (`Timestamp(ns, "+00:00") + Int64` is three words).
fn words_outside_parentheses(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ' ' if depth == 0 => {
                if at > start {
                    words.push(&text[start..at]);
                }
                start = at + 1;
            }
            _ => {}
        }
    }
    if start < text.len() {
        words.push(&text[start..]);
    }
    words
}

/// PostgreSQL's name for an Arrow type as DataFusion's messages print it; other words
/// are kept as they are.
fn pg_type_name(arrow: &str) -> String {
    let name = match arrow {
        "Utf8" | "LargeUtf8" | "Utf8View" => "text",
        "Int16" => "smallint",
        "Int32" => "integer",
        "Int64" => "bigint",
        "Float32" => "real",
        "Float64" => "double precision",
        "Boolean" => "boolean",
        "Date32" => "date",
        "Binary" | "LargeBinary" | "BinaryView" => "bytea",
        "Null" => "unknown",
        other if other.starts_with("Decimal128(") => "numeric",
        other if other.starts_with("Interval(") => "interval",
        other if other.starts_with("Timestamp(") && other.contains(", \"") => {
            "timestamp with time zone"
        }
        other if other.starts_with("Timestamp(") => "timestamp without time zone",
        other => other,
    };
    name.to_string()
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
        let mismatch = |m: &str| from_datafusion(&DataFusionError::Plan(m.into()));
        let sum = mismatch(
            "Internal error: Function 'sum' failed to match any signature, errors: Error \
             during planning: Function 'sum' requires Decimal, but received String.",
        );
        assert_eq!(sum.code(), "42883");
        assert!(
            sum.message().starts_with("function sum does not exist"),
            "{sum:?}"
        );
        let abs = mismatch(
            "Function 'abs' expects Numeric but received String. No function matches the \
             given name and argument types 'abs(Utf8)'. You might need to add explicit type \
             casts.",
        );
        assert!(
            abs.message()
                .starts_with("function abs(text) does not exist"),
            "{abs:?}"
        );
        let plus = mismatch(
            "Cannot coerce arithmetic expression Timestamp(ns, \"+00:00\") + Int64 to valid types",
        );
        assert_eq!(plus.code(), "42883");
        assert!(
            plus.message()
                .starts_with("operator does not exist: timestamp with time zone + bigint;"),
            "{plus:?}"
        );
        let sql = SqlError::new(SqlState::DatatypeMismatch, "odd");
        let external = DataFusionError::External(Box::new(sql.clone()));
        assert_eq!(from_datafusion(&external), sql);
    }
}
