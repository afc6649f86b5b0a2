//! PostgreSQL's sequence functions: `nextval`, `currval`, `setval`, `lastval` and
//! `pg_get_serial_sequence`, and the two that read a sequence as a relation. `nextval` and `setval` write (the engine reserves values
//! durably, see `engine::catalog::sequences`) and are volatile, computed for every row
//! as PostgreSQL computes them. `currval` and `lastval` answer from what this session's
//! `nextval` calls returned.

use super::udf::string;
use crate::engine::{Engine, SequenceMeta};
use crate::sql::pg_catalog::sequence_oid;
use crate::sql::sequence_values::SequenceValues;
use crate::sql::sql_types::SqlError;
use crate::sqlstate::SqlState;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use sqlparser::ast::{self, Query};
use std::ops::ControlFlow;
use std::sync::Arc;

/// One of the functions, with what it needs to answer.
struct SequenceFunction {
    name: &'static str,
    signature: Signature,
    engine: Arc<Engine>,
    instance: String,
    values: Arc<SequenceValues>,
}

impl std::fmt::Debug for SequenceFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SequenceFunction({})", self.name)
    }
}

impl PartialEq for SequenceFunction {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for SequenceFunction {}
impl std::hash::Hash for SequenceFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}

fn failed(error: SqlError) -> DataFusionError {
    DataFusionError::External(Box::new(error))
}

/// A relation name as a `regclass` text gives it: `s`, `public.s`, `"MixedCase"`.
fn relation_name(text: &str) -> String {
    let text = text.trim();
    let text = text
        .strip_prefix("public.")
        .or_else(|| text.strip_prefix("\"public\"."))
        .unwrap_or(text);
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(quoted) => quoted.replace("\"\"", "\""),
        None => text.to_lowercase(),
    }
}

impl SequenceFunction {
    fn sequence(&self, argument: &ScalarValue) -> Result<Option<Arc<SequenceMeta>>> {
        let oid = match argument {
            ScalarValue::Int32(Some(oid)) => Some(i64::from(*oid)),
            ScalarValue::Int64(Some(oid)) => Some(*oid),
            ScalarValue::UInt32(Some(oid)) => Some(i64::from(*oid)),
            // `'s'::regclass` arrives as its OID's text: no relation name is all digits.
            other => string(Some(other)).and_then(|text| text.trim().parse::<i64>().ok()),
        };
        if let Some(oid) = oid {
            return self.sequence_by_oid(oid).map(Some);
        }
        let Some(name) = string(Some(argument)) else {
            return Ok(None);
        };
        let name = relation_name(name);
        self.engine
            .sequence(&self.instance, &name)
            .map(Some)
            .map_err(|e| failed(e.into()))
    }

    /// The sequence a `regclass` OID names (`nextval('s'::regclass)`, as pg_dump
    /// writes a SERIAL column's default).
    fn sequence_by_oid(&self, oid: i64) -> Result<Arc<SequenceMeta>> {
        self.engine
            .sequences(&self.instance)
            .into_iter()
            .find(|sequence| sequence_oid(sequence) == oid)
            .ok_or_else(|| {
                failed(SqlError::new(
                    SqlState::UndefinedTable,
                    format!("no sequence has OID {oid}"),
                ))
            })
    }

    /// The function's value for one row's arguments.
    async fn call(&self, args: &[ScalarValue]) -> Result<ScalarValue> {
        let first = args.first().cloned().unwrap_or(ScalarValue::Null);
        if matches!(self.name, "nextval" | "setval") && self.values.read_only() {
            return Err(failed(SqlError::new(
                SqlState::ReadOnlySqlTransaction,
                format!("cannot execute {}() in a read-only transaction", self.name),
            )));
        }
        Ok(match self.name {
            "nextval" => {
                let Some(sequence) = self.sequence(&first)? else {
                    return Ok(ScalarValue::Int64(None));
                };
                let value = self
                    .engine
                    .nextval(&sequence)
                    .await
                    .map_err(|e| failed(e.into()))?;
                self.values.took(&sequence.spec.name, value);
                ScalarValue::Int64(Some(value))
            }
            "setval" => {
                let Some(sequence) = self.sequence(&first)? else {
                    return Ok(ScalarValue::Int64(None));
                };
                let value = match args.get(1).map(|v| v.cast_to(&DataType::Int64)) {
                    Some(Ok(ScalarValue::Int64(Some(v)))) => v,
                    _ => return Ok(ScalarValue::Int64(None)),
                };
                let called = !matches!(args.get(2), Some(ScalarValue::Boolean(Some(false))));
                self.engine
                    .setval(&sequence, value, called)
                    .await
                    .map_err(|e| failed(e.into()))?;
                if called {
                    self.values.set(&sequence.spec.name, value);
                }
                ScalarValue::Int64(Some(value))
            }
            "currval" => {
                let Some(sequence) = self.sequence(&first)? else {
                    return Ok(ScalarValue::Int64(None));
                };
                let value = self.values.current(&sequence.spec.name);
                ScalarValue::Int64(Some(value.ok_or_else(|| {
                    failed(SqlError::new(
                        SqlState::ObjectNotInPrerequisiteState,
                        format!(
                            "currval of sequence \"{}\" is not yet defined in this session",
                            sequence.spec.name
                        ),
                    ))
                })?))
            }
            "lastval" => ScalarValue::Int64(Some(self.values.last().ok_or_else(|| {
                failed(SqlError::new(
                    SqlState::ObjectNotInPrerequisiteState,
                    "lastval is not yet defined in this session",
                ))
            })?)),
            "pgwide_sequence_last_value" | "pgwide_sequence_is_called" => {
                let Some(sequence) = self.sequence(&first)? else {
                    return Ok(ScalarValue::Int64(None));
                };
                let (last, called) = self
                    .engine
                    .sequence_state(&sequence)
                    .await
                    .map_err(|e| failed(e.into()))?;
                match self.name {
                    "pgwide_sequence_is_called" => ScalarValue::Boolean(Some(called)),
                    _ => ScalarValue::Int64(Some(last)),
                }
            }
            _ => self.serial_sequence(args)?,
        })
    }

