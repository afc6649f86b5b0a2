//! Table sizes, and the views that show them: PostgreSQL's `pg_stat_{all,user}_tables`
//! and `pg_statio_{all,user}_tables` (BI tools read `n_live_tup` as a table's row
//! estimate) and the row estimate and bytes of `pgwide.tables`. A table's size is
//! counted by walking its stored rows, at most [`COUNT_LIMIT`] of them, so reading these
//! views costs at most that many key visits per table. The counting happens when the
//! view is scanned, not when a query naming it is planned, so planning never waits on
//! storage.

use crate::engine::{Engine, TableMeta, TableSize};
use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::TableType;
use datafusion::error::Result;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use std::collections::HashMap;
use std::sync::Arc;

/// Rows counted per table at most; a larger table reports this many, a lower bound.
pub const COUNT_LIMIT: usize = 100_000;

/// Counts `table`'s stored rows and bytes, up to [`COUNT_LIMIT`] rows
/// (`Engine::table_size`). A failed count shows as zero and is logged: a statistics view
/// should not fail a client's connect sequence.
pub async fn table_size(engine: &Engine, table: &TableMeta) -> TableSize {
    engine
        .table_size(table, COUNT_LIMIT)
        .await
        .unwrap_or_else(|e| {
            tracing::warn!(table = %table.name, "counting a table's rows failed: {e}");
            TableSize::default()
        })
}

/// The size of each of `tables`, by table id.
pub async fn sizes(engine: &Engine, tables: &[Arc<TableMeta>]) -> HashMap<u32, TableSize> {
    let mut sizes = HashMap::new();
    for table in tables {
        sizes.insert(table.id, table_size(engine, table).await);
    }
    sizes
}

/// Builds a view's table from the engine, the instance's name, its tables and their
/// sizes (empty when only the view's columns are wanted).
pub type BuildView = fn(
    &Engine,
    &str,
    &[Arc<TableMeta>],
    &HashMap<u32, TableSize>,
) -> Result<Arc<dyn TableProvider>>;

/// A view that needs table sizes: its columns are known when a query is planned, its
/// rows are built (and the tables counted) when it is scanned.
pub struct SizedView {
    engine: Arc<Engine>,
    instance: String,
    name: String,
    build: BuildView,
    schema: SchemaRef,
}

impl std::fmt::Debug for SizedView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SizedView({})", self.name)
    }
}

impl SizedView {
    /// The view `name` of `instance`, whose rows `build` makes.
    pub fn new(engine: Arc<Engine>, instance: &str, name: &str, build: BuildView) -> Result<Self> {
        let tables = engine.tables(instance).unwrap_or_default();
        let schema = build(&engine, instance, &tables, &HashMap::new())?.schema();
        Ok(SizedView {
            engine,
            instance: instance.to_string(),
            name: name.to_string(),
            build,
            schema,
        })
    }
}

#[async_trait]
impl TableProvider for SizedView {
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
        let tables = self.engine.tables(&self.instance).unwrap_or_default();
        let sizes = sizes(&self.engine, &tables).await;
        (self.build)(&self.engine, &self.instance, &tables, &sizes)?
            .scan(state, projection, filters, limit)
            .await
    }
}
