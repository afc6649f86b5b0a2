//! The DataFusion side of a session: one `SessionState` per session whose catalog is the
//! session's instance, its `versions` relations and the PostgreSQL catalog; planning a
//! query (with PostgreSQL's errors for missing relations and functions), binding its
//! parameters and running it over the engine's scans. Also the memory pool every
//! session's queries share.

use super::datafusion_error::{self, from_datafusion};
use super::{
    branch_order, catalog_list, convert, empty_catalog, origin, pg_any_parameters,
    pg_array_literals, pg_array_subqueries, pg_backends, pg_char_casts, pg_compat,
    pg_datetime_functions, pg_enum_casts, pg_enum_plan, pg_functions, pg_in_select_list,
    pg_in_values, pg_integer_overflow, pg_interval_plan, pg_json_functions, pg_json_plan,
    pg_name_results, pg_notify, pg_numeric_results, pg_parameter_types, pg_sequences,
    pg_set_functions, pg_settings, pg_subplans, pg_syntax, pg_tableoid, pg_time, pg_time_series,
    pg_time_text, pg_time_zone, pg_unnest_ordinality, subplan_exec, zone_setting,
};
use crate::sql::expr::output_name;
use crate::sql::row_reader::ReadContext;
use crate::sql::sql_types::{
    ColumnOrigin, Datum, OutputColumn, RowStream, SqlError, SqlResult, SqlType,
};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ParamValues;
use datafusion::error::DataFusionError;
use datafusion::execution::memory_pool::FairSpillPool;
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::execution::session_state::{SessionState, SessionStateBuilder};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionConfig;
use futures::{FutureExt, StreamExt};
use sqlparser::ast::{self, SelectItem, SetExpr};
use std::sync::Arc;

/// The memory (MB) DataFusion queries may use together by default (`query_memory_mb`).
pub const DEFAULT_QUERY_MEMORY_MB: usize = 512;

/// The memory pool every session's queries share: sorts, joins and aggregates beyond it
/// spill where they can and otherwise fail with SQLSTATE 53200 instead of exhausting
/// the process.
pub fn runtime(memory_mb: usize) -> SqlResult<Arc<RuntimeEnv>> {
    RuntimeEnvBuilder::new()
        .with_memory_pool(Arc::new(FairSpillPool::new(
            memory_mb.max(1).saturating_mul(1 << 20),
        )))
        .build_arc()
        .map_err(|e| from_datafusion(&e))
}

/// A plan's batches, its output partitions read one after another. A `UNION ALL` has a
/// partition per branch; merging them as they come (DataFusion's `execute_stream`)
/// would interleave the branches, where PostgreSQL returns them in the order written,
/// and applications (and `INSERT … SELECT` with serial keys) depend on that order.
pub fn partitions_in_order(
    physical: Arc<dyn ExecutionPlan>,
    state: &SessionState,
) -> SqlResult<datafusion::physical_plan::SendableRecordBatchStream> {
    let schema = physical.schema();
    let partitions =
        datafusion::physical_plan::execute_stream_partitioned(physical, state.task_ctx())
            .map_err(|e| from_datafusion(&e))?;
    let batches = futures::stream::iter(partitions).flatten();
    Ok(Box::pin(
        datafusion::physical_plan::stream::RecordBatchStreamAdapter::new(schema, batches),
    ))
}

/// A session's DataFusion state: configuration, functions and the instance catalog.
pub struct QueryEngine {
    state: SessionState,
    /// The engine and database, whose enum types a plan reads (`pg_enum_plan`).
    engine: Arc<crate::engine::Engine>,
    instance: String,
    /// The session's settings, as `current_setting` reads them (see `sync_settings`).
    settings: pg_settings::SharedSettings,
}

impl std::fmt::Debug for QueryEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QueryEngine")
    }
}

