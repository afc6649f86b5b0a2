//! Reading through views: where a statement names a view in a FROM clause, the view
//! becomes the derived table of its query, `(SELECT source AS name, ... FROM (query)
//! AS view) AS v`, before the statement is planned. PostgreSQL's rewriter does the same
//! to a parsed statement. The outer select keeps the columns the view had when it was
//! made, by the names its query gave them then, so a column added later to a table
//! the view reads with `*` stays out of it, as in PostgreSQL. A view in the view's
//! query is expanded in turn.
//!
//! A view stores no rows: INSERT, UPDATE, DELETE, TRUNCATE, COPY and the ALTER
//! statements that name one are refused here, before any handler sees them (see
//! [`refuse_as_target`]).
//!
//! A sequence named in FROM is read the same way, as the one-row relation PostgreSQL
//! shows (`SELECT last_value, is_called FROM s`, which pg_dump reads): a derived table
//! of the functions that read its counter when the query runs.

use super::ddl::object_name;
use super::sql_types::{SqlError, SqlResult};
use crate::engine::{Engine, ViewMeta};
use crate::sqlstate::SqlState;
use sqlparser::ast::{
    self, Ident, ObjectName, Query, Statement, TableFactor, VisitMut, VisitorMut,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::Arc;

/// More views than any real nesting has: a view that reached itself would expand
/// forever (CREATE VIEW refuses one, see `ddl::views`).
const MAX_EXPANSIONS: usize = 1_000;

/// The view `name` names in `instance`, if it names one: unqualified or in `public`.
pub fn named_view(engine: &Engine, instance: &str, name: &ObjectName) -> Option<Arc<ViewMeta>> {
    match object_name(name).ok()? {
        (None, view) => engine.view(instance, &view),
        (Some(schema), view) if schema == "public" => engine.view(instance, &view),
        _ => None,
    }
}

/// Expands every view `statement` reads (see the module's documentation). Names a
/// WITH clause gives are its own, not views.
pub fn expand(engine: &Engine, instance: &str, statement: &mut Statement) -> SqlResult<()> {
    if !engine.has_views(instance) && !engine.has_sequences(instance) {
        return Ok(());
    }
    let mut expander = Expander {
        engine,
        instance,
        ctes: cte_names(statement),
        expansions: 0,
    };
    match statement.visit(&mut expander) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(e) => Err(e),
    }
}

/// `query` with its views expanded.
pub fn expand_query(engine: &Engine, instance: &str, query: &Query) -> SqlResult<Query> {
    let mut statement = Statement::Query(Box::new(query.clone()));
    expand(engine, instance, &mut statement)?;
    match statement {
        Statement::Query(query) => Ok(*query),
        _ => Err(SqlError::internal(
            "a query expanded into another statement",
        )),
    }
}

struct Expander<'a> {
    engine: &'a Engine,
    instance: &'a str,
    ctes: HashSet<String>,
    expansions: usize,
}

impl VisitorMut for Expander<'_> {
    type Break = SqlError;

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<SqlError> {
        let TableFactor::Table {
            name, alias, args, ..
        } = factor
        else {
            return ControlFlow::Continue(());
        };
        if args.is_some() || self.is_cte(name) {
            return ControlFlow::Continue(());
        }
        let Some(view) = named_view(self.engine, self.instance, name) else {
            if let Some(sequence) = named_sequence(self.engine, self.instance, name) {
                let alias = alias.take().unwrap_or_else(|| ast::TableAlias {
                    explicit: false,
                    name: Ident::with_quote('"', sequence.spec.name.clone()),
                    columns: Vec::new(),
                    at: None,
                });
                return match sequence_query(&sequence.spec.name) {
                    Ok(subquery) => {
                        *factor = TableFactor::Derived {
                            lateral: false,
                            subquery: Box::new(subquery),
                            alias: Some(alias),
                            sample: None,
                        };
                        ControlFlow::Continue(())
                    }
                    Err(e) => ControlFlow::Break(e),
                };
            }
            return ControlFlow::Continue(());
        };
        self.expansions += 1;
        if self.expansions > MAX_EXPANSIONS {
            return ControlFlow::Break(SqlError::new(
                SqlState::InvalidObjectDefinition,
                format!(
                    "infinite recursion detected in rules for relation \"{}\"",
                    view.name
                ),
            ));
        }
        let subquery = match view_query(&view) {
            Ok(subquery) => subquery,
            Err(e) => return ControlFlow::Break(e),
        };
        let alias = alias.take().unwrap_or_else(|| ast::TableAlias {
            explicit: false,
            name: Ident::with_quote('"', view.name.clone()),
            columns: Vec::new(),
            at: None,
        });
        *factor = TableFactor::Derived {
            lateral: false,
            subquery: Box::new(subquery),
            alias: Some(alias),
            sample: None,
        };
        ControlFlow::Continue(())
    }
}

