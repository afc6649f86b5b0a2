//! The DataFusion table over one pgwide table or its `versions.<table>` relation. It
//! claims the predicates it can enforce exactly — comparisons and IN lists of a column
//! with literals — and turns them, with the fast path's planner, into GetRow /
//! BatchGetRow / GetRange bounds on the PK and into engine filters on attributes.

use super::convert::arrow_type;
use super::engine_scan::ScanExec;
use crate::engine::{Direction, TableMeta};
use crate::sql::access::{conjuncts, plan_access};
use crate::sql::expr::{CmpOp, Scalar};
use crate::sql::relation::{Relation, RelationKind};
use crate::sql::row_reader::ReadContext;
use crate::sql::sql_types::{Datum, SqlType};
use async_trait::async_trait;
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::ScalarValue;
use datafusion::common::{Constraint, Constraints};
use datafusion::datasource::TableType;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    expr::InList, Between, BinaryExpr, Expr, Operator, TableProviderFilterPushDown,
};
use datafusion::physical_plan::ExecutionPlan;
use std::sync::Arc;

/// A table or versions relation as DataFusion sees it.
#[derive(Debug)]
pub struct EngineTable {
    table: Arc<TableMeta>,
    kind: RelationKind,
    schema: SchemaRef,
    /// The relation column behind each schema field (the hidden `_rowid` has none).
    visible: Vec<usize>,
    /// The primary key, by field: with it DataFusion takes the other columns as
    /// functionally dependent, so `SELECT t.* ... GROUP BY t.id` plans, as in
    /// PostgreSQL (Django's `annotate`).
    constraints: Constraints,
}

impl EngineTable {
    /// The table whose rows this scans as themselves: none for a versions relation.
    pub fn base_table(&self) -> Option<&Arc<TableMeta>> {
        (self.kind == RelationKind::Table).then_some(&self.table)
    }

    pub fn new(table: Arc<TableMeta>, kind: RelationKind) -> Self {
        let relation = Relation::new(Arc::clone(&table), kind, None);
        let mut fields = Vec::new();
        let mut visible = Vec::new();
        for (index, column) in relation.columns.iter().enumerate() {
            if column.hidden {
                continue;
            }
            let field = Field::new(&column.name, arrow_type(column.ty), true);
            fields.push(match column.ty {
                SqlType::Enum(oid) => field.with_metadata(super::pg_enum_plan::field_metadata(oid)),
                _ => field,
            });
            visible.push(index);
        }
        let key: Option<Vec<usize>> = match kind == RelationKind::Table && !table.auto_rowid {
            true => table
                .pk
                .iter()
                .map(|c| fields.iter().position(|f| f.name() == &c.name))
                .collect(),
            false => None,
        };
        let constraints =
            Constraints::new_unverified(key.into_iter().map(Constraint::PrimaryKey).collect());
        EngineTable {
            table,
            kind,
            schema: Arc::new(Schema::new(fields)),
            visible,
            constraints,
        }
    }

    fn relation(&self) -> Relation {
        Relation::new(Arc::clone(&self.table), self.kind, None)
    }
}

#[async_trait]
impl TableProvider for EngineTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn constraints(&self) -> Option<&Constraints> {
        Some(&self.constraints)
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        let mut relation = self.relation();
        Ok(filters
            .iter()
            .map(|f| match to_scalar(f, &mut relation) {
                Some(_) => TableProviderFilterPushDown::Exact,
                None => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let ctx = state
            .config()
            .get_extension::<ReadContext>()
            .ok_or_else(|| DataFusionError::Internal("scan without a read context".into()))?;
        let projection: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.visible.len()).collect(),
        };
        let mut relation = self.relation();
        for &field in &projection {
            let index = self.visible.get(field).copied().ok_or_else(|| {
                DataFusionError::Internal(format!("no column {field} in {}", self.table.name))
            })?;
            relation.slot(index);
        }
        let mut parts = Vec::new();
        for filter in filters {
            // Every filter given here was claimed Exact, so none may be dropped.
            let scalar = to_scalar(filter, &mut relation).ok_or_else(|| {
                DataFusionError::Internal(format!("filter {filter} cannot be pushed down"))
            })?;
            conjuncts(scalar, &mut parts);
        }
        let plan = plan_access(relation, parts, Direction::Forward);
        let schema = Arc::new(self.schema.project(&projection)?);
        Ok(Arc::new(ScanExec::new(plan, (*ctx).clone(), schema, limit)))
    }
}

