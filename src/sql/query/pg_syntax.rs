//! PostgreSQL query shapes DataFusion does not plan, rewritten in every query before
//! it is planned: functions in FROM (the alias of a one-column function names its
//! column; a scalar function is a one-row table), a column a wildcard repeats
//! (`SELECT c.oid, c.*`), ORDER BY keys that hold a subquery, and VALUES rows that
//! hold one.

use super::sql_ast::{last, plain};
use sqlparser::ast::{self, Expr, Ident, Query, SetExpr, TableFactor, Value};
use std::ops::ControlFlow;

/// Table functions DataFusion has; a function call in FROM names one of these or is a
/// scalar function.
const TABLE_FUNCTIONS: &[&str] = &["generate_series", "range"];

/// Rewrites what PostgreSQL allows of functions in FROM, in every query: the alias of
/// a function returning one column also names that column (`generate_series(1, 3) AS
/// g` has column `g`), and a scalar function there is a one-row table (Grafana's
/// `string_to_array(current_setting('search_path'), ',') s`).
pub fn rewrite(query: &mut Query) {
    let _ = ast::VisitMut::visit(query, &mut SortByOutputNames);
    from_functions(query);
    sort_by_subquery(query);
    let _ = ast::visit_expressions_mut(query, |expr| {
        if let Expr::Subquery(q) = expr {
            sort_by_subquery(q);
        }
        ControlFlow::<()>::Continue(())
    });
    repeated_columns(&mut query.body);
    let _ = ast::visit_expressions_mut(query, |expr| {
        match expr {
            Expr::Subquery(q) | Expr::Exists { subquery: q, .. } => from_functions(q),
            Expr::InSubquery { subquery, .. } => from_functions(subquery),
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    let _ = ast::VisitMut::visit(query, &mut ValuesWithSubqueries);
}

/// Rewrites VALUES lists whose rows hold a subquery (`INSERT ... VALUES (1, (SELECT
/// max(n) FROM t))`) as a UNION ALL of one-row SELECTs: DataFusion computes VALUES while
/// it plans, before any subquery has run, and failed with an internal error.
struct ValuesWithSubqueries;

impl ast::VisitorMut for ValuesWithSubqueries {
    type Break = ();

    fn post_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        values_as_selects(&mut query.body);
        ControlFlow::Continue(())
    }
}

fn values_as_selects(body: &mut SetExpr) {
    match body {
        SetExpr::Values(values) if values.rows.iter().any(|row| row.iter().any(holds_subquery)) => {
            // Each row a SELECT numbered by a hidden first column, whose order the
            // UNION ALL is sorted back into: VALUES keeps its rows' order. The LIMIT
            // keeps the sort where this becomes a derived table (INSERT's), whose
            // ORDER BY alone DataFusion drops.
            let width = values.rows.first().map_or(0, |row| row.len());
            let selects: Vec<String> = values
                .rows
                .iter()
                .enumerate()
                .map(|(n, row)| {
                    let items: Vec<String> = row
                        .iter()
                        .enumerate()
                        .map(|(i, item)| format!("{item} AS column{}", i + 1))
                        .collect();
                    format!("SELECT {n} AS \"*row*\", {}", items.join(", "))
                })
                .collect();
            let columns: Vec<String> = (1..=width).map(|i| format!("column{i}")).collect();
            let sql = format!(
                "SELECT {} FROM ({}) AS \"*VALUES*\" ORDER BY \"*row*\" LIMIT {}",
                columns.join(", "),
                selects.join(" UNION ALL "),
                selects.len()
            );
            let parsed = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
                .try_with_sql(&sql)
                .and_then(|mut parser| parser.parse_query());
            // Its parts came from a parse: they parse again. Should they not, the VALUES
            // stays and DataFusion reports what it cannot do.
            if let Ok(query) = parsed {
                *body = SetExpr::Query(query);
            }
        }
        SetExpr::SetOperation { left, right, .. } => {
            values_as_selects(left);
            values_as_selects(right);
        }
        _ => {}
    }
}

fn holds_subquery(expr: &Expr) -> bool {
    let found = ast::visit_expressions(expr, |e| match e {
        Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    });
    found.is_break()
}

/// Marks the alias of a column the select list also names through a wildcard
/// (DBeaver's `SELECT c.oid, c.* FROM pg_class c`): PostgreSQL returns both, DataFusion
/// wants distinct names. The result column is named without the mark.
pub const REPEATED: &str = "\u{1}repeated";

fn repeated_columns(body: &mut SetExpr) {
    let select = match body {
        SetExpr::Select(select) => select,
        SetExpr::Query(q) => return repeated_columns(&mut q.body),
        SetExpr::SetOperation { left, right, .. } => {
            repeated_columns(left);
            return repeated_columns(right);
        }
        _ => return,
    };
    duplicate_names(&mut select.projection);
    let mut all = false;
    let mut qualifiers = Vec::new();
    for item in &select.projection {
        match item {
            ast::SelectItem::Wildcard(_) => all = true,
            ast::SelectItem::QualifiedWildcard(
                ast::SelectItemQualifiedWildcardKind::ObjectName(name),
                _,
            ) => qualifiers.push(last(name)),
            _ => {}
        }
    }
    if !all && qualifiers.is_empty() {
        return;
    }
    for item in &mut select.projection {
        let ast::SelectItem::UnnamedExpr(expr) = item else {
            continue;
        };
        let column = match &*expr {
            Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
                let qualifier = parts[0].value.to_lowercase();
                (all || qualifiers.contains(&qualifier)).then(|| crate::sql::expr::fold(&parts[1]))
            }
            Expr::Identifier(ident) => Some(crate::sql::expr::fold(ident)),
            _ => None,
        };
        if let Some(column) = column {
            *item = ast::SelectItem::ExprWithAlias {
                expr: expr.clone(),
                alias: Ident::with_quote('"', format!("{column}{REPEATED}")),
            };
        }
    }
}

/// Marks every select item whose name an earlier item already has (`SELECT a AS x,
/// count(*) AS x`, `count(*), count(*)`): PostgreSQL returns both columns, DataFusion
/// wants distinct names. The k-th repeat carries the mark k times; result columns are
/// named without it.
fn duplicate_names(projection: &mut [ast::SelectItem]) {
    let mut seen: Vec<String> = Vec::new();
    for item in projection.iter_mut() {
        let (key, expr, name) = match item {
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                let name = crate::sql::expr::fold(alias);
                (name.clone(), expr, name)
            }
            ast::SelectItem::UnnamedExpr(expr) => {
                let name = crate::sql::expr::output_name(expr);
                (datafusion_name(expr), expr, name)
            }
            _ => continue,
        };
        let repeats = seen.iter().filter(|k| **k == key).count();
        seen.push(key);
        if repeats > 0 {
            *item = ast::SelectItem::ExprWithAlias {
                expr: expr.clone(),
                alias: Ident::with_quote('"', format!("{name}{}", REPEATED.repeat(repeats))),
            };
        }
    }
}

