//! SELECT on the fast path: one table (or none), read along the access path `access`
//! plans, projected, sorted and limited here. What needs more (joins, aggregates,
//! functions the fast path does not know) is declined and goes to DataFusion.

mod order_by;

use super::access::{plan_read, ReadPlan};
use super::expr::output_name;
use super::expr::{compile, eval, fold, NoColumns, Params, Scalar};
use super::relation::{resolve_relation, Relation, RelationKind, Source};
use super::row_reader::{read_rows, ReadContext};
use super::sql_types::{
    ColumnOrigin, Datum, OutputColumn, RowStream, SqlError, SqlResult, SqlType, StatementResult,
};
use super::values::compare;
use crate::engine::{Direction, Engine};
use crate::sqlstate::SqlState;
use futures::stream::{self, StreamExt};
use sqlparser::ast::{self, Query, SelectItem, SetExpr};
use std::sync::Arc;

/// A planned SELECT.
#[derive(Debug, Clone)]
pub struct SelectPlan {
    /// Shared with every execution's row stream, which outlives the call.
    pub read: Option<Arc<ReadPlan>>,
    pub projection: Vec<Scalar>,
    pub columns: Arc<Vec<OutputColumn>>,
    /// ORDER BY not served by the PK order: sort keys over the relation's slots.
    pub sort: Option<Vec<(Scalar, bool)>>,
    pub limit: Option<Scalar>,
    pub offset: Option<Scalar>,
}

/// What the fast path makes of a SELECT.
pub enum FastPath {
    /// It reads the query's rows itself.
    Planned(SelectPlan),
    /// The query needs more than the fast path has (joins, aggregates, a function it
    /// does not know, ...): DataFusion plans it. Says what the fast path lacked.
    Declined(String),
}

/// Plans `query` on the fast path, or declines it. The expression compiler the fast
/// path shares with writes reports what it cannot compile as `Unsupported` or
/// `UndefinedFunction`; for a SELECT that means DataFusion's turn, not an error.
pub fn plan_select(
    engine: &Engine,
    instance: &str,
    query: &Query,
    params: &mut Params,
) -> SqlResult<FastPath> {
    match plan_fast_path(engine, instance, query, params) {
        Ok(plan) => Ok(FastPath::Planned(plan)),
        Err(SqlError::Unsupported(why) | SqlError::UndefinedFunction(why)) => {
            Ok(FastPath::Declined(why))
        }
        Err(e) => Err(e),
    }
}

/// Plans a SELECT over at most one table.
fn plan_fast_path(
    engine: &Engine,
    instance: &str,
    query: &Query,
    params: &mut Params,
) -> SqlResult<SelectPlan> {
    if query.with.is_some() {
        return Err(SqlError::unsupported("WITH queries are not supported yet"));
    }
    let SetExpr::Select(select) = &*query.body else {
        return Err(SqlError::unsupported(
            "this kind of query is not supported yet",
        ));
    };
    if select.distinct.is_some()
        || select.having.is_some()
        || !matches!(&select.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty())
    {
        return Err(SqlError::unsupported(
            "DISTINCT, GROUP BY and HAVING are not supported yet",
        ));
    }
    let mut relation = match select.from.as_slice() {
        [] => None,
        [from] if from.joins.is_empty() => {
            Some(resolve_relation(engine, instance, &from.relation)?)
        }
        _ => return Err(SqlError::unsupported("joins are not supported yet")),
    };
    let (direction, sort) = plan_order(query, &select.projection, relation.as_mut(), params)?;
    let (limit, offset) = match &query.limit_clause {
        None => (None, None),
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => (
            limit
                .as_ref()
                .map(|e| compile(e, &mut NoColumns, params, Some(SqlType::Int8)))
                .transpose()?,
            offset
                .as_ref()
                .map(|o| compile(&o.value, &mut NoColumns, params, Some(SqlType::Int8)))
                .transpose()?,
        ),
        Some(_) => {
            return Err(SqlError::unsupported(
                "LIMIT offset, count is not supported",
            ))
        }
    };
    let mut projection = Vec::new();
    let mut columns = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                let Some(rel) = relation.as_mut() else {
                    return Err(SqlError::syntax(
                        "SELECT * with no tables specified is not valid",
                    ));
                };
                for index in 0..rel.columns.len() {
                    if rel.columns[index].hidden {
                        continue;
                    }
                    columns.push(OutputColumn {
                        name: rel.columns[index].name.clone(),
                        ty: rel.columns[index].ty,
                        origin: rel.origin(index),
                    });
                    projection.push(Scalar::Column(rel.slot(index)));
                }
            }
            SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => {
                let name = match item {
                    SelectItem::ExprWithAlias { alias, .. } => fold(alias),
                    _ => output_name(expr),
                };
                let scalar = match relation.as_mut() {
                    Some(rel) => compile(expr, rel, params, None)?,
                    None => compile(expr, &mut NoColumns, params, None)?,
                };
                let ty = output_type(&scalar, relation.as_ref(), params);
                let origin = match (&scalar, relation.as_ref()) {
                    (Scalar::Column(slot), Some(rel)) => rel.slot_origin(*slot),
                    _ => ColumnOrigin::of_varchar_cast(expr),
                };
                columns.push(OutputColumn { name, ty, origin });
                projection.push(scalar);
            }
            other => {
                return Err(SqlError::unsupported(format!(
                    "select item {other} is not supported"
                )))
            }
        }
    }
    let read = match relation {
        Some(rel) => Some(Arc::new(plan_read(
            rel,
            select.selection.as_ref(),
            params,
            direction,
        )?)),
        None => {
            if select.selection.is_some() {
                return Err(SqlError::unsupported("WHERE without FROM is not supported"));
            }
            None
        }
    };
    Ok(SelectPlan {
        read,
        projection,
        columns: Arc::new(columns),
        sort,
        limit,
        offset,
    })
}

