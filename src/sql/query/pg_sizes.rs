//! `pg_relation_size`, `pg_table_size`, `pg_indexes_size`, `pg_total_relation_size` and
//! `pg_database_size`: how many bytes a relation's keys and values take in the store,
//! counted by walking them (`Engine::table_size`, `Engine::index_size`), so `\dt+`, `\l+`
//! and admin tools show what a table really holds. PostgreSQL counts the pages of a
//! heap file; pgwide counts the bytes of its rows, so the figures need not match
//! PostgreSQL's for the same data, but grow and shrink with it.
//!
//! A table's primary-key index is its row keys themselves and takes no bytes of its own;
//! secondary indexes are their entries. Sequences live in the catalog and catalog
//! relations are computed when read: both are 0 bytes. Counting walks every key, so a
//! call costs time in proportion to the table, and the walk occupies the thread that
//! runs it while it lasts.

use super::named_relation::{resolve, resolve_database, sql_error, NamedRelation};
use super::udf::string;
use crate::engine::{Engine, EngineResult, TableMeta, TableSize};
use crate::sql::sql_error::SqlError;
use crate::sqlstate::SqlState;
use datafusion::arrow::array::{ArrayRef, Int64Builder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::session_state::SessionState;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::async_udf::{AsyncScalarUDF, AsyncScalarUDFImpl};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};
use std::sync::Arc;

/// Registers the size functions for a session of `instance`.
pub(super) fn register(
    state: &mut SessionState,
    engine: &Arc<Engine>,
    instance: &str,
) -> Result<()> {
    for measure in Measure::ALL {
        let function = SizeFunction {
            measure,
            engine: Arc::clone(engine),
            instance: instance.to_string(),
            signature: Signature::one_of(vec![TypeSignature::VariadicAny], Volatility::Volatile),
        };
        let udf = AsyncScalarUDF::new(Arc::new(function)).into_scalar_udf();
        state.register_udf(Arc::new(udf))?;
    }
    Ok(())
}

/// What a function measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Measure {
    /// `pg_relation_size(rel [, fork])`: the relation's own bytes.
    Relation,
    /// `pg_table_size(rel)`: the same (pgwide keeps no TOAST, free space or visibility
    /// maps).
    Table,
    /// `pg_indexes_size(rel)`: the table's indexes.
    Indexes,
    /// `pg_total_relation_size(rel)`: the table and its indexes.
    Total,
    /// `pg_database_size(name | oid)`: every table and index of the database.
    Database,
}

impl Measure {
    const ALL: [Measure; 5] = [
        Measure::Relation,
        Measure::Table,
        Measure::Indexes,
        Measure::Total,
        Measure::Database,
    ];

    fn name(self) -> &'static str {
        match self {
            Measure::Relation => "pg_relation_size",
            Measure::Table => "pg_table_size",
            Measure::Indexes => "pg_indexes_size",
            Measure::Total => "pg_total_relation_size",
            Measure::Database => "pg_database_size",
        }
    }
}

/// One size function of a session.
struct SizeFunction {
    measure: Measure,
    engine: Arc<Engine>,
    instance: String,
    signature: Signature,
}

impl std::fmt::Debug for SizeFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SizeFunction({})", self.measure.name())
    }
}

impl PartialEq for SizeFunction {
    fn eq(&self, other: &Self) -> bool {
        self.measure == other.measure && self.instance == other.instance
    }
}
impl Eq for SizeFunction {}
impl std::hash::Hash for SizeFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.measure.hash(state)
    }
}

impl ScalarUDFImpl for SizeFunction {
    fn name(&self) -> &str {
        self.measure.name()
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }
    fn invoke_with_args(&self, _: ScalarFunctionArgs) -> Result<ColumnarValue> {
        datafusion::common::internal_err!("{} runs asynchronously", self.measure.name())
    }
}

#[async_trait::async_trait]
impl AsyncScalarUDFImpl for SizeFunction {
    async fn invoke_async_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let mut out = Int64Builder::with_capacity(rows);
        for row in 0..rows {
            let values = arrays
                .iter()
                .map(|a| ScalarValue::try_from_array(a, row))
                .collect::<Result<Vec<_>>>()?;
            out.append_option(self.size(&values).await?);
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish()) as ArrayRef))
    }
}

impl SizeFunction {
    /// The bytes one call measures; `None` (NULL) for a NULL argument or an OID no
    /// relation or database has.
    async fn size(&self, args: &[ScalarValue]) -> Result<Option<i64>> {
        let (object, fork) = match (self.measure, args) {
            (Measure::Relation, [object, fork]) => (object, Some(fork)),
            (_, [object]) => (object, None),
            _ => {
                return Err(sql_error(
                    SqlState::UndefinedFunction,
                    format!(
                        "function {}() does not take {} arguments",
                        self.measure.name(),
                        args.len()
                    ),
                ))
            }
        };
        if object.is_null() || fork.is_some_and(ScalarValue::is_null) {
            return Ok(None);
        }
        if self.measure == Measure::Database {
            return self.database_size(object).await;
        }
        // Only the main fork holds data; the others PostgreSQL has are empty here.
        match fork.and_then(|f| string(Some(f))) {
            None | Some("main") => {}
            Some("fsm" | "vm" | "init") => return Ok(Some(0)),
            Some(other) => {
                return Err(sql_error(
                    SqlState::InvalidParameterValue,
                    format!("invalid fork name: \"{other}\""),
                ))
            }
        }
        let Some(relation) = resolve(&self.engine, &self.instance, object)? else {
            return Ok(None);
        };
        let bytes = match (relation, self.measure) {
            (NamedRelation::Table(table), Measure::Relation | Measure::Table) => {
                self.table_bytes(&table).await?
            }
            (NamedRelation::Table(table), Measure::Indexes) => self.index_bytes(&table).await?,
            (NamedRelation::Table(table), _) => {
                self.table_bytes(&table).await? + self.index_bytes(&table).await?
            }
            (
                NamedRelation::Index(Some(index)),
                Measure::Relation | Measure::Table | Measure::Total,
            ) => self.bytes(self.engine.index_size(&index).await)?,
            _ => 0,
        };
        Ok(Some(bytes))
    }

    async fn table_bytes(&self, table: &TableMeta) -> Result<i64> {
        self.bytes(self.engine.table_size(table, usize::MAX).await)
    }

    async fn index_bytes(&self, table: &TableMeta) -> Result<i64> {
        let mut total = 0;
        for index in &table.indexes {
            total += self.bytes(self.engine.index_size(index).await)?;
        }
        Ok(total)
    }

    fn bytes(&self, size: EngineResult<TableSize>) -> Result<i64> {
        let size = size.map_err(|e| DataFusionError::External(Box::new(SqlError::from(e))))?;
        Ok(i64::try_from(size.bytes).unwrap_or(i64::MAX))
    }

    /// Every table and index of the database named (3D000 if none is) or with the OID.
    async fn database_size(&self, object: &ScalarValue) -> Result<Option<i64>> {
        let Some(instance) = resolve_database(&self.engine, object)? else {
            return Ok(None);
        };
        let mut total = 0;
        for table in self.engine.tables(&instance).unwrap_or_default() {
            total += self.table_bytes(&table).await? + self.index_bytes(&table).await?;
        }
        Ok(Some(total))
    }
}
