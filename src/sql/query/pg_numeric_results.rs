//! Numerics computed as PostgreSQL computes them where DataFusion's decimals differ,
//! rewritten in the planned query before it is optimized:
//! - a decimal cast to an integer rounds half away from zero (Arrow truncates; Arrow
//!   rounds that way when it rescales a decimal to scale 0, so the cast goes through
//!   scale 0 first);
//! - `ceil`, `floor` and one-argument `trunc` of a decimal have scale 0 (DataFusion keeps
//!   the argument's scale, showing `-1.000` where PostgreSQL shows `-1`).

use super::pg_integer_overflow::rewrite_expressions;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::DFSchema;
use datafusion::error::Result;
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, LogicalPlan};

/// Rewrites every expression of `plan` (`rule`).
pub fn rewrite(plan: LogicalPlan) -> Result<LogicalPlan> {
    rewrite_expressions(plan, rule)
}

/// A decimal's scale, if `expr` is one with digits after the point.
fn fractional_decimal(expr: &Expr, schema: &DFSchema) -> Option<u8> {
    match expr.get_type(schema) {
        Ok(DataType::Decimal128(precision, scale)) if scale > 0 => Some(precision),
        _ => None,
    }
}

fn to_scale_zero(expr: Expr, precision: u8) -> Expr {
    Expr::Cast(Cast::new(
        Box::new(expr),
        DataType::Decimal128(precision, 0),
    ))
}

fn rule(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match expr {
        Expr::Cast(cast)
            if cast.field.data_type().is_integer()
                && fractional_decimal(&cast.expr, schema).is_some() =>
        {
            let whole = to_scale_zero(*cast.expr, 38);
            Ok(Transformed::yes(Expr::Cast(Cast::new_from_field(
                Box::new(whole),
                cast.field,
            ))))
        }
        Expr::ScalarFunction(call)
            if matches!(call.func.name(), "ceil" | "floor" | "trunc")
                && call.args.len() == 1
                && fractional_decimal(&call.args[0], schema).is_some() =>
        {
            let precision = fractional_decimal(&call.args[0], schema).unwrap_or(38);
            Ok(Transformed::yes(to_scale_zero(
                Expr::ScalarFunction(call),
                precision,
            )))
        }
        other => Ok(Transformed::no(other)),
    }
}
