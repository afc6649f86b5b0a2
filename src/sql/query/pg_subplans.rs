//! Subqueries DataFusion cannot turn into joins, or would answer wrongly, run as
//! PostgreSQL runs them: as a SubPlan, once for each distinct set of outer values.
//! DataFusion decorrelates a scalar subquery only when it is an aggregate correlated by
//! equality (`x.a = t.a`), plans EXISTS only in a filter, and its anti join for a
//! correlated NOT IN is not NULL-aware. Before DataFusion analyzes a plan, [`prepare`]
//! moves each such subquery out of the projection, filter, aggregate or sort holding it
//! into a [`SubPlanNode`] below, which adds the subquery's value as a column; an
//! optimizer rule run after DataFusion's own ([`SubPlans`]) does the same for any
//! subquery DataFusion left unplanned. The `SubPlanExec` that node becomes
//! (`subplan_exec.rs`) binds each row's outer values into the subquery and runs it.

use super::pg_in_subqueries;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, DFSchema, DFSchemaRef, Result};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{
    BinaryExpr, Expr, Extension, LogicalPlan, Operator, Projection, Subquery,
    UserDefinedLogicalNodeCore,
};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

/// What a subplan yields for a row of its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd)]
pub enum SubPlanKind {
    /// The subquery's one value: NULL for no row, 21000 for more than one.
    Scalar,
    /// Whether the subquery returns a row (`NOT EXISTS` when negated).
    Exists { negated: bool },
    /// Whether the subquery returns the row's `needle` (`NOT IN` when negated), with
    /// PostgreSQL's NULLs: NULL when nothing matches and the subquery returned a NULL,
    /// or the needle is NULL and the subquery returned a row.
    In { negated: bool },
}

/// One subquery run per row of its node's input.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SubPlan {
    /// The column it adds to its node's input.
    pub name: String,
    pub kind: SubPlanKind,
    /// The subquery, its outer references still unbound.
    pub query: Arc<LogicalPlan>,
    /// The input's columns the subquery refers to, bound to each row's values.
    pub outer: Vec<Column>,
    /// The type of the value it yields.
    pub data_type: DataType,
    /// For `IN`, the input column holding the value looked for.
    pub needle: Option<Column>,
}

/// Its input's rows with one column more for each subplan.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SubPlanNode {
    input: Arc<LogicalPlan>,
    subplans: Vec<SubPlan>,
    schema: DFSchemaRef,
}

impl SubPlanNode {
    fn try_new(input: Arc<LogicalPlan>, subplans: Vec<SubPlan>) -> Result<Self> {
        let added = subplans
            .iter()
            .map(|s| {
                let nullable = !matches!(s.kind, SubPlanKind::Exists { .. });
                Field::new(&s.name, s.data_type.clone(), nullable)
            })
            .collect();
        let added = DFSchema::from_unqualified_fields(added, Default::default())?;
        let schema = Arc::new(input.schema().join(&added)?);
        Ok(SubPlanNode {
            input,
            subplans,
            schema,
        })
    }

    pub fn subplans(&self) -> &[SubPlan] {
        &self.subplans
    }
}

// Plans are compared only to tell nodes apart; the schema follows from the rest.
impl PartialOrd for SubPlanNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        let names = |n: &SubPlanNode| {
            n.subplans
                .iter()
                .map(|s| s.name.clone())
                .collect::<Vec<_>>()
        };
        match self.input.partial_cmp(&other.input) {
            Some(Ordering::Equal) => names(self).partial_cmp(&names(other)),
            order => order,
        }
    }
}

impl UserDefinedLogicalNodeCore for SubPlanNode {
    fn name(&self) -> &str {
        "SubPlan"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        Vec::new()
    }

    // Conditions on the input's columns may go below: the node only adds columns.
    fn prevent_predicate_push_down_columns(&self) -> HashSet<String> {
        self.subplans.iter().map(|s| s.name.clone()).collect()
    }

