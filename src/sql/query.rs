//! DataFusion for every SELECT the fast path does not plan: joins, aggregates, GROUP BY,
//! DISTINCT, subqueries, CTEs, UNION, window functions and the scalar function library.
//! Each session keeps one DataFusion `SessionState` whose catalog is the session's
//! instance (`public`) and its versions relations (`versions`), resolved live from the
//! engine; tables are scanned through [`provider::EngineTable`], which pushes PK and
//! attribute predicates and LIMIT down to the engine and streams its pages.

mod branch_order;
mod catalog_list;
mod convert;
mod datafusion_error;
mod datafusion_session;
mod empty_catalog;
mod engine_scan;
mod explain_physical;
mod named_relation;
mod origin;
mod pg_any_parameters;
mod pg_array_literals;
mod pg_array_subqueries;
mod pg_arrays;
mod pg_backends;
mod pg_char_casts;
mod pg_compat;
mod pg_datetime_functions;
mod pg_enum_casts;
mod pg_enum_plan;
mod pg_functions;
mod pg_in_select_list;
mod pg_in_subqueries;
mod pg_in_values;
mod pg_integer_avg;
mod pg_integer_overflow;
mod pg_interval_plan;
mod pg_json_functions;
mod pg_json_plan;
mod pg_name_results;
mod pg_notify;
mod pg_numeric_results;
mod pg_parameter_types;
mod pg_privileges;
mod pg_qualified_names;
mod pg_sequences;
mod pg_session;
mod pg_set_functions;
mod pg_settings;
mod pg_size_pretty;
mod pg_sizes;
mod pg_subplans;
mod pg_subqueries;
mod pg_syntax;
mod pg_tableoid;
mod pg_time;
mod pg_time_series;
mod pg_time_text;
mod pg_time_zone;
mod pg_unnest_ordinality;
mod provider;
mod sql_ast;
mod stream_relation;
mod subplan_exec;
#[cfg(test)]
mod test_sql;
mod udf;
mod zone_setting;

pub use convert::UTC;
pub use datafusion_session::{
    runtime, QueryEngine, QueryPlan, SessionLinks, DEFAULT_QUERY_MEMORY_MB,
};
pub use explain_physical::explain_query;
pub use pg_compat::is_catalog_query;
pub use pg_settings::SharedSettings;
