//! Refuses the `IN (SELECT ...)` shapes DataFusion would answer wrongly. It plans an
//! uncorrelated `x NOT IN (SELECT ...)` that is one of a filter's AND-ed conditions as a
//! NULL-aware anti join, which is right; but a correlated one, or one under OR (a mark
//! join) is not NULL-aware, so a NULL on either side makes rows appear that
//! PostgreSQL's three-valued NOT IN leaves out. A positive `IN` in a filter's AND/OR
//! tree is a semi or mark join and right, correlated or not.

use crate::sql::sql_types::{SqlError, SqlResult};
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::{BinaryExpr, Expr, LogicalPlan, Operator};

/// 0A000 if `plan` still holds a NOT IN subquery that is correlated or not one of a
/// filter's AND-ed conditions, or an IN subquery under NOT, or a correlated one outside
/// a filter's AND/OR tree: one that no subplan took over (one in a join's condition).
pub fn check(plan: &LogicalPlan) -> SqlResult<()> {
    let mut refused = false;
    let _ = plan.apply_with_subqueries(|node| {
        refused |= !answered_wrongly(node).is_empty();
        Ok(if refused {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    });
    match refused {
        true => Err(SqlError::unsupported(
            "this NOT IN (SELECT ...) is not supported here: in a JOIN's ON condition, only \
             one that is not correlated with the outer query and is AND-ed with the rest; \
             move it into WHERE",
        )),
        false => Ok(()),
    }
}

/// The IN subqueries among `node`'s expressions (not its inputs') that DataFusion
/// would answer wrongly.
pub fn answered_wrongly(node: &LogicalPlan) -> Vec<Expr> {
    let position = match node {
        LogicalPlan::Filter(_) => Position::Conjunct,
        _ => Position::Value,
    };
    let mut wrong = Vec::new();
    let _ = node.apply_expressions(|expr| {
        collect_wrong(expr, position, false, &mut wrong);
        Ok(TreeNodeRecursion::Continue)
    });
    wrong
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

/// Adds to `wrong` each IN subquery of `expr`, at `position` (`under_not`: beneath a
/// NOT), that DataFusion answers wrongly. A positive IN's mark join says false where
/// PostgreSQL says NULL (no match, a NULL in the subquery), which only a NOT above it
/// can tell apart, or a select list, where a correlated one is not planned.
fn collect_wrong(expr: &Expr, position: Position, under_not: bool, wrong: &mut Vec<Expr>) {
    match expr {
        Expr::InSubquery(in_subquery) => {
            let correlated = !in_subquery.subquery.outer_ref_columns.is_empty();
            let right = match in_subquery.negated {
                true => position == Position::Conjunct && !correlated && !under_not,
                false => !under_not && (position != Position::Value || !correlated),
            };
            if !right {
                wrong.push(expr.clone());
            }
            collect_wrong(&in_subquery.expr, Position::Value, under_not, wrong);
        }
        Expr::Not(inner) => collect_wrong(inner, Position::Value, true, wrong),
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
            collect_wrong(left, inner, under_not, wrong);
            collect_wrong(right, inner, under_not, wrong);
        }
        other => {
            let _ = other.apply_children(|child| {
                collect_wrong(child, Position::Value, under_not, wrong);
                Ok(TreeNodeRecursion::Continue)
            });
        }
    }
}
