//! PostgreSQL raises 22003 ("bigint out of range", "integer out of range") where
//! integer arithmetic overflows; DataFusion wraps (`mul_wrapping`), so `sum(a *
//! 4611686018427387904)` gave a number and `sum` of large bigints turned negative.
//! Before a query is optimized, `+`, `-` and `*` over two integers (smallint, integer
//! or bigint; the narrower operand widened to the other's type, as PostgreSQL's
//! operators are chosen) and `sum` over integers are replaced by checked versions that
//! fail with 22003 instead. The expressions keep their names.
//!
//! Aggregates over integers get PostgreSQL's result types here too: `sum(bigint)` is
//! an exact `numeric` (DataFusion's sum over a 38-digit decimal), `sum` of smallints
//! and integers a checked bigint, and `avg` of any integer a `numeric`
//! (`pg_integer_avg`). So do integer literals: DataFusion types each one a bigint,
//! PostgreSQL an `integer` where it fits, in a select list, a VALUES list or a UNION
//! branch (first, so the overflow checks see the narrower type).

use crate::sql::sql_types::SqlError;
use crate::sqlstate::SqlState;
use datafusion::arrow::array::{ArrayRef, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::compute::kernels::numeric;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::arrow::error::ArrowError;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::{AggregateFunction, ScalarFunction};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::function::AccumulatorArgs;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, BinaryExpr, ColumnarValue, Expr, ExprSchemable,
    LogicalPlan, Operator, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::physical_expr_common::datum::apply;
use std::sync::{Arc, LazyLock};

fn out_of_range() -> DataFusionError {
    out_of_range_for(&DataType::Int64)
}

fn out_of_range_for(ty: &DataType) -> DataFusionError {
    let name = match ty {
        DataType::Int16 => "smallint",
        DataType::Int32 => "integer",
        _ => "bigint",
    };
    DataFusionError::External(Box::new(SqlError::new(
        SqlState::NumericValueOutOfRange,
        format!("{name} out of range"),
    )))
}

/// A bigint literal that fits an integer, as an integer literal.
fn integer_literal_as_int4(expr: Expr, ty: DataType) -> (Expr, DataType) {
    match expr {
        Expr::Literal(ScalarValue::Int64(Some(value)), metadata) => match i32::try_from(value) {
            Ok(narrow) => (
                Expr::Literal(ScalarValue::Int32(Some(narrow)), metadata),
                DataType::Int32,
            ),
            Err(_) => (Expr::Literal(ScalarValue::Int64(Some(value)), metadata), ty),
        },
        other => (other, ty),
    }
}

/// An integer type's rank: wider is greater.
fn integer_rank(ty: &DataType) -> Option<u8> {
    match ty {
        DataType::Int16 => Some(1),
        DataType::Int32 => Some(2),
        DataType::Int64 => Some(3),
        _ => None,
    }
}

/// Rewrites every node of `plan` that computes expressions over its input, and types
/// an integer literal a select list outputs as it is an `integer` when it fits, as
/// PostgreSQL types it (`SELECT * FROM (SELECT 1 AS a) s` is `int4`; DataFusion's is a
/// bigint, which node-postgres hands back as a string).
pub fn rewrite(plan: LogicalPlan) -> Result<LogicalPlan> {
    // The literals first: `2147483647 + x` over such a column is then an integer's
    // addition, and overflows as PostgreSQL's does.
    let plan = integer_literals(plan)?;
    rewrite_expressions(plan, checked)
}

/// A VALUES list whose column holds only integer literals that fit (or NULLs), with
/// that column an `integer`, as PostgreSQL types it.
fn narrow_values(values: datafusion::logical_expr::Values) -> Result<Transformed<LogicalPlan>> {
    let fits = |e: &Expr| match e {
        Expr::Literal(ScalarValue::Int64(Some(v)), _) => i32::try_from(*v).is_ok(),
        Expr::Literal(ScalarValue::Int64(None) | ScalarValue::Null, _) => true,
        _ => false,
    };
    let fields = values.schema.fields();
    let narrow: Vec<bool> = (0..fields.len())
        .map(|j| {
            fields[j].data_type() == &DataType::Int64
                && values.values.iter().all(|row| row.get(j).is_some_and(fits))
        })
        .collect();
    if !narrow.contains(&true) {
        return Ok(Transformed::no(LogicalPlan::Values(values)));
    }
    let rows = values
        .values
        .into_iter()
        .map(|row| {
            row.into_iter()
                .zip(&narrow)
                .map(|(e, narrow)| match (e, narrow) {
                    (Expr::Literal(ScalarValue::Int64(v), m), true) => {
                        Expr::Literal(ScalarValue::Int32(v.and_then(|v| i32::try_from(v).ok())), m)
                    }
                    (e, _) => e,
                })
                .collect()
        })
        .collect();
    let fields: Vec<_> = fields
        .iter()
        .zip(&narrow)
        .map(|(f, narrow)| match narrow {
            true => Arc::new(f.as_ref().clone().with_data_type(DataType::Int32)),
            false => Arc::clone(f),
        })
        .collect();
    let schema =
        DFSchema::from_unqualified_fields(fields.into(), values.schema.metadata().clone())?;
    Ok(Transformed::yes(LogicalPlan::Values(
        datafusion::logical_expr::Values {
            schema: Arc::new(schema),
            values: rows,
        },
    )))
}

/// `ARRAY[1, 2]` as an `integer[]`, as PostgreSQL types it, when every element is an
/// integer literal that fits (or NULL); DataFusion's is a `bigint[]`.
fn integer_array_literal(expr: Expr) -> Result<Transformed<Expr>> {
    let Expr::ScalarFunction(call) = &expr else {
        return Ok(Transformed::no(expr));
    };
    let fits = |e: &Expr| match e {
        Expr::Literal(ScalarValue::Int64(Some(v)), _) => i32::try_from(*v).is_ok(),
        Expr::Literal(ScalarValue::Int64(None) | ScalarValue::Null, _) => true,
        Expr::Cast(cast) => matches!(*cast.expr, Expr::Literal(ScalarValue::Null, _)),
        _ => false,
    };
    let integers = call
        .args
        .iter()
        .any(|e| matches!(e, Expr::Literal(ScalarValue::Int64(Some(_)), _)));
    if call.func.name() != "make_array" || !integers || !call.args.iter().all(fits) {
        return Ok(Transformed::no(expr));
    }
    let Expr::ScalarFunction(call) = expr else {
        return Ok(Transformed::no(expr));
    };
    let args = call
        .args
        .into_iter()
        .map(|e| match e {
            Expr::Literal(ScalarValue::Int64(v), m) => {
                Expr::Literal(ScalarValue::Int32(v.and_then(|v| i32::try_from(v).ok())), m)
            }
            _ => Expr::Literal(ScalarValue::Int32(None), None),
        })
        .collect();
    Ok(Transformed::yes(Expr::ScalarFunction(
        ScalarFunction::new_udf(call.func, args),
    )))
}

/// Narrows the integer literals select lists output to `integer` where they fit.
fn integer_literals(plan: LogicalPlan) -> Result<LogicalPlan> {
    plan.transform_up_with_subqueries(|node| match node {
        LogicalPlan::Projection(_) => {
            let names = NamePreserver::new(&node);
            let mut narrowed = false;
            let node = node.map_expressions(|expr| {
                let saved = names.save(&expr);
                let arrays = expr.transform_up(integer_array_literal)?;
                if arrays.transformed {
                    narrowed = true;
                    return Ok(Transformed::yes(saved.restore(arrays.data)));
                }
                let expr = arrays.data;
                let (inner, alias) = match expr {
                    Expr::Alias(alias) => (*alias.expr.clone(), Some(alias)),
                    other => (other, None),
                };
                let literal = matches!(inner, Expr::Literal(ScalarValue::Int64(Some(_)), _));
                let (inner, ty) = integer_literal_as_int4(inner, DataType::Int64);
                if !(literal && ty == DataType::Int32) {
                    let expr = match alias {
                        Some(alias) => Expr::Alias(alias),
                        None => inner,
                    };
                    return Ok(Transformed::no(expr));
                }
                narrowed = true;
                let expr = match alias {
                    Some(alias) => Expr::Alias(datafusion::logical_expr::expr::Alias {
                        expr: Box::new(inner),
                        ..alias
                    }),
                    None => saved.restore(inner),
                };
                Ok(Transformed::yes(expr))
            })?;
            match narrowed {
                true => node.map_data(|n| n.recompute_schema()),
                false => Ok(node),
            }
        }
        LogicalPlan::Values(values) => narrow_values(values),
        // A UNION whose branches now agree on their columns' types takes those types;
        // one whose branches differ keeps its own, to which DataFusion's coercion casts
        // each branch (`SELECT 1 UNION SELECT 3000000000` stays a bigint).
        LogicalPlan::Union(union) => {
            let types = |p: &LogicalPlan| -> Vec<DataType> {
                p.schema()
                    .fields()
                    .iter()
                    .map(|f| f.data_type().clone())
                    .collect()
            };
            let first = union.inputs.first().map(|i| types(i));
            let agree = union.inputs.iter().all(|i| Some(types(i)) == first);
            match agree {
                true => Ok(Transformed::yes(LogicalPlan::Union(
                    datafusion::logical_expr::Union::try_new_with_loose_types(union.inputs)?,
                ))),
                false => Ok(Transformed::no(LogicalPlan::Union(union))),
            }
        }
        other => Ok(Transformed::no(other.recompute_schema()?)),
    })
    .map(|t| t.data)
}

/// Whether `op` compares its operands: `=`, `<>`, `<`, `<=`, `>`, `>=`, `IS [NOT]
/// DISTINCT FROM`, the operators whose operands the rewrites read as one type.
pub fn is_comparison(op: &Operator) -> bool {
    matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
            | Operator::IsDistinctFrom
            | Operator::IsNotDistinctFrom
    )
}