/// An expression's text as DataFusion names its column, which leaves out casts and
/// parentheses (`1::int` and `1::bigint` are both `Int64(1)`). A scalar subquery is
/// named by its one column (`(SELECT count(*) ...)` is `count(*)`).
fn datafusion_name(expr: &Expr) -> String {
    if let Expr::Subquery(query) = expr {
        if let SetExpr::Select(select) = &*query.body {
            if let [item] = select.projection.as_slice() {
                match item {
                    ast::SelectItem::UnnamedExpr(e) => return datafusion_name(e),
                    ast::SelectItem::ExprWithAlias { alias, .. } => {
                        return crate::sql::expr::fold(alias)
                    }
                    _ => {}
                }
            }
        }
    }
    let mut expr = expr.clone();
    let _ = ast::visit_expressions_mut(&mut expr, |e| {
        while let Expr::Cast { expr: inner, .. } | Expr::Nested(inner) = e {
            *e = (**inner).clone();
        }
        ControlFlow::<()>::Continue(())
    });
    expr.to_string()
}

fn has_subquery(expr: &Expr) -> bool {
    let mut found = false;
    let _ = ast::visit_expressions(expr, |e| {
        found |= matches!(
            e,
            Expr::Subquery(_) | Expr::InSubquery { .. } | Expr::Exists { .. }
        );
        ControlFlow::<()>::Continue(())
    });
    found
}

