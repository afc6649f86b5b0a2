//! DDL: CREATE/ALTER/DROP TABLE and CREATE/DROP DATABASE, mapped onto the engine's
//! catalog (tables with 1-4 PK columns, options in `WITH (...)`).

pub mod checks;
mod column_types;
pub mod comments;
pub mod defaults;
pub mod drop_column;
pub mod enum_types;
pub mod foreign_keys;
pub mod indexes;
mod primary_key;
pub mod rename_column;
pub mod schemas;
pub mod sequences;
mod unenforced;

use super::expr::fold;
use super::sql_types::{sql_type, OutputColumn, SqlError, SqlResult, SqlType};
use super::values::{declared_type, integer_width, sql_pk_type, sql_value_type};
use crate::engine::{
    AttrColumn, Declared, Direction, Engine, EngineError, Generated, OptionValue, PkBound,
    PkColumn, PkType, RangeRequest, SqlKind, TableSpec,
};
use crate::sqlstate::SqlState;
use sqlparser::ast::{
    self, AlterTableOperation, ColumnOption, CreateTable, DataType, Expr, ObjectName, SqlOption,
    TableConstraint,
};

/// The hidden PK of a table created without one.
pub const ROWID: &str = "_rowid";

fn pk_type(column: &str, data_type: &DataType) -> SqlResult<PkType> {
    let bad = || -> SqlError {
        EngineError::BadPkType {
            column: column.into(),
            given: data_type.to_string(),
        }
        .into()
    };
    sql_pk_type(column_type(data_type).map_err(|_| bad())?).ok_or_else(bad)
}

/// The last part of an object name, folded (`public.t` and `t` are the same table).
pub fn object_name(name: &ObjectName) -> SqlResult<(Option<String>, String)> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(ident) => Ok(fold(ident)),
            other => Err(SqlError::unsupported(format!(
                "name {other} is not supported"
            ))),
        })
        .collect::<SqlResult<_>>()?;
    match parts.as_slice() {
        [name] => Ok((None, name.clone())),
        [schema, name] => Ok((Some(schema.clone()), name.clone())),
        [_, schema, name] => Ok((Some(schema.clone()), name.clone())),
        _ => Err(SqlError::syntax(format!("bad name {name}"))),
    }
}

/// A table name in the `public` schema (the only one holding user tables).
pub fn table_name(name: &ObjectName) -> SqlResult<String> {
    match object_name(name)? {
        (None, n) => Ok(n),
        (Some(schema), n) if schema == "public" => Ok(n),
        (Some(schema), n) => Err(SqlError::new(
            SqlState::UndefinedTable,
            format!("relation \"{schema}.{n}\" does not exist"),
        )),
    }
}

/// Table options from `WITH (...)` / `SET (...)`.
pub fn options(list: &[SqlOption]) -> SqlResult<Vec<(String, OptionValue)>> {
    list.iter()
        .map(|option| match option {
            SqlOption::KeyValue { key, value } => Ok((fold(key), option_value(value)?)),
            other => Err(SqlError::syntax(format!("bad table option {other}"))),
        })
        .collect()
}

fn option_value(value: &Expr) -> SqlResult<OptionValue> {
    let bad = || {
        SqlError::new(
            SqlState::InvalidParameterValue,
            format!("invalid option value {value}"),
        )
    };
    Ok(match value {
        Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => OptionValue::Integer(n.parse().map_err(|_| bad())?),
            ast::Value::Boolean(b) => OptionValue::Boolean(*b),
            ast::Value::SingleQuotedString(s) => OptionValue::Text(s.clone()),
            _ => return Err(bad()),
        },
        Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => match option_value(expr)? {
            OptionValue::Integer(i) => OptionValue::Integer(-i),
            _ => return Err(bad()),
        },
        Expr::Identifier(ident) => OptionValue::Text(ident.value.clone()),
        _ => return Err(bad()),
    })
}

