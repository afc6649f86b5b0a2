//! Session settings for SET / SHOW / RESET: the parameters clients send and read, with
//! PostgreSQL's defaults, and which of them are reported back as ParameterStatus.

use super::types::{SqlError, SqlResult};
use std::collections::BTreeMap;

/// Parameters PostgreSQL reports to the client whenever they change (GUC_REPORT).
const REPORTED: [&str; 8] = [
    "application_name",
    "client_encoding",
    "datestyle",
    "intervalstyle",
    "timezone",
    "standard_conforming_strings",
    "integer_datetimes",
    "is_superuser",
];

/// The names PostgreSQL prints with their capitals.
fn display_name(name: &str) -> &str {
    match name {
        "datestyle" => "DateStyle",
        "intervalstyle" => "IntervalStyle",
        "timezone" => "TimeZone",
        other => other,
    }
}

pub struct Settings {
    values: BTreeMap<String, String>,
    defaults: BTreeMap<String, String>,
    changes: Vec<(String, String)>,
}

impl Settings {
    pub fn new(user: &str) -> Self {
        let defaults: BTreeMap<String, String> = [
            ("application_name", ""),
            ("client_encoding", "UTF8"),
            ("server_encoding", "UTF8"),
            ("datestyle", "ISO, MDY"),
            ("intervalstyle", "postgres"),
            ("timezone", "UTC"),
            ("standard_conforming_strings", "on"),
            ("integer_datetimes", "on"),
            ("is_superuser", "on"),
            ("search_path", "\"$user\", public"),
            ("extra_float_digits", "1"),
            ("statement_timeout", "0"),
            ("lock_timeout", "0"),
            ("idle_in_transaction_session_timeout", "0"),
            ("transaction_isolation", "read committed"),
            ("default_transaction_isolation", "read committed"),
            ("transaction_read_only", "off"),
            ("default_transaction_read_only", "off"),
            ("server_version", super::SERVER_VERSION),
            ("server_version_num", super::SERVER_VERSION_NUM),
            ("max_identifier_length", "63"),
            ("bytea_output", "hex"),
            ("client_min_messages", "notice"),
            ("lc_messages", "C"),
            ("lc_monetary", "C"),
            ("lc_numeric", "C"),
            ("lc_time", "C"),
            ("jit", "off"),
            ("row_security", "on"),
            ("synchronous_commit", "on"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .chain([("session_authorization".to_string(), user.to_string())])
        .collect();
        Settings {
            values: defaults.clone(),
            defaults,
            changes: Vec::new(),
        }
    }

    /// Applies a startup parameter (no error for unknown ones, as options may be extra).
    pub fn startup(&mut self, name: &str, value: &str) {
        let name = name.to_lowercase();
        if self.values.contains_key(&name) {
            self.values.insert(name, value.to_string());
        }
    }

    fn known(&self, name: &str) -> bool {
        // Custom settings (`pgwide.as_of`, `myapp.x`) are allowed, as in PostgreSQL.
        self.values.contains_key(name) || name.contains('.')
    }

    pub fn set(&mut self, name: &str, value: &str) -> SqlResult<()> {
        let name = name.to_lowercase();
        if !self.known(&name) {
            return Err(SqlError::new(
                "42704",
                format!("unrecognized configuration parameter \"{name}\""),
            ));
        }
        if matches!(
            name.as_str(),
            "server_version"
                | "server_version_num"
                | "server_encoding"
                | "integer_datetimes"
                | "is_superuser"
                | "max_identifier_length"
        ) {
            return Err(SqlError::new(
                "55P02",
                format!("parameter \"{name}\" cannot be changed"),
            ));
        }
        if name == "client_encoding"
            && !matches!(
                value.to_uppercase().replace(['-', '_'], "").as_str(),
                "UTF8" | "UNICODE"
            )
        {
            return Err(SqlError::new(
                "22023",
                format!("client_encoding \"{value}\" is not supported; pgwide speaks UTF8"),
            ));
        }
        let value = if name == "transaction_isolation" || name == "default_transaction_isolation" {
            value.to_lowercase()
        } else {
            value.to_string()
        };
        if REPORTED.contains(&name.as_str()) {
            self.changes
                .push((display_name(&name).to_string(), value.clone()));
        }
        self.values.insert(name, value);
        Ok(())
    }

    pub fn reset(&mut self, name: &str) -> SqlResult<()> {
        let name = name.to_lowercase();
        match self.defaults.get(&name).cloned() {
            Some(default) => self.set(&name, &default),
            None if name.contains('.') => {
                self.values.remove(&name);
                Ok(())
            }
            None => Err(SqlError::new(
                "42704",
                format!("unrecognized configuration parameter \"{name}\""),
            )),
        }
    }

    pub fn reset_all(&mut self) {
        let names: Vec<String> = self.values.keys().cloned().collect();
        for name in names {
            let _ = self.reset(&name);
        }
    }

    pub fn get(&self, name: &str) -> SqlResult<String> {
        let name = name.to_lowercase();
        self.values.get(&name).cloned().ok_or_else(|| {
            SqlError::new(
                "42704",
                format!("unrecognized configuration parameter \"{name}\""),
            )
        })
    }

    pub fn all(&self) -> Vec<(String, String)> {
        self.values
            .iter()
            .map(|(k, v)| (display_name(k).to_string(), v.clone()))
            .collect()
    }

    pub fn take_changes(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.changes)
    }
}
