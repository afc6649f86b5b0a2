//! The PostgreSQL system functions clients call while introspecting (`format_type`,
//! `pg_get_indexdef`, `pg_table_is_visible`, ...), as DataFusion scalar functions that
//! answer from the engine's catalog. Each is a row-by-row closure: catalog queries are
//! small, and one generic wrapper keeps every function a line or two.

use crate::engine::Engine;
use crate::sql::pg_catalog::{self, OWNER};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::execution::session_state::SessionState;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use std::sync::Arc;

pub(super) type Body = dyn Fn(&[ScalarValue]) -> ScalarValue + Send + Sync;

/// A function of any arguments computed one row at a time.
struct PgFunction {
    name: String,
    signature: Signature,
    returns: DataType,
    body: Arc<Body>,
}

impl std::fmt::Debug for PgFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgFunction({})", self.name)
    }
}

impl PartialEq for PgFunction {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for PgFunction {}
impl std::hash::Hash for PgFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}

impl ScalarUDFImpl for PgFunction {
    fn name(&self) -> &str {
        &self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(self.returns.clone())
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        row_by_row(args, &self.returns, |values| Ok((self.body)(values)))
    }
}

/// Computes a function one row at a time with `body`: once for scalar arguments.
pub(super) fn row_by_row(
    args: ScalarFunctionArgs,
    returns: &DataType,
    body: impl Fn(&[ScalarValue]) -> Result<ScalarValue>,
) -> Result<ColumnarValue> {
    let rows = args.number_rows;
    let scalar = args
        .args
        .iter()
        .all(|a| matches!(a, ColumnarValue::Scalar(_)));
    let arrays = ColumnarValue::values_to_arrays(&args.args)?;
    let count = if scalar { 1 } else { rows };
    let mut out = Vec::with_capacity(count);
    for row in 0..count {
        let values = arrays
            .iter()
            .map(|a| ScalarValue::try_from_array(a, row))
            .collect::<Result<Vec<_>>>()?;
        out.push(body(&values)?);
    }
    if scalar {
        let value = out
            .pop()
            .map_or_else(|| ScalarValue::try_from(returns), Ok)?;
        return Ok(ColumnarValue::Scalar(value));
    }
    if out.is_empty() {
        return Ok(ColumnarValue::Array(
            datafusion::arrow::array::new_empty_array(returns),
        ));
    }
    Ok(ColumnarValue::Array(ScalarValue::iter_to_array(out)?))
}

pub(super) fn int(value: Option<&ScalarValue>) -> Option<i64> {
    match value? {
        ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) => s.parse().ok(),
        v => v.cast_to(&DataType::Int64).ok().and_then(|v| match v {
            ScalarValue::Int64(i) => i,
            _ => None,
        }),
    }
}

pub(super) fn text(value: Option<String>) -> ScalarValue {
    ScalarValue::Utf8(value)
}

/// `quote_ident`: quotes unless the name is a plain lower-case identifier.
pub fn quote_ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// A function of any arguments named `name`, computed row by row by `body`.
pub(super) fn udf(name: &str, returns: DataType, body: Arc<Body>) -> ScalarUDF {
    ScalarUDF::new_from_impl(PgFunction {
        name: name.to_string(),
        signature: Signature::one_of(
            vec![TypeSignature::Nullary, TypeSignature::VariadicAny],
            Volatility::Stable,
        ),
        returns,
        body,
    })
}

/// The text of a string argument.
pub(super) fn string(value: Option<&ScalarValue>) -> Option<&str> {
    match value? {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)) => Some(s),
        _ => None,
    }
}

