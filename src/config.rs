//! The server's configuration: defaults, overridden by a TOML file, overridden by
//! command-line flags (in `main`). Unknown keys are errors, so a typo in the file is
//! reported instead of silently ignored.

mod memory_limit;

pub use memory_limit::{usable_memory, CacheSizes};

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Everything `pgwide serve` can be told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address the PostgreSQL protocol listens on.
    pub listen: String,
    /// Directory for a Unix-domain socket, `.s.PGSQL.<port of listen>`, as PostgreSQL's
    /// `unix_socket_directories`; none by default.
    pub unix_socket_directory: Option<PathBuf>,
    /// Directory holding the data (the embedded sled backend).
    pub data_dir: PathBuf,
    /// Client sessions allowed at once; more are refused with SQLSTATE 53300.
    pub max_connections: usize,
    /// Threads of the async runtime. Few threads suit few cores: fewer context switches.
    pub worker_threads: usize,
    /// Threads that serve client connections, each with its own single-threaded
    /// runtime (`server::ConnectionThreads`); 0 = connections run on the worker threads.
    /// Four on a 2-core machine: when a thread waits out another's time slice, the
    /// clients it serves wait with it, and with four threads for 8 clients that is two
    /// clients, not four (ARCHITECTURE.md §2, "Why connection threads").
    pub connection_threads: usize,
    /// Whether connection thread i is tied to the i-th CPU the process may use (modulo
    /// their number), so the threads stay spread evenly: "auto" (while the other threads
    /// of the process are quiet), "always" or "never". Left to itself, Linux kept three
    /// of four threads on one of 2 CPUs for seconds at a time, and their clients waited
    /// behind each other (see `server::placement`).
    pub pin_connection_threads: crate::server::Placement,
    /// Seconds shutdown waits for running statements before closing connections.
    pub shutdown_grace_secs: u64,
    /// Sync every acknowledged write to disk (group commit). Turn off only for
    /// throwaway data: an OS crash then loses recent writes.
    pub durable: bool,
    /// Seconds between background GC passes over expired and surplus versions.
    pub gc_interval_secs: u64,
    /// The Table Store limits (`[limits]` table), with the defaults of docs/table-store.md §10.
    pub limits: crate::engine::Limits,
    /// Memory (MB) all DataFusion queries together may hold for sorts, joins and
    /// aggregates; past it they spill or fail with SQLSTATE 53200.
    pub query_memory_mb: usize,
    /// Memory (MB) for whole partitions kept in memory for range reads (the partition
    /// cache in front of sled, `CacheOptions::partition_cache_bytes`); 0 turns it off.
    /// When the partitions read often do not fit, copies are dropped and made again,
    /// which costs more than it saves. Default: a sixteenth of usable memory, at most 512
    /// (`CacheSizes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition_cache_mb: Option<u64>,
    /// Memory (MB) for single rows kept in memory for point reads (the row cache in front
    /// of sled, `CacheOptions::row_cache_bytes`); 0 turns it off. Default: a sixteenth of
    /// usable memory, at most 512.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_cache_mb: Option<u64>,
    /// Memory (MB) for sled's page cache of tree nodes (`SledOptions::cache_capacity`).
    /// A node it has dropped is read back from its file and deserialized whole on the
    /// next access. Default: a quarter of usable memory (the machine's, or its cgroup's
    /// limit when lower).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sled_cache_mb: Option<u64>,
    /// Longest frontend message accepted (bytes): a query, a Bind's parameters, one
    /// COPY data chunk. Longer ones end the connection with SQLSTATE 54000.
    pub max_message_bytes: usize,
    /// Milliseconds a client has to complete startup and authentication.
    pub authentication_timeout_ms: u64,
    /// Default `statement_timeout` of every session, in milliseconds (0 = none).
    pub statement_timeout_ms: u64,
    /// Default `idle_in_transaction_session_timeout`, in milliseconds (0 = none).
    pub idle_in_transaction_session_timeout_ms: u64,
    /// Default `idle_session_timeout`, in milliseconds (0 = none).
    pub idle_session_timeout_ms: u64,
    /// Client authentication: "auto" (trust local clients while no role has a
    /// password, SCRAM-SHA-256 passwords from then on; refuses to listen on a
    /// non-loopback address without a password) or "trust" (never ask).
    pub auth: crate::auth::AuthMode,
    /// Also accept MD5 password authentication, for old clients: passwords set while
    /// it is on get an MD5 hash, and roles with one are asked for MD5.
    pub md5_auth: bool,
    /// Name of the bootstrap superuser created at start-up from
    /// `superuser_password_file` (or PGWIDE_SUPERUSER_PASSWORD) if missing.
    pub superuser: String,
    /// File whose first line is the bootstrap superuser's password.
    pub superuser_password_file: Option<PathBuf>,
    /// PEM certificate chain for TLS; with `tls_key`, clients may use sslmode=require.
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of `tls_cert`.
    pub tls_key: Option<PathBuf>,
    /// Refuse clients that do not use TLS (FATAL 28000).
    pub require_tls: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: "127.0.0.1:5433".to_owned(),
            unix_socket_directory: None,
            data_dir: PathBuf::from("./pgwide-data"),
            max_connections: 100,
            worker_threads: 2,
            connection_threads: 4,
            pin_connection_threads: crate::server::Placement::Auto,
            shutdown_grace_secs: 10,
            durable: true,
            gc_interval_secs: 60,
            limits: crate::engine::Limits::default(),
            query_memory_mb: crate::sql::DEFAULT_QUERY_MEMORY_MB,
            // Sized from memory when the server opens (`Config::cache_sizes`).
            partition_cache_mb: None,
            row_cache_mb: None,
            sled_cache_mb: None,
            max_message_bytes: 5 * 1024 * 1024,
            authentication_timeout_ms: 60_000,
            statement_timeout_ms: 0,
            idle_in_transaction_session_timeout_ms: 0,
            idle_session_timeout_ms: 0,
            auth: crate::auth::AuthMode::Auto,
            md5_auth: false,
            superuser: "postgres".to_owned(),
            superuser_password_file: None,
            tls_cert: None,
            tls_key: None,
            require_tls: false,
        }
    }
}

