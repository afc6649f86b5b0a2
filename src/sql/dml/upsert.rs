//! `INSERT ... ON CONFLICT (pk | unique columns | ON CONSTRAINT name) DO UPDATE SET ...
//! [WHERE ...]`: one atomic batch of PutRow EXPECT_NOT_EXIST for the rows that conflict
//! with none and UpdateRow EXPECT_EXIST for the rows they conflict with (see
//! `arbiter`), so the statement applies all or nothing, as in PostgreSQL.
//!
//! SET and WHERE read the proposed row as `EXCLUDED.x` and the stored row by its
//! columns (`t.x` or `x`). The stored rows are read first; a row whose WHERE is not
//! true is left alone (neither inserted nor updated, nor counted or returned). A key
//! that appears or vanishes before the batch applies, or (outside a transaction
//! block) a stored value SET or WHERE read that changes, fails its condition, and the
//! statement is decided again.

use super::arbiter::{Arbiter, Conflicting};
use super::{
    assignment_ops, plan_assignments, unchanged_since_read, Assignment, Target, WriteTarget,
};
use crate::engine::{
    proposed_index_values, BatchMode, ColumnCondition, ColumnOp, CompareOp, Condition,
    ConditionFailure, PkValue, Row, RowChange, RowExistence, RowView, RowWrite, TableMeta, Value,
    WriteOutcome,
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
    arbiter: Arbiter,
}

/// The rows an upsert wrote, as written, and how many.
pub(super) struct Upserted {
    pub rows: Vec<Row>,
    pub count: usize,
}