/// Rewrites, bottom up, every expression of every node of `plan` that computes
/// expressions over its input, with `rule` given the input's schema; output names stay.
pub fn rewrite_expressions(
    plan: LogicalPlan,
    rule: impl Fn(Expr, &DFSchema) -> Result<Transformed<Expr>>,
) -> Result<LogicalPlan> {
    plan.transform_up_with_subqueries(|node| {
        // A rewritten expression may have another type than what it replaced (`k + 1`
        // over an integer is an integer), so every node's schema is recomputed from
        // its inputs': once, after its own expressions changed, if it has any here.
        let input = match &node {
            LogicalPlan::Projection(_)
            | LogicalPlan::Aggregate(_)
            | LogicalPlan::Filter(_)
            | LogicalPlan::Sort(_)
            | LogicalPlan::Window(_) => node.inputs().first().map(|i| Arc::clone(i.schema())),
            _ => None,
        };
        let Some(schema) = input else {
            return Ok(Transformed::no(node.recompute_schema()?));
        };
        let names = NamePreserver::new(&node);
        node.map_expressions(|expr| {
            let saved = names.save(&expr);
            let rewritten = expr.transform_up(|e| rule(e, &schema))?;
            Ok(match rewritten.transformed {
                true => Transformed::yes(saved.restore(rewritten.data)),
                false => rewritten,
            })
        })?
        .map_data(|node| node.recompute_schema())
    })
    .map(|transformed| transformed.data)
}