/// CREATE TABLE; returns the command tag.
pub async fn create_table(engine: &Engine, instance: &str, create: &CreateTable) -> SqlResult<()> {
    let name = table_name(&create.name)?;
    unenforced::check_table(create)?;
    if create.query.is_some() {
        return Err(SqlError::unsupported(
            "CREATE TABLE ... AS SELECT is not supported yet",
        ));
    }
    let mut pk_names: Vec<String> = Vec::new();
    let mut pk_name = None;
    for column in &create.columns {
        for option in &column.options {
            let ColumnOption::PrimaryKey(pk) = &option.option else {
                continue;
            };
            if !pk_names.is_empty() {
                return Err(EngineError::PrimaryKeyExists { table: name }.into());
            }
            pk_name = primary_key::key_columns(pk, option.name.as_ref(), &name)?.0;
            pk_names.push(fold(&column.name));
        }
    }
    for constraint in &create.constraints {
        if let TableConstraint::PrimaryKey(pk) = constraint {
            if !pk_names.is_empty() {
                return Err(EngineError::PrimaryKeyExists { table: name }.into());
            }
            (pk_name, pk_names) = primary_key::key_columns(pk, None, &name)?;
        }
    }
    let mut spec = TableSpec {
        name: name.clone(),
        options: match &create.table_options {
            ast::CreateTableOptions::With(list) => options(list)?,
            ast::CreateTableOptions::None => Vec::new(),
            other => {
                return Err(SqlError::syntax(format!(
                    "unsupported table options {other}"
                )))
            }
        },
        pk_name,
        ..TableSpec::default()
    };
    for pk_name in &pk_names {
        let column = create
            .columns
            .iter()
            .find(|c| fold(&c.name) == *pk_name)
            .ok_or_else(|| {
                SqlError::new(
                    SqlState::UndefinedColumn,
                    format!("column \"{pk_name}\" named in key does not exist"),
                )
            })?;
        spec.pk.push(PkColumn {
            name: pk_name.clone(),
            ty: pk_type(pk_name, &column.data_type)?,
        });
    }
    if spec.pk.is_empty() {
        spec.auto_rowid = true;
        spec.pk.push(PkColumn {
            name: ROWID.into(),
            ty: PkType::Integer,
        });
    }
    let mut generated = Vec::new();
    for column in &create.columns {
        let column_name = fold(&column.name);
        let ty = enum_types::column_type(engine, instance, &column.data_type)?;
        let generator = sequences::generated_column(column, ty)?;
        spec.column_order.push(column_name.clone());
        spec.declare(
            &column_name,
            declared(
                ty,
                Some(&column.data_type),
                is_not_null(column) || generator.is_some(),
            )?,
        );
        if pk_names.contains(&column_name) && time_precision(&column.data_type).is_some() {
            return Err(time_precision_refusal(&column.data_type));
        }
        if let Some(default) = defaults::declared_default(column, ty, generator.is_some())? {
            spec.defaults.insert(column_name.clone(), default);
        }
        generated.extend(generator);
        if pk_names.contains(&column_name) {
            continue;
        }
        spec.columns.push(AttrColumn {
            name: column_name,
            ty: sql_value_type(ty),
        });
    }
    if spec.auto_rowid {
        spec.column_order.insert(0, ROWID.into());
    }
    let uniques = indexes::unique_constraints(create)?;
    let references = foreign_keys::declared_in(create)?;
    let checks = checks::declared_in(create)?;
    if create.if_not_exists && engine.table(instance, &name).is_ok() {
        return Ok(());
    }
    // The sequences first, so the table never lacks one; dropped again if the table
    // cannot be made.
    let mut made = Vec::new();
    for column in &generated {
        let sequence = sequences::create_for_column(engine, instance, &name, column).await;
        let sequence = match sequence {
            Ok(sequence) => sequence,
            Err(e) => {
                drop_sequences(engine, instance, &made).await;
                return Err(e);
            }
        };
        made.push(sequence.clone());
        spec.generated.insert(
            column.column.clone(),
            Generated {
                sequence,
                kind: column.kind,
            },
        );
    }
    match engine.create_table(instance, spec).await {
        Ok(_) => {
            let constrained = async {
                for unique in uniques {
                    indexes::create_unique_constraint(engine, instance, &name, unique).await?;
                }
                for reference in references {
                    foreign_keys::add(engine, instance, &name, reference).await?;
                }
                for check in checks {
                    checks::add(engine, instance, &name, check).await?;
                }
                Ok::<(), SqlError>(())
            };
            if let Err(e) = constrained.await {
                if let Err(undo) = engine.drop_table(instance, &name).await {
                    tracing::warn!(table = %name, error = %undo, "could not drop a table whose constraint failed");
                }
                return Err(e);
            }
            Ok(())
        }
        Err(e) => {
            drop_sequences(engine, instance, &made).await;
            match e {
                EngineError::TableExists { .. } if create.if_not_exists => Ok(()),
                e => Err(e.into()),
            }
        }
    }
}