/// ORDER BY: the PK order (a prefix of it, one direction) picks the scan direction;
/// anything else is sorted after reading. Gives the direction and the sort keys.
fn plan_order(
    query: &Query,
    projection: &[SelectItem],
    relation: Option<&mut Relation>,
    params: &mut Params,
) -> SqlResult<(Direction, Option<Vec<(Scalar, bool)>>)> {
    let mut direction = Direction::Forward;
    let mut sort = None;
    let order: Vec<&ast::OrderByExpr> = match &query.order_by {
        Some(ast::OrderBy {
            kind: ast::OrderByKind::Expressions(list),
            ..
        }) => list.iter().collect(),
        Some(_) => return Err(SqlError::unsupported("ORDER BY ALL is not supported")),
        None => Vec::new(),
    };
    if !order.is_empty() {
        let Some(rel) = relation else {
            return Err(SqlError::unsupported(
                "ORDER BY without FROM is not supported",
            ));
        };
        let mut keys = Vec::new();
        for item in &order {
            // The sort below puts NULLs where PostgreSQL does by default (last ascending,
            // first descending); an explicit other placement is left to DataFusion.
            let asc = item.options.asc.unwrap_or(true);
            if item.options.nulls_first.is_some_and(|first| first == asc) {
                return Err(SqlError::unsupported(
                    "NULLS FIRST/LAST other than the default",
                ));
            }
            let expr = order_by::resolve(&item.expr, projection, Some(&*rel))?;
            let key = compile(&expr, rel, params, None)?;
            // JSON has an order of its own, not its text's: DataFusion's to refuse. So
            // has an enum: its labels' (`pg_enum_plan`).
            let key_type = output_type(&key, Some(&*rel), params);
            if key_type.json_kind().is_some() {
                return Err(SqlError::unsupported("ORDER BY a JSON value"));
            }
            if matches!(key_type, SqlType::Enum(_)) {
                return Err(SqlError::unsupported("ORDER BY an enum value"));
            }
            keys.push((key, item.options.asc.unwrap_or(true)));
        }
        let pk_order = keys.iter().enumerate().all(|(k, (s, _))| {
            matches!(s, Scalar::Column(slot) if *rel.slot_source(*slot) == Source::Pk(k))
        }) && keys.iter().all(|(_, asc)| *asc == keys[0].1);
        if pk_order && rel.kind == RelationKind::Table {
            direction = if keys[0].1 {
                Direction::Forward
            } else {
                Direction::Backward
            };
        } else {
            sort = Some(keys);
        }
    }
    Ok((direction, sort))
}

