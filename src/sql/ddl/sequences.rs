//! Sequences in DDL: `CREATE SEQUENCE`, `ALTER SEQUENCE` and `DROP SEQUENCE`, and the
//! sequences behind `SERIAL` and `GENERATED ... AS IDENTITY` columns, which CREATE
//! TABLE makes as PostgreSQL does (`<table>_<column>_seq`, owned by the column, dropped
//! with the table). The values come from the engine (`engine::catalog::sequences`).

use crate::engine::{Engine, EngineError, GeneratedKind, SequenceSpec, SequenceType, SequenceUndo};
use crate::sql::expr::fold;
use crate::sql::sql_types::{SqlError, SqlResult, SqlType};
use crate::sql::statement_parser::AlterSequence;
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

/// The sequence type of values of SQL type `ty`.
fn sequence_type(ty: SqlType) -> SqlResult<SequenceType> {
    match ty {
        SqlType::Int2 => Ok(SequenceType::Int2),
        SqlType::Int4 => Ok(SequenceType::Int4),
        SqlType::Int8 => Ok(SequenceType::Int8),
        other => Err(SqlError::new(
            SqlState::InvalidParameterValue,
            format!(
                "sequence type must be smallint, integer, or bigint, not {}",
                other.name()
            ),
        )),
    }
}

