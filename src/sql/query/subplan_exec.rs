//! Planning and running a [`SubPlanNode`]: for each input row, the
//! values of its outer columns are bound into the subquery as constants and the
//! subquery runs, as PostgreSQL runs a correlated SubPlan. Rows with the same outer
//! values share one run: the results are kept for the statement, so a subquery
//! correlated on a column with few distinct values runs few times. The session's
//! query planner is DataFusion's with this module's extension planner added.

use super::pg_subplans::{map_subquery, SubPlan, SubPlanKind, SubPlanNode};
use crate::sql::sql_types::SqlError;
use crate::sqlstate::SqlState;
use async_trait::async_trait;
use datafusion::arrow::array::{new_empty_array, ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, DFSchema, ScalarValue};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::session_state::SessionState;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::{lit, Expr, LogicalPlan, LogicalPlanBuilder};
use datafusion::logical_expr::{UserDefinedLogicalNode, UserDefinedLogicalNodeCore};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use datafusion::physical_planner::{DefaultPhysicalPlanner, ExtensionPlanner, PhysicalPlanner};
use futures::StreamExt;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// A subplan with its outer columns found in the input.
#[derive(Debug)]
struct BoundSubPlan {
    subplan: SubPlan,
    /// The index in the input of each of `subplan.outer`.
    outer_indices: Vec<usize>,
    /// For an IN, the index and type of the value it looks for.
    needle_index: Option<usize>,
    needle_type: DataType,
}

/// The physical form of a subplan node.
#[derive(Debug)]
pub struct SubPlanExec {
    input: Arc<dyn ExecutionPlan>,
    subplans: Arc<Vec<BoundSubPlan>>,
    schema: SchemaRef,
    /// The session the subqueries are planned and run in: the statement's, with its
    /// snapshot of the data.
    state: SessionState,
    properties: Arc<PlanProperties>,
}

impl SubPlanExec {
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        input_schema: &DFSchema,
        subplans: &[SubPlan],
        schema: SchemaRef,
        state: SessionState,
    ) -> Result<Self> {
        let subplans = subplans
            .iter()
            .map(|subplan| {
                let outer_indices = subplan
                    .outer
                    .iter()
                    .map(|column| outer_index(input_schema, column))
                    .collect::<Result<Vec<_>>>()?;
                let needle_index = match &subplan.needle {
                    Some(needle) => Some(input_schema.index_of_column(needle)?),
                    None => None,
                };
                let needle_type = match needle_index {
                    Some(i) => input_schema.field(i).data_type().clone(),
                    None => DataType::Null,
                };
                Ok(BoundSubPlan {
                    subplan: subplan.clone(),
                    outer_indices,
                    needle_index,
                    needle_type,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let properties = properties(&input, &schema);
        Ok(SubPlanExec {
            input,
            subplans: Arc::new(subplans),
            schema,
            state,
            properties,
        })
    }
}

/// The input's partitioning and pace; no ordering is promised, so a parent that needs
/// one sorts.
fn properties(input: &Arc<dyn ExecutionPlan>, schema: &SchemaRef) -> Arc<PlanProperties> {
    Arc::new(PlanProperties::new(
        EquivalenceProperties::new(Arc::clone(schema)),
        input.output_partitioning().clone(),
        input.pipeline_behavior(),
        input.boundedness(),
    ))
}

/// Where `column` is in the input. DataFusion may have moved the subquery's enclosing
/// filter below a table alias, so a reference to `x.a` can reach an input whose column
/// is `t.a`: a reference at the subquery's own level is always to the input, so a
/// column of that name, if only one, is the one.
fn outer_index(input: &DFSchema, column: &Column) -> Result<usize> {
    if let Ok(index) = input.index_of_column(column) {
        return Ok(index);
    }
    let mut named = input
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, field)| field.name() == &column.name);
    match (named.next(), named.next()) {
        (Some((index, _)), None) => Ok(index),
        _ => input.index_of_column(column),
    }
}

impl DisplayAs for SubPlanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let names: Vec<&str> = self
            .subplans
            .iter()
            .map(|s| s.subplan.name.as_str())
            .collect();
        write!(f, "SubPlanExec: {}", names.join(", "))
    }
}