/// PostgreSQL reads a bare name in ORDER BY as an output column's name first, then as
/// an input column's: `SELECT relname::text FROM pg_class ORDER BY relname` sorts by
/// the output column. DataFusion took the input column, added it to the projection
/// beside the cast of the same name, and failed; such a key is rewritten to the output
/// column's position. Left alone: a name no output column or several have, select
/// lists with a wildcard (whose output names are known only once planned), and
/// DISTINCT ON.
struct SortByOutputNames;

impl ast::VisitorMut for SortByOutputNames {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        let (
            Some(ast::OrderBy {
                kind: ast::OrderByKind::Expressions(order),
                ..
            }),
            SetExpr::Select(select),
        ) = (&mut query.order_by, &*query.body)
        else {
            return ControlFlow::Continue(());
        };
        // DISTINCT ON wants its ORDER BY to begin with its own expressions.
        if matches!(select.distinct, Some(ast::Distinct::On(_))) {
            return ControlFlow::Continue(());
        }
        let mut names = Vec::with_capacity(select.projection.len());
        for item in &select.projection {
            names.push(match item {
                ast::SelectItem::UnnamedExpr(e) => crate::sql::expr::output_name(e),
                ast::SelectItem::ExprWithAlias { alias, .. } => crate::sql::expr::fold(alias),
                _ => return ControlFlow::Continue(()),
            });
        }
        for key in order.iter_mut() {
            let Expr::Identifier(ident) = &key.expr else {
                continue;
            };
            let name = crate::sql::expr::fold(ident);
            let mut positions = names.iter().enumerate().filter(|(_, n)| **n == name);
            if let (Some((position, _)), None) = (positions.next(), positions.next()) {
                key.expr = Expr::value(Value::Number((position + 1).to_string(), false));
            }
        }
        ControlFlow::Continue(())
    }
}

/// DataFusion cannot sort by an expression holding a subquery (Grafana orders its table
/// list by `CASE WHEN table_schema IN (SELECT ...) THEN 0 ELSE 1 END`). Such a query
/// computes its sort keys as extra columns of an inner query and sorts outside it:
/// `SELECT c0 AS a FROM (SELECT a AS c0, <key> AS o0 FROM ...) ORDER BY o0`.
fn sort_by_subquery(query: &mut Query) {
    let Some(ast::OrderBy {
        kind: ast::OrderByKind::Expressions(order),
        ..
    }) = &query.order_by
    else {
        return;
    };
    if !order.iter().any(|o| has_subquery(&o.expr)) {
        return;
    }
    let SetExpr::Select(select) = &*query.body else {
        return;
    };
    let mut inner = (**select).clone();
    let mut outer = Vec::new();
    inner.projection.clear();
    for (i, item) in select.projection.iter().enumerate() {
        let (expr, name) = match item {
            ast::SelectItem::UnnamedExpr(e) => (e, crate::sql::expr::output_name(e)),
            ast::SelectItem::ExprWithAlias { expr, alias } => (expr, crate::sql::expr::fold(alias)),
            _ => return,
        };
        inner.projection.push(ast::SelectItem::ExprWithAlias {
            expr: expr.clone(),
            alias: Ident::new(format!("pgwide_c{i}")),
        });
        outer.push(format!("pgwide_c{i} AS {}", Ident::with_quote('"', name)));
    }
    let mut keys = Vec::new();
    for (j, o) in order.iter().enumerate() {
        let positional = matches!(&o.expr, Expr::Value(v) if matches!(v.value, Value::Number(..)));
        let key = if positional {
            o.expr.to_string()
        } else {
            inner.projection.push(ast::SelectItem::ExprWithAlias {
                expr: o.expr.clone(),
                alias: Ident::new(format!("pgwide_o{j}")),
            });
            format!("pgwide_o{j}")
        };
        keys.push(format!("{key} {}", o.options));
    }
    let sql = format!(
        "SELECT {} FROM ({inner}) AS pgwide_sorted ORDER BY {}",
        outer.join(", "),
        keys.join(", ")
    );
    let Ok(mut sorted) = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_query())
    else {
        return;
    };
    sorted.with = query.with.take();
    sorted.limit_clause = query.limit_clause.take();
    *query = *sorted;
}

