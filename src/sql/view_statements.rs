//! `CREATE [OR REPLACE] VIEW` and `DROP VIEW`, and what a view asks of the DDL on the
//! tables it reads: DROP TABLE refuses (or with CASCADE drops) the views that read the
//! table, and ALTER TABLE refuses what would change the table under a view's query.
//!
//! A view is made by planning its query as a SELECT: that finds its columns' names and
//! types and refuses a query that would not run. Its query is kept as SQL text
//! (`engine::catalog::views`) and expanded where a statement reads the view
//! (`views`). In a transaction block every view change is undone by ROLLBACK.

use super::ddl;
use super::expr::{fold, Params};
use super::read_statements::plan_query;
use super::session_state::SessionState;
use super::sql_types::{OutputColumn, SqlError, SqlResult};
use super::transaction_block::SchemaUndo;
use super::views;
use crate::engine::{ViewColumn, ViewMeta};
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, ObjectName, Query, SelectItem, SetExpr};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::collections::HashSet;
use std::sync::Arc;

/// `CREATE [OR REPLACE] VIEW name [(columns)] AS query`.
pub(super) async fn create(state: &mut SessionState, create: &ast::CreateView) -> SqlResult<()> {
    refuse_clauses(create)?;
    let name = ddl::table_name(&create.name)?;
    let (engine, instance) = (&state.engine, state.instance.as_str());
    let existing = engine.view(instance, &name);
    match &existing {
        Some(_) if !create.or_replace => return Err(exists(&name)),
        None if engine.table(instance, &name).is_ok() => {
            return Err(match create.or_replace {
                true => not_a_view(&name),
                false => exists(&name),
            })
        }
        _ => {}
    }
    let mut query = (*create.query).clone();
    let planned = describe(state, &query)?;
    let columns = view_columns(create, &planned)?;
    name_select_items(&mut query, &planned);
    let reads: Vec<String> = views::relations_read(&query)
        .into_iter()
        .filter(|r| engine.table(instance, r).is_ok() || engine.view(instance, r).is_some())
        .collect();
    if let Some(existing) = &existing {
        refuse_changed_columns(existing, &columns)?;
        if reaches(state, &reads, &name) {
            return Err(SqlError::new(
                SqlState::InvalidObjectDefinition,
                format!("infinite recursion detected in rules for relation \"{name}\""),
            ));
        }
    }
    let made = state
        .engine
        .create_view(
            instance,
            &name,
            query.to_string(),
            columns,
            reads,
            create.or_replace,
        )
        .await?;
    // The view, as the statement now sees it, must read: a column name the query's
    // planner gives differently than its result does would fail only here.
    let check = format!("SELECT * FROM \"{}\"", made.name.replace('"', "\"\""));
    if let Err(e) = check_readable(state, &check) {
        match &existing {
            Some(before) => {
                state.engine.restore_view((**before).clone()).await?;
            }
            None => state.engine.drop_view(instance, &name).await?,
        }
        return Err(SqlError::unsupported(format!(
            "pgwide cannot read this view's columns back ({}); give each column of its \
             query a name with AS",
            e.message()
        )));
    }
    if let Some(block) = state.transaction.as_mut() {
        block.changed_schema(SchemaUndo::RestoreView {
            name,
            before: existing.map(|v| (*v).clone()),
        });
    }
    Ok(())
}

/// The clauses of another dialect or of PostgreSQL's that pgwide does not keep.
fn refuse_clauses(create: &ast::CreateView) -> SqlResult<()> {
    if create.materialized {
        return Err(SqlError::unsupported(
            "materialized views are not supported (a view is; or CREATE TABLE ... AS)",
        ));
    }
    if create.temporary {
        return Err(SqlError::unsupported(
            "TEMPORARY views (dropped at the session's end) are not supported",
        ));
    }
    if !matches!(create.options, ast::CreateTableOptions::None) {
        return Err(SqlError::unsupported(format!(
            "view options ({}) are not supported",
            create.options
        )));
    }
    let foreign = create.or_alter
        || create.secure
        || create.if_not_exists
        || create.copy_grants
        || create.with_no_schema_binding
        || create.to.is_some()
        || create.params.is_some()
        || create.comment.is_some()
        || !create.cluster_by.is_empty()
        || create
            .columns
            .iter()
            .any(|c| c.data_type.is_some() || c.options.is_some());
    if foreign {
        return Err(SqlError::syntax(
            "CREATE VIEW takes PostgreSQL's clauses: [OR REPLACE] VIEW name [(column, ...)] AS query",
        ));
    }
    Ok(())
}

