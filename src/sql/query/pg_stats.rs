//! Table sizes and the statistics views built on them: PostgreSQL's
//! `pg_stat_{all,user}_tables` and `pg_statio_{all,user}_tables` (BI tools read
//! `n_live_tup` as a table's row estimate) and the row estimate and bytes of
//! `pgwide.tables`. A table's size is counted by walking its stored rows, at most
//! [`COUNT_LIMIT`] of them, so reading these views costs at most that many key visits
//! per table. The counting happens when the view is scanned, not when a query naming
//! it is planned, so planning never waits on storage.

use super::pg_catalog::{mem_table, t, table_oid, CatalogSchema, Col, Kind, V};
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

/// The views that need table sizes.
pub fn needs_sizes(schema: Kind, name: &str) -> bool {
    match schema {
        Kind::PgCatalog => STAT_VIEWS.contains(&name) || STATIO_VIEWS.contains(&name),
        Kind::Pgwide => name == "tables",
        Kind::InformationSchema => false,
    }
}

const STAT_VIEWS: &[&str] = &["pg_stat_all_tables", "pg_stat_user_tables"];
const STATIO_VIEWS: &[&str] = &["pg_statio_all_tables", "pg_statio_user_tables"];

/// The view names this module serves in pg_catalog.
pub const VIEWS: &[&str] = &[
    "pg_stat_all_tables",
    "pg_stat_user_tables",
    "pg_statio_all_tables",
    "pg_statio_user_tables",
];

const STAT_COLUMNS: &[Col] = &[
    ("relid", 'i'),
    ("schemaname", 't'),
    ("relname", 't'),
    ("seq_scan", 'i'),
    ("seq_tup_read", 'i'),
    ("idx_scan", 'i'),
    ("idx_tup_fetch", 'i'),
    ("n_tup_ins", 'i'),
    ("n_tup_upd", 'i'),
    ("n_tup_del", 'i'),
    ("n_tup_hot_upd", 'i'),
    ("n_live_tup", 'i'),
    ("n_dead_tup", 'i'),
    ("n_mod_since_analyze", 'i'),
    ("n_ins_since_vacuum", 'i'),
    ("last_vacuum", 't'),
    ("last_autovacuum", 't'),
    ("last_analyze", 't'),
    ("last_autoanalyze", 't'),
    ("vacuum_count", 'i'),
    ("autovacuum_count", 'i'),
    ("analyze_count", 'i'),
    ("autoanalyze_count", 'i'),
];

const STATIO_COLUMNS: &[Col] = &[
    ("relid", 'i'),
    ("schemaname", 't'),
    ("relname", 't'),
    ("heap_blks_read", 'i'),
    ("heap_blks_hit", 'i'),
    ("idx_blks_read", 'i'),
    ("idx_blks_hit", 'i'),
    ("toast_blks_read", 'i'),
    ("toast_blks_hit", 'i'),
    ("tidx_blks_read", 'i'),
    ("tidx_blks_hit", 'i'),
];

pub(super) fn count(n: u64) -> V {
    V::I(i64::try_from(n).unwrap_or(i64::MAX))
}

/// A view that needs table sizes: its columns are known when a query is planned, its
/// rows are built (and the tables counted) when it is scanned.
pub struct SizedView {
    catalog: CatalogSchema,
    name: String,
    schema: SchemaRef,
}

impl std::fmt::Debug for SizedView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SizedView({})", self.name)
    }
}

impl SizedView {
    pub fn new(catalog: &CatalogSchema, name: &str) -> Result<Self> {
        let catalog = CatalogSchema {
            engine: Arc::clone(&catalog.engine),
            instance: catalog.instance.clone(),
            kind: catalog.kind,
            roles: catalog.roles.clone(),
        };
        let schema = catalog.sized_view(name, &HashMap::new())?.schema();
        Ok(SizedView {
            catalog,
            name: name.to_string(),
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
        let sizes = self.catalog.sizes().await;
        self.catalog
            .sized_view(&self.name, &sizes)?
            .scan(state, projection, filters, limit)
            .await
    }
}

impl CatalogSchema {
    /// One of the views [`needs_sizes`] names, with these sizes.
    fn sized_view(
        &self,
        name: &str,
        sizes: &HashMap<u32, TableSize>,
    ) -> Result<Arc<dyn TableProvider>> {
        match self.kind {
            Kind::Pgwide => self.pgwide_tables(sizes),
            _ => self.stat_view(name, sizes),
        }
    }

    /// The size of every table of the instance, by table id.
    pub(super) async fn sizes(&self) -> HashMap<u32, TableSize> {
        let mut sizes = HashMap::new();
        for table in self.tables() {
            sizes.insert(table.id, table_size(&self.engine, &table).await);
        }
        sizes
    }

    /// One of [`VIEWS`]. Scans are the engine calls that read the table (`seq_scan`)
    /// and the rows they examined (`seq_tup_read`), since the server started; the live
    /// rows are the table's counted size. pgwide keeps no per-kind write counts, vacuum
    /// or block statistics: those columns are 0 (NULL for times).
    pub(super) fn stat_view(
        &self,
        name: &str,
        sizes: &HashMap<u32, TableSize>,
    ) -> Result<Arc<dyn TableProvider>> {
        let tables: Vec<Arc<TableMeta>> = self.tables();
        if STATIO_VIEWS.contains(&name) {
            let rows = tables
                .iter()
                .map(|table| {
                    let mut row = vec![
                        V::I(table_oid(table)),
                        t("public"),
                        V::T(table.name.clone()),
                    ];
                    row.extend((3..STATIO_COLUMNS.len()).map(|_| V::I(0)));
                    row
                })
                .collect();
            return mem_table(STATIO_COLUMNS, rows);
        }
        let rows = tables
            .iter()
            .map(|table| {
                let stats = self.engine.table_stats(table);
                let live = sizes.get(&table.id).map_or(0, |s| s.rows);
                let mut row = vec![
                    V::I(table_oid(table)),
                    t("public"),
                    V::T(table.name.clone()),
                    count(stats.reads),
                    count(stats.rows_scanned),
                    V::I(0),
                    V::I(0),
                    V::I(0),
                    V::I(0),
                    V::I(0),
                    V::I(0),
                    count(live),
                    V::I(0),
                    V::I(0),
                    V::I(0),
                ];
                row.extend([V::N, V::N, V::N, V::N]);
                row.extend((0..4).map(|_| V::I(0)));
                row
            })
            .collect();
        mem_table(STAT_COLUMNS, rows)
    }
}
