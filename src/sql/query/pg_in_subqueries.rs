//! Refuses the `IN (SELECT ...)` shapes DataFusion would answer wrongly. It plans an
//! uncorrelated `x NOT IN (SELECT ...)` that is one of a filter's AND-ed conditions as a
//! NULL-aware anti join, which is right; but a correlated one, or one under OR (a mark
//! join) is not NULL-aware, so a NULL on either side makes rows appear that
//! PostgreSQL's three-valued NOT IN leaves out. A positive `IN` in a filter's AND/OR
//! tree is a semi or mark join and right, correlated or not.

use crate::sql::sql_types::{SqlError, SqlResult};
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::{BinaryExpr, Expr, LogicalPlan, Operator};

/// 0A000 if `plan` holds a NOT IN subquery that is correlated or not one of a filter's
/// AND-ed conditions, or an IN subquery under NOT, or a correlated one outside a
/// filter's AND/OR tree.
pub fn check(plan: &LogicalPlan) -> SqlResult<()> {
    let mut refused = false;
    let _ = plan.apply_with_subqueries(|node| {
        let filter = matches!(node, LogicalPlan::Filter(_));
        let _ = node.apply_expressions(|expr| {
            let position = match filter {
                true => Position::Conjunct,
                false => Position::Value,
            };
            refused |= !allowed(expr, position, false);
            Ok(if refused {
                TreeNodeRecursion::Stop
            } else {
                TreeNodeRecursion::Continue
            })
        });
        Ok(if refused {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    });
    match refused {
        true => Err(SqlError::unsupported(
            "this NOT IN (SELECT ...) is not supported: only one that is not correlated with \
             the outer query and is AND-ed with the rest of WHERE; write NOT EXISTS (SELECT \
             ... WHERE <column> = <value>) instead, minding NULLs",
        )),
        false => Ok(()),
    }
}

/// Where an expression is, from a filter's predicate down.
#[derive(Clone, Copy, PartialEq)]
enum Position {
    /// Reached through AND only.
    Conjunct,
    /// Reached through AND and OR.
    Disjunct,
    /// Anywhere else: under NOT, as an operand, in a select list.
    Value,
}

/// Whether every IN subquery of `expr`, at `position` (`under_not`: beneath a NOT), is
/// one DataFusion answers right. A positive IN's mark join says false where PostgreSQL
/// says NULL (no match, a NULL in the subquery), which only a NOT above it can tell
/// apart, or a select list, where a correlated one is not planned.
fn allowed(expr: &Expr, position: Position, under_not: bool) -> bool {
    match expr {
        Expr::InSubquery(in_subquery) => {
            let correlated = !in_subquery.subquery.outer_ref_columns.is_empty();
            let right = match in_subquery.negated {
                true => position == Position::Conjunct && !correlated && !under_not,
                false => !under_not && (position != Position::Value || !correlated),
            };
            right && allowed(&in_subquery.expr, Position::Value, under_not)
        }
        Expr::Not(inner) => allowed(inner, Position::Value, true),
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: op @ (Operator::And | Operator::Or),
            right,
        }) => {
            let inner = match (op, position) {
                (Operator::And, Position::Conjunct) => Position::Conjunct,
                (_, Position::Value) => Position::Value,
                _ => Position::Disjunct,
            };
            allowed(left, inner, under_not) && allowed(right, inner, under_not)
        }
        other => {
            let mut ok = true;
            let _ = other.apply_children(|child| {
                ok &= allowed(child, Position::Value, under_not);
                Ok(if ok {
                    TreeNodeRecursion::Continue
                } else {
                    TreeNodeRecursion::Stop
                })
            });
            ok
        }
    }
}
