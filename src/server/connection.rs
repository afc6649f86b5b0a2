//! One client connection after startup: the message loop, the simple query protocol,
//! streaming a result's rows, error reporting and shutdown. The extended protocol's
//! handlers live in `extended`; both share the streaming and error paths here.
//!
//! Flushing: messages are only appended to the output buffer; the socket is written at
//! Sync, Flush, the end of a simple query, or when a large result fills the buffer.
//!
//! Limits enforced here: the authentication timeout (startup), the session's idle
//! timeouts (while waiting for a command after ReadyForQuery) and, through the cancel
//! scope, its `statement_timeout`. The message size limit is the framing's (`wire`).

use super::cancel::{CancelHandle, Scope};
use super::encode::{put_data_row, put_row_description, Formats};
use super::extended::{Portals, Statement};
use super::listeners::Client;
use super::startup::{handshake, Established};
use super::tls::Tls;
use super::wire::{put_command_complete, put_select_complete, Frontend, Wire, WireError};
use super::Shared;
use crate::sql::{
    OutputColumn, RowStream, SessionFactory, SessionTimeouts, SqlError, SqlSession,
    StatementResult, TransactionStatus,
};
use crate::sqlstate::SqlState;
use futures::{FutureExt, StreamExt};
use pgwire::messages::response::EmptyQueryResponse;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

/// A statement streaming rows that are ready at once looks for a cancel or its timeout
/// every this many rows.
const INTERRUPT_CHECK_ROWS: u64 = 32;

/// Why a handler stopped: a SQL error for the client, a dead socket, or a message
/// that ends the connection (protocol violation, message too large).
pub(crate) enum Fault {
    Sql(SqlError),
    Io(std::io::Error),
    Wire(WireError),
}

impl From<SqlError> for Fault {
    fn from(e: SqlError) -> Self {
        Fault::Sql(e)
    }
}

impl From<std::io::Error> for Fault {
    fn from(e: std::io::Error) -> Self {
        Fault::Io(e)
    }
}

/// What ended the wait for the next message.
enum Event {
    Message(Result<Option<Frontend>, WireError>),
    Shutdown,
    /// An idle timeout expired: its SQLSTATE and message.
    Idle(SqlState, &'static str),
    /// `pg_terminate_backend` asked the connection to end.
    Terminated,
    /// Notifications arrived for the connection's client.
    Notified,
}

/// Serves one accepted socket to the end.
pub(crate) async fn run<F: SessionFactory>(
    client: Client,
    shared: Arc<Shared<F>>,
    stop: watch::Receiver<bool>,
) {
    match client {
        Client::Tcp(stream) => {
            // Every response is written whole at Sync; Nagle would only add latency.
            if let Err(e) = stream.set_nodelay(true) {
                tracing::debug!(error = %e, "could not set TCP_NODELAY");
            }
            let client = stream.peer_addr().ok();
            negotiate_and_run(stream, shared.tls.as_ref(), false, client, &shared, stop).await;
        }
        // As PostgreSQL does, a local socket is not encrypted (an SSLRequest is
        // answered 'N') and counts as private: nobody between the ends could read it,
        // so `require_tls`, which guards the network, does not refuse it.
        Client::Unix(stream) => negotiate_and_run(stream, None, true, None, &shared, stop).await,
    }
}

/// Answers the client's SSLRequest (upgrading the socket when `tls` is given), then
/// serves it; `local` marks a socket no one else can read, `client` is the peer's
/// address (none for a local socket).
async fn negotiate_and_run<IO, F>(
    io: IO,
    tls: Option<&Tls>,
    local: bool,
    client: Option<SocketAddr>,
    shared: &Shared<F>,
    stop: watch::Receiver<bool>,
) where
    IO: AsyncRead + AsyncWrite + Unpin + Send,
    F: SessionFactory,
{
    // One deadline covers the TLS handshake, startup and authentication.
    let deadline = tokio::time::Instant::now() + shared.authentication_timeout;
    let negotiated = tokio::time::timeout_at(deadline, super::tls::negotiate(io, tls)).await;
    let stream = match negotiated {
        Ok(Ok(Some(stream))) => stream,
        Ok(Ok(None)) | Err(_) => return,
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "connection lost during SSL negotiation");
            return;
        }
    };
    let private = local || stream.is_tls();
    run_stream(stream, private, client, deadline, shared, stop).await;
}

