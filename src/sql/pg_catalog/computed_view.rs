//! A catalog relation whose rows are computed from storage when a query scans it, not
//! when the query is planned, so planning never waits on storage (`pgwide.partitions`
//! and `pgwide.key_advice` walk tables): its columns are fixed, its rows come from an
//! async function run at each scan.

use super::memory_table::{mem_table, Col, V};
use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::TableType;
use datafusion::error::Result;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use futures::future::BoxFuture;
use std::sync::Arc;

/// Computes a relation's rows.
pub type ComputeRows = Arc<dyn Fn() -> BoxFuture<'static, Result<Vec<Vec<V>>>> + Send + Sync>;

/// A relation of fixed columns whose rows `compute` makes at each scan.
pub struct ComputedView {
    name: &'static str,
    columns: &'static [Col],
    compute: ComputeRows,
    schema: SchemaRef,
}

impl std::fmt::Debug for ComputedView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ComputedView({})", self.name)
    }
}

impl ComputedView {
    pub fn new(name: &'static str, columns: &'static [Col], compute: ComputeRows) -> Result<Self> {
        let schema = mem_table(columns, Vec::new())?.schema();
        Ok(ComputedView {
            name,
            columns,
            compute,
            schema,
        })
    }
}

#[async_trait]
impl TableProvider for ComputedView {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let rows = (self.compute)().await?;
        mem_table(self.columns, rows)?
            .scan(state, projection, filters, limit)
            .await
    }
}
