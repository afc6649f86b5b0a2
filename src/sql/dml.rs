//! INSERT, UPDATE and DELETE (docs/table-store.md §12). INSERT is PutRow EXPECT_NOT_EXIST per
//! row in one atomic batch; UPDATE/DELETE find their rows through the read planner (a
//! full PK is a GetRow) and write each with EXPECT_EXIST plus the WHERE clause's attribute
//! comparisons as an atomic column condition. Inside a transaction the writes are staged.

use super::access::{plan_read, ReadPlan};
use super::ddl::table_name;
use super::expr::{compile, eval, fold, NoColumns, Params, Scalar};
use super::relation::{Relation, RelationKind, Source};
use super::row_reader::{read_rows, ReadContext};
use super::select::{output_type, static_type};
use super::sql_types::{Datum, OutputColumn, SqlError, SqlResult, SqlType, StatementResult};
use super::values::{
    attribute_value, column_value, datum_to_natural_value, datum_to_pk, datum_to_value,
    declared_type, key_value, natural_value, null_in_key, sql_value_type,
};
use crate::engine::{
    BatchMode, ColumnCondition, ColumnOp, Condition, ConditionFailure, Direction, Engine, PkValue,
    PrimaryKey, RowChange, RowExistence, RowView, RowWrite, StagedWrites, TableMeta, WriteOutcome,
};
use crate::sqlstate::SqlState;
use futures::{stream, StreamExt};
use sqlparser::ast::{self, Expr, SelectItem, SetExpr};
use std::sync::Arc;

mod arbiter;
mod upsert;

use arbiter::Arbiter;

/// The pseudo-column that gives written cells an explicit version.
pub const VERSION_COLUMN: &str = "_version";

/// What one INSERT column writes to.
#[derive(Debug, Clone)]
enum Target {
    Pk(usize),
    /// An attribute and its declared SQL type (`None`: not yet known).
    Attr(String, Option<SqlType>),
    Version,
}

#[derive(Debug, Clone)]
enum Conflict {
    Error,
    /// Rows that conflict under the arbiter are passed over.
    DoNothing(Arbiter),
    /// Merge: these assignments when the row exists (see `upsert`).
    DoUpdate(Box<upsert::OnConflictUpdate>),
}

#[derive(Debug, Clone)]
enum Assignment {
    Put {
        column: String,
        ty: Option<SqlType>,
        value: Scalar,
    },
    Delete {
        column: String,
    },
    Increment {
        column: String,
        by: Scalar,
        negate: bool,
        /// Table Store's increment, a missing cell counting as 0 (a schema-free or
        /// unknown column); otherwise SQL's `NULL + k`, which stays NULL.
        from_zero: bool,
    },
    Version(Scalar),
}

/// RETURNING: expressions over the relation's slots.
#[derive(Debug, Clone)]
pub(super) struct Returning {
    relation: Relation,
    items: Vec<Scalar>,
    columns: Arc<Vec<OutputColumn>>,
}

#[derive(Debug, Clone)]
pub struct InsertPlan {
    table: Arc<TableMeta>,
    targets: Vec<Target>,
    rows: Vec<Vec<Scalar>>,
    conflict: Conflict,
    returning: Option<Returning>,
    /// Generated columns the INSERT names no value for, with their sequences: each
    /// row takes the next value.
    generated: Vec<(Target, String)>,
    /// VALUES cells that say `DEFAULT` in a generated column, as (row, target): each
    /// takes the column's sequence's next value.
    defaults: Vec<(usize, usize, String)>,
}

#[derive(Debug, Clone)]
pub struct UpdatePlan {
    read: ReadPlan,
    assignments: Vec<Assignment>,
    returning: Option<Returning>,
}

#[derive(Debug, Clone)]
pub struct DeletePlan {
    read: ReadPlan,
    returning: Option<Returning>,
}

impl InsertPlan {
    /// How many values each inserted row holds.
    pub fn width(&self) -> usize {
        self.targets.len()
    }

    /// The first `n` columns of the table, in order: what an INSERT without a column
    /// list whose rows hold `n` values writes, as PostgreSQL reads it.
    pub fn first_columns(&self, n: usize) -> Vec<String> {
        let table = &self.table;
        table
            .ordered_columns()
            .into_iter()
            .filter(|c| !(table.auto_rowid && *c == super::ddl::ROWID))
            .take(n)
            .map(String::from)
            .collect()
    }

    pub fn columns(&self) -> Arc<Vec<OutputColumn>> {
        self.returning
            .as_ref()
            .map(|r| Arc::clone(&r.columns))
            .unwrap_or_default()
    }
}
impl UpdatePlan {
    /// Whether the statement reads stored values (WHERE, RETURNING, or an assignment
    /// such as `n = n + 1`), so it needs SELECT as well as UPDATE.
    pub fn reads_rows(&self) -> bool {
        self.read.filters()
            || self.returning.is_some()
            || self.assignments.iter().any(|a| match a {
                Assignment::Put { value, .. } => value.reads_columns(),
                Assignment::Increment { .. } => true,
                Assignment::Version(value) => value.reads_columns(),
                Assignment::Delete { .. } => false,
            })
    }

    pub fn columns(&self) -> Arc<Vec<OutputColumn>> {
        self.returning
            .as_ref()
            .map(|r| Arc::clone(&r.columns))
            .unwrap_or_default()
    }
}
impl DeletePlan {
    /// Whether the statement reads stored values (WHERE or RETURNING), so it needs
    /// SELECT as well as DELETE.
    pub fn reads_rows(&self) -> bool {
        self.read.filters() || self.returning.is_some()
    }

    pub fn columns(&self) -> Arc<Vec<OutputColumn>> {
        self.returning
            .as_ref()
            .map(|r| Arc::clone(&r.columns))
            .unwrap_or_default()
    }
}

