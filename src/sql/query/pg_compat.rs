//! Rewrites the PostgreSQL-only syntax of client introspection queries (psql's `\d`
//! family, drivers' metadata calls) into what DataFusion plans: `OPERATOR(pg_catalog.~)`,
//! `COLLATE pg_catalog.default`, `pg_catalog.`-qualified functions and types, `::regclass`
//! and `::regtype`, `information_schema._pg_expandarray`, record field access
//! (`(x).n`) and `int2vector` subscripts. Queries that read a catalog table pgwide always
//! leaves empty (policies, triggers, inheritance, publications) are recognised so they
//! can answer no rows without being planned: they use constructs (`= ANY(array)`,
//! correlated ARRAY subqueries) DataFusion cannot plan and could never return a row
//! anyway. Subqueries DataFusion cannot plan are rewritten by `pg_subqueries`.

use super::empty_catalog::{always_empty, AGGREGATES};
use super::sql_ast::{first, last, parse_expr, plain};
use super::stream_relation::STREAM_SCHEMA;
use crate::sql::pg_catalog::{INFORMATION_SCHEMA, PGWIDE, PG_CATALOG};
use sqlparser::ast::{
    self, BinaryOperator, DataType, Expr, FunctionArguments, Ident, ObjectNamePart, Query, SetExpr,
    TableFactor, Value,
};
use std::ops::ControlFlow;