/// A pushed-down predicate over the relation's slots, or `None` when the engine side
/// could not evaluate it exactly as DataFusion would (floats are left to DataFusion:
/// Arrow orders NaN as a value, SQL comparison does not).
fn to_scalar(expr: &Expr, relation: &mut Relation) -> Option<Scalar> {
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            if *op == Operator::Or {
                // DataFusion turns a short IN list into ORs of equalities; as one IN
                // list on a PK column it still picks BatchGetRow.
                return merge_in(to_scalar(left, relation)?, to_scalar(right, relation)?);
            }
            if *op == Operator::And {
                return Some(Scalar::And(vec![
                    to_scalar(left, relation)?,
                    to_scalar(right, relation)?,
                ]));
            }
            let op = match op {
                Operator::Eq => CmpOp::Eq,
                Operator::NotEq => CmpOp::Ne,
                Operator::Lt => CmpOp::Lt,
                Operator::LtEq => CmpOp::Le,
                Operator::Gt => CmpOp::Gt,
                Operator::GtEq => CmpOp::Ge,
                _ => return None,
            };
            let (slot, op, value) = match (&**left, &**right) {
                (Expr::Column(c), Expr::Literal(v, _)) => (column(relation, &c.name, v)?, op, v),
                (Expr::Literal(v, _), Expr::Column(c)) => {
                    (column(relation, &c.name, v)?, op.flip(), v)
                }
                _ => return None,
            };
            let (slot, ty) = slot;
            Some(Scalar::Compare(
                op,
                Box::new(Scalar::Column(slot)),
                Box::new(Scalar::Const(literal(value, ty)?)),
            ))
        }
        Expr::InList(InList {
            expr,
            list,
            negated: false,
        }) => {
            let Expr::Column(c) = &**expr else {
                return None;
            };
            let first = match list.first()? {
                Expr::Literal(v, _) => v,
                _ => return None,
            };
            let (slot, ty) = column(relation, &c.name, first)?;
            let values = list
                .iter()
                .map(|e| match e {
                    Expr::Literal(v, _) => literal(v, ty).map(Scalar::Const),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?;
            Some(Scalar::InList(
                Box::new(Scalar::Column(slot)),
                values,
                false,
            ))
        }
        Expr::Between(Between {
            expr,
            negated: false,
            low,
            high,
        }) => {
            let ge = Expr::BinaryExpr(BinaryExpr::new(expr.clone(), Operator::GtEq, low.clone()));
            let le = Expr::BinaryExpr(BinaryExpr::new(expr.clone(), Operator::LtEq, high.clone()));
            Some(Scalar::And(vec![
                to_scalar(&ge, relation)?,
                to_scalar(&le, relation)?,
            ]))
        }
        _ => None,
    }
}

/// `a = 1 OR a IN (2, 3)` as `a IN (1, 2, 3)`; `None` for any other OR.
fn merge_in(left: Scalar, right: Scalar) -> Option<Scalar> {
    let parts = |s: Scalar| -> Option<(usize, Vec<Scalar>)> {
        match s {
            Scalar::Compare(CmpOp::Eq, column, value) => match *column {
                Scalar::Column(slot) => Some((slot, vec![*value])),
                _ => None,
            },
            Scalar::InList(column, values, false) => match *column {
                Scalar::Column(slot) => Some((slot, values)),
                _ => None,
            },
            _ => None,
        }
    };
    let (a, mut left) = parts(left)?;
    let (b, right) = parts(right)?;
    if a != b {
        return None;
    }
    left.extend(right);
    Some(Scalar::InList(Box::new(Scalar::Column(a)), left, false))
}

/// The slot and type of a column compared with `value`, when the two types match.
fn column(relation: &mut Relation, name: &str, value: &ScalarValue) -> Option<(usize, SqlType)> {
    let index = relation.index_of(name)?;
    let ty = relation.columns[index].ty;
    literal(value, ty)?;
    Some((relation.slot(index), ty))
}

/// A non-NULL literal of the column's own type as a datum.
fn literal(value: &ScalarValue, ty: SqlType) -> Option<Datum> {
    Some(match (ty, value) {
        (SqlType::Int2 | SqlType::Int4 | SqlType::Int8, ScalarValue::Int64(Some(i))) => {
            Datum::Int(*i)
        }
        (SqlType::Int2 | SqlType::Int4 | SqlType::Int8, ScalarValue::Int32(Some(i))) => {
            Datum::Int(i64::from(*i))
        }
        (SqlType::Int2 | SqlType::Int4 | SqlType::Int8, ScalarValue::Int16(Some(i))) => {
            Datum::Int(i64::from(*i))
        }
        (SqlType::Text, ScalarValue::Utf8(Some(s)))
        | (SqlType::Text, ScalarValue::LargeUtf8(Some(s)))
        | (SqlType::Text, ScalarValue::Utf8View(Some(s))) => Datum::Text(s.clone()),
        // Only equalities reach here with an enum (`pg_enum_plan` made its other
        // comparisons compare positions, and checked the label): text equality.
        (SqlType::Enum(_), ScalarValue::Utf8(Some(s))) => Datum::Text(s.clone()),
        (SqlType::Bool, ScalarValue::Boolean(Some(b))) => Datum::Bool(*b),
        // A time compared with a timestamp column, exactly in microseconds (a
        // nanosecond between two is left to DataFusion).
        (SqlType::Timestamp, value) | (SqlType::TimestampTz, value) => {
            let zoned = ty == SqlType::TimestampTz;
            let micros = match value {
                ScalarValue::TimestampSecond(Some(s), zone) if zone.is_some() == zoned => {
                    s.checked_mul(1_000_000)?
                }
                ScalarValue::TimestampMillisecond(Some(ms), zone) if zone.is_some() == zoned => {
                    ms.checked_mul(1000)?
                }
                ScalarValue::TimestampMicrosecond(Some(us), zone) if zone.is_some() == zoned => *us,
                ScalarValue::TimestampNanosecond(Some(ns), zone)
                    if zone.is_some() == zoned && ns % 1000 == 0 =>
                {
                    ns / 1000
                }
                _ => return None,
            };
            if zoned {
                Datum::TimestampTz(micros)
            } else {
                Datum::Timestamp(micros)
            }
        }
        (SqlType::Date, ScalarValue::Date32(Some(days))) => Datum::Date(*days),
        (SqlType::Uuid, ScalarValue::FixedSizeBinary(16, Some(bytes))) => {
            Datum::Uuid(bytes.as_slice().try_into().ok()?)
        }
        (SqlType::Bytea, ScalarValue::Binary(Some(b)))
        | (SqlType::Bytea, ScalarValue::LargeBinary(Some(b)))
        | (SqlType::Bytea, ScalarValue::BinaryView(Some(b))) => Datum::Bytes(b.clone()),
        _ => return None,
    })
}
