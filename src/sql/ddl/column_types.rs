//! `ALTER TABLE t ALTER COLUMN c [SET DATA] TYPE type`, for the changes that keep the
//! column's stored value type and what its values mean: an integer's width
//! (`smallint`, `integer`, `bigint`), a text's length limit (`varchar(n)`, `varchar`,
//! `text`), `real` to `double precision`, a timestamp's precision made finer. The rows
//! are checked against a narrower type first (22001, 22003) and nothing is rewritten.
//! Any other change would have to rewrite every value, and is refused (0A000).

use super::{column_type, declared, table_name};
use crate::engine::{Engine, PkValue, ReadOptions, TableMeta, Value};
use crate::sql::expr::fold;
use crate::sql::sql_types::{SqlError, SqlResult, SqlType};
use crate::sql::values::{declared_type, sql_value_type};
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, DataType};

/// Runs one `ALTER COLUMN ... TYPE` of table `table`.
pub async fn alter_type(
    engine: &Engine,
    instance: &str,
    table: &ast::ObjectName,
    column: &ast::Ident,
    data_type: &DataType,
    using: Option<&ast::Expr>,
) -> SqlResult<()> {
    let name = table_name(table)?;
    let meta = engine.table(instance, &name)?;
    let column = fold(column);
    let current = declared_type(&meta, &column).ok_or_else(|| {
        SqlError::new(
            SqlState::UndefinedColumn,
            format!("column \"{column}\" of relation \"{name}\" does not exist"),
        )
    })?;
    if using.is_some() {
        return Err(refused(&column, current, data_type, "a USING expression"));
    }
    super::unenforced::check_type(&column, data_type)?;
    if super::enum_types::declared_enum(engine, instance, data_type).is_some() {
        return Err(refused(
            &column,
            current,
            data_type,
            "a change to an enum type",
        ));
    }
    let target = column_type(data_type)?;
    let new = declared(target, Some(data_type), false)?;
    let stored = match meta.pk_index(&column) {
        Some(_) => sql_value_type(current),
        None => meta
            .column(&column)
            .map_or(sql_value_type(current), |c| c.ty),
    };
    // A REAL's values would have to be rounded, a coarser timestamp's too.
    let rounds = new.single_precision && !meta.is_single_precision(&column);
    let coarser = new.time_precision.unwrap_or(6) < meta.time_precision(&column).unwrap_or(6);
    let same_meaning =
        sql_value_type(target) == stored && new.kind == meta.kind(&column) && !rounds && !coarser;
    if !same_meaning {
        return Err(refused(
            &column,
            current,
            data_type,
            "its values would have to be rewritten",
        ));
    }
    if meta.generated.contains_key(&column) && new.width != meta.integer_width(&column) {
        return Err(refused(
            &column,
            current,
            data_type,
            "a sequence generates its values",
        ));
    }
    let too_long = |value: &Value| match (value, new.max_chars) {
        (Value::String(s), Some(limit)) => s.chars().count() > limit as usize,
        _ => false,
    };
    let out_of_range = |value: &Value| match (value, new.width) {
        (Value::Integer(i), Some(width)) => !width.holds(*i),
        _ => false,
    };
    if new.max_chars.is_some() && any_value(engine, &meta, &column, too_long).await? {
        return Err(SqlError::new(
            SqlState::StringDataRightTruncation,
            format!(
                "value too long for type character varying({})",
                new.max_chars.unwrap_or_default()
            ),
        ));
    }
    if let Some(width) = new.width {
        if any_value(engine, &meta, &column, out_of_range).await? {
            return Err(SqlError::new(
                SqlState::NumericValueOutOfRange,
                format!("{} out of range", width.sql_name()),
            ));
        }
    }
    engine
        .redeclare_column(instance, &name, &column, new)
        .await?;
    Ok(())
}

fn refused(column: &str, from: SqlType, to: &DataType, why: &str) -> SqlError {
    SqlError::unsupported(format!(
        "ALTER COLUMN \"{column}\" TYPE from {} to {to} is not supported yet: {why}",
        from.name()
    ))
}

/// Whether a row of `table` has a value in `column` (a key column's, or an attribute's
/// newest) for which `test` holds.
async fn any_value(
    engine: &Engine,
    table: &TableMeta,
    column: &str,
    test: impl Fn(&Value) -> bool,
) -> SqlResult<bool> {
    let key = table.pk_index(column);
    let read = ReadOptions {
        columns: Some(vec![column.to_string()]),
        max_versions: Some(1),
        ..Default::default()
    };
    super::any_row(engine, table, read, 1000, |row| {
        let value = match key {
            Some(k) => row.pk.get(k).map(|v| match v {
                PkValue::Integer(i) => Value::Integer(*i),
                PkValue::String(s) => Value::String(s.clone()),
                PkValue::Binary(b) => Value::Binary(b.clone()),
            }),
            None => row
                .cells
                .iter()
                .find(|c| c.column == column)
                .map(|c| c.value.clone()),
        };
        value.as_ref().is_some_and(&test)
    })
    .await
}