/// The checked form of one expression, if it has one.
fn checked(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let integer = |e: &Expr| {
        e.get_type(schema)
            .ok()
            .filter(|t| integer_rank(t).is_some())
    };
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(op, Operator::Plus | Operator::Minus | Operator::Multiply) =>
        {
            let (Some(left_type), Some(right_type)) = (integer(&left), integer(&right)) else {
                return Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr {
                    left,
                    op,
                    right,
                })));
            };
            // DataFusion types every integer literal bigint; PostgreSQL types one that
            // fits as an integer, so `int4_column + 1` stays an integer.
            let (left, left_type) = integer_literal_as_int4(*left, left_type);
            let (right, right_type) = integer_literal_as_int4(*right, right_type);
            let (left, right) = (Box::new(left), Box::new(right));
            let wider = match integer_rank(&left_type) >= integer_rank(&right_type) {
                true => left_type.clone(),
                false => right_type.clone(),
            };
            let widen = |e: Expr, ty: &DataType| match *ty == wider {
                true => e,
                false => Expr::Cast(datafusion::logical_expr::Cast::new(
                    Box::new(e),
                    wider.clone(),
                )),
            };
            let function = checked_arithmetic(op, &wider);
            Ok(Transformed::yes(Expr::ScalarFunction(
                ScalarFunction::new_udf(
                    function,
                    vec![widen(*left, &left_type), widen(*right, &right_type)],
                ),
            )))
        }
        // PostgreSQL's sum(bigint) is a numeric, which does not overflow.
        Expr::AggregateFunction(mut aggregate)
            if aggregate.func.name() == "sum"
                && aggregate.params.args.len() == 1
                && aggregate.params.args[0].get_type(schema).ok() == Some(DataType::Int64) =>
        {
            let exact = Expr::Cast(datafusion::logical_expr::Cast::new(
                Box::new(aggregate.params.args.remove(0)),
                DataType::Decimal128(38, 0),
            ));
            aggregate.params.args.push(exact);
            Ok(Transformed::yes(Expr::AggregateFunction(aggregate)))
        }
        Expr::AggregateFunction(aggregate)
            if aggregate.func.name() == "avg"
                && !aggregate.params.distinct
                && aggregate.params.args.len() == 1
                && aggregate.params.args[0]
                    .get_type(schema)
                    .is_ok_and(|t| integer_rank(&t).is_some()) =>
        {
            let params = aggregate.params;
            Ok(Transformed::yes(Expr::AggregateFunction(
                AggregateFunction::new_udf(
                    Arc::clone(&super::pg_integer_avg::INTEGER_AVG),
                    params.args,
                    params.distinct,
                    params.filter,
                    params.order_by,
                    params.null_treatment,
                ),
            )))
        }
        Expr::AggregateFunction(aggregate)
            if aggregate.func.name() == "sum"
                && !aggregate.params.distinct
                && aggregate.params.args.len() == 1
                && aggregate.params.args[0]
                    .get_type(schema)
                    .is_ok_and(|t| t.is_signed_integer()) =>
        {
            let params = aggregate.params;
            Ok(Transformed::yes(Expr::AggregateFunction(
                AggregateFunction::new_udf(
                    Arc::clone(&CHECKED_SUM),
                    params.args,
                    params.distinct,
                    params.filter,
                    params.order_by,
                    params.null_treatment,
                ),
            )))
        }
        other => Ok(Transformed::no(other)),
    }
}