/// Whether the query reads a catalog schema (or `stream`, which only DataFusion
/// serves), so it goes to DataFusion directly.
pub fn is_catalog_query(query: &Query) -> bool {
    let hit = ast::visit_relations(query, |name| {
        let schema = first(name);
        let catalog = (name.0.len() > 1
            && [PG_CATALOG, INFORMATION_SCHEMA, PGWIDE, STREAM_SCHEMA].contains(&schema.as_str()))
            || (name.0.len() == 1 && schema.starts_with("pg_"));
        if catalog {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    hit.is_break() || uses_catalog_expressions(query)
}

/// System functions and `reg*` casts only the DataFusion side implements.
const FUNCTIONS: &[&str] = &[
    "format_type",
    "obj_description",
    "col_description",
    "shobj_description",
    "current_schema",
    "current_schemas",
    "current_database",
    "version",
    "quote_ident",
    "to_regtype",
    "generate_subscripts",
    "to_regclass",
    "_pg_expandarray",
];

fn uses_catalog_expressions(query: &Query) -> bool {
    let hit = ast::visit_expressions(query, |expr| {
        let found = match expr {
            Expr::Function(f) => {
                let name = last(&f.name);
                (f.name.0.len() == 2 && first(&f.name) == PG_CATALOG)
                    || name.starts_with("pg_")
                    || (name.starts_with("has_") && name.ends_with("_privilege"))
                    || FUNCTIONS.contains(&name.as_str())
            }
            Expr::Cast { data_type, .. } => match data_type {
                DataType::Regclass => true,
                DataType::Custom(name, _) => {
                    last(name).starts_with("reg") || first(name) == PG_CATALOG
                }
                _ => false,
            },
            Expr::BinaryOp {
                op: BinaryOperator::PGCustomBinaryOperator(_),
                ..
            } => true,
            _ => false,
        };
        if found {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    hit.is_break()
}

/// Whether the query's top-level FROM names catalog table `table`.
fn reads(query: &Query, table: &str) -> bool {
    let SetExpr::Select(select) = &*query.body else {
        return false;
    };
    select.from.iter().any(|from| {
        std::iter::once(&from.relation)
            .chain(from.joins.iter().map(|j| &j.relation))
            .any(|r| matches!(r, TableFactor::Table { name, .. } if last(name) == table))
    })
}

/// The output names of an always-empty query, for its (empty) result's columns.
pub fn output_names(query: &Query) -> Vec<String> {
    let mut body = &*query.body;
    loop {
        match body {
            SetExpr::SetOperation { left, .. } => body = left,
            SetExpr::Query(q) => body = &q.body,
            _ => break,
        }
    }
    let SetExpr::Select(select) = body else {
        return Vec::new();
    };
    select
        .projection
        .iter()
        .map(|item| match item {
            ast::SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
            ast::SelectItem::UnnamedExpr(Expr::Identifier(i)) => i.value.clone(),
            ast::SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => {
                parts.last().map_or_else(String::new, |i| i.value.clone())
            }
            ast::SelectItem::UnnamedExpr(Expr::Function(f)) => last(&f.name),
            _ => "?column?".to_string(),
        })
        .collect()
}

/// A call of the one-argument function `name`.
pub(super) fn call(name: &str, arg: Expr) -> Expr {
    super::sql_ast::function_call(name, vec![arg])
}

/// A `pg_catalog.`-qualified or PostgreSQL-internal type as a type DataFusion knows.
fn plain_type(name: &str) -> Option<DataType> {
    Some(match name {
        "text" | "name" | "char" | "bpchar" | "varchar" => DataType::Text,
        "int2" | "smallint" => DataType::SmallInt(None),
        "int4" | "integer" => DataType::Integer(None),
        "int8" | "bigint" => DataType::BigInt(None),
        // Planned as nothing else (`convert::arrow_type`), so the result is `oid`.
        "oid" => DataType::IntUnsigned(None),
        "bool" | "boolean" => DataType::Boolean,
        _ => return None,
    })
}

/// DataFusion plans a correlated scalar subquery only when it aggregates, to be sure it
/// returns one row; psql's (`SELECT c.collname FROM pg_collation c ... WHERE c.oid =
/// a.attcollation`) match at most one row, so `max()` of the value means the same.
fn aggregate_scalar_subquery(query: &mut Query) {
    let SetExpr::Select(select) = &mut *query.body else {
        return;
    };
    let grouped = !matches!(&select.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty());
    if grouped || select.projection.len() != 1 {
        return;
    }
    let wrap = |e: &mut Expr| {
        let aggregated = ast::visit_expressions(&*e, |inner| match inner {
            Expr::Function(f) if AGGREGATES.contains(&last(&f.name).as_str()) => {
                ControlFlow::Break(())
            }
            _ => ControlFlow::Continue(()),
        })
        .is_break();
        if !aggregated {
            *e = call("max", e.clone());
        }
    };
    match &mut select.projection[0] {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => wrap(e),
        _ => {}
    }
}

/// The argument of a rewritten `x::regclass`.
fn regclass_arg(expr: &Expr) -> Option<Expr> {
    match expr {
        Expr::Function(f) if last(&f.name) == "pgwide_regclass" => match &f.args {
            FunctionArguments::List(list) => match list.args.first() {
                Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))) => Some(e.clone()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// `generate_subscripts(a, d)` (SQLAlchemy's primary-key query zips it with
/// `unnest(conkey)`) as the set-returning `unnest` of the list of `a`'s subscripts.
fn generate_subscripts(f: &ast::Function) -> Option<Expr> {
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    let args: Vec<String> = list.args.iter().map(ToString::to_string).collect();
    let [array, dim] = args.as_slice() else {
        return None;
    };
    let array = int2vector(array);
    let sql = format!("unnest(generate_series(1, CAST(array_length({array}, {dim}) AS BIGINT)))");
    sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_expr())
        .ok()
}

/// `pg_index.indkey` and `indoption` are `int2vector`s PostgreSQL lets clients unnest
/// and subscript like arrays; pgwide keeps their text form (`1 2`), so such uses split
/// them first.
pub(super) fn int2vector(arg: &str) -> String {
    if is_int2vector(arg) {
        format!("CAST(string_to_array({arg}, ' ') AS BIGINT[])")
    } else {
        arg.to_string()
    }
}

/// Whether `arg` names one of `pg_index`'s `int2vector` columns.
fn is_int2vector(arg: &str) -> bool {
    let arg = arg.to_lowercase();
    arg.ends_with("indkey") || arg.ends_with("indoption")
}

/// `unnest(indkey)` as the unnest of the split vector (see `int2vector`).
fn unnest_int2vector(f: &ast::Function) -> Option<Expr> {
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    let [arg] = list.args.as_slice() else {
        return None;
    };
    let arg = arg.to_string();
    if !is_int2vector(&arg) {
        return None;
    }
    sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .try_with_sql(&format!("unnest({})", int2vector(&arg)))
        .and_then(|mut p| p.parse_expr())
        .ok()
}

/// `information_schema._pg_expandarray(a)`, a set-returning function of `(x, n)`
/// records, as the unnest of `pgwide_expandarray(a)`, their list. Two such calls in one
/// select list unnest in step, as PostgreSQL runs set-returning functions in a select
/// list side by side.
fn expandarray(f: &ast::Function) -> Option<Expr> {
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    let [arg] = list.args.as_slice() else {
        return None;
    };
    parse_expr(&format!("unnest(pgwide_expandarray({arg}))"))
}

/// `pg_index` columns PostgreSQL types `int2vector` (or `oidvector`), whose subscripts
/// start at 0; pgwide keeps them as text.
const VECTOR_COLUMNS: &[&str] = &["indkey", "indoption", "indclass", "indcollation"];

fn is_vector_column(expr: &Expr) -> bool {
    column_name(expr).is_some_and(|name| VECTOR_COLUMNS.iter().any(|v| name.ends_with(v)))
}

/// The column `expr` names, lower-cased, if it names one (`a` or `t.a`).
fn column_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Identifier(i) => Some(i.value.to_lowercase()),
        Expr::CompoundIdentifier(parts) => parts.last().map(|i| i.value.to_lowercase()),
        _ => None,
    }
}

/// Whether `expr` is a catalog column of type `name` (`typname`, `relname`, ...), which
/// PostgreSQL lets a query subscript as the characters it holds.
fn is_name_column(expr: &Expr) -> bool {
    column_name(expr).is_some_and(|name| name.ends_with("name"))
}

/// `(record).field` as `get_field(record, 'field')`, which DataFusion plans,
/// `vector[i]` of an `int2vector` column as its 0-based element, and `typname[0]` (pg_dump
/// tells array types by it) as the name's 0-based character; other subscripts stay.
fn field_access(root: &Expr, chain: &[ast::AccessExpr]) -> Option<Expr> {
    let mut out = match root {
        Expr::Nested(inner) => (**inner).clone(),
        other => other.clone(),
    };
    // `t.col[i]` parses as `t` accessed by `.col` then `[i]`: leading dots after a bare
    // name qualify it, they are not record fields.
    let mut chain = chain;
    if let Expr::Identifier(_) | Expr::CompoundIdentifier(_) = root {
        let mut parts = match root {
            Expr::Identifier(i) => vec![i.clone()],
            Expr::CompoundIdentifier(parts) => parts.clone(),
            _ => Vec::new(),
        };
        while let Some((ast::AccessExpr::Dot(Expr::Identifier(part)), rest)) = chain.split_first() {
            parts.push(part.clone());
            chain = rest;
        }
        out = Expr::CompoundIdentifier(parts);
    }
    let mut changed = false;
    let mut rest: Vec<ast::AccessExpr> = Vec::new();
    for access in chain {
        match access {
            ast::AccessExpr::Dot(Expr::Identifier(field)) if rest.is_empty() => {
                out = parse_expr(&format!(
                    "get_field({out}, '{}')",
                    field.value.replace('\'', "''")
                ))?;
                changed = true;
            }
            ast::AccessExpr::Subscript(ast::Subscript::Index { index })
                if rest.is_empty() && is_vector_column(&out) =>
            {
                out = parse_expr(&format!("pgwide_int2vector_at({out}, {index})"))?;
                changed = true;
            }
            ast::AccessExpr::Subscript(ast::Subscript::Index { index })
                if rest.is_empty() && is_name_column(&out) =>
            {
                out = parse_expr(&format!("substr({out}, ({index}) + 1, 1)"))?;
                changed = true;
            }
            other => rest.push(other.clone()),
        }
    }
    if !changed {
        return None;
    }
    if rest.is_empty() {
        return Some(out);
    }
    Some(Expr::CompoundFieldAccess {
        root: Box::new(Expr::Nested(Box::new(out))),
        access_chain: rest,
    })
}

/// The elements of a text array literal (`'{a,b}'`, also cast to `text[]`), as string
/// literals; elements in double quotes keep their commas.
fn array_literal(expr: &Expr) -> Option<Vec<Expr>> {
    let text = match expr {
        Expr::Nested(inner) => return array_literal(inner),
        Expr::Cast { expr, .. } => return array_literal(expr),
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => s,
            _ => return None,
        },
        _ => return None,
    };
    let inner = text.trim().strip_prefix('{')?.strip_suffix('}')?;
    let mut items = Vec::new();
    let mut item = String::new();
    let mut quoted = false;
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => item.push(chars.next()?),
            ',' if !quoted => items.push(std::mem::take(&mut item)),
            c => item.push(c),
        }
    }
    if !inner.is_empty() {
        items.push(item);
    }
    Some(
        items
            .into_iter()
            .map(|i| Expr::value(Value::SingleQuotedString(i)))
            .collect(),
    )
}

fn is_array_subquery(expr: &Expr) -> bool {
    matches!(expr, Expr::Function(f) if last(&f.name) == "array" && matches!(f.args, FunctionArguments::Subquery(_)))
}

/// What a rewrite rule makes of one expression.
enum Outcome {
    /// Not the rule's kind of expression: the next rule is asked.
    Pass,
    /// The rule's kind, changed in place or left as it is; no later rule is asked.
    Done,
    /// The rule's kind, replaced by this; no later rule is asked.
    Replace(Expr),
}

impl From<Option<Expr>> for Outcome {
    fn from(replacement: Option<Expr>) -> Self {
        replacement.map_or(Outcome::Done, Outcome::Replace)
    }
}

/// One client workaround: how an expression of a catalog query that DataFusion cannot
/// plan becomes one it can, under a name its test uses.
struct ExprRule {
    name: &'static str,
    apply: fn(&mut Expr) -> Outcome,
}

/// The expression rules, asked in this order; the first whose kind an expression is
/// decides what becomes of it.
const EXPR_RULES: &[ExprRule] = &[
    ExprRule {
        name: "operator_syntax",
        apply: operator_syntax,
    },
    ExprRule {
        name: "toast_reloptions",
        apply: toast_reloptions,
    },
    ExprRule {
        name: "collate",
        apply: collate,
    },
    ExprRule {
        name: "not_equal_all_array_literal",
        apply: not_equal_all_array_literal,
    },
    ExprRule {
        name: "equal_any_array_literal",
        apply: equal_any_array_literal,
    },
    ExprRule {
        name: "equal_any_array_subquery",
        apply: equal_any_array_subquery,
    },
    ExprRule {
        name: "generate_subscripts",
        apply: generate_subscripts_call,
    },
    ExprRule {
        name: "expandarray",
        apply: expandarray_call,
    },
    ExprRule {
        name: "record_field_access",
        apply: record_field_access,
    },
    ExprRule {
        name: "unnest_int2vector",
        apply: unnest_int2vector_call,
    },
    ExprRule {
        name: "pg_catalog_function",
        apply: pg_catalog_function,
    },
    ExprRule {
        name: "reg_casts",
        apply: reg_casts,
    },
    ExprRule {
        name: "empty_catalog_subquery",
        apply: empty_catalog_subquery,
    },
    ExprRule {
        name: "collation_subquery",
        apply: collation_subquery,
    },
    ExprRule {
        name: "foreign_options_array",
        apply: foreign_options_array,
    },
    ExprRule {
        name: "outer_condition_subquery",
        apply: outer_condition_subquery,
    },
    ExprRule {
        name: "aggregate_scalar_subquery",
        apply: aggregate_scalar_subquery_rule,
    },
];

/// `OPERATOR(pg_catalog.~)` and its kin as DataFusion's operators.
fn operator_syntax(expr: &mut Expr) -> Outcome {
    let Expr::BinaryOp {
        left,
        op: BinaryOperator::PGCustomBinaryOperator(parts),
        right,
    } = expr
    else {
        return Outcome::Pass;
    };
    let op = match parts.last().map(String::as_str) {
        Some("~") => Some(BinaryOperator::PGRegexMatch),
        Some("!~") => Some(BinaryOperator::PGRegexNotMatch),
        Some("~*") => Some(BinaryOperator::PGRegexIMatch),
        Some("!~*") => Some(BinaryOperator::PGRegexNotIMatch),
        Some("=") => Some(BinaryOperator::Eq),
        Some("<>") => Some(BinaryOperator::NotEq),
        _ => None,
    };
    op.map(|op| Expr::BinaryOp {
        left: left.clone(),
        op,
        right: right.clone(),
    })
    .into()
}

/// psql appends `|| array(select ... from unnest(toast.reloptions))`; pgwide has no
/// TOAST tables, so the appended array is always empty.
fn toast_reloptions(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::StringConcat,
            right,
        } if is_array_subquery(right) => Outcome::Replace((**left).clone()),
        _ => Outcome::Pass,
    }
}

