//! `INSERT ... ON CONFLICT (pk) DO UPDATE SET ... [WHERE ...]`: one atomic batch of
//! PutRow EXPECT_NOT_EXIST for the keys not stored and UpdateRow EXPECT_EXIST for the
//! others, so the statement applies all or nothing, as in PostgreSQL.
//!
//! SET and WHERE read the proposed row as `EXCLUDED.x` and the stored row by its
//! columns (`t.x` or `x`). The stored rows are read first; a row whose WHERE is not
//! true is left alone (neither inserted nor updated, nor counted or returned). A key
//! that appears or vanishes before the batch applies, or (outside a transaction
//! block) a stored value SET or WHERE read that changes, fails its condition, and the
//! statement is decided again.

use super::{
    assignment_ops, plan_assignments, unchanged_since_read, Assignment, Target, WriteTarget,
};
use crate::engine::{
    BatchMode, ColumnOp, Condition, PkValue, PrimaryKey, Row, RowChange, RowExistence, RowView,
    RowWrite, TableMeta, WriteOutcome,
};
use crate::sql::expr::{compile, eval, fold, is_true, Params, Scalar, Scope};
use crate::sql::relation::{Relation, RelationKind, Source};
use crate::sql::sql_types::{Datum, SqlError, SqlResult, SqlType};
use crate::sql::values::declared_type;
use crate::sqlstate::SqlState;
use sqlparser::ast;
use std::sync::Arc;

/// How often an upsert is decided again after other sessions changed its rows.
const MAX_UPSERT_ATTEMPTS: usize = 8;

/// The DO UPDATE action. Its expressions read slots `0..width` for the proposed row
/// (one per INSERT target) and `width + s` for slot `s` of `stored`.
#[derive(Debug, Clone)]
pub(super) struct OnConflictUpdate {
    assignments: Vec<Assignment>,
    condition: Option<Scalar>,
    stored: Relation,
    width: usize,
}

/// The rows an upsert wrote, as written, and how many.
pub(super) struct Upserted {
    pub rows: Vec<Row>,
    pub count: usize,
}

impl OnConflictUpdate {
    pub(super) fn plan(
        table: &Arc<TableMeta>,
        alias: Option<&ast::TableAliasWithoutColumns>,
        names: &[String],
        targets: &[Target],
        update: &ast::DoUpdate,
        params: &mut Params,
    ) -> SqlResult<OnConflictUpdate> {
        let alias = alias.map(|a| fold(&a.alias));
        let mut scope = ConflictScope {
            table,
            names,
            targets,
            stored: Relation::new(Arc::clone(table), RelationKind::Table, alias),
        };
        let assignments = plan_assignments(table, &update.assignments, true, &mut scope, params)?;
        let condition = match &update.selection {
            Some(selection) => Some(compile(selection, &mut scope, params, Some(SqlType::Bool))?),
            None => None,
        };
        Ok(OnConflictUpdate {
            assignments,
            condition,
            stored: scope.stored,
            width: names.len(),
        })
    }

    /// Writes `rows` (key, PutRow operations, proposed values): returns the rows as
    /// written when `return_row`.
    pub(super) async fn write(
        &self,
        target: &mut WriteTarget<'_>,
        table: &Arc<TableMeta>,
        rows: &[(Vec<PkValue>, Vec<ColumnOp>, Vec<Datum>)],
        params: &[Datum],
        return_row: bool,
    ) -> SqlResult<Upserted> {
        let mut seen = std::collections::HashSet::with_capacity(rows.len());
        if let Some((pk, _, _)) = rows.iter().find(|(pk, _, _)| !seen.insert(pk)) {
            return Err(SqlError::new(
                SqlState::CardinalityViolation,
                format!(
                    "ON CONFLICT DO UPDATE command cannot affect row a second time: {}",
                    super::key_text(pk, table)
                ),
            ));
        }
        let guard_values = target.staged.is_none();
        let guarded = self.stored_columns_read();
        let pks: Vec<PrimaryKey> = rows.iter().map(|(pk, _, _)| pk.clone()).collect();
        for _ in 0..MAX_UPSERT_ATTEMPTS {
            let stored = target.stored(table, &pks).await?;
            let mut writes = Vec::with_capacity(rows.len());
            for ((pk, ops, proposed), stored) in rows.iter().zip(stored) {
                let (change, condition) = match stored {
                    // SET and WHERE are evaluated only for a row that conflicts.
                    Some(stored) => {
                        let values = self.values(proposed, &stored);
                        if let Some(condition) = &self.condition {
                            if !is_true(&eval(condition, &values, params)?) {
                                continue;
                            }
                        }
                        let ops = assignment_ops(&self.assignments, &values, params)?;
                        let exists = Condition::row(RowExistence::ExpectExist);
                        let condition = match guard_values && !guarded.is_empty() {
                            true => unchanged_since_read(&exists, &guarded, &values)?,
                            false => exists,
                        };
                        (RowChange::Update(ops), condition)
                    }
                    None => (
                        RowChange::Put(ops.clone()),
                        Condition::row(RowExistence::ExpectNotExist),
                    ),
                };
                let write = RowWrite {
                    pk: pk.clone(),
                    change,
                    condition,
                    return_row,
                };
                writes.push((Arc::clone(table), write));
            }
            let count = writes.len();
            let outcomes = target.write(writes, BatchMode::Atomic).await?;
            if outcomes
                .iter()
                .all(|o| matches!(o, WriteOutcome::Applied(_)))
            {
                let rows = outcomes
                    .into_iter()
                    .filter_map(|o| match o {
                        WriteOutcome::Applied(row) => row,
                        _ => None,
                    })
                    .collect();
                return Ok(Upserted { rows, count });
            }
        }
        Err(crate::engine::EngineError::WriteConflict.into())
    }

