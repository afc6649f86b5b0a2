//! A client's session: it parses statements, routes each to the handler of its kind
//! (see `statement_handler`), keeps the plans (prepared statements, the simple-query
//! plan cache) and tracks the transaction block an error aborts. What statements run
//! against lives in `SessionState`.

use super::copy_statement::{Copies, CopyCommand};
use super::cursor_statements::{CursorPlan, Cursors};
use super::datetime::TimeZone;
use super::expr::Params;
use super::notices::Notice;
use super::notification_statements::{NotificationCommand, Notifications};
use super::plan_cache::{self, Lookup, PlanCache, Template};
use super::read_statements::{ReadStatement, Reads};
use super::role_statements::RoleStatements;
use super::schema_statements::{SchemaChange, SchemaChanges};
use super::session_commands::{SessionCommand, SessionCommands};
use super::session_state::SessionState;
use super::session_zone;
use super::settings::Settings;
use super::sql_prepared::{self, PreparedCommand};
use super::sql_types::{
    Datum, OutputColumn, SqlError, SqlResult, SqlType, StatementResult, TransactionStatus,
};
use super::statement_handler::{Claim, StatementHandler};
use super::statement_parser::parse;
use super::transaction_block;
use super::transaction_statements::{TransactionCommand, Transactions};
use super::views;
use super::write_statements::{WriteStatement, Writes};
use super::{ParsedStatement, PreparedStatement, SqlSession};
use crate::auth::Access;
use crate::engine::Engine;
use crate::sqlstate::SqlState;
use async_trait::async_trait;
use sqlparser::ast::Statement;
use std::collections::HashMap;
use std::sync::Arc;

/// A planned statement: the plan of the handler its kind belongs to.
// A plan is made once per statement and kept behind an `Arc`, so its size costs
// nothing, and boxing the large write plans would cost an allocation each.
#[allow(clippy::large_enum_variant)]
enum Plan {
    Read(ReadStatement),
    Write(WriteStatement),
    Schema(SchemaChange),
    Transaction(TransactionCommand),
    Session(SessionCommand),
    Copy(CopyCommand),
    Cursor(CursorPlan),
    Notification(NotificationCommand),
    Role(Box<Statement>),
    /// SQL `PREPARE` / `EXECUTE`, which the session itself runs (`sql_prepared`).
    Prepared(PreparedCommand),
    /// Only comments or semicolons.
    Empty,
}

/// Runs `$body` with `$handler` the handler type of `$plan`'s kind and `$inner` its plan;
/// `$empty` for an empty statement.
macro_rules! with_handler {
    ($plan:expr, $handler:ident, $inner:ident => $body:expr, empty => $empty:expr) => {
        match $plan {
            Plan::Read($inner) => {
                type $handler = Reads;
                $body
            }
            Plan::Write($inner) => {
                type $handler = Writes;
                $body
            }
            Plan::Schema($inner) => {
                type $handler = SchemaChanges;
                $body
            }
            Plan::Transaction($inner) => {
                type $handler = Transactions;
                $body
            }
            Plan::Session($inner) => {
                type $handler = SessionCommands;
                $body
            }
            Plan::Copy($inner) => {
                type $handler = Copies;
                $body
            }
            Plan::Role($inner) => {
                type $handler = RoleStatements;
                $body
            }
            Plan::Cursor($inner) => {
                type $handler = Cursors;
                $body
            }
            Plan::Notification($inner) => {
                type $handler = Notifications;
                $body
            }
            Plan::Prepared(_) | Plan::Empty => $empty,
        }
    };
}

