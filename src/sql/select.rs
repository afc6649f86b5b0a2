//! SELECT on the fast paths: the WHERE clause is split into what picks the access path —
//! full-PK equality (GetRow), IN lists on the PK (BatchGetRow in chunks of 100), a PK
//! prefix plus a range on the next column (GetRange, forward or backward by ORDER BY) or a
//! full-range scan — and a residual predicate. Simple attribute comparisons are also
//! pushed into the engine's filter. Pages stream from the engine one at a time.

use super::ddl::table_name;
use super::expr::{bind, compile, eval, fold, is_true, CmpOp, NoColumns, Params, Scalar};
use super::notices::Notices;
use super::paged_rows::{PagedRows, Shape};
use super::query::ReadMeter;
use super::relation::{Relation, RelationKind, Source, VERSIONS_SCHEMA};
use super::types::{Datum, OutputColumn, RowStream, SqlError, SqlResult, SqlType, StatementResult};
use super::values::{compare, datum_into_pk, datum_to_value};
use crate::engine::{
    ColumnCondition, Direction, Engine, EngineError, PkBound, PkType, PkValue, PrimaryKey,
    RangeRequest, ReadOptions, RowView, StagedView, TableMeta,
};
use crate::sqlstate::SqlState;
use futures::stream::{self, StreamExt};
use sqlparser::ast::{self, Expr, Query, SelectItem, SetExpr, TableFactor};
use std::collections::VecDeque;
use std::sync::Arc;

/// How rows are found.
#[derive(Debug, Clone)]
pub enum Access {
    /// Candidate values per PK column; their product is the set of keys (GetRow /
    /// BatchGetRow).
    Keys(Vec<Vec<Scalar>>),
    /// Equality on a PK prefix, then an optional range on the next column (GetRange);
    /// an empty prefix without bounds is a full scan.
    Range {
        prefix: Vec<Scalar>,
        lower: Option<(Scalar, bool)>,
        upper: Option<(Scalar, bool)>,
    },
}

/// A planned read of one relation.
#[derive(Debug, Clone)]
pub struct ReadPlan {
    pub relation: Relation,
    pub access: Access,
    pub direction: Direction,
    /// Evaluated on every row the access path yields.
    pub residual: Option<Scalar>,
    /// Attribute comparisons also handed to the engine: (column, op, operand).
    pub pushed: Vec<(String, CmpOp, Scalar)>,
    /// Comparisons on `versions.<table>.version`, handed to the engine as its version
    /// range (they stay in the residual too, which keeps the result exact).
    pub version_bounds: Vec<(CmpOp, Scalar)>,
}

impl ReadPlan {
    /// Whether the statement filters rows by their values (a WHERE clause), which
    /// reads the table as much as a SELECT does.
    pub fn filters(&self) -> bool {
        let keyed = match &self.access {
            Access::Keys(_) => true,
            Access::Range {
                prefix,
                lower,
                upper,
            } => !prefix.is_empty() || lower.is_some() || upper.is_some(),
        };
        keyed || self.residual.is_some() || !self.pushed.is_empty()
    }
}

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

/// Splits a predicate into its AND-ed parts.
pub fn conjuncts(s: Scalar, out: &mut Vec<Scalar>) {
    match s {
        Scalar::And(parts) => parts.into_iter().for_each(|p| conjuncts(p, out)),
        other => out.push(other),
    }
}

fn is_operand(s: &Scalar) -> bool {
    match s {
        Scalar::Const(_) | Scalar::Param(_) => true,
        Scalar::Cast(inner, _) => is_operand(inner),
        _ => false,
    }
}

/// `column op operand` in either order, normalized to the column on the left.
fn column_comparison(s: &Scalar) -> Option<(usize, CmpOp, &Scalar)> {
    match s {
        Scalar::Compare(op, l, r) => match (&**l, &**r) {
            (Scalar::Column(c), operand) if is_operand(operand) => Some((*c, *op, operand)),
            (operand, Scalar::Column(c)) if is_operand(operand) => Some((*c, op.flip(), operand)),
            _ => None,
        },
        _ => None,
    }
}