impl ExecutionPlan for SubPlanExec {
    fn name(&self) -> &str {
        "SubPlanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let input = children
            .pop()
            .ok_or_else(|| DataFusionError::Internal("SubPlanExec takes one input".into()))?;
        let properties = properties(&input, &self.schema);
        Ok(Arc::new(SubPlanExec {
            input,
            subplans: Arc::clone(&self.subplans),
            schema: Arc::clone(&self.schema),
            state: self.state.clone(),
            properties,
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let runner = Arc::new(Runner {
            subplans: Arc::clone(&self.subplans),
            state: self.state.clone(),
            schema: Arc::clone(&self.schema),
            outcomes: Mutex::new((HashMap::new(), 0)),
        });
        let batches = input.then(move |batch| {
            let runner = Arc::clone(&runner);
            async move { runner.extend(batch?).await }
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            batches,
        )))
    }
}

/// What one run of a subplan gave.
#[derive(Clone)]
enum Outcome {
    /// A scalar subquery's value or EXISTS's answer.
    Value(ScalarValue),
    /// The values an IN subquery returned.
    Members(Arc<Members>),
}

/// The values of an IN subquery, in the type both they and the needle convert to.
struct Members {
    values: HashSet<ScalarValue>,
    has_null: bool,
    common: DataType,
}

impl Members {
    /// `needle IN (members)`, three-valued as PostgreSQL has it.
    fn contain(&self, needle: &ScalarValue) -> Result<Option<bool>> {
        if self.values.is_empty() && !self.has_null {
            return Ok(Some(false));
        }
        if needle.is_null() {
            return Ok(None);
        }
        if self.values.contains(&needle.cast_to(&self.common)?) {
            return Ok(Some(true));
        }
        Ok(if self.has_null { None } else { Some(false) })
    }
}

/// The runs of a node's subplans, by subplan and outer values, and how many IN members
/// they hold together.
type Outcomes = (HashMap<(usize, Vec<ScalarValue>), Outcome>, usize);

/// How many IN members a statement's subplans keep between runs: an IN correlated on
/// many distinct values over a large subquery runs again rather than fill memory.
const KEPT_MEMBERS: usize = 1_000_000;

/// Runs a node's subplans for the batches of one input stream.
struct Runner {
    subplans: Arc<Vec<BoundSubPlan>>,
    state: SessionState,
    schema: SchemaRef,
    outcomes: Mutex<Outcomes>,
}

impl Runner {
    /// `batch` with a column more for each subplan.
    async fn extend(&self, batch: RecordBatch) -> Result<RecordBatch> {
        let mut columns = batch.columns().to_vec();
        for (index, bound) in self.subplans.iter().enumerate() {
            let mut values = Vec::with_capacity(batch.num_rows());
            for row in 0..batch.num_rows() {
                let outer = bound
                    .outer_indices
                    .iter()
                    .map(|&i| ScalarValue::try_from_array(batch.column(i), row))
                    .collect::<Result<Vec<_>>>()?;
                let value = match (self.outcome(index, bound, outer).await?, bound.needle_index) {
                    (Outcome::Value(value), _) => value,
                    (Outcome::Members(members), Some(needle)) => {
                        let needle = ScalarValue::try_from_array(batch.column(needle), row)?;
                        let negated =
                            matches!(bound.subplan.kind, SubPlanKind::In { negated: true });
                        ScalarValue::Boolean(
                            members.contain(&needle)?.map(|found| found != negated),
                        )
                    }
                    (Outcome::Members(_), None) => {
                        return Err(DataFusionError::Internal(
                            "an IN subplan has no needle".into(),
                        ))
                    }
                };
                values.push(value);
            }
            columns.push(to_array(values, &bound.subplan)?);
        }
        Ok(RecordBatch::try_new(Arc::clone(&self.schema), columns)?)
    }

    /// The subplan's outcome for one set of outer values, run once for each.
    async fn outcome(
        &self,
        index: usize,
        bound: &BoundSubPlan,
        outer: Vec<ScalarValue>,
    ) -> Result<Outcome> {
        let key = (index, outer);
        if let Some(outcome) = self.outcomes()?.0.get(&key) {
            return Ok(outcome.clone());
        }
        let outcome = self.run(bound, &key.1).await?;
        let members = match &outcome {
            Outcome::Members(members) => members.values.len(),
            Outcome::Value(_) => 0,
        };
        let mut outcomes = self.outcomes()?;
        if outcomes.1 + members <= KEPT_MEMBERS {
            outcomes.1 += members;
            outcomes.0.insert(key, outcome.clone());
        }
        Ok(outcome)
    }

    fn outcomes(&self) -> Result<std::sync::MutexGuard<'_, Outcomes>> {
        self.outcomes
            .lock()
            .map_err(|_| DataFusionError::Internal("a subplan's results were poisoned".into()))
    }

    async fn run(&self, bound: &BoundSubPlan, outer: &[ScalarValue]) -> Result<Outcome> {
        let subplan = &bound.subplan;
        let query = bind_outer(&subplan.query, &subplan.outer, outer)?;
        let query = super::pg_subplans::prepare(query)?;
        // Two rows tell a scalar subquery's error; one answers EXISTS.
        let enough = match subplan.kind {
            SubPlanKind::Scalar => Some(2),
            SubPlanKind::Exists { .. } => Some(1),
            SubPlanKind::In { .. } => None,
        };
        let query = match enough {
            Some(n) => LogicalPlanBuilder::from(query).limit(0, Some(n))?.build()?,
            None => query,
        };
        let physical = self.state.create_physical_plan(&query).await?;
        let batches = datafusion::physical_plan::collect(physical, self.state.task_ctx()).await?;
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let value = match subplan.kind {
            SubPlanKind::Exists { negated } => ScalarValue::Boolean(Some((rows > 0) != negated)),
            SubPlanKind::Scalar => match batches.iter().find(|b| b.num_rows() > 0) {
                None => ScalarValue::try_from(&subplan.data_type)?,
                Some(_) if rows > 1 => {
                    return Err(DataFusionError::External(Box::new(SqlError::new(
                        SqlState::CardinalityViolation,
                        "more than one row returned by a subquery used as an expression",
                    ))))
                }
                Some(batch) => ScalarValue::try_from_array(batch.column(0), 0)?,
            },
            SubPlanKind::In { .. } => {
                return members(&batches, &bound.needle_type).map(|m| Outcome::Members(Arc::new(m)))
            }
        };
        Ok(Outcome::Value(value))
    }
}

/// The first column of `batches` as the members of an IN, in the type they and a
/// needle of `needle_type` compare as.
fn members(batches: &[RecordBatch], needle_type: &DataType) -> Result<Members> {
    let returned = batches
        .first()
        .map(|b| b.schema().field(0).data_type().clone());
    let returned = returned.unwrap_or_else(|| needle_type.clone());
    let common = comparison_coercion(needle_type, &returned).ok_or_else(|| {
        DataFusionError::External(Box::new(SqlError::new(
            SqlState::UndefinedFunction,
            format!("operator does not exist: {needle_type} = {returned}"),
        )))
    })?;
    let mut members = Members {
        values: HashSet::new(),
        has_null: false,
        common,
    };
    for batch in batches {
        for row in 0..batch.num_rows() {
            let value = ScalarValue::try_from_array(batch.column(0), row)?;
            match value.is_null() {
                true => members.has_null = true,
                false => {
                    members.values.insert(value.cast_to(&members.common)?);
                }
            }
        }
    }
    Ok(members)
}

/// The column of a subplan's values.
fn to_array(values: Vec<ScalarValue>, subplan: &SubPlan) -> Result<ArrayRef> {
    if values.is_empty() {
        return Ok(new_empty_array(&subplan.data_type));
    }
    ScalarValue::iter_to_array(values)
}

/// `query` with each reference to one of `outer` replaced by its value, in nested
/// subqueries too.
fn bind_outer(
    query: &LogicalPlan,
    outer: &[Column],
    values: &[ScalarValue],
) -> Result<LogicalPlan> {
    let value_of = |column: &Column| {
        outer
            .iter()
            .position(|c| c == column)
            .and_then(|i| values.get(i))
    };
    let bound = query.clone().transform_up_with_subqueries(|node| {
        node.map_expressions(|expr| {
            expr.transform_up(|e| match e {
                Expr::OuterReferenceColumn(field, column) => match value_of(&column) {
                    Some(value) => Ok(Transformed::yes(lit(value.clone()))),
                    None => Ok(Transformed::no(Expr::OuterReferenceColumn(field, column))),
                },
                // A nested subquery no longer refers to what is now a constant.
                e => map_subquery(e, |mut subquery| {
                    subquery.outer_ref_columns.retain(|r| !refers_to(r, outer));
                    Ok(subquery)
                }),
            })
        })
    })?;
    Ok(bound.data)
}

fn refers_to(reference: &Expr, outer: &[Column]) -> bool {
    matches!(reference, Expr::OuterReferenceColumn(_, column) if outer.contains(column))
}

/// DataFusion's physical planner, which also plans [`SubPlanNode`]s.
#[derive(Debug, Default)]
pub struct PgwideQueryPlanner;

#[async_trait]
impl QueryPlanner for PgwideQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        DefaultPhysicalPlanner::with_extension_planners(vec![Arc::new(SubPlanner)])
            .create_physical_plan(logical_plan, session)
            .await
    }
}

struct SubPlanner;

#[async_trait]
impl ExtensionPlanner for SubPlanner {
    async fn plan_extension(
        &self,
        _planner: &dyn PhysicalPlanner,
        node: &dyn UserDefinedLogicalNode,
        logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        session: &dyn Session,
        _planning_ctx: &PhysicalPlanningContext,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let Some(node) = node.as_any().downcast_ref::<SubPlanNode>() else {
            return Ok(None);
        };
        let (Some(logical), Some(physical)) = (logical_inputs.first(), physical_inputs.first())
        else {
            return Ok(None);
        };
        let Some(state) = session.as_any().downcast_ref::<SessionState>() else {
            return Err(DataFusionError::Internal(
                "a SubPlan is planned within a session".into(),
            ));
        };
        let exec = SubPlanExec::try_new(
            Arc::clone(physical),
            logical.schema(),
            node.subplans(),
            Arc::new(UserDefinedLogicalNodeCore::schema(node).as_arrow().clone()),
            state.clone(),
        )?;
        Ok(Some(Arc::new(exec)))
    }
}
