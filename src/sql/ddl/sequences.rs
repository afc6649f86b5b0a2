//! Sequences in DDL: `CREATE SEQUENCE` and `DROP SEQUENCE`, and the sequences behind
//! `SERIAL` and `GENERATED ... AS IDENTITY` columns, which CREATE TABLE makes as
//! PostgreSQL does (`<table>_<column>_seq`, owned by the column, dropped with the
//! table). The values come from the engine (`engine::catalog::sequences`).

use crate::engine::{Engine, EngineError, GeneratedKind, SequenceSpec};
use crate::sql::expr::fold;
use crate::sql::sql_types::{SqlError, SqlResult, SqlType};
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, ColumnDef, ColumnOption, DataType, Expr, SequenceOptions};

/// A column whose values a sequence generates, as CREATE TABLE declares it.
pub struct GeneratedColumn {
    pub column: String,
    pub kind: GeneratedKind,
    pub ty: SqlType,
    pub options: Vec<SequenceOptions>,
}

/// The integer type a `SERIAL` pseudo-type stands for.
pub fn serial_type(data_type: &DataType) -> Option<SqlType> {
    let DataType::Custom(name, modifiers) = data_type else {
        return None;
    };
    if !modifiers.is_empty() {
        return None;
    }
    match name.to_string().to_ascii_lowercase().as_str() {
        "smallserial" | "serial2" => Some(SqlType::Int2),
        "serial" | "serial4" => Some(SqlType::Int4),
        "bigserial" | "serial8" => Some(SqlType::Int8),
        _ => None,
    }
}

/// The column's generator, if it is `SERIAL` or an identity column of type `ty`.
pub fn generated_column(column: &ColumnDef, ty: SqlType) -> SqlResult<Option<GeneratedColumn>> {
    let name = fold(&column.name);
    if serial_type(&column.data_type).is_some() {
        return Ok(Some(GeneratedColumn {
            column: name,
            kind: GeneratedKind::Serial,
            ty,
            options: Vec::new(),
        }));
    }
    for option in &column.options {
        if let ColumnOption::Generated {
            generated_as,
            sequence_options,
            generation_expr: None,
            ..
        } = &option.option
        {
            if ty.integer_rank().is_none() {
                return Err(SqlError::new(
                    SqlState::InvalidTableDefinition,
                    format!(
                        "identity column type must be smallint, integer, or bigint (column \
                         \"{name}\" is {})",
                        ty.name()
                    ),
                ));
            }
            let kind = match generated_as {
                ast::GeneratedAs::Always => GeneratedKind::Always,
                ast::GeneratedAs::ByDefault => GeneratedKind::ByDefault,
                ast::GeneratedAs::ExpStored => {
                    return Err(SqlError::unsupported(format!(
                        "a computed column (\"{name}\") is not supported yet"
                    )))
                }
            };
            return Ok(Some(GeneratedColumn {
                column: name,
                kind,
                ty,
                options: sequence_options.clone().unwrap_or_default(),
            }));
        }
    }
    Ok(None)
}

/// A whole number given in a sequence option.
fn number(expr: &Expr) -> SqlResult<i64> {
    let bad = || {
        SqlError::new(
            SqlState::InvalidParameterValue,
            format!("sequence option {expr} must be an integer"),
        )
    };
    match expr {
        Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().map_err(|_| bad()),
            _ => Err(bad()),
        },
        Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => number(expr)?.checked_neg().ok_or_else(bad),
        Expr::UnaryOp {
            op: ast::UnaryOperator::Plus,
            expr,
        } => number(expr),
        _ => Err(bad()),
    }
}