    /// `pg_get_serial_sequence(table, column)`: the sequence generating the column,
    /// schema-qualified, or NULL.
    fn serial_sequence(&self, args: &[ScalarValue]) -> Result<ScalarValue> {
        let (Some(table), Some(column)) = (string(args.first()), string(args.get(1))) else {
            return Ok(ScalarValue::Utf8(None));
        };
        let table = self
            .engine
            .table(&self.instance, &relation_name(table))
            .map_err(|e| failed(e.into()))?;
        let column = relation_name(column);
        if table.pk_index(&column).is_none() && table.column(&column).is_none() {
            return Err(failed(SqlError::new(
                SqlState::UndefinedColumn,
                format!(
                    "column \"{column}\" of relation \"{}\" does not exist",
                    table.name
                ),
            )));
        }
        Ok(ScalarValue::Utf8(
            table
                .generated
                .get(&column)
                .map(|g| format!("public.{}", g.sequence)),
        ))
    }
}

impl ScalarUDFImpl for SequenceFunction {
    fn name(&self) -> &str {
        self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(match self.name {
            "pg_get_serial_sequence" => DataType::Utf8,
            "pgwide_sequence_is_called" => DataType::Boolean,
            _ => DataType::Int64,
        })
    }
    /// Once per row, in order, as PostgreSQL evaluates them; a constant argument is
    /// the same for every row. DataFusion calls functions synchronously wherever they
    /// sit (its asynchronous ones cannot take a scalar subquery or a nested call as an
    /// argument), so the engine's write completes on this thread: the sled backend's
    /// writes wait for its own sync thread, never for this one.
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let mut out = Vec::with_capacity(args.number_rows);
        for row in 0..args.number_rows {
            let values = args
                .args
                .iter()
                .map(|arg| match arg {
                    ColumnarValue::Scalar(value) => Ok(value.clone()),
                    ColumnarValue::Array(array) => ScalarValue::try_from_array(array, row),
                })
                .collect::<Result<Vec<_>>>()?;
            out.push(futures::executor::block_on(self.call(&values))?);
        }
        let returns = self.return_type(&[])?;
        if out.is_empty() {
            return Ok(ColumnarValue::Array(
                datafusion::arrow::array::new_empty_array(&returns),
            ));
        }
        Ok(ColumnarValue::Array(ScalarValue::iter_to_array(out)?))
    }
}

/// Gives every `nextval(name)` call of `query` its own number as a second argument:
/// DataFusion computes equal calls of a row once, and two `nextval('s')` in one row
/// must take two values, as in PostgreSQL.
pub fn number_calls(query: &mut Query) {
    let mut count = 0i64;
    let _ = ast::visit_expressions_mut(query, |expr| {
        if let ast::Expr::Function(function) = expr {
            let is_nextval = function
                .name
                .0
                .last()
                .and_then(|part| part.as_ident())
                .is_some_and(|ident| ident.value.eq_ignore_ascii_case("nextval"));
            if let (true, ast::FunctionArguments::List(list)) = (is_nextval, &mut function.args) {
                if list.args.len() == 1 {
                    count += 1;
                    list.args
                        .push(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
                            ast::Expr::value(ast::Value::Number(count.to_string(), false)),
                        )));
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// Registers the functions for a session on `instance`.
pub fn register(
    state: &mut SessionState,
    engine: &Arc<Engine>,
    instance: &str,
    values: &Arc<SequenceValues>,
) -> Result<()> {
    let text = || TypeSignature::Exact(vec![DataType::Utf8]);
    // `nextval(name, n)`: the call's number (`number_calls`).
    let numbered = TypeSignature::Exact(vec![DataType::Utf8, DataType::Int64]);
    for (name, signature) in [
        (
            "nextval",
            Signature::one_of(vec![text(), numbered], Volatility::Volatile),
        ),
        (
            "currval",
            Signature::one_of(vec![text()], Volatility::Volatile),
        ),
        (
            "lastval",
            Signature::one_of(vec![TypeSignature::Nullary], Volatility::Volatile),
        ),
        (
            "setval",
            Signature::one_of(
                vec![
                    TypeSignature::Exact(vec![DataType::Utf8, DataType::Int64]),
                    TypeSignature::Exact(vec![DataType::Utf8, DataType::Int64, DataType::Boolean]),
                ],
                Volatility::Volatile,
            ),
        ),
        // A sequence read as a relation (`SELECT last_value, is_called FROM s`, see
        // `views`).
        (
            "pgwide_sequence_last_value",
            Signature::one_of(vec![text()], Volatility::Volatile),
        ),
        (
            "pgwide_sequence_is_called",
            Signature::one_of(vec![text()], Volatility::Volatile),
        ),
        (
            "pg_get_serial_sequence",
            Signature::one_of(
                vec![TypeSignature::Exact(vec![DataType::Utf8, DataType::Utf8])],
                Volatility::Stable,
            ),
        ),
    ] {
        let function = SequenceFunction {
            name,
            signature,
            engine: Arc::clone(engine),
            instance: instance.to_string(),
            values: Arc::clone(values),
        };
        let udf = ScalarUDF::new_from_impl(function);
        datafusion::execution::FunctionRegistry::register_udf(state, Arc::new(udf))?;
    }
    Ok(())
}
