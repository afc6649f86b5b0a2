//! The `pgwide` binary: reads the configuration (defaults < TOML file < flags), opens
//! the SQL gateway over the data directory and serves the PostgreSQL protocol until
//! SIGINT or SIGTERM, then shuts down gracefully and syncs the data.

use clap::{Args, Parser, Subcommand};
use pgwide::config::Config;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

// The gateway allocates small, short-lived buffers for every statement; glibc's malloc
// spent a quarter of a point get's CPU time (perf: `_int_malloc`, `malloc_consolidate`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Turns transparent huge pages off for this process, before the allocator maps much.
///
/// mimalloc asks for huge pages on its arenas (`MADV_HUGEPAGE`), so every fresh 2 MiB
/// region is zeroed whole at its first touch, and a purged region is zeroed again when
/// it is reused. sled's writes churn through memory (every insert copies its leaf), and
/// in a COPY profile the kernel's `clear_page_erms` was 11% of the server's CPU time;
/// with huge pages off it was gone and COPY loaded 13-30% more rows per second.
fn without_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    {
        // prctl is variadic; the kernel reads each argument as an unsigned long.
        let (on, unused): (libc::c_ulong, libc::c_ulong) = (1, 0);
        // SAFETY: PR_SET_THP_DISABLE takes plain integers and reads no memory of ours.
        let failed =
            unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, on, unused, unused, unused) } != 0;
        if failed {
            // Only a cost, never a fault: the server runs the same with huge pages on.
            let e = std::io::Error::last_os_error();
            eprintln!("pgwide: could not turn transparent huge pages off: {e}");
        }
    }
}

/// A Table Store-style wide-column database that speaks the PostgreSQL protocol.
#[derive(Debug, Parser)]
#[command(name = "pgwide", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the PostgreSQL wire protocol (connect with `psql -h 127.0.0.1 -p 5433`).
    Serve(ServeArgs),
}

/// Flags override the config file, which overrides the defaults.
#[derive(Debug, Args)]
struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:5433]
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// Also listen on a Unix-domain socket in DIR, named as PostgreSQL names its own
    /// (DIR/.s.PGSQL.PORT): connect with `psql -h DIR -p PORT`
    #[arg(long, value_name = "DIR")]
    unix_socket_dir: Option<PathBuf>,
    /// Data directory [default: ./pgwide-data]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// TOML configuration file (keys: listen, unix_socket_directory, data_dir, max_connections,
    /// worker_threads, connection_threads, shutdown_grace_secs)
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Maximum concurrent client sessions [default: 100]
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Async runtime worker threads [default: 2]
    #[arg(long, value_name = "N")]
    worker_threads: Option<usize>,
    /// Threads that serve client connections, each with its own single-threaded
    /// runtime; 0 = connections run on the worker threads [default: 4]
    #[arg(long, value_name = "N")]
    connection_threads: Option<usize>,
    /// Tie connection thread i to the i-th usable CPU, modulo their number, so the
    /// threads stay spread evenly: auto (while the server's other threads are quiet),
    /// always or never [default: auto]
    #[arg(long, value_name = "WHEN", value_parser = ["auto", "always", "never"])]
    pin_connection_threads: Option<String>,
    /// Longest client message in bytes (a query, a Bind, a COPY chunk); longer ones end
    /// the connection with SQLSTATE 54000 [default: 5242880]
    #[arg(long, value_name = "BYTES")]
    max_message_bytes: Option<usize>,
    /// Milliseconds a client has to finish startup and authentication [default: 60000]
    #[arg(long, value_name = "MS")]
    authentication_timeout_ms: Option<u64>,
    /// Default statement_timeout of every session in milliseconds, 0 = none [default: 0]
    #[arg(long, value_name = "MS")]
    statement_timeout_ms: Option<u64>,
    /// Default idle_in_transaction_session_timeout in milliseconds, 0 = none [default: 0]
    #[arg(long, value_name = "MS")]
    idle_in_transaction_session_timeout_ms: Option<u64>,
    /// Default idle_session_timeout in milliseconds, 0 = none [default: 0]
    #[arg(long, value_name = "MS")]
    idle_session_timeout_ms: Option<u64>,
    /// Client authentication [default: auto]. auto: on a loopback address, local
    /// clients are trusted until some role has a password; from then on every client
    /// must give its password (SCRAM-SHA-256). On any other address pgwide refuses to
    /// start until a role has a password (see --superuser-password-file). trust: never
    /// ask for a password, on any address (isolated networks only)
    #[arg(long, value_name = "MODE", value_parser = ["auto", "trust"])]
    auth: Option<String>,
    /// Create the superuser (--superuser) at start-up, if missing, with the password
    /// on the first line of FILE; the PGWIDE_SUPERUSER_PASSWORD environment variable
    /// does the same without a file
    #[arg(long, value_name = "FILE")]
    superuser_password_file: Option<PathBuf>,
    /// Name of the bootstrap superuser [default: postgres]
    #[arg(long, value_name = "NAME")]
    superuser: Option<String>,
    /// Also accept MD5 password authentication for old clients (off by default;
    /// roles get an MD5 hash when their password is next set)
    #[arg(long)]
    md5_auth: bool,
    /// PEM certificate chain: enables TLS (sslmode=require / verify-full)
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Refuse clients that do not use TLS
    #[arg(long)]
    require_tls: bool,
}

