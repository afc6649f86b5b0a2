//! The `name` type of catalog identifiers in results. The catalogs' identifier columns
//! (`relname`, `attname`, `information_schema`'s `table_name`, ...) are Arrow string
//! views, a string type nothing else is planned as (SQL's `text` and `varchar` are
//! planned as plain strings), so a result column is described as `name` where it
//! comes from one, through projection, CASE, COALESCE, min/max and `array_agg`
//! (`name[]`, which node-postgres leaves a string and Sequelize splits itself).
//!
//! PostgreSQL's string functions and `||` return `text` even over a `name`
//! (`upper(relname)` is `text`), while DataFusion's keep the string view, so each such
//! call is cast to a plain string once planned.

use super::pg_integer_overflow::rewrite_expressions;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::DFSchema;
use datafusion::error::Result;
use datafusion::logical_expr::{BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};

/// Makes every string function's and `||`'s result over a `name` a `text`.
pub fn rewrite(plan: LogicalPlan) -> Result<LogicalPlan> {
    rewrite_expressions(plan, text_result)
}

/// Functions whose result is their argument's type in PostgreSQL, `name` included.
const KEEPS_TYPE: &[&str] = &["coalesce", "nullif", "greatest", "least"];

fn text_result(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let computes_text = match &expr {
        Expr::ScalarFunction(f) => !KEEPS_TYPE.contains(&f.name()),
        Expr::BinaryExpr(BinaryExpr {
            op: Operator::StringConcat,
            ..
        }) => true,
        _ => false,
    };
    if computes_text && expr.get_type(schema)? == DataType::Utf8View {
        return Ok(Transformed::yes(expr.cast_to(&DataType::Utf8, schema)?));
    }
    Ok(Transformed::no(expr))
}
