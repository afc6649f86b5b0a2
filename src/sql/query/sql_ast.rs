//! Small helpers over sqlparser's AST that the query rewrites share: the parts of an
//! object name, a one-part name, and parsing an expression pgwide writes itself.

use sqlparser::ast::{Expr, Ident, ObjectName, ObjectNamePart};

/// The last part of a name (`pg_catalog.pg_class` -> `pg_class`), lower-cased.
pub(super) fn last(name: &ObjectName) -> String {
    name.0
        .last()
        .and_then(ObjectNamePart::as_ident)
        .map(|i| i.value.to_lowercase())
        .unwrap_or_default()
}

/// The first part of a name, lower-cased.
pub(super) fn first(name: &ObjectName) -> String {
    name.0
        .first()
        .and_then(ObjectNamePart::as_ident)
        .map(|i| i.value.to_lowercase())
        .unwrap_or_default()
}

/// A one-part name.
pub(super) fn plain(name: &str) -> ObjectName {
    ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))])
}

/// A call of function `name` with positional arguments `args`.
pub(super) fn function_call(name: &str, args: Vec<Expr>) -> Expr {
    use sqlparser::ast::{Function, FunctionArg, FunctionArgExpr};
    use sqlparser::ast::{FunctionArgumentList, FunctionArguments};
    Expr::Function(Function {
        name: plain(name),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|a| FunctionArg::Unnamed(FunctionArgExpr::Expr(a)))
                .collect(),
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

/// Parses one expression of pgwide's own making.
pub(super) fn parse_expr(sql: &str) -> Option<Expr> {
    sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .ok()
}