pub(super) fn plan_returning(
    mut relation: Relation,
    items: Option<&Vec<SelectItem>>,
    params: &mut Params,
) -> SqlResult<Option<Returning>> {
    let Some(items) = items else { return Ok(None) };
    let mut scalars = Vec::new();
    let mut columns = Vec::new();
    for item in items {
        match item {
            SelectItem::Wildcard(_) => {
                for index in 0..relation.columns.len() {
                    if relation.columns[index].hidden {
                        continue;
                    }
                    columns.push(OutputColumn {
                        name: relation.columns[index].name.clone(),
                        ty: relation.columns[index].ty,
                        origin: relation.origin(index),
                    });
                    scalars.push(Scalar::Column(relation.slot(index)));
                }
            }
            SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => {
                let scalar = compile(expr, &mut relation, params, None)?;
                let ty = output_type(&scalar, Some(&relation), params);
                let name = match (item, expr) {
                    (SelectItem::ExprWithAlias { alias, .. }, _) => fold(alias),
                    (_, Expr::Identifier(ident)) => fold(ident),
                    (_, Expr::CompoundIdentifier(parts)) => {
                        parts.last().map(fold).unwrap_or_default()
                    }
                    _ => super::expr::output_name(expr),
                };
                // A column returned as it is keeps its origin (a VARCHAR column is
                // described as one), as PostgreSQL marks RETURNING's columns.
                let origin = match scalar {
                    Scalar::Column(slot) => relation.slot_origin(slot),
                    _ => None,
                };
                columns.push(OutputColumn { name, ty, origin });
                scalars.push(scalar);
            }
            other => {
                return Err(SqlError::unsupported(format!(
                    "RETURNING {other} is not supported"
                )))
            }
        }
    }
    Ok(Some(Returning {
        relation,
        items: scalars,
        columns: Arc::new(columns),
    }))
}

/// A value written to a column of type `expected`: a decimal literal written to an
/// integer column rounds as PostgreSQL's numeric does (2.5 to 3).
fn compile_value(
    expr: &Expr,
    scope: &mut dyn super::expr::Scope,
    params: &mut Params,
    expected: Option<SqlType>,
) -> SqlResult<Scalar> {
    if matches!(
        expected,
        Some(SqlType::Int2 | SqlType::Int4 | SqlType::Int8)
    ) {
        if let Some(whole) = super::expr::numeric_literal_rounded(expr)? {
            return Ok(Scalar::Const(Datum::Int(whole)));
        }
    }
    compile(expr, scope, params, expected)
}

pub fn plan_insert(
    engine: &Engine,
    instance: &str,
    insert: &ast::Insert,
    params: &mut Params,
) -> SqlResult<InsertPlan> {
    let ast::TableObject::TableName(name) = &insert.table else {
        return Err(SqlError::unsupported(
            "INSERT into a table function is not supported",
        ));
    };
    let table = engine.table(instance, &table_name(name)?)?;
    let column_names: Vec<String> = if insert.columns.is_empty() {
        table
            .ordered_columns()
            .into_iter()
            .filter(|c| !(table.auto_rowid && *c == super::ddl::ROWID))
            .map(String::from)
            .collect()
    } else {
        insert
            .columns
            .iter()
            .map(|c| super::ddl::object_name(c).map(|(_, n)| n))
            .collect::<SqlResult<Vec<_>>>()?
    };
    let source = insert
        .source
        .as_ref()
        .ok_or_else(|| SqlError::unsupported("INSERT without VALUES is not supported"))?;
    let mut rows = Vec::new();
    // Any other body is a query: the session plans it and hands its rows to
    // `execute_insert_rows`, so it may use the fast path or DataFusion.
    let values = match &*source.body {
        SetExpr::Values(values) => values.rows.as_slice(),
        _ => &[],
    };
    let width = values.first().map_or(column_names.len(), |row| row.len());
    if values.iter().any(|row| row.len() != width) {
        return Err(SqlError::syntax("VALUES lists must all be the same length"));
    }
    // Without a column list, shorter rows fill the first columns; the rest are left
    // unset (NULL), as PostgreSQL leaves them to their defaults.
    let mut column_names = column_names;
    if insert.columns.is_empty() && width < column_names.len() {
        column_names.truncate(width);
    }
    let targets = insert_targets(&table, &column_names)?;
    let generated = omitted_generated(&table, &column_names);
    let mut defaults = Vec::new();
    for (n, row) in values.iter().enumerate() {
        if row.len() != targets.len() {
            return Err(SqlError::syntax(match row.len() > targets.len() {
                true => "INSERT has more expressions than target columns",
                false => "INSERT has more target columns than expressions",
            }));
        }
        let mut scalars = Vec::new();
        for (i, (expr, target)) in row.iter().zip(&targets).enumerate() {
            let generator = table.generated.get(&column_names[i]);
            if super::ddl::defaults::is_default_item(expr) {
                // No column has a default but a generated one's: DEFAULT is NULL.
                if let Some(generator) = generator {
                    defaults.push((n, i, generator.sequence.clone()));
                }
                scalars.push(Scalar::Const(Datum::Null));
                continue;
            }
            refuse_always(&column_names[i], generator)?;
            let expected = match target {
                Target::Pk(k) => declared_type(&table, &table.pk[*k].name),
                // A schema-free column's value keeps its own type unless the column's
                // holds it as the same value (`attribute_value`): not coerced here.
                Target::Attr(column, _) if table.is_schema_free(column) => None,
                Target::Attr(_, ty) => *ty,
                Target::Version => Some(SqlType::Int8),
            };
            scalars.push(compile_value(expr, &mut NoColumns, params, expected)?);
        }
        rows.push(scalars);
    }
    let conflict = match &insert.on {
        None => Conflict::Error,
        Some(ast::OnInsert::OnConflict(on)) => match &on.action {
            ast::OnConflictAction::DoNothing => Conflict::DoNothing(upsert::conflict_arbiter(
                &table,
                on.conflict_target.as_ref(),
            )?),
            ast::OnConflictAction::DoUpdate(update) => {
                let arbiter = match upsert::conflict_arbiter(&table, on.conflict_target.as_ref())? {
                    Arbiter::Any => {
                        return Err(SqlError::syntax(
                            "ON CONFLICT DO UPDATE requires inference specification or \
                             constraint name",
                        ))
                    }
                    arbiter => arbiter,
                };
                Conflict::DoUpdate(Box::new(upsert::OnConflictUpdate::plan(
                    &table,
                    arbiter,
                    insert.table_alias.as_ref(),
                    &column_names,
                    &targets,
                    update,
                    params,
                )?))
            }
        },
        Some(_) => return Err(SqlError::unsupported("this ON clause is not supported")),
    };
    if values.is_empty() {
        // INSERT ... SELECT: every row gives a value.
        for column in &column_names {
            refuse_always(column, table.generated.get(column))?;
        }
    }
    let relation = Relation::new(Arc::clone(&table), RelationKind::Table, None);
    let returning = plan_returning(relation, insert.returning.as_ref(), params)?;
    Ok(InsertPlan {
        table,
        targets,
        rows,
        conflict,
        returning,
        generated,
        defaults,
    })
}