/// The columns of `query` as a SELECT of this session would return them.
fn describe(state: &SessionState, query: &Query) -> SqlResult<Arc<Vec<OutputColumn>>> {
    let expanded = views::expand_query(&state.engine, &state.instance, query)?;
    let mut params = Params::default();
    let planned = plan_query(state, &expanded, &mut params)?;
    if !params.types.is_empty() {
        return Err(SqlError::new(
            SqlState::UndefinedParameter,
            "there is no parameter $1: a view's query cannot take parameters",
        ));
    }
    Ok(planned.columns())
}

fn check_readable(state: &SessionState, sql: &str) -> SqlResult<()> {
    let query = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(sql)
        .and_then(|mut parser| parser.parse_query())
        .map_err(|e| SqlError::internal(format!("reading back a view: {e}")))?;
    describe(state, &query).map(|_| ())
}

/// The view's columns: the query's, renamed by the statement's column list.
fn view_columns(create: &ast::CreateView, planned: &[OutputColumn]) -> SqlResult<Vec<ViewColumn>> {
    if create.columns.len() > planned.len() {
        return Err(SqlError::syntax(
            "CREATE VIEW specifies more column names than columns",
        ));
    }
    let mut sources = HashSet::new();
    let mut names = HashSet::new();
    let mut columns = Vec::with_capacity(planned.len());
    for (i, column) in planned.iter().enumerate() {
        let name = create
            .columns
            .get(i)
            .map_or_else(|| column.name.clone(), |c| fold(&c.name));
        if !names.insert(name.clone()) {
            return Err(SqlError::new(
                SqlState::DuplicateColumn,
                format!("column \"{name}\" specified more than once"),
            ));
        }
        // The view selects its columns from the query's by these names.
        if !sources.insert(column.name.clone()) {
            return Err(SqlError::unsupported(format!(
                "a view whose query has two columns named \"{}\" (give them distinct names \
                 in the query)",
                column.name
            )));
        }
        let (type_oid, typmod) = column.described_type();
        columns.push(ViewColumn {
            name,
            source: column.name.clone(),
            type_oid,
            typmod,
        });
    }
    Ok(columns)
}

/// Gives each unnamed expression of the query's select list (the first one, of a UNION)
/// but a plain column, which keeps its name anyway, the name its result column has, so
/// the view selects it by that name whatever name the planner gives it inside a derived
/// table. An expression between two `*` keeps its own: where its column falls is not
/// known.
fn name_select_items(query: &mut Query, planned: &[OutputColumn]) {
    let mut body = query.body.as_mut();
    let select = loop {
        match body {
            SetExpr::Select(select) => break select,
            SetExpr::SetOperation { left, .. } => body = left.as_mut(),
            SetExpr::Query(inner) => body = inner.body.as_mut(),
            _ => return,
        }
    };
    let items = &mut select.projection;
    let is_wildcard = |item: &SelectItem| {
        matches!(
            item,
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
        )
    };
    let first_wildcard = items.iter().position(is_wildcard).unwrap_or(items.len());
    let last_wildcard = items.iter().rposition(is_wildcard);
    let after = last_wildcard.map_or(0, |w| items.len() - w - 1);
    for (i, item) in items.iter_mut().enumerate() {
        let column = if i < first_wildcard {
            planned.get(i)
        } else if last_wildcard.is_some_and(|w| i > w) {
            planned.len().checked_sub(after).and_then(|start| {
                let w = last_wildcard.unwrap_or_default();
                planned.get(start + (i - w - 1))
            })
        } else {
            None
        };
        let plain_column = |expr: &ast::Expr| {
            matches!(
                expr,
                ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
            )
        };
        if let (SelectItem::UnnamedExpr(expr), Some(column)) = (&*item, column) {
            if plain_column(expr) {
                continue;
            }
            *item = SelectItem::ExprWithAlias {
                expr: expr.clone(),
                alias: ast::Ident::with_quote('"', column.name.clone()),
            };
        }
    }
}