/// Registers every function on `state`, answering for `instance` and session `user`.
pub fn register(
    state: &mut SessionState,
    engine: Arc<Engine>,
    instance: &str,
    user: &str,
    settings: super::pg_settings::SharedSettings,
) -> Result<()> {
    super::pg_arrays::register(state)?;
    super::pg_session::register(state, instance, user, settings)?;
    let mut add = |name: &str, returns: DataType, body: Arc<Body>| -> Result<()> {
        state
            .register_udf(Arc::new(udf(name, returns, body)))
            .map(|_| ())
    };
    let yes: Arc<Body> = Arc::new(|_| ScalarValue::Boolean(Some(true)));
    for name in [
        "pg_table_is_visible",
        "pg_type_is_visible",
        "pg_function_is_visible",
        "has_table_privilege",
        "has_schema_privilege",
        "has_database_privilege",
        "has_column_privilege",
        "has_any_column_privilege",
        "has_function_privilege",
        "has_sequence_privilege",
        "pg_has_role",
    ] {
        add(name, DataType::Boolean, Arc::clone(&yes))?;
    }
    let null: Arc<Body> = Arc::new(|_| text(None));
    for name in [
        "pg_get_expr",
        "obj_description",
        "col_description",
        "shobj_description",
        "pg_get_viewdef",
        "pg_get_triggerdef",
        "pg_get_partkeydef",
    ] {
        add(name, DataType::Utf8, Arc::clone(&null))?;
    }
    // Per-object statistics pgwide does not keep (index scans, dead tuples).
    for name in ["pg_stat_get_numscans", "pg_stat_get_dead_tuples"] {
        add(
            name,
            DataType::Int64,
            Arc::new(|_| ScalarValue::Int64(Some(0))),
        )?;
    }
    add(
        "pg_relation_is_publishable",
        DataType::Boolean,
        Arc::new(|_| ScalarValue::Boolean(Some(false))),
    )?;
    // Sizes: the engine does not track bytes per table yet, so psql's `\dt+` shows 0.
    for name in [
        "pg_table_size",
        "pg_relation_size",
        "pg_total_relation_size",
        "pg_indexes_size",
        "pg_database_size",
    ] {
        add(
            name,
            DataType::Int64,
            Arc::new(|_| ScalarValue::Int64(Some(0))),
        )?;
    }
    add(
        "pg_size_pretty",
        DataType::Utf8,
        Arc::new(|a| text(int(a.first()).map(|bytes| format!("{bytes} bytes")))),
    )?;
    add(
        "format_type",
        DataType::Utf8,
        Arc::new(|a| {
            text(int(a.first()).map(|oid| {
                pg_catalog::format_type(oid).map_or_else(|| "???".to_string(), String::from)
            }))
        }),
    )?;
    add(
        "pg_get_userbyid",
        DataType::Utf8,
        Arc::new(|_| text(Some(OWNER.into()))),
    )?;
    add(
        "pg_encoding_to_char",
        DataType::Utf8,
        Arc::new(|_| text(Some("UTF8".into()))),
    )?;
    add(
        "current_schema",
        DataType::Utf8,
        Arc::new(|_| text(Some("public".into()))),
    )?;
    add(
        "current_schemas",
        DataType::List(Arc::new(
            datafusion::arrow::datatypes::Field::new_list_field(DataType::Utf8, true),
        )),
        // A real text[], so clients can index it (pgjdbc: `current_schemas(true)[1]`).
        Arc::new(|_| {
            let names = [pg_catalog::PG_CATALOG, "public"].map(|n| text(Some(n.into())));
            ScalarValue::List(ScalarValue::new_list_nullable(&names, &DataType::Utf8))
        }),
    )?;
    let db = instance.to_string();
    add(
        "current_database",
        DataType::Utf8,
        Arc::new(move |_| text(Some(db.clone()))),
    )?;
    add(
        "version",
        DataType::Utf8,
        Arc::new(|_| {
            text(Some(format!(
                "PostgreSQL {} (pgwide {})",
                crate::sql::SERVER_VERSION,
                env!("CARGO_PKG_VERSION")
            )))
        }),
    )?;
    add(
        "quote_ident",
        DataType::Utf8,
        Arc::new(|a| {
            text(match a.first() {
                Some(ScalarValue::Utf8(Some(s))) | Some(ScalarValue::Utf8View(Some(s))) => {
                    Some(quote_ident(s))
                }
                _ => None,
            })
        }),
    )?;
    // Index and constraint definitions: pgwide's only index is the primary key.
    let (e, i) = (Arc::clone(&engine), instance.to_string());
    add(
        "pg_get_indexdef",
        DataType::Utf8,
        // `pg_get_indexdef(oid, column, pretty)` with a column number above 0 is that
        // index column's name alone (pgjdbc's getIndexInfo reads it so).
        Arc::new(move |a| {
            let column = int(a.get(1)).unwrap_or(0);
            text(
                int(a.first())
                    .and_then(|oid| pg_catalog::table_by_oid(&e, &i, oid))
                    .and_then(|(table, _)| {
                        let pk = pg_catalog::pk_columns(&table);
                        if column > 0 {
                            let index = usize::try_from(column - 1).ok()?;
                            return pk.get(index).map(|c| quote_ident(c));
                        }
                        Some(format!(
                            "CREATE UNIQUE INDEX {} ON public.{} USING btree ({})",
                            quote_ident(&pg_catalog::pkey_name(&table)),
                            quote_ident(&table.name),
                            idents(&pk)
                        ))
                    }),
            )
        }),
    )?;
    let (e, i) = (Arc::clone(&engine), instance.to_string());
    add(
        "pg_get_constraintdef",
        DataType::Utf8,
        Arc::new(move |a| {
            text(
                int(a.first())
                    .and_then(|oid| pg_catalog::table_by_oid(&e, &i, oid))
                    .map(|(table, _)| {
                        format!("PRIMARY KEY ({})", idents(&pg_catalog::pk_columns(&table)))
                    }),
            )
        }),
    )?;
    // `x::regclass` on a column becomes this (see `pg_compat`): the OID printed as a name.
    let e2 = Arc::clone(&engine);
    let (e, i) = (engine, instance.to_string());
    add(
        "pgwide_regclass_name",
        DataType::Utf8,
        Arc::new(move |a| {
            // A name (`'t'::regclass::text`) prints as the name it resolved from.
            if let Some(ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s))) = a.first() {
                return text(Some(s.strip_prefix("public.").unwrap_or(s).to_string()));
            }
            text(int(a.first()).map(|oid| {
                pg_catalog::table_by_oid(&e, &i, oid).map_or_else(
                    || oid.to_string(),
                    |(table, index)| {
                        if index {
                            pg_catalog::pkey_name(&table)
                        } else {
                            table.name.clone()
                        }
                    },
                )
            }))
        }),
    )?;
    // `x::regclass`: a name (`t`, `public.t`, `"T"`) resolves to its table's OID, an OID
    // stays itself; an unknown name is NULL where PostgreSQL would raise an error.
    let (e, i) = (Arc::clone(&e2), instance.to_string());
    add(
        "pgwide_regclass",
        DataType::Int64,
        Arc::new(move |a| {
            ScalarValue::Int64(match a.first() {
                Some(ScalarValue::Utf8(Some(s))) | Some(ScalarValue::Utf8View(Some(s))) => {
                    let name = s.strip_prefix("public.").unwrap_or(s);
                    let name = match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
                        Some(quoted) => quoted.replace("\"\"", "\""),
                        None => name.to_lowercase(),
                    };
                    e.table(&i, &name).ok().map(|t| pg_catalog::table_oid(&t))
                }
                other => int(other),
            })
        }),
    )?;
    // `to_regtype('name')`: the type's OID, NULL for a type pgwide does not have (psycopg's
    // TypeInfo.fetch, which SQLAlchemy runs for hstore on connect).
    add(
        "to_regtype",
        DataType::Int64,
        Arc::new(|a| {
            ScalarValue::Int64(match a.first() {
                Some(ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s))) => {
                    pg_catalog::type_oid_by_name(s)
                }
                other => int(other),
            })
        }),
    )?;
    let (e, i) = (Arc::clone(&e2), instance.to_string());
    add(
        "to_regclass",
        DataType::Int64,
        Arc::new(move |a| {
            ScalarValue::Int64(match a.first() {
                Some(ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s))) => {
                    let name = s.strip_prefix("public.").unwrap_or(s);
                    let name = match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
                        Some(quoted) => quoted.replace("\"\"", "\""),
                        None => name.to_lowercase(),
                    };
                    e.table(&i, &name).ok().map(|t| pg_catalog::table_oid(&t))
                }
                _ => None,
            })
        }),
    )?;
    add(
        "pgwide_regtype_name",
        DataType::Utf8,
        Arc::new(|a| {
            text(int(a.first()).map(|oid| {
                pg_catalog::format_type(oid).map_or_else(|| oid.to_string(), String::from)
            }))
        }),
    )?;
    let sleep = datafusion::logical_expr::async_udf::AsyncScalarUDF::new(Arc::new(PgSleep {
        signature: Signature::exact(vec![DataType::Float64], Volatility::Volatile),
    }));
    state.register_udf(Arc::new(sleep.into_scalar_udf()))?;
    Ok(())
}