/// Resolves the FROM clause to one relation.
pub fn resolve_relation(
    engine: &Engine,
    instance: &str,
    factor: &TableFactor,
) -> SqlResult<Relation> {
    let TableFactor::Table {
        name,
        alias,
        args: None,
        ..
    } = factor
    else {
        return Err(SqlError::unsupported(
            "only plain tables can be read on the fast path",
        ));
    };
    let alias = alias.as_ref().map(|a| fold(&a.name));
    let (schema, table) = super::ddl::object_name(name)?;
    // A missing table is named as the query wrote it (`public.t`), as PostgreSQL does.
    let missing_as_written = |e: EngineError| match (e, &schema) {
        (EngineError::TableNotFound { name }, Some(schema)) => EngineError::TableNotFound {
            name: format!("{schema}.{name}"),
        },
        (e, _) => e,
    };
    if schema.as_deref() == Some(VERSIONS_SCHEMA) {
        let meta = engine.table(instance, &table).map_err(missing_as_written)?;
        return Ok(Relation::new(meta, RelationKind::Versions, alias));
    }
    let table = table_name(name)?;
    Ok(Relation::new(
        engine.table(instance, &table).map_err(missing_as_written)?,
        RelationKind::Table,
        alias,
    ))
}

/// Plans where rows come from: access path, residual and pushed-down filters.
pub fn plan_read(
    mut relation: Relation,
    selection: Option<&Expr>,
    params: &mut Params,
    direction: Direction,
) -> SqlResult<ReadPlan> {
    let mut parts = Vec::new();
    if let Some(expr) = selection {
        conjuncts(
            compile(expr, &mut relation, params, Some(SqlType::Bool))?,
            &mut parts,
        );
    }
    Ok(plan_access(relation, parts, direction))
}

/// Picks the access path for AND-ed predicate `parts` over `relation`'s slots; what the
/// path does not enforce exactly stays in the residual. Shared by the fast path and the
/// DataFusion table provider, which hands in its pushed-down filters.
pub fn plan_access(relation: Relation, parts: Vec<Scalar>, direction: Direction) -> ReadPlan {
    let pk_count = relation.table.pk.len();
    let pk_slot = |relation: &Relation, slot: usize| match relation.slot_source(slot) {
        Source::Pk(k) => Some(*k),
        _ => None,
    };
    // Equality (or IN) per PK column, in order, as long as each column is fixed.
    let mut fixed: Vec<Vec<Scalar>> = Vec::new();
    let mut used = vec![false; parts.len()];
    'columns: for k in 0..pk_count {
        for (i, part) in parts.iter().enumerate() {
            if used[i] {
                continue;
            }
            if let Some((slot, CmpOp::Eq, operand)) = column_comparison(part) {
                if pk_slot(&relation, slot) == Some(k) {
                    fixed.push(vec![operand.clone()]);
                    used[i] = true;
                    continue 'columns;
                }
            }
            if let Scalar::InList(target, list, false) = part {
                if let Scalar::Column(slot) = **target {
                    if pk_slot(&relation, slot) == Some(k)
                        && list.iter().all(is_operand)
                        && !list.is_empty()
                    {
                        fixed.push(list.clone());
                        used[i] = true;
                        continue 'columns;
                    }
                }
            }
        }
        break;
    }
    let access = if fixed.len() == pk_count {
        Access::Keys(fixed)
    } else if fixed.iter().all(|candidates| candidates.len() == 1) {
        let k = fixed.len();
        // A bound the range enforces exactly leaves the residual, as equality on the
        // prefix does (and a read without residual can hand its LIMIT to the engine).
        // Only a backward read's bound that needs the predecessor of a String or Binary
        // on the last key column is not exact (no such value exists; see
        // `predecessor`), and stays.
        let no_predecessor = direction == Direction::Backward
            && k + 1 == pk_count
            && relation.table.pk[k].ty != PkType::Integer;
        let (mut lower, mut upper) = (None, None);
        for (i, part) in parts.iter().enumerate() {
            if used[i] {
                continue;
            }
            if let Some((slot, op, operand)) = column_comparison(part) {
                if pk_slot(&relation, slot) != Some(k) {
                    continue;
                }
                match op {
                    CmpOp::Gt | CmpOp::Ge if lower.is_none() => {
                        let inclusive = op == CmpOp::Ge;
                        lower = Some((operand.clone(), inclusive));
                        used[i] = !(no_predecessor && inclusive);
                    }
                    CmpOp::Lt | CmpOp::Le if upper.is_none() => {
                        let inclusive = op == CmpOp::Le;
                        upper = Some((operand.clone(), inclusive));
                        used[i] = !(no_predecessor && !inclusive);
                    }
                    _ => {}
                }
            }
        }
        Access::Range {
            prefix: fixed.into_iter().flatten().collect(),
            lower,
            upper,
        }
    } else {
        // IN on a prefix without the rest fixed: scan the prefix-free range, filter.
        used.iter_mut().for_each(|u| *u = false);
        Access::Range {
            prefix: Vec::new(),
            lower: None,
            upper: None,
        }
    };
    let mut pushed = Vec::new();
    let mut residual_parts = Vec::new();
    let mut version_bounds = Vec::new();
    for (i, part) in parts.into_iter().enumerate() {
        if used[i] {
            continue;
        }
        if let Some((slot, op, operand)) = column_comparison(&part) {
            match relation.slot_source(slot) {
                Source::Attr(name) if relation.kind == RelationKind::Table => {
                    pushed.push((name.clone(), op, operand.clone()))
                }
                Source::Version => version_bounds.push((op, operand.clone())),
                _ => {}
            }
        }
        residual_parts.push(part);
    }
    let residual = match residual_parts.len() {
        0 => None,
        1 => residual_parts.pop(),
        _ => Some(Scalar::And(residual_parts)),
    };
    ReadPlan {
        relation,
        access,
        direction,
        residual,
        pushed,
        version_bounds,
    }
}