/// 428C9 for a value given to a `GENERATED ALWAYS AS IDENTITY` column.
fn refuse_always(column: &str, generator: Option<&crate::engine::Generated>) -> SqlResult<()> {
    match generator {
        Some(g) if g.kind == crate::engine::GeneratedKind::Always => Err(SqlError::new(
            SqlState::GeneratedAlways,
            format!(
                "cannot insert a non-DEFAULT value into column \"{column}\": it is an \
                 identity column defined as GENERATED ALWAYS"
            ),
        )),
        _ => Ok(()),
    }
}

/// The generated columns of `table` an INSERT into `columns` leaves out, with their
/// sequences.
fn omitted_generated(table: &TableMeta, columns: &[String]) -> Vec<(Target, String)> {
    table
        .generated
        .iter()
        .filter(|(column, _)| !columns.contains(column))
        .map(|(column, generator)| {
            let target = match table.pk_index(column) {
                Some(k) => Target::Pk(k),
                None => Target::Attr(column.clone(), declared_type(table, column)),
            };
            (target, generator.sequence.clone())
        })
        .collect()
}

/// A plain INSERT of query rows into `columns` of `table` (CREATE TABLE AS).
pub fn insert_into(table: Arc<TableMeta>, columns: &[String]) -> SqlResult<InsertPlan> {
    Ok(InsertPlan {
        targets: insert_targets(&table, columns)?,
        table,
        rows: Vec::new(),
        conflict: Conflict::Error,
        returning: None,
        generated: Vec::new(),
        defaults: Vec::new(),
    })
}

/// What each named INSERT column writes to.
fn insert_targets(table: &TableMeta, column_names: &[String]) -> SqlResult<Vec<Target>> {
    let mut targets = Vec::new();
    for column in column_names {
        targets.push(if column == VERSION_COLUMN {
            Target::Version
        } else if let Some(k) = table.pk_index(column) {
            if table.auto_rowid {
                return Err(SqlError::new(
                    SqlState::GeneratedAlways,
                    format!("cannot insert a value into the hidden column \"{column}\""),
                ));
            }
            Target::Pk(k)
        } else {
            crate::engine::check_name(column)?;
            Target::Attr(column.clone(), declared_type(table, column))
        });
    }
    Ok(targets)
}

/// The SET list of an UPDATE, or of ON CONFLICT DO UPDATE (`on_conflict`, whose
/// `scope` is the EXCLUDED row).
/// `on_conflict`: the assignments are an upsert's DO UPDATE, whose stored row is
/// named by the given alias or table name.
fn plan_assignments(
    table: &TableMeta,
    list: &[ast::Assignment],
    on_conflict: Option<&str>,
    scope: &mut dyn super::expr::Scope,
    params: &mut Params,
) -> SqlResult<Vec<Assignment>> {
    let mut out = Vec::new();
    for assignment in list {
        let ast::AssignmentTarget::ColumnName(name) = &assignment.target else {
            return Err(SqlError::unsupported("tuple assignments are not supported"));
        };
        let column = super::ddl::object_name(name)?.1;
        if column == VERSION_COLUMN {
            out.push(Assignment::Version(compile(
                &assignment.value,
                scope,
                params,
                Some(SqlType::Int8),
            )?));
            continue;
        }
        if table.pk_index(&column).is_some() {
            // `SET id = id`, or in ON CONFLICT `SET id = EXCLUDED.id` (what Knex's
            // merge() and Sequelize's upsert send): the key keeps its value.
            let unchanged = match &assignment.value {
                Expr::Identifier(name) => fold(name) == column,
                Expr::CompoundIdentifier(parts) => match parts.as_slice() {
                    [qualifier, name] => {
                        on_conflict.is_some()
                            && fold(qualifier) == "excluded"
                            && fold(name) == column
                    }
                    _ => false,
                },
                _ => false,
            };
            if unchanged {
                continue;
            }
            return Err(SqlError::unsupported(format!(
                "primary key column \"{column}\" cannot be updated"
            )));
        }
        crate::engine::check_name(&column)?;
        let ty = declared_type(table, &column);
        if matches!(&assignment.value, Expr::Value(v) if v.value == ast::Value::Null) {
            out.push(Assignment::Delete { column });
            continue;
        }
        // `n = n + k` / `n = n - k` with integers is Table Store's atomic increment;
        // any other expression (`price = price + 1.5`) is an ordinary computed update.
        // In a schema-free or unknown column a missing cell counts as 0, as in Table
        // Store; in a declared one SQL's `NULL + k` stays NULL. (In ON CONFLICT an
        // unqualified `n` is ambiguous; `t.n + 1` over a declared column reads the
        // stored row as any computed value does, over a schema-free one increments.)
        let from_zero = table.column(&column).is_none() || table.is_schema_free(&column);
        if let Expr::BinaryOp { left, op, right } = &assignment.value {
            let same = match (&**left, on_conflict) {
                (Expr::Identifier(i), None) => fold(i) == column,
                (Expr::CompoundIdentifier(parts), Some(stored)) if from_zero => {
                    matches!(parts.as_slice(), [q, n] if fold(q) == stored && fold(n) == column)
                }
                _ => false,
            };
            let sign = match op {
                ast::BinaryOperator::Plus => Some(false),
                ast::BinaryOperator::Minus => Some(true),
                _ => None,
            };
            let integer_column = matches!(
                ty,
                None | Some(SqlType::Int2 | SqlType::Int4 | SqlType::Int8)
            );
            if let (true, Some(negate), true) = (same, sign, integer_column) {
                let mut by_params = params.clone();
                let by = compile(right, &mut NoColumns, &mut by_params, Some(SqlType::Int8));
                let integer = |ty| matches!(ty, SqlType::Int2 | SqlType::Int4 | SqlType::Int8);
                if let Some(by) = by.ok().filter(|by| integer(static_type(by, &by_params))) {
                    *params = by_params;
                    out.push(Assignment::Increment {
                        column,
                        by,
                        negate,
                        from_zero,
                    });
                    continue;
                }
            }
        }
        // Not coerced to a schema-free column's type: see `attribute_value`.
        let expected = ty.filter(|_| !table.is_schema_free(&column));
        let value = compile_value(&assignment.value, scope, params, expected)?;
        out.push(Assignment::Put { column, ty, value });
    }
    Ok(out)
}