/// An output column's type: a column's own, arithmetic's from its operands, since
/// PostgreSQL makes `bigint + double precision` a double (and a row's value must fit the
/// type announced in RowDescription).
pub fn output_type(s: &Scalar, rel: Option<&Relation>, params: &Params) -> SqlType {
    let float = |ty: SqlType| matches!(ty, SqlType::Float4 | SqlType::Float8);
    let numeric = |ty: SqlType| matches!(ty, SqlType::Numeric(_));
    match (s, rel) {
        (Scalar::Column(slot), Some(rel)) => rel.columns[rel.needed[*slot]].ty,
        // Each operand's type once: asking twice per level made a chain of n operators
        // take 2^n steps (`SELECT 1+1+...+1` of 30 terms ran for minutes).
        (Scalar::Arith(_, l, r), _) => {
            let operands = [output_type(l, rel, params), output_type(r, rel, params)];
            if operands.into_iter().any(float) {
                SqlType::Float8
            } else if operands.into_iter().any(numeric) {
                // Only numerics and integers reach the fast path's arithmetic together.
                SqlType::Numeric(None)
            } else {
                static_type(s, params)
            }
        }
        (Scalar::Neg(e), _) => match output_type(e, rel, params) {
            ty if float(ty) => SqlType::Float8,
            ty if numeric(ty) => SqlType::Numeric(None),
            _ => static_type(s, params),
        },
        (Scalar::Coalesce(operands), _) => {
            let first =
                first_typed(operands).map_or(SqlType::Text, |o| output_type(o, rel, params));
            // Integers of several widths resolve to the widest, as PostgreSQL resolves them.
            operands
                .iter()
                .filter(|o| !matches!(o, Scalar::Const(Datum::Null)))
                .map(|o| output_type(o, rel, params))
                .try_fold(first, |widest, ty| {
                    match (widest.integer_rank(), ty.integer_rank()) {
                        (Some(a), Some(b)) => Some(if b > a { ty } else { widest }),
                        _ => None,
                    }
                })
                .unwrap_or(first)
        }
        _ => static_type(s, params),
    }
}

/// The result type of an expression that is not a plain column.
pub fn static_type(s: &Scalar, params: &Params) -> SqlType {
    match s {
        // PostgreSQL types an integer literal `integer` if it fits, else `bigint`.
        Scalar::Const(Datum::Int(i)) if i32::try_from(*i).is_ok() => SqlType::Int4,
        Scalar::Const(Datum::Int(_)) => SqlType::Int8,
        Scalar::Const(Datum::Float(_)) => SqlType::Float8,
        Scalar::Const(Datum::Bool(_)) => SqlType::Bool,
        Scalar::Const(Datum::Bytes(_)) => SqlType::Bytea,
        Scalar::Const(Datum::Uuid(_)) => SqlType::Uuid,
        Scalar::Const(Datum::Numeric(_)) => SqlType::Numeric(None),
        Scalar::Const(Datum::Date(_)) => SqlType::Date,
        Scalar::Const(Datum::Timestamp(_)) => SqlType::Timestamp,
        Scalar::Const(Datum::TimestampTz(_)) => SqlType::TimestampTz,
        Scalar::Const(_) | Scalar::Concat(..) => SqlType::Text,
        Scalar::Function(super::expr::Function::Length, _) => SqlType::Int4,
        Scalar::Function(..) => SqlType::Text,
        Scalar::Param(i) => params.ty(*i).unwrap_or(SqlType::Text),
        Scalar::Cast(_, ty) => *ty,
        Scalar::Compare(..)
        | Scalar::And(_)
        | Scalar::Or(_)
        | Scalar::Not(_)
        | Scalar::IsNull(..)
        | Scalar::InList(..)
        | Scalar::Like(..) => SqlType::Bool,
        Scalar::Arith(..) | Scalar::Neg(_) => SqlType::Int8,
        Scalar::Column(_) => SqlType::Text,
        Scalar::Coalesce(operands) => {
            first_typed(operands).map_or(SqlType::Text, |o| static_type(o, params))
        }
    }
}

/// COALESCE's type: its first operand's that is not a bare NULL.
fn first_typed(operands: &[Scalar]) -> Option<&Scalar> {
    operands
        .iter()
        .find(|o| !matches!(o, Scalar::Const(Datum::Null)))
}

