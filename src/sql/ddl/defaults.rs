//! Column `DEFAULT`s. A default is declared in CREATE TABLE, ADD COLUMN or ALTER
//! COLUMN SET DEFAULT, checked there as PostgreSQL checks it (no column references, no
//! subqueries; a constant must suit the column's type), and kept in the catalog as the
//! expression's SQL text. An INSERT computes it by rewriting the statement before it is
//! planned: every column the INSERT leaves out that has a default is added with that
//! expression, and a `DEFAULT` item becomes it. The rewritten INSERT then takes the
//! usual paths (the fast path for constants; the query engine for `now()`,
//! `gen_random_uuid()`, ...), so a default is computed exactly as the same expression
//! written in the INSERT would be, on every INSERT form: VALUES, SELECT, `DEFAULT
//! VALUES`, `ON CONFLICT`.

use crate::engine::TableMeta;
use crate::sql::expr::{compile, fold, NoColumns, Params, Scalar};
use crate::sql::sql_types::{SqlError, SqlResult, SqlType};
use crate::sql::values::column_value;
use sqlparser::ast::{self, ColumnDef, ColumnOption, Expr, SetExpr};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

/// The `DEFAULT` `column` declares, checked, as the SQL text the catalog keeps.
/// `generated`: the column is an identity or serial column, which has its own.
pub fn declared_default(
    column: &ColumnDef,
    ty: SqlType,
    generated: bool,
) -> SqlResult<Option<String>> {
    let name = fold(&column.name);
    let default = column.options.iter().find_map(|o| match &o.option {
        ColumnOption::Default(expr) => Some(expr),
        _ => None,
    });
    let Some(default) = default else {
        return Ok(None);
    };
    if generated {
        return Err(SqlError::syntax(format!(
            "both default and identity specified for column \"{name}\""
        )));
    }
    check(&name, default, ty).map(Some)
}

/// `expr` as `column`'s default (of type `ty`), or the error PostgreSQL gives for it:
/// 0A000 for a column reference or a subquery, the conversion's error for a
/// constant the column cannot hold (`DEFAULT 'abc'` on an integer).
pub fn check(column: &str, expr: &Expr, ty: SqlType) -> SqlResult<String> {
    let mut refused = None;
    let _ = ast::visit_expressions(expr, |e| {
        refused = match e {
            Expr::Identifier(ident) if !is_value_keyword(&ident.value) => Some(
                SqlError::unsupported("cannot use column reference in DEFAULT expression"),
            ),
            Expr::CompoundIdentifier(_) => Some(SqlError::unsupported(
                "cannot use column reference in DEFAULT expression",
            )),
            Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => Some(
                SqlError::unsupported("cannot use subquery in DEFAULT expression"),
            ),
            _ => None,
        };
        match refused {
            Some(_) => ControlFlow::Break(()),
            None => ControlFlow::Continue(()),
        }
    });
    if let Some(error) = refused {
        return Err(error);
    }
    // A constant is converted now, so a default that can never be written fails here
    // rather than at every INSERT. Anything else (`now()`) is computed per INSERT.
    let mut params = Params::new(&[]);
    if let Ok(Scalar::Const(datum)) = compile(expr, &mut NoColumns, &mut params, Some(ty)) {
        column_value(datum, Some(ty)).map_err(|e| match e {
            SqlError::Statement { state, message } => SqlError::Statement {
                state,
                message: format!("{message} (the DEFAULT of column \"{column}\")"),
            },
            other => other,
        })?;
    }
    Ok(canonical_text(expr))
}