/// The definition a sequence of values of type `ty` with `options` gets, with
/// PostgreSQL's defaults: ascending from 1 up to the type's maximum, or descending
/// from -1 down to its minimum.
pub fn spec(
    name: String,
    ty: SqlType,
    options: &[SequenceOptions],
    owner: Option<(String, String)>,
) -> SqlResult<SequenceSpec> {
    let (type_min, type_max) = match ty {
        SqlType::Int2 => (i64::from(i16::MIN), i64::from(i16::MAX)),
        SqlType::Int4 => (i64::from(i32::MIN), i64::from(i32::MAX)),
        SqlType::Int8 => (i64::MIN, i64::MAX),
        other => {
            return Err(SqlError::new(
                SqlState::InvalidParameterValue,
                format!(
                    "sequence type must be smallint, integer, or bigint, not {}",
                    other.name()
                ),
            ))
        }
    };
    let (mut increment, mut min, mut max, mut start, mut cycle) = (1, None, None, None, false);
    for option in options {
        match option {
            SequenceOptions::IncrementBy(by, _) => increment = number(by)?,
            SequenceOptions::MinValue(value) => min = value.as_ref().map(number).transpose()?,
            SequenceOptions::MaxValue(value) => max = value.as_ref().map(number).transpose()?,
            SequenceOptions::StartWith(value, _) => start = Some(number(value)?),
            // Every value is reserved durably in blocks anyway (see the engine).
            SequenceOptions::Cache(value) => {
                if number(value)? < 1 {
                    return Err(SqlError::new(
                        SqlState::InvalidParameterValue,
                        "CACHE must be greater than zero",
                    ));
                }
            }
            // sqlparser's flag says `NO CYCLE`.
            SequenceOptions::Cycle(no) => cycle = !*no,
        }
    }
    if increment == 0 {
        return Err(SqlError::new(
            SqlState::InvalidParameterValue,
            "INCREMENT must not be zero",
        ));
    }
    let ascending = increment > 0;
    let min = min.unwrap_or(if ascending { 1 } else { type_min });
    let max = max.unwrap_or(if ascending { type_max } else { -1 });
    let invalid = |message: String| Err(SqlError::new(SqlState::InvalidParameterValue, message));
    if min < type_min || max > type_max {
        return invalid(format!(
            "MINVALUE ({min}) and MAXVALUE ({max}) must be within the range of type {}",
            ty.name()
        ));
    }
    if min >= max {
        return invalid(format!(
            "MINVALUE ({min}) must be less than MAXVALUE ({max})"
        ));
    }
    let start = start.unwrap_or(if ascending { min } else { max });
    if start < min {
        return invalid(format!(
            "START value ({start}) cannot be less than MINVALUE ({min})"
        ));
    }
    if start > max {
        return invalid(format!(
            "START value ({start}) cannot be greater than MAXVALUE ({max})"
        ));
    }
    Ok(SequenceSpec {
        name,
        increment,
        min,
        max,
        start,
        cycle,
        owner,
    })
}

/// Creates the sequence of a generated column of `table`: `<table>_<column>_seq`, or
/// with a number after it when that name is taken, as PostgreSQL names it.
pub async fn create_for_column(
    engine: &Engine,
    instance: &str,
    table: &str,
    generated: &GeneratedColumn,
) -> SqlResult<String> {
    let base = format!("{table}_{}_seq", generated.column);
    // PostgreSQL counts up until a name is free; a thousand taken names is a mistake.
    for n in 0..1000 {
        let name = match n {
            0 => base.clone(),
            n => format!("{base}{n}"),
        };
        let spec = spec(
            name.clone(),
            generated.ty,
            &generated.options,
            Some((table.to_string(), generated.column.clone())),
        )?;
        match engine.create_sequence(instance, spec).await {
            Err(EngineError::TableExists { .. }) => continue,
            other => return other.map(|meta| meta.spec.name.clone()).map_err(Into::into),
        }
    }
    Err(SqlError::new(
        SqlState::DuplicateTable,
        format!(
            "no free name for the sequence of {table}.{}",
            generated.column
        ),
    ))
}

/// `CREATE SEQUENCE`.
pub async fn create(
    engine: &Engine,
    instance: &str,
    name: &ast::ObjectName,
    if_not_exists: bool,
    data_type: Option<&DataType>,
    options: &[SequenceOptions],
    owned_by: Option<&ast::ObjectName>,
) -> SqlResult<()> {
    if owned_by.is_some() {
        return Err(SqlError::unsupported(
            "OWNED BY on CREATE SEQUENCE is not supported yet",
        ));
    }
    let name = super::table_name(name)?;
    let ty = match data_type {
        Some(data_type) => crate::sql::sql_types::sql_type(data_type)?,
        None => SqlType::Int8,
    };
    match engine
        .create_sequence(instance, spec(name, ty, options, None)?)
        .await
    {
        Err(EngineError::TableExists { name }) if if_not_exists => {
            tracing::debug!(name, "sequence exists, skipping");
            Ok(())
        }
        other => other.map(|_| ()).map_err(Into::into),
    }
}

/// `DROP SEQUENCE`: a sequence a column owns goes only with its table.
pub async fn drop(
    engine: &Engine,
    instance: &str,
    if_exists: bool,
    names: &[ast::ObjectName],
) -> SqlResult<()> {
    for name in names {
        let name = super::table_name(name)?;
        let sequence = match engine.sequence(instance, &name) {
            Err(EngineError::TableNotFound { .. }) if if_exists => continue,
            other => other?,
        };
        if let Some((table, column)) = &sequence.spec.owner {
            return Err(SqlError::new(
                SqlState::DependentObjectsStillExist,
                format!(
                    "cannot drop sequence {name} because column {column} of table {table} \
                     requires it"
                ),
            ));
        }
        engine.drop_sequence(instance, &name).await?;
    }
    Ok(())
}
