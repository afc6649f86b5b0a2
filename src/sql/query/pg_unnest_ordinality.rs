//! `unnest(a) WITH ORDINALITY t(x, n)` in a FROM clause, which DataFusion does not
//! plan (Django's `inspectdb` lists a constraint's columns so:
//! `unnest(c.conkey) WITH ORDINALITY cols(colid, arridx)`). It becomes the derived
//! table `(SELECT unnest(a) AS x, unnest(range(1, cardinality(a) + 1)) AS n) AS t`:
//! DataFusion unnests the two lists of a select list in step, as PostgreSQL does, so
//! each element comes with its position from 1. With several arrays, the positions
//! run to the longest one's length, as PostgreSQL's do. A derived table takes outer
//! references as pgwide's subplans bind them, which DataFusion's own UNNEST does not.
//!
//! An unnest of the FROM item before it (`FROM pg_index i, unnest(i.indkey,
//! i.indoption) WITH ORDINALITY koi(key, option, arridx)`, implicitly LATERAL, as
//! Django reads an index's columns) cannot be a derived table of its own, which
//! DataFusion would not let see `i`; it joins that item instead: `FROM (SELECT i.*,
//! unnest(i.indkey) AS key, ... FROM pg_index i) AS i`, with `koi.x` read as `i.x`.
//! `int2vector` catalog columns are split into lists first (`pg_compat::int2vector`).

use sqlparser::ast::{self, Expr, Ident, Query, TableFactor, VisitMut, VisitorMut};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

/// Rewrites every `UNNEST ... WITH ORDINALITY` of `query`.
pub fn rewrite(query: &mut Query) {
    struct Ordinality;
    impl VisitorMut for Ordinality {
        type Break = ();
        // Before the query's own FROM items are visited, which would make an unnest
        // of the item before it a derived table that cannot see that item.
        fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
            let renamed = match query.body.as_mut() {
                ast::SetExpr::Select(select) => join_lateral_unnests(select),
                _ => Vec::new(),
            };
            // The query's ORDER BY reads the unnest's columns too.
            for (from, to) in renamed {
                rename_qualifier(query, &from, &to);
            }
            ControlFlow::Continue(())
        }
        fn post_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
            if let Some(derived) = as_derived_table(factor) {
                *factor = derived;
            }
            ControlFlow::Continue(())
        }
    }
    let _ = query.visit(&mut Ordinality);
}

/// Merges each `UNNEST ... WITH ORDINALITY` FROM item that reads the plain table
/// before it into that table's item; the qualifiers to read as another (the unnest's
/// alias as the table's).
fn join_lateral_unnests(select: &mut ast::Select) -> Vec<(Ident, Ident)> {
    let mut renamed = Vec::new();
    let mut k = 1;
    while k < select.from.len() {
        match merged(&select.from[k - 1], &select.from[k]) {
            Some((derived, unnest_alias, table_alias)) => {
                select.from[k - 1].relation = derived;
                select.from.remove(k);
                renamed.extend(unnest_alias.map(|alias| (alias, table_alias)));
            }
            None => k += 1,
        }
    }
    renamed
}

/// `previous` joined with the unnest `item` of its columns, the unnest's alias and the
/// table's.
fn merged(
    previous: &ast::TableWithJoins,
    item: &ast::TableWithJoins,
) -> Option<(TableFactor, Option<Ident>, Ident)> {
    if !previous.joins.is_empty() || !item.joins.is_empty() {
        return None;
    }
    let TableFactor::Table {
        name,
        alias,
        args: None,
        ..
    } = &previous.relation
    else {
        return None;
    };
    // The table is read by its alias, or by its name's last part.
    let table_alias = match alias {
        Some(alias) => alias.clone(),
        None => ast::TableAlias {
            explicit: true,
            name: name.0.last()?.as_ident()?.clone(),
            columns: Vec::new(),
            at: None,
        },
    };
    let table_alias = &table_alias;
    let TableFactor::UNNEST {
        alias,
        array_exprs,
        with_offset: false,
        with_ordinality: true,
        ..
    } = &item.relation
    else {
        return None;
    };
    let qualifier = crate::sql::expr::fold(&table_alias.name);
    let reads_previous = array_exprs.iter().any(|e| {
        matches!(e, Expr::CompoundIdentifier(parts)
            if parts.first().is_some_and(|p| crate::sql::expr::fold(p) == qualifier))
    });
    if !reads_previous {
        return None;
    }
    let items = unnest_items(alias.as_ref(), array_exprs)?;
    let sql = format!(
        "SELECT {}.*, {items} FROM {}",
        quoted(&table_alias.name),
        previous.relation
    );
    let derived = derived_table(&sql, table_alias.name.clone())?;
    Some((
        derived,
        alias.as_ref().map(|a| a.name.clone()),
        table_alias.name.clone(),
    ))
}