/// A key column declared with a fractional-second precision (`timestamp(3)`).
fn time_precision_refusal(data_type: impl std::fmt::Display) -> SqlError {
    SqlError::unsupported(format!(
        "a key column of type {data_type} (its values would have to be rounded before they \
         are keys; TIMESTAMP without a precision works)"
    ))
}

/// Drops sequences made for a table that could not be made after all.
async fn drop_sequences(engine: &Engine, instance: &str, names: &[String]) {
    for name in names {
        if let Err(e) = engine.drop_sequence(instance, name).await {
            tracing::warn!(sequence = name, "dropping an unused sequence failed: {e}");
        }
    }
}

/// The SQL type of a declared column type, `SERIAL`'s integer types included, and a
/// `TIMESTAMP(p)`'s (whose precision the column keeps, see `time_precision`).
fn column_type(data_type: &DataType) -> SqlResult<SqlType> {
    if let Some(ty) = sequences::serial_type(data_type) {
        return Ok(ty);
    }
    match data_type {
        DataType::Timestamp(Some(_), zone) => sql_type(&DataType::Timestamp(None, *zone)),
        other => sql_type(other),
    }
}

/// The table `CREATE TABLE ... AS SELECT` makes for a query's result `columns`: its PK
/// is the `primary_key = 'a,b'` option (a Table Store table needs one, and PostgreSQL
/// syntax has no place for it in CTAS), else the hidden `_rowid`.
pub fn table_as_spec(create: &CreateTable, columns: &[OutputColumn]) -> SqlResult<TableSpec> {
    let name = table_name(&create.name)?;
    unenforced::check_table(create)?;
    let mut options = match &create.table_options {
        ast::CreateTableOptions::With(list) => options(list)?,
        ast::CreateTableOptions::None => Vec::new(),
        other => {
            return Err(SqlError::syntax(format!(
                "unsupported table options {other}"
            )))
        }
    };
    let mut pk_names = Vec::new();
    if let Some(at) = options.iter().position(|(k, _)| k == "primary_key") {
        let (_, value) = options.remove(at);
        let OptionValue::Text(list) = value else {
            return Err(SqlError::new(
                SqlState::InvalidParameterValue,
                format!("primary_key must be a list of column names, not {value}"),
            ));
        };
        pk_names = list
            .split(',')
            .map(|n| n.trim().to_ascii_lowercase())
            .collect::<Vec<_>>();
    }
    let mut spec = TableSpec {
        name: name.clone(),
        options,
        ..TableSpec::default()
    };
    for (n, column) in columns.iter().enumerate() {
        if columns[..n].iter().any(|c| c.name == column.name) {
            return Err(SqlError::new(
                SqlState::DuplicateColumn,
                format!("column \"{}\" specified more than once", column.name),
            ));
        }
    }
    for pk_name in &pk_names {
        let column = columns.iter().find(|c| c.name == *pk_name).ok_or_else(|| {
            SqlError::new(
                SqlState::UndefinedColumn,
                format!("column \"{pk_name}\" named in key does not exist"),
            )
        })?;
        let ty = sql_pk_type(column.ty).ok_or_else(|| EngineError::BadPkType {
            column: pk_name.clone(),
            given: column.ty.name().to_string(),
        })?;
        spec.pk.push(PkColumn {
            name: pk_name.clone(),
            ty,
        });
    }
    if spec.pk.is_empty() {
        spec.auto_rowid = true;
        spec.pk.push(PkColumn {
            name: ROWID.into(),
            ty: PkType::Integer,
        });
        spec.column_order.push(ROWID.into());
    }
    for column in columns {
        spec.column_order.push(column.name.clone());
        spec.declare(&column.name, declared(column.ty, None, false)?);
        if !pk_names.contains(&column.name) {
            spec.columns.push(AttrColumn {
                name: column.name.clone(),
                ty: sql_value_type(column.ty),
            });
        }
    }
    Ok(spec)
}

