//! One client connection after startup: the message loop, the simple query protocol,
//! streaming a result's rows, error reporting and shutdown. The extended protocol's
//! handlers live in `extended`; both share the streaming and error paths here.
//!
//! Flushing: messages are only appended to the output buffer; the socket is written at
//! Sync, Flush, the end of a simple query, or when a large result fills the buffer.

use super::cancel::{CancelHandle, Scope};
use super::encode::{put_data_row, put_row_description, Formats};
use super::extended::{Portal, Statement};
use super::startup::{handshake, Established};
use super::wire::{put_command_complete, put_select_complete, Frontend, Wire, WireError};
use super::Shared;
use crate::sql::{
    OutputColumn, RowStream, SqlError, SqlSession, StatementResult, TransactionStatus,
};
use futures::StreamExt;
use pgwire::messages::response::EmptyQueryResponse;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::watch;

/// A client that does not finish startup in this time is dropped.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a handler stopped: a SQL error for the client, or a dead socket.
pub(crate) enum Fault {
    Sql(SqlError),
    Io(std::io::Error),
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

/// Serves one accepted socket to the end.
pub(crate) async fn run(stream: TcpStream, shared: Arc<Shared>, stop: watch::Receiver<bool>) {
    // Every response is written whole at Sync; Nagle would only add latency.
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "could not set TCP_NODELAY");
    }
    let mut wire = Wire::new(stream);
    let established =
        match tokio::time::timeout(STARTUP_TIMEOUT, handshake(&mut wire, &shared)).await {
            Ok(Ok(Some(established))) => established,
            Ok(Ok(None)) => return,
            Ok(Err(WireError::Protocol(message))) => {
                wire.fatal("08P01", message).await;
                return;
            }
            Ok(Err(WireError::Io(e))) => {
                tracing::debug!(error = %e, "connection lost during startup");
                return;
            }
            Err(_) => {
                wire.fatal("08P01", "startup timed out").await;
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
        portals: HashMap::new(),
        skipping: false,
    };
    connection.serve(stop).await;
    if connection.session.transaction_status() != TransactionStatus::Idle {
        connection.session.abort_transaction();
    }
}

/// Per-connection state after startup.
pub(crate) struct Connection<S> {
    pub(super) wire: Wire<S>,
    pub(super) session: Box<dyn SqlSession>,
    pub(super) cancel: Arc<CancelHandle>,
    pub(super) statements: HashMap<String, Statement>,
    pub(super) portals: HashMap<String, Portal>,
    /// After an error in the extended protocol, messages are discarded until Sync.
    pub(super) skipping: bool,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Connection<S> {
    async fn serve(&mut self, mut stop: watch::Receiver<bool>) {
        loop {
            let message = tokio::select! {
                // A message already buffered is handled before shutdown is noticed.
                biased;
                message = self.wire.read_message() => Some(message),
                _ = stop.wait_for(|stopping| *stopping) => None,
            };
            let Some(message) = message else {
                self.wire
                    .fatal(
                        "57P01",
                        "terminating connection due to administrator command",
                    )
                    .await;
                return;
            };
            let result = match message {
                Ok(Some(message)) => self.dispatch(message).await,
                Ok(None) => return,
                Err(WireError::Protocol(message)) => {
                    tracing::debug!(%message, "protocol violation; closing the connection");
                    self.wire.fatal("08P01", message).await;
                    return;
                }
                Err(WireError::Io(e)) => Err(e),
            };
            match result {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    tracing::debug!(error = %e, "connection lost");
                    return;
                }
            }
        }
    }

    /// Handles one message; `Ok(false)` ends the connection.
    async fn dispatch(&mut self, message: Frontend) -> std::io::Result<bool> {
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
                let result = self.parse(name, sql, &param_oids).await;
                self.extended_outcome(result)?;
            }
            Frontend::Bind(bind) => {
                let result = self.bind(bind);
                self.extended_outcome(result)?;
            }
            Frontend::Describe { target, name } => {
                let result = self.describe(target, &name);
                self.extended_outcome(result)?;
            }
            Frontend::Execute { portal, max_rows } => {
                let result = self.execute(portal, max_rows).await;
                self.extended_outcome(result)?;
            }
            Frontend::Close { target, name } => {
                let result = self.close(target, &name);
                self.extended_outcome(result)?;
            }
        }
        Ok(true)
    }

    /// An extended-protocol error is reported and then everything up to Sync ignored.
    fn extended_outcome(&mut self, result: Result<(), Fault>) -> std::io::Result<()> {
        match result {
            Ok(()) => Ok(()),
            Err(Fault::Sql(e)) => {
                self.wire.put_error(&e);
                self.skipping = true;
                Ok(())
            }
            Err(Fault::Io(e)) => Err(e),
        }
    }

    /// Sync: end of an extended-protocol batch. Portals do not outlive the implicit
    /// transaction, so they are dropped once no transaction block is open.
    async fn sync(&mut self) -> std::io::Result<()> {
        if self.session.transaction_status() == TransactionStatus::Idle {
            self.portals.clear();
        }
        self.ready().await
    }

    /// Pending ParameterStatus, then ReadyForQuery, then one write to the socket.
    async fn ready(&mut self) -> std::io::Result<()> {
        self.put_parameter_changes();
        self.wire.put_ready(self.session.transaction_status());
        self.wire.flush().await
    }

    pub(super) fn put_parameter_changes(&mut self) {
        for (name, value) in self.session.take_parameter_changes() {
            self.wire.put_parameter(&name, &value);
        }
    }

    /// The simple query protocol: every statement of the string in turn, stopping at
    /// the first error, then ReadyForQuery.
    async fn simple_query(&mut self, sql: &str) -> std::io::Result<()> {
        match self.run_simple(sql).await {
            Ok(()) => {}
            Err(Fault::Sql(e)) => self.wire.put_error(&e),
            Err(Fault::Io(e)) => return Err(e),
        }
        self.ready().await
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
            match result? {
                StatementResult::Command { tag } => put_command_complete(self.wire.out(), &tag),
                StatementResult::Query { columns, mut rows } => {
                    put_row_description(self.wire.out(), &columns, &Formats::Text);
                    let (count, _) = self
                        .stream_rows(&mut scope, &columns, &mut rows, &Formats::Text, 0)
                        .await?;
                    put_select_complete(self.wire.out(), count);
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
        loop {
            if limit > 0 && sent as usize >= limit {
                return Ok((sent, false));
            }
            let next = scope.run(async { Ok(rows.next().await) }).await?;
            let Some(row) = next else {
                return Ok((sent, true));
            };
            put_data_row(self.wire.out(), &row?, columns, formats)?;
            sent += 1;
            self.wire.flush_if_full().await?;
        }
    }
}
