//! A client's session: its database (instance), settings, prepared plans and open
//! transaction. Statements are planned once (at Parse for the extended protocol) and run
//! against the engine; in a transaction, writes are staged and applied atomically at
//! COMMIT.

use super::copy_statement::{Aftermath, CopyDestination};
use super::ddl;
use super::dml::{self, DeletePlan, InsertPlan, UpdatePlan, WriteTarget};
use super::explain::explain_fast_path;
use super::expr::{fold, Params};
use super::notices::{Notice, Notices};
use super::plan_cache::{self, Lookup, PlanCache, Template};
use super::query::{self, QueryEngine, QueryPlan};
use super::row_reader::ReadContext;
use super::select::{execute_select, plan_select, FastPath, SelectPlan};
use super::settings::Settings;
use super::sql_types::{
    Datum, OutputColumn, SqlError, SqlResult, SqlType, StatementResult, TransactionStatus,
};
use super::transaction_block::{self, Transaction};
use super::{ParsedStatement, PreparedStatement, SqlSession};
use crate::auth::{Access, Privilege};
use crate::engine::{Engine, EngineError, TableMeta};
use crate::sqlstate::SqlState;
use async_trait::async_trait;
use futures::{stream, StreamExt, TryStreamExt};
use sqlparser::ast::{self, Statement};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::sync::{Arc, OnceLock};

/// A planned statement.
enum Plan {
    /// Shared, so running a prepared or cached plan does not copy it.
    Select(Arc<SelectPlan>),
    /// A SELECT the fast path does not handle, planned by DataFusion.
    Query(QueryPlan),
    /// EXPLAIN [ANALYZE] of a Select or Query plan.
    Explain(Box<Plan>, bool),
    Insert(InsertPlan),
    /// `INSERT ... SELECT`: the query's rows are read first, then written atomically.
    InsertSelect(InsertPlan, Box<Plan>),
    Update(UpdatePlan),
    Delete(DeletePlan),
    /// Run from its AST: DDL, transaction control, SET/SHOW.
    Utility(Box<Statement>),
    /// Only comments or semicolons.
    Empty,
}

/// A simple-protocol statement answered from the plan cache: the template's plan and
/// the statement's literals as its parameters.
struct CachedRun {
    plan: Arc<Plan>,
    params: Vec<Datum>,
}

/// A prepared statement's plan, as the server keeps it between Parse and Execute.
pub struct StatementPlan(Arc<Plan>);

impl Default for StatementPlan {
    /// The plan of an empty query string.
    fn default() -> Self {
        StatementPlan(Arc::new(Plan::Empty))
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
    engine: Arc<Engine>,
    instance: String,
    user: String,
    settings: Settings,
    transaction: Option<Transaction>,
    plan_cache: PlanCache<Plan>,
    /// The template of the statement `parse_simple` just parsed, for `run_simple` to
    /// cache its plan; only set when the query string held that one statement.
    pending_template: Option<Template>,
    /// The memory pool DataFusion queries run in; a default one when not given.
    query_runtime: Option<Arc<datafusion::execution::runtime_env::RuntimeEnv>>,
    /// DataFusion's state, made on the first query that needs it.
    query_engine: OnceLock<QueryEngine>,
    /// NOTICEs the running statement leaves for the client.
    notices: Arc<Notices>,
    /// Statements `DEALLOCATE` dropped, until the server takes them (`None` = all).
    deallocations: Vec<Option<String>>,
    /// The role's privileges (checked on every statement) and the role store.
    access: Access,
    /// What the last statement's result reported after `run` returned it: a DataFusion
    /// query's rows ending in an error, a COPY's rows to stage in the transaction block.
    aftermath: Arc<Aftermath>,
}

pub fn parse(sql: &str) -> SqlResult<Vec<Statement>> {
    if let Some((rewritten, create_user)) = super::role_statements::rewrite_user_statements(sql) {
        let mut statements = parse_sql(&rewritten)?;
        if create_user {
            statements
                .iter_mut()
                .for_each(super::role_statements::default_login);
        }
        return Ok(statements);
    }
    parse_sql(sql)
}

fn parse_sql(sql: &str) -> SqlResult<Vec<Statement>> {
    Parser::parse_sql(&PostgreSqlDialect {}, sql)
        .map_err(|e| SqlError::syntax(e.to_string().replace("sql parser error: ", "")))
}

/// What a statement only superusers may run would do, for the 42501 message.
fn superuser_only(statement: &Statement) -> Option<&'static str> {
    match statement {
        Statement::CreateTable(_) => Some("create table"),
        Statement::AlterTable(_) => Some("alter table"),
        Statement::Drop {
            object_type: ast::ObjectType::Table,
            ..
        } => Some("drop table"),
        Statement::Drop {
            object_type: ast::ObjectType::Database,
            ..
        } => Some("drop database"),
        Statement::CreateDatabase { .. } => Some("create database"),
        _ => None,
    }
}