/// Whether a column definition says `NOT NULL`.
fn is_not_null(column: &ast::ColumnDef) -> bool {
    column
        .options
        .iter()
        .any(|option| matches!(option.option, ColumnOption::NotNull))
}

/// Whether `table` has a row a reader sees.
async fn has_rows(engine: &Engine, table: &crate::engine::TableMeta) -> SqlResult<bool> {
    has_row_where(engine, table, Default::default()).await
}

/// Whether a row of `table` a reader sees has no value in `column`.
async fn has_null_in(
    engine: &Engine,
    table: &crate::engine::TableMeta,
    column: &str,
) -> SqlResult<bool> {
    let read = crate::engine::ReadOptions {
        columns: Some(vec![column.to_string()]),
        filter: Some(crate::engine::ColumnCondition::Exists {
            column: column.to_string(),
            present: false,
        }),
        ..Default::default()
    };
    has_row_where(engine, table, read).await
}

/// Whether `table` has a row that `read` (its filter) returns.
async fn has_row_where(
    engine: &Engine,
    table: &crate::engine::TableMeta,
    read: crate::engine::ReadOptions,
) -> SqlResult<bool> {
    any_row(engine, table, read, 1, |_| true).await
}

/// Whether `table` has a row that `read` returns and `test` holds for, read `page` rows
/// at a time.
pub(super) async fn any_row(
    engine: &Engine,
    table: &crate::engine::TableMeta,
    read: crate::engine::ReadOptions,
    page: usize,
    test: impl Fn(&crate::engine::Row) -> bool,
) -> SqlResult<bool> {
    let mut start = vec![PkBound::InfMin; table.pk.len()];
    loop {
        let page = engine
            .get_range(
                table,
                &RangeRequest {
                    start,
                    end: vec![PkBound::InfMax; table.pk.len()],
                    direction: Direction::Forward,
                    limit: Some(page),
                    read: read.clone(),
                },
            )
            .await?;
        if page.rows.iter().any(&test) {
            return Ok(true);
        }
        // A page of expired rows only says where the range goes on.
        match page.next_start {
            Some(next) => start = next.into_iter().map(PkBound::Value).collect(),
            None => return Ok(false),
        }
    }
}

/// What a column declared `ty` (spelled `data_type`, whose modifiers say a
/// `VARCHAR(n)`'s limit or a `TIMESTAMP(p)`'s precision; `None` for a query's column)
/// and `NOT NULL` or not keeps beyond its stored value type.
fn declared(ty: SqlType, data_type: Option<&DataType>, not_null: bool) -> SqlResult<Declared> {
    let (max_chars, time_precision) = match data_type {
        Some(data_type) => (max_chars(data_type)?, time_precision(data_type)),
        None => (None, None),
    };
    let varchar = matches!(
        data_type,
        Some(DataType::Varchar(_) | DataType::CharacterVarying(_))
    );
    Ok(Declared {
        not_null,
        varchar,
        width: integer_width(ty),
        single_precision: ty == SqlType::Float4,
        max_chars,
        time_precision,
        kind: match ty {
            SqlType::Timestamp => Some(SqlKind::Timestamp),
            SqlType::TimestampTz => Some(SqlKind::TimestampTz),
            SqlType::Date => Some(SqlKind::Date),
            SqlType::Uuid => Some(SqlKind::Uuid),
            SqlType::Json => Some(SqlKind::Json),
            SqlType::Time => Some(SqlKind::Time),
            SqlType::Array(of) => Some(SqlKind::Array {
                element: of.element().oid(),
            }),
            SqlType::Interval => Some(SqlKind::Interval),
            SqlType::Jsonb => Some(SqlKind::Jsonb),
            SqlType::Enum(_) => ty.enum_type_id().map(|type_id| SqlKind::Enum { type_id }),
            SqlType::Numeric(Some(typmod)) => Some(SqlKind::Numeric {
                precision: typmod.precision,
                scale: typmod.scale,
            }),
            // Its values would each keep their own scale, which the query engine's
            // decimals (one scale a column) cannot show as PostgreSQL does.
            SqlType::Numeric(None) => {
                return Err(SqlError::unsupported(
                    "a NUMERIC column without a precision and scale is not supported yet: \
                     declare NUMERIC(p,s), with p at most 28",
                ))
            }
            _ => None,
        },
    })
}