/// `+`, `-` or `*` of two integers of one type, failing on overflow. Named as
/// PostgreSQL names these functions internally (`int4pl`, `int8mul`).
#[derive(Debug, PartialEq, Eq, Hash)]
struct CheckedArithmetic {
    name: &'static str,
    op: Operator,
    ty: DataType,
    signature: Signature,
}

fn arithmetic(name: &'static str, op: Operator, ty: DataType) -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(CheckedArithmetic {
        name,
        op,
        signature: Signature::exact(vec![ty.clone(), ty.clone()], Volatility::Immutable),
        ty,
    }))
}

/// The checked function for `op` over two integers of type `ty`.
fn checked_arithmetic(op: Operator, ty: &DataType) -> Arc<ScalarUDF> {
    let functions: &[Arc<ScalarUDF>; 3] = match ty {
        DataType::Int16 => &INT2,
        DataType::Int32 => &INT4,
        _ => &INT8,
    };
    let index = match op {
        Operator::Plus => 0,
        Operator::Minus => 1,
        _ => 2,
    };
    Arc::clone(&functions[index])
}

static INT2: LazyLock<[Arc<ScalarUDF>; 3]> = LazyLock::new(|| {
    [
        arithmetic("int2pl", Operator::Plus, DataType::Int16),
        arithmetic("int2mi", Operator::Minus, DataType::Int16),
        arithmetic("int2mul", Operator::Multiply, DataType::Int16),
    ]
});
static INT4: LazyLock<[Arc<ScalarUDF>; 3]> = LazyLock::new(|| {
    [
        arithmetic("int4pl", Operator::Plus, DataType::Int32),
        arithmetic("int4mi", Operator::Minus, DataType::Int32),
        arithmetic("int4mul", Operator::Multiply, DataType::Int32),
    ]
});
static INT8: LazyLock<[Arc<ScalarUDF>; 3]> = LazyLock::new(|| {
    [
        arithmetic("int8pl", Operator::Plus, DataType::Int64),
        arithmetic("int8mi", Operator::Minus, DataType::Int64),
        arithmetic("int8mul", Operator::Multiply, DataType::Int64),
    ]
});