fn main() -> ExitCode {
    without_transparent_huge_pages();
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let Command::Serve(args) = cli.command;
    let config = match build_config(args) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("pgwide: {message}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.worker_threads)
        .thread_stack_size(pgwide::server::THREAD_STACK_BYTES)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("pgwide: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let connection_threads = match pgwide::server::ConnectionThreads::start(
        config.connection_threads,
        config.pin_connection_threads,
    ) {
        Ok(threads) => threads,
        Err(e) => {
            eprintln!("pgwide: cannot start the connection threads: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(serve(config, connection_threads.handles()));
    connection_threads.stop();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("pgwide: {message}");
            ExitCode::FAILURE
        }
    }
}

fn build_config(args: ServeArgs) -> Result<Config, String> {
    let mut config = match &args.config {
        Some(path) => Config::load(path).map_err(|e| e.to_string())?,
        None => Config::default(),
    };
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    if let Some(dir) = args.unix_socket_dir {
        config.unix_socket_directory = Some(dir);
    }
    if let Some(data_dir) = args.data_dir {
        config.data_dir = data_dir;
    }
    if let Some(n) = args.max_connections {
        config.max_connections = n;
    }
    if let Some(n) = args.worker_threads {
        config.worker_threads = n;
    }
    if let Some(n) = args.connection_threads {
        config.connection_threads = n;
    }
    if let Some(when) = args.pin_connection_threads {
        config.pin_connection_threads = when.parse()?;
    }
    if let Some(n) = args.max_message_bytes {
        config.max_message_bytes = n;
    }
    if let Some(ms) = args.authentication_timeout_ms {
        config.authentication_timeout_ms = ms;
    }
    if let Some(ms) = args.statement_timeout_ms {
        config.statement_timeout_ms = ms;
    }
    if let Some(ms) = args.idle_in_transaction_session_timeout_ms {
        config.idle_in_transaction_session_timeout_ms = ms;
    }
    if let Some(ms) = args.idle_session_timeout_ms {
        config.idle_session_timeout_ms = ms;
    }
    if let Some(mode) = args.auth {
        config.auth = match mode.as_str() {
            "trust" => pgwide::auth::AuthMode::Trust,
            _ => pgwide::auth::AuthMode::Auto,
        };
    }
    if let Some(file) = args.superuser_password_file {
        config.superuser_password_file = Some(file);
    }
    if let Some(name) = args.superuser {
        config.superuser = name;
    }
    config.md5_auth |= args.md5_auth;
    if let Some(cert) = args.tls_cert {
        config.tls_cert = Some(cert);
    }
    if let Some(key) = args.tls_key {
        config.tls_key = Some(key);
    }
    config.require_tls |= args.require_tls;
    config.validate().map_err(|e| e.to_string())?;
    Ok(config)
}

async fn serve(
    config: Config,
    connection_runtimes: Vec<tokio::runtime::Handle>,
) -> Result<(), String> {
    let addr: SocketAddr = config
        .listen
        .parse()
        .map_err(|e| format!("invalid listen address {:?}: {e}", config.listen))?;
    // Loaded before the data directory is opened: a bad file stops start-up early.
    let tls = match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => {
            let tls = pgwide::server::Tls::load(cert, key)?;
            tracing::info!(cert = %cert.display(), require_tls = config.require_tls, "TLS enabled");
            Some(tls)
        }
        _ => None,
    };
    let gateway = pgwide::gateway::Gateway::open(&config).await.map_err(|e| {
        format!(
            "cannot open the database in {}: {e}",
            config.data_dir.display()
        )
    })?;
    let auth = match authentication(&config, &gateway, &addr).await {
        Ok(auth) => auth,
        Err(message) => {
            gateway.shutdown().await;
            return Err(message);
        }
    };
    let listeners = match listeners(&config, addr).await {
        Ok(listeners) => listeners,
        Err(message) => {
            gateway.shutdown().await;
            return Err(message);
        }
    };
    let factory = Arc::clone(&gateway);
    let mut options = config.server_options();
    options.auth = auth;
    options.require_tls = config.require_tls;
    options.tls = tls;
    options.connection_runtimes = connection_runtimes;
    let served = pgwide::server::serve_with(listeners, factory, options, shutdown_signal()).await;
    gateway.shutdown().await;
    tracing::info!("pgwide stopped");
    served.map_err(|e| format!("server failed: {e}"))
}

/// Binds the TCP address and, when configured, the Unix-domain socket named after the
/// port bound, then says the server is ready.
async fn listeners(config: &Config, addr: SocketAddr) -> Result<pgwide::server::Listeners, String> {
    let tcp = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = tcp
        .local_addr()
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let mut listeners = pgwide::server::Listeners::from(tcp);
    let mut socket_path = None;
    if let Some(dir) = &config.unix_socket_directory {
        let socket = pgwide::server::UnixSocket::bind(dir, bound.port())?;
        socket_path = Some(socket.path().display().to_string());
        listeners = listeners.with_unix_socket(socket);
    }
    tracing::info!(
        addr = %bound,
        unix_socket = socket_path.as_deref().unwrap_or("none"),
        data_dir = %config.data_dir.display(),
        "pgwide is ready"
    );
    Ok(listeners)
}

/// Creates the bootstrap superuser if asked to, then decides whether the server may
/// listen on `addr` (a non-loopback address needs authentication) and says how
/// clients will be authenticated.
async fn authentication(
    config: &Config,
    gateway: &pgwide::gateway::Gateway,
    addr: &SocketAddr,
) -> Result<pgwide::auth::AuthOptions, String> {
    let roles = gateway.roles();
    let password = match (
        &config.superuser_password_file,
        std::env::var("PGWIDE_SUPERUSER_PASSWORD"),
    ) {
        (Some(file), _) => {
            let text = std::fs::read_to_string(file).map_err(|e| {
                format!(
                    "cannot read the superuser password file {}: {e}",
                    file.display()
                )
            })?;
            Some(text.lines().next().unwrap_or("").to_string())
        }
        (None, Ok(password)) => Some(password),
        (None, Err(_)) => None,
    };
    if let Some(password) = password {
        if password.is_empty() {
            return Err("the superuser password is empty".into());
        }
        let created = pgwide::auth::bootstrap_superuser(roles, &config.superuser, &password)
            .await
            .map_err(|e| format!("cannot create the superuser {:?}: {}", config.superuser, e))?;
        if created {
            tracing::info!(superuser = %config.superuser, "superuser created");
        }
    }
    let line = pgwide::auth::startup_policy(addr, config.auth, roles)?;
    tracing::info!("{line}");
    if config.md5_auth {
        tracing::warn!("MD5 password authentication is enabled for roles with an MD5 hash");
    }
    Ok(pgwide::auth::AuthOptions {
        roles: Some(std::sync::Arc::clone(roles)),
        mode: config.auth,
        md5: config.md5_auth,
    })
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => tracing::info!("SIGINT received"),
        _ = terminate => tracing::info!("SIGTERM received"),
    }
}