/// 42P16 unless the new columns keep the old ones, in order, with their names and
/// types (columns may be added at the end), as PostgreSQL requires of OR REPLACE.
fn refuse_changed_columns(existing: &ViewMeta, columns: &[ViewColumn]) -> SqlResult<()> {
    if columns.len() < existing.columns.len() {
        return Err(SqlError::new(
            SqlState::InvalidTableDefinition,
            "cannot drop columns from view",
        ));
    }
    for (old, new) in existing.columns.iter().zip(columns) {
        if old.name != new.name {
            return Err(SqlError::new(
                SqlState::InvalidTableDefinition,
                format!(
                    "cannot change name of view column \"{}\" to \"{}\"",
                    old.name, new.name
                ),
            ));
        }
        if (old.type_oid, old.typmod) != (new.type_oid, new.typmod) {
            return Err(SqlError::new(
                SqlState::InvalidTableDefinition,
                format!("cannot change data type of view column \"{}\"", old.name),
            ));
        }
    }
    Ok(())
}

/// Whether view `name` is among `reads` or what they read, through views.
fn reaches(state: &SessionState, reads: &[String], name: &str) -> bool {
    let mut seen: HashSet<String> = HashSet::new();
    let mut pending: Vec<String> = reads.to_vec();
    while let Some(relation) = pending.pop() {
        if relation == name {
            return true;
        }
        if !seen.insert(relation.clone()) {
            continue;
        }
        if let Some(view) = state.engine.view(&state.instance, &relation) {
            pending.extend(view.reads.iter().cloned());
        }
    }
    false
}

/// `DROP VIEW [IF EXISTS] names [CASCADE]`.
pub(super) async fn drop(
    state: &mut SessionState,
    names: &[ObjectName],
    if_exists: bool,
    cascade: bool,
) -> SqlResult<()> {
    let mut dropped = Vec::new();
    for name in names {
        let name = ddl::table_name(name)?;
        match state.engine.view(&state.instance, &name) {
            Some(_) => dropped.push(name),
            None if state.engine.table(&state.instance, &name).is_ok() => {
                return Err(not_a_view(&name))
            }
            None if if_exists => state
                .notices
                .push(format!("view \"{name}\" does not exist, skipping")),
            None => {
                return Err(SqlError::new(
                    SqlState::UndefinedTable,
                    format!("view \"{name}\" does not exist"),
                ))
            }
        }
    }
    let order = dependents_first(state, &dropped, "view", cascade)?;
    let cascaded: Vec<&String> = order.iter().filter(|v| !dropped.contains(v)).collect();
    note_cascade(state, &cascaded);
    drop_in_order(state, &order).await
}