fn from_functions(query: &mut Query) {
    if let Some(with) = &mut query.with {
        for cte in &mut with.cte_tables {
            from_functions(&mut cte.query);
        }
    }
    from_functions_in(&mut query.body);
}

fn from_functions_in(body: &mut SetExpr) {
    match body {
        SetExpr::Select(select) => {
            for from in &mut select.from {
                from_function(&mut from.relation);
                for join in &mut from.joins {
                    from_function(&mut join.relation);
                }
            }
        }
        SetExpr::Query(q) => from_functions(q),
        SetExpr::SetOperation { left, right, .. } => {
            from_functions_in(left);
            from_functions_in(right);
        }
        _ => {}
    }
}

fn from_function(factor: &mut TableFactor) {
    // `pg_get_keywords()` is a catalog table here.
    if let TableFactor::Table { name, args, .. } = factor {
        if args.is_some() && last(name) == "pg_get_keywords" {
            *args = None;
            *name = ast::ObjectName::from(vec![
                Ident::new(crate::sql::pg_catalog::PG_CATALOG),
                Ident::new("pg_get_keywords"),
            ]);
            return;
        }
    }
    match factor {
        TableFactor::Derived { subquery, .. } => from_functions(subquery),
        // `unnest(a) AS u` has the column `u`, as a one-column function's alias names it.
        TableFactor::UNNEST {
            alias: Some(alias),
            array_exprs,
            with_offset: false,
            with_ordinality: false,
            ..
        } if alias.columns.is_empty() && array_exprs.len() == 1 => {
            alias.columns.push(ast::TableAliasColumnDef::from_name(
                alias.name.value.clone(),
            ));
        }
        TableFactor::NestedJoin {
            table_with_joins, ..
        } => {
            from_function(&mut table_with_joins.relation);
            for join in &mut table_with_joins.joins {
                from_function(&mut join.relation);
            }
        }
        TableFactor::Table {
            name,
            alias,
            args: Some(args),
            with_ordinality: false,
            ..
        } => {
            let function = last(name);
            // DataFusion's table function takes no series of times: that one is a
            // scalar series (one array) made rows (`pg_set_functions`).
            let times = function == "generate_series" && args.args.iter().any(is_time_argument);
            if TABLE_FUNCTIONS.contains(&function.as_str()) && !times {
                *name = plain(&function);
                // Unaliased, the function's column is named after it, as in PostgreSQL.
                let alias = alias.get_or_insert_with(|| ast::TableAlias {
                    explicit: true,
                    name: Ident::new(function.as_str()),
                    columns: Vec::new(),
                    at: None,
                });
                if alias.columns.is_empty() {
                    alias.columns.push(ast::TableAliasColumnDef::from_name(
                        alias.name.value.clone(),
                    ));
                }
                if function == "generate_series" && args.args.iter().all(fits_integer) {
                    integer_series(factor);
                }
                return;
            }
            let column = alias.as_ref().map_or(function.clone(), |a| {
                a.columns
                    .first()
                    .map_or_else(|| a.name.value.clone(), |c| c.name.value.clone())
            });
            let call = format!(
                "SELECT {name}({}) AS {}",
                args.args
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                Ident::with_quote('"', column)
            );
            let Ok(subquery) =
                sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
                    .try_with_sql(&call)
                    .and_then(|mut p| p.parse_query())
            else {
                return;
            };
            let alias = alias.clone().map(|mut a| {
                a.columns.clear();
                a
            });
            *factor = TableFactor::Derived {
                lateral: false,
                subquery,
                alias: alias.or_else(|| {
                    Some(ast::TableAlias {
                        explicit: true,
                        name: Ident::new(function),
                        columns: Vec::new(),
                        at: None,
                    })
                }),
                sample: None,
            };
        }
        _ => {}
    }
}