/// The table an UPDATE changes; UPDATE ... FROM, a join or a versions relation is 0A000.
pub(super) fn update_target(
    engine: &Engine,
    instance: &str,
    update: &ast::Update,
) -> SqlResult<Relation> {
    if update.from.is_some() || !update.table.joins.is_empty() {
        return Err(SqlError::unsupported("UPDATE ... FROM is not supported"));
    }
    let relation = super::relation::resolve_relation(engine, instance, &update.table.relation)?;
    if relation.kind != RelationKind::Table {
        return Err(SqlError::unsupported(
            "versions relations cannot be updated",
        ));
    }
    Ok(relation)
}

/// The one table a DELETE deletes from; several tables, a join or USING is 0A000
/// (USING was once parsed and ignored).
pub(super) fn delete_target(delete: &ast::Delete) -> SqlResult<&ast::TableFactor> {
    let from = match &delete.from {
        ast::FromTable::WithFromKeyword(t) | ast::FromTable::WithoutKeyword(t) => t,
    };
    let [target] = from.as_slice() else {
        return Err(SqlError::unsupported(
            "DELETE from several tables is not supported",
        ));
    };
    if delete.using.is_some() || !target.joins.is_empty() {
        return Err(SqlError::unsupported("DELETE ... USING is not supported"));
    }
    Ok(&target.relation)
}

pub fn plan_update(
    engine: &Engine,
    instance: &str,
    update: &ast::Update,
    params: &mut Params,
) -> SqlResult<UpdatePlan> {
    let mut relation = update_target(engine, instance, update)?;
    let table = Arc::clone(&relation.table);
    let assignments = plan_assignments(&table, &update.assignments, None, &mut relation, params)?;
    let read = plan_read(
        relation,
        update.selection.as_ref(),
        params,
        Direction::Forward,
    )?;
    let returning = plan_returning(read.relation.clone(), update.returning.as_ref(), params)?;
    Ok(UpdatePlan {
        read,
        assignments,
        returning,
    })
}

pub fn plan_delete(
    engine: &Engine,
    instance: &str,
    delete: &ast::Delete,
    params: &mut Params,
) -> SqlResult<DeletePlan> {
    let relation = super::relation::resolve_relation(engine, instance, delete_target(delete)?)?;
    // DELETE RETURNING evaluates its items on the rows the read finds before deleting
    // them, so the read must fetch the columns they use: they are compiled first, and
    // the read planned over the relation with their slots.
    let mut returning = plan_returning(relation.clone(), delete.returning.as_ref(), params)?;
    let relation = returning.as_ref().map_or(relation, |r| r.relation.clone());
    let read = plan_read(
        relation,
        delete.selection.as_ref(),
        params,
        Direction::Forward,
    )?;
    if let Some(r) = returning.as_mut() {
        r.relation = read.relation.clone();
    }
    Ok(DeletePlan { read, returning })
}

/// Where a statement's writes go: straight to the engine, or staged in a transaction.
pub struct WriteTarget<'a> {
    pub engine: &'a Arc<Engine>,
    pub staged: Option<&'a mut StagedWrites>,
    /// Where generated keys are recorded for currval and lastval.
    pub sequence_values: &'a super::sequence_values::SequenceValues,
}

impl WriteTarget<'_> {
    /// Writes a statement's rows in one engine batch, whatever their number, after
    /// refusing a row over the request byte limit (54000). So an error on any row (an
    /// increment that overflows, a value over a limit) leaves nothing of the statement
    /// written, as in PostgreSQL; with `Independent`, rows whose condition fails are
    /// passed over and the others written. Split into BatchWriteRow-sized engine calls,
    /// the calls before the failing one stayed applied.
    ///
    /// In a transaction the whole statement is staged at once, over the rows as the
    /// block left them (see `engine::StagedWrites`).
    pub(super) async fn write(
        &mut self,
        writes: Vec<(Arc<TableMeta>, RowWrite)>,
        mode: BatchMode,
    ) -> SqlResult<Vec<WriteOutcome>> {
        self.refuse_oversized_rows(&writes)?;
        let result = match self.staged.as_deref_mut() {
            Some(staged) => self.engine.stage_writes(staged, writes, mode).await?,
            None => self.engine.write_rows(writes, mode).await?,
        };
        Ok(result.outcomes)
    }

    /// `write`, with the engine's error given back as such (for the caller to judge)
    /// rather than as the statement's.
    pub(super) async fn attempt_write(
        &mut self,
        writes: Vec<(Arc<TableMeta>, RowWrite)>,
        mode: BatchMode,
    ) -> SqlResult<crate::engine::EngineResult<Vec<WriteOutcome>>> {
        self.refuse_oversized_rows(&writes)?;
        let result = match self.staged.as_deref_mut() {
            Some(staged) => self.engine.stage_writes(staged, writes, mode).await,
            None => self.engine.write_rows(writes, mode).await,
        };
        Ok(result.map(|result| result.outcomes))
    }

    /// Each row as this statement's writes will find it (`None` if not stored): with
    /// the transaction's staged writes laid over the stored rows.
    async fn stored(
        &self,
        table: &TableMeta,
        pks: &[PrimaryKey],
    ) -> SqlResult<Vec<Option<crate::engine::Row>>> {
        let read = crate::engine::ReadOptions::default();
        if let Some(staged) = self.staged.as_deref() {
            return Ok(self
                .engine
                .preview_rows(&staged.view(), table, pks, &read)
                .await?);
        }
        let mut stored = Vec::with_capacity(pks.len());
        for chunk in pks.chunks(self.engine.limits().max_batch_get_rows.max(1)) {
            let result = self.engine.batch_get_row(table, chunk, &read).await?;
            stored.extend(result.rows);
        }
        Ok(stored)
    }

    /// Refuses a row larger than a whole BatchWriteRow request (54000).
    fn refuse_oversized_rows(&self, writes: &[(Arc<TableMeta>, RowWrite)]) -> SqlResult<()> {
        let limit = self.engine.limits().max_batch_write_bytes;
        match writes
            .iter()
            .map(|(_, w)| w.size())
            .find(|&size| size > limit)
        {
            Some(bytes) => Err(crate::engine::EngineError::RequestTooLarge { bytes, limit }.into()),
            None => Ok(()),
        }
    }

    fn read_context(&self) -> ReadContext {
        ReadContext {
            engine: Arc::clone(self.engine),
            staged: self.staged.as_deref().map(StagedWrites::view),
            // Writes act on the current rows, whatever the session reads as of.
            as_of: None,
            snapshot: None,
            meter: None,
            notices: None,
            transaction_start: None,
        }
    }
}

