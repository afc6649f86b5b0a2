//! Which table column each output column of a DataFusion plan comes straight from, so
//! RowDescription carries its table OID and attribute number as PostgreSQL's does
//! (pgjdbc's `ResultSetMetaData.getTableName` reads them). A column passed through
//! projections (also renamed), filters, sorts, limits, aliases, joins and GROUP BY
//! keeps its origin; any computed value, aggregate or set operation has none.

use super::provider::EngineTable;
use crate::engine::TableMeta;
use crate::sql::pg_catalog;
use crate::sql::sql_types::ColumnOrigin;
use datafusion::common::Column;
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::{Expr, JoinType, LogicalPlan};
use std::sync::Arc;

/// The origin of table column `column` (by name), if the table shows it.
fn column_origin(table: &Arc<TableMeta>, column: &str) -> Option<ColumnOrigin> {
    ColumnOrigin::of(
        table,
        pg_catalog::table_oid(table),
        column,
        pg_catalog::attnum(table, column)?,
    )
}

/// The origin of each output column of `plan`.
pub fn origins(plan: &LogicalPlan) -> Vec<Option<ColumnOrigin>> {
    (0..plan.schema().fields().len())
        .map(|i| origin(plan, i, 0))
        .collect()
}

/// Plans nest shallowly; the bound only guards against a pathological one.
const MAX_DEPTH: usize = 64;

fn origin(plan: &LogicalPlan, index: usize, depth: usize) -> Option<ColumnOrigin> {
    if depth > MAX_DEPTH {
        return None;
    }
    let next = depth + 1;
    match plan {
        LogicalPlan::TableScan(scan) => {
            let provider = source_as_provider(&scan.source).ok()?;
            let table = provider.downcast_ref::<EngineTable>()?.base_table()?;
            let field = scan.projected_schema.fields().get(index)?;
            column_origin(table, field.name())
        }
        LogicalPlan::Projection(p) => match p.expr.get(index)? {
            Expr::Column(c) => through(&p.input, c, next),
            Expr::Alias(alias) => match alias.expr.as_ref() {
                Expr::Column(c) => through(&p.input, c, next),
                _ => None,
            },
            _ => None,
        },
        LogicalPlan::Aggregate(a) => match a.group_expr.get(index)? {
            Expr::Column(c) => through(&a.input, c, next),
            _ => None,
        },
        LogicalPlan::Join(j) => {
            let left = j.left.schema().fields().len();
            match j.join_type {
                JoinType::LeftSemi | JoinType::LeftAnti | JoinType::LeftMark => {
                    origin(&j.left, index, next)
                }
                JoinType::RightSemi | JoinType::RightAnti | JoinType::RightMark => {
                    origin(&j.right, index, next)
                }
                _ if index < left => origin(&j.left, index, next),
                _ => origin(&j.right, index - left, next),
            }
        }
        LogicalPlan::SubqueryAlias(_)
        | LogicalPlan::Filter(_)
        | LogicalPlan::Sort(_)
        | LogicalPlan::Limit(_)
        | LogicalPlan::Repartition(_)
        | LogicalPlan::Distinct(datafusion::logical_expr::Distinct::All(_)) => {
            let inputs = plan.inputs();
            origin(inputs.first()?, index, next)
        }
        _ => None,
    }
}

/// The origin of column `c` of `input`.
fn through(input: &LogicalPlan, c: &Column, depth: usize) -> Option<ColumnOrigin> {
    let index = input.schema().index_of_column(c).ok()?;
    origin(input, index, depth)
}
