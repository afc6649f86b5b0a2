//! The server's configuration: defaults, overridden by a TOML file, overridden by
//! command-line flags (in `main`). Unknown keys are errors, so a typo in the file is
//! reported instead of silently ignored.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Everything `pgwide serve` can be told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address the PostgreSQL protocol listens on.
    pub listen: String,
    /// Directory holding the data (the embedded sled backend).
    pub data_dir: PathBuf,
    /// Client sessions allowed at once; more are refused with SQLSTATE 53300.
    pub max_connections: usize,
    /// Threads of the async runtime. Few threads suit few cores: fewer context switches.
    pub worker_threads: usize,
    /// Seconds shutdown waits for running statements before closing connections.
    pub shutdown_grace_secs: u64,
    /// Sync every acknowledged write to disk (group commit). Turn off only for
    /// throwaway data: an OS crash then loses recent writes.
    pub durable: bool,
    /// Seconds between background GC passes over expired and surplus versions.
    pub gc_interval_secs: u64,
    /// The Table Store limits (`[limits]` table); defaults from the seeds.
    pub limits: crate::engine::Limits,
    /// Memory (MB) all DataFusion queries together may hold for sorts, joins and
    /// aggregates; past it they spill or fail with SQLSTATE 53200.
    pub query_memory_mb: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: "127.0.0.1:5433".to_owned(),
            data_dir: PathBuf::from("./pgwide-data"),
            max_connections: 100,
            worker_threads: 2,
            shutdown_grace_secs: 10,
            durable: true,
            gc_interval_secs: 60,
            limits: crate::engine::Limits::default(),
            query_memory_mb: 512,
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
        Ok(())
    }

    /// The wire server's options.
    pub fn server_options(&self) -> crate::server::ServerOptions {
        crate::server::ServerOptions {
            max_connections: self.max_connections,
            shutdown_grace: Duration::from_secs(self.shutdown_grace_secs),
        }
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
        assert_eq!(config.data_dir, PathBuf::from("./pgwide-data"));
        assert!(Config::from_toml("listne = \"x\"").is_err());
        assert!(Config::from_toml("").unwrap().validate().is_ok());
        let zero = Config {
            max_connections: 0,
            ..Config::default()
        };
        assert!(zero.validate().is_err());
    }
}
