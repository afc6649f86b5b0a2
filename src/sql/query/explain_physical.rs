//! EXPLAIN [ANALYZE] of a DataFusion query: its physical plan, whose engine scans name
//! their access paths (`access::describe`), and after ANALYZE the rows it returned and
//! what each scan read, partition keys included.

use super::datafusion_error::from_datafusion;
use super::datafusion_session::{partitions_in_order, QueryEngine, QueryPlan};
use crate::sql::explain::plan_rows;
use crate::sql::row_reader::{ReadContext, ReadMeter};
use crate::sql::sql_types::{Datum, SqlResult, StatementResult};
use datafusion::physical_plan::displayable;
use futures::StreamExt;
use std::sync::Arc;

/// EXPLAIN [ANALYZE] of a DataFusion query: its physical plan, whose scan nodes show
/// their access paths (and, after ANALYZE, what they read).
pub async fn explain_query(
    engine: &QueryEngine,
    plan: &QueryPlan,
    params: Vec<Datum>,
    mut ctx: ReadContext,
    analyze: bool,
) -> SqlResult<StatementResult> {
    if analyze {
        // Each engine scan makes its own meter of this kind (`ScanExec::new`).
        ctx.meter = Some(Arc::new(ReadMeter::counting_partitions()));
    }
    let (physical, state) = engine.physical(plan, params, ctx).await?;
    let mut footer = None;
    if analyze {
        let batches = partitions_in_order(Arc::clone(&physical), &state)?;
        let mut rows = 0usize;
        let mut batches = batches;
        while let Some(batch) = batches.next().await {
            rows += batch.map_err(|e| from_datafusion(&e))?.num_rows();
        }
        footer = Some(format!("Actual: rows returned={rows}"));
    }
    let text = displayable(physical.as_ref()).indent(false).to_string();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.extend(footer);
    Ok(plan_rows(lines))
}