/// `x COLLATE pg_catalog.default` as `x`: pgwide compares text bytewise.
fn collate(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::Collate { expr: inner, .. } => Outcome::Replace((**inner).clone()),
        _ => Outcome::Pass,
    }
}

/// `x <> ALL ('{a,b}')` over an array literal as a NOT IN list (pgjdbc's getSQLKeywords).
fn not_equal_all_array_literal(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::AllOp {
            left,
            compare_op: BinaryOperator::NotEq,
            right,
        } => array_literal(right)
            .map(|list| Expr::InList {
                expr: left.clone(),
                list,
                negated: true,
            })
            .into(),
        _ => Outcome::Pass,
    }
}

/// `x = ANY ('{a,b}')` over an array literal as an IN list.
fn equal_any_array_literal(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::AnyOp {
            left,
            compare_op: BinaryOperator::Eq,
            right,
            ..
        } => match array_literal(right) {
            Some(list) => Outcome::Replace(Expr::InList {
                expr: left.clone(),
                list,
                negated: false,
            }),
            None => Outcome::Pass,
        },
        _ => Outcome::Pass,
    }
}

/// `x = ANY(ARRAY(SELECT ...))` as `x IN (SELECT ...)` (pgAdmin's role check).
fn equal_any_array_subquery(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::AnyOp {
            left,
            compare_op: BinaryOperator::Eq,
            right,
            ..
        } => super::pg_subqueries::array_subquery(right)
            .map(|subquery| Expr::InSubquery {
                expr: left.clone(),
                subquery: Box::new(subquery),
                negated: false,
            })
            .into(),
        _ => Outcome::Pass,
    }
}

