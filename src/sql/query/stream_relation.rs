//! `stream.<table>`: a table's stream records (`engine::stream`) as a relation, one row
//! per committed change: `position`, `commit_time`, `operation` (`PUT`, `UPDATE`,
//! `DELETE`), the primary-key columns with the table's names and types, and `columns`,
//! a jsonb array with one object per changed column (`column`, `op`, `version`, and
//! for a put its `value` in the column's SQL type, numbers and booleans as JSON's,
//! the rest as PostgreSQL's text).
//!
//! A consumer resumes with `WHERE position > $1` (or `>=`): the lower bound is read
//! from the filter, so only the records after it are read, and a bound below the
//! records already removed is refused (55000) instead of silently skipping them.
//! Records are read a page at a time as the query pulls them, in position order, so
//! `ORDER BY position LIMIT n` reads about n records, not all that follow the bound.

use super::convert::{arrow_type, rows_to_batch, UTC};
use crate::engine::{Engine, StreamRecord, TableMeta};
use crate::sql::pg_json::{input, JsonKind};
use crate::sql::sql_types::{Datum, SqlError, SqlType};
use crate::sql::values::{
    coerce_for_output, declared_type, pk_sql_type, pk_to_datum, value_to_datum,
};
use async_trait::async_trait;
use datafusion::arrow::compute::SortOptions;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::ScalarValue;
use datafusion::datasource::TableType;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{BinaryExpr, Expr, Operator, TableProviderFilterPushDown};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{LexOrdering, PhysicalSortExpr};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::ExecutionPlan;
use std::sync::Arc;

/// The schema holding the stream relations.
pub const STREAM_SCHEMA: &str = "stream";

const POSITION: &str = "position";

/// Records read from the engine at a time.
const PAGE_RECORDS: usize = 1024;

/// The stream relation of one table.
#[derive(Clone)]
pub struct StreamRelation {
    engine: Arc<Engine>,
    table: Arc<TableMeta>,
    schema: SchemaRef,
}

impl std::fmt::Debug for StreamRelation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StreamRelation({})", self.table.name)
    }
}

impl StreamRelation {
    pub fn new(engine: Arc<Engine>, table: Arc<TableMeta>) -> Self {
        let mut fields = vec![
            Field::new(POSITION, DataType::Int64, false),
            Field::new(
                "commit_time",
                DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
                false,
            ),
            Field::new("operation", DataType::Utf8, false),
        ];
        if !table.auto_rowid {
            for column in &table.pk {
                let ty = key_type(&table, &column.name, column.ty);
                fields.push(Field::new(&column.name, arrow_type(ty), false));
            }
        }
        fields.push(Field::new("columns", arrow_type(SqlType::Jsonb), false));
        let schema = Arc::new(Schema::new(fields));
        StreamRelation {
            engine,
            table,
            schema,
        }
    }

    /// One record as a row of the relation.
    fn row(&self, record: StreamRecord) -> Vec<Datum> {
        let mut row = vec![
            Datum::Int(i64::try_from(record.position).unwrap_or(i64::MAX)),
            Datum::TimestampTz(record.commit_ms.saturating_mul(1000)),
            Datum::Text(record.operation.name().to_string()),
        ];
        if !self.table.auto_rowid {
            for (value, column) in record.pk.iter().zip(&self.table.pk) {
                let ty = key_type(&self.table, &column.name, column.ty);
                row.push(coerce_for_output(pk_to_datum(&value.into()), ty));
            }
        }
        let columns = record
            .columns
            .iter()
            .map(|change| {
                let mut object = serde_json::Map::new();
                object.insert("column".into(), change.column.clone().into());
                object.insert("op".into(), change.operation.name().into());
                if let Some(version) = change.version {
                    object.insert("version".into(), version.into());
                }
                if let Some(value) = &change.value {
                    let datum = value_to_datum(value.as_ref());
                    let datum = match declared_type(&self.table, &change.column) {
                        Some(ty) => coerce_for_output(datum, ty),
                        None => datum,
                    };
                    object.insert("value".into(), json_of(datum));
                }
                serde_json::Value::Object(object)
            })
            .collect();
        let json = serde_json::Value::Array(columns).to_string();
        // In jsonb's normal form (its key order and spacing); serde_json's text is
        // valid JSON, so the fallback is never taken.
        row.push(Datum::Text(input(&json, JsonKind::Jsonb).unwrap_or(json)));
        row
    }
}

