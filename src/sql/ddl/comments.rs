//! `COMMENT ON TABLE` and `COMMENT ON COLUMN`: the text is kept in the table's catalog
//! entry, listed in `pg_description` and answered by `obj_description` and
//! `col_description` (psql's `\d+` and `\dt+`, ORMs' reflection). `IS NULL` or `IS ''`
//! removes it, as in PostgreSQL. Comments on other objects (indexes, sequences,
//! constraints, databases, ...) are refused: pgwide has nowhere to show them.

use super::table_name;
use crate::engine::Engine;
use crate::sql::expr::fold;
use crate::sql::sql_types::{SqlError, SqlResult};
use sqlparser::ast::{self, CommentObject, ObjectName};

/// What a `COMMENT ON` names: a table, or a column of one.
#[derive(Debug, Clone, PartialEq)]
pub struct Commented {
    pub table: String,
    pub column: Option<String>,
}

/// The table (and column) `COMMENT ON <object_type> <name>` comments on.
pub fn commented(object_type: &CommentObject, name: &ObjectName) -> SqlResult<Commented> {
    match object_type {
        CommentObject::Table => Ok(Commented {
            table: table_name(name)?,
            column: None,
        }),
        CommentObject::Column => {
            let Some((column, table)) = name.0.split_last().filter(|(_, t)| !t.is_empty()) else {
                return Err(SqlError::syntax(format!(
                    "column name must be qualified: {name}"
                )));
            };
            let column = match column {
                ast::ObjectNamePart::Identifier(ident) => fold(ident),
                other => return Err(SqlError::syntax(format!("bad column name {other}"))),
            };
            Ok(Commented {
                table: table_name(&ObjectName(table.to_vec()))?,
                column: Some(column),
            })
        }
        other => Err(SqlError::unsupported(format!(
            "COMMENT ON {other} is not supported: pgwide keeps comments on tables and \
             columns only"
        ))),
    }
}

/// Sets or (with `None` or an empty text) removes the comment.
pub async fn set(
    engine: &Engine,
    instance: &str,
    target: &Commented,
    comment: Option<&str>,
) -> SqlResult<()> {
    let comment = comment.filter(|c| !c.is_empty()).map(str::to_string);
    engine
        .set_comment(instance, &target.table, target.column.as_deref(), comment)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn target(sql: &str) -> SqlResult<Commented> {
        let statement = Parser::parse_sql(&PostgreSqlDialect {}, sql)
            .map_err(|e| SqlError::syntax(e.to_string()))?
            .remove(0);
        let ast::Statement::Comment {
            object_type,
            object_name,
            ..
        } = statement
        else {
            return Err(SqlError::syntax("not a COMMENT"));
        };
        commented(&object_type, &object_name)
    }

    #[test]
    fn names_a_table_or_a_qualified_column() -> SqlResult<()> {
        let column = |table: &str, column: &str| Commented {
            table: table.into(),
            column: Some(column.into()),
        };
        assert_eq!(
            target("COMMENT ON TABLE public.\"Users\" IS 'x'")?,
            Commented {
                table: "Users".into(),
                column: None
            }
        );
        assert_eq!(
            target("COMMENT ON COLUMN t.Email IS 'x'")?,
            column("t", "email")
        );
        assert_eq!(
            target("COMMENT ON COLUMN public.t.a IS NULL")?,
            column("t", "a")
        );
        assert!(target("COMMENT ON COLUMN a IS 'x'").is_err());
        let refused = target("COMMENT ON INDEX i IS 'x'").map(|_| ());
        assert!(
            matches!(refused, Err(SqlError::Unsupported(_))),
            "{refused:?}"
        );
        Ok(())
    }
}
