//! Planning `json` and `jsonb` as PostgreSQL types over DataFusion's strings:
//! - a cast to either (`x::jsonb`, `JSONB '{}'`) becomes `pg_jsonb_in(x)`, which reads
//!   the text as PostgreSQL does (DataFusion's SQL has no JSON type);
//! - `->`, `->>`, `#>`, `#>>`, `?`, `?|`, `?&`, `@>`, `<@`, jsonb `||`, `-` and `#-`
//!   become the functions of `pg_json_functions` (an `ExprPlanner`, which sees the
//!   operands' types);
//! - after DataFusion's type coercion (an analyzer rule): a string it coerces to JSON
//!   (`j = '{"a": 1}'`, `coalesce(j, '{}')`) is read as JSON too, not taken as it is;
//!   jsonb `=` and `<>` compare by value (`1.0` equals `1`); and what pgwide cannot
//!   do with JSON yet is refused (0A000) rather than done on the text: ordering
//!   (`<`, ORDER BY, min/max), grouping and DISTINCT by a JSON value, and `IN`
//!   lists of them. A `json` value has no equality at all (42883), as in PostgreSQL.

use super::pg_integer_overflow::{is_comparison, rewrite_expressions};
use super::pg_json_functions::{self as functions, json_kind};
use crate::sql::pg_json::JsonKind;
use crate::sql::sql_types::SqlError;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::DFSchema;
use datafusion::config::ConfigOptions;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::{AggregateFunction, ScalarFunction};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};
use datafusion::optimizer::AnalyzerRule;
use sqlparser::ast::{self, BinaryOperator, Query};
use std::ops::ControlFlow;

/// Makes every cast to `json` or `jsonb` in `query` a call of `pg_json_in` or
/// `pg_jsonb_in`, and casts `string_agg` to text: DataFusion's gives Arrow's LargeUtf8,
/// which here means jsonb.
pub fn casts(query: &mut Query) {
    let _ = ast::visit_expressions_mut(query, |expr| {
        if let ast::Expr::Function(f) = expr {
            if f.name.to_string().eq_ignore_ascii_case("string_agg") {
                *expr = ast::Expr::Cast {
                    kind: ast::CastKind::DoubleColon,
                    expr: Box::new(expr.clone()),
                    data_type: ast::DataType::Text,
                    array: false,
                    format: None,
                };
                return ControlFlow::<()>::Continue(());
            }
        }
        let function = |ty: &ast::DataType| match ty {
            ast::DataType::JSON => Some(functions::JSON_IN),
            ast::DataType::JSONB => Some(functions::JSONB_IN),
            _ => None,
        };
        let replaced = match expr {
            ast::Expr::Cast {
                expr: inner,
                data_type,
                ..
            } => function(data_type).map(|f| super::pg_compat::call(f, (**inner).clone())),
            ast::Expr::TypedString(typed) => function(&typed.data_type)
                .map(|f| super::pg_compat::call(f, ast::Expr::Value(typed.value.clone()))),
            _ => None,
        };
        if let Some(replaced) = replaced {
            *expr = replaced;
        }
        ControlFlow::<()>::Continue(())
    });
}

fn refused(message: String) -> DataFusionError {
    DataFusionError::External(Box::new(SqlError::unsupported(message)))
}

fn no_operator(op: &str, left: &str, right: &str) -> DataFusionError {
    DataFusionError::External(Box::new(SqlError::undefined_function(format!(
        "operator does not exist: {left} {op} {right}"
    ))))
}

fn call(name: &str, args: Vec<Expr>) -> Result<Expr> {
    let udf = functions::function(name)
        .ok_or_else(|| DataFusionError::Internal(format!("{name} is not registered")))?;
    Ok(Expr::ScalarFunction(ScalarFunction::new_udf(udf, args)))
}

/// The JSON operators, planned as calls of `pg_json_functions` when an operand is JSON.
#[derive(Debug)]
pub struct JsonOperators;