    /// The proposed values, then the stored row's slots.
    fn values(&self, proposed: &[Datum], stored: &Row) -> Vec<Datum> {
        let mut values = proposed.to_vec();
        let mut materialized = None;
        self.stored.materialize(&RowView::of(stored), None, |row| {
            materialized.get_or_insert(row);
        });
        values.extend(materialized.unwrap_or_default());
        values
    }

    /// The stored attribute columns SET or WHERE read, with their slots.
    fn stored_columns_read(&self) -> Vec<(String, usize)> {
        self.stored
            .needed
            .iter()
            .enumerate()
            .filter_map(
                |(slot, &column)| match &self.stored.columns[column].source {
                    Source::Attr(name) => Some((name.clone(), self.width + slot)),
                    _ => None,
                },
            )
            .collect()
    }
}

/// `EXCLUDED.column` is the proposed row's value for an INSERT target; any other
/// column is the stored row's.
struct ConflictScope<'a> {
    table: &'a TableMeta,
    names: &'a [String],
    targets: &'a [Target],
    stored: Relation,
}

impl Scope for ConflictScope<'_> {
    fn column(&mut self, qualifier: Option<&str>, name: &str) -> SqlResult<(usize, SqlType)> {
        match qualifier {
            // Both the stored row and EXCLUDED are in scope, as in PostgreSQL.
            None => {
                return Err(SqlError::new(
                    SqlState::AmbiguousColumn,
                    format!("column reference \"{name}\" is ambiguous"),
                ))
            }
            Some("excluded") => {}
            Some(_) => {
                let (slot, ty) = self.stored.column(qualifier, name)?;
                return Ok((self.names.len() + slot, ty));
            }
        }
        let slot = self.names.iter().position(|n| n == name).ok_or_else(|| {
            SqlError::new(
                SqlState::UndefinedColumn,
                format!("column excluded.{name} does not exist"),
            )
        })?;
        let ty = match &self.targets[slot] {
            Target::Pk(k) => {
                declared_type(self.table, &self.table.pk[*k].name).unwrap_or(SqlType::Int8)
            }
            Target::Attr(_, Some(ty)) => *ty,
            _ => SqlType::Int8,
        };
        Ok((slot, ty))
    }
}

/// Refuses an ON CONFLICT target other than the primary key: a unique index's columns
/// or name are 0A000 (pgwide finds conflicts by key only), and columns or a
/// constraint no unique index has are PostgreSQL's errors (42P10, 42704).
pub fn check_conflict_target(table: &TableMeta, target: &ast::ConflictTarget) -> SqlResult<()> {
    let unique_index = |matches: &dyn Fn(&crate::engine::IndexMeta) -> bool| {
        table.indexes.iter().any(|i| i.unique && matches(i))
    };
    let on_index = || {
        SqlError::unsupported(
            "ON CONFLICT on a unique index other than the primary key is not supported yet: \
             pgwide finds conflicting rows by their key",
        )
    };
    match target {
        ast::ConflictTarget::Columns(columns) => {
            let mut named: Vec<String> = columns.iter().map(fold).collect();
            named.sort();
            named.dedup();
            let same = |columns: &[String]| {
                let mut columns = columns.to_vec();
                columns.sort();
                columns == named
            };
            let key: Vec<String> = table.pk.iter().map(|c| c.name.clone()).collect();
            if !table.auto_rowid && same(&key) {
                Ok(())
            } else if unique_index(&|i| same(&i.columns)) {
                Err(on_index())
            } else {
                Err(SqlError::new(
                    SqlState::InvalidColumnReference,
                    "there is no unique or exclusion constraint matching the ON CONFLICT \
                     specification",
                ))
            }
        }
        ast::ConflictTarget::OnConstraint(name) => {
            let name = name
                .0
                .last()
                .and_then(|part| part.as_ident())
                .map(fold)
                .unwrap_or_default();
            if !table.auto_rowid && name == crate::sql::pg_catalog::pkey_name(table) {
                Ok(())
            } else if unique_index(&|i| i.name == name) {
                Err(on_index())
            } else {
                Err(SqlError::new(
                    SqlState::UndefinedObject,
                    format!(
                        "constraint \"{name}\" for table \"{}\" does not exist",
                        table.name
                    ),
                ))
            }
        }
    }
}