impl ScalarUDFImpl for CheckedArithmetic {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(self.ty.clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [left, right] = args.args.as_slice() else {
            return datafusion::common::internal_err!("{} takes two arguments", self.name);
        };
        // Arrow's checked kernels, which DataFusion's own operators use when asked to fail
        // on overflow; their error is reworded as PostgreSQL's.
        let kernel = match self.op {
            Operator::Plus => numeric::add,
            Operator::Minus => numeric::sub,
            _ => numeric::mul,
        };
        apply(left, right, kernel).map_err(|e| match e.find_root() {
            DataFusionError::ArrowError(error, _)
                if matches!(**error, ArrowError::ArithmeticOverflow(_)) =>
            {
                out_of_range_for(&self.ty)
            }
            _ => e,
        })
    }
}

/// `sum` of integers into a bigint, failing on overflow.
#[derive(Debug, PartialEq, Eq, Hash)]
struct CheckedSum {
    signature: Signature,
}

static CHECKED_SUM: LazyLock<Arc<AggregateUDF>> = LazyLock::new(|| {
    Arc::new(AggregateUDF::new_from_impl(CheckedSum {
        signature: Signature::uniform(
            1,
            vec![DataType::Int16, DataType::Int32, DataType::Int64],
            Volatility::Immutable,
        ),
    }))
});

impl AggregateUDFImpl for CheckedSum {
    /// The name users wrote and see (`sum(t.a)`).
    fn name(&self) -> &str {
        "sum"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(SumAccumulator::default()))
    }
}

#[derive(Debug, Default)]
struct SumAccumulator {
    sum: Option<i64>,
}

impl SumAccumulator {
    fn add(&mut self, values: &ArrayRef) -> Result<()> {
        let values = cast(values, &DataType::Int64)?;
        for value in values.as_primitive::<Int64Type>().iter().flatten() {
            let sum = self
                .sum
                .unwrap_or(0)
                .checked_add(value)
                .ok_or_else(out_of_range)?;
            self.sum = Some(sum);
        }
        Ok(())
    }
}

impl Accumulator for SumAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        values.iter().try_for_each(|v| self.add(v))
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        states.iter().try_for_each(|s| self.add(s))
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::Int64(self.sum)])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Int64(self.sum))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}