/// PostgreSQL's notice of the views a CASCADE drops besides those named.
fn note_cascade(state: &SessionState, views: &[&String]) {
    match views {
        [] => {}
        [view] => state.notices.push(format!("drop cascades to view {view}")),
        _ => state.notices.push(format!(
            "drop cascades to {} other objects: {}",
            views.len(),
            views
                .iter()
                .map(|v| format!("drop cascades to view {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Before DROP TABLE of `tables`: the views that read them, refused (2BP01) or, with
/// CASCADE, dropped.
pub(super) async fn drop_views_reading(
    state: &mut SessionState,
    tables: &[String],
    cascade: bool,
) -> SqlResult<()> {
    let order = dependents_first(state, tables, "table", cascade)?;
    let views: Vec<String> = order
        .into_iter()
        .filter(|name| !tables.contains(name))
        .collect();
    note_cascade(state, &views.iter().collect::<Vec<_>>());
    drop_in_order(state, &views).await
}

/// `dropped` and, with `cascade`, every view that reads one of them, through views:
/// each after the views that read it. Without CASCADE a view that reads one of them
/// is 2BP01.
fn dependents_first(
    state: &SessionState,
    dropped: &[String],
    kind: &str,
    cascade: bool,
) -> SqlResult<Vec<String>> {
    let mut order: Vec<String> = Vec::new();
    let mut pending: Vec<String> = dropped.to_vec();
    while let Some(relation) = pending.pop() {
        if order.contains(&relation) {
            continue;
        }
        order.push(relation.clone());
        for reader in state.engine.views_reading(&state.instance, &relation) {
            if dropped.contains(&reader.name) || order.contains(&reader.name) {
                continue;
            }
            if !cascade {
                return Err(SqlError::new(
                    SqlState::DependentObjectsStillExist,
                    format!(
                        "cannot drop {kind} {relation} because other objects depend on it: \
                         view {} depends on {kind} {relation} (use DROP ... CASCADE to drop \
                         the dependent objects too)",
                        reader.name
                    ),
                ));
            }
            pending.push(reader.name.clone());
        }
    }
    // Views found later read those found earlier: drop them first.
    order.reverse();
    Ok(order)
}

/// Drops the views among `order`, in that order, each undone if a block rolls back.
async fn drop_in_order(state: &mut SessionState, order: &[String]) -> SqlResult<()> {
    for name in order {
        let Some(view) = state.engine.view(&state.instance, name) else {
            continue;
        };
        state.engine.drop_view(&state.instance, name).await?;
        if let Some(block) = state.transaction.as_mut() {
            block.changed_schema(SchemaUndo::RestoreView {
                name: name.clone(),
                before: Some((*view).clone()),
            });
        }
    }
    Ok(())
}

/// 2BP01 or 0A000 if ALTER TABLE would change table `table` under a view that reads it:
/// a view keeps its query as text, naming the table's columns.
pub(super) fn refuse_alter_under_views(
    state: &SessionState,
    alter: &ast::AlterTable,
) -> SqlResult<()> {
    let Ok(table) = ddl::table_name(&alter.name) else {
        return Ok(());
    };
    let readers = state.engine.views_reading(&state.instance, &table);
    let Some(reader) = readers.first() else {
        return Ok(());
    };
    for operation in &alter.operations {
        let what = match operation {
            ast::AlterTableOperation::DropColumn { column_names, .. } => {
                return Err(SqlError::new(
                    SqlState::DependentObjectsStillExist,
                    format!(
                        "cannot drop column {} of table {table} because other objects depend \
                         on it: view {} reads table {table} (pgwide does not tell which \
                         columns a view uses; drop the view first)",
                        column_names.iter().map(fold).collect::<Vec<_>>().join(", "),
                        reader.name
                    ),
                ))
            }
            ast::AlterTableOperation::RenameColumn { .. } => "rename a column of",
            ast::AlterTableOperation::RenameTable { .. } => "rename",
            ast::AlterTableOperation::AlterColumn {
                op: ast::AlterColumnOperation::SetDataType { .. },
                ..
            } => "alter the type of a column of",
            _ => continue,
        };
        return Err(SqlError::unsupported(format!(
            "pgwide cannot {what} table {table} while view {} reads it: a view keeps its \
             query as written (drop the view, alter the table, and create the view again)",
            reader.name
        )));
    }
    Ok(())
}

fn exists(name: &str) -> SqlError {
    SqlError::new(
        SqlState::DuplicateTable,
        format!("relation \"{name}\" already exists"),
    )
}

fn not_a_view(name: &str) -> SqlError {
    SqlError::new(
        SqlState::WrongObjectType,
        format!("\"{name}\" is not a view"),
    )
}