fn count_operand(s: &Option<Scalar>, params: &[Datum], what: &str) -> SqlResult<Option<usize>> {
    match s {
        None => Ok(None),
        Some(s) => match eval(s, &[], params)? {
            Datum::Null => Ok(None),
            Datum::Int(i) if i >= 0 => Ok(Some(i as usize)),
            other => Err(SqlError::new(
                SqlState::InvalidRowCountInLimitClause,
                format!(
                    "{what} must not be negative, got {}",
                    super::values::render(&other)
                ),
            )),
        },
    }
}

/// How a SELECT list turns a relation row (slot values) into a result row, decided once
/// per statement.
enum Projector {
    /// The list is the slots in order: the row is the result.
    Whole,
    /// Plain column references, each slot read once: values move out of the row.
    Move(Vec<usize>),
    /// Anything else is evaluated.
    Evaluate,
}

impl Projector {
    fn new(projection: &[Scalar], width: usize) -> Self {
        let mut slots = Vec::with_capacity(projection.len());
        for s in projection {
            match s {
                Scalar::Column(i) if !slots.contains(i) => slots.push(*i),
                _ => return Projector::Evaluate,
            }
        }
        if slots.iter().copied().eq(0..width) {
            Projector::Whole
        } else {
            Projector::Move(slots)
        }
    }
}

/// Runs a planned SELECT.
pub async fn execute_select(
    ctx: &ReadContext,
    plan: Arc<SelectPlan>,
    params: Vec<Datum>,
) -> SqlResult<StatementResult> {
    let params = Arc::new(params);
    let limit = count_operand(&plan.limit, &params, "LIMIT")?;
    let offset = count_operand(&plan.offset, &params, "OFFSET")?.unwrap_or(0);
    let columns = Arc::clone(&plan.columns);
    let Some(read) = &plan.read else {
        let row = plan
            .projection
            .iter()
            .map(|s| eval(s, &[], &params))
            .collect::<SqlResult<Vec<_>>>()?;
        let rows: Vec<SqlResult<Vec<Datum>>> = if limit == Some(0) || offset > 0 {
            vec![]
        } else {
            vec![Ok(row)]
        };
        return Ok(StatementResult::Query {
            columns,
            rows: stream::iter(rows).boxed(),
        });
    };
    let want = if plan.sort.is_some() {
        None
    } else {
        limit.map(|l| l + offset)
    };
    let mut rows = read_rows(ctx, Arc::clone(read), Arc::clone(&params), want).await?;
    if let Some(keys) = &plan.sort {
        let mut all = Vec::new();
        while let Some(row) = rows.next().await {
            let row = row?;
            let sort_key = keys
                .iter()
                .map(|(s, _)| eval(s, &row, &params))
                .collect::<SqlResult<Vec<_>>>()?;
            all.push((sort_key, row));
        }
        all.sort_by(|(a, _), (b, _)| {
            for ((x, y), (_, asc)) in a.iter().zip(b).zip(keys) {
                // NULLs sort last ascending, first descending, as in PostgreSQL.
                let o = match (x, y) {
                    (Datum::Null, Datum::Null) => std::cmp::Ordering::Equal,
                    (Datum::Null, _) => std::cmp::Ordering::Greater,
                    (_, Datum::Null) => std::cmp::Ordering::Less,
                    _ => compare(x, y).unwrap_or(std::cmp::Ordering::Equal),
                };
                let o = if *asc { o } else { o.reverse() };
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
        rows = stream::iter(all.into_iter().map(|(_, row)| Ok(row))).boxed();
    }
    // A relation row holds one value per needed column.
    let projector = Projector::new(&plan.projection, read.relation.needed.len());
    let plan = Arc::clone(&plan);
    let projected: RowStream = rows
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .map(move |row| {
            let mut row = row?;
            match &projector {
                Projector::Whole => Ok(row),
                Projector::Move(slots) => Ok(slots
                    .iter()
                    .map(|&i| row.get_mut(i).map_or(Datum::Null, std::mem::take))
                    .collect()),
                Projector::Evaluate => plan
                    .projection
                    .iter()
                    .map(|s| eval(s, &row, &params))
                    .collect(),
            }
        })
        .boxed();
    Ok(StatementResult::Query {
        columns,
        rows: projected,
    })
}
