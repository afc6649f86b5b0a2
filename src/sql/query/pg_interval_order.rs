//! Intervals compare and sort as PostgreSQL's do: by their length with a month as 30
//! days and a day as 24 hours, so `interval '1 mon' = interval '30 days'` and
//! `interval '1 mon' < interval '40 days'`. Arrow compares an interval's months, days
//! and nanoseconds one after the other, which gives other answers, so an analyzer rule
//! (after type coercion) makes every comparison of intervals or durations one of
//! their lengths (`pg_interval_span`), and every ORDER BY an interval an ORDER BY its
//! length. Grouping, DISTINCT and min/max of intervals, which would treat `1 mon` and
//! `30 days` as different values, are refused (0A000).

use super::pg_integer_overflow::rewrite_expressions;
use crate::sql::pg_interval::{self, Interval};
use crate::sql::sql_types::SqlError;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Decimal128Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, DurationMicrosecondType, IntervalMonthDayNanoType, IntervalUnit, TimeUnit,
};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::DFSchema;
use datafusion::config::ConfigOptions;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::{AggregateFunction, ScalarFunction};
use datafusion::logical_expr::{
    BinaryExpr, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, SortExpr, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::{Arc, LazyLock};

/// The type of a length: microseconds, which a month of `i32::MAX` outgrows 64 bits.
const SPAN: DataType = DataType::Decimal128(38, 0);

fn is_interval(ty: &DataType) -> bool {
    matches!(ty, DataType::Interval(_) | DataType::Duration(_))
}

/// `pg_interval_span(x)`: an interval's or duration's length in microseconds.
#[derive(Debug, PartialEq, Eq, Hash)]
struct IntervalSpan {
    signature: Signature,
}

impl ScalarUDFImpl for IntervalSpan {
    fn name(&self) -> &str {
        "pg_interval_span"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(SPAN)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalar = args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let Some(array) = arrays.first() else {
            return Err(DataFusionError::Internal(
                "pg_interval_span takes one argument".into(),
            ));
        };
        let spans: ArrayRef = Arc::new(spans(array)?.with_precision_and_scale(38, 0)?);
        Ok(match scalar {
            true => {
                ColumnarValue::Scalar(datafusion::common::ScalarValue::try_from_array(&spans, 0)?)
            }
            false => ColumnarValue::Array(spans),
        })
    }
}

fn spans(array: &ArrayRef) -> Result<Decimal128Array> {
    let len = array.len();
    Ok(match array.data_type() {
        DataType::Duration(_) => {
            let micros = cast(array, &DataType::Duration(TimeUnit::Microsecond))?;
            let micros = micros.as_primitive::<DurationMicrosecondType>();
            (0..len)
                .map(|i| (!micros.is_null(i)).then(|| i128::from(micros.value(i))))
                .collect()
        }
        _ => {
            let intervals = cast(array, &DataType::Interval(IntervalUnit::MonthDayNano))?;
            let intervals = intervals.as_primitive::<IntervalMonthDayNanoType>();
            (0..len)
                .map(|i| {
                    (!intervals.is_null(i)).then(|| {
                        let v = intervals.value(i);
                        pg_interval::span(&Interval {
                            months: v.months,
                            days: v.days,
                            micros: v.nanoseconds / 1000,
                        })
                    })
                })
                .collect()
        }
    })
}

static SPAN_FUNCTION: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
    Arc::new(ScalarUDF::new_from_impl(IntervalSpan {
        signature: Signature::any(1, Volatility::Immutable),
    }))
});

fn span(expr: Expr) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::clone(&SPAN_FUNCTION),
        vec![expr],
    ))
}

/// The analyzer rule; see the module's note.
#[derive(Debug)]
pub struct IntervalOrder;

impl AnalyzerRule for IntervalOrder {
    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        let plan = rewrite_expressions(plan, comparison)?;
        let plan = plan
            .transform_up_with_subqueries(|node| match node {
                LogicalPlan::Sort(mut sort) => {
                    let schema = sort.input.schema().clone();
                    let mut changed = false;
                    for key in &mut sort.expr {
                        if is_interval(&key.expr.get_type(&schema)?) {
                            let SortExpr { expr, .. } = key;
                            *expr = span(expr.clone());
                            changed = true;
                        }
                    }
                    let node = LogicalPlan::Sort(sort);
                    Ok(match changed {
                        true => Transformed::yes(node),
                        false => Transformed::no(node),
                    })
                }
                LogicalPlan::Join(_) => {
                    let schema = node.schema().clone();
                    node.map_expressions(|e| e.transform_up(|e| comparison(e, &schema)))
                }
                other => Ok(Transformed::no(other)),
            })?
            .data;
        refuse_grouping(&plan)?;
        Ok(plan)
    }

    fn name(&self) -> &str {
        "pgwide_interval_order"
    }
}

fn comparison(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(
                op,
                Operator::Eq
                    | Operator::NotEq
                    | Operator::Lt
                    | Operator::LtEq
                    | Operator::Gt
                    | Operator::GtEq
                    | Operator::IsDistinctFrom
                    | Operator::IsNotDistinctFrom
            ) && (is_interval(&left.get_type(schema)?)
                || is_interval(&right.get_type(schema)?)) =>
        {
            Ok(Transformed::yes(Expr::BinaryExpr(BinaryExpr {
                left: Box::new(span(*left)),
                op,
                right: Box::new(span(*right)),
            })))
        }
        other => Ok(Transformed::no(other)),
    }
}

/// Refuses GROUP BY, DISTINCT and min/max over intervals.
fn refuse_grouping(plan: &LogicalPlan) -> Result<()> {
    plan.apply_with_subqueries(|node| {
        let refused = |what: &str| {
            Err(DataFusionError::External(Box::new(SqlError::unsupported(
                format!("{what} of interval values is not supported yet"),
            ))))
        };
        match node {
            LogicalPlan::Aggregate(aggregate) => {
                let schema = aggregate.input.schema();
                for e in &aggregate.group_expr {
                    if is_interval(&e.get_type(schema)?) {
                        return refused("GROUP BY");
                    }
                }
                for e in &aggregate.aggr_expr {
                    if let Expr::AggregateFunction(AggregateFunction { func, params }) = e {
                        let ordered = matches!(func.name(), "min" | "max") || params.distinct;
                        for arg in &params.args {
                            if ordered && is_interval(&arg.get_type(schema)?) {
                                return refused("min, max or DISTINCT in an aggregate");
                            }
                        }
                    }
                }
            }
            LogicalPlan::Distinct(_)
                if node
                    .schema()
                    .fields()
                    .iter()
                    .any(|f| is_interval(f.data_type())) =>
            {
                return refused("DISTINCT or UNION");
            }
            _ => {}
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(())
}
