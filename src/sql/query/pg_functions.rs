//! The PostgreSQL system functions clients call while introspecting (`format_type`,
//! `pg_get_indexdef`, `pg_table_is_visible`, ...), as DataFusion scalar functions that
//! answer from the engine's catalog. Each is a row-by-row closure: catalog queries are
//! small, and one generic wrapper keeps every function a line or two.

use super::udf::{int, text, udf, Body};
use crate::engine::Engine;
use crate::sql::expr::quote_ident;
use crate::sql::pg_catalog::{self, OWNER};
use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::execution::session_state::SessionState;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// Registers every function on `state`, answering for `instance` and session `user`.
pub fn register(
    state: &mut SessionState,
    engine: Arc<Engine>,
    instance: &str,
    user: &str,
    access: &crate::auth::Access,
    settings: super::pg_settings::SharedSettings,
    sequence_values: &Arc<crate::sql::sequence_values::SequenceValues>,
) -> Result<()> {
    super::pg_arrays::register(state)?;
    super::pg_char_casts::register(state)?;
    super::pg_enum_casts::register(state, &engine)?;
    super::pg_session::register(state, instance, user, settings.clone())?;
    super::pg_time::register(state)?;
    super::pg_datetime_functions::register(state)?;
    super::pg_time_text::register(state)?;
    let public_on_path: PublicOnPath = {
        let (settings, user) = (settings.clone(), user.to_string());
        Arc::new(move || {
            let search_path = settings.get("search_path").unwrap_or_default();
            super::pg_session::schema_path(&search_path, &user, false)
                .iter()
                .any(|schema| schema == "public")
        })
    };
    register_answers(state, &engine, instance, Arc::clone(&public_on_path))?;
    super::pg_privileges::register(state, &engine, instance, user, access)?;
    super::pg_sizes::register(state, &engine, instance)?;
    register_definitions(state, &engine, instance, public_on_path)?;
    register_reg_casts(state, &engine, instance)?;
    super::pg_sequences::register(state, &engine, instance, sequence_values)?;
    let sleep = datafusion::logical_expr::async_udf::AsyncScalarUDF::new(Arc::new(PgSleep {
        signature: Signature::exact(vec![DataType::Float64], Volatility::Volatile),
    }));
    state.register_udf(Arc::new(sleep.into_scalar_udf()))?;
    Ok(())
}

/// Functions whose answer pgwide knows without looking anything up: visibility (every
/// relation is on the search path), descriptions and statistics it does not keep, and
/// the session's database, schema and server version. The type names `format_type`
/// gives are the exception: an enum type's is the database's (`engine`).
/// Whether schema `public` is on the session's search path now: the definitions the
/// functions print name its relations unqualified only then (`pg_qualified_names`).
type PublicOnPath = Arc<dyn Fn() -> bool + Send + Sync>;