/// Offers `statement` to each handler in turn (the frequent kinds first) and wraps the
/// plan of the one that claims it.
fn route(
    state: &SessionState,
    mut statement: Box<Statement>,
    params: &mut Params,
) -> SqlResult<Plan> {
    // Views are read through their queries; CREATE VIEW keeps the views its own query
    // names as they are.
    views::refuse_as_target(&state.engine, &state.instance, &statement)?;
    if !matches!(*statement, Statement::CreateView(_)) {
        views::expand(&state.engine, &state.instance, &mut statement)?;
    }
    macro_rules! offer {
        ($statement:expr, $handler:ty, $variant:path) => {
            match <$handler>::plan(state, $statement, params) {
                Claim::Planned(plan) => return plan.map($variant),
                Claim::NotMine(statement) => statement,
            }
        };
    }
    let statement = offer!(statement, Reads, Plan::Read);
    let statement = offer!(statement, Writes, Plan::Write);
    let statement = offer!(statement, Transactions, Plan::Transaction);
    let statement = offer!(statement, SessionCommands, Plan::Session);
    // Before schema changes, which would take DROP ROLE for a DROP.
    let statement = offer!(statement, RoleStatements, Plan::Role);
    let statement = offer!(statement, SchemaChanges, Plan::Schema);
    let statement = offer!(statement, Copies, Plan::Copy);
    let statement = offer!(statement, Cursors, Plan::Cursor);
    let statement = offer!(statement, Notifications, Plan::Notification);
    Err(SqlError::unsupported(format!(
        "statement not supported yet: {}",
        first_words(&statement.to_string())
    )))
}

fn columns(plan: &Plan) -> Arc<Vec<OutputColumn>> {
    if let Plan::Prepared(PreparedCommand::Execute { columns, .. }) = plan {
        return Arc::clone(columns);
    }
    with_handler!(plan, H, p => H::columns(p), empty => Arc::new(Vec::new()))
}

/// A simple-protocol statement answered from the plan cache: the template's plan and
/// the statement's literals as its parameters.
struct CachedRun {
    plan: Arc<Plan>,
    params: Vec<Datum>,
}

/// A prepared statement's plan, as the server keeps it between Parse and Execute, with
/// what it was planned for. A plan holds the tables it reads and writes as they were:
/// after DDL (a table dropped and created again, altered, truncated) it is planned
/// again from the statement's text before it runs, as PostgreSQL replans a cached
/// plan, so an INSERT never writes to a table that is gone. So it is after a change of
/// the session's `TimeZone`, which constants such as `timestamptz '2024-01-01'` were
/// read in.
pub struct StatementPlan(std::sync::Mutex<(PlannedFor, Arc<Plan>)>);

/// The catalog version and session zone a plan was made for.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PlannedFor {
    catalog_version: u64,
    zone: TimeZone,
}

impl StatementPlan {
    fn new(planned_for: PlannedFor, plan: Plan) -> Self {
        StatementPlan(std::sync::Mutex::new((planned_for, Arc::new(plan))))
    }

    /// The plan and what it was made for.
    fn current(&self) -> (PlannedFor, Arc<Plan>) {
        let guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        (guard.0, Arc::clone(&guard.1))
    }

    fn replace(&self, planned_for: PlannedFor, plan: Arc<Plan>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = (planned_for, plan);
    }
}

impl Default for StatementPlan {
    /// The plan of an empty query string.
    fn default() -> Self {
        let planned_for = PlannedFor {
            catalog_version: 0,
            zone: TimeZone::default(),
        };
        StatementPlan::new(planned_for, Plan::Empty)
    }
}

/// A simple-query statement between `parse_simple` and `run_simple`: already planned
/// (from the plan cache) or parsed only.
pub struct ParsedSql(Parsed);

enum Parsed {
    Cached(CachedRun),
    Statement(Box<Statement>),
}

pub struct Session {
    state: SessionState,
    plan_cache: PlanCache<Plan>,
    /// The session zone the cached template plans were made in.
    plan_cache_zone: TimeZone,
    /// The template of the statement `parse_simple` just parsed, for `run_simple` to
    /// cache its plan; only set when the query string held that one statement.
    pending_template: Option<Template>,
    /// Statements SQL `PREPARE` prepared, by name.
    sql_prepared: HashMap<String, Arc<PreparedStatement<StatementPlan>>>,
}

impl Session {
    pub fn new(
        engine: Arc<Engine>,
        instance: String,
        user: String,
        startup: &[(String, String)],
    ) -> SqlResult<Self> {
        let mut settings = Settings::new(&user);
        for (name, value) in startup {
            settings.startup(name, value)?;
        }
        Ok(Session {
            state: SessionState::new(engine, instance, user, settings),
            plan_cache: PlanCache::default(),
            plan_cache_zone: TimeZone::default(),
            pending_template: None,
            sql_prepared: HashMap::new(),
        })
    }

    /// Restricts the session to `access` (its role's privileges).
    pub fn with_access(mut self, access: Access) -> Self {
        self.state.access = access;
        self
    }