fn generate_subscripts_call(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::Function(f) if last(&f.name) == "generate_subscripts" => {
            generate_subscripts(f).into()
        }
        _ => Outcome::Pass,
    }
}

fn expandarray_call(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::Function(f) if last(&f.name) == "_pg_expandarray" => expandarray(f).into(),
        _ => Outcome::Pass,
    }
}

fn record_field_access(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::CompoundFieldAccess { root, access_chain } => field_access(root, access_chain).into(),
        _ => Outcome::Pass,
    }
}

fn unnest_int2vector_call(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::Function(f) if last(&f.name) == "unnest" => unnest_int2vector(f).into(),
        _ => Outcome::Pass,
    }
}

/// `pg_catalog.f(...)` as `f(...)`: the functions are registered unqualified.
fn pg_catalog_function(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::Function(f) if f.name.0.len() == 2 && first(&f.name) == PG_CATALOG => {
            f.name = plain(&last(&f.name));
            Outcome::Done
        }
        _ => Outcome::Pass,
    }
}

/// `::regclass`, `::regtype` and the other reg* casts as pgwide's functions, and
/// PostgreSQL's type names as DataFusion's.
fn reg_casts(expr: &mut Expr) -> Outcome {
    let Expr::Cast {
        expr: inner,
        data_type,
        ..
    } = expr
    else {
        return Outcome::Pass;
    };
    let name = match data_type {
        DataType::Regclass => "regclass".to_string(),
        DataType::Custom(name, _) => last(name),
        DataType::Array(
            ast::ArrayElemTypeDef::SquareBracket(element, _)
            | ast::ArrayElemTypeDef::AngleBracket(element),
        ) => match element.as_ref() {
            DataType::Custom(name, _) if last(name) == "regtype" => "regtype[]".to_string(),
            DataType::Custom(name, _) if last(name) == "oid" => "oid[]".to_string(),
            _ => String::new(),
        },
        _ => String::new(),
    };
    match name.as_str() {
        "regtype[]" => Outcome::Replace(call("pgwide_regtype_names", (**inner).clone())),
        // pg_dump's `'{16384,16390}'::pg_catalog.oid[]`: OIDs are bigints here.
        "oid[]" => {
            *data_type = DataType::Array(ast::ArrayElemTypeDef::SquareBracket(
                Box::new(DataType::BigInt(None)),
                None,
            ));
            Outcome::Done
        }
        "regclass" => Outcome::Replace(call("pgwide_regclass", (**inner).clone())),
        "regtype" => Outcome::Replace(call("pgwide_regtype_name", (**inner).clone())),
        "regnamespace" | "regproc" | "regprocedure" | "regrole" => {
            Outcome::Replace((**inner).clone())
        }
        // A regclass shown as text is the table's name, not its OID.
        _ if matches!(
            plain_type(&name).or(Some(data_type.clone())),
            Some(DataType::Text)
        ) && regclass_arg(inner).is_some() =>
        {
            regclass_arg(inner)
                .map(|arg| call("pgwide_regclass_name", arg))
                .into()
        }
        other => {
            if let Some(ty) = plain_type(other) {
                *data_type = ty;
            }
            Outcome::Done
        }
    }
}