impl Expander<'_> {
    fn is_cte(&self, name: &ObjectName) -> bool {
        matches!(object_name(name), Ok((None, name)) if self.ctes.contains(&name))
    }
}

/// The sequence `name` names in `instance`, if it names one: unqualified or in
/// `public`.
fn named_sequence(
    engine: &Engine,
    instance: &str,
    name: &ObjectName,
) -> Option<Arc<crate::engine::SequenceMeta>> {
    match object_name(name).ok()? {
        (None, sequence) => engine.sequence(instance, &sequence).ok(),
        (Some(schema), sequence) if schema == "public" => engine.sequence(instance, &sequence).ok(),
        _ => None,
    }
}

/// The one row a sequence shows as a relation: its last value, PostgreSQL's `log_cnt`
/// (values logged ahead, which pgwide does not count: 0) and whether it was called.
fn sequence_query(name: &str) -> SqlResult<Query> {
    let literal = format!(
        "'{}'",
        Ident::with_quote('"', name).to_string().replace('\'', "''")
    );
    let sql = format!(
        "SELECT pgwide_sequence_last_value({literal}) AS last_value, \
         CAST(0 AS BIGINT) AS log_cnt, pgwide_sequence_is_called({literal}) AS is_called"
    );
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&sql)
        .and_then(|mut parser| parser.parse_query())
        .map(|query| *query)
        .map_err(|e| SqlError::internal(format!("a sequence's row did not parse: {e}")))
}

/// The query a view stands for: its stored query under the select of its columns.
fn view_query(view: &ViewMeta) -> SqlResult<Query> {
    let columns: Vec<String> = view
        .columns
        .iter()
        .map(|c| {
            let source = Ident::with_quote('"', c.source.clone());
            let name = Ident::with_quote('"', c.name.clone());
            format!("\"__pgwide_view\".{source} AS {name}")
        })
        .collect();
    let sql = format!(
        "SELECT {} FROM ({}) AS \"__pgwide_view\"",
        columns.join(", "),
        view.query
    );
    let corrupt = |e: sqlparser::parser::ParserError| {
        SqlError::internal(format!(
            "view \"{}\" has a query pgwide cannot read: {e}",
            view.name
        ))
    };
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&sql)
        .and_then(|mut parser| parser.parse_query())
        .map(|query| *query)
        .map_err(corrupt)
}