/// Whether a function argument is plainly a date, time or interval, or a quoted
/// literal, which a series of numbers does not take.
pub(super) fn is_time_argument(arg: &ast::FunctionArg) -> bool {
    let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(expr)) = arg else {
        return false;
    };
    let time_type = |ty: &ast::DataType| {
        matches!(
            ty,
            ast::DataType::Timestamp(..)
                | ast::DataType::Date
                | ast::DataType::Interval { .. }
                | ast::DataType::Datetime(_)
        )
    };
    match expr {
        Expr::Interval(_) => true,
        Expr::TypedString(typed) => time_type(&typed.data_type),
        Expr::Cast { data_type, .. } => time_type(data_type),
        Expr::Value(v) => matches!(v.value, Value::SingleQuotedString(_)),
        Expr::Function(f) => matches!(
            last(&f.name).as_str(),
            "now" | "current_timestamp" | "current_date" | "localtimestamp" | "date_trunc"
        ),
        _ => false,
    }
}

/// Whether a function argument is an integer literal that fits an `integer`
/// (`generate_series(1, 10)` is a series of integers in PostgreSQL, not of bigints).
pub(super) fn fits_integer(arg: &ast::FunctionArg) -> bool {
    let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(expr)) = arg else {
        return false;
    };
    let (negative, expr) = match expr {
        Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => (true, &**expr),
        other => (false, other),
    };
    match expr {
        Expr::Value(v) => match &v.value {
            Value::Number(digits, _) => digits
                .parse::<i64>()
                .ok()
                .map(|n| if negative { -n } else { n })
                .is_some_and(|n| i32::try_from(n).is_ok()),
            _ => false,
        },
        _ => false,
    }
}

/// `generate_series(1, 3) AS g(x)` as `(SELECT CAST(x AS INTEGER) AS x FROM
/// generate_series(1, 3) AS g(x)) AS g`: DataFusion's series is of bigints.
fn integer_series(factor: &mut TableFactor) {
    let TableFactor::Table {
        alias: Some(alias), ..
    } = factor
    else {
        return;
    };
    let Some(column) = alias.columns.first().map(|c| c.name.clone()) else {
        return;
    };
    let outer = ast::TableAlias {
        explicit: true,
        name: alias.name.clone(),
        columns: Vec::new(),
        at: None,
    };
    let sql = format!("SELECT CAST({column} AS INTEGER) AS {column} FROM {factor}");
    let Ok(subquery) = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_query())
    else {
        return;
    };
    *factor = TableFactor::Derived {
        lateral: false,
        subquery,
        alias: Some(outer),
        sample: None,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn general(sql: &str) -> String {
        super::super::test_sql::rewritten(sql, rewrite)
    }

    #[test]
    fn functions_in_from_name_their_column_or_become_one_row_tables() {
        assert_eq!(
            general("SELECT g FROM pg_catalog.generate_series(1, 3) AS g"),
            "SELECT g FROM (SELECT CAST(g AS INTEGER) AS g FROM generate_series(1, 3) AS g (g)) AS g"
        );
        assert_eq!(
            general("SELECT * FROM generate_series(1, 3000000000)"),
            "SELECT * FROM generate_series(1, 3000000000) AS generate_series (generate_series)"
        );
        assert_eq!(
            general("SELECT s[1] FROM string_to_array('a,b', ',') s"),
            "SELECT s[1] FROM (SELECT string_to_array('a,b', ',') AS \"s\") s"
        );
        assert_eq!(
            general("SELECT r FROM generate_series(1, n) AS s(r)"),
            "SELECT r FROM generate_series(1, n) AS s (r)"
        );
    }

    #[test]
    fn a_column_repeated_by_a_wildcard_gets_a_marked_alias() {
        let sql = general("SELECT c.oid, c.*, d.x FROM pg_class c, t d");
        assert_eq!(
            sql,
            format!("SELECT c.oid AS \"oid{REPEATED}\", c.*, d.x FROM pg_class c, t d")
        );
    }

    #[test]
    fn sorting_by_a_subquery_sorts_outside_an_inner_query() {
        assert_eq!(
            general(
                "SELECT a AS x, b FROM t ORDER BY CASE WHEN a IN (SELECT 1) THEN 0 ELSE 1 END, 2 LIMIT 5"
            ),
            "SELECT pgwide_c0 AS \"x\", pgwide_c1 AS \"b\" FROM (SELECT a AS pgwide_c0, \
             b AS pgwide_c1, CASE WHEN a IN (SELECT 1) THEN 0 ELSE 1 END AS pgwide_o0 FROM t) \
             AS pgwide_sorted ORDER BY pgwide_o0, 2 LIMIT 5"
        );
    }
}