/// A scalar subquery over a catalog table pgwide always leaves empty is NULL.
fn empty_catalog_subquery(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::Subquery(q) if always_empty(q) => Outcome::Replace(Expr::value(Value::Null)),
        _ => Outcome::Pass,
    }
}

/// psql looks up a column's collation where it differs from its type's; pgwide columns
/// always have their type's, and DataFusion cannot decorrelate the `<>`.
fn collation_subquery(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::Subquery(q) if reads(q, "pg_collation") => Outcome::Replace(Expr::value(Value::Null)),
        _ => Outcome::Pass,
    }
}

/// The option columns of foreign data: foreign-data wrappers, servers, tables, their
/// columns and user mappings, none of which pgwide has, so they are always empty.
const FOREIGN_OPTIONS: &[&str] = &[
    "fdwoptions",
    "srvoptions",
    "ftoptions",
    "attfdwoptions",
    "umoptions",
];

/// pg_dump's `ARRAY(SELECT quote_ident(option_name) || ... FROM
/// pg_options_to_table(attfdwoptions) ...)` over foreign-data options as the empty
/// array it always is in pgwide: DataFusion cannot call a function in FROM with an
/// outer column.
fn foreign_options_array(expr: &mut Expr) -> Outcome {
    let Expr::Function(f) = expr else {
        return Outcome::Pass;
    };
    let FunctionArguments::Subquery(q) = &f.args else {
        return Outcome::Pass;
    };
    let SetExpr::Select(select) = q.body.as_ref() else {
        return Outcome::Pass;
    };
    let foreign_options = |factor: &TableFactor| match factor {
        TableFactor::Table {
            name,
            args: Some(args),
            ..
        } if last(name) == "pg_options_to_table" && args.args.len() == 1 => {
            let column = args.args[0].to_string().to_lowercase();
            let column = column.rsplit('.').next().unwrap_or_default();
            FOREIGN_OPTIONS.contains(&column)
        }
        _ => false,
    };
    let options_of_foreign_data = last(&f.name) == "array"
        && select.from.len() == 1
        && select.from[0].joins.is_empty()
        && foreign_options(&select.from[0].relation);
    match options_of_foreign_data {
        true => parse_expr("CAST('{}' AS TEXT[])").map_or(Outcome::Pass, Outcome::Replace),
        false => Outcome::Pass,
    }
}