/// A key column's SQL type: as declared, or its Table Store type's.
fn key_type(table: &TableMeta, column: &str, ty: crate::engine::PkType) -> SqlType {
    declared_type(table, column).unwrap_or_else(|| pk_sql_type(ty))
}

/// A value in JSON: numbers and booleans as JSON's, everything else as its text.
fn json_of(datum: Datum) -> serde_json::Value {
    match datum {
        Datum::Null => serde_json::Value::Null,
        Datum::Bool(b) => b.into(),
        Datum::Int(i) => i.into(),
        Datum::Float(f) => serde_json::Number::from_f64(f)
            .map(serde_json::Value::Number)
            .unwrap_or_else(|| f.to_string().into()),
        Datum::Text(t) => t.into(),
        Datum::Bytes(b) => format!(
            "\\x{}",
            b.iter().map(|x| format!("{x:02x}")).collect::<String>()
        )
        .into(),
        other => crate::sql::expr::datum_text(other).into(),
    }
}

/// The position after which `filter` reads, if it bounds `position` from below.
fn lower_bound(filter: &Expr) -> Option<u64> {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = filter else {
        return None;
    };
    let (op, value) = match (left.as_ref(), right.as_ref()) {
        (Expr::Column(c), value) if c.name == POSITION => (*op, value),
        (value, Expr::Column(c)) if c.name == POSITION => (op.swap()?, value),
        _ => return None,
    };
    let value = match value {
        Expr::Literal(ScalarValue::Int64(Some(v)), _) => *v,
        Expr::Literal(ScalarValue::Int32(Some(v)), _) => i64::from(*v),
        _ => return None,
    };
    match op {
        Operator::Gt => u64::try_from(value).ok(),
        Operator::GtEq | Operator::Eq => u64::try_from(value.saturating_sub(1)).ok(),
        _ => None,
    }
}

#[async_trait]
impl TableProvider for StreamRelation {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    /// A lower bound on `position` picks where the read starts; DataFusion still
    /// applies every filter to the rows.
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| match lower_bound(f) {
                Some(_) => TableProviderFilterPushDown::Inexact,
                None => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let after = filters.iter().filter_map(lower_bound).max();
        let pages = RecordPages {
            relation: self.clone(),
            after,
        };
        // Records come in position order: said, so that `ORDER BY position LIMIT n`
        // needs no sort and stops reading after n rows.
        let position = projection.map_or(Some(0), |p| p.iter().position(|&c| c == 0));
        let ordering = position.and_then(|index| {
            LexOrdering::new([PhysicalSortExpr::new(
                Arc::new(Column::new(POSITION, index)),
                SortOptions {
                    descending: false,
                    nulls_first: false,
                },
            )])
        });
        let exec = StreamingTableExec::try_new(
            Arc::clone(&self.schema),
            vec![Arc::new(pages)],
            projection,
            ordering,
            false,
            limit,
        )?;
        Ok(Arc::new(exec))
    }
}

/// The records after `after`, read a page at a time as the query pulls them.
#[derive(Debug)]
struct RecordPages {
    relation: StreamRelation,
    after: Option<u64>,
}

impl PartitionStream for RecordPages {
    fn schema(&self) -> &SchemaRef {
        &self.relation.schema
    }

    fn execute(&self, _context: Arc<TaskContext>) -> SendableRecordBatchStream {
        let relation = self.relation.clone();
        let schema = Arc::clone(&relation.schema);
        // The state is where the next page starts; `None` once a page came back short.
        let pages = futures::stream::try_unfold(Some(self.after), move |next| {
            let relation = relation.clone();
            async move {
                let Some(after) = next else {
                    return Ok(None);
                };
                let records = relation
                    .engine
                    .stream_records(&relation.table, after, PAGE_RECORDS)
                    .await
                    .map_err(|e| DataFusionError::External(Box::new(SqlError::from(e))))?;
                let Some(last) = records.last().map(|r| r.position) else {
                    return Ok(None);
                };
                let more = (records.len() == PAGE_RECORDS).then_some(Some(last));
                let rows: Vec<Vec<Datum>> = records.into_iter().map(|r| relation.row(r)).collect();
                let batch = rows_to_batch(&relation.schema, &rows)?;
                Ok(Some((batch, more)))
            }
        });
        Box::pin(RecordBatchStreamAdapter::new(schema, pages))
    }
}