/// A `TIMESTAMP(p)`'s digits of a second when fewer than 6 (PostgreSQL keeps 6 at
/// most, and so does a larger `p`).
pub fn time_precision(data_type: &DataType) -> Option<u8> {
    match data_type {
        DataType::Timestamp(Some(p), _) if *p < 6 => Some(*p as u8),
        _ => None,
    }
}

/// The length limit of a `VARCHAR(n)` (`CHARACTER VARYING(n)`), in characters; 0 is
/// 22023 as in PostgreSQL.
fn max_chars(data_type: &ast::DataType) -> SqlResult<Option<u32>> {
    let (ast::DataType::Varchar(Some(length)) | ast::DataType::CharacterVarying(Some(length))) =
        data_type
    else {
        return Ok(None);
    };
    let ast::CharacterLength::IntegerLength { length, .. } = length else {
        return Ok(None);
    };
    let refused = |why: &str| {
        Err(SqlError::new(
            SqlState::InvalidParameterValue,
            format!("length for type varchar {why}"),
        ))
    };
    match u32::try_from(*length) {
        Ok(0) => refused("must be at least 1"),
        Ok(limit) if limit <= 10_485_760 => Ok(Some(limit)),
        _ => refused("cannot exceed 10485760"),
    }
}

/// ALTER TABLE ... SET (...) / ADD COLUMN / ALTER COLUMN / DROP COLUMN / RENAME TO;
/// returns the columns it dropped, whose cells the caller deletes.
pub async fn alter_table(
    engine: &Engine,
    instance: &str,
    alter: &ast::AlterTable,
) -> SqlResult<Vec<drop_column::DroppedColumn>> {
    let name = table_name(&alter.name)?;
    let mut dropped = Vec::new();
    if alter.if_exists && engine.table(instance, &name).is_err() {
        return Ok(dropped);
    }
    for operation in &alter.operations {
        match operation {
            AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let (old, new) = (fold(old_column_name), fold(new_column_name));
                rename_column::rename_column(engine, instance, &name, &old, &new).await?;
            }
            AlterTableOperation::DropColumn {
                column_names,
                if_exists,
                drop_behavior,
                ..
            } => {
                let cascade = matches!(drop_behavior, Some(ast::DropBehavior::Cascade));
                for column in column_names {
                    let gone =
                        drop_column::drop(engine, instance, &name, column, *if_exists, cascade)
                            .await?;
                    dropped.extend(gone);
                }
            }
            AlterTableOperation::SetOptionsParens { options: list }
            | AlterTableOperation::SetTblProperties {
                table_properties: list,
            } => {
                engine
                    .alter_table_options(instance, &name, &options(list)?)
                    .await?;
            }
            AlterTableOperation::AddColumn {
                if_not_exists,
                column_def,
                ..
            } => {
                unenforced::check_column(column_def)?;
                let primary_key = column_def
                    .options
                    .iter()
                    .any(|o| matches!(o.option, ColumnOption::PrimaryKey(_)));
                if primary_key {
                    if !engine.table(instance, &name)?.auto_rowid {
                        return Err(SqlError::new(
                            SqlState::InvalidTableDefinition,
                            format!("multiple primary keys for table \"{name}\" are not allowed"),
                        ));
                    }
                    return Err(SqlError::unsupported(format!(
                        "ADD COLUMN \"{}\" ... PRIMARY KEY is not supported: add the column, \
                         fill it, then ALTER TABLE {name} ADD PRIMARY KEY ({})",
                        fold(&column_def.name),
                        fold(&column_def.name)
                    )));
                }
                let ty = enum_types::column_type(engine, instance, &column_def.data_type)?;
                // The rows already there would need values from the sequence.
                if sequences::generated_column(column_def, ty)?.is_some() {
                    return Err(SqlError::unsupported(format!(
                        "ADD COLUMN of a SERIAL or identity column (\"{}\") is not supported \
                         yet; declare it in CREATE TABLE",
                        fold(&column_def.name)
                    )));
                }
                let default = defaults::declared_default(column_def, ty, false)?;
                // The rows already there would need the default written into them.
                if default.is_some() && has_rows(engine, &*engine.table(instance, &name)?).await? {
                    return Err(SqlError::unsupported(format!(
                        "ADD COLUMN \"{}\" with a DEFAULT on a table that has rows is not \
                         supported yet (pgwide would have to write the default into every \
                         row); add the column, then UPDATE the rows",
                        fold(&column_def.name)
                    )));
                }
                // The rows already there have no value in the new column.
                let not_null = is_not_null(column_def);
                if not_null && has_rows(engine, &*engine.table(instance, &name)?).await? {
                    return Err(SqlError::new(
                        SqlState::NotNullViolation,
                        format!(
                            "column \"{}\" of relation \"{name}\" contains null values",
                            fold(&column_def.name)
                        ),
                    ));
                }
                let column = AttrColumn {
                    name: fold(&column_def.name),
                    ty: sql_value_type(ty),
                };
                match engine
                    .add_column(
                        instance,
                        &name,
                        column,
                        declared(ty, Some(&column_def.data_type), not_null)?,
                        default,
                    )
                    .await
                {
                    Err(EngineError::ColumnExists { .. }) if *if_not_exists => {}
                    Err(EngineError::ColumnExists { name: column }) => {
                        return Err(SqlError::new(
                            SqlState::DuplicateColumn,
                            format!("column \"{column}\" of relation \"{name}\" already exists"),
                        ))
                    }
                    other => {
                        other?;
                    }
                }
                for option in &column_def.options {
                    match &option.option {
                        ColumnOption::Unique(constraint) => {
                            let unique = indexes::unique_columns(
                                constraint,
                                option.name.as_ref(),
                                Some(&column_def.name),
                            )?;
                            indexes::create_unique_constraint(engine, instance, &name, unique)
                                .await?;
                        }
                        ColumnOption::ForeignKey(constraint) => {
                            let reference = foreign_keys::declared(
                                constraint,
                                option.name.as_ref(),
                                Some(&column_def.name),
                            )?;
                            foreign_keys::add(engine, instance, &name, reference).await?;
                        }
                        ColumnOption::Check(constraint) => {
                            let check = checks::declared(
                                constraint,
                                option.name.as_ref(),
                                Some(&column_def.name),
                            )?;
                            checks::add(engine, instance, &name, check).await?;
                        }
                        _ => {}
                    }
                }
            }
            AlterTableOperation::AlterColumn {
                column_name,
                op: ast::AlterColumnOperation::SetDefault { value },
            } => {
                let table = engine.table(instance, &name)?;
                let column = fold(column_name);
                let ty = declared_type(&table, &column).ok_or_else(|| {
                    SqlError::new(
                        SqlState::UndefinedColumn,
                        format!("column \"{column}\" of relation \"{name}\" does not exist"),
                    )
                })?;
                if table.generated.contains_key(&column) {
                    return Err(SqlError::unsupported(format!(
                        "SET DEFAULT on column \"{column}\", whose values a sequence \
                         generates, is not supported yet"
                    )));
                }
                let default = defaults::check(&column, value, ty)?;
                engine
                    .set_column_default(instance, &name, &column, Some(default))
                    .await?;
            }
            AlterTableOperation::AlterColumn {
                column_name,
                op:
                    ast::AlterColumnOperation::SetDataType {
                        data_type, using, ..
                    },
            } => {
                column_types::alter_type(
                    engine,
                    instance,
                    &alter.name,
                    column_name,
                    data_type,
                    using.as_ref(),
                )
                .await?;
            }
            AlterTableOperation::AlterColumn {
                column_name,
                op: ast::AlterColumnOperation::SetNotNull,
            } => {
                let column = fold(column_name);
                let table = engine.table(instance, &name)?;
                if table.column(&column).is_some() && has_null_in(engine, &table, &column).await? {
                    return Err(SqlError::new(
                        SqlState::NotNullViolation,
                        format!("column \"{column}\" of relation \"{name}\" contains null values"),
                    ));
                }
                engine.set_not_null(instance, &name, &column, true).await?;
            }
            AlterTableOperation::AlterColumn {
                column_name,
                op: ast::AlterColumnOperation::DropNotNull,
            } => {
                engine
                    .set_not_null(instance, &name, &fold(column_name), false)
                    .await?;
            }
            AlterTableOperation::AlterColumn {
                column_name,
                op: ast::AlterColumnOperation::DropDefault,
            } => {
                let column = fold(column_name);
                let table = engine.table(instance, &name)?;
                if table
                    .generated
                    .get(&column)
                    .is_some_and(|g| g.kind == crate::engine::GeneratedKind::Serial)
                {
                    return Err(SqlError::unsupported(format!(
                        "DROP DEFAULT on the SERIAL column \"{column}\" is not supported yet"
                    )));
                }
                engine
                    .set_column_default(instance, &name, &column, None)
                    .await?;
            }
            AlterTableOperation::RenameTable { table_name: kind } => {
                let (ast::RenameTableNameKind::To(new_name), 1) = (kind, alter.operations.len())
                else {
                    return Err(SqlError::syntax(format!(
                        "syntax error at or near \"{}\"",
                        match kind {
                            ast::RenameTableNameKind::As(_) => "AS",
                            ast::RenameTableNameKind::To(_) => "RENAME",
                        }
                    )));
                };
                let new_name = table_name(new_name)?;
                match engine.rename_table(instance, &name, &new_name).await {
                    Err(EngineError::TableExists { .. }) => {
                        return Err(SqlError::new(
                            SqlState::DuplicateTable,
                            format!("relation \"{new_name}\" already exists"),
                        ))
                    }
                    other => {
                        other?;
                    }
                }
            }
            AlterTableOperation::DropConstraint {
                if_exists,
                name: constraint,
                drop_behavior: None | Some(ast::DropBehavior::Restrict),
            } => {
                // An index dropped cannot be made again if a later operation failed.
                if alter.operations.len() > 1 {
                    return Err(SqlError::unsupported(
                        "DROP CONSTRAINT beside other operations in one ALTER TABLE is not \
                         supported yet: run it on its own",
                    ));
                }
                indexes::drop_constraint(engine, instance, &name, constraint, *if_exists).await?;
            }
            AlterTableOperation::AddConstraint {
                constraint: TableConstraint::Unique(constraint),
                not_valid: false,
            } => {
                let unique = indexes::unique_columns(constraint, None, None)?;
                indexes::create_unique_constraint(engine, instance, &name, unique).await?;
            }
            AlterTableOperation::AddConstraint {
                constraint: TableConstraint::PrimaryKey(constraint),
                not_valid: false,
            } => {
                // Re-keying cannot be undone if a later operation failed.
                if alter.operations.len() > 1 {
                    return Err(SqlError::unsupported(
                        "ADD PRIMARY KEY beside other operations in one ALTER TABLE is not \
                         supported yet: run it on its own",
                    ));
                }
                primary_key::add(engine, instance, &alter.name, constraint).await?;
            }
            AlterTableOperation::AddConstraint {
                constraint: TableConstraint::Check(constraint),
                not_valid: false,
            } => {
                let check = checks::declared(constraint, None, None)?;
                checks::add(engine, instance, &name, check).await?;
            }
            AlterTableOperation::AddConstraint {
                constraint: TableConstraint::ForeignKey(constraint),
                not_valid: false,
            } => {
                let reference = foreign_keys::declared(constraint, None, None)?;
                foreign_keys::add(engine, instance, &name, reference).await?;
            }
            AlterTableOperation::OwnerTo { new_owner } => {
                owner_to(engine, instance, &name, new_owner)?;
            }
            other => {
                return Err(SqlError::unsupported(format!(
                    "ALTER TABLE {other} is not supported"
                )))
            }
        }
    }
    Ok(dropped)
}