/// psql's column default lookup, `(SELECT ... FROM pg_attrdef d WHERE d.adrelid =
/// a.attrelid AND d.adnum = a.attnum AND a.atthasdef)`, filters on an outer column
/// alone, which is no correlation DataFusion can decorrelate. The same value is `CASE
/// WHEN a.atthasdef THEN (the subquery without it) END`.
fn outer_condition_subquery(expr: &mut Expr) -> Outcome {
    let Expr::Subquery(q) = expr else {
        return Outcome::Pass;
    };
    let SetExpr::Select(select) = &mut *q.body else {
        return Outcome::Pass;
    };
    let inner: Vec<String> = select
        .from
        .iter()
        .flat_map(|from| {
            std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation))
        })
        .filter_map(|r| match r {
            TableFactor::Table { name, alias, .. } => Some(match alias {
                Some(alias) => alias.name.value.clone(),
                None => last(name),
            }),
            _ => None,
        })
        .collect();
    let Some(selection) = &select.selection else {
        return Outcome::Pass;
    };
    let outer_column = |e: &Expr| {
        matches!(e, Expr::CompoundIdentifier(parts)
            if parts.len() >= 2 && !inner.contains(&parts[parts.len() - 2].value))
    };
    let parts = conjuncts(selection.clone());
    if !parts.iter().any(outer_column) {
        return Outcome::Pass;
    }
    // `a.atthasdef`, `pg_catalog.pg_attribute.atthasdef`: a column of a table the
    // subquery does not read, tested alone.
    let (lifted, kept): (Vec<Expr>, Vec<Expr>) = parts.into_iter().partition(outer_column);
    select.selection = conjunction(kept);
    let Some(condition) = conjunction(lifted) else {
        return Outcome::Pass;
    };
    aggregate_scalar_subquery(q);
    Outcome::Replace(Expr::Case {
        case_token: ast::helpers::attached_token::AttachedToken::empty(),
        end_token: ast::helpers::attached_token::AttachedToken::empty(),
        operand: None,
        conditions: vec![ast::CaseWhen {
            condition,
            result: expr.clone(),
        }],
        else_result: None,
    })
}

/// `parts` AND-ed together; `None` for no parts.
fn conjunction(parts: Vec<Expr>) -> Option<Expr> {
    parts.into_iter().reduce(|a, b| Expr::BinaryOp {
        left: Box::new(a),
        op: BinaryOperator::And,
        right: Box::new(b),
    })
}

/// The AND-ed parts of a condition (a parenthesized part stays whole, parentheses and
/// all, so the condition prints as it parses).
fn conjuncts(condition: Expr) -> Vec<Expr> {
    match condition {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            let mut parts = conjuncts(*left);
            parts.extend(conjuncts(*right));
            parts
        }
        other => vec![other],
    }
}

fn aggregate_scalar_subquery_rule(expr: &mut Expr) -> Outcome {
    match expr {
        Expr::Subquery(q) => {
            aggregate_scalar_subquery(q);
            Outcome::Done
        }
        _ => Outcome::Pass,
    }
}