/// A configuration file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid config file {path}: {source}")]
    Parse {
        path: PathBuf,
        source: toml::de::Error,
    },
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

impl Config {
    /// Reads a TOML file; keys it leaves out keep their defaults.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Config::from_toml(&text).map_err(|source| ConfigError::Parse {
            path: path.to_owned(),
            source,
        })
    }

    /// Parses TOML text.
    pub fn from_toml(text: &str) -> Result<Config, toml::de::Error> {
        toml::from_str(text)
    }

    /// Rejects values the server cannot run with.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.max_connections == 0 {
            return Err(ConfigError::Invalid(
                "max_connections must be at least 1".into(),
            ));
        }
        if self.worker_threads == 0 {
            return Err(ConfigError::Invalid(
                "worker_threads must be at least 1".into(),
            ));
        }
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            return Err(ConfigError::Invalid(
                "tls_cert and tls_key must be given together".into(),
            ));
        }
        if self.require_tls && self.tls_cert.is_none() {
            return Err(ConfigError::Invalid(
                "require_tls needs tls_cert and tls_key".into(),
            ));
        }
        if self.max_message_bytes < 1024 {
            return Err(ConfigError::Invalid(
                "max_message_bytes must be at least 1024".into(),
            ));
        }
        if self.authentication_timeout_ms == 0 {
            return Err(ConfigError::Invalid(
                "authentication_timeout_ms must be at least 1".into(),
            ));
        }
        // PostgreSQL's range for time settings: INT_MAX milliseconds.
        for (name, ms) in self.session_defaults() {
            if ms.parse::<u64>().map_or(true, |ms| ms > i32::MAX as u64) {
                return Err(ConfigError::Invalid(format!(
                    "{name}_ms must be at most {}",
                    i32::MAX
                )));
            }
        }
        Ok(())
    }

    /// The storage caches' sizes: those the file sets, the others from the memory this
    /// process may use.
    pub fn cache_sizes(&self) -> CacheSizes {
        let from_memory = CacheSizes::for_memory(usable_memory());
        CacheSizes {
            sled_cache_mb: self.sled_cache_mb.unwrap_or(from_memory.sled_cache_mb),
            row_cache_mb: self.row_cache_mb.unwrap_or(from_memory.row_cache_mb),
            partition_cache_mb: self
                .partition_cache_mb
                .unwrap_or(from_memory.partition_cache_mb),
        }
    }

    /// The wire server's options.
    pub fn server_options(&self) -> crate::server::ServerOptions {
        crate::server::ServerOptions {
            max_connections: self.max_connections,
            shutdown_grace: Duration::from_secs(self.shutdown_grace_secs),
            max_message_size: self.max_message_bytes,
            authentication_timeout: Duration::from_millis(self.authentication_timeout_ms),
            ..crate::server::ServerOptions::default()
        }
    }

    /// Session settings whose server-wide default the file sets, as (name, value):
    /// what every new session starts with and RESET returns to.
    pub fn session_defaults(&self) -> Vec<(String, String)> {
        [
            ("statement_timeout", self.statement_timeout_ms),
            (
                "idle_in_transaction_session_timeout",
                self.idle_in_transaction_session_timeout_ms,
            ),
            ("idle_session_timeout", self.idle_session_timeout_ms),
        ]
        .into_iter()
        .map(|(name, ms)| (name.to_string(), ms.to_string()))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_overrides_defaults_and_rejects_unknown_keys() {
        let config = Config::from_toml("listen = \"0.0.0.0:6000\"\nworker_threads = 4\n").unwrap();
        assert_eq!(config.listen, "0.0.0.0:6000");
        assert_eq!(config.worker_threads, 4);
        assert_eq!(
            config.connection_threads, 4,
            "connections get their own threads"
        );
        assert_eq!(
            config.pin_connection_threads,
            crate::server::Placement::Auto
        );
        assert_eq!(
            Config::from_toml("pin_connection_threads = \"never\"\n")
                .unwrap()
                .pin_connection_threads,
            crate::server::Placement::Never
        );
        assert!(Config::from_toml("pin_connection_threads = \"sometimes\"\n").is_err());
        assert_eq!(config.data_dir, PathBuf::from("./pgwide-data"));
        assert_eq!(config.unix_socket_directory, None, "no socket unless asked");
        assert_eq!(
            Config::from_toml("unix_socket_directory = \"/run/pgwide\"\n")
                .unwrap()
                .unix_socket_directory,
            Some(PathBuf::from("/run/pgwide"))
        );
        assert_eq!(
            config.cache_sizes(),
            CacheSizes::for_memory(usable_memory()),
            "caches unset in the file follow memory"
        );
        let set = Config::from_toml("row_cache_mb = 0\nsled_cache_mb = 256\n").unwrap();
        assert_eq!(
            set.cache_sizes(),
            CacheSizes {
                sled_cache_mb: 256,
                row_cache_mb: 0,
                ..CacheSizes::for_memory(usable_memory())
            }
        );
        let pooled = Config::from_toml("connection_threads = 0\n").unwrap();
        assert_eq!(pooled.connection_threads, 0);
        assert!(
            pooled.validate().is_ok(),
            "0 = connections on the worker pool"
        );
        assert!(Config::from_toml("listne = \"x\"").is_err());
        assert!(Config::from_toml("").unwrap().validate().is_ok());
        let zero = Config {
            max_connections: 0,
            ..Config::default()
        };
        assert!(zero.validate().is_err());
        let limits = Config::from_toml(
            "max_message_bytes = 2048\nauthentication_timeout_ms = 500\nstatement_timeout_ms = 100\n",
        )
        .unwrap();
        assert_eq!(limits.server_options().max_message_size, 2048);
        assert_eq!(
            limits.server_options().authentication_timeout,
            Duration::from_millis(500)
        );
        assert!(limits
            .session_defaults()
            .contains(&("statement_timeout".to_string(), "100".to_string())));
        let huge = Config {
            idle_session_timeout_ms: u64::MAX,
            ..Config::default()
        };
        assert!(huge.validate().is_err());
    }
}
