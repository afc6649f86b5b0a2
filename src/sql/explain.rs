//! EXPLAIN [ANALYZE] of a fast-path SELECT: its access path, and after ANALYZE the rows,
//! pages and capacity units it consumed. DataFusion queries are explained by
//! `query::explain_query`, which shows the access paths of its scans the same way.

use super::access::describe;
use super::expr::Scalar;
use super::row_reader::{ReadContext, ReadMeter};
use super::select::{execute_select, SelectPlan};
use super::sql_types::{Datum, OutputColumn, SqlResult, SqlType, StatementResult};
use futures::{stream, StreamExt};
use std::sync::Arc;

/// The one column EXPLAIN returns.
pub fn columns() -> Arc<Vec<OutputColumn>> {
    Arc::new(vec![OutputColumn {
        name: "QUERY PLAN".into(),
        ty: SqlType::Text,
        origin: None,
    }])
}

/// The lines of a plan as the one-column result EXPLAIN returns.
pub fn plan_rows(lines: Vec<String>) -> StatementResult {
    StatementResult::Query {
        columns: columns(),
        rows: stream::iter(lines.into_iter().map(|l| Ok(vec![Datum::Text(l)]))).boxed(),
    }
}

/// EXPLAIN [ANALYZE] of a fast-path SELECT.
pub async fn explain_fast_path(
    mut ctx: ReadContext,
    plan: &SelectPlan,
    params: Vec<Datum>,
    analyze: bool,
) -> SqlResult<StatementResult> {
    let mut lines = Vec::new();
    match &plan.read {
        None => lines.push("Result (no table)".to_string()),
        Some(read) => {
            let limit = match (&plan.sort, &plan.limit) {
                (None, Some(Scalar::Const(Datum::Int(l)))) => {
                    let offset = match &plan.offset {
                        Some(Scalar::Const(Datum::Int(o))) => *o,
                        _ => 0,
                    };
                    usize::try_from(l.saturating_add(offset)).ok()
                }
                _ => None,
            };
            lines.push(format!("Fast path: {}", describe(read, limit)));
            if plan.sort.is_some() {
                lines.push("  Sort in memory".into());
            }
        }
    }
    if analyze {
        let meter = Arc::new(ReadMeter::counting_partitions());
        ctx.meter = Some(Arc::clone(&meter));
        let rows = count_rows(execute_select(&ctx, Arc::new(plan.clone()), params).await?).await?;
        lines.push(format!("Actual: rows returned={rows} {}", meter.summary()));
    }
    Ok(plan_rows(lines))
}

async fn count_rows(result: StatementResult) -> SqlResult<usize> {
    let StatementResult::Query { mut rows, .. } = result else {
        return Ok(0);
    };
    let mut count = 0;
    while let Some(row) = rows.next().await {
        row?;
        count += 1;
    }
    Ok(count)
}