/// Rewrites a catalog query: unqualified catalog tables resolve in `pg_catalog`, every
/// expression goes through `EXPR_RULES`, then the subqueries DataFusion cannot plan
/// through `pg_subqueries`.
pub fn rewrite(query: &mut Query) {
    // Unqualified catalog tables (`FROM pg_class`) resolve in pg_catalog, as in
    // PostgreSQL where it is first on the search path.
    let _ = ast::visit_relations_mut(query, |name| {
        if name.0.len() == 1 && first(name).starts_with("pg_") {
            name.0
                .insert(0, ObjectNamePart::Identifier(Ident::new(PG_CATALOG)));
        }
        ControlFlow::<()>::Continue(())
    });
    let _ = ast::visit_expressions_mut(query, |expr| {
        for rule in EXPR_RULES {
            match (rule.apply)(expr) {
                Outcome::Pass => continue,
                Outcome::Done => break,
                Outcome::Replace(replacement) => {
                    tracing::trace!(rule = rule.name, "catalog query expression rewritten");
                    *expr = replacement;
                    break;
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    shown_regclasses(query);
    super::pg_subqueries::rewrite(query);
}

/// `FROM pg_show_all_settings()` (pgAdmin sets `bytea_output` through it) reads
/// `pg_settings`, which PostgreSQL defines as that function's rows.
pub fn settings_function(query: &mut Query) {
    struct Settings;
    impl ast::VisitorMut for Settings {
        type Break = ();
        fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
            if let TableFactor::Table {
                name, args, alias, ..
            } = factor
            {
                let no_arguments = args.as_ref().is_some_and(|a| a.args.is_empty());
                if no_arguments && last(name) == "pg_show_all_settings" {
                    *args = None;
                    alias.get_or_insert_with(|| ast::TableAlias {
                        explicit: false,
                        name: Ident::new("pg_show_all_settings"),
                        columns: Vec::new(),
                        at: None,
                    });
                    *name = ast::ObjectName(vec![
                        ObjectNamePart::Identifier(Ident::new(PG_CATALOG)),
                        ObjectNamePart::Identifier(Ident::new("pg_settings")),
                    ]);
                }
            }
            ControlFlow::Continue(())
        }
    }
    let _ = ast::VisitMut::visit(query, &mut Settings);
}

/// A `regclass` the outer SELECT list shows is the relation's name, as PostgreSQL's
/// `regclass` prints (psql's `\d` lists the tables referencing one this way); in
/// comparisons and joins it stays the OID.
fn shown_regclasses(query: &mut Query) {
    let ast::SetExpr::Select(select) = query.body.as_mut() else {
        return;
    };
    for item in select.projection.iter_mut() {
        if let ast::SelectItem::UnnamedExpr(expr) | ast::SelectItem::ExprWithAlias { expr, .. } =
            item
        {
            if let Some(arg) = regclass_arg(expr) {
                *expr = call("pgwide_regclass_name", arg);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_sql::query;
    use super::*;

    fn rewritten(sql: &str) -> String {
        super::super::test_sql::rewritten(sql, rewrite)
    }

    /// Each rule by name, with a catalog query one of whose expressions is its kind and
    /// which it changes: every workaround has a name and a test that it still fires.
    const RULE_EXAMPLES: &[(&str, &str)] = &[
        (
            "operator_syntax",
            "SELECT 1 FROM pg_class WHERE relname OPERATOR(pg_catalog.~) '^t$'",
        ),
        (
            "toast_reloptions",
            "SELECT c.reloptions || array(SELECT 'x') FROM pg_class c",
        ),
        (
            "collate",
            "SELECT relname COLLATE pg_catalog.default FROM pg_class",
        ),
        (
            "not_equal_all_array_literal",
            "SELECT 1 FROM pg_class WHERE relname <> ALL ('{a,b}')",
        ),
        (
            "equal_any_array_literal",
            "SELECT 1 FROM pg_class WHERE relname = ANY ('{a,b}')",
        ),
        (
            "equal_any_array_subquery",
            "SELECT 1 FROM pg_roles WHERE oid = ANY(ARRAY(SELECT oid FROM pg_roles))",
        ),
        (
            "generate_subscripts",
            "SELECT generate_subscripts(i.indkey, 1) FROM pg_index i",
        ),
        (
            "expandarray",
            "SELECT information_schema._pg_expandarray(i.indkey) FROM pg_index i",
        ),
        (
            "record_field_access",
            "SELECT (information_schema._pg_expandarray(i.indkey)).n FROM pg_index i",
        ),
        (
            "unnest_int2vector",
            "SELECT unnest(i.indkey) FROM pg_index i",
        ),
        (
            "pg_catalog_function",
            "SELECT pg_catalog.format_type(23, NULL)",
        ),
        ("reg_casts", "SELECT 'pg_class'::regclass"),
        (
            "empty_catalog_subquery",
            "SELECT (SELECT polname FROM pg_policy LIMIT 1)",
        ),
        (
            "collation_subquery",
            "SELECT (SELECT c.collname FROM pg_collation c WHERE c.oid <> 100)",
        ),
        (
            "foreign_options_array",
            "SELECT array_to_string(ARRAY(SELECT option_name FROM \
             pg_options_to_table(a.attfdwoptions) ORDER BY option_name), ', ') \
             FROM pg_attribute a",
        ),
        (
            "outer_condition_subquery",
            "SELECT (SELECT d.adbin FROM pg_attrdef d WHERE d.adnum = a.attnum AND a.atthasdef) \
             FROM pg_attribute a",
        ),
        (
            "aggregate_scalar_subquery",
            "SELECT (SELECT count(*) FROM pg_class)",
        ),
    ];

    #[test]
    fn every_rule_has_a_name_and_an_example_it_rewrites() {
        let names: Vec<&str> = EXPR_RULES.iter().map(|r| r.name).collect();
        let examples: Vec<&str> = RULE_EXAMPLES.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, examples, "one example per rule, in the rules' order");
        for (name, sql) in RULE_EXAMPLES {
            let rule = EXPR_RULES.iter().find(|r| r.name == *name).expect("rule");
            let mut q = query(sql);
            let mut fired = false;
            let _ = ast::visit_expressions_mut(&mut q, |expr| {
                if !matches!((rule.apply)(expr), Outcome::Pass) {
                    fired = true;
                }
                ControlFlow::<()>::Continue(())
            });
            assert!(fired, "rule {name} does not fire on {sql}");
        }
    }

    #[test]
    fn a_subquery_filtered_on_an_outer_column_alone_is_a_case() {
        assert_eq!(
            rewritten(
                "SELECT (SELECT d.adbin FROM pg_attrdef d WHERE d.adrelid = a.attrelid \
                 AND pg_catalog.pg_attribute.atthasdef AND d.adnum = a.attnum) \
                 FROM pg_attribute"
            ),
            "SELECT CASE WHEN pg_catalog.pg_attribute.atthasdef THEN (SELECT max(d.adbin) \
             FROM pg_catalog.pg_attrdef d WHERE d.adrelid = a.attrelid AND d.adnum = \
             a.attnum) END FROM pg_catalog.pg_attribute"
        );
    }

    #[test]
    fn psql_operators_collations_and_casts_become_datafusion_sql() {
        assert_eq!(
            rewritten(
                "SELECT pg_catalog.format_type(a.atttypid, NULL) FROM pg_class c \
                 WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default \
                 AND c.oid = 't'::regclass AND c.reloftype::pg_catalog.regtype::pg_catalog.text = ''"
            ),
            "SELECT format_type(a.atttypid, NULL) FROM pg_catalog.pg_class c \
             WHERE c.relname ~ '^(t)$' AND c.oid = pgwide_regclass('t') \
             AND pgwide_regtype_name(c.reloftype)::TEXT = ''"
        );
    }

    #[test]
    fn expandarray_unnests_records_and_field_access_becomes_get_field() {
        assert_eq!(
            rewritten(
                "SELECT (information_schema._pg_expandarray(i.indkey)).n AS k, \
                 i.indoption[k - 1] FROM pg_index i WHERE (r.keys).x = 1"
            ),
            "SELECT get_field(unnest(pgwide_expandarray(i.indkey)), 'n') AS k, \
             pgwide_int2vector_at(i.indoption, k - 1) FROM pg_catalog.pg_index i \
             WHERE get_field(r.keys, 'x') = 1"
        );
        // An ordinary array subscript stays one.
        assert_eq!(
            rewritten("SELECT (current_schemas(true))[1] FROM pg_class"),
            "SELECT (current_schemas(true))[1] FROM pg_catalog.pg_class"
        );
    }

    #[test]
    fn queries_on_always_empty_catalogs_are_recognised() {
        assert!(always_empty(&query(
            "SELECT pol.polname FROM pg_catalog.pg_policy pol WHERE pol.polrelid = '1'"
        )));
        assert!(always_empty(&query(
            "SELECT 1 FROM pg_catalog.pg_publication p UNION SELECT 2 FROM pg_inherits"
        )));
        assert!(!always_empty(&query(
            "SELECT 1 FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_inherits i ON true"
        )));
        assert!(is_catalog_query(&query(
            "SELECT relname FROM pg_catalog.pg_class"
        )));
        assert!(is_catalog_query(&query("SELECT 'x'::regclass")));
        assert!(!is_catalog_query(&query("SELECT * FROM t WHERE id = 1")));
    }
}
