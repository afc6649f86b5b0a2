//! The type of a parameter compared with `= ANY($n)`: PostgreSQL infers `$n` to be an
//! array of the other operand's type (`k = ANY($1)` over a bigint `k` is `int8[]`),
//! so a driver sends a list of that type. DataFusion leaves it untyped.

use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::ExprSchema;
use datafusion::logical_expr::expr::Placeholder;
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan};
use std::sync::Arc;

/// The array type of each untyped placeholder that is `array_has`'s array operand
/// (what `x = ANY($n)` plans to), by placeholder id (`$1`).
pub fn any_parameter_types(plan: &LogicalPlan) -> Vec<(String, DataType)> {
    let mut found = Vec::new();
    let _ = plan.apply_with_subqueries(|node| {
        let inputs = node.inputs();
        node.apply_expressions(|expr| {
            expr.apply(|expr| {
                if let Expr::ScalarFunction(call) = expr {
                    if let (true, [Expr::Placeholder(Placeholder { id, field: None }), element]) =
                        (call.name() == "array_has", call.args.as_slice())
                    {
                        let element_type = inputs
                            .iter()
                            .find_map(|input| type_in(element, input.schema().as_ref()));
                        if let Some(element_type) = element_type {
                            let list =
                                DataType::List(Arc::new(Field::new_list_field(element_type, true)));
                            found.push((id.clone(), list));
                        }
                    }
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    });
    found
}

fn type_in(expr: &Expr, schema: &dyn ExprSchema) -> Option<DataType> {
    expr.get_type(schema).ok().filter(|t| *t != DataType::Null)
}
