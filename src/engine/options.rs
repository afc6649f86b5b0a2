//! Table options (docs/table-store.md §5): TTL, Max Versions, Max Version Offset,
//! reserved throughput and the stream settings, with their validation.

use super::error::{EngineError, EngineResult};
use super::limits::Limits;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TableOptions {
    /// Seconds a version stays visible; -1 = forever.
    pub ttl: i64,
    pub max_versions: i64,
    /// Seconds an explicit version may be away from now.
    pub max_version_offset: i64,
    pub reserved_read_cu: i64,
    pub reserved_write_cu: i64,
    pub stream_enabled: bool,
    pub stream_expiration_hours: i64,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            ttl: -1,
            max_versions: 1,
            max_version_offset: 86400,
            reserved_read_cu: 0,
            reserved_write_cu: 0,
            stream_enabled: false,
            stream_expiration_hours: 24,
        }
    }
}

/// A value given for an option in `WITH (...)` or `ALTER TABLE ... SET (...)`.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    Integer(i64),
    Boolean(bool),
    Text(String),
}

impl std::fmt::Display for OptionValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionValue::Integer(i) => write!(f, "{i}"),
            OptionValue::Boolean(b) => write!(f, "{b}"),
            OptionValue::Text(t) => write!(f, "'{t}'"),
        }
    }
}

/// The highest reserved throughput a table may ask for (5000 CU, docs/table-store.md §5).
const MAX_RESERVED_CU: i64 = 5000;

impl TableOptions {
    /// The option names, in the order they are listed.
    pub const NAMES: [&'static str; 7] = [
        "ttl",
        "max_versions",
        "max_version_offset",
        "reserved_read_cu",
        "reserved_write_cu",
        "stream_enabled",
        "stream_expiration_hours",
    ];

    /// Sets one option by name, validating the value.
    pub fn set(&mut self, name: &str, value: &OptionValue, limits: &Limits) -> EngineResult<()> {
        let bad = |reason: &str| EngineError::BadOption {
            option: name.into(),
            value: value.to_string(),
            reason: reason.into(),
        };
        let int = || match value {
            OptionValue::Integer(i) => Ok(*i),
            OptionValue::Text(t) => t
                .trim()
                .parse::<i64>()
                .map_err(|_| bad("expected an integer")),
            OptionValue::Boolean(_) => Err(bad("expected an integer")),
        };
        match name {
            "ttl" => {
                let v = int()?;
                if v != -1 && v <= 0 {
                    return Err(bad(
                        "ttl is -1 (never expire) or a positive number of seconds",
                    ));
                }
                self.ttl = v;
            }
            "max_versions" => {
                let v = int()?;
                if v <= 0 || v > i32::MAX as i64 {
                    return Err(bad("max_versions must be greater than 0"));
                }
                self.max_versions = v;
            }
            "max_version_offset" => {
                let v = int()?;
                if v <= 0 {
                    return Err(bad("max_version_offset must be greater than 0 seconds"));
                }
                self.max_version_offset = v;
            }
            "reserved_read_cu" | "reserved_write_cu" => {
                let v = int()?;
                if !(0..=MAX_RESERVED_CU).contains(&v) {
                    return Err(bad("reserved throughput is between 0 and 5000 CU"));
                }
                if name == "reserved_read_cu" {
                    self.reserved_read_cu = v;
                } else {
                    self.reserved_write_cu = v;
                }
            }
            "stream_enabled" => {
                self.stream_enabled = match value {
                    OptionValue::Boolean(b) => *b,
                    OptionValue::Integer(1) => true,
                    OptionValue::Integer(0) => false,
                    OptionValue::Text(t) => match t.to_ascii_lowercase().as_str() {
                        "true" | "on" | "yes" | "1" => true,
                        "false" | "off" | "no" | "0" => false,
                        _ => return Err(bad("expected a boolean")),
                    },
                    OptionValue::Integer(_) => return Err(bad("expected a boolean")),
                };
            }
            "stream_expiration_hours" => {
                let v = int()?;
                if v <= 0 || v > limits.max_stream_expiration_hours {
                    return Err(bad(&format!(
                        "stream_expiration_hours is between 1 and {}",
                        limits.max_stream_expiration_hours
                    )));
                }
                self.stream_expiration_hours = v;
            }
            _ => {
                return Err(EngineError::BadOption {
                    option: name.into(),
                    value: value.to_string(),
                    reason: format!(
                        "unknown option; known options are {}",
                        Self::NAMES.join(", ")
                    ),
                })
            }
        }
        Ok(())
    }

    /// Every option as `name=value`, the form `pg_class.reloptions` shows.
    pub fn as_pairs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("ttl", self.ttl.to_string()),
            ("max_versions", self.max_versions.to_string()),
            ("max_version_offset", self.max_version_offset.to_string()),
            ("reserved_read_cu", self.reserved_read_cu.to_string()),
            ("reserved_write_cu", self.reserved_write_cu.to_string()),
            ("stream_enabled", self.stream_enabled.to_string()),
            (
                "stream_expiration_hours",
                self.stream_expiration_hours.to_string(),
            ),
        ]
    }

    /// Whether a version is visible under the TTL at `now_ms`:
    /// ⌊version/1000⌋ + ttl > ⌊now_ms/1000⌋ (docs/table-store.md §5.2).
    pub fn alive(&self, version: i64, now_ms: i64) -> bool {
        self.ttl < 0 || version.div_euclid(1000) + self.ttl > now_ms.div_euclid(1000)
    }
}