fn register_answers(
    state: &mut SessionState,
    engine: &Arc<Engine>,
    instance: &str,
    public_on_path: PublicOnPath,
) -> Result<()> {
    let mut add = |name: &str, returns: DataType, body: Arc<Body>| {
        register_row_function(state, name, returns, body)
    };
    let yes: Arc<Body> = Arc::new(|_| ScalarValue::Boolean(Some(true)));
    for name in [
        "pg_table_is_visible",
        "pg_type_is_visible",
        "pg_function_is_visible",
        // Everything pgwide has is in a schema on the search path.
        "pg_collation_is_visible",
        "pg_ts_config_is_visible",
        "pg_opclass_is_visible",
        "pg_operator_is_visible",
        "pg_conversion_is_visible",
    ] {
        add(name, DataType::Boolean, Arc::clone(&yes))?;
    }
    // The type of the argument as PostgreSQL names it (`integer`, `text[]`); an untyped
    // NULL is `unknown`, as in PostgreSQL.
    add(
        "pg_typeof",
        DataType::Utf8,
        Arc::new(|args| {
            let name = match args.first().map(ScalarValue::data_type) {
                Some(DataType::Null) | None => "unknown",
                Some(ty) => super::convert::sql_type(&ty).name(),
            };
            text(Some(name.to_string()))
        }),
    )?;
    let null: Arc<Body> = Arc::new(|_| text(None));
    // `pg_attrdef.adbin` is the expression's text already.
    add(
        "pg_get_expr",
        DataType::Utf8,
        Arc::new(move |args| match args.first() {
            Some(ScalarValue::Utf8(Some(expr))) if !public_on_path() => {
                text(Some(super::pg_qualified_names::qualified_expression(expr)))
            }
            Some(ScalarValue::Utf8(expr)) => text(expr.clone()),
            _ => text(None),
        }),
    )?;
    for name in [
        // Of a function: pgwide lists none in pg_proc.
        "pg_get_function_result",
        "pg_get_function_arguments",
        "pg_get_function_identity_arguments",
        "shobj_description",
        "pg_get_triggerdef",
        "pg_get_partkeydef",
    ] {
        add(name, DataType::Utf8, Arc::clone(&null))?;
    }
    add(
        "acldefault",
        DataType::new_list(DataType::Utf8, true),
        Arc::new(|args| {
            let items = match (args.first(), args.get(1)) {
                (Some(ScalarValue::Utf8(Some(kind))), Some(owner)) => {
                    let owner = match owner {
                        ScalarValue::Int64(Some(oid)) if *oid == pg_catalog::OWNER_OID => {
                            OWNER.to_string()
                        }
                        // Everything pgwide lists is the owner's; another role is named
                        // by its OID, as PostgreSQL names a role it cannot find.
                        other => other.to_string(),
                    };
                    default_acl(kind, &owner)
                }
                _ => None,
            };
            match items {
                Some(items) => ScalarValue::List(ScalarValue::new_list_nullable(
                    &items.into_iter().map(|i| text(Some(i))).collect::<Vec<_>>(),
                    &DataType::Utf8,
                )),
                None => ScalarValue::try_from(DataType::new_list(DataType::Utf8, true))
                    .unwrap_or(ScalarValue::Null),
            }
        }),
    )?;
    // The default tablespaces (the only ones) have no directory of their own.
    add(
        "pg_tablespace_location",
        DataType::Utf8,
        Arc::new(|_| text(Some(String::new()))),
    )?;
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
    add(
        "pg_size_pretty",
        DataType::Utf8,
        Arc::new(|a| text(super::pg_size_pretty::of_value(a.first()))),
    )?;
    let (e, i) = (Arc::clone(engine), instance.to_string());
    add(
        "format_type",
        DataType::Utf8,
        Arc::new(move |a| {
            text(int(a.first()).map(|oid| {
                pg_catalog::format_type_with_typmod(oid, int(a.get(1)))
                    .or_else(|| pg_catalog::enum_type_name(&e, &i, oid))
                    .unwrap_or_else(|| "???".to_string())
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
    // The one encoding pgwide speaks, by PostgreSQL's number for it (6); any other
    // name is -1, as PostgreSQL answers an unknown one.
    add(
        "pg_char_to_encoding",
        DataType::Int32,
        Arc::new(|a| {
            ScalarValue::Int32(super::udf::string(a.first()).map(|name| {
                match name.to_ascii_uppercase().replace(['-', '_'], "").as_str() {
                    "UTF8" | "UNICODE" => 6,
                    "SQLASCII" => 0,
                    _ => -1,
                }
            }))
        }),
    )?;
    add(
        "getdatabaseencoding",
        DataType::Utf8,
        Arc::new(|_| text(Some("UTF8".into()))),
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
    Ok(())
}

/// Index and constraint definitions: the primary key's index and the secondary
/// indexes.
fn register_definitions(
    state: &mut SessionState,
    engine: &Arc<Engine>,
    instance: &str,
    public_on_path: PublicOnPath,
) -> Result<()> {
    let mut add = |name: &str, returns: DataType, body: Arc<Body>| {
        register_row_function(state, name, returns, body)
    };
    let (e, i) = (Arc::clone(engine), instance.to_string());
    add(
        "pg_get_indexdef",
        DataType::Utf8,
        // `pg_get_indexdef(oid, column, pretty)` with a column number above 0 is that
        // index column's name alone (pgjdbc's getIndexInfo reads it so).
        Arc::new(move |a| {
            let column = int(a.get(1)).unwrap_or(0);
            let Some(oid) = int(a.first()) else {
                return text(None);
            };
            let (columns, definition) = match pg_catalog::index_by_oid(&e, &i, oid) {
                Some((table, index)) => (
                    index.columns.clone(),
                    pg_catalog::index_definition(&table, Some(&index)),
                ),
                None => match pg_catalog::table_by_oid(&e, &i, oid) {
                    Some((table, _)) => (
                        pg_catalog::pk_columns(&table),
                        pg_catalog::index_definition(&table, None),
                    ),
                    None => return text(None),
                },
            };
            if column > 0 {
                let at = usize::try_from(column - 1).ok();
                return text(at.and_then(|at| columns.get(at)).map(|c| quote_ident(c)));
            }
            text(Some(definition))
        }),
    )?;
    // A view's definition, by OID or by name (`pg_get_viewdef('v')`); the second
    // argument, pretty-printing or a line width, changes nothing pgwide shows.
    let (e, i, on_path) = (
        Arc::clone(engine),
        instance.to_string(),
        Arc::clone(&public_on_path),
    );
    add(
        "pg_get_viewdef",
        DataType::Utf8,
        Arc::new(move |a| {
            let definition = match a.first() {
                Some(ScalarValue::Utf8(Some(name)) | ScalarValue::Utf8View(Some(name))) => {
                    pg_catalog::view_definition(&e, &i, None, Some(name))
                }
                first => pg_catalog::view_definition(&e, &i, int(first), None),
            };
            text(match on_path() {
                true => definition,
                false => definition.map(|d| super::pg_qualified_names::qualified_view_query(&d)),
            })
        }),
    )?;
    // Comments: only tables and their columns take one (`COMMENT ON`), so an OID of
    // anything else, or a catalog other than `pg_class`, has none.
    let (e, i) = (Arc::clone(engine), instance.to_string());
    add(
        "obj_description",
        DataType::Utf8,
        Arc::new(move |a| {
            let of_pg_class = match a.get(1) {
                None => true,
                Some(ScalarValue::Utf8(Some(c)) | ScalarValue::Utf8View(Some(c))) => {
                    c == "pg_class" || c == "pg_catalog.pg_class"
                }
                Some(_) => false,
            };
            let table = int(a.first()).and_then(|oid| pg_catalog::table_by_oid(&e, &i, oid));
            match table {
                Some((table, false)) if of_pg_class => text(pg_catalog::comment(&table, 0)),
                _ => text(None),
            }
        }),
    )?;
    let (e, i) = (Arc::clone(engine), instance.to_string());
    add(
        "col_description",
        DataType::Utf8,
        Arc::new(move |a| {
            let table = int(a.first()).and_then(|oid| pg_catalog::table_by_oid(&e, &i, oid));
            match (table, int(a.get(1))) {
                (Some((table, false)), Some(attnum)) if attnum > 0 => {
                    text(pg_catalog::comment(&table, attnum))
                }
                _ => text(None),
            }
        }),
    )?;
    let (e, i) = (Arc::clone(engine), instance.to_string());
    add(
        "pg_get_constraintdef",
        DataType::Utf8,
        Arc::new(move |a| {
            let Some(oid) = int(a.first()) else {
                return text(None);
            };
            if let Some((_, fk)) = pg_catalog::foreign_key_by_oid(&e, &i, oid) {
                let definition = pg_catalog::foreign_key_definition(&fk);
                return text(Some(match public_on_path() {
                    true => definition,
                    false => super::pg_qualified_names::qualified_references(&definition),
                }));
            }
            if let Some((_, check)) = pg_catalog::check_by_oid(&e, &i, oid) {
                let pretty = matches!(a.get(1), Some(ScalarValue::Boolean(Some(true))));
                return text(Some(pg_catalog::check_definition(&check, pretty)));
            }
            // A UNIQUE constraint's OID is one above its index's.
            if let Some((_, index)) = pg_catalog::index_by_oid(&e, &i, oid - 1) {
                return text(
                    index
                        .constraint
                        .then(|| format!("UNIQUE ({})", idents(&index.columns))),
                );
            }
            text(pg_catalog::table_by_oid(&e, &i, oid).map(|(table, _)| {
                format!("PRIMARY KEY ({})", idents(&pg_catalog::pk_columns(&table)))
            }))
        }),
    )?;
    Ok(())
}

/// Casts to and from `regclass` and `regtype`, between names and OIDs.
fn register_reg_casts(
    state: &mut SessionState,
    engine: &Arc<Engine>,
    instance: &str,
) -> Result<()> {
    let mut add = |name: &str, returns: DataType, body: Arc<Body>| {
        register_row_function(state, name, returns, body)
    };
    // `x::regclass` on a column becomes this (see `pg_compat`): the OID printed as a name.
    let (e, i) = (Arc::clone(engine), instance.to_string());
    add(
        "pgwide_regclass_name",
        DataType::Utf8,
        Arc::new(move |a| {
            // A name (`'t'::regclass::text`) prints as the name it resolved from.
            if let Some(ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s))) = a.first() {
                return text(Some(s.strip_prefix("public.").unwrap_or(s).to_string()));
            }
            text(int(a.first()).map(|oid| {
                let sequence = || {
                    e.sequences(&i)
                        .into_iter()
                        .find(|s| pg_catalog::sequence_oid(s) == oid)
                        .map(|s| s.spec.name.clone())
                };
                let index = || pg_catalog::index_by_oid(&e, &i, oid).map(|(_, index)| index.name);
                pg_catalog::table_by_oid(&e, &i, oid).map_or_else(
                    || sequence().or_else(index).unwrap_or_else(|| oid.to_string()),
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
    // (or its text, `'16388'`, as psql's `\d` writes it) stays itself; an unknown name is
    // NULL where PostgreSQL would raise an error.
    let (e, i) = (Arc::clone(engine), instance.to_string());
    add(
        "pgwide_regclass",
        DataType::Int64,
        Arc::new(move |a| {
            ScalarValue::Int64(match a.first() {
                Some(ScalarValue::Utf8(Some(s))) | Some(ScalarValue::Utf8View(Some(s))) => {
                    match s.bytes().all(|b| b.is_ascii_digit()) && !s.is_empty() {
                        true => s.parse().ok(),
                        false => table_oid_by_name(&e, &i, s),
                    }
                }
                other => int(other),
            })
        }),
    )?;
    // `to_regtype('name')`: the type's OID, NULL for a type pgwide does not have (psycopg's
    // TypeInfo.fetch, which SQLAlchemy runs for hstore on connect).
    let (e, i) = (Arc::clone(engine), instance.to_string());
    add(
        "to_regtype",
        DataType::Int64,
        Arc::new(move |a| {
            ScalarValue::Int64(match a.first() {
                Some(ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s))) => {
                    pg_catalog::type_oid_by_name(s)
                        .or_else(|| pg_catalog::enum_type_oid_by_name(&e, &i, s))
                }
                other => int(other),
            })
        }),
    )?;
    let (e, i) = (Arc::clone(engine), instance.to_string());
    add(
        "to_regclass",
        DataType::Int64,
        Arc::new(move |a| {
            ScalarValue::Int64(match a.first() {
                Some(ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s))) => {
                    table_oid_by_name(&e, &i, s)
                }
                _ => None,
            })
        }),
    )?;
    let (e, i) = (Arc::clone(engine), instance.to_string());
    add(
        "pgwide_regtype_name",
        DataType::Utf8,
        Arc::new(move |a| text(int(a.first()).map(|oid| regtype_name(&e, &i, oid)))),
    )?;
    // `x::regtype[]`: each type OID of a list as its type's name (pgcli reads
    // `proargtypes::regtype[]`).
    let (e, i) = (Arc::clone(engine), instance.to_string());
    add(
        "pgwide_regtype_names",
        DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true))),
        Arc::new(move |a| {
            let list: Option<ArrayRef> = match a.first() {
                Some(ScalarValue::List(list)) if !list.is_null(0) => Some(list.value(0)),
                _ => None,
            };
            let Some(list) = list else {
                return ScalarValue::new_null_list(DataType::Utf8, true, 1);
            };
            let names: Vec<ScalarValue> = (0..list.len())
                .map(|at| {
                    let item = ScalarValue::try_from_array(&list, at).ok();
                    let oid = int(item.as_ref())
                        .or_else(|| super::udf::string(item.as_ref()).and_then(|s| s.parse().ok()));
                    text(oid.map(|oid| regtype_name(&e, &i, oid)))
                })
                .collect();
            ScalarValue::List(ScalarValue::new_list_nullable(&names, &DataType::Utf8))
        }),
    )?;
    Ok(())
}

/// A type's name as `regtype` shows it: a built-in's, an enum type's, else its OID.
fn regtype_name(engine: &Engine, instance: &str, oid: i64) -> String {
    pg_catalog::format_type(oid)
        .map(String::from)
        .or_else(|| pg_catalog::enum_type_name(engine, instance, oid))
        .unwrap_or_else(|| oid.to_string())
}

/// Registers one row-by-row function on `state`.
fn register_row_function(
    state: &mut SessionState,
    name: &str,
    returns: DataType,
    body: Arc<Body>,
) -> Result<()> {
    state
        .register_udf(Arc::new(udf(name, returns, body)))
        .map(|_| ())
}

/// `acldefault(kind, owner)`: the privileges an object of `kind` (PostgreSQL's
/// one-letter object types) has while no GRANT or REVOKE changed them, as `aclitem`
/// texts; `None` for a kind PostgreSQL does not know (its error, here NULL).
fn default_acl(kind: &str, owner: &str) -> Option<Vec<String>> {
    let (public, own) = match kind {
        "c" => return Some(Vec::new()),
        "r" => (None, "arwdDxt"),
        "s" => (None, "rwU"),
        "d" => (Some("Tc"), "CTc"),
        "f" => (Some("X"), "X"),
        "l" => (Some("U"), "U"),
        "L" => (None, "rw"),
        "n" => (None, "UC"),
        "t" => (None, "C"),
        "F" | "S" => (None, "U"),
        "T" => (Some("U"), "U"),
        "p" => (None, "sA"),
        _ => return None,
    };
    let public = public.map(|p| format!("={p}/{owner}"));
    Some(
        public
            .into_iter()
            .chain([format!("{owner}={own}/{owner}")])
            .collect(),
    )
}

/// The OID of the table a `regclass` name (`t`, `public.t`, `"T"`) names, if it exists.
fn table_oid_by_name(engine: &Engine, instance: &str, name: &str) -> Option<i64> {
    if let Some(oid) = pg_catalog::catalog_relation_oid(name) {
        return Some(oid);
    }
    let name = name.strip_prefix("public.").unwrap_or(name);
    let name = match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
        Some(quoted) => quoted.replace("\"\"", "\""),
        None => name.to_lowercase(),
    };
    if let Ok(table) = engine.table(instance, &name) {
        return Some(pg_catalog::table_oid(&table));
    }
    if let Ok(sequence) = engine.sequence(instance, &name) {
        return Some(pg_catalog::sequence_oid(&sequence));
    }
    if let Some(view) = engine.view(instance, &name) {
        return Some(pg_catalog::view_oid(&view));
    }
    engine
        .index(instance, &name)
        .map(|(_, index)| pg_catalog::index_oid(&index))
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
