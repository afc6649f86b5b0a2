//! `CREATE TYPE name AS ENUM (...)`, `ALTER TYPE` (ADD VALUE, RENAME VALUE, RENAME
//! TO) and `DROP TYPE`, over the engine's enum types, and the lookup that lets a
//! column be declared with one. Other kinds of `CREATE TYPE` (composite, range, base)
//! are refused: pgwide has nothing to store them as.

use super::object_name;
use crate::engine::{Engine, EngineError, LabelPosition};
use crate::sql::sql_types::{SqlError, SqlResult, SqlType};
use crate::sql::statement_parser::do_blocks::strip_ignore_duplicate;
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, DataType, ObjectName};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// An enum type's name: unqualified or in `public`, the schema pgwide's objects live in.
fn type_name(name: &ObjectName) -> SqlResult<String> {
    match object_name(name)? {
        (None, n) => Ok(n),
        (Some(schema), n) if schema == "public" => Ok(n),
        (Some(schema), n) => Err(SqlError::new(
            SqlState::UndefinedObject,
            format!("type \"{schema}.{n}\" does not exist"),
        )),
    }
}

/// Whether `name` already names one of pgwide's built-in types (`text`, `int4`, ...):
/// a user type by that name would never be found, as PostgreSQL looks in `pg_catalog`
/// first.
fn is_builtin(name: &str) -> bool {
    let parsed = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(name)
        .and_then(|mut parser| parser.parse_data_type());
    match parsed {
        Ok(DataType::Custom(..)) | Err(_) => false,
        Ok(data_type) => crate::sql::sql_types::sql_type(&data_type).is_ok(),
    }
}

/// `CREATE TYPE name AS ENUM ('a', 'b', ...)`: the type's name, and whether this made
/// it. One read from a DO block that ignores "already exists" (`do_blocks`) leaves an
/// existing type as it is.
pub async fn create(
    engine: &Engine,
    instance: &str,
    name: &ObjectName,
    representation: Option<&ast::UserDefinedTypeRepresentation>,
) -> SqlResult<(String, bool)> {
    let (name, ignore_duplicate) = strip_ignore_duplicate(name);
    let name = &name;
    let labels = match representation {
        Some(ast::UserDefinedTypeRepresentation::Enum { labels }) => labels,
        Some(ast::UserDefinedTypeRepresentation::Composite { .. }) => {
            return Err(SqlError::unsupported(
                "composite types (CREATE TYPE ... AS (...)) are not supported; enum types are",
            ))
        }
        _ => {
            return Err(SqlError::unsupported(
                "only enum types (CREATE TYPE ... AS ENUM (...)) are supported",
            ))
        }
    };
    let name = type_name(name)?;
    if is_builtin(&name) && !ignore_duplicate {
        return Err(SqlError::new(
            SqlState::DuplicateObject,
            format!("type \"{name}\" already exists"),
        ));
    }
    let labels = labels.iter().map(|label| label.value.clone()).collect();
    match engine.create_enum_type(instance, &name, labels).await {
        Ok(_) => Ok((name, true)),
        Err(EngineError::TypeExists { .. }) if ignore_duplicate => Ok((name, false)),
        Err(e) => Err(e.into()),
    }
}

/// `ALTER TYPE name ADD VALUE | RENAME VALUE | RENAME TO`.
pub async fn alter(engine: &Engine, instance: &str, alter: &ast::AlterType) -> SqlResult<()> {
    let name = type_name(&alter.name)?;
    match &alter.operation {
        ast::AlterTypeOperation::AddValue(add) => {
            let position = match &add.position {
                None => LabelPosition::Last,
                Some(ast::AlterTypeAddValuePosition::Before(label)) => {
                    LabelPosition::Before(label.value.clone())
                }
                Some(ast::AlterTypeAddValuePosition::After(label)) => {
                    LabelPosition::After(label.value.clone())
                }
            };
            let added = engine
                .add_enum_label(
                    instance,
                    &name,
                    &add.value.value,
                    position,
                    add.if_not_exists,
                )
                .await?;
            if !added {
                tracing::info!(
                    "enum label \"{}\" already exists, skipping",
                    add.value.value
                );
            }
        }
        ast::AlterTypeOperation::RenameValue(rename) => {
            engine
                .rename_enum_label(instance, &name, &rename.from.value, &rename.to.value)
                .await?;
        }
        ast::AlterTypeOperation::Rename(rename) => {
            engine
                .rename_enum_type(instance, &name, &crate::sql::expr::fold(&rename.new_name))
                .await?;
        }
    }
    Ok(())
}

/// `DROP TYPE [IF EXISTS] names [CASCADE]`: a type a column is declared with is
/// 2BP01, with CASCADE too (dropping the columns is not supported).
pub async fn drop(
    engine: &Engine,
    instance: &str,
    if_exists: bool,
    names: &[ObjectName],
    cascade: bool,
) -> SqlResult<()> {
    let names = names.iter().map(type_name).collect::<SqlResult<Vec<_>>>()?;
    for name in &names {
        if engine.enum_type(instance, name).is_none() && !if_exists {
            return Err(EngineError::TypeNotFound { name: name.clone() }.into());
        }
    }
    for name in &names {
        match engine.drop_enum_type(instance, name).await {
            Err(EngineError::TypeNotFound { .. }) if if_exists => {}
            Err(e @ EngineError::TypeInUse { .. }) if cascade => {
                return Err(SqlError::unsupported(format!(
                    "DROP TYPE ... CASCADE would drop the columns of the type, which is not \
                     supported; drop them first ({e})"
                )))
            }
            other => other?,
        }
    }
    Ok(())
}

/// The enum type a column declared `data_type` has, if `data_type` names one.
pub fn declared_enum(engine: &Engine, instance: &str, data_type: &DataType) -> Option<SqlType> {
    let DataType::Custom(name, modifiers) = data_type else {
        return None;
    };
    if !modifiers.is_empty() {
        return None;
    }
    let name = type_name(name).ok()?;
    let meta = engine.enum_type(instance, &name)?;
    Some(SqlType::enum_of(meta.id))
}

/// The type a column is declared with: an enum type's, or a built-in one's. An array
/// of an enum type is 0A000.
pub fn column_type(engine: &Engine, instance: &str, data_type: &DataType) -> SqlResult<SqlType> {
    if let DataType::Array(ast::ArrayElemTypeDef::SquareBracket(element, _)) = data_type {
        if declared_enum(engine, instance, element).is_some() {
            return Err(SqlError::unsupported(format!(
                "a column of type {data_type}: arrays of enum types are not supported yet"
            )));
        }
    }
    match declared_enum(engine, instance, data_type) {
        Some(ty) => Ok(ty),
        None => super::column_type(data_type),
    }
}