impl OnConflictUpdate {
    pub(super) fn plan(
        table: &Arc<TableMeta>,
        arbiter: Arbiter,
        alias: Option<&ast::TableAliasWithoutColumns>,
        names: &[String],
        targets: &[Target],
        update: &ast::DoUpdate,
        params: &mut Params,
    ) -> SqlResult<OnConflictUpdate> {
        let alias = alias.map(|a| fold(&a.alias));
        let stored_name = alias.clone().unwrap_or_else(|| table.name.clone());
        let mut scope = ConflictScope {
            table,
            names,
            targets,
            stored: Relation::new(Arc::clone(table), RelationKind::Table, alias),
        };
        let assignments = plan_assignments(
            table,
            &update.assignments,
            Some(&stored_name),
            &mut scope,
            params,
        )?;
        let condition = match &update.selection {
            Some(selection) => Some(compile(selection, &mut scope, params, Some(SqlType::Bool))?),
            None => None,
        };
        Ok(OnConflictUpdate {
            assignments,
            condition,
            stored: scope.stored,
            width: names.len(),
            arbiter,
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
        let guard_values = target.staged.is_none();
        let guarded = self.stored_columns_read();
        let mut lost = None;
        for _ in 0..MAX_UPSERT_ATTEMPTS {
            let conflicts = self.arbiter.conflicts(target, table, rows).await?;
            let mut updated = std::collections::HashSet::new();
            let mut writes = Vec::with_capacity(rows.len());
            for ((pk, ops, proposed), conflict) in rows.iter().zip(conflicts) {
                let (pk, change, condition) = match conflict {
                    // SET and WHERE are evaluated only for a row that conflicts.
                    Some(Conflicting::Stored(key, stored)) => {
                        if !updated.insert(key.clone()) {
                            return Err(affected_twice());
                        }
                        let values = self.values(proposed, &stored);
                        if let Some(condition) = &self.condition {
                            if !is_true(&eval(condition, &values, params)?) {
                                continue;
                            }
                        }
                        let assigned = assignment_ops(table, &self.assignments, &values, params)?;
                        let mut condition = Condition::row(RowExistence::ExpectExist);
                        if guard_values {
                            if !guarded.is_empty() {
                                condition = unchanged_since_read(&condition, &guarded, &values)?;
                            }
                            condition =
                                still_showing(condition, self.arbiter_values(table, pk, ops));
                        }
                        (key, RowChange::Update(assigned), condition)
                    }
                    Some(Conflicting::Proposed) => return Err(affected_twice()),
                    None => (
                        pk.clone(),
                        RowChange::Put(ops.clone()),
                        Condition::row(RowExistence::ExpectNotExist),
                    ),
                };
                let write = RowWrite {
                    pk,
                    change,
                    condition,
                    return_row,
                };
                writes.push((Arc::clone(table), write));
            }
            let count = writes.len();
            let outcomes = match target.attempt_write(writes, BatchMode::Atomic).await? {
                Ok(outcomes) => outcomes,
                Err(e) if self.arbiter.judges_violation(table, &e) => {
                    lost = Some(e);
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if self.arbiter != Arbiter::Key {
                // A key taken is not what this arbiter judges: a duplicate key.
                let taken = outcomes.iter().zip(rows).find(|(o, _)| {
                    matches!(
                        o,
                        WriteOutcome::ConditionFailed(ConditionFailure::RowExists)
                    )
                });
                if let Some((_, (pk, _, _))) = taken {
                    return Err(super::duplicate_key(table, pk));
                }
            }
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
        Err(lost
            .unwrap_or(crate::engine::EngineError::WriteConflict)
            .into())
    }

    /// The arbiter index's attribute columns and the values a proposed row gives them
    /// (its key columns are the conflicting row's key, which cannot change).
    fn arbiter_values(
        &self,
        table: &TableMeta,
        pk: &[PkValue],
        ops: &[ColumnOp],
    ) -> Vec<(String, Value)> {
        let Arbiter::Index(i) = self.arbiter else {
            return Vec::new();
        };
        let Some(index) = table.indexes.get(i) else {
            return Vec::new();
        };
        let values = proposed_index_values(table, index, pk, ops).unwrap_or_default();
        index
            .columns
            .iter()
            .cloned()
            .zip(values)
            .filter(|(column, _)| table.pk_index(column).is_none())
            .collect()
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

/// `condition`, and the row still showing the values it conflicted by: a row that
/// changed them since it was read is no longer the conflict, and the statement is
/// decided again.
fn still_showing(condition: Condition, values: Vec<(String, Value)>) -> Condition {
    if values.is_empty() {
        return condition;
    }
    let mut parts: Vec<ColumnCondition> = condition.column.into_iter().collect();
    parts.extend(
        values
            .into_iter()
            .map(|(column, value)| ColumnCondition::Compare {
                column,
                op: CompareOp::Eq,
                value,
                pass_if_missing: false,
            }),
    );
    Condition {
        row: condition.row,
        column: Some(ColumnCondition::And(parts)),
    }
}

/// A statement that would update one row twice, or update a row it inserted (21000).
fn affected_twice() -> SqlError {
    SqlError::new(
        SqlState::CardinalityViolation,
        "ON CONFLICT DO UPDATE command cannot affect row a second time: ensure that no \
         rows proposed for insertion within the same command have duplicate constrained \
         values",
    )
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

/// The arbiter of an ON CONFLICT target: the primary key (its columns in any order,
/// or `<table>_pkey`) or a unique index (its columns, or its name); columns or a
/// constraint no unique index has are PostgreSQL's errors (42P10, 42704). No target
/// at all is `Arbiter::Any`, which only DO NOTHING may have (42601).
pub fn conflict_arbiter(
    table: &TableMeta,
    target: Option<&ast::ConflictTarget>,
) -> SqlResult<Arbiter> {
    let unique_index = |matches: &dyn Fn(&crate::engine::IndexMeta) -> bool| {
        table
            .indexes
            .iter()
            .position(|i| i.unique && matches(i))
            .map(Arbiter::Index)
    };
    match target {
        None => Ok(Arbiter::Any),
        Some(ast::ConflictTarget::Columns(columns)) => {
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
                return Ok(Arbiter::Key);
            }
            unique_index(&|i| same(&i.columns)).ok_or_else(|| {
                SqlError::new(
                    SqlState::InvalidColumnReference,
                    "there is no unique or exclusion constraint matching the ON CONFLICT \
                     specification",
                )
            })
        }
        Some(ast::ConflictTarget::OnConstraint(name)) => {
            let name = name
                .0
                .last()
                .and_then(|part| part.as_ident())
                .map(fold)
                .unwrap_or_default();
            if !table.auto_rowid && name == crate::sql::pg_catalog::pkey_name(table) {
                return Ok(Arbiter::Key);
            }
            unique_index(&|i| i.name == name).ok_or_else(|| {
                SqlError::new(
                    SqlState::UndefinedObject,
                    format!(
                        "constraint \"{name}\" for table \"{}\" does not exist",
                        table.name
                    ),
                )
            })
        }
    }
}
