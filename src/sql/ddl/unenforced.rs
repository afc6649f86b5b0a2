//! What a CREATE TABLE or ADD COLUMN may declare: only what pgwide enforces. A
//! constraint, type modifier or table kind it would store and then ignore is refused
//! with 0A000 instead, saying so: a schema that claims a rule nothing checks is worse
//! than an error.

use crate::sql::expr::fold;
use crate::sql::sql_types::{SqlError, SqlResult};
use sqlparser::ast::{self, ColumnDef, ColumnOption, CreateTable, DataType, TableConstraint};

fn refused(what: impl std::fmt::Display) -> SqlError {
    SqlError::unsupported(format!(
        "{what} is not supported yet: pgwide would not enforce it, and refuses what it \
         would ignore"
    ))
}

/// Refuses what `create` declares that pgwide would not enforce.
pub fn check_table(create: &CreateTable) -> SqlResult<()> {
    if create.or_replace {
        return Err(refused("CREATE OR REPLACE TABLE"));
    }
    if create.temporary {
        return Err(refused("a TEMPORARY table (dropped at the session's end)"));
    }
    if create.on_commit.is_some() {
        return Err(refused("ON COMMIT"));
    }
    if create.inherits.is_some() || create.partition_of.is_some() || create.partition_by.is_some() {
        return Err(refused(
            "table inheritance and partitioning (INHERITS, PARTITION)",
        ));
    }
    if create.like.is_some() {
        return Err(refused("CREATE TABLE ... LIKE"));
    }
    for constraint in &create.constraints {
        match constraint {
            TableConstraint::PrimaryKey(_) => {}
            TableConstraint::Unique(_) => return Err(refused("a UNIQUE constraint")),
            TableConstraint::ForeignKey(_) => return Err(refused("a FOREIGN KEY constraint")),
            TableConstraint::Check(_) => return Err(refused("a CHECK constraint")),
            other => return Err(refused(format!("the table constraint {other}"))),
        }
    }
    create.columns.iter().try_for_each(check_column)
}

/// Refuses what a column declares that pgwide would not enforce.
pub fn check_column(column: &ColumnDef) -> SqlResult<()> {
    let name = fold(&column.name);
    check_type(&name, &column.data_type)?;
    for option in &column.options {
        let what = match &option.option {
            // NOT NULL is kept and enforced (`ddl::declared`).
            ColumnOption::Null | ColumnOption::NotNull | ColumnOption::PrimaryKey(_) => continue,
            ColumnOption::Default(_) => "a DEFAULT".to_string(),
            ColumnOption::Unique(_) => "UNIQUE".to_string(),
            ColumnOption::ForeignKey(_) => "REFERENCES".to_string(),
            ColumnOption::Check(_) => "a CHECK constraint".to_string(),
            ColumnOption::Generated { .. } => "GENERATED (identity or computed)".to_string(),
            ColumnOption::Collation(collation) => format!("COLLATE {collation}"),
            other => other.to_string(),
        };
        return Err(refused(format!("{what} on column \"{name}\"")));
    }
    Ok(())
}

/// Refuses a declared type whose modifier or semantics pgwide would not keep: a length
/// limit it does not enforce (`NVARCHAR(3)`, `VARCHAR(MAX)`, `VARCHAR(3 OCTETS)`;
/// `VARCHAR(n)` it does, see `ddl::max_chars`) or blank-padded `CHAR`.
fn check_type(column: &str, data_type: &DataType) -> SqlResult<()> {
    let limited = match data_type {
        DataType::Varchar(Some(length)) | DataType::CharacterVarying(Some(length)) => {
            // A limit in characters; one in octets is not kept (nor PostgreSQL's).
            !matches!(
                length,
                ast::CharacterLength::IntegerLength {
                    unit: None | Some(ast::CharLengthUnits::Characters),
                    ..
                }
            )
        }
        DataType::Nvarchar(Some(_)) => true,
        DataType::Char(_) | DataType::Character(_) => {
            return Err(refused(format!(
                "the blank-padded type {data_type} of column \"{column}\" (TEXT or VARCHAR \
                 work)"
            )))
        }
        _ => false,
    };
    if limited {
        return Err(refused(format!(
            "the length limit of {data_type} on column \"{column}\" (VARCHAR or TEXT work)"
        )));
    }
    Ok(())
}