impl ExprPlanner for JsonOperators {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        use BinaryOperator as B;
        let navigation = match expr.op {
            B::Arrow => Some(functions::GET),
            B::LongArrow => Some(functions::GET_TEXT),
            B::HashArrow => Some(functions::PATH),
            B::HashLongArrow => Some(functions::PATH_TEXT),
            B::Question => Some(functions::EXISTS),
            B::AtArrow | B::ArrowAt | B::StringConcat | B::Minus => None,
            // jsonb's only: json has none of them (42883).
            B::QuestionAnd | B::QuestionPipe | B::HashMinus => {
                let function = match expr.op {
                    B::QuestionAnd => functions::EXISTS_ALL,
                    B::QuestionPipe => functions::EXISTS_ANY,
                    _ => functions::DELETE_PATH,
                };
                return match json_kind(&expr.left.get_type(schema)?) {
                    Some(JsonKind::Jsonb) => Ok(PlannerResult::Planned(call(
                        function,
                        vec![expr.left, expr.right],
                    )?)),
                    Some(JsonKind::Json) => {
                        Err(no_operator(&expr.op.to_string(), "json", "text[]"))
                    }
                    None => Ok(PlannerResult::Original(expr)),
                };
            }
            _ => return Ok(PlannerResult::Original(expr)),
        };
        let left_type = expr.left.get_type(schema)?;
        let right_type = expr.right.get_type(schema)?;
        let (left, right) = (json_kind(&left_type), json_kind(&right_type));
        let RawBinaryExpr {
            op,
            left: l,
            right: r,
        } = expr;
        let planned = match (op.clone(), navigation, left, right) {
            (_, Some(function), Some(_), _) => call(function, vec![l, r])?,
            (_, Some(_), None, _)
                if matches!(left_type, datafusion::arrow::datatypes::DataType::Utf8) =>
            {
                // A quoted literal could be json or jsonb: PostgreSQL cannot choose.
                if matches!(l, Expr::Literal(..)) {
                    return Err(DataFusionError::External(Box::new(SqlError::new(
                        crate::sqlstate::SqlState::AmbiguousFunction,
                        format!("operator is not unique: unknown {op} unknown"),
                    ))));
                }
                return Err(no_operator(&op.to_string(), "text", "unknown"));
            }
            (B::AtArrow, _, Some(_), _) | (B::AtArrow, _, _, Some(_)) => {
                call(functions::CONTAINS, vec![l, r])?
            }
            (B::ArrowAt, _, Some(_), _) | (B::ArrowAt, _, _, Some(_)) => {
                call(functions::CONTAINS, vec![r, l])?
            }
            (B::StringConcat, _, Some(JsonKind::Jsonb), _)
            | (B::StringConcat, _, _, Some(JsonKind::Jsonb)) => {
                call(functions::CONCAT, vec![l, r])?
            }
            (B::Minus, _, Some(JsonKind::Jsonb), _) => call(functions::DELETE, vec![l, r])?,
            (op, _, _, _) => {
                return Ok(PlannerResult::Original(RawBinaryExpr {
                    op,
                    left: l,
                    right: r,
                }))
            }
        };
        Ok(PlannerResult::Planned(planned))
    }
}

/// After type coercion: strings coerced to JSON are read as JSON, jsonb equality is by
/// value, and what would compare JSON as text is refused (see the module's note).
#[derive(Debug)]
pub struct JsonComparisons;

impl AnalyzerRule for JsonComparisons {
    /// Every plan is rewritten, as `pg_integer_overflow` rewrites every plan: a JSON
    /// value need not show in any node's schema (`SELECT '1'::jsonb = '1.0'`).
    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        let plan = rewrite_expressions(plan, comparison)?;
        let plan = join_comparisons(plan)?;
        refuse_ordering(&plan)?;
        Ok(plan)
    }

    fn name(&self) -> &str {
        "pgwide_json_comparisons"
    }
}

