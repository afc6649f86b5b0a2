//! Intervals as PostgreSQL plans them, where DataFusion's differ or are missing.
//!
//! Arithmetic: `interval * number`, `number * interval` and `interval / number` (an
//! `ExprPlanner`; DataFusion has none of them) scale months, days and time apart, a
//! fraction of a month spilling into days (30 to a month) and of a day into time, as
//! PostgreSQL's `interval_mul`.
//!
//! Order: intervals compare and sort as PostgreSQL's do, by their length with a month
//! as 30 days and a day as 24 hours, so `interval '1 mon' = interval '30 days'` and
//! `interval '1 mon' < interval '40 days'`. Arrow compares an interval's months, days
//! and nanoseconds one after the other, which gives other answers, so an analyzer rule
//! (after type coercion) makes every comparison of intervals or durations one of
//! their lengths (`pg_interval_span`), and every ORDER BY an interval an ORDER BY its
//! length. Grouping, DISTINCT and min/max of intervals, which would treat `1 mon` and
//! `30 days` as different values, are refused (0A000).
//!
//! Differences of dates: `date - date` is the `integer` count of days PostgreSQL's is
//! (DataFusion's is a `bigint`), rewritten as the query is planned, so the result's
//! described type is it too (`date_differences`).

use super::pg_integer_overflow::{is_comparison, rewrite_expressions};
use crate::sql::pg_interval::{self, Interval};
use crate::sql::sql_types::SqlError;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Decimal128Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, DurationMicrosecondType, IntervalMonthDayNano, IntervalMonthDayNanoType,
    IntervalUnit, TimeUnit,
};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::config::ConfigOptions;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::{AggregateFunction, ScalarFunction};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{
    BinaryExpr, ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, SortExpr, Volatility,
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

/// `pg_interval_mul(interval, factor, divide)`: `interval * factor`, or
/// `interval / factor` when `divide`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct IntervalMul {
    signature: Signature,
}

impl ScalarUDFImpl for IntervalMul {
    fn name(&self) -> &str {
        "pg_interval_mul"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Interval(IntervalUnit::MonthDayNano))
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let returns = DataType::Interval(IntervalUnit::MonthDayNano);
        super::udf::row_by_row(args, &returns, |values| {
            let [interval, factor, divide] = values else {
                return Err(DataFusionError::Internal(
                    "pg_interval_mul takes three arguments".into(),
                ));
            };
            let divide = matches!(divide, ScalarValue::Boolean(Some(true)));
            let interval = interval.cast_to(&returns)?;
            let factor = factor.cast_to(&DataType::Float64)?;
            Ok(match (interval, factor) {
                (
                    ScalarValue::IntervalMonthDayNano(Some(v)),
                    ScalarValue::Float64(Some(factor)),
                ) => {
                    let scaled = scale(
                        &Interval {
                            months: v.months,
                            days: v.days,
                            micros: v.nanoseconds / 1000,
                        },
                        factor,
                        divide,
                    )
                    .map_err(|e| DataFusionError::External(Box::new(e)))?;
                    ScalarValue::IntervalMonthDayNano(Some(IntervalMonthDayNano::new(
                        scaled.months,
                        scaled.days,
                        scaled.micros.saturating_mul(1000),
                    )))
                }
                _ => ScalarValue::IntervalMonthDayNano(None),
            })
        })
    }
}

/// `interval_mul` (`interval_div` when `divide`): each field scaled, a month's
/// fraction spilling into days and a day's into time, the spilled parts rounded to a
/// microsecond as PostgreSQL's `TSROUND` rounds them.
fn scale(interval: &Interval, factor: f64, divide: bool) -> crate::sql::SqlResult<Interval> {
    use crate::sqlstate::SqlState;
    if divide && factor == 0.0 {
        return Err(SqlError::new(SqlState::DivisionByZero, "division by zero"));
    }
    let by = |v: f64| if divide { v / factor } else { v * factor };
    let round = |v: f64| (v * 1e6).round() / 1e6;
    let months = by(f64::from(interval.months));
    let month_days = round((months - months.trunc()) * 30.0);
    let days = by(f64::from(interval.days));
    let mut seconds = round((days - days.trunc() + month_days - month_days.trunc()) * 86_400.0);
    let mut whole_days = days.trunc() + month_days.trunc();
    if seconds.abs() >= 86_400.0 {
        whole_days += (seconds / 86_400.0).trunc();
        seconds -= (seconds / 86_400.0).trunc() * 86_400.0;
    }
    let micros = (by(interval.micros as f64) + seconds * 1_000_000.0).round();
    let fits = |v: f64| v.is_finite() && v.abs() <= f64::from(i32::MAX);
    if !fits(months) || !fits(whole_days) || !micros.is_finite() || micros.abs() >= 9.2e18 {
        return Err(SqlError::new(
            SqlState::DatetimeFieldOverflow,
            "interval out of range",
        ));
    }
    Ok(Interval {
        months: months.trunc() as i32,
        days: whole_days as i32,
        micros: micros as i64,
    })
}

static MUL_FUNCTION: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
    Arc::new(ScalarUDF::new_from_impl(IntervalMul {
        signature: Signature::any(3, Volatility::Immutable),
    }))
});

/// `*` and `/` between an interval and a number.
#[derive(Debug)]
pub struct IntervalArithmetic;

impl ExprPlanner for IntervalArithmetic {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        use sqlparser::ast::BinaryOperator as B;
        if !matches!(expr.op, B::Multiply | B::Divide) {
            return Ok(PlannerResult::Original(expr));
        }
        let number = |ty: &DataType| ty.is_numeric();
        let (left, right) = (expr.left.get_type(schema)?, expr.right.get_type(schema)?);
        let call = |interval: Expr, factor: Expr, divide: bool| {
            let divide = Expr::Literal(ScalarValue::Boolean(Some(divide)), None);
            Expr::ScalarFunction(ScalarFunction::new_udf(
                Arc::clone(&MUL_FUNCTION),
                vec![interval, factor, divide],
            ))
        };
        Ok(match (&expr.op, is_interval(&left), is_interval(&right)) {
            (B::Multiply, true, false) if number(&right) => {
                PlannerResult::Planned(call(expr.left, expr.right, false))
            }
            (B::Multiply, false, true) if number(&left) => {
                PlannerResult::Planned(call(expr.right, expr.left, false))
            }
            (B::Divide, true, false) if number(&right) => {
                PlannerResult::Planned(call(expr.left, expr.right, true))
            }
            _ => PlannerResult::Original(expr),
        })
    }
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

/// Makes every `date - date` of `plan` an `integer`.
pub fn date_differences(plan: LogicalPlan) -> Result<LogicalPlan> {
    rewrite_expressions(plan, date_difference)
}

/// `date - date` as an `integer`.
fn date_difference(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match expr {
        Expr::BinaryExpr(BinaryExpr {
            ref left,
            op: datafusion::logical_expr::Operator::Minus,
            ref right,
        }) if left.get_type(schema)? == DataType::Date32
            && right.get_type(schema)? == DataType::Date32 =>
        {
            Ok(Transformed::yes(Expr::Cast(
                datafusion::logical_expr::Cast::new(Box::new(expr), DataType::Int32),
            )))
        }
        other => Ok(Transformed::no(other)),
    }
}

fn comparison(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if is_comparison(&op)
                && (is_interval(&left.get_type(schema)?)
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