/// `expr` as PostgreSQL's deparser prints it where it differs from sqlparser's text:
/// a relation named by a `regclass` literal without schema `public` (the only schema;
/// pg_dump writes `nextval('public.s'::regclass)`) and the cast in lower case. So a
/// restored default reads back as the one that was dumped.
fn canonical_text(expr: &Expr) -> String {
    let mut expr = expr.clone();
    let _ = ast::visit_expressions_mut(&mut expr, |e| {
        if let Expr::Cast {
            expr: literal,
            data_type,
            ..
        } = e
        {
            if matches!(data_type, ast::DataType::Regclass) {
                *data_type = ast::DataType::Custom(
                    ast::ObjectName::from(vec![ast::Ident::new("regclass")]),
                    vec![],
                );
                if let Expr::Value(ast::ValueWithSpan {
                    value: ast::Value::SingleQuotedString(name),
                    ..
                }) = literal.as_mut()
                {
                    if let Some(bare) = name.strip_prefix("public.") {
                        *name = bare.to_string();
                    }
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    expr.to_string()
}

/// Words PostgreSQL reads as values, not columns, where sqlparser leaves an identifier.
fn is_value_keyword(word: &str) -> bool {
    [
        "current_timestamp",
        "current_date",
        "current_time",
        "localtimestamp",
        "localtime",
        "current_user",
        "session_user",
        "current_role",
        "current_schema",
        "current_catalog",
        "user",
    ]
    .iter()
    .any(|w| word.eq_ignore_ascii_case(w))
}

/// The expression of a default's stored text.
fn parse_default(text: &str) -> SqlResult<Expr> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(text)
        .and_then(|mut parser| parser.parse_expr())
        .map_err(|e| SqlError::internal(format!("a stored DEFAULT does not parse: {text}: {e}")))
}

/// `DEFAULT` as a VALUES item.
pub fn is_default_item(expr: &Expr) -> bool {
    matches!(expr, Expr::Identifier(ident)
        if ident.quote_style.is_none() && ident.value.eq_ignore_ascii_case("default"))
}

/// `insert` with `table`'s defaults filled in (see the module comment), or `None` when
/// it leaves out no column that has one and has no `DEFAULT` item for one. Nothing is
/// copied then: this runs for every INSERT.
pub fn fill_insert(insert: &ast::Insert, table: &TableMeta) -> SqlResult<Option<ast::Insert>> {
    let Some(source) = insert.source.as_deref() else {
        return default_values(insert, table);
    };
    if table.defaults.is_empty() {
        return Ok(None);
    }
    let named = target_columns(insert, source, table)?;
    let omitted: Vec<&String> = table
        .column_order
        .iter()
        .filter(|c| table.defaults.contains_key(*c) && !named.contains(c))
        .collect();
    let defaulted_item = |row: &[Expr]| {
        row.iter()
            .zip(&named)
            .any(|(item, column)| is_default_item(item) && table.defaults.contains_key(column))
    };
    let default_items = match &*source.body {
        SetExpr::Values(values) => values.rows.iter().any(|row| defaulted_item(row)),
        _ => false,
    };
    if omitted.is_empty() && !default_items {
        return Ok(None);
    }
    let omitted_defaults = omitted
        .iter()
        .map(|c| parse_default(&table.defaults[*c]))
        .collect::<SqlResult<Vec<_>>>()?;
    let mut insert = insert.clone();
    let Some(source) = insert.source.as_mut() else {
        return Ok(None);
    };
    match &mut *source.body {
        SetExpr::Values(values) => {
            for row in &mut values.rows {
                for (item, column) in row.iter_mut().zip(&named) {
                    if let (true, Some(text)) = (is_default_item(item), table.defaults.get(column))
                    {
                        *item = parse_default(text)?;
                    }
                }
                row.extend(omitted_defaults.iter().cloned());
            }
        }
        _ => {
            // INSERT ... SELECT: the query's rows, each with the defaults after them.
            let defaults = omitted_defaults
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            // The query's columns renamed after their targets, which are distinct, so
            // no name of theirs can clash with another.
            let names = named
                .iter()
                .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "SELECT \"*SELECT*\".*, {defaults} FROM ({source}) AS \"*SELECT*\" ({names})"
            );
            *source = Parser::new(&PostgreSqlDialect {})
                .try_with_sql(&sql)
                .and_then(|mut parser| parser.parse_query())
                .map_err(|e| SqlError::internal(format!("not a query: {sql}: {e}")))?;
        }
    }
    insert.columns = named
        .iter()
        .chain(omitted.iter().copied())
        .map(|c| quoted(c))
        .collect();
    Ok(Some(insert))
}

/// `INSERT ... DEFAULT VALUES` as one VALUES row of the defaults (generated columns
/// generate theirs when the INSERT is planned); `None` for an INSERT with a column
/// list and no source, which is not one.
fn default_values(insert: &ast::Insert, table: &TableMeta) -> SqlResult<Option<ast::Insert>> {
    if !insert.columns.is_empty() {
        return Ok(None);
    }
    let columns: Vec<String> = visible_columns(table)
        .into_iter()
        .filter(|c| table.defaults.contains_key(c))
        .collect();
    let row = columns
        .iter()
        .map(|c| parse_default(&table.defaults[c]))
        .collect::<SqlResult<Vec<_>>>()?;
    let mut insert = insert.clone();
    insert.columns = columns.iter().map(|c| quoted(c)).collect();
    insert.source = Some(Box::new(values_query(vec![row])));
    Ok(Some(insert))
}

/// The columns an INSERT's values go to: its column list, or the table's columns in
/// order (as many as a VALUES row has: shorter rows fill the first columns).
fn target_columns(
    insert: &ast::Insert,
    source: &ast::Query,
    table: &TableMeta,
) -> SqlResult<Vec<String>> {
    if !insert.columns.is_empty() {
        return insert
            .columns
            .iter()
            .map(|c| super::object_name(c).map(|(_, n)| n))
            .collect();
    }
    let mut columns = visible_columns(table);
    if let SetExpr::Values(values) = &*source.body {
        if let Some(width) = values.rows.first().map(|row| row.len()) {
            columns.truncate(width);
        }
    }
    Ok(columns)
}

/// The table's columns a client sees, in order (not the hidden `_rowid`).
fn visible_columns(table: &TableMeta) -> Vec<String> {
    table
        .ordered_columns()
        .into_iter()
        .filter(|c| !(table.auto_rowid && *c == super::ROWID))
        .map(String::from)
        .collect()
}

/// A column name as an INSERT's column list item, quoted to keep its case.
fn quoted(column: &str) -> ast::ObjectName {
    ast::ObjectName::from(vec![ast::Ident::with_quote('"', column)])
}

/// `VALUES` with these rows, as a query.
fn values_query(rows: Vec<Vec<Expr>>) -> ast::Query {
    ast::Query {
        with: None,
        body: Box::new(SetExpr::Values(ast::Values {
            explicit_row: false,
            value_keyword: false,
            rows: rows.into_iter().map(ast::Parens::with_empty_span).collect(),
        })),
        order_by: None,
        limit_clause: None,
        fetch: None,
        locks: Vec::new(),
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: Vec::new(),
    }
}