fn command(tag: impl Into<String>) -> StatementResult {
    StatementResult::Command { tag: tag.into() }
}

fn single_row(name: &str, value: String) -> StatementResult {
    StatementResult::Query {
        columns: Arc::new(vec![OutputColumn {
            name: name.into(),
            ty: SqlType::Text,
            origin: None,
        }]),
        rows: stream::iter(vec![Ok(vec![Datum::Text(value)])]).boxed(),
    }
}

/// A SET value as PostgreSQL stores it.
fn setting_value(values: &[ast::Expr]) -> String {
    values
        .iter()
        .map(|v| match v {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) => s.clone(),
                other => other.to_string(),
            },
            ast::Expr::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Session {
    pub fn new(
        engine: Arc<Engine>,
        instance: String,
        user: String,
        startup: &[(String, String)],
    ) -> Self {
        let mut settings = Settings::new(&user);
        for (name, value) in startup {
            settings.startup(name, value);
        }
        Session {
            engine,
            instance,
            user,
            settings,
            transaction: None,
            plan_cache: PlanCache::default(),
            pending_template: None,
            query_runtime: None,
            query_engine: OnceLock::new(),
            notices: Arc::default(),
            deallocations: Vec::new(),
            access: Access::default(),
            aftermath: Arc::default(),
        }
    }

    /// Restricts the session to `access` (its role's privileges).
    pub fn with_access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }

    /// 42501 unless the session's role may do `privilege` on every table `plan`
    /// touches. Checked when a plan runs, not when it is made, so cached and
    /// prepared plans see a REVOKE at once.
    fn authorize(&self, plan: &Plan) -> SqlResult<()> {
        if self.access.unrestricted() {
            return Ok(());
        }
        let check = |table: &TableMeta, privilege| -> SqlResult<()> {
            Ok(self.access.check_table(table, privilege)?)
        };
        match plan {
            Plan::Select(p) => match &p.read {
                Some(read) => check(&read.relation.table, Privilege::Select),
                None => Ok(()),
            },
            Plan::Query(p) => {
                for name in p.scanned_tables() {
                    let ours = matches!(
                        name.schema(),
                        None | Some("public") | Some(super::relation::VERSIONS_SCHEMA)
                    );
                    if !ours {
                        continue;
                    }
                    match self.engine.table(&self.instance, name.table()) {
                        Ok(table) => check(&table, Privilege::Select)?,
                        // Dropped since planning: running the plan reports it.
                        Err(EngineError::TableNotFound { .. }) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Ok(())
            }
            Plan::Explain(inner, _) => self.authorize(inner),
            Plan::Insert(p) => {
                check(p.table(), Privilege::Insert)?;
                if p.may_update() {
                    check(p.table(), Privilege::Update)?;
                }
                if p.returns_rows() {
                    check(p.table(), Privilege::Select)?;
                }
                Ok(())
            }
            Plan::InsertSelect(p, query) => {
                check(p.table(), Privilege::Insert)?;
                self.authorize(query)
            }
            Plan::Update(p) => {
                check(p.table(), Privilege::Update)?;
                if p.reads_rows() {
                    check(p.table(), Privilege::Select)?;
                }
                Ok(())
            }
            Plan::Delete(p) => {
                check(p.table(), Privilege::Delete)?;
                if p.reads_rows() {
                    check(p.table(), Privilege::Select)?;
                }
                Ok(())
            }
            Plan::Utility(_) | Plan::Empty => Ok(()),
        }
    }

    /// Runs this session's DataFusion queries in `runtime` (the server's memory pool).
    pub fn with_query_runtime(
        mut self,
        runtime: Arc<datafusion::execution::runtime_env::RuntimeEnv>,
    ) -> Self {
        self.query_runtime = Some(runtime);
        self
    }

    /// Server-wide setting defaults (from the configuration), under the client's
    /// startup parameters.
    pub fn with_setting_defaults(mut self, defaults: &[(String, String)]) -> SqlResult<Self> {
        for (name, value) in defaults {
            self.settings.set_default(name, value)?;
        }
        Ok(self)
    }

    fn query_engine(&self) -> SqlResult<&QueryEngine> {
        if let Some(engine) = self.query_engine.get() {
            return Ok(engine);
        }
        let runtime = match &self.query_runtime {
            Some(runtime) => Arc::clone(runtime),
            None => query::runtime(query::DEFAULT_QUERY_MEMORY_MB)?,
        };
        let engine = QueryEngine::new(
            Arc::clone(&self.engine),
            &self.instance,
            &self.user,
            runtime,
            self.access.roles().cloned(),
        );
        engine.sync_settings(&self.settings);
        Ok(self.query_engine.get_or_init(|| engine))
    }

    /// What reads of this session see: its staged writes and `pgwide.as_of`.
    fn read_context(&self) -> SqlResult<ReadContext> {
        let as_of = match self.settings.value("pgwide.as_of") {
            Some(value) => Some(super::settings::parse_as_of(value)?),
            None => None,
        };
        Ok(ReadContext {
            engine: Arc::clone(&self.engine),
            staged: self
                .transaction
                .as_ref()
                .filter(|t| !t.staged.is_empty())
                .map(|t| t.staged.view()),
            as_of,
            meter: None,
            notices: Some(Arc::clone(&self.notices)),
        })
    }

    /// A SELECT: the fast path where it applies, else DataFusion.
    fn plan_query(&self, query: &ast::Query, params: &mut Params) -> SqlResult<Plan> {
        let given = params.types.clone();
        // Catalog schemas exist only in DataFusion; the fast path would report them missing.
        let fast = if query::is_catalog_query(query) {
            FastPath::Declined("catalog query".into())
        } else {
            plan_select(&self.engine, &self.instance, query, params)?
        };
        match fast {
            FastPath::Planned(plan) => Ok(Plan::Select(Arc::new(plan))),
            FastPath::Declined(why) => {
                tracing::trace!(why, "the fast path declined a query");
                let planned = self.query_engine()?.plan(query, &given)?;
                params.types = QueryEngine::param_types(&planned)
                    .into_iter()
                    .map(Some)
                    .collect();
                Ok(Plan::Query(planned))
            }
        }
    }

    fn params(&self, given: &[Option<SqlType>]) -> Params {
        let mut params = Params::new(given);
        params.session = (self.instance.clone(), self.user.clone());
        params
    }

    fn plan(&self, statement: Statement, params: &mut Params) -> SqlResult<Plan> {
        Ok(match statement {
            Statement::Query(query) => self.plan_query(&query, params)?,
            Statement::Explain {
                statement, analyze, ..
            } => match *statement {
                Statement::Query(query) => {
                    Plan::Explain(Box::new(self.plan_query(&query, params)?), analyze)
                }
                _ => return Err(SqlError::unsupported("EXPLAIN works on SELECT statements")),
            },
            Statement::Insert(insert) => {
                let plan = dml::plan_insert(&self.engine, &self.instance, &insert, params)?;
                match insert.source.as_deref() {
                    Some(source) if !matches!(*source.body, ast::SetExpr::Values(_)) => {
                        let query = self.plan_query(source, params)?;
                        let width = Self::columns(&query).len();
                        if width != plan.width() {
                            let more = if width > plan.width() {
                                "more expressions than target columns"
                            } else {
                                "more target columns than expressions"
                            };
                            return Err(SqlError::syntax(format!("INSERT has {more}")));
                        }
                        Plan::InsertSelect(plan, Box::new(query))
                    }
                    _ => Plan::Insert(plan),
                }
            }
            Statement::Update(update) => Plan::Update(dml::plan_update(
                &self.engine,
                &self.instance,
                &update,
                params,
            )?),
            Statement::Delete(delete) => Plan::Delete(dml::plan_delete(
                &self.engine,
                &self.instance,
                &delete,
                params,
            )?),
            other => Plan::Utility(Box::new(other)),
        })
    }

    fn columns(plan: &Plan) -> Arc<Vec<OutputColumn>> {
        match plan {
            Plan::Select(p) => Arc::clone(&p.columns),
            Plan::Query(p) => Arc::clone(&p.columns),
            Plan::Explain(..) => Arc::new(vec![OutputColumn {
                name: "QUERY PLAN".into(),
                ty: SqlType::Text,
                origin: None,
            }]),
            Plan::Insert(p) | Plan::InsertSelect(p, _) => p.columns(),
            Plan::Update(p) => p.columns(),
            Plan::Delete(p) => p.columns(),
            Plan::Utility(statement) => match &**statement {
                Statement::ShowVariable { variable } => Arc::new(vec![OutputColumn {
                    name: variable.iter().map(fold).collect::<Vec<_>>().join("."),
                    ty: SqlType::Text,
                    origin: None,
                }]),
                _ => Arc::new(Vec::new()),
            },
            Plan::Empty => Arc::new(Vec::new()),
        }
    }

    /// Runs a plan, tracking the transaction: an error inside one marks it failed.
    async fn run(&mut self, plan: &Plan, params: Vec<Datum>) -> SqlResult<StatementResult> {
        self.finish_query();
        let is_end = matches!(plan, Plan::Utility(s) if matches!(**s, Statement::Commit { .. } | Statement::Rollback { .. }));
        if self.transaction.as_ref().is_some_and(|t| t.failed) && !is_end {
            return Err(SqlError::new(
                SqlState::InFailedSqlTransaction,
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        let result = self.run_plan(plan, params).await;
        if result.is_err() {
            if let Some(transaction) = self.transaction.as_mut() {
                transaction.failed = true;
            }
        }
        result
    }

    async fn run_plan(&mut self, plan: &Plan, params: Vec<Datum>) -> SqlResult<StatementResult> {
        self.authorize(plan)?;
        let mut target = WriteTarget {
            engine: &self.engine,
            staged: self.transaction.as_mut().map(|t| &mut t.staged),
        };
        match plan {
            Plan::Select(p) => {
                let ctx = self.read_context()?;
                execute_select(&ctx, Arc::clone(p), params).await
            }
            Plan::Query(p) => {
                let ctx = self.read_context()?;
                let columns = Arc::clone(&p.columns);
                let rows = self.query_engine()?.execute(p, params, ctx).await?;
                let aftermath = Arc::clone(&self.aftermath);
                let rows = rows
                    .inspect(move |row| {
                        if row.is_err() {
                            aftermath.fail();
                        }
                    })
                    .boxed();
                Ok(StatementResult::Query { columns, rows })
            }
            Plan::Explain(inner, analyze) => {
                let ctx = self.read_context()?;
                match &**inner {
                    Plan::Select(p) => explain_fast_path(ctx, p, params, *analyze).await,
                    Plan::Query(p) => {
                        query::explain_query(self.query_engine()?, p, params, ctx, *analyze).await
                    }
                    _ => Err(SqlError::unsupported("EXPLAIN works on SELECT statements")),
                }
            }
            Plan::Insert(p) => dml::execute_insert(&mut target, p, &params).await,
            Plan::InsertSelect(p, query) => {
                let rows = self.query_rows(query, params.clone()).await?;
                let mut target = WriteTarget {
                    engine: &self.engine,
                    staged: self.transaction.as_mut().map(|t| &mut t.staged),
                };
                dml::execute_insert_rows(&mut target, p, rows, &params).await
            }
            Plan::Update(p) => dml::execute_update(&mut target, p, &params).await,
            Plan::Delete(p) => dml::execute_delete(&mut target, p, &params).await,
            Plan::Utility(statement) => self.utility(statement).await,
            Plan::Empty => Ok(command("")),
        }
    }

    /// All rows of a Select or Query plan, for statements that write what they read.
    async fn query_rows(&self, plan: &Plan, params: Vec<Datum>) -> SqlResult<Vec<Vec<Datum>>> {
        let ctx = self.read_context()?;
        let rows = match plan {
            Plan::Select(p) => match execute_select(&ctx, Arc::clone(p), params).await? {
                StatementResult::Query { rows, .. } => rows,
                _ => return Err(SqlError::internal("a SELECT returned no rows")),
            },
            Plan::Query(p) => self.query_engine()?.execute(p, params, ctx).await?,
            _ => return Err(SqlError::internal("not a query plan")),
        };
        rows.try_collect().await
    }

    /// `CREATE TABLE t [WITH (...)] AS SELECT ...`: the query is read first, so a failing
    /// query leaves no table; if writing its rows fails, the new table is dropped again.
    async fn create_table_as(&mut self, create: &ast::CreateTable) -> SqlResult<StatementResult> {
        let query = create
            .query
            .as_ref()
            .ok_or_else(|| SqlError::internal("CREATE TABLE AS without a query"))?;
        let name = ddl::table_name(&create.name)?;
        if create.if_not_exists && self.engine.table(&self.instance, &name).is_ok() {
            return Ok(command("CREATE TABLE AS"));
        }
        let mut params = self.params(&[]);
        let plan = self.plan_query(query, &mut params)?;
        let spec = ddl::table_as_spec(create, &Self::columns(&plan))?;
        let names: Vec<String> = spec
            .column_order
            .iter()
            .filter(|c| !(spec.auto_rowid && *c == ddl::ROWID))
            .cloned()
            .collect();
        let rows = self.query_rows(&plan, Vec::new()).await?;
        self.engine.create_table(&self.instance, spec).await?;
        let written = async {
            let insert = dml::insert_into(self.engine.table(&self.instance, &name)?, &names)?;
            let mut target = WriteTarget {
                engine: &self.engine,
                staged: self.transaction.as_mut().map(|t| &mut t.staged),
            };
            dml::execute_insert_rows(&mut target, &insert, rows, &[]).await
        }
        .await;
        match written {
            Ok(StatementResult::Command { tag }) => Ok(command(tag.replace("INSERT 0", "SELECT"))),
            Ok(_) => Err(SqlError::internal("CREATE TABLE AS returned rows")),
            Err(e) => {
                if let Err(dropped) = self.engine.drop_table(&self.instance, &name).await {
                    tracing::warn!(table = %name, error = %dropped, "could not drop the table of a failed CREATE TABLE AS");
                }
                Err(e)
            }
        }
    }

    async fn utility(&mut self, statement: &Statement) -> SqlResult<StatementResult> {
        if super::role_statements::handles(statement) {
            return super::role_statements::execute(
                &self.access,
                &self.engine,
                &self.instance,
                &self.user,
                statement,
            )
            .await;
        }
        if let Some(action) = superuser_only(statement) {
            self.access.require_superuser(action)?;
        }
        match statement {
            Statement::StartTransaction { .. } => {
                self.transaction.get_or_insert_with(Transaction::default);
                Ok(command("BEGIN"))
            }
            Statement::Commit { .. } => {
                let block = self.end_transaction();
                Ok(command(
                    transaction_block::commit(&self.engine, block).await?,
                ))
            }
            Statement::Rollback {
                savepoint: None, ..
            } => {
                self.end_transaction();
                Ok(command("ROLLBACK"))
            }
            Statement::Deallocate { name, .. } => {
                // Protocol-level statements live in the server; it drops them when it
                // takes these. psycopg sends DEALLOCATE ALL after every rollback.
                if name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all") {
                    self.deallocations.push(None);
                    return Ok(command("DEALLOCATE ALL"));
                }
                self.deallocations.push(Some(name.value.clone()));
                Ok(command("DEALLOCATE"))
            }
            Statement::Savepoint { name } => {
                transaction_block::open(&mut self.transaction, "SAVEPOINT")?.savepoint(name);
                Ok(command("SAVEPOINT"))
            }
            Statement::ReleaseSavepoint { name } => {
                transaction_block::open(&mut self.transaction, "RELEASE SAVEPOINT")?
                    .release(name)?;
                Ok(command("RELEASE"))
            }
            Statement::Rollback {
                savepoint: Some(name),
                ..
            } => {
                transaction_block::open(&mut self.transaction, "ROLLBACK TO SAVEPOINT")?
                    .rollback_to(name)?;
                Ok(command("ROLLBACK"))
            }
            Statement::CreateTable(create) if create.query.is_some() => {
                self.create_table_as(create).await
            }
            Statement::CreateTable(create) => {
                ddl::create_table(&self.engine, &self.instance, create).await?;
                Ok(command("CREATE TABLE"))
            }
            Statement::AlterTable(alter) => {
                ddl::alter_table(&self.engine, &self.instance, alter).await?;
                Ok(command("ALTER TABLE"))
            }
            Statement::Drop {
                object_type,
                if_exists,
                names,
                ..
            } => Ok(command(
                ddl::drop(
                    &self.engine,
                    &self.instance,
                    *object_type,
                    *if_exists,
                    names,
                )
                .await?,
            )),
            Statement::CreateDatabase {
                db_name,
                if_not_exists,
                ..
            } => {
                let (_, name) = ddl::object_name(db_name)?;
                match self.engine.create_instance(&name).await {
                    Err(EngineError::InstanceExists { .. }) if *if_not_exists => {}
                    other => {
                        other?;
                    }
                }
                Ok(command("CREATE DATABASE"))
            }
            Statement::Copy {
                source,
                to,
                target,
                options,
                legacy_options,
                ..
            } => {
                self.copy(source, *to, target, options, legacy_options)
                    .await
            }
            Statement::Set(set) => {
                let result = self.set(set);
                self.sync_query_settings();
                result
            }
            Statement::Reset(reset) => {
                match &reset.reset {
                    ast::Reset::ALL => self.settings.reset_all(),
                    ast::Reset::ConfigurationParameter(name) => {
                        let (prefix, name) = super::ddl::object_name(name)?;
                        let name = prefix.map_or(name.clone(), |p| format!("{p}.{name}"));
                        self.settings.reset(&name)?;
                    }
                }
                self.sync_query_settings();
                Ok(command("RESET"))
            }
            Statement::ShowVariable { variable } => {
                let name = variable.iter().map(fold).collect::<Vec<_>>().join(".");
                if name == "all" {
                    let rows: Vec<_> = self
                        .settings
                        .all()
                        .into_iter()
                        .map(|(k, v)| Ok(vec![Datum::Text(k), Datum::Text(v)]))
                        .collect();
                    return Ok(StatementResult::Query {
                        columns: Arc::new(vec![
                            OutputColumn {
                                name: "name".into(),
                                ty: SqlType::Text,
                                origin: None,
                            },
                            OutputColumn {
                                name: "setting".into(),
                                ty: SqlType::Text,
                                origin: None,
                            },
                        ]),
                        rows: stream::iter(rows).boxed(),
                    });
                }
                let name = if name == "transaction.isolation.level" {
                    "transaction_isolation".into()
                } else {
                    name
                };
                Ok(single_row(&name, self.settings.get(&name)?))
            }
            Statement::Discard { .. } => {
                self.end_transaction();
                self.settings.reset_all();
                self.sync_query_settings();
                Ok(command("DISCARD ALL"))
            }
            other => Err(SqlError::unsupported(format!(
                "statement not supported yet: {}",
                first_words(&other.to_string())
            ))),
        }
    }

    /// COPY FROM STDIN hands the server a sink; COPY TO STDOUT runs a SELECT.
    async fn copy(
        &mut self,
        source: &ast::CopySource,
        to: bool,
        target: &ast::CopyTarget,
        options: &[ast::CopyOption],
        legacy: &[ast::CopyLegacyOption],
    ) -> SqlResult<StatementResult> {
        let format = super::copy_statement::format(options, legacy)?;
        match (to, target, source) {
            (false, ast::CopyTarget::Stdin, ast::CopySource::Table { table_name, columns }) => {
                if !self.access.unrestricted() {
                    let table = self.engine.table(&self.instance, &ddl::table_name(table_name)?)?;
                    self.access.check_table(&table, Privilege::Insert)?;
                }
                let destination = match &self.transaction {
                    None => CopyDestination::Table,
                    Some(t) => CopyDestination::Transaction { before: t.staged.clone(), aftermath: Arc::clone(&self.aftermath) },
                };
                let (columns, sink) = super::copy_statement::copy_from(&self.engine, &self.instance, table_name, columns, format, destination)?;
                Ok(StatementResult::CopyIn { columns, sink })
            }
            (true, ast::CopyTarget::Stdout, source) => {
                let query = match source {
                    ast::CopySource::Table { table_name, columns } => {
                        let sql = super::copy_statement::select_for(table_name, columns)?;
                        parse(&sql)?.pop().ok_or_else(|| SqlError::internal("empty COPY query"))?
                    }
                    ast::CopySource::Query(query) => Statement::Query(query.clone()),
                };
                let mut params = self.params(&[]);
                let plan = self.plan(query, &mut params)?;
                match Box::pin(self.run_plan(&plan, Vec::new())).await? {
                    StatementResult::Query { columns, rows } => Ok(StatementResult::CopyOut { columns, format, rows }),
                    _ => Err(SqlError::unsupported("COPY TO needs a query that returns rows")),
                }
            }
            _ => Err(SqlError::unsupported("COPY works with FROM STDIN and TO STDOUT only; files are read by the client (psql \\copy)")),
        }
    }

    fn set(&mut self, set: &ast::Set) -> SqlResult<StatementResult> {
        match set {
            ast::Set::SingleAssignment {
                scope,
                variable,
                values,
                ..
            } => {
                let name = super::ddl::object_name(variable)?;
                let name = match name.0 {
                    Some(prefix) => format!("{prefix}.{}", name.1),
                    None => name.1,
                };
                let is_default = matches!(values.as_slice(), [ast::Expr::Identifier(i)] if i.value.eq_ignore_ascii_case("default"));
                let local = matches!(scope, Some(ast::ContextModifier::Local));
                if local {
                    // SET LOCAL: until the transaction ends; outside a block the
                    // statement is its own transaction, so only the check remains.
                    let value = if is_default {
                        None
                    } else {
                        Some(setting_value(values))
                    };
                    if let (Some(value), true) = (&value, name.eq_ignore_ascii_case("pgwide.as_of"))
                    {
                        super::settings::parse_as_of(value)?;
                    }
                    let in_transaction = self.transaction.is_some();
                    self.settings
                        .set_config(&name, value.as_deref(), true, in_transaction)?;
                } else if is_default {
                    self.settings.reset(&name)?;
                } else if name.eq_ignore_ascii_case("pgwide.as_of") {
                    let value = setting_value(values);
                    super::settings::parse_as_of(&value)?;
                    self.settings.set(&name, &value)?;
                } else {
                    self.settings.set(&name, &setting_value(values))?;
                }
            }
            ast::Set::SetTimeZone { value, .. } => self
                .settings
                .set("timezone", &setting_value(std::slice::from_ref(value)))?,
            ast::Set::SetNames { charset_name, .. } => {
                self.settings.set("client_encoding", &charset_name.value)?
            }
            ast::Set::SetTransaction { .. } => {}
            other => return Err(SqlError::unsupported(format!("{other} is not supported"))),
        }
        Ok(command("SET"))
    }
}

impl Session {
    /// Ends the transaction block, if any: SET LOCAL values end with it.
    fn end_transaction(&mut self) -> Option<Transaction> {
        self.settings.end_transaction();
        self.sync_query_settings();
        self.transaction.take()
    }

    /// What the last statement left once the client read its rows or sent its COPY
    /// data: an error aborts an open transaction block, a COPY's rows are staged in
    /// it, and the `set_config` changes a DataFusion query made are applied.
    fn finish_query(&mut self) {
        let failed = self.aftermath.take_failed();
        let copied = self.aftermath.take_staged();
        if let Some(transaction) = self.transaction.as_mut() {
            transaction.failed |= failed;
            if let Some(staged) = copied {
                transaction.staged = staged;
            }
        }
        let Some(engine) = self.query_engine.get() else {
            return;
        };
        let changes = engine.take_config_changes();
        if changes.is_empty() {
            return;
        }
        let in_transaction = self.transaction.is_some();
        for change in changes {
            // `set_config` checked the change already; only a race with a later SET
            // could make it fail here.
            if let Err(e) = self.settings.set_config(
                &change.name,
                change.value.as_deref(),
                change.local,
                in_transaction,
            ) {
                tracing::warn!(setting = %change.name, error = %e.message(), "set_config change not applied");
            }
        }
        self.sync_query_settings();
    }

    /// Shows the session's settings to `current_setting` after they changed.
    fn sync_query_settings(&self) {
        if let Some(engine) = self.query_engine.get() {
            engine.sync_settings(&self.settings);
        }
    }

    /// Plans the template of a statement just planned and caches it when the two are
    /// interchangeable (see `plan_cache`). Only reads and writes are cached: DDL and
    /// settings change what later statements mean.
    fn cache_template(&mut self, template: &Template, statement_plan: &Plan) {
        if !matches!(
            statement_plan,
            Plan::Select(_) | Plan::Insert(_) | Plan::Update(_) | Plan::Delete(_)
        ) {
            return;
        }
        let version = self.engine.catalog_version();
        if !matches!(self.plan_cache.lookup(&template.key, version), Lookup::Miss) {
            return;
        }
        let mut params = self.params(&[]);
        let planned = match parse(&template.key) {
            Ok(mut statements) if statements.len() == 1 => statements
                .pop()
                .and_then(|statement| self.plan(statement, &mut params).ok()),
            _ => None,
        };
        let columns = planned.as_ref().map(Self::columns);
        let statement_columns = Self::columns(statement_plan);
        self.plan_cache.insert(
            template,
            version,
            planned.zip(columns.as_deref()).map(|(plan, columns)| {
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
        self.finish_query();
        self.pending_template = None;
        let template = plan_cache::templatize(sql);
        if let Some(template) = &template {
            let version = self.engine.catalog_version();
            if let Lookup::Hit(cached) = self.plan_cache.lookup(&template.key, version) {
                if let Some(params) = plan_cache::bind(&template.literals, &cached.param_types) {
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
        let statements = parse(sql)?;
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
        let mut params = self.params(&[]);
        let plan = match self.plan(*statement, &mut params) {
            Ok(plan) => plan,
            Err(e) => {
                if let Some(t) = self.transaction.as_mut() {
                    t.failed = true;
                }
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
        self.finish_query();
        let mut statements = parse(sql)?;
        if statements.len() > 1 {
            return Err(SqlError::syntax(
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let mut params = self.params(param_types);
        let (plan, columns) = match statements.pop() {
            None => (Plan::Empty, Arc::new(Vec::new())),
            Some(statement) => {
                let plan = self.plan(statement, &mut params)?;
                let columns = Self::columns(&plan);
                (plan, columns)
            }
        };
        Ok(Arc::new(PreparedStatement {
            sql: sql.to_string(),
            param_types: params.finish(),
            columns,
            plan: StatementPlan(Arc::new(plan)),
        }))
    }

    async fn execute(
        &mut self,
        statement: &PreparedStatement<StatementPlan>,
        params: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        self.run(&statement.plan.0, params).await
    }

    fn transaction_status(&self) -> TransactionStatus {
        match &self.transaction {
            None => TransactionStatus::Idle,
            Some(t) if t.failed => TransactionStatus::Failed,
            Some(_) => TransactionStatus::InTransaction,
        }
    }

    fn take_notices(&mut self) -> Vec<Notice> {
        self.notices.take()
    }

    fn take_deallocations(&mut self) -> Vec<Option<String>> {
        std::mem::take(&mut self.deallocations)
    }

    fn take_parameter_changes(&mut self) -> Vec<(String, String)> {
        self.finish_query();
        self.settings.take_changes()
    }

    fn abort_transaction(&mut self) {
        self.end_transaction();
    }

    fn timeouts(&self) -> super::SessionTimeouts {
        self.settings.timeouts()
    }

    fn statement_interrupted(&mut self) {
        if let Some(transaction) = &mut self.transaction {
            transaction.failed = true;
        }
    }
}