/// Serves a connected client stream, after any TLS negotiation, to the end: startup
/// (bounded by `deadline`), then the message loop. `private`: encrypted, or a local
/// socket — what `require_tls` asks of a client.
pub(crate) async fn run_stream<S, F>(
    stream: S,
    private: bool,
    client: Option<SocketAddr>,
    deadline: tokio::time::Instant,
    shared: &Shared<F>,
    stop: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send,
    F: SessionFactory,
{
    let mut wire = Wire::new(stream);
    wire.set_max_message_size(shared.max_message_size);
    let established = match tokio::time::timeout_at(
        deadline,
        handshake(&mut wire, shared, private, client),
    )
    .await
    {
        Ok(Ok(Some(established))) => established,
        Ok(Ok(None)) => return,
        Ok(Err(WireError::Io(e))) => {
            tracing::debug!(error = %e, "connection lost during startup");
            return;
        }
        Ok(Err(e)) => {
            if let Some((code, message)) = e.fatal() {
                wire.fatal(code, message.to_owned()).await;
            }
            return;
        }
        Err(_) => {
            tracing::debug!("client did not finish startup in time");
            wire.fatal(
                SqlState::ProtocolViolation,
                "canceling authentication due to timeout",
            )
            .await;
            return;
        }
    };
    let Established {
        session,
        registration,
        _slot,
    } = established;
    let mut connection = Connection {
        wire,
        session,
        cancel: Arc::clone(&registration.handle),
        statements: HashMap::new(),
        portals: Portals::default(),
        skipping: false,
        awaiting_command: true,
    };
    connection.serve(stop).await;
    if connection.session.transaction_status() != TransactionStatus::Idle {
        connection.session.abort_transaction();
    }
}

/// Per-connection state after startup, serving session `Q`.
pub(crate) struct Connection<S, Q: SqlSession> {
    pub(super) wire: Wire<S>,
    pub(super) session: Q,
    pub(super) cancel: Arc<CancelHandle>,
    pub(super) statements: HashMap<String, Statement<Q::Plan>>,
    pub(super) portals: Portals<Q::Plan>,
    /// After an error in the extended protocol, messages are discarded until Sync.
    pub(super) skipping: bool,
    /// ReadyForQuery was the last thing sent: the session is idle, and its idle
    /// timeouts run until the next message.
    pub(super) awaiting_command: bool,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send, Q: SqlSession> Connection<S, Q> {
    async fn serve(&mut self, mut stop: watch::Receiver<bool>) {
        loop {
            let timeouts = self.session.timeouts();
            self.cancel.set_statement_timeout(timeouts.statement);
            let idle = self.idle_limit(&timeouts);
            let activity = Arc::clone(&self.cancel);
            // Notifications go out while the client waits outside a transaction block,
            // as PostgreSQL sends them.
            let notify_now = self.awaiting_command
                && self.session.transaction_status() == TransactionStatus::Idle;
            let event = tokio::select! {
                // A message already buffered is handled before shutdown is noticed,
                // but not before pg_terminate_backend's signal.
                biased;
                _ = activity.activity.terminated() => Event::Terminated,
                message = self.wire.read_message() => Event::Message(message),
                _ = stop.wait_for(|stopping| *stopping) => Event::Shutdown,
                (code, message) = expire(idle) => Event::Idle(code, message),
                _ = activity.inbox.arrived(), if notify_now => Event::Notified,
            };
            let message = match event {
                Event::Message(message) => message,
                Event::Shutdown => {
                    self.wire
                        .fatal(
                            SqlState::AdminShutdown,
                            "terminating connection due to administrator command",
                        )
                        .await;
                    return;
                }
                Event::Terminated => {
                    tracing::debug!("pg_terminate_backend ended the connection");
                    self.wire
                        .fatal(
                            SqlState::AdminShutdown,
                            "terminating connection due to administrator command",
                        )
                        .await;
                    return;
                }
                Event::Idle(code, message) => {
                    tracing::debug!(%message, "closing an idle connection");
                    self.wire.fatal(code, message).await;
                    return;
                }
                Event::Notified => {
                    self.put_notifications();
                    if let Err(e) = self.wire.flush().await {
                        tracing::debug!(error = %e, "connection lost");
                        return;
                    }
                    continue;
                }
            };
            self.awaiting_command = false;
            let result = match message {
                Ok(Some(message)) => self.dispatch(message).await,
                Ok(None) => return,
                Err(e) => Err(e),
            };
            match result {
                Ok(true) => {}
                Ok(false) => return,
                Err(WireError::Io(e)) => {
                    tracing::debug!(error = %e, "connection lost");
                    return;
                }
                Err(e) => {
                    if let Some((code, message)) = e.fatal() {
                        tracing::debug!(%message, "bad message; closing the connection");
                        self.wire.fatal(code, message.to_owned()).await;
                    }
                    if matches!(e, WireError::TooLarge(_)) {
                        self.wire.linger().await;
                    }
                    return;
                }
            }
        }
    }

    /// The idle timeout that applies while waiting for the next command: PostgreSQL
    /// arms them only after ReadyForQuery, not between the messages of a batch.
    fn idle_limit(&self, timeouts: &SessionTimeouts) -> Option<(Duration, SqlState, &'static str)> {
        if !self.awaiting_command {
            return None;
        }
        match self.session.transaction_status() {
            TransactionStatus::Idle => timeouts.idle_session.map(|t| {
                (
                    t,
                    SqlState::DatabaseDropped,
                    "terminating connection due to idle-session timeout",
                )
            }),
            TransactionStatus::InTransaction | TransactionStatus::Failed => {
                timeouts.idle_in_transaction.map(|t| {
                    (
                        t,
                        SqlState::IdleInTransactionSessionTimeout,
                        "terminating connection due to idle-in-transaction timeout",
                    )
                })
            }
        }
    }

    /// Handles one message; `Ok(false)` ends the connection.
    async fn dispatch(&mut self, message: Frontend) -> Result<bool, WireError> {
        match message {
            Frontend::Terminate => return Ok(false),
            Frontend::Sync => {
                self.skipping = false;
                self.sync().await?;
            }
            _ if self.skipping => {}
            Frontend::Query(sql) => self.simple_query(&sql).await?,
            Frontend::Flush => self.wire.flush().await?,
            Frontend::CopyData(_) | Frontend::CopyDone | Frontend::CopyFail(_) => {}
            Frontend::Parse {
                name,
                sql,
                param_oids,
            } => {
                let result = self.parse(name, sql.clone(), &param_oids).await;
                self.extended_outcome(result, |_| Some(sql))?;
            }
            Frontend::Bind(mut bind) => {
                let statement = std::mem::take(&mut bind.statement);
                let result = self.bind(bind, &statement);
                self.extended_outcome(result, |c| c.statement_sql(&statement))?;
            }
            Frontend::Describe { target, name } => {
                let result = self.describe(target, &name);
                self.extended_outcome(result, |c| c.statement_sql(&name))?;
            }
            Frontend::Execute { portal, max_rows } => {
                if let Some(sql) = self.portals.sql_of(&portal) {
                    self.cancel.activity.statement_started(sql);
                }
                let result = self.execute(&portal, max_rows).await;
                self.extended_outcome(result, |c| c.portals.sql_of(&portal).map(str::to_owned))?;
            }
            Frontend::Close { target, name } => {
                let result = self.close(target, &name);
                self.extended_outcome(result, |_| None)?;
            }
        }
        Ok(true)
    }

    /// An extended-protocol error is reported and then everything up to Sync ignored.
    /// `statement` gives the failed statement's text for the log; it runs only on
    /// failure, so the success path pays nothing for it.
    fn extended_outcome(
        &mut self,
        result: Result<(), Fault>,
        statement: impl FnOnce(&Self) -> Option<String>,
    ) -> Result<(), WireError> {
        match result {
            Ok(()) => Ok(()),
            Err(Fault::Sql(e)) => {
                let sql = statement(self);
                self.sql_error(&e, sql.as_deref());
                self.skipping = true;
                Ok(())
            }
            Err(Fault::Io(e)) => Err(WireError::Io(e)),
            Err(Fault::Wire(e)) => Err(e),
        }
    }

    /// The text of prepared statement `name`, for the log of a failure.
    fn statement_sql(&self, name: &str) -> Option<String> {
        self.statements.get(name).map(|s| s.sql().to_owned())
    }

    /// Reports a statement's error, and logs it with its SQLSTATE and text as
    /// PostgreSQL does with `log_min_error_statement = error`, so a user can see what a
    /// tool sent. One that interrupted the statement (cancel, statement timeout) came
    /// from outside the session, which is told so that an open transaction block is
    /// aborted as after any other error.
    fn sql_error(&mut self, error: &SqlError, statement: Option<&str>) {
        tracing::info!(
            sqlstate = error.code(),
            statement = statement.unwrap_or(""),
            "ERROR: {}",
            error.message()
        );
        if matches!(error, SqlError::Canceled(_)) {
            self.session.statement_interrupted();
        }
        self.wire.put_error(error);
    }

    /// Sync: end of an extended-protocol batch. Portals do not outlive the implicit
    /// transaction, so they are dropped once no transaction block is open.
    async fn sync(&mut self) -> std::io::Result<()> {
        if self.session.transaction_status() == TransactionStatus::Idle {
            self.portals.clear();
        }
        self.ready().await
    }

    /// Pending ParameterStatus, then notifications (outside a transaction block), then
    /// ReadyForQuery, then one write to the socket.
    async fn ready(&mut self) -> std::io::Result<()> {
        self.put_parameter_changes();
        self.session.send_notifications();
        let status = self.session.transaction_status();
        if status == TransactionStatus::Idle {
            self.put_notifications();
        }
        self.cancel.activity.ready(status);
        self.wire.put_ready(status);
        self.awaiting_command = true;
        self.wire.flush().await
    }

    /// The notifications waiting for this connection's client.
    fn put_notifications(&mut self) {
        for notification in self.cancel.inbox.take() {
            self.wire.put_notification(&notification);
        }
    }

    pub(super) fn put_parameter_changes(&mut self) {
        self.put_notices();
        for (name, value) in self.session.take_parameter_changes() {
            if name == "application_name" {
                self.cancel.activity.set_application_name(&value);
            }
            self.wire.put_parameter(&name, &value);
        }
    }

    /// NOTICEs the statement left, sent before its CommandComplete where possible.
    pub(super) fn put_notices(&mut self) {
        for notice in self.session.take_notices() {
            self.wire.put_notice(&notice);
        }
    }

    /// The simple query protocol: every statement of the string in turn, stopping at
    /// the first error, then ReadyForQuery.
    async fn simple_query(&mut self, sql: &str) -> Result<(), WireError> {
        self.cancel.activity.statement_started(sql);
        match self.run_simple(sql).await {
            Ok(()) => {}
            Err(Fault::Sql(e)) => self.sql_error(&e, Some(sql)),
            Err(Fault::Io(e)) => return Err(WireError::Io(e)),
            Err(Fault::Wire(e)) => return Err(e),
        }
        Ok(self.ready().await?)
    }

    async fn run_simple(&mut self, sql: &str) -> Result<(), Fault> {
        let statements = self.session.parse_simple(sql)?;
        if statements.is_empty() {
            self.wire.put(&EmptyQueryResponse::new());
            return Ok(());
        }
        let cancel = Arc::clone(&self.cancel);
        let notified = std::pin::pin!(cancel.notified());
        let mut scope = cancel.scope(notified);
        for statement in statements {
            let result = scope.run(self.session.run_simple(statement)).await;
            self.put_parameter_changes();
            let deallocated = self.apply_deallocations();
            let result = result?;
            deallocated?;
            match result {
                StatementResult::Command { tag } => put_command_complete(self.wire.out(), &tag),
                StatementResult::Query { columns, mut rows } => {
                    put_row_description(self.wire.out(), &columns, &Formats::Text);
                    let (count, _) = self
                        .stream_rows(&mut scope, &columns, &mut rows, &Formats::Text, 0)
                        .await?;
                    put_select_complete(self.wire.out(), count);
                }
                StatementResult::Returning {
                    columns,
                    mut rows,
                    tag,
                } => {
                    put_row_description(self.wire.out(), &columns, &Formats::Text);
                    self.stream_rows(&mut scope, &columns, &mut rows, &Formats::Text, 0)
                        .await?;
                    put_command_complete(self.wire.out(), &tag);
                }
                StatementResult::CopyIn { columns, sink } => {
                    let tag = self.copy_in(columns, sink).await?;
                    put_command_complete(self.wire.out(), &tag);
                }
                StatementResult::CopyOut {
                    columns,
                    format,
                    mut rows,
                } => {
                    let count = self
                        .copy_out(&mut scope, &columns, &format, &mut rows)
                        .await?;
                    put_command_complete(self.wire.out(), &format!("COPY {count}"));
                }
            }
        }
        Ok(())
    }

    /// Sends up to `limit` rows (0 = all) as DataRows. Returns how many were sent and
    /// whether the stream is exhausted.
    pub(super) async fn stream_rows(
        &mut self,
        scope: &mut Scope<'_, '_>,
        columns: &[OutputColumn],
        rows: &mut RowStream,
        formats: &Formats,
        limit: usize,
    ) -> Result<(u64, bool), Fault> {
        let mut sent = 0u64;
        // A statement's rows are shown in one zone (SET cannot run meanwhile).
        let zone = self.session.time_zone();
        loop {
            if limit > 0 && sent as usize >= limit {
                return Ok((sent, false));
            }
            // A row that is ready at once (most are: engine pages, DataFusion batches)
            // is taken without racing it against a cancel; cancel and timeout are then
            // looked at every few rows instead.
            let next = match rows.next().now_or_never() {
                Some(next) => {
                    if sent % INTERRUPT_CHECK_ROWS == 0 {
                        if let Some(e) = scope.interrupted() {
                            return Err(e.into());
                        }
                    }
                    next
                }
                None => scope.run(async { Ok(rows.next().await) }).await?,
            };
            let Some(row) = next else {
                self.put_notices();
                return Ok((sent, true));
            };
            put_data_row(self.wire.out(), &row?, columns, formats, &zone)?;
            sent += 1;
            self.wire.flush_if_full().await?;
        }
    }
}

/// Completes when the idle limit expires, with the FATAL error to send; never without
/// a limit.
async fn expire(limit: Option<(Duration, SqlState, &'static str)>) -> (SqlState, &'static str) {
    match limit {
        Some((after, code, message)) => {
            tokio::time::sleep(after).await;
            (code, message)
        }
        None => std::future::pending().await,
    }
}