fn comparison(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let kind_of = |e: &Expr| e.get_type(schema).map(|t| json_kind(&t));
    match expr {
        Expr::Cast(cast) => match (json_kind(cast.field.data_type()), kind_of(&cast.expr)?) {
            (Some(to), from) if from != Some(to) => Ok(Transformed::yes(call(
                match to {
                    JsonKind::Json => functions::JSON_IN,
                    JsonKind::Jsonb => functions::JSONB_IN,
                },
                vec![*cast.expr],
            )?)),
            _ => Ok(Transformed::no(Expr::Cast(cast))),
        },
        Expr::TryCast(cast) if json_kind(cast.field.data_type()).is_some() => Err(refused(
            format!("TRY_CAST to {} is not supported", cast.field.data_type()),
        )),
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let kinds = (kind_of(&left)?, kind_of(&right)?);
            let json = match kinds {
                (Some(k), _) | (_, Some(k)) => k,
                _ => {
                    return Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr {
                        left,
                        op,
                        right,
                    })))
                }
            };
            let comparing = is_comparison(&op);
            match (json, op) {
                (JsonKind::Json, _) if comparing => {
                    Err(no_operator(&op.to_string(), "json", "json"))
                }
                (JsonKind::Jsonb, Operator::Eq) => Ok(Transformed::yes(call(
                    functions::EQUAL,
                    vec![*left, *right],
                )?)),
                (JsonKind::Jsonb, Operator::NotEq) => Ok(Transformed::yes(Expr::Not(Box::new(
                    call(functions::EQUAL, vec![*left, *right])?,
                )))),
                (JsonKind::Jsonb, op) if comparing => Err(refused(format!(
                    "comparing jsonb values with {op} is not supported yet (= and <> are)"
                ))),
                (_, op) => Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr {
                    left,
                    op,
                    right,
                }))),
            }
        }
        Expr::InList(list) if kind_of(&list.expr)?.is_some() => Err(refused(
            "IN with a list of JSON values is not supported yet: compare with = and OR".into(),
        )),
        other => Ok(Transformed::no(other)),
    }
}

/// `comparison` over the conditions of joins, which the SQL planner leaves in the
/// join's filter, for the optimizer to make equijoin keys of after this rule.
fn join_comparisons(plan: LogicalPlan) -> Result<LogicalPlan> {
    plan.transform_up_with_subqueries(|node| match node {
        LogicalPlan::Join(_) => {
            let schema = node.schema().clone();
            node.map_expressions(|e| e.transform_up(|e| comparison(e, &schema)))
        }
        other => Ok(Transformed::no(other)),
    })
    .map(|t| t.data)
}

/// Refuses ordering, grouping, DISTINCT and joins by a JSON value, and min/max of one:
/// pgwide has no jsonb order yet, and json has none in PostgreSQL.
fn refuse_ordering(plan: &LogicalPlan) -> Result<()> {
    plan.apply_with_subqueries(|node| {
        let input = node.inputs().first().map(|i| i.schema().clone());
        let json_in = |exprs: &mut dyn Iterator<Item = &Expr>| -> Result<bool> {
            let Some(schema) = &input else {
                return Ok(false);
            };
            for e in exprs {
                if json_kind(&e.get_type(schema)?).is_some() {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        let what = match node {
            LogicalPlan::Sort(sort) if json_in(&mut sort.expr.iter().map(|s| &s.expr))? => {
                Some("ORDER BY")
            }
            LogicalPlan::Aggregate(aggregate) => {
                if json_in(&mut aggregate.group_expr.iter())? {
                    Some("GROUP BY")
                } else {
                    let mut ordered = aggregate.aggr_expr.iter().filter(|e| {
                        matches!(e, Expr::AggregateFunction(AggregateFunction { func, params })
                            if matches!(func.name(), "min" | "max")
                                || params.distinct)
                    });
                    let mut args = ordered.by_ref().flat_map(|e| match e {
                        Expr::AggregateFunction(f) => f.params.args.iter().collect::<Vec<_>>(),
                        _ => Vec::new(),
                    });
                    json_in(&mut args)?.then_some("min, max or DISTINCT in an aggregate")
                }
            }
            LogicalPlan::Distinct(_)
                if node
                    .schema()
                    .fields()
                    .iter()
                    .any(|f| json_kind(f.data_type()).is_some()) =>
            {
                Some("DISTINCT or UNION")
            }
            LogicalPlan::Join(join)
                if join.on.iter().any(|(l, _)| {
                    l.get_type(join.left.schema())
                        .ok()
                        .and_then(|t| json_kind(&t))
                        .is_some()
                }) =>
            {
                Some("a join")
            }
            _ => None,
        };
        match what {
            Some(what) => Err(refused(format!(
                "{what} by a json or jsonb value is not supported yet"
            ))),
            None => Ok(TreeNodeRecursion::Continue),
        }
    })?;
    Ok(())
}