/// Plans a SELECT over at most one table.
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
    // ORDER BY: the PK order (prefix, one direction) picks the scan direction;
    // anything else is sorted after reading.
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
        let Some(rel) = relation.as_mut() else {
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
            keys.push((
                compile(&item.expr, rel, params, None)?,
                item.options.asc.unwrap_or(true),
            ));
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
                    _ => None,
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

/// An output column's type: a column's own, arithmetic's from its operands, since
/// PostgreSQL makes `bigint + double precision` a double (and a row's value must fit the
/// type announced in RowDescription).
fn output_type(s: &Scalar, rel: Option<&Relation>, params: &Params) -> SqlType {
    let float = |ty: SqlType| matches!(ty, SqlType::Float4 | SqlType::Float8);
    match (s, rel) {
        (Scalar::Column(slot), Some(rel)) => rel.columns[rel.needed[*slot]].ty,
        (Scalar::Arith(_, l, r), _)
            if float(output_type(l, rel, params)) || float(output_type(r, rel, params)) =>
        {
            SqlType::Float8
        }
        (Scalar::Neg(e), _) if float(output_type(e, rel, params)) => SqlType::Float8,
        _ => static_type(s, params),
    }
}

/// The column name PostgreSQL gives an unaliased expression.
pub(crate) fn output_name(expr: &Expr) -> String {
    match expr {
        Expr::Identifier(ident) => fold(ident),
        Expr::CompoundIdentifier(parts) => parts.last().map(fold).unwrap_or_default(),
        Expr::Cast { expr, .. } | Expr::Nested(expr) => output_name(expr),
        Expr::Function(f) => f.name.to_string().to_lowercase(),
        _ => "?column?".into(),
    }
}

/// The result type of an expression that is not a plain column.
pub fn static_type(s: &Scalar, params: &Params) -> SqlType {
    match s {
        Scalar::Const(Datum::Int(_)) => SqlType::Int4,
        Scalar::Const(Datum::Float(_)) => SqlType::Float8,
        Scalar::Const(Datum::Bool(_)) => SqlType::Bool,
        Scalar::Const(Datum::Bytes(_)) => SqlType::Bytea,
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
    }
}

/// What a read needs at execution time.
#[derive(Clone)]
pub struct ReadContext {
    pub engine: Arc<Engine>,
    /// The open transaction's staged writes, if any, which reads must see.
    pub staged: Option<StagedView>,
    /// `SET pgwide.as_of`: read the newest version at or before this time (ms).
    pub as_of: Option<i64>,
    /// Counts pages, rows and capacity units for EXPLAIN ANALYZE.
    pub meter: Option<Arc<ReadMeter>>,
    /// Where cells shown as NULL (stored type not the column's) are reported.
    pub notices: Option<Arc<Notices>>,
}

/// An operand compared with PK column `k`, as that column's value; `None` if it is NULL.
fn operand_pk_or_null(
    s: &Scalar,
    params: &[Datum],
    table: &TableMeta,
    k: usize,
) -> SqlResult<Option<PkValue>> {
    let column = &table.pk[k];
    match eval(s, &[], params)? {
        Datum::Null => Ok(None),
        d => datum_into_pk(d, column.ty, &column.name).map(Some),
    }
}

impl ReadPlan {
    /// The WHERE clause's attribute comparisons as engine conditions, with this
    /// execution's parameters; a NULL or unconvertible operand is left to the residual.
    pub fn pushed_conditions(&self, params: &[Datum]) -> SqlResult<Vec<ColumnCondition>> {
        let mut filters = Vec::new();
        for (column, op, operand) in &self.pushed {
            let datum = eval(operand, &[], params)?;
            let ty = self.relation.table.column(column).map(|c| c.ty);
            let value = match (ty, &datum) {
                (_, Datum::Null) => None,
                (Some(ty), d) => datum_to_value(d, ty).ok(),
                (None, d) => super::values::datum_to_natural_value(d),
            };
            if let Some(value) = value {
                filters.push(ColumnCondition::Compare {
                    column: column.clone(),
                    op: *op,
                    value,
                    pass_if_missing: false,
                });
            }
        }
        Ok(filters)
    }

    /// The engine read options: needed columns, versions, pushed-down filter.
    pub(crate) fn read_options(&self, params: &[Datum]) -> SqlResult<ReadOptions> {
        let mut filters = self.pushed_conditions(params)?;
        let attributes = self.relation.needed_attributes();
        let versions = self.relation.kind == RelationKind::Versions;
        Ok(ReadOptions {
            columns: if versions || attributes.len() > 128 {
                None
            } else {
                Some(attributes)
            },
            max_versions: if versions { Some(i64::MAX) } else { None },
            version_range: self.version_range(params)?,
            filter: match filters.len() {
                0 => None,
                1 => filters.pop(),
                _ => Some(ColumnCondition::And(filters)),
            },
            as_of: None,
        })
    }

    /// `[start, end)` from the comparisons on `version`; `None` when there are none.
    fn version_range(&self, params: &[Datum]) -> SqlResult<Option<(i64, i64)>> {
        if self.version_bounds.is_empty() {
            return Ok(None);
        }
        let (mut start, mut end) = (0i64, i64::MAX);
        for (op, operand) in &self.version_bounds {
            let Datum::Int(v) = eval(operand, &[], params)? else {
                // NULL or a non-integer: leave it to the residual.
                continue;
            };
            match op {
                CmpOp::Eq => {
                    start = start.max(v);
                    end = end.min(v.saturating_add(1));
                }
                CmpOp::Ge => start = start.max(v),
                CmpOp::Gt => start = start.max(v.saturating_add(1)),
                CmpOp::Le => end = end.min(v.saturating_add(1)),
                CmpOp::Lt => end = end.min(v),
                CmpOp::Ne => {}
            }
        }
        Ok(Some((start, end.max(start))))
    }

    /// The GetRange request for a Range access; `None` when an operand is NULL, as no
    /// row then matches (a comparison with NULL is never true).
    pub(crate) fn range_request(
        &self,
        params: &[Datum],
        read: ReadOptions,
    ) -> SqlResult<Option<RangeRequest>> {
        let Access::Range {
            prefix,
            lower,
            upper,
        } = &self.access
        else {
            return Err(SqlError::internal("a range request of a keyed read"));
        };
        let table = &self.relation.table;
        let mut start = Vec::new();
        let mut end = Vec::new();
        for (k, operand) in prefix.iter().enumerate() {
            let Some(v) = operand_pk_or_null(operand, params, table, k)? else {
                return Ok(None);
            };
            start.push(PkBound::Value(v.clone()));
            end.push(PkBound::Value(v));
        }
        let k = prefix.len();
        let last = k + 1 == table.pk.len();
        let mut null_bound = false;
        let mut bound = |b: &Option<(Scalar, bool)>| -> SqlResult<Option<(PkValue, bool)>> {
            let Some((s, inclusive)) = b else {
                return Ok(None);
            };
            let v = operand_pk_or_null(s, params, table, k)?;
            null_bound |= v.is_none();
            Ok(v.map(|v| (v, *inclusive)))
        };
        let (lower, upper) = (bound(lower)?, bound(upper)?);
        if null_bound {
            return Ok(None);
        }
        let forward = self.direction == Direction::Forward;
        if k < table.pk.len() {
            // Forward reads [low, high); backward from high (inclusive) down to low
            // (exclusive). Pad the remaining columns so the bound covers whole groups.
            let (low, low_pad) = match lower {
                None => (PkBound::InfMin, PkBound::InfMin),
                Some((v, inclusive)) => {
                    let pad = if inclusive {
                        PkBound::InfMin
                    } else {
                        PkBound::InfMax
                    };
                    if last {
                        match (forward, inclusive) {
                            (true, true) | (false, false) => (PkBound::Value(v), pad),
                            (true, false) => successor(v),
                            // Down to just below `v`, or to the prefix's start
                            // (more than asked; the residual keeps the result exact).
                            (false, true) => (
                                predecessor(&v).map_or(PkBound::InfMin, PkBound::Value),
                                PkBound::InfMin,
                            ),
                        }
                    } else {
                        (PkBound::Value(v), pad)
                    }
                }
            };
            let (high, high_pad) = match upper {
                None => (PkBound::InfMax, PkBound::InfMax),
                Some((v, inclusive)) => {
                    let pad = if inclusive {
                        PkBound::InfMax
                    } else {
                        PkBound::InfMin
                    };
                    if last {
                        match (forward, inclusive) {
                            (true, false) | (false, true) => (PkBound::Value(v), pad),
                            (true, true) => successor(v),
                            // From just below `v`. Without a predecessor: from `v`
                            // itself for a String or Binary (the residual drops it),
                            // and from nothing for i64::MIN (no row is below it).
                            (false, false) => {
                                let start = match predecessor(&v) {
                                    Some(below) => PkBound::Value(below),
                                    None if matches!(v, PkValue::Integer(_)) => PkBound::InfMin,
                                    None => PkBound::Value(v),
                                };
                                (start, PkBound::InfMin)
                            }
                        }
                    } else {
                        (PkBound::Value(v), pad)
                    }
                }
            };
            let rest = table.pk.len() - k - 1;
            let (first, first_pad, second, second_pad) = if forward {
                (low, low_pad, high, high_pad)
            } else {
                (high, high_pad, low, low_pad)
            };
            start.push(first);
            start.extend(std::iter::repeat_n(first_pad, rest));
            end.push(second);
            end.extend(std::iter::repeat_n(second_pad, rest));
        }
        Ok(Some(RangeRequest {
            start,
            end,
            direction: self.direction,
            limit: None,
            read,
        }))
    }

    /// Every key of a Keys access, deduplicated and in scan order.
    pub(crate) fn keys(&self, params: &[Datum]) -> SqlResult<Vec<PrimaryKey>> {
        let Access::Keys(candidates) = &self.access else {
            return Ok(Vec::new());
        };
        let table = &self.relation.table;
        if candidates.iter().all(|options| options.len() == 1) {
            // One key (a point get): built directly, without the product's copies.
            let mut key = Vec::with_capacity(candidates.len());
            for (k, options) in candidates.iter().enumerate() {
                match operand_pk_or_null(&options[0], params, table, k)? {
                    Some(v) => key.push(v),
                    None => return Ok(Vec::new()),
                }
            }
            return Ok(vec![key]);
        }
        let mut keys: Vec<PrimaryKey> = vec![Vec::new()];
        for (k, options) in candidates.iter().enumerate() {
            let mut values = Vec::with_capacity(options.len());
            for s in options {
                match eval(s, &[], params)? {
                    Datum::Null => {}
                    d => values.push(datum_into_pk(d, table.pk[k].ty, &table.pk[k].name)?),
                }
            }
            keys = keys
                .into_iter()
                .flat_map(|prefix| {
                    values.iter().map(move |v| {
                        let mut key = prefix.clone();
                        key.push(v.clone());
                        key
                    })
                })
                .collect();
        }
        keys.sort_by_key(|k| crate::engine::encode_pk(k));
        keys.dedup();
        if self.direction == Direction::Backward {
            keys.reverse();
        }
        Ok(keys)
    }
}

/// The smallest value above `v`, as a bound.
fn successor(v: PkValue) -> (PkBound, PkBound) {
    let bound = match v {
        PkValue::Integer(i) => i
            .checked_add(1)
            .map_or(PkBound::InfMax, |n| PkBound::Value(PkValue::Integer(n))),
        PkValue::String(mut s) => {
            s.push('\0');
            PkBound::Value(PkValue::String(s))
        }
        PkValue::Binary(mut b) => {
            b.push(0);
            PkBound::Value(PkValue::Binary(b))
        }
    };
    (bound, PkBound::InfMin)
}

/// The largest value below `v`: none below i64::MIN, and none for a String or Binary
/// (below "b" are "a", "az", "azz", ... without a largest).
fn predecessor(v: &PkValue) -> Option<PkValue> {
    match v {
        PkValue::Integer(i) => i.checked_sub(1).map(PkValue::Integer),
        PkValue::String(_) | PkValue::Binary(_) => None,
    }
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

/// Reads the rows of a plan: a stream of relation rows (slot values), after the residual.
pub async fn read_rows(
    ctx: &ReadContext,
    plan: Arc<ReadPlan>,
    params: Arc<Vec<Datum>>,
    want: Option<usize>,
) -> SqlResult<stream::BoxStream<'static, SqlResult<Vec<Datum>>>> {
    let table = Arc::clone(&plan.relation.table);
    let mut read = plan.read_options(&params)?;
    // As of T: each cell shows its newest version at or before T, and rows written
    // only after T are not there.
    read.as_of = ctx.as_of;
    let meter = ctx.meter.clone().unwrap_or_default();
    let staged = ctx.staged.as_ref().filter(|s| s.touches(&table)).cloned();
    let engine = Arc::clone(&ctx.engine);
    let shape: Shape = {
        let notices = ctx.notices.clone();
        let plan = Arc::clone(&plan);
        let params = Arc::clone(&params);
        let residual = plan.residual.as_ref().map(|r| bind(r, &params));
        Arc::new(
            move |row: &RowView<'_>, out: &mut VecDeque<SqlResult<Vec<Datum>>>| {
                plan.relation
                    .materialize(row, notices.as_deref(), |values| match &residual {
                        None => out.push_back(Ok(values)),
                        Some(residual) => match eval(residual, &values, &params) {
                            Ok(d) if is_true(&d) => out.push_back(Ok(values)),
                            Ok(_) => {}
                            Err(e) => out.push_back(Err(e)),
                        },
                    });
            },
        )
    };
    if let Access::Keys(_) = plan.access {
        let keys = plan.keys(&params)?;
        let mut out = VecDeque::new();
        for chunk in keys.chunks(engine.limits().max_batch_get_rows.max(1)) {
            let rows = match &staged {
                Some(staged) => engine.preview_rows(staged, &table, chunk, &read).await?,
                None if chunk.len() == 1 => {
                    let got = engine.get_row(&table, &chunk[0], &read).await?;
                    meter.record(1, got.capacity.read);
                    vec![got.row]
                }
                None => {
                    let got = engine.batch_get_row(&table, chunk, &read).await?;
                    meter.record(chunk.len() as u64, got.capacity.read);
                    got.rows
                }
            };
            rows.into_iter()
                .flatten()
                .for_each(|row| shape(&RowView::of(&row), &mut out));
        }
        return Ok(stream::iter(out).boxed());
    }
    let Some(mut request) = plan.range_request(&params, read)? else {
        return Ok(stream::empty().boxed());
    };
    if let Some(staged) = staged {
        let overlay = engine.staged_range(&staged, &table, &request);
        return Ok(PagedRows::new(engine, table, meter, shape, request)
            .over_staged(overlay)
            .boxed());
    }
    // Without a residual every engine row is a result row, so LIMIT goes to the engine.
    if plan.residual.is_none() && plan.relation.kind == RelationKind::Table {
        request.limit = want;
    }
    Ok(PagedRows::new(engine, table, meter, shape, request).boxed())
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