/// The plan of a catalog query that cannot return a row: its columns as text, no rows.
fn empty_plan(query: &ast::Query, given: &[Option<SqlType>]) -> QueryPlan {
    // Its parameters are still the statement's: the client binds them (a `$1` the
    // answer does not depend on is typed as given, else as text).
    let mut count = given.len();
    let _ = ast::visit_expressions(query, |expr| {
        if let ast::Expr::Value(v) = expr {
            if let ast::Value::Placeholder(p) = &v.value {
                if let Ok(index) = crate::sql::expr::placeholder_index(p) {
                    count = count.max(index + 1);
                }
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    let param_types: Vec<DataType> = (0..count)
        .map(|i| {
            given
                .get(i)
                .copied()
                .flatten()
                .map_or(DataType::Utf8, super::convert::arrow_type)
        })
        .collect();
    let names = pg_compat::output_names(query);
    // Positional field names: output names may repeat, which a schema does not allow.
    let fields: Vec<_> = (0..names.len())
        .map(|i| datafusion::arrow::datatypes::Field::new(format!("c{i}"), DataType::Utf8, true))
        .collect();
    let schema =
        datafusion::common::DFSchema::try_from(datafusion::arrow::datatypes::Schema::new(fields))
            .unwrap_or_else(|_| datafusion::common::DFSchema::empty());
    QueryPlan {
        uses_statement_time: false,
        logical: LogicalPlan::EmptyRelation(datafusion::logical_expr::EmptyRelation {
            produce_one_row: false,
            schema: Arc::new(schema),
        }),
        columns: Arc::new(
            names
                .into_iter()
                .map(|name| OutputColumn {
                    name,
                    ty: SqlType::Text,
                    origin: None,
                })
                .collect(),
        ),
        bind_types: param_types.clone(),
        param_types,
    }
}

/// A SELECT planned by DataFusion, not yet optimized: parameters are bound at execution.
#[derive(Debug)]
pub struct QueryPlan {
    logical: LogicalPlan,
    pub columns: Arc<Vec<OutputColumn>>,
    /// The type of each `$n` reported to the client, in order.
    param_types: Vec<DataType>,
    /// The type each `$n` is bound as.
    bind_types: Vec<DataType>,
    /// It calls `statement_timestamp()`, replaced by the statement's start as it runs.
    uses_statement_time: bool,
}

impl QueryPlan {
    /// Every table the plan scans, subqueries included, as written (schema, name):
    /// what a role needs SELECT on.
    pub fn scanned_tables(&self) -> Vec<datafusion::common::TableReference> {
        use datafusion::common::tree_node::TreeNodeRecursion;
        let mut tables = Vec::new();
        // The closure never fails, so neither does the walk.
        let _ = self.logical.apply_with_subqueries(|node| {
            if let LogicalPlan::TableScan(scan) = node {
                tables.push(scan.table_name.clone());
            }
            Ok(TreeNodeRecursion::Continue)
        });
        tables
    }
}

/// What a session lends the functions of its queries: its sequences' values (currval,
/// lastval), its connection (`pg_backend_pid`, the signals) and its pending
/// notifications (`pg_notify`).
pub struct SessionLinks<'a> {
    pub sequence_values: &'a Arc<crate::sql::sequence_values::SequenceValues>,
    pub backend: Option<&'a crate::sql::activity::SessionBackend>,
    pub notifications: &'a crate::sql::notifications::PendingNotifications,
}

impl QueryEngine {
    pub fn new(
        engine: Arc<crate::engine::Engine>,
        instance: &str,
        user: &str,
        runtime: Arc<RuntimeEnv>,
        access: &crate::auth::Access,
        links: SessionLinks<'_>,
    ) -> Self {
        let SessionLinks {
            sequence_values,
            backend,
            notifications,
        } = links;
        // One partition: the engine scan is one ordered stream, plans stay small for
        // short queries, and EXPLAIN output does not depend on the machine's cores.
        let config = SessionConfig::new()
            .with_target_partitions(1)
            .with_create_default_catalog_and_schema(false)
            .with_default_catalog_and_schema(instance, catalog_list::PUBLIC)
            .with_information_schema(false);
        // now() and current_timestamp are timestamptz, as in PostgreSQL: instants, kept
        // in UTC; the session's zone is pgwide's own setting (`pg_time_zone`).
        let mut config = config;
        config.options_mut().execution.time_zone = Some("+00:00".into());
        config
            .options_mut()
            .extensions
            .insert(zone_setting::SessionZone::default());
        config.options_mut().sql_parser.parse_float_as_decimal = true;
        // `text` and `varchar` are plain strings; string views are the catalogs' `name`
        // (`pg_name_results`).
        config.options_mut().sql_parser.map_string_types_to_utf8view = false;
        let settings = pg_settings::SharedSettings::default();
        let catalogs = catalog_list::catalog_list(
            Arc::clone(&engine),
            instance,
            access.roles().cloned(),
            backend,
            (user.to_string(), access.is_superuser()),
            settings.clone(),
        );
        let mut state = SessionStateBuilder::new()
            .with_config(config)
            .with_runtime_env(runtime)
            .with_catalog_list(catalogs)
            .with_default_features()
            .with_optimizer_rule(Arc::new(pg_subplans::SubPlans))
            .with_query_planner(Arc::new(subplan_exec::PgwideQueryPlanner))
            .with_physical_optimizer_rule(Arc::new(branch_order::BranchOrder))
            .build();
        state.add_analyzer_rule(Arc::new(pg_json_plan::JsonComparisons));
        state.add_analyzer_rule(Arc::new(pg_interval_plan::IntervalOrder));
        state.add_analyzer_rule(Arc::new(pg_time_zone::ZonedTimes));
        if let Err(e) = datafusion::execution::FunctionRegistry::register_expr_planner(
            &mut state,
            Arc::new(pg_json_plan::JsonOperators),
        )
        .and_then(|()| {
            datafusion::execution::FunctionRegistry::register_expr_planner(
                &mut state,
                Arc::new(pg_interval_plan::IntervalArithmetic),
            )
        })
        .and_then(|()| pg_json_functions::register(&mut state))
        .and_then(|()| pg_time_series::register(&mut state))
        .and_then(|()| pg_backends::register(&mut state, backend, user, access.is_superuser()))
        .and_then(|()| pg_notify::register(&mut state, notifications))
        {
            tracing::warn!("registering the JSON functions failed: {e}");
        }
        if let Err(e) = pg_functions::register(
            &mut state,
            Arc::clone(&engine),
            instance,
            user,
            access,
            settings.clone(),
            sequence_values,
        ) {
            tracing::warn!("registering the PostgreSQL catalog functions failed: {e}");
        }
        QueryEngine {
            state,
            settings,
            engine,
            instance: instance.to_string(),
        }
    }

    /// Gives `current_setting` and `set_config` the session's current settings; the
    /// session calls it when it creates the engine and after every change.
    pub fn sync_settings(&self, settings: &crate::sql::settings::Settings) {
        self.settings.replace(settings.all(), settings.defaults());
        zone_setting::set(self.state.config_options(), settings.time_zone());
    }

    /// The changes `set_config` made since the last call, for the session to apply.
    pub fn take_config_changes(&self) -> Vec<pg_settings::ConfigChange> {
        self.settings.take_changes()
    }

    /// Plans a query. `given` holds the parameter types the client declared.
    pub fn plan(&self, query: &ast::Query, given: &[Option<SqlType>]) -> SqlResult<QueryPlan> {
        if empty_catalog::always_empty(query) {
            return Ok(empty_plan(query, given));
        }
        let mut query = query.clone();
        // Before `pg_syntax` makes a function in FROM a select of it.
        pg_compat::settings_function(&mut query);
        pg_syntax::rewrite(&mut query);
        pg_in_values::rewrite(&mut query);
        pg_unnest_ordinality::rewrite(&mut query);
        // Named before the rewrites below, which replace what PostgreSQL names a
        // column by (`'{1}'::int[]` is `int4`, not `array`; `23::regtype` is `regtype`,
        // not the function pgwide computes it with).
        let names = column_names(&query);
        if pg_compat::is_catalog_query(&query) {
            pg_tableoid::rewrite(&mut query);
            pg_compat::rewrite(&mut query);
        }
        let varchar_casts = varchar_casts(&query);
        pg_array_literals::rewrite(&mut query)?;
        pg_char_casts::rewrite(&mut query)?;
        pg_enum_casts::rewrite(&mut query, &self.engine, &self.instance);
        pg_time_text::microsecond_timestamps(&mut query)?;
        pg_json_plan::casts(&mut query);
        pg_time_text::extract_types(&mut query);
        pg_datetime_functions::rewrite(&mut query);
        pg_sequences::number_calls(&mut query);
        pg_array_subqueries::rewrite(&mut query)?;
        pg_in_select_list::rewrite(&mut query);
        pg_set_functions::rewrite(&mut query);
        let mut given = given.to_vec();
        let mut untyped_any = Vec::new();
        let limits = pg_parameter_types::limit_parameter_types(&query);
        let arrays = pg_parameter_types::array_parameter_types(&query);
        let certain_types = limits.into_iter().map(|(i, ty)| (i, ty, true));
        for (index, array, certain) in certain_types.chain(arrays) {
            if !certain {
                untyped_any.push((index, array));
                continue;
            }
            if given.len() <= index {
                given.resize(index + 1, None);
            }
            given[index].get_or_insert(array);
        }
        let given = given.as_slice();
        let query = &query;
        let statement = datafusion::sql::parser::Statement::Statement(Box::new(
            ast::Statement::Query(Box::new(query.clone())),
        ));
        // The catalog answers from memory, so planning completes without waiting.
        let logical = self
            .state
            .statement_to_plan(statement)
            .now_or_never()
            .ok_or_else(|| SqlError::internal("query planning did not complete"))?
            .map_err(|e| self.planning_error(query, &e))?;
        let logical = pg_integer_overflow::rewrite(logical).map_err(|e| from_datafusion(&e))?;
        let logical = pg_numeric_results::rewrite(logical).map_err(|e| from_datafusion(&e))?;
        let logical = pg_time_text::rewrite(logical).map_err(|e| from_datafusion(&e))?;
        let logical =
            pg_interval_plan::date_differences(logical).map_err(|e| from_datafusion(&e))?;
        let logical = pg_name_results::rewrite(logical).map_err(|e| from_datafusion(&e))?;
        let enum_types: pg_enum_plan::EnumTypes = self
            .engine
            .enum_types(&self.instance)
            .into_iter()
            .map(|t| (SqlType::enum_of(t.id).oid(), t))
            .collect();
        let logical =
            pg_enum_plan::rewrite(logical, &enum_types).map_err(|e| from_datafusion(&e))?;
        let mut inferred = logical
            .get_parameter_types()
            .map_err(|e| from_datafusion(&e))?;
        for (id, list) in pg_any_parameters::any_parameter_types(&logical) {
            if let Some(ty @ None) = inferred.get_mut(&id) {
                *ty = Some(list);
            }
        }
        for (index, array) in untyped_any {
            if let Some(ty @ None) = inferred.get_mut(&format!("${}", index + 1)) {
                *ty = Some(convert::arrow_type(array));
            }
        }
        // Reported types: the client's where it gave one (it encodes the value so),
        // else DataFusion's. Bound types: DataFusion's, which the plan checks.
        let mut param_types: Vec<DataType> = given
            .iter()
            .map(|g| g.map_or(DataType::Utf8, convert::arrow_type))
            .collect();
        let mut bind_types = param_types.clone();
        for (name, ty) in inferred {
            let Some(index) = name
                .strip_prefix('$')
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| n.checked_sub(1))
            else {
                return Err(SqlError::syntax(format!("invalid parameter {name}")));
            };
            if param_types.len() <= index {
                param_types.resize(index + 1, DataType::Utf8);
                bind_types.resize(index + 1, DataType::Utf8);
            }
            if let Some(ty) = ty {
                if given.get(index).copied().flatten().is_none() {
                    param_types[index] = ty.clone();
                }
                bind_types[index] = ty;
            }
        }
        let origins = origin::origins(&logical);
        let columns = logical
            .schema()
            .fields()
            .iter()
            .enumerate()
            .map(|(i, field)| OutputColumn {
                name: names
                    .as_ref()
                    .and_then(|n| n.get(i).cloned())
                    .unwrap_or_else(|| field_name(field.name())),
                ty: pg_enum_plan::field_enum_oid(field)
                    .map_or_else(|| convert::sql_type(field.data_type()), SqlType::Enum),
                origin: origins
                    .get(i)
                    .copied()
                    .flatten()
                    .or_else(|| varchar_casts.get(i).copied().flatten()),
            })
            .collect();
        Ok(QueryPlan {
            uses_statement_time: pg_time::uses_statement_time(&logical),
            logical,
            columns: Arc::new(columns),
            param_types,
            bind_types,
        })
    }

    /// The error for a query DataFusion could not plan. A missing relation or function
    /// comes back from DataFusion as a planning error whose only clue is its wording, so
    /// the catalog and the function registries are asked which it was, and the client
    /// is told in PostgreSQL's words (42P01 before 42883, as PostgreSQL checks). Asked
    /// only after a failure: a query that plans pays nothing for it.
    fn planning_error(&self, query: &ast::Query, error: &DataFusionError) -> SqlError {
        self.missing_relation(query)
            .or_else(|| self.unknown_function(query))
            .unwrap_or_else(|| from_datafusion(error))
    }

    /// PostgreSQL's 42P01 for the first relation the query names that does not exist.
    fn missing_relation(&self, query: &ast::Query) -> Option<SqlError> {
        let statement = datafusion::sql::parser::Statement::Statement(Box::new(
            ast::Statement::Query(Box::new(query.clone())),
        ));
        let references = self.state.resolve_table_references(&statement).ok()?;
        references.into_iter().find_map(|reference| {
            let table_function = reference.schema().is_none()
                && self.state.table_functions().contains_key(reference.table());
            let exists = table_function
                || self
                    .state
                    .schema_for_ref(reference.clone())
                    .is_ok_and(|schema| schema.table_exist(reference.table()));
            (!exists).then(|| datafusion_error::undefined_table(&reference))
        })
    }

    /// After planning failed: PostgreSQL's 42883 for the first function the query calls
    /// that no registry knows, with its argument types where the call shows them.
    fn unknown_function(&self, query: &ast::Query) -> Option<SqlError> {
        use std::ops::ControlFlow;
        let known = |name: &str| {
            self.state.scalar_functions().contains_key(name)
                || self.state.aggregate_functions().contains_key(name)
                || self.state.window_functions().contains_key(name)
        };
        let mut missing = None;
        let _ = ast::visit_expressions(query, |expr| {
            if let ast::Expr::Function(call) = expr {
                let name = call.name.to_string().to_lowercase();
                if !known(&name) {
                    missing = Some(undefined_function(&name, &call.args));
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        });
        missing
    }

    /// The physical plan with `params` bound, scanning under `ctx`.
    pub(super) async fn physical(
        &self,
        plan: &QueryPlan,
        params: Vec<Datum>,
        ctx: ReadContext,
    ) -> SqlResult<(Arc<dyn ExecutionPlan>, SessionState)> {
        let mut logical = plan.logical.clone();
        if !plan.bind_types.is_empty() {
            let values = params
                .iter()
                .zip(&plan.bind_types)
                .map(|(d, ty)| convert::datum_to_scalar(d, ty))
                .collect::<SqlResult<Vec<_>>>()?;
            logical = logical
                .with_param_values(ParamValues::from(values))
                .map_err(|e| from_datafusion(&e))?;
        }
        // The transaction's start, read here rather than for every statement (only a
        // DataFusion query can call now()); outside a block, the statement's start. Taken
        // before statement_timestamp(), which is never earlier.
        let start = ctx
            .transaction_start
            .unwrap_or_else(std::time::SystemTime::now);
        let start = chrono::DateTime::<chrono::Utc>::from(start);
        if plan.uses_statement_time {
            logical = pg_time::with_statement_time(logical, chrono::Utc::now())
                .map_err(|e| from_datafusion(&e))?;
        }
        // Last: a subplan's subquery is out of reach of the rewrites above.
        logical = pg_subplans::prepare(logical).map_err(|e| from_datafusion(&e))?;
        let mut state = self.state.clone();
        // now() and current_timestamp are the transaction's start, to the microsecond as
        // PostgreSQL keeps times: DataFusion folds them into constants from this time.
        state.mark_start_execution();
        state.execution_props_mut().query_execution_start_time =
            chrono::DateTime::from_timestamp_micros(start.timestamp_micros());
        state.config_mut().set_extension(Arc::new(ctx));
        let physical = state
            .create_physical_plan(&logical)
            .await
            .map_err(|e| from_datafusion(&e))?;
        Ok((physical, state))
    }

    /// Runs a plan: its rows, converted batch by batch as the client reads them.
    pub async fn execute(
        &self,
        plan: &QueryPlan,
        params: Vec<Datum>,
        ctx: ReadContext,
    ) -> SqlResult<RowStream> {
        let (physical, state) = self.physical(plan, params, ctx).await?;
        let batches = partitions_in_order(physical, &state)?;
        let columns = Arc::clone(&plan.columns);
        Ok(batches
            .flat_map(move |batch| {
                let rows = match batch {
                    Ok(batch) => convert::batch_rows(&batch, &columns),
                    Err(e) => vec![Err(from_datafusion(&e))],
                };
                futures::stream::iter(rows)
            })
            .boxed())
    }

    /// The parameter types to report to the client.
    pub fn param_types(plan: &QueryPlan) -> Vec<SqlType> {
        plan.param_types.iter().map(convert::sql_type).collect()
    }
}

/// `function f(integer, unknown) does not exist`, as PostgreSQL words it, when every
/// argument's type can be read off the call (literals and casts); otherwise the name
/// alone, as the arguments' types would take planning the call to know.
fn undefined_function(name: &str, args: &ast::FunctionArguments) -> SqlError {
    let exprs: Vec<&ast::Expr> = match args {
        ast::FunctionArguments::None | ast::FunctionArguments::Subquery(_) => Vec::new(),
        ast::FunctionArguments::List(list) => list
            .args
            .iter()
            .filter_map(|arg| match arg {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))
                | ast::FunctionArg::Named {
                    arg: ast::FunctionArgExpr::Expr(e),
                    ..
                } => Some(e),
                _ => None,
            })
            .collect(),
    };
    let types: Option<Vec<String>> = exprs.iter().map(|e| literal_type(e)).collect();
    let message = match types {
        Some(types) => format!("function {name}({}) does not exist", types.join(", ")),
        None => format!("function {name} does not exist"),
    };
    SqlError::undefined_function(message)
}

/// The type PostgreSQL gives a literal or a cast before it resolves a call.
fn literal_type(expr: &ast::Expr) -> Option<String> {
    match expr {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => Some(
                if n.contains(['.', 'e', 'E']) {
                    "numeric"
                } else if n.parse::<i32>().is_ok() {
                    "integer"
                } else if n.parse::<i64>().is_ok() {
                    "bigint"
                } else {
                    "numeric"
                }
                .to_string(),
            ),
            ast::Value::Boolean(_) => Some("boolean".to_string()),
            ast::Value::SingleQuotedString(_) | ast::Value::Null => Some("unknown".to_string()),
            _ => None,
        },
        ast::Expr::Cast { data_type, .. } => crate::sql::sql_types::sql_type(data_type)
            .ok()
            .map(|ty| ty.name().to_string()),
        ast::Expr::Nested(inner) => literal_type(inner),
        _ => None,
    }
}

/// PostgreSQL's output names for the top-level select list, when it has no wildcard
/// (DataFusion names expressions by their text, `count(*)`, where PostgreSQL says
/// `count`).
fn column_names(query: &ast::Query) -> Option<Vec<String>> {
    let mut body = &*query.body;
    loop {
        match body {
            SetExpr::SetOperation { left, .. } => body = left,
            SetExpr::Query(q) => body = &q.body,
            SetExpr::Select(select) => {
                return select
                    .projection
                    .iter()
                    .map(|item| match item {
                        SelectItem::UnnamedExpr(e) => Some(output_name(e)),
                        SelectItem::ExprWithAlias { alias, .. } => {
                            let name = crate::sql::expr::fold(alias);
                            Some(name.trim_end_matches(pg_syntax::REPEATED).to_string())
                        }
                        _ => None,
                    })
                    .collect()
            }
            _ => return None,
        }
    }
}

/// Which result columns of a plain SELECT are casts to `VARCHAR` (see
/// `ColumnOrigin::of_varchar_cast`). Not of a UNION and the like: the branches decide
/// its types together.
fn varchar_casts(query: &ast::Query) -> Vec<Option<ColumnOrigin>> {
    let SetExpr::Select(select) = &*query.body else {
        return Vec::new();
    };
    if select.projection.iter().any(|item| {
        !matches!(
            item,
            SelectItem::UnnamedExpr(_) | SelectItem::ExprWithAlias { .. }
        )
    }) {
        return Vec::new();
    }
    select
        .projection
        .iter()
        .map(|item| match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                ColumnOrigin::of_varchar_cast(e)
            }
            _ => None,
        })
        .collect()
}

/// A DataFusion field name as a column name: `t.a` is `a`; an expression is `?column?`.
fn field_name(name: &str) -> String {
    let name = name.trim_end_matches(pg_syntax::REPEATED);
    let last = name.rsplit('.').next().unwrap_or(name);
    if !last.is_empty() && last.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        last.to_string()
    } else {
        "?column?".into()
    }
}