/// The names WITH clauses of `statement` give their queries.
pub(crate) fn cte_names(statement: &mut Statement) -> HashSet<String> {
    struct Ctes(HashSet<String>);
    impl VisitorMut for Ctes {
        type Break = ();
        fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
            if let Some(with) = &query.with {
                for cte in &with.cte_tables {
                    self.0.insert(super::expr::fold(&cte.alias.name));
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut ctes = Ctes(HashSet::new());
    let _ = statement.visit(&mut ctes);
    ctes.0
}

/// The relations `query` reads by name (not its WITH clauses' names, nor catalog
/// relations): what a view made of it depends on.
pub fn relations_read(query: &Query) -> Vec<String> {
    let mut statement = Statement::Query(Box::new(query.clone()));
    let ctes = cte_names(&mut statement);
    let mut read = Vec::new();
    let _ = ast::visit_relations(&statement, |name| {
        let relation = match object_name(name) {
            Ok((None, relation)) => Some(relation),
            Ok((Some(schema), relation))
                if schema == "public" || schema == super::relation::VERSIONS_SCHEMA =>
            {
                Some(relation)
            }
            _ => None,
        };
        if let Some(relation) = relation {
            if !ctes.contains(&relation) && !read.contains(&relation) {
                read.push(relation);
            }
        }
        ControlFlow::<()>::Continue(())
    });
    read
}

/// An error if `statement` would write to, copy, truncate, alter or index a view: a
/// view has no rows of its own. PostgreSQL writes through a simple view; pgwide does not
/// (0A000), rather than guess which table's row a view's row is.
pub fn refuse_as_target(engine: &Engine, instance: &str, statement: &Statement) -> SqlResult<()> {
    if !engine.has_views(instance) {
        return Ok(());
    }
    let (targets, target): (Vec<&ObjectName>, Target) = match statement {
        Statement::Insert(insert) => match &insert.table {
            ast::TableObject::TableName(name) => (vec![name], Target::Write("insert into")),
            _ => return Ok(()),
        },
        Statement::Update(update) => (table_of(&update.table.relation), Target::Write("update")),
        Statement::Delete(delete) => {
            let from = match &delete.from {
                ast::FromTable::WithFromKeyword(from) | ast::FromTable::WithoutKeyword(from) => {
                    from
                }
            };
            (
                from.iter().flat_map(|t| table_of(&t.relation)).collect(),
                Target::Write("delete from"),
            )
        }
        Statement::Truncate(truncate) => (
            truncate.table_names.iter().map(|t| &t.name).collect(),
            Target::NotATable,
        ),
        Statement::Copy {
            source: ast::CopySource::Table { table_name, .. },
            ..
        } => (vec![table_name], Target::Copy),
        // pg_dump's `ALTER TABLE v OWNER TO postgres` changes nothing (`ddl::owner_to`).
        Statement::AlterTable(alter)
            if alter
                .operations
                .iter()
                .all(|op| matches!(op, ast::AlterTableOperation::OwnerTo { .. })) =>
        {
            return Ok(())
        }
        Statement::AlterTable(alter) => (vec![&alter.name], Target::Alter),
        Statement::CreateIndex(create) => (vec![&create.table_name], Target::Index),
        _ => return Ok(()),
    };
    let Some(view) = targets
        .into_iter()
        .find_map(|name| named_view(engine, instance, name))
    else {
        return Ok(());
    };
    let name = &view.name;
    Err(match target {
        Target::Write(action) => SqlError::unsupported(format!(
            "cannot {action} view \"{name}\": pgwide does not write through views (write to \
             the tables the view reads)"
        )),
        Target::Copy => SqlError::new(
            SqlState::WrongObjectType,
            format!("cannot copy from view \"{name}\" (try the COPY (SELECT ...) TO variant)"),
        ),
        Target::NotATable => SqlError::new(
            SqlState::WrongObjectType,
            format!("\"{name}\" is not a table"),
        ),
        Target::Index => SqlError::new(
            SqlState::WrongObjectType,
            format!("cannot create index on relation \"{name}\": views have no index"),
        ),
        Target::Alter => SqlError::unsupported(format!(
            "ALTER TABLE or ALTER VIEW of view \"{name}\" is not supported (CREATE OR REPLACE \
             VIEW changes a view)"
        )),
    })
}

/// What a statement would do to the view it names.
enum Target {
    /// INSERT, UPDATE or DELETE.
    Write(&'static str),
    Copy,
    /// TRUNCATE.
    NotATable,
    Alter,
    Index,
}

fn table_of(factor: &TableFactor) -> Vec<&ObjectName> {
    match factor {
        TableFactor::Table { name, .. } => vec![name],
        _ => Vec::new(),
    }
}