/// `CACHE n`: every value is reserved durably in blocks anyway (see the engine), so the
/// size is only checked.
fn check_cache(value: &Expr) -> SqlResult<()> {
    match number(value)? {
        n if n < 1 => Err(SqlError::new(
            SqlState::InvalidParameterValue,
            format!("CACHE ({n}) must be greater than zero"),
        )),
        _ => Ok(()),
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
    let data_type = sequence_type(ty)?;
    let (type_min, type_max) = data_type.bounds();
    let (mut increment, mut min, mut max, mut start, mut cycle) = (1, None, None, None, false);
    for option in options {
        match option {
            SequenceOptions::IncrementBy(by, _) => increment = number(by)?,
            SequenceOptions::MinValue(value) => min = value.as_ref().map(number).transpose()?,
            SequenceOptions::MaxValue(value) => max = value.as_ref().map(number).transpose()?,
            SequenceOptions::StartWith(value, _) => start = Some(number(value)?),
            SequenceOptions::Cache(value) => check_cache(value)?,
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
        data_type: Some(data_type),
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
    let name = super::table_name(name)?;
    let ty = match data_type {
        Some(data_type) => crate::sql::sql_types::sql_type(data_type)?,
        None => SqlType::Int8,
    };
    // sqlparser reads `OWNED BY NONE` as a name.
    let owner = match owned_by {
        Some(column) if !is_none(column) => Some(owning_column(engine, instance, column)?),
        _ => None,
    };
    match engine
        .create_sequence(instance, spec(name, ty, options, owner)?)
        .await
    {
        Err(EngineError::TableExists { name }) if if_not_exists => {
            tracing::debug!(name, "sequence exists, skipping");
            Ok(())
        }
        other => other.map(|_| ()).map_err(Into::into),
    }
}

/// `DROP SEQUENCE`: the sequence of a SERIAL or identity column goes only with its
/// column or table; one that is only `OWNED BY` a column may be dropped.
pub async fn drop(
    engine: &Engine,
    instance: &str,
    if_exists: bool,
    names: &[ast::ObjectName],
) -> SqlResult<()> {
    for name in names {
        let name = super::table_name(name)?;
        match engine.sequence(instance, &name) {
            Err(EngineError::TableNotFound { .. }) if if_exists => continue,
            other => other?,
        };
        if let Some((table, column)) = generated_column_of(engine, instance, &name)? {
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

fn is_none(name: &ast::ObjectName) -> bool {
    matches!(name.0.as_slice(), [part] if part.as_ident().is_some_and(|i| i.quote_style.is_none() && i.value.eq_ignore_ascii_case("none")))
}

/// The table and column `OWNED BY table.column` names, which must exist.
fn owning_column(
    engine: &Engine,
    instance: &str,
    name: &ast::ObjectName,
) -> SqlResult<(String, String)> {
    let parts: Vec<String> = name
        .0
        .iter()
        .filter_map(|part| part.as_ident().map(fold))
        .collect();
    let (table, column) = match parts.as_slice() {
        [table, column] => (table, column),
        [schema, table, column] if schema == "public" => (table, column),
        [schema, ..] if parts.len() == 3 => {
            return Err(SqlError::new(
                SqlState::UndefinedTable,
                format!("relation \"{schema}.{}\" does not exist", parts[1]),
            ))
        }
        _ => {
            return Err(SqlError::syntax(
                "invalid OWNED BY option: specify OWNED BY table.column or OWNED BY NONE",
            ))
        }
    };
    let meta = engine.table(instance, table)?;
    if meta.pk_index(column).is_none() && meta.column(column).is_none() {
        return Err(EngineError::NoSuchColumn {
            table: table.clone(),
            column: column.clone(),
        }
        .into());
    }
    Ok((table.clone(), column.clone()))
}

/// `ALTER SEQUENCE`: returns what undoes it, for a transaction block that rolls back,
/// or `None` when `IF EXISTS` found no sequence.
pub async fn alter(
    engine: &Engine,
    instance: &str,
    alter: &AlterSequence,
) -> SqlResult<Option<SequenceUndo>> {
    let name = super::table_name(&alter.name)?;
    let current = match engine.sequence(instance, &name) {
        Err(EngineError::TableNotFound { .. }) if alter.if_exists => {
            tracing::debug!(name, "sequence does not exist, skipping");
            return Ok(None);
        }
        other => other?,
    };
    let data_type = match &alter.data_type {
        Some(data_type) => Some(sequence_type(crate::sql::sql_types::sql_type(data_type)?)?),
        None => None,
    };
    let owner = match &alter.owned_by {
        None => current.spec.owner.clone(),
        Some(owned_by) => {
            let owner = owned_by
                .as_ref()
                .map(|column| owning_column(engine, instance, column))
                .transpose()?;
            if owner != current.spec.owner {
                refuse_new_owner_of_generator(engine, instance, &name)?;
            }
            owner
        }
    };
    let spec = altered(&current.spec, data_type, &alter.options, owner)?;
    let restart = match &alter.restart {
        Some(Some(value)) => Some(Some(number(value)?)),
        Some(None) => Some(None),
        None => None,
    };
    let undo = engine
        .alter_sequence(instance, &name, spec, restart)
        .await?;
    Ok(Some(undo))
}

/// A default maximum: the type's limit, or -1 for a descending sequence.
fn default_max(to_type_limit: bool, type_max: i64) -> i64 {
    if to_type_limit {
        type_max
    } else {
        -1
    }
}

/// A default minimum: the type's limit, or 1 for an ascending sequence.
fn default_min(to_type_limit: bool, type_min: i64) -> i64 {
    if to_type_limit {
        type_min
    } else {
        1
    }
}

/// The sequence of a SERIAL or identity column keeps its owner: the column names it.
fn refuse_new_owner_of_generator(engine: &Engine, instance: &str, name: &str) -> SqlResult<()> {
    match generated_column_of(engine, instance, name)? {
        Some((table, column)) => Err(SqlError::unsupported(format!(
            "cannot change ownership of sequence \"{name}\": it generates column \"{column}\" \
             of table \"{table}\""
        ))),
        None => Ok(()),
    }
}

/// The table and column whose values sequence `name` generates (SERIAL, identity).
fn generated_column_of(
    engine: &Engine,
    instance: &str,
    name: &str,
) -> SqlResult<Option<(String, String)>> {
    Ok(engine.tables(instance)?.into_iter().find_map(|table| {
        table
            .generated
            .iter()
            .find(|(_, g)| g.sequence == name)
            .map(|(column, _)| (table.name.clone(), column.clone()))
    }))
}

/// The definition ALTER SEQUENCE makes of `old`, as PostgreSQL's: bounds left at the
/// old type's limits follow a new type, `NO MINVALUE` / `NO MAXVALUE` go back to the
/// defaults for the (new) increment's direction, and the start must lie within the
/// bounds.
fn altered(
    old: &SequenceSpec,
    data_type: Option<SequenceType>,
    options: &[SequenceOptions],
    owner: Option<(String, String)>,
) -> SqlResult<SequenceSpec> {
    let old_type = old.value_type();
    let new_type = data_type.unwrap_or(old_type);
    let (old_min, old_max) = old_type.bounds();
    let (type_min, type_max) = new_type.bounds();
    let reset_max = data_type.is_some() && old.max == old_max;
    let reset_min = data_type.is_some() && old.min == old_min;
    let mut spec = SequenceSpec {
        data_type: Some(new_type),
        owner,
        ..old.clone()
    };
    let (mut min, mut max) = (None, None);
    for option in options {
        match option {
            SequenceOptions::IncrementBy(by, _) => spec.increment = number(by)?,
            SequenceOptions::MinValue(value) => min = Some(value.as_ref().map(number).transpose()?),
            SequenceOptions::MaxValue(value) => max = Some(value.as_ref().map(number).transpose()?),
            SequenceOptions::StartWith(value, _) => spec.start = number(value)?,
            SequenceOptions::Cache(value) => check_cache(value)?,
            SequenceOptions::Cycle(no) => spec.cycle = !*no,
        }
    }
    let invalid = |message: String| Err(SqlError::new(SqlState::InvalidParameterValue, message));
    if spec.increment == 0 {
        return invalid("INCREMENT must not be zero".into());
    }
    let ascending = spec.increment > 0;
    // `NO MAXVALUE` (`Some(None)`), or a new type the old bound was the limit of.
    spec.max = match max {
        Some(Some(max)) => max,
        Some(None) => default_max(ascending || reset_max, type_max),
        None if reset_max => default_max(ascending || reset_max, type_max),
        None => old.max,
    };
    spec.min = match min {
        Some(Some(min)) => min,
        Some(None) => default_min(!ascending || reset_min, type_min),
        None if reset_min => default_min(!ascending || reset_min, type_min),
        None => old.min,
    };
    let type_name = match new_type {
        SequenceType::Int2 => "smallint",
        SequenceType::Int4 => "integer",
        SequenceType::Int8 => "bigint",
    };
    if !(type_min..=type_max).contains(&spec.max) {
        return invalid(format!(
            "MAXVALUE ({}) is out of range for sequence data type {type_name}",
            spec.max
        ));
    }
    if !(type_min..=type_max).contains(&spec.min) {
        return invalid(format!(
            "MINVALUE ({}) is out of range for sequence data type {type_name}",
            spec.min
        ));
    }
    if spec.min >= spec.max {
        return invalid(format!(
            "MINVALUE ({}) must be less than MAXVALUE ({})",
            spec.min, spec.max
        ));
    }
    if spec.start < spec.min {
        return invalid(format!(
            "START value ({}) cannot be less than MINVALUE ({})",
            spec.start, spec.min
        ));
    }
    if spec.start > spec.max {
        return invalid(format!(
            "START value ({}) cannot be greater than MAXVALUE ({})",
            spec.start, spec.max
        ));
    }
    Ok(spec)
}
