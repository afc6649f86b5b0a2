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
    /// Data directory [default: ./pgwide-data]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// TOML configuration file (keys: listen, data_dir, max_connections,
    /// worker_threads, shutdown_grace_secs)
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Maximum concurrent client sessions [default: 100]
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Async runtime worker threads [default: 2]
    #[arg(long, value_name = "N")]
    worker_threads: Option<usize>,
}

fn main() -> ExitCode {
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
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("pgwide: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(config)) {
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
    if let Some(data_dir) = args.data_dir {
        config.data_dir = data_dir;
    }
    if let Some(n) = args.max_connections {
        config.max_connections = n;
    }
    if let Some(n) = args.worker_threads {
        config.worker_threads = n;
    }
    config.validate().map_err(|e| e.to_string())?;
    Ok(config)
}

async fn serve(config: Config) -> Result<(), String> {
    let addr: SocketAddr = config
        .listen
        .parse()
        .map_err(|e| format!("invalid listen address {:?}: {e}", config.listen))?;
    let gateway = pgwide::sql::Gateway::open(&config).await.map_err(|e| {
        format!(
            "cannot open the database in {}: {e}",
            config.data_dir.display()
        )
    })?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    tracing::info!(%addr, data_dir = %config.data_dir.display(), "pgwide is ready");
    let factory: Arc<dyn pgwide::sql::SessionFactory> = gateway.clone();
    let served = pgwide::server::serve_with(
        listener,
        factory,
        config.server_options(),
        shutdown_signal(),
    )
    .await;
    gateway.shutdown().await;
    tracing::info!("pgwide stopped");
    served.map_err(|e| format!("server failed: {e}"))
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
