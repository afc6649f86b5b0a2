//! The PostgreSQL wire-protocol server: accepts TCP and Unix-domain socket connections
//! and speaks protocol 3.0 to each — startup, simple and extended query, cancel —
//! handing every statement to the SQL layer through [`SessionFactory`] /
//! [`SqlSession`], one session per connection. It knows nothing of tables; it encodes
//! what the SQL layer returns.
//!
//! Message types and backend encoders come from pgwire; the connection loop is pgwire's
//! design re-done in `connection`, so that only Sync/Flush flush the socket
//! (ARCHITECTURE.md §3.1, "Flushing only at Sync"), results stream without per-row
//! allocations, and portals can be suspended at Execute's row limit.

mod activity;
mod affinity;
mod authenticate;
mod cancel;
mod connection;
mod copy_protocol;
mod encode;
mod extended;
mod listeners;
mod params;
mod placement;
mod startup;
mod threads;
mod tls;
mod wire;

pub(crate) use wire::WireError;

#[cfg(test)]
mod tests;

pub use listeners::{Listeners, UnixSocket};
pub use placement::Placement;
pub use threads::{ConnectionThreads, THREAD_STACK_BYTES};
pub use tls::Tls;

use crate::auth::AuthOptions;
use crate::sql::activity::Backends;
use crate::sql::SessionFactory;
use cancel::CancelRegistry;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

/// Tuning of [`serve_with`].
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Sessions allowed at once; more are refused with SQLSTATE 53300.
    pub max_connections: usize,
    /// How long shutdown waits for running statements before dropping connections.
    pub shutdown_grace: Duration,
    /// Longest frontend message (bytes); longer ones end the connection with 54000.
    pub max_message_size: usize,
    /// Time a client has to finish startup and authentication before it is dropped.
    pub authentication_timeout: Duration,
    /// Client authentication (roles, trust or passwords, MD5).
    pub auth: AuthOptions,
    /// Certificate and key: SSLRequest is then answered 'S' and the socket upgraded.
    pub tls: Option<Tls>,
    /// Refuse clients that did not negotiate TLS (FATAL 28000).
    pub require_tls: bool,
    /// Runtimes to serve connections on, round robin ([`ConnectionThreads`]); empty =
    /// the runtime `serve_with` runs on.
    pub connection_runtimes: Vec<tokio::runtime::Handle>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            max_connections: 100,
            shutdown_grace: Duration::from_secs(10),
            max_message_size: wire::DEFAULT_MAX_MESSAGE_SIZE,
            authentication_timeout: Duration::from_secs(60),
            auth: AuthOptions::default(),
            tls: None,
            require_tls: false,
            connection_runtimes: Vec::new(),
        }
    }
}

/// What every connection task shares.
pub(crate) struct Shared<F> {
    factory: Arc<F>,
    cancels: Arc<CancelRegistry>,
    slots: Arc<Semaphore>,
    max_message_size: usize,
    authentication_timeout: Duration,
    auth: AuthOptions,
    tls: Option<Tls>,
    require_tls: bool,
}

impl<F: SessionFactory> Shared<F> {
    fn new(factory: Arc<F>, options: ServerOptions) -> Self {
        Shared {
            factory,
            cancels: Arc::new(CancelRegistry::default()),
            slots: Arc::new(Semaphore::new(options.max_connections)),
            max_message_size: options.max_message_size,
            authentication_timeout: options.authentication_timeout,
            auth: options.auth,
            tls: options.tls,
            require_tls: options.require_tls,
        }
    }
}

/// Serves one already-connected client stream (plain, no TLS negotiation) to the end,
/// with the same startup, limits and message loop as a TCP client. For in-process
/// transports and the wire-protocol fuzz target; a panic here is a bug.
#[doc(hidden)]
pub async fn serve_stream<S, F>(stream: S, factory: Arc<F>, options: ServerOptions)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send,
    F: SessionFactory,
{
    let shared = Shared::new(factory, options);
    let deadline = tokio::time::Instant::now() + shared.authentication_timeout;
    // Never stopped: the stream ends when the client closes it.
    let (_stop_tx, stop_rx) = watch::channel(false);
    connection::run_stream(stream, false, None, deadline, &shared, stop_rx).await;
}

/// Serves clients on `listeners` (a `TcpListener`, or [`Listeners`] with a Unix-domain
/// socket too) until `shutdown` completes, then stops accepting, lets running
/// statements finish (bounded by the grace period), closes every connection and
/// returns.
pub async fn serve_with<F: SessionFactory>(
    listeners: impl Into<Listeners>,
    factory: Arc<F>,
    options: ServerOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let listeners = listeners.into();
    let shutdown_grace = options.shutdown_grace;
    let runtimes = options.connection_runtimes.clone();
    let mut next_runtime = runtimes.iter().cycle();
    let shared = Arc::new(Shared::new(factory, options));
    let forwarding = shared
        .factory
        .server_notifications()
        .map(|mut notifications| {
            let listeners = Arc::clone(&shared.cancels);
            tokio::spawn(async move {
                while let Some(notification) = notifications.recv().await {
                    listeners.notify(&[notification]);
                }
            })
        });
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listeners.accept() => match accepted {
                Ok(client) => {
                    let (shared, stop) = (Arc::clone(&shared), stop_rx.clone());
                    match next_runtime.next() {
                        None => {
                            tasks.spawn(connection::run(client, shared, stop));
                        }
                        Some(runtime) => spawn_on(&mut tasks, runtime, client, shared, stop),
                    }
                }
                Err(e) => {
                    // Usually out of file descriptors: back off rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(done) = tasks.join_next(), if !tasks.is_empty() => log_task_end(done),
        }
    }
    // Also removes the Unix-domain socket's file: new clients are told nobody listens.
    drop(listeners);
    if let Some(forwarding) = forwarding {
        forwarding.abort();
    }
    tracing::info!(connections = tasks.len(), "shutting down");
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(shutdown_grace, async {
        while let Some(done) = tasks.join_next().await {
            log_task_end(done);
        }
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            connections = tasks.len(),
            "statements still running after the grace period; dropping their connections"
        );
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
    Ok(())
}

/// Serves `client` on `runtime`: the socket moves to that runtime's event loop, so its
/// readiness wakes the thread that serves it.
fn spawn_on<F: SessionFactory>(
    tasks: &mut JoinSet<()>,
    runtime: &tokio::runtime::Handle,
    client: listeners::Client,
    shared: Arc<Shared<F>>,
    stop: watch::Receiver<bool>,
) {
    let client = match client.detach() {
        Ok(client) => client,
        Err(e) => {
            tracing::warn!(error = %e, "could not hand a connection to its thread");
            return;
        }
    };
    tasks.spawn_on(
        async move {
            match client.attach() {
                Ok(client) => connection::run(client, shared, stop).await,
                Err(e) => tracing::warn!(error = %e, "could not register a connection"),
            }
        },
        runtime,
    );
}

fn log_task_end(done: Result<(), tokio::task::JoinError>) {
    if let Err(e) = done {
        if e.is_panic() {
            tracing::error!(error = %e, "connection task panicked");
        }
    }
}
