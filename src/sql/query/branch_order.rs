//! `UNION ALL` rows in the order the branches are written, as PostgreSQL's Append
//! returns them. DataFusion runs a union as one partition per branch and merges
//! partitions with `CoalescePartitionsExec`, which interleaves them as they finish, so
//! `SELECT 1 UNION ALL SELECT 2` could answer `2, 1`, and `string_agg` over a union, or
//! `INSERT … SELECT` handing out serial keys, would follow. Sessions run with one
//! target partition, so a union is where several partitions come from: reading them
//! one after another costs no parallelism worth keeping and makes the order the
//! written one. [`BranchOrder`] is the physical optimizer rule that puts
//! [`ConcatPartitionsExec`] where DataFusion put a merge.

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, Partitioning,
    PlanProperties,
};
use futures::StreamExt;
use std::sync::Arc;

/// Replaces every partition merge by [`ConcatPartitionsExec`], keeping its row limit.
#[derive(Debug, Default)]
pub struct BranchOrder;

impl PhysicalOptimizerRule for BranchOrder {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let Some(merge) = node.downcast_ref::<CoalescePartitionsExec>() else {
                return Ok(Transformed::no(node));
            };
            let concat = ConcatPartitionsExec::new(Arc::clone(merge.input()), merge.fetch());
            Ok(Transformed::yes(Arc::new(concat) as Arc<dyn ExecutionPlan>))
        })
        .map(|transformed| transformed.data)
    }

    fn name(&self) -> &str {
        "branch_order"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// One partition made of its input's partitions, read in order, at most `fetch` rows.
#[derive(Debug)]
pub struct ConcatPartitionsExec {
    input: Arc<dyn ExecutionPlan>,
    fetch: Option<usize>,
    properties: Arc<PlanProperties>,
}

impl ConcatPartitionsExec {
    pub fn new(input: Arc<dyn ExecutionPlan>, fetch: Option<usize>) -> Self {
        // Like a merge, the result keeps no ordering the partitions had each.
        let mut equivalences = input.equivalence_properties().clone();
        equivalences.clear_orderings();
        equivalences.clear_per_partition_constants();
        let properties = PlanProperties::new(
            equivalences,
            Partitioning::UnknownPartitioning(1),
            input.pipeline_behavior(),
            input.boundedness(),
        );
        ConcatPartitionsExec {
            input,
            fetch,
            properties: Arc::new(properties),
        }
    }
}

impl DisplayAs for ConcatPartitionsExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self.fetch {
            Some(fetch) => write!(f, "ConcatPartitionsExec: fetch={fetch}"),
            None => write!(f, "ConcatPartitionsExec"),
        }
    }
}

impl ExecutionPlan for ConcatPartitionsExec {
    fn name(&self) -> &str {
        "ConcatPartitionsExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
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
        let input = children.pop().ok_or_else(|| {
            DataFusionError::Internal("ConcatPartitionsExec takes one input".into())
        })?;
        Ok(Arc::new(ConcatPartitionsExec::new(input, self.fetch)))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!(
                "ConcatPartitionsExec has one partition, not {partition}"
            )));
        }
        let input = Arc::clone(&self.input);
        let count = input.output_partitioning().partition_count();
        // Each partition starts when the one before it has ended, so a branch's scan
        // does not run ahead of the rows the client is reading.
        let batches = futures::stream::iter(0..count)
            .map(move |index| input.execute(index, Arc::clone(&context)))
            .flat_map(|stream| match stream {
                Ok(stream) => stream.boxed(),
                Err(e) => futures::stream::once(async move { Err(e) }).boxed(),
            });
        let batches = limited(batches.boxed(), self.fetch);
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema(),
            batches,
        )))
    }
}

type Batches = futures::stream::BoxStream<'static, Result<datafusion::arrow::array::RecordBatch>>;

/// The first `fetch` rows of `batches` (all of them without a limit); reading stops
/// once they are out.
fn limited(batches: Batches, fetch: Option<usize>) -> Batches {
    let Some(fetch) = fetch else {
        return batches;
    };
    futures::stream::unfold((batches, fetch), |(mut batches, left)| async move {
        if left == 0 {
            return None;
        }
        match batches.next().await? {
            Ok(batch) if batch.num_rows() > left => Some((Ok(batch.slice(0, left)), (batches, 0))),
            Ok(batch) => {
                let rest = left - batch.num_rows();
                Some((Ok(batch), (batches, rest)))
            }
            Err(e) => Some((Err(e), (batches, 0))),
        }
    })
    .boxed()
}