/// Reads `from.x` as `to.x` in `query`.
fn rename_qualifier(query: &mut Query, from: &Ident, to: &Ident) {
    let from = crate::sql::expr::fold(from);
    let _ = ast::visit_expressions_mut(query, |expr| {
        if let Expr::CompoundIdentifier(parts) = expr {
            if parts.len() == 2 && crate::sql::expr::fold(&parts[0]) == from {
                parts[0] = to.clone();
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// The select list items of an unnest with ordinality: each array's elements, then
/// their positions, named as PostgreSQL names them.
fn unnest_items(alias: Option<&ast::TableAlias>, array_exprs: &[Expr]) -> Option<String> {
    if array_exprs.is_empty() {
        return None;
    }
    let arrays: Vec<String> = array_exprs
        .iter()
        .map(|a| super::pg_compat::int2vector(&a.to_string()))
        .collect();
    let named: Vec<String> = alias
        .map(|a| a.columns.iter().map(|c| quoted(&c.name)).collect())
        .unwrap_or_default();
    // PostgreSQL's names: a lone array's column takes the table alias, the others are
    // `unnest`; the positions are `ordinality`.
    let default_name = |i: usize| match (alias, arrays.len()) {
        (Some(alias), 1) if i == 0 => quoted(&alias.name),
        _ => "unnest".to_string(),
    };
    let mut items: Vec<String> = arrays
        .iter()
        .enumerate()
        .map(|(i, array)| {
            let name = named.get(i).cloned().unwrap_or_else(|| default_name(i));
            format!("unnest({array}) AS {name}")
        })
        .collect();
    let length = match arrays.as_slice() {
        [array] => format!("cardinality({array})"),
        arrays => format!(
            "greatest({})",
            arrays
                .iter()
                .map(|a| format!("cardinality({a})"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let position = named
        .get(arrays.len())
        .cloned()
        .unwrap_or_else(|| "ordinality".to_string());
    items.push(format!("unnest(range(1, {length} + 1)) AS {position}"));
    Some(items.join(", "))
}

/// The derived table an `UNNEST ... WITH ORDINALITY` is, if `factor` is one.
fn as_derived_table(factor: &TableFactor) -> Option<TableFactor> {
    let TableFactor::UNNEST {
        alias,
        array_exprs,
        with_offset: false,
        with_ordinality: true,
        ..
    } = factor
    else {
        return None;
    };
    let items = unnest_items(alias.as_ref(), array_exprs)?;
    let table_name = alias
        .as_ref()
        .map_or_else(|| Ident::new("unnest"), |a| a.name.clone());
    derived_table(&format!("SELECT {items}"), table_name)
}

/// `(sql) AS name`.
fn derived_table(sql: &str, name: Ident) -> Option<TableFactor> {
    let subquery = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(sql)
        .and_then(|mut parser| parser.parse_query())
        .ok()?;
    Some(TableFactor::Derived {
        lateral: false,
        subquery,
        alias: Some(ast::TableAlias {
            explicit: true,
            name,
            columns: Vec::new(),
            at: None,
        }),
        sample: None,
    })
}

fn quoted(ident: &Ident) -> String {
    Expr::Identifier(Ident::with_quote('"', crate::sql::expr::fold(ident))).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).expect("parses");
        let ast::Statement::Query(query) = &mut statements[0] else {
            panic!("a query");
        };
        rewrite(query);
        query.to_string()
    }

    #[test]
    fn an_ordinality_unnest_becomes_a_derived_table_of_two_zipped_lists() {
        assert_eq!(
            rewritten("SELECT x FROM unnest(c.k) WITH ORDINALITY cols(colid, arridx)"),
            "SELECT x FROM (SELECT unnest(c.k) AS \"colid\", unnest(range(1, cardinality(c.k) \
             + 1)) AS \"arridx\") AS cols"
        );
        assert_eq!(
            rewritten("SELECT * FROM unnest(ARRAY[1, 2]) WITH ORDINALITY"),
            "SELECT * FROM (SELECT unnest(ARRAY[1, 2]) AS unnest, unnest(range(1, \
             cardinality(ARRAY[1, 2]) + 1)) AS ordinality) AS unnest"
        );
        // An unnest of the item before it joins that item.
        assert_eq!(
            rewritten(
                "SELECT * FROM pg_index i, unnest(i.indkey, i.indoption) WITH ORDINALITY \
                 koi(key, option, arridx) WHERE koi.key > 0"
            ),
            "SELECT * FROM (SELECT \"i\".*, unnest(CAST(string_to_array(i.indkey, ' ') AS \
             BIGINT[])) AS \"key\", unnest(CAST(string_to_array(i.indoption, ' ') AS \
             BIGINT[])) AS \"option\", unnest(range(1, greatest(cardinality(CAST(\
             string_to_array(i.indkey, ' ') AS BIGINT[])), cardinality(CAST(string_to_array(\
             i.indoption, ' ') AS BIGINT[]))) + 1)) AS \"arridx\" FROM pg_index i) AS i \
             WHERE i.key > 0"
        );
        // Without ordinality nothing changes.
        assert_eq!(
            rewritten("SELECT * FROM unnest(ARRAY[1, 2]) AS u"),
            "SELECT * FROM UNNEST(ARRAY[1, 2]) AS u"
        );
    }
}
