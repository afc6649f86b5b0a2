//! The DataFusion leaf that reads one relation from the engine: the fast path's
//! `read_rows` (GetRow, BatchGetRow in chunks, GetRange page by page, staged writes
//! laid over in a transaction) turned into RecordBatches as DataFusion pulls them, so a
//! scan holds at most one engine page and one batch in memory.

use super::convert::rows_to_batch;
use crate::sql::access::{describe, ReadPlan};
use crate::sql::row_reader::{read_rows, ReadContext, ReadMeter};
use crate::sql::sql_types::{Datum, SqlError};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning,
    PlanProperties, ReplaceChildrenOptions, SendableRecordBatchStream,
};
use futures::stream::{self, StreamExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Scans one relation through the engine.
pub struct ScanExec {
    plan: Arc<ReadPlan>,
    ctx: ReadContext,
    meter: Arc<ReadMeter>,
    /// Set once executed, so EXPLAIN ANALYZE shows what was read.
    executed: Arc<AtomicBool>,
    schema: SchemaRef,
    limit: Option<usize>,
    properties: Arc<PlanProperties>,
}

impl ScanExec {
    pub fn new(
        plan: ReadPlan,
        mut ctx: ReadContext,
        schema: SchemaRef,
        limit: Option<usize>,
    ) -> Self {
        // EXPLAIN ANALYZE hands in a meter counting partition keys: each scan counts
        // its own, which a plain run does not pay for.
        let meter = Arc::new(match ctx.meter.as_ref() {
            Some(m) if m.is_counting_partitions() => ReadMeter::counting_partitions(),
            _ => ReadMeter::default(),
        });
        ctx.meter = Some(Arc::clone(&meter));
        let properties = PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        ScanExec {
            plan: Arc::new(plan),
            ctx,
            meter,
            executed: Arc::new(AtomicBool::new(false)),
            schema,
            limit,
            properties: Arc::new(properties),
        }
    }
}

impl std::fmt::Debug for ScanExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgwideScan({})", describe(&self.plan, self.limit))
    }
}

impl DisplayAs for ScanExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let columns: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        match t {
            DisplayFormatType::TreeRender => write!(f, "{}", describe(&self.plan, self.limit)),
            _ => {
                write!(
                    f,
                    "PgwideScan: {}, columns=[{}]",
                    describe(&self.plan, self.limit),
                    columns.join(", ")
                )?;
                if self.executed.load(Ordering::Relaxed) {
                    write!(f, ", {}", self.meter.summary())?;
                }
                Ok(())
            }
        }
    }
}

fn external(e: SqlError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

impl ExecutionPlan for ScanExec {
    fn name(&self) -> &str {
        "PgwideScan"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!(
                "PgwideScan has one partition, not {partition}"
            )));
        }
        self.executed.store(true, Ordering::Relaxed);
        let batch_size = context.session_config().batch_size().max(1);
        let (ctx, plan, schema, limit) = (
            self.ctx.clone(),
            Arc::clone(&self.plan),
            Arc::clone(&self.schema),
            self.limit.unwrap_or(usize::MAX),
        );
        let width = schema.fields().len();
        let rows = stream::once(async move {
            read_rows(
                &ctx,
                plan,
                Arc::new(Vec::new()),
                Some(limit).filter(|l| *l != usize::MAX),
            )
            .await
        })
        .map(|opened| match opened {
            Ok(rows) => rows,
            Err(e) => stream::iter(vec![Err(e)]).boxed(),
        })
        .flatten()
        .take(limit);
        let batch_schema = Arc::clone(&schema);
        let batches = rows.chunks(batch_size).map(move |chunk| {
            let rows = chunk
                .into_iter()
                .map(|row| {
                    row.map(|mut r: Vec<Datum>| {
                        // Slots past the projection hold columns only the filters read.
                        r.truncate(width);
                        r
                    })
                })
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(external)?;
            rows_to_batch(&batch_schema, &rows)
                .map_err(|e| DataFusionError::ArrowError(Box::new(e), None))
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches)))
    }
}