/// `ALTER TABLE | VIEW | SEQUENCE name OWNER TO postgres`, which pg_dump writes for
/// every relation: pgwide's relations all belong to `postgres` (`pg_class.relowner`),
/// so that changes nothing; any other owner is refused (0A000).
pub fn owner_to(engine: &Engine, instance: &str, name: &str, owner: &ast::Owner) -> SqlResult<()> {
    let exists = engine.table(instance, name).is_ok()
        || engine.sequence(instance, name).is_ok()
        || engine.view(instance, name).is_some();
    if !exists {
        return Err(SqlError::new(
            SqlState::UndefinedTable,
            format!("relation \"{name}\" does not exist"),
        ));
    }
    match owner {
        ast::Owner::Ident(role) if fold(role) == crate::sql::pg_catalog::OWNER => Ok(()),
        other => Err(SqlError::unsupported(format!(
            "OWNER TO {other} is not supported: every relation in pgwide belongs to {}",
            crate::sql::pg_catalog::OWNER
        ))),
    }
}

/// DROP TABLE / DROP DATABASE.
pub async fn drop(
    engine: &Engine,
    instance: &str,
    object_type: ast::ObjectType,
    if_exists: bool,
    names: &[ObjectName],
    cascade: bool,
) -> SqlResult<&'static str> {
    match object_type {
        ast::ObjectType::Table => {
            let mut tables = Vec::with_capacity(names.len());
            for name in names {
                let name = table_name(name)?;
                if engine.table(instance, &name).is_ok() {
                    tables.push(name);
                }
            }
            match cascade {
                true => foreign_keys::drop_referencing(engine, instance, &tables).await?,
                false => foreign_keys::refuse_referenced(engine, instance, &tables, false)?,
            }
            for name in names {
                match engine.drop_table(instance, &table_name(name)?).await {
                    Err(EngineError::TableNotFound { .. }) if if_exists => {}
                    other => other?,
                }
            }
            Ok("DROP TABLE")
        }
        ast::ObjectType::Database => {
            for name in names {
                let (_, db) = object_name(name)?;
                if db == instance {
                    return Err(SqlError::new(
                        SqlState::ObjectInUse,
                        "cannot drop the currently open database",
                    ));
                }
                match engine.drop_instance(&db).await {
                    Err(EngineError::InstanceNotFound { .. }) if if_exists => {}
                    other => other?,
                }
            }
            Ok("DROP DATABASE")
        }
        ast::ObjectType::Sequence => {
            sequences::drop(engine, instance, if_exists, names).await?;
            Ok("DROP SEQUENCE")
        }
        ast::ObjectType::Index => {
            indexes::drop(engine, instance, if_exists, names).await?;
            Ok("DROP INDEX")
        }
        ast::ObjectType::Schema => {
            schemas::drop(names, if_exists)?;
            Ok("DROP SCHEMA")
        }
        ast::ObjectType::Type => {
            enum_types::drop(engine, instance, if_exists, names, cascade).await?;
            Ok("DROP TYPE")
        }
        other => Err(SqlError::unsupported(format!(
            "DROP {other} is not supported"
        ))),
    }
}