    fn fmt_for_explain(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let outer = |s: &SubPlan| {
            s.outer
                .iter()
                .map(|c| c.flat_name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let described: Vec<String> = self
            .subplans
            .iter()
            .map(|s| format!("{} per ({})", s.name, outer(s)))
            .collect();
        write!(f, "SubPlan: {}", described.join("; "))
    }

    fn with_exprs_and_inputs(
        &self,
        _exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        let input = inputs
            .pop()
            .ok_or_else(|| DataFusionError::Internal("SubPlan takes one input".into()))?;
        SubPlanNode::try_new(Arc::new(input), self.subplans.clone())
    }

    // It keeps its input's rows one for one, so a LIMIT may go below it.
    fn supports_limit_pushdown(&self) -> bool {
        true
    }
}

/// The optimizer rule that moves the subqueries DataFusion left in projections and
/// filters into [`SubPlanNode`]s.
#[derive(Debug, Default)]
pub struct SubPlans;

impl OptimizerRule for SubPlans {
    fn name(&self) -> &str {
        "pgwide_subplans"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let next_name = || config.alias_generator().next("__pgwide_subplan");
        let any_subquery = |e: &Expr| matches!(e, Expr::ScalarSubquery(_) | Expr::Exists(_));
        plan.transform_up(|node| match node {
            node if holds_own(&node, &any_subquery) => {
                over_subplans(node, &next_name, &any_subquery).map(Transformed::yes)
            }
            other => Ok(Transformed::no(other)),
        })
    }
}

/// Whether `node` is one a subplan node can go below (a projection, filter, aggregate
/// or sort) and holds a `chosen` subquery.
fn holds_own(node: &LogicalPlan, chosen: ChooseSubPlan) -> bool {
    let fits = matches!(
        node,
        LogicalPlan::Projection(_)
            | LogicalPlan::Filter(_)
            | LogicalPlan::Aggregate(_)
            | LogicalPlan::Sort(_)
    );
    fits && holds(node, chosen)
}

/// Whether one of `node`'s own expressions holds a `chosen` subquery.
fn holds(node: &LogicalPlan, chosen: ChooseSubPlan) -> bool {
    node.apply_expressions(|expr| {
        Ok(match expr.exists(|e| Ok(chosen(e)))? {
            true => TreeNodeRecursion::Stop,
            false => TreeNodeRecursion::Continue,
        })
    })
    .is_ok_and(|r| r == TreeNodeRecursion::Stop)
}

/// `plan` ready for DataFusion's analyzer: the subqueries it would refuse or answer
/// wrongly moved into subplans ([`eager`]), and 0A000 for one no subplan can take.
pub fn prepare(plan: LogicalPlan) -> Result<LogicalPlan> {
    let plan = eager(plan)?;
    pg_in_subqueries::check(&plan).map_err(|e| DataFusionError::External(Box::new(e)))?;
    Ok(plan)
}

/// `plan` (just planned from SQL, or a subplan's subquery with its outer values bound;
/// not yet analyzed) with the subqueries DataFusion would refuse or could not turn into
/// a join moved into subplan nodes: a correlated scalar subquery unless
/// [`decorrelates`], and an `EXISTS` in a select list. Nested subqueries of those stay
/// as they are, to be seen to when their subplan runs.
fn eager(plan: LogicalPlan) -> Result<LogicalPlan> {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    let next_name = || {
        let n = NEXT.fetch_add(1, AtomicOrdering::Relaxed);
        format!("__pgwide_eager_subplan_{n}")
    };
    let elsewhere = |e: &Expr| {
        matches!(e, Expr::Exists(_)) || matches!(e, Expr::ScalarSubquery(s) if !decorrelates(s))
    };
    let in_filter = |e: &Expr| matches!(e, Expr::ScalarSubquery(s) if !decorrelates(s));
    let any_subquery = |e: &Expr| {
        matches!(
            e,
            Expr::ScalarSubquery(_) | Expr::Exists(_) | Expr::InSubquery(_)
        )
    };
    plan.transform_up(|node| {
        // Most nodes hold no subquery: left as they are, not rebuilt.
        if !holds(&node, &any_subquery) {
            return Ok(Transformed::no(node));
        }
        // DataFusion joins an EXISTS in a filter, correlated as it may be, but nowhere
        // else; and it answers some IN subqueries wrongly.
        let wrong = pg_in_subqueries::answered_wrongly(&node);
        let in_filter = |e: &Expr| in_filter(e) || wrong.contains(e);
        let elsewhere = |e: &Expr| elsewhere(e) || wrong.contains(e);
        let chosen: ChooseSubPlan = match node {
            LogicalPlan::Filter(_) => &in_filter,
            _ => &elsewhere,
        };
        // The subqueries left to DataFusion may hold ones it would refuse.
        let node = node
            .map_expressions(|expr| {
                expr.transform_down(|e| match e {
                    e if chosen(&e) => Ok(Transformed::new(e, false, TreeNodeRecursion::Jump)),
                    e => map_subquery(e, eager_within),
                })
            })?
            .data;
        match holds_own(&node, chosen) {
            true => over_subplans(node, &next_name, chosen).map(Transformed::yes),
            false => Ok(Transformed::no(node)),
        }
    })
    .map(|t| t.data)
}

/// `expr` with `f` applied to its subquery if it is a scalar, EXISTS or IN subquery.
pub fn map_subquery(
    expr: Expr,
    f: impl FnOnce(Subquery) -> Result<Subquery>,
) -> Result<Transformed<Expr>> {
    Ok(match expr {
        Expr::ScalarSubquery(s) => Transformed::yes(Expr::ScalarSubquery(f(s)?)),
        Expr::Exists(mut x) => {
            x.subquery = f(x.subquery)?;
            Transformed::yes(Expr::Exists(x))
        }
        Expr::InSubquery(mut x) => {
            x.subquery = f(x.subquery)?;
            Transformed::yes(Expr::InSubquery(x))
        }
        other => Transformed::no(other),
    })
}

fn eager_within(mut subquery: Subquery) -> Result<Subquery> {
    subquery.subquery = Arc::new(eager(Arc::unwrap_or_clone(subquery.subquery))?);
    Ok(subquery)
}

/// Whether DataFusion turns a scalar subquery into a join: it is not correlated, or it
/// is an aggregate (or limited to one row) whose every outer reference is one side of
/// an equality AND-ed into a filter of its own, and it holds no nested subquery.
fn decorrelates(subquery: &Subquery) -> bool {
    let mut outer_refs = 0usize;
    let mut nested = false;
    let _ = subquery.subquery.apply(|node| {
        node.apply_expressions(|expr| {
            expr.apply(|e| {
                match e {
                    Expr::OuterReferenceColumn(..) => outer_refs += 1,
                    Expr::ScalarSubquery(_) | Expr::Exists(_) | Expr::InSubquery(_) => {
                        nested = true
                    }
                    _ => {}
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    });
    if outer_refs == 0 && !nested {
        return true;
    }
    if nested {
        return false;
    }
    let mut equalities = 0usize;
    let _ = subquery.subquery.apply(|node| {
        if let LogicalPlan::Filter(f) = node {
            equalities += split_conjunction(&f.predicate)
                .into_iter()
                .filter(|c| is_outer_equality(c))
                .count();
        }
        Ok(TreeNodeRecursion::Continue)
    });
    equalities == outer_refs
        && (aggregated(subquery) || subquery.subquery.max_rows().is_some_and(|n| n <= 1))
}

/// `inner = outer` (either way round) with one outer reference on one side.
fn is_outer_equality(conjunct: &Expr) -> bool {
    let Expr::BinaryExpr(BinaryExpr {
        left,
        op: Operator::Eq,
        right,
    }) = conjunct
    else {
        return false;
    };
    let outer = |e: &Expr| {
        matches!(
            e.clone().unalias_nested().data,
            Expr::OuterReferenceColumn(..)
        ) || matches!(e, Expr::Cast(c) if matches!(*c.expr, Expr::OuterReferenceColumn(..)))
    };
    let refs = |e: &Expr| {
        e.exists(|x| Ok(matches!(x, Expr::OuterReferenceColumn(..))))
            .unwrap_or(true)
    };
    (outer(left) && !refs(right)) || (outer(right) && !refs(left))
}

/// The subquery's result is an aggregate's (under projections, aliases and a HAVING).
fn aggregated(subquery: &Subquery) -> bool {
    let mut inner = subquery.subquery.as_ref();
    loop {
        match inner {
            LogicalPlan::Projection(p) => inner = &p.input,
            LogicalPlan::SubqueryAlias(a) => inner = &a.input,
            _ => break,
        }
    }
    matches!(inner, LogicalPlan::Aggregate(_))
        || matches!(inner, LogicalPlan::Filter(f) if matches!(f.input.as_ref(), LogicalPlan::Aggregate(_)))
}

/// Names a new subplan's column.
type NameSubPlan<'a> = &'a dyn Fn() -> String;
/// Tells which subquery expressions become subplans.
type ChooseSubPlan<'a> = &'a dyn Fn(&Expr) -> bool;

/// The subplans taken out of a node's expressions, and the values their `IN`s look for,
/// which a projection below the subplan node computes.
#[derive(Default)]
struct Taken {
    subplans: Vec<SubPlan>,
    needles: Vec<Expr>,
}

/// `expr` with each scalar, EXISTS or IN subquery `chosen` replaced by the column of a
/// new subplan over `input`, added to `taken`.
fn take_subplans(
    expr: Expr,
    input: &LogicalPlan,
    (next_name, chosen): (NameSubPlan, ChooseSubPlan),
    taken: &mut Taken,
) -> Result<Transformed<Expr>> {
    expr.transform_up(|e| {
        if !chosen(&e) {
            return Ok(Transformed::no(e));
        }
        let mut needle = None;
        let (subquery, kind, data_type) = match e {
            // (One whose needle held a chosen subquery has changed, as its children are
            // seen to first, and is no longer chosen: its needle, computed below the
            // subplan node, could not refer to that subquery's column.)
            Expr::InSubquery(x) => {
                let name = format!("{}_needle", next_name());
                taken.needles.push(x.expr.alias(&name));
                needle = Some(Column::new_unqualified(name));
                (
                    x.subquery,
                    SubPlanKind::In { negated: x.negated },
                    DataType::Boolean,
                )
            }
            Expr::ScalarSubquery(subquery) => {
                let data_type = match subquery.subquery.schema().fields().first() {
                    Some(field) => field.data_type().clone(),
                    None => return Ok(Transformed::no(Expr::ScalarSubquery(subquery))),
                };
                (subquery, SubPlanKind::Scalar, data_type)
            }
            Expr::Exists(exists) => (
                exists.subquery,
                SubPlanKind::Exists {
                    negated: exists.negated,
                },
                DataType::Boolean,
            ),
            other => return Ok(Transformed::no(other)),
        };
        let name = next_name();
        taken.subplans.push(SubPlan {
            name: name.clone(),
            kind,
            outer: outer_columns(&subquery, input.schema()),
            query: subquery.subquery,
            data_type,
            needle,
        });
        Ok(Transformed::yes(Expr::Column(Column::new_unqualified(
            name,
        ))))
    })
}

/// The columns of `input` that `subquery` refers to: every outer reference at its own
/// level, and those of its nested subqueries that name a column of `input`. (The
/// others refer to the nested subqueries' own enclosing queries.)
fn outer_columns(subquery: &Subquery, input: &DFSchema) -> Vec<Column> {
    let mut columns: Vec<Column> = Vec::new();
    let mut note = |column: &Column| {
        if !columns.contains(column) {
            columns.push(column.clone());
        }
    };
    let _ = subquery.subquery.apply(|node| {
        node.apply_expressions(|expr| {
            expr.apply(|e| {
                if let Expr::OuterReferenceColumn(_, column) = e {
                    note(column);
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    });
    let _ = subquery.subquery.apply_with_subqueries(|node| {
        node.apply_expressions(|expr| {
            expr.apply(|e| {
                if let Expr::OuterReferenceColumn(_, column) = e {
                    if input.has_column(column) {
                        note(column);
                    }
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    });
    columns
}

/// `node` (a projection, filter, aggregate or sort) over a subplan node that computes
/// its `chosen` subqueries, under a projection that gives back `node`'s schema: the
/// same names, without the subplans' columns.
fn over_subplans(
    node: LogicalPlan,
    next_name: NameSubPlan,
    chosen: ChooseSubPlan,
) -> Result<LogicalPlan> {
    let old_schema = Arc::clone(node.schema());
    let Some(input) = node.inputs().first().map(|input| (*input).clone()) else {
        return Ok(node);
    };
    let mut taken = Taken::default();
    let exprs = node
        .expressions()
        .into_iter()
        .map(|e| take_subplans(e, &input, (next_name, chosen), &mut taken).map(|t| t.data))
        .collect::<Result<Vec<_>>>()?;
    let input = match taken.needles.is_empty() {
        true => input,
        false => {
            let mut columns: Vec<Expr> = input
                .schema()
                .columns()
                .into_iter()
                .map(Expr::Column)
                .collect();
            columns.append(&mut taken.needles);
            LogicalPlan::Projection(Projection::try_new(columns, Arc::new(input))?)
        }
    };
    let below = LogicalPlan::Extension(Extension {
        node: Arc::new(SubPlanNode::try_new(Arc::new(input), taken.subplans)?),
    });
    let node = node.with_new_exprs(exprs, vec![below])?;
    let restored = old_schema
        .iter()
        .zip(node.schema().columns())
        .map(|((qualifier, field), column)| {
            Expr::Column(column).alias_qualified(qualifier.cloned(), field.name())
        })
        .collect();
    Ok(LogicalPlan::Projection(Projection::try_new(
        restored,
        Arc::new(node),
    )?))
}