    /// Runs this session's DataFusion queries in `runtime` (the server's memory pool).
    pub fn with_query_runtime(
        mut self,
        runtime: Arc<datafusion::execution::runtime_env::RuntimeEnv>,
    ) -> Self {
        self.state.query_runtime = Some(runtime);
        self
    }

    /// Server-wide setting defaults (from the configuration), under the client's
    /// startup parameters.
    pub fn with_setting_defaults(mut self, defaults: &[(String, String)]) -> SqlResult<Self> {
        for (name, value) in defaults {
            self.state.settings.set_default(name, value)?;
        }
        Ok(self)
    }

    /// Plans a statement in the session's zone (`session_zone`).
    fn plan(&self, statement: Box<Statement>, params: &mut Params) -> SqlResult<Plan> {
        let columns_of = |name: &str| self.sql_prepared.get(name).map(|p| Arc::clone(&p.columns));
        if let Some(command) = sql_prepared::plan(&statement, columns_of) {
            return command.map(Plan::Prepared);
        }
        session_zone::sync_scope(self.state.settings.time_zone(), || {
            route(&self.state, statement, params)
        })
    }

    /// What a plan made now is made for.
    fn planned_for(&self) -> PlannedFor {
        PlannedFor {
            catalog_version: self.state.engine.catalog_version(),
            zone: self.state.settings.time_zone(),
        }
    }