fn key_text(pk: &[PkValue], table: &TableMeta) -> String {
    let names: Vec<&str> = table.pk.iter().map(|c| c.name.as_str()).collect();
    let values: Vec<String> = pk
        .iter()
        .map(|v| match v {
            PkValue::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    format!(
        "Key ({})=({}) already exists.",
        names.join(", "),
        values.join(", ")
    )
}

fn assignment_ops(
    table: &TableMeta,
    assignments: &[Assignment],
    row: &[Datum],
    params: &[Datum],
) -> SqlResult<Vec<ColumnOp>> {
    let mut version = None;
    for a in assignments {
        if let Assignment::Version(s) = a {
            version = match eval(s, row, params)? {
                Datum::Int(v) => Some(v),
                Datum::Null => None,
                other => {
                    return Err(SqlError::new(
                        SqlState::DatatypeMismatch,
                        format!(
                            "_version must be a bigint, not {}",
                            super::values::render(&other)
                        ),
                    ))
                }
            };
        }
    }
    let mut ops = Vec::new();
    for a in assignments {
        match a {
            Assignment::Version(_) => {}
            Assignment::Delete { column } => ops.push(ColumnOp::DeleteAll {
                column: column.clone(),
            }),
            Assignment::Increment {
                column,
                by,
                negate,
                from_zero,
            } => {
                let by = match eval(by, row, params)? {
                    Datum::Int(i) => {
                        if *negate {
                            i.checked_neg().ok_or_else(|| {
                                SqlError::new(
                                    SqlState::NumericValueOutOfRange,
                                    "bigint out of range",
                                )
                            })?
                        } else {
                            i
                        }
                    }
                    other => {
                        return Err(SqlError::new(
                            SqlState::DatatypeMismatch,
                            format!(
                                "increment must be an integer, not {}",
                                super::values::render(&other)
                            ),
                        ))
                    }
                };
                let column = column.clone();
                ops.push(match from_zero {
                    true => ColumnOp::Increment { column, by },
                    false => ColumnOp::Add { column, by },
                });
            }
            Assignment::Put { column, ty, value } => match eval(value, row, params)? {
                Datum::Null => ops.push(ColumnOp::DeleteAll {
                    column: column.clone(),
                }),
                d => {
                    let value = attribute_value(table, column, d, *ty)?;
                    ops.push(ColumnOp::Put {
                        column: column.clone(),
                        value,
                        version,
                    });
                }
            },
        }
    }
    Ok(ops)
}

/// Rows of an INSERT, each a value per target column, as (pk, cell ops, values).
async fn insert_rows(
    plan: &InsertPlan,
    engine: &Engine,
    taken: &super::sequence_values::SequenceValues,
    rows: Vec<Vec<Datum>>,
) -> SqlResult<Vec<(Vec<PkValue>, Vec<ColumnOp>, Vec<Datum>)>> {
    let table = &plan.table;
    let first_rowid = if table.auto_rowid && !rows.is_empty() {
        engine.allocate_rowids(table, rows.len() as i64).await?
    } else {
        0
    };
    let key_types: Vec<SqlType> = (0..table.pk.len())
        .map(|k| declared_type(table, &table.pk[k].name).unwrap_or(SqlType::Int8))
        .collect();

    // In row order, as planned: each row takes its own from the front.
    let mut defaults = plan.defaults.as_slice();
    let mut out = Vec::with_capacity(rows.len());
    for (n, mut values) in rows.into_iter().enumerate() {
        let mut pk: Vec<Option<PkValue>> = vec![None; table.pk.len()];
        if table.auto_rowid {
            pk[0] = Some(PkValue::Integer(first_rowid + n as i64));
        }
        while let Some(((_, i, sequence), rest)) =
            defaults.split_first().filter(|((row, ..), _)| *row == n)
        {
            values[*i] = Datum::Int(next_value(engine, table, taken, sequence).await?);
            defaults = rest;
        }
        let mut generated_ops = Vec::new();
        for (target, sequence) in &plan.generated {
            let value = next_value(engine, table, taken, sequence).await?;
            match target {
                Target::Pk(k) => pk[*k] = Some(PkValue::Integer(value)),
                Target::Attr(column, _) => generated_ops.push(ColumnOp::Put {
                    column: column.clone(),
                    value: crate::engine::Value::Integer(value),
                    version: None,
                }),
                Target::Version => {}
            }
        }
        let version = plan
            .targets
            .iter()
            .zip(&values)
            .find_map(|(t, v)| match (t, v) {
                (Target::Version, Datum::Int(i)) => Some(*i),
                _ => None,
            });
        let mut ops = generated_ops;
        for (target, value) in plan.targets.iter().zip(&values) {
            match target {
                Target::Pk(k) => pk[*k] = Some(key_value(value, key_types[*k], table, *k)?),
                Target::Version => {
                    if !matches!(value, Datum::Int(_) | Datum::Null) {
                        return Err(SqlError::new(
                            SqlState::DatatypeMismatch,
                            format!(
                                "_version must be a bigint, not {}",
                                super::values::render(value)
                            ),
                        ));
                    }
                }
                Target::Attr(column, ty) => {
                    if *value == Datum::Null {
                        continue;
                    }
                    let own_kind = value.is_own_kind();
                    let value = match ty {
                        Some(ty) if table.is_schema_free(column) => {
                            attribute_value(table, column, value.clone(), Some(*ty))?
                        }
                        // Converted in place: only a date, time or uuid needs its copy.
                        Some(ty) if !(ty.is_distinct_kind() || own_kind) => {
                            datum_to_value(value, sql_value_type(*ty))?
                        }
                        Some(ty) => column_value(value.clone(), Some(*ty))?,
                        None => natural_value(value)?,
                    };
                    ops.push(ColumnOp::Put {
                        column: column.clone(),
                        value,
                        version,
                    });
                }
            }
        }
        let pk = pk
            .into_iter()
            .enumerate()
            .map(|(k, v)| v.ok_or_else(|| null_in_key(&table.pk[k].name)))
            .collect::<SqlResult<Vec<_>>>()?;
        out.push((pk, ops, values));
    }
    Ok(out)
}

/// The next value of `table`'s sequence `name`, recorded for currval and lastval.
async fn next_value(
    engine: &Engine,
    table: &TableMeta,
    taken: &super::sequence_values::SequenceValues,
    name: &str,
) -> SqlResult<i64> {
    let sequence = engine.sequence(&table.instance, name)?;
    let value = engine.nextval(&sequence).await?;
    taken.took(name, value);
    Ok(value)
}

fn returning_rows(
    returning: Option<&Returning>,
    rows: &[crate::engine::Row],
    params: &[Datum],
) -> SqlResult<Vec<Vec<Datum>>> {
    let Some(r) = returning else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for row in rows {
        let mut materialized = Vec::new();
        r.relation
            .materialize(&RowView::of(row), None, |values| materialized.push(values));
        for values in materialized {
            out.push(
                r.items
                    .iter()
                    .map(|s| eval(s, &values, params))
                    .collect::<SqlResult<Vec<_>>>()?,
            );
        }
    }
    Ok(out)
}

fn finish(tag: String, returning: &Option<Returning>, rows: Vec<Vec<Datum>>) -> StatementResult {
    finish_rows(tag, returning.as_ref().map(Returning::columns), rows)
}

/// A write's result: its tag, and with RETURNING (its `columns`) the rows.
pub(super) fn finish_rows(
    tag: String,
    returning: Option<Arc<Vec<OutputColumn>>>,
    rows: Vec<Vec<Datum>>,
) -> StatementResult {
    match returning {
        None => StatementResult::Command { tag },
        Some(columns) => StatementResult::Returning {
            columns,
            rows: stream::iter(rows.into_iter().map(Ok)).boxed(),
            tag,
        },
    }
}

impl Returning {
    pub(super) fn columns(&self) -> Arc<Vec<OutputColumn>> {
        Arc::clone(&self.columns)
    }

    /// RETURNING's rows for the rows as written.
    pub(super) fn rows(
        &self,
        written: &[crate::engine::Row],
        params: &[Datum],
    ) -> SqlResult<Vec<Vec<Datum>>> {
        returning_rows(Some(self), written, params)
    }
}

pub async fn execute_insert(
    target: &mut WriteTarget<'_>,
    plan: &InsertPlan,
    params: &[Datum],
) -> SqlResult<StatementResult> {
    let values = plan
        .rows
        .iter()
        .map(|row| row.iter().map(|s| eval(s, &[], params)).collect())
        .collect::<SqlResult<Vec<Vec<Datum>>>>()?;
    insert_values(target, plan, values, params).await
}

/// `INSERT ... SELECT`: the query's rows, already read, written as VALUES rows would be.
pub async fn execute_insert_rows(
    target: &mut WriteTarget<'_>,
    plan: &InsertPlan,
    rows: Vec<Vec<Datum>>,
    params: &[Datum],
) -> SqlResult<StatementResult> {
    if let Some(row) = rows.first() {
        if row.len() != plan.targets.len() {
            let more = if row.len() > plan.targets.len() {
                "more expressions than target columns"
            } else {
                "more target columns than expressions"
            };
            return Err(SqlError::syntax(format!("INSERT has {more}")));
        }
    }
    insert_values(target, plan, rows, params).await
}

async fn insert_values(
    target: &mut WriteTarget<'_>,
    plan: &InsertPlan,
    values: Vec<Vec<Datum>>,
    params: &[Datum],
) -> SqlResult<StatementResult> {
    let table = &plan.table;
    let rows = insert_rows(plan, target.engine, target.sequence_values, values).await?;
    let return_row = plan.returning.is_some();
    let (inserted, after_rows) = match &plan.conflict {
        Conflict::Error | Conflict::DoNothing(Arbiter::Key) => {
            // DO NOTHING on the key: a key taken is passed over by the engine.
            let mode = match plan.conflict {
                Conflict::Error => BatchMode::Atomic,
                _ => BatchMode::Independent,
            };
            let outcomes = target
                .write(put_rows(table, rows.iter(), return_row), mode)
                .await?;
            inserted_rows(table, outcomes, &rows, mode)?
        }
        Conflict::DoNothing(arbiter) => {
            insert_unless_conflicting(target, table, *arbiter, &rows, return_row).await?
        }
        Conflict::DoUpdate(update) => {
            let written = update
                .write(target, table, &rows, params, return_row)
                .await?;
            (written.count, written.rows)
        }
    };
    let out = returning_rows(plan.returning.as_ref(), &after_rows, params)?;
    Ok(finish(format!("INSERT 0 {inserted}"), &plan.returning, out))
}

/// How often a statement is decided again after another session won a race for a
/// unique index's values it judged free.
const MAX_ARBITER_ATTEMPTS: usize = 8;

/// ON CONFLICT DO NOTHING judged by a unique index (or by every one): the rows that
/// conflict with none are inserted, as one atomic batch. Under `Arbiter::Any` a key
/// taken in the meantime is passed over too; under an index it is a duplicate key.
async fn insert_unless_conflicting(
    target: &mut WriteTarget<'_>,
    table: &Arc<TableMeta>,
    arbiter: Arbiter,
    rows: &[arbiter::ProposedRow],
    return_row: bool,
) -> SqlResult<(usize, Vec<crate::engine::Row>)> {
    let mode = match arbiter {
        Arbiter::Any => BatchMode::Independent,
        _ => BatchMode::Atomic,
    };
    let mut lost = None;
    for _ in 0..MAX_ARBITER_ATTEMPTS {
        let conflicts = arbiter.conflicts(target, table, rows).await?;
        let free: Vec<arbiter::ProposedRow> = rows
            .iter()
            .zip(conflicts)
            .filter(|(_, conflict)| conflict.is_none())
            .map(|(row, _)| row.clone())
            .collect();
        let writes = put_rows(table, free.iter(), return_row);
        match target.attempt_write(writes, mode).await? {
            Ok(outcomes) => return inserted_rows(table, outcomes, &free, mode),
            Err(e) if arbiter.judges_violation(table, &e) => lost = Some(e),
            Err(e) => return Err(e.into()),
        }
    }
    Err(lost
        .unwrap_or(crate::engine::EngineError::WriteConflict)
        .into())
}

/// PutRow EXPECT_NOT_EXIST for each row.
fn put_rows<'a>(
    table: &Arc<TableMeta>,
    rows: impl Iterator<Item = &'a arbiter::ProposedRow>,
    return_row: bool,
) -> Vec<(Arc<TableMeta>, RowWrite)> {
    rows.map(|(pk, ops, _)| {
        (
            Arc::clone(table),
            RowWrite {
                pk: pk.clone(),
                change: RowChange::Put(ops.clone()),
                condition: Condition::row(RowExistence::ExpectNotExist),
                return_row,
            },
        )
    })
    .collect()
}

/// How many of `rows` the puts inserted, and the rows as written; in an atomic batch,
/// a key already taken is a duplicate key (23505).
fn inserted_rows(
    table: &TableMeta,
    outcomes: Vec<WriteOutcome>,
    rows: &[arbiter::ProposedRow],
    mode: BatchMode,
) -> SqlResult<(usize, Vec<crate::engine::Row>)> {
    let mut inserted = 0;
    let mut written = Vec::new();
    for (outcome, (pk, _, _)) in outcomes.into_iter().zip(rows) {
        match outcome {
            WriteOutcome::Applied(row) => {
                inserted += 1;
                written.extend(row);
            }
            WriteOutcome::ConditionFailed(ConditionFailure::RowExists)
                if mode == BatchMode::Atomic =>
            {
                return Err(duplicate_key(table, pk));
            }
            _ => {}
        }
    }
    Ok((inserted, written))
}

/// A row whose primary key another row has (23505).
fn duplicate_key(table: &TableMeta, pk: &[PkValue]) -> SqlError {
    SqlError::new(
        SqlState::UniqueViolation,
        format!(
            "duplicate key value violates unique constraint \"{}\": {}",
            table.pk_constraint_name(),
            key_text(pk, table)
        ),
    )
}

/// The WHERE clause's attribute comparisons as the engine condition re-checked at write.
fn write_condition(read: &ReadPlan, params: &[Datum]) -> SqlResult<Condition> {
    let mut parts = read.pushed_conditions(params)?;
    Ok(Condition {
        row: RowExistence::ExpectExist,
        column: match parts.len() {
            0 => None,
            1 => parts.pop(),
            _ => Some(ColumnCondition::And(parts)),
        },
    })
}

/// The rows an UPDATE or DELETE matches, as relation slot values with their PKs.
pub(super) async fn matched_rows(
    target: &WriteTarget<'_>,
    read: &ReadPlan,
    params: &[Datum],
) -> SqlResult<Vec<(Vec<PkValue>, Vec<Datum>)>> {
    let mut read = read.clone();
    // Every PK column must be in the slots to address the rows.
    for k in 0..read.relation.table.pk.len() {
        if let Some(index) = read
            .relation
            .columns
            .iter()
            .position(|c| c.source == Source::Pk(k))
        {
            read.relation.slot(index);
        }
    }
    let table = Arc::clone(&read.relation.table);
    let relation = read.relation.clone();
    let mut stream = read_rows(
        &target.read_context(),
        Arc::new(read),
        Arc::new(params.to_vec()),
        None,
    )
    .await?;
    let mut out = Vec::new();
    while let Some(values) = stream.next().await {
        let values = values?;
        let pk = relation
            .pk_of(&values)
            .ok_or_else(|| SqlError::internal("row without its primary key"))?
            .iter()
            .zip(&table.pk)
            .map(|(d, c)| datum_to_pk(d, c.ty, &c.name))
            .collect::<SqlResult<Vec<_>>>()?;
        out.push((pk, values));
    }
    Ok(out)
}

/// How often an UPDATE outside a transaction block reads again a row that changed
/// between its read and its write before giving up with 40001.
pub(super) const MAX_REEVALUATIONS: usize = 64;

pub async fn execute_update(
    target: &mut WriteTarget<'_>,
    plan: &UpdatePlan,
    params: &[Datum],
) -> SqlResult<StatementResult> {
    let table = Arc::clone(&plan.read.relation.table);
    let condition = write_condition(&plan.read, params)?;
    // New values computed from the row as read (`n = 1 + n`, `a = b * 2`) must be
    // written only over that row: outside a block each write also requires the columns
    // read to be unchanged, and a row whose write fails so is read again and its values
    // computed anew, as PostgreSQL's read committed re-evaluates a row updated
    // concurrently. (In a block, COMMIT's conflict check covers it.)
    let guarded_columns = match target.staged {
        None => plan.computed_from(),
        Some(_) => Vec::new(),
    };
    let mut updated = 0;
    let mut after_rows = Vec::new();
    let mut again: Option<Vec<Vec<PkValue>>> = None;
    for attempt in 0..MAX_REEVALUATIONS {
        let mut matched = matched_rows(target, &plan.read, params).await?;
        if let Some(again) = &again {
            matched.retain(|(pk, _)| again.contains(pk));
        }
        let mut writes = Vec::with_capacity(matched.len());
        for (pk, values) in &matched {
            let ops = assignment_ops(&plan.read.relation.table, &plan.assignments, values, params)?;
            let condition = match guarded_columns.is_empty() {
                true => condition.clone(),
                false => unchanged_since_read(&condition, &guarded_columns, values)?,
            };
            writes.push((
                Arc::clone(&table),
                RowWrite {
                    pk: pk.clone(),
                    change: RowChange::Update(ops),
                    condition,
                    return_row: plan.returning.is_some(),
                },
            ));
        }
        let outcomes = target.write(writes, BatchMode::Independent).await?;
        let mut changed = Vec::new();
        for (outcome, (pk, _)) in outcomes.into_iter().zip(matched) {
            match outcome {
                WriteOutcome::Applied(row) => {
                    updated += 1;
                    after_rows.extend(row);
                }
                WriteOutcome::ConditionFailed(_) if !guarded_columns.is_empty() => changed.push(pk),
                _ => {}
            }
        }
        if changed.is_empty() {
            let out = returning_rows(plan.returning.as_ref(), &after_rows, params)?;
            return Ok(finish(format!("UPDATE {updated}"), &plan.returning, out));
        }
        again = Some(changed);
        // Let the writer that got in between finish before reading the rows again.
        tokio::time::sleep(std::time::Duration::from_micros(50 << attempt.min(8))).await;
    }
    Err(SqlError::new(
        SqlState::SerializationFailure,
        "could not serialize access due to concurrent update",
    ))
}

/// `condition` and, for each of `columns` (the columns an UPDATE's new values are
/// computed from, with their slots), the value the row had when read: unchanged, or
/// still missing.
pub(super) fn unchanged_since_read(
    condition: &Condition,
    columns: &[(String, usize)],
    values: &[Datum],
) -> SqlResult<Condition> {
    let mut parts: Vec<ColumnCondition> = condition.column.iter().cloned().collect();
    for (column, slot) in columns {
        parts.push(match values.get(*slot) {
            None | Some(Datum::Null) => ColumnCondition::Exists {
                column: column.clone(),
                present: false,
            },
            Some(datum) => ColumnCondition::Compare {
                column: column.clone(),
                op: crate::engine::CompareOp::Eq,
                value: stored_form(datum)?,
                pass_if_missing: false,
            },
        });
    }
    Ok(Condition {
        row: condition.row,
        column: Some(ColumnCondition::And(parts)),
    })
}

/// The stored value a datum read from a column was: a numeric (read from a
/// `NUMERIC(p,s)` column, at its scale) is its text.
fn stored_form(datum: &Datum) -> SqlResult<crate::engine::Value> {
    match datum {
        Datum::Numeric(n) => Ok(crate::engine::Value::String(super::pg_numeric::format(n))),
        datum => datum_to_natural_value(datum)
            .ok_or_else(|| SqlError::internal("a non-NULL value has no stored form")),
    }
}

pub async fn execute_delete(
    target: &mut WriteTarget<'_>,
    plan: &DeletePlan,
    params: &[Datum],
) -> SqlResult<StatementResult> {
    let table = Arc::clone(&plan.read.relation.table);
    let matched = matched_rows(target, &plan.read, params).await?;
    if plan.read.relation.kind == RelationKind::Versions {
        return delete_versions(target, plan, matched).await;
    }
    let condition = write_condition(&plan.read, params)?;
    let writes: Vec<(Arc<TableMeta>, RowWrite)> = matched
        .iter()
        .map(|(pk, _)| {
            (
                Arc::clone(&table),
                RowWrite {
                    pk: pk.clone(),
                    change: RowChange::Delete,
                    condition: condition.clone(),
                    return_row: false,
                },
            )
        })
        .collect();
    let mut deleted = 0;
    let mut out = Vec::new();
    let outcomes = target.write(writes, BatchMode::Independent).await?;
    for (outcome, (_, values)) in outcomes.iter().zip(&matched) {
        if matches!(outcome, WriteOutcome::Applied(_)) {
            deleted += 1;
            if let Some(r) = &plan.returning {
                out.push(
                    r.items
                        .iter()
                        .map(|s| eval(s, values, params))
                        .collect::<SqlResult<Vec<_>>>()?,
                );
            }
        }
    }
    Ok(finish(format!("DELETE {deleted}"), &plan.returning, out))
}

/// `DELETE FROM versions.t WHERE ...`: deletes the matched cell versions one by one.
async fn delete_versions(
    target: &mut WriteTarget<'_>,
    plan: &DeletePlan,
    matched: Vec<(Vec<PkValue>, Vec<Datum>)>,
) -> SqlResult<StatementResult> {
    let relation = &plan.read.relation;
    let slot_of = |source: Source| {
        relation
            .needed
            .iter()
            .position(|&i| relation.columns[i].source == source)
    };
    let (Some(column_slot), Some(version_slot)) =
        (slot_of(Source::ColumnName), slot_of(Source::Version))
    else {
        return Err(SqlError::unsupported(
            "DELETE FROM versions.<table> needs column_name and version in WHERE",
        ));
    };
    let table = Arc::clone(&relation.table);
    let mut writes = Vec::new();
    for (pk, values) in &matched {
        let (Datum::Text(column), Datum::Int(version)) =
            (&values[column_slot], &values[version_slot])
        else {
            continue;
        };
        writes.push((
            Arc::clone(&table),
            RowWrite {
                pk: pk.clone(),
                change: RowChange::Update(vec![ColumnOp::DeleteVersion {
                    column: column.clone(),
                    version: *version,
                }]),
                condition: Condition::row(RowExistence::ExpectExist),
                return_row: false,
            },
        ));
    }
    let deleted = target
        .write(writes, BatchMode::Independent)
        .await?
        .iter()
        .filter(|o| matches!(o, WriteOutcome::Applied(_)))
        .count();
    Ok(finish(
        format!("DELETE {deleted}"),
        &plan.returning,
        Vec::new(),
    ))
}

/// The table each write plan changes, for privilege checks.
impl InsertPlan {
    pub fn table(&self) -> &TableMeta {
        &self.table
    }

    /// `ON CONFLICT DO UPDATE`: the statement may also update rows.
    pub fn may_update(&self) -> bool {
        matches!(self.conflict, Conflict::DoUpdate(_))
    }

    /// Whether the statement hands stored values back (RETURNING), which needs SELECT.
    pub fn returns_rows(&self) -> bool {
        self.returning.is_some()
    }
}

impl UpdatePlan {
    pub fn table(&self) -> &TableMeta {
        &self.read.relation.table
    }

    /// The attribute columns (with their slots) the new values are computed from.
    fn computed_from(&self) -> Vec<(String, usize)> {
        let relation = &self.read.relation;
        let mut slots = Vec::new();
        for assignment in &self.assignments {
            match assignment {
                Assignment::Put { value, .. } | Assignment::Version(value) => {
                    value.visit_columns(&mut |slot| slots.push(slot))
                }
                Assignment::Delete { .. } | Assignment::Increment { .. } => {}
            }
        }
        slots.sort_unstable();
        slots.dedup();
        slots
            .into_iter()
            .filter_map(
                |slot| match &relation.columns[*relation.needed.get(slot)?].source {
                    Source::Attr(name) => Some((name.clone(), slot)),
                    _ => None,
                },
            )
            .collect()
    }
}

impl DeletePlan {
    pub fn table(&self) -> &TableMeta {
        &self.read.relation.table
    }
}
