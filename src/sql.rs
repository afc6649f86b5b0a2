//! The SQL layer: parses statements with sqlparser and plans them onto the engine —
//! DDL, versioned writes, and reads on the fast paths (point get, batch get, PK range).
//! The wire server talks to it only through [`SessionFactory`] and [`SqlSession`].

mod access;
pub mod activity;
mod char_casts;
mod check_constraints;
mod copy_statement;
mod cursor_statements;
pub mod datetime;
mod ddl;
mod deferred_drops;
mod dml;
mod explain;
mod expr;
mod notices;
mod notification_statements;
pub mod notifications;
mod open_cursors;
pub mod pg_array_text;
mod pg_catalog;
pub mod pg_float_text;
pub mod pg_interval;
pub mod pg_json;
pub mod pg_number_format;
pub mod pg_numeric;
mod pg_to_char;
mod pg_uuid;
mod plan_cache;
mod queried_writes;
mod query;
mod read_statements;
mod relation;
mod role_statements;
mod row_locks;
mod row_reader;
mod schema_statements;
mod select;
mod sequence_values;
mod session;
mod session_commands;
mod session_state;
mod session_zone;
mod settings;
mod sql_error;
mod sql_prepared;
pub mod sql_types;
mod statement_aftermath;
mod statement_handler;
mod statement_parser;
mod transaction_block;
mod transaction_statements;
mod truncate_statement;
mod values;
mod view_statements;
mod views;
mod write_statements;

pub use check_constraints::CheckRules;
pub use notices::Notice;
pub use pg_uuid::{format as format_uuid, parse as parse_uuid, random as random_uuid};
pub use query::{runtime as query_runtime, DEFAULT_QUERY_MEMORY_MB};
pub use session::{ParsedSql, Session, StatementPlan};
pub use sql_error::{Interruption, Severity};
pub use sql_types::{
    ArrayOf, CopyFormat, CopySink, Datum, OutputColumn, RowStream, SqlError, SqlResult, SqlType,
    StatementResult, TransactionStatus,
};

/// The PostgreSQL version pgwide reports; clients choose their catalog queries by it.
pub const SERVER_VERSION: &str = "15.12";
pub const SERVER_VERSION_NUM: &str = "150012";

use async_trait::async_trait;
use std::sync::Arc;

/// A statement parsed and planned once, executed many times with different parameters.
/// `P` is the session's plan (`SqlSession::Plan`); the server only keeps it.
pub struct PreparedStatement<P> {
    pub sql: String,
    /// The type of each `$n` parameter, in order.
    pub param_types: Vec<SqlType>,
    /// The columns the statement returns; empty for commands without RETURNING.
    pub columns: Arc<Vec<OutputColumn>>,
    /// The SQL layer's own plan.
    pub plan: P,
}

/// One statement of a simple-query string, parsed but not yet planned (a later
/// statement may depend on an earlier one, such as INSERT after CREATE TABLE). `P` is
/// the session's parsed form (`SqlSession::Parsed`).
pub struct ParsedStatement<P> {
    pub sql: String,
    pub parsed: P,
}

/// Opens sessions: one per client connection.
#[async_trait]
pub trait SessionFactory: Send + Sync + 'static {
    type Session: SqlSession;

    /// A session on `database` for `user`. A missing database is SQLSTATE 3D000.
    /// `params` are the startup parameters the client sent (application_name, ...).
    async fn open(
        &self,
        database: &str,
        user: &str,
        params: &[(String, String)],
    ) -> SqlResult<Self::Session>;

    /// Notifications the server itself sends to the clients that LISTEN, such as a
    /// table's stream having new records; `None` when there are none to send.
    fn server_notifications(
        &self,
    ) -> Option<tokio::sync::mpsc::UnboundedReceiver<notifications::Notification>> {
        None
    }
}