fn idents(names: &[String]) -> String {
    names
        .iter()
        .map(|n| quote_ident(n))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `pg_sleep(seconds)`: waits without holding a thread, so a cancel or the statement
/// timeout interrupts it (the wait is dropped with the query). Returns PostgreSQL's
/// `void`, an empty value.
#[derive(Debug, PartialEq, Eq, Hash)]
struct PgSleep {
    signature: Signature,
}

impl ScalarUDFImpl for PgSleep {
    fn name(&self) -> &str {
        "pg_sleep"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }
    fn invoke_with_args(&self, _: ScalarFunctionArgs) -> Result<ColumnarValue> {
        datafusion::common::internal_err!("pg_sleep runs asynchronously")
    }
}

#[async_trait::async_trait]
impl datafusion::logical_expr::async_udf::AsyncScalarUDFImpl for PgSleep {
    async fn invoke_async_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        // One sleep per row, like PostgreSQL evaluating the function for each row.
        let mut total = 0.0f64;
        if let Some(seconds) = arrays.first() {
            for row in 0..seconds.len() {
                if let ScalarValue::Float64(Some(s)) = ScalarValue::try_from_array(seconds, row)? {
                    if s.is_finite() && s > 0.0 {
                        total += s;
                    }
                }
            }
        }
        // Bounded so an absurd argument cannot overflow the timer.
        let wait = std::time::Duration::from_secs_f64(total.min(1e9));
        tokio::time::sleep(wait).await;
        let empty = ScalarValue::Utf8(Some(String::new()));
        Ok(ColumnarValue::Array(empty.to_array_of_size(rows)?))
    }
}