    /// Runs a plan, tracking the transaction: an error inside one marks it failed.
    async fn run(&mut self, plan: &Plan, params: Vec<Datum>) -> SqlResult<StatementResult> {
        self.state.finish_query();
        let failed = self.state.transaction.as_ref().is_some_and(|t| t.failed);
        let allowed = matches!(plan, Plan::Transaction(command) if command.runs_in_failed_block());
        if failed && !allowed {
            return Err(SqlError::new(
                SqlState::InFailedSqlTransaction,
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        let reads = !matches!(
            plan,
            Plan::Transaction(_) | Plan::Session(_) | Plan::Notification(_) | Plan::Empty
        );
        if reads {
            if let Err(e) = self.state.ensure_snapshot().await {
                self.state.fail_transaction();
                return Err(e);
            }
        }
        if let Plan::Prepared(command) = plan {
            let result = self.run_prepared(command).await;
            if result.is_err() {
                self.state.fail_transaction();
            }
            return result;
        }
        let zone = self.state.settings.time_zone();
        let state = &mut self.state;
        // Where the statement's notifications start: they go if it fails.
        state.statement_notifications = state.notifications.len();
        state.sequence_values.set_read_only(state.read_only());
        let result = session_zone::scope(zone, async {
            with_handler!(plan, H, p => {
                match H::authorize(state, p).and_then(|()| state.allow_write(H::writes(p))) {
                    Ok(()) => H::execute(state, p, params).await,
                    Err(e) => Err(e),
                }
            }, empty => Ok(StatementResult::command("")))
        })
        .await
        .map(|result| session_zone::in_zone(zone, result));
        if result.is_err() {
            self.state
                .notifications
                .truncate(self.state.statement_notifications);
            self.state.fail_transaction();
        }
        result
    }

    /// Runs SQL `PREPARE` or `EXECUTE`. An EXECUTE's statement runs as a protocol
    /// Execute would, so its plan is current and its result and tag are its own.
    async fn run_prepared(&mut self, command: &PreparedCommand) -> SqlResult<StatementResult> {
        match command {
            PreparedCommand::Prepare { name, sql, types } => {
                if self.sql_prepared.contains_key(name) {
                    return Err(sql_prepared::taken(name));
                }
                let prepared = SqlSession::prepare(self, sql, types).await?;
                self.sql_prepared.insert(name.clone(), prepared);
                Ok(StatementResult::command("PREPARE"))
            }
            PreparedCommand::Execute { name, args, .. } => {
                let prepared = self
                    .sql_prepared
                    .get(name)
                    .cloned()
                    .ok_or_else(|| sql_prepared::missing(name))?;
                let params = sql_prepared::arguments(name, args, &prepared.param_types)?;
                // Boxed: the statement runs through `run`, which got here.
                Box::pin(SqlSession::execute(self, &prepared, params)).await
            }
        }
    }

    /// A prepared statement's plan for the catalog and zone as they are now: planned
    /// again from its text after any DDL or change of zone since it was planned. A
    /// result whose columns would differ is 0A000, PostgreSQL's "cached plan must not
    /// change result type".
    fn current_plan(
        &mut self,
        statement: &PreparedStatement<StatementPlan>,
    ) -> SqlResult<Arc<Plan>> {
        let (planned, plan) = statement.plan.current();
        let now = self.planned_for();
        if planned == now || matches!(*plan, Plan::Empty) {
            return Ok(plan);
        }
        let mut statements = parse(&statement.sql)?;
        let Some(parsed) = statements.pop() else {
            return Ok(plan);
        };
        let given: Vec<Option<SqlType>> = statement.param_types.iter().copied().map(Some).collect();
        let mut params = self.state.params(&given);
        let replanned = self.plan(Box::new(parsed), &mut params)?;
        let same_columns = {
            let now = columns(&replanned);
            now.len() == statement.columns.len()
                && now
                    .iter()
                    .zip(statement.columns.iter())
                    .all(|(a, b)| a.name == b.name && a.ty == b.ty)
        };
        if !same_columns {
            return Err(SqlError::unsupported(
                "cached plan must not change result type",
            ));
        }
        let replanned = Arc::new(replanned);
        statement.plan.replace(now, Arc::clone(&replanned));
        Ok(replanned)
    }

    /// Plans the template of a statement just planned and caches it when the two are
    /// interchangeable (see `plan_cache`). Only reads and writes are cached: DDL and
    /// settings change what later statements mean.
    fn cache_template(&mut self, template: &Template, statement_plan: &Plan) {
        let cacheable = with_handler!(statement_plan, H, p => H::cacheable(p), empty => false);
        if !cacheable {
            return;
        }
        let version = self.state.engine.catalog_version();
        if !matches!(self.plan_cache.lookup(&template.key, version), Lookup::Miss) {
            return;
        }
        let mut params = self.state.params(&[]);
        let planned = match parse(&template.key) {
            Ok(mut statements) if statements.len() == 1 => statements
                .pop()
                .and_then(|statement| self.plan(Box::new(statement), &mut params).ok()),
            _ => None,
        };
        let template_columns = planned.as_ref().map(columns);
        let statement_columns = columns(statement_plan);
        self.plan_cache.insert(
            template,
            version,
            planned
                .zip(template_columns.as_deref())
                .map(|(plan, columns)| {
                    (Arc::new(plan), params.types.as_slice(), columns.as_slice())
                }),
            &statement_columns,
        );
    }
}

fn first_words(sql: &str) -> String {
    sql.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

#[async_trait]
impl SqlSession for Session {
    type Plan = StatementPlan;
    type Parsed = ParsedSql;

    fn parse_simple(&mut self, sql: &str) -> SqlResult<Vec<ParsedStatement<ParsedSql>>> {
        self.state.finish_query();
        self.pending_template = None;
        let zone = self.state.settings.time_zone();
        if zone != self.plan_cache_zone {
            self.plan_cache = PlanCache::default();
            self.plan_cache_zone = zone;
        }
        let template = plan_cache::templatize(sql);
        if let Some(template) = &template {
            let version = self.state.engine.catalog_version();
            if let Lookup::Hit(cached) = self.plan_cache.lookup(&template.key, version) {
                let literals = &template.literals;
                let bound = session_zone::sync_scope(zone, || {
                    plan_cache::bind(literals, &cached.param_types)
                });
                if let Some(params) = bound {
                    let run = CachedRun {
                        plan: Arc::clone(&cached.plan),
                        params,
                    };
                    return Ok(vec![ParsedStatement {
                        sql: sql.to_string(),
                        parsed: ParsedSql(Parsed::Cached(run)),
                    }]);
                }
            }
        }
        // Any error aborts a transaction block, a syntax error too, as in PostgreSQL.
        let statements = parse(sql).inspect_err(|_| self.state.fail_transaction())?;
        if let (Some(template), [_]) = (template, statements.as_slice()) {
            self.pending_template = Some(template);
        }
        Ok(statements
            .into_iter()
            .map(|statement| ParsedStatement {
                sql: statement.to_string(),
                parsed: ParsedSql(Parsed::Statement(Box::new(statement))),
            })
            .collect())
    }

    async fn run_simple(
        &mut self,
        statement: ParsedStatement<ParsedSql>,
    ) -> SqlResult<StatementResult> {
        let statement = match statement.parsed.0 {
            Parsed::Cached(cached) => return self.run(&cached.plan, cached.params).await,
            Parsed::Statement(statement) => statement,
        };
        let template = self.pending_template.take();
        let mut params = self.state.params(&[]);
        let plan = match self.plan(statement, &mut params) {
            Ok(plan) => plan,
            Err(e) => {
                self.state.fail_transaction();
                return Err(e);
            }
        };
        if let Some(template) = template {
            self.cache_template(&template, &plan);
        }
        self.run(&plan, Vec::new()).await
    }

    async fn prepare(
        &mut self,
        sql: &str,
        param_types: &[Option<SqlType>],
    ) -> SqlResult<Arc<PreparedStatement<StatementPlan>>> {
        self.state.finish_query();
        // Read before planning: a change made while planning makes the plan stale.
        let planned_for = self.planned_for();
        // A statement that does not parse or plan aborts a transaction block, as in
        // PostgreSQL.
        let mut statements = parse(sql).inspect_err(|_| self.state.fail_transaction())?;
        if statements.len() > 1 {
            self.state.fail_transaction();
            return Err(SqlError::syntax(
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let mut params = self.state.params(param_types);
        let (plan, columns) = match statements.pop() {
            None => (Plan::Empty, Arc::new(Vec::new())),
            Some(statement) => {
                let plan = self
                    .plan(Box::new(statement), &mut params)
                    .inspect_err(|_| self.state.fail_transaction())?;
                let columns = columns(&plan);
                (plan, columns)
            }
        };
        Ok(Arc::new(PreparedStatement {
            sql: sql.to_string(),
            param_types: params.finish(),
            columns,
            plan: StatementPlan::new(planned_for, plan),
        }))
    }

    async fn execute(
        &mut self,
        statement: &PreparedStatement<StatementPlan>,
        params: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        let plan = self.current_plan(statement)?;
        self.run(&plan, params).await
    }

    fn attach_backend(&mut self, backend: super::activity::SessionBackend) {
        self.state.backend = Some(backend);
    }

    fn send_notifications(&mut self) {
        self.state.send_notifications();
    }

    fn transaction_status(&self) -> TransactionStatus {
        match &self.state.transaction {
            None => TransactionStatus::Idle,
            Some(t) if t.failed => TransactionStatus::Failed,
            Some(_) => TransactionStatus::InTransaction,
        }
    }

    fn take_notices(&mut self) -> Vec<Notice> {
        self.state.notices.take()
    }

    /// SQL `PREPARE`'s statements are the session's own: their names are dropped
    /// here, and only the others left for the server's protocol-level statements.
    fn take_deallocations(&mut self) -> Vec<Option<String>> {
        let mut left = Vec::new();
        for name in std::mem::take(&mut self.state.deallocations) {
            match name {
                None => {
                    self.sql_prepared.clear();
                    left.push(None);
                }
                Some(name) if self.sql_prepared.remove(&name).is_some() => {}
                Some(name) => left.push(Some(name)),
            }
        }
        left
    }

    fn take_parameter_changes(&mut self) -> Vec<(String, String)> {
        self.state.finish_query();
        self.state.settings.take_changes()
    }

    fn abort_transaction(&mut self) {
        let Some(mut block) = self.state.end_transaction() else {
            return;
        };
        let changes = block.take_schema_changes();
        if changes.is_empty() {
            return;
        }
        // The connection is ending: its open block's schema changes are undone in the
        // background, as the block rolls back.
        let engine = Arc::clone(&self.state.engine);
        let instance = self.state.instance.clone();
        tokio::spawn(
            async move { transaction_block::undo_schema(&engine, &instance, &changes).await },
        );
    }

    fn timeouts(&self) -> super::SessionTimeouts {
        self.state.settings.timeouts()
    }

    fn time_zone(&self) -> super::datetime::TimeZone {
        self.state.settings.time_zone()
    }

    fn cursor_columns(&self, name: &str) -> Option<Arc<Vec<OutputColumn>>> {
        self.state.cursors.get(name).map(|cursor| cursor.columns())
    }

    fn statement_interrupted(&mut self) {
        self.state.fail_transaction();
    }
}