/// A client's session: its database, settings (SET/SHOW) and open transaction.
#[async_trait]
pub trait SqlSession: Send + 'static {
    /// A prepared statement's plan, kept by the server from Parse to Close. The
    /// default is the plan of an empty query string, which the server prepares itself.
    type Plan: Default + Send + Sync + 'static;
    /// A simple-query statement as `parse_simple` left it for `run_simple`.
    type Parsed: Send + 'static;

    /// Splits a simple-query string into statements (an empty string gives none).
    fn parse_simple(&mut self, sql: &str) -> SqlResult<Vec<ParsedStatement<Self::Parsed>>>;

    /// Plans and runs one statement of a simple query.
    async fn run_simple(
        &mut self,
        statement: ParsedStatement<Self::Parsed>,
    ) -> SqlResult<StatementResult>;

    /// Parses and plans a statement for the extended protocol. `param_types` holds the
    /// types the client gave (`None` = infer); the result lists every parameter's type.
    async fn prepare(
        &mut self,
        sql: &str,
        param_types: &[Option<SqlType>],
    ) -> SqlResult<Arc<PreparedStatement<Self::Plan>>>;

    /// Runs a prepared statement with bound parameters (`Datum::Null` for NULL).
    async fn execute(
        &mut self,
        statement: &PreparedStatement<Self::Plan>,
        params: Vec<Datum>,
    ) -> SqlResult<StatementResult>;

    /// The state to report in ReadyForQuery.
    fn transaction_status(&self) -> TransactionStatus;

    /// Parameters changed by SET since the last call, to send as ParameterStatus.
    fn take_parameter_changes(&mut self) -> Vec<(String, String)>;

    /// NOTICEs left by the statements run since the last call, to send to the client.
    fn take_notices(&mut self) -> Vec<Notice> {
        Vec::new()
    }

    /// Prepared statements that SQL `DEALLOCATE` dropped since the last call (`None`
    /// for `DEALLOCATE ALL`), for the server to forget them.
    fn take_deallocations(&mut self) -> Vec<Option<String>> {
        Vec::new()
    }

    /// Ends a transaction the client abandoned (connection closed mid-transaction).
    fn abort_transaction(&mut self) {}

    /// The session's current timeouts (`statement_timeout` and the idle ones), which
    /// the server enforces.
    fn timeouts(&self) -> SessionTimeouts {
        SessionTimeouts::default()
    }

    /// The session's `TimeZone`, in which `timestamptz` values are read and shown.
    fn time_zone(&self) -> datetime::TimeZone {
        datetime::TimeZone::default()
    }

    /// The columns of the SQL cursor `name` (`DECLARE name CURSOR FOR ...`), which the
    /// protocol may describe as a portal of that name, as PostgreSQL lets it.
    fn cursor_columns(&self, _name: &str) -> Option<Arc<Vec<OutputColumn>>> {
        None
    }

    /// The server's connection this session serves, and all of the server's
    /// connections (`pg_stat_activity`, `pg_backend_pid()`).
    fn attach_backend(&mut self, _backend: activity::SessionBackend) {}

    /// Sends the notifications of the session's committed statements to their
    /// listeners (called before each ReadyForQuery); those of an open transaction
    /// block wait for its COMMIT.
    fn send_notifications(&mut self) {}

    /// A statement was interrupted (cancel or `statement_timeout`) before it finished:
    /// an open transaction block is aborted, as after any error.
    fn statement_interrupted(&mut self) {}
}

/// Timeouts a session asks the server to enforce; `None` means no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionTimeouts {
    /// `statement_timeout`: a statement running longer is canceled with 57014.
    pub statement: Option<std::time::Duration>,
    /// `idle_in_transaction_session_timeout`: FATAL 25P03 when exceeded.
    pub idle_in_transaction: Option<std::time::Duration>,
    /// `idle_session_timeout`: FATAL 57P05 when exceeded outside a transaction.
    pub idle_session: Option<std::time::Duration>,
}