/// `<base>_<suffix>` cut to PostgreSQL's 63 bytes, or with a number after `suffix`
/// (`fkey1`, `fkey2`, ...) while `taken` says the name is.
pub fn numbered_name(base: &str, suffix: &str, taken: impl Fn(&str) -> bool) -> String {
    (0..)
        .map(|n| {
            let suffix = match n {
                0 => suffix.to_string(),
                n => format!("{suffix}{n}"),
            };
            let mut base = base.to_string();
            while base.len() + 1 + suffix.len() > 63 {
                base.pop();
            }
            format!("{base}_{suffix}")
        })
        .find(|name| !taken(name))
        .unwrap_or_else(|| format!("{base}_{suffix}"))
}

/// The constraints of one kind a CREATE TABLE declares, on its columns (`on_column`
/// picks them from a column's options) and on the table (`on_table`), each read by
/// `read` with the name written before it and, for one on a column, the column.
pub fn declared_constraints<C, T>(
    create: &CreateTable,
    on_column: impl Fn(&ColumnOption) -> Option<&C>,
    on_table: impl Fn(&TableConstraint) -> Option<&C>,
    read: impl Fn(&C, Option<&ast::Ident>, Option<&ast::Ident>) -> SqlResult<T>,
) -> SqlResult<Vec<T>> {
    let mut found = Vec::new();
    for column in &create.columns {
        for option in &column.options {
            if let Some(constraint) = on_column(&option.option) {
                found.push(read(constraint, option.name.as_ref(), Some(&column.name))?);
            }
        }
    }
    for constraint in create.constraints.iter().filter_map(&on_table) {
        found.push(read(constraint, None, None)?);
    }
    Ok(found)
}
