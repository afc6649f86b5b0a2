//! Session settings for SET / SHOW / RESET: the parameters clients send and read, with
//! PostgreSQL's defaults, and which of them are reported back as ParameterStatus.
//! Time settings (`statement_timeout`, the idle timeouts) are checked and stored as
//! PostgreSQL shows them, and read back as durations for the server to enforce.

use super::datetime::TimeZone;
use super::sql_types::{SqlError, SqlResult};
use super::SessionTimeouts;
use crate::sqlstate::SqlState;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Settings holding a time in milliseconds; 0 disables them.
const TIMEOUTS: [&str; 4] = [
    "statement_timeout",
    "lock_timeout",
    "idle_in_transaction_session_timeout",
    "idle_session_timeout",
];

/// PostgreSQL's upper bound for time settings (INT_MAX milliseconds).
const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;

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
pub fn display_name(name: &str) -> &str {
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
    /// Names the client set in its startup packet; server defaults do not override them.
    from_startup: BTreeSet<String>,
    /// Values before this transaction's first SET LOCAL of each name (`None`: unset).
    saved: BTreeMap<String, Option<String>>,
    /// The timeouts as parsed from `values`, kept current by `value_changed`: the
    /// connection asks for them before every message it reads.
    timeouts: SessionTimeouts,
    /// `TimeZone` as parsed from `values`, kept current by `value_changed`.
    time_zone: TimeZone,
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
            ("idle_session_timeout", "0"),
            ("transaction_isolation", "read committed"),
            ("default_transaction_isolation", "read committed"),
            ("transaction_read_only", "off"),
            ("default_transaction_read_only", "off"),
            ("server_version", super::SERVER_VERSION),
            ("server_version_num", super::SERVER_VERSION_NUM),
            ("max_identifier_length", "63"),
            // pgjdbc's getImportedKeys and getExportedKeys read it to unnest keys.
            ("max_index_keys", "32"),
            ("bytea_output", "hex"),
            ("client_min_messages", "notice"),
            ("lc_messages", "C"),
            ("lc_monetary", "C"),
            ("lc_numeric", "C"),
            ("lc_time", "C"),
            ("jit", "off"),
            ("row_security", "on"),
            // Whether a scan may start where another one is, so unordered rows may come
            // in any order: pg_dump turns it off. pgwide's scans always start at the
            // beginning, which both values allow.
            ("synchronize_seqscans", "on"),
            // Set by the scripts pg_dump writes. pgwide has no function bodies to check,
            // no xml values, no tablespace but the default and no access method but
            // heap, so only values that ask for what it does are taken
            // (`check_storage_setting`).
            ("check_function_bodies", "on"),
            ("xmloption", "content"),
            ("default_tablespace", ""),
            ("default_table_access_method", "heap"),
            ("synchronous_commit", "on"),
            // The size above which `pgwide.key_advice` calls a partition key too large.
            (PARTITION_SIZE_ADVICE, "1GB"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .chain([("session_authorization".to_string(), user.to_string())])
        .collect();
        Settings {
            values: defaults.clone(),
            defaults,
            changes: Vec::new(),
            from_startup: BTreeSet::new(),
            saved: BTreeMap::new(),
            timeouts: SessionTimeouts::default(),
            time_zone: TimeZone::default(),
        }
    }

    /// Applies a startup parameter. An unknown name is no error, as a client may send
    /// parameters of PostgreSQL's that pgwide has no use for; a value a known setting
    /// cannot take (a zone no one knows, a malformed timeout) is 22023, which ends the
    /// connection before it starts, as in PostgreSQL: a session in another zone than
    /// the client asked for would show every timestamptz wrong.
    pub fn startup(&mut self, name: &str, value: &str) -> SqlResult<()> {
        let name = name.to_lowercase();
        if name == "options" {
            // `options` inside `options` is no setting: nothing to recurse into.
            for (name, value) in command_line_options(value) {
                if !name.eq_ignore_ascii_case("options") {
                    self.startup(&name, &value)?;
                }
            }
            return Ok(());
        }
        if !self.values.contains_key(&name) {
            return Ok(());
        }
        let value = if TIMEOUTS.contains(&name.as_str()) {
            show_ms(parse_timeout(&name, value)?)
        } else if name == "timezone" {
            match TimeZone::parse(value) {
                Some(zone) => zone_setting(value, zone),
                None => return Err(invalid_time_zone(value)),
            }
        } else {
            value.to_string()
        };
        self.from_startup.insert(name.clone());
        // As in PostgreSQL, a startup option is also what RESET returns to.
        self.defaults.insert(name.clone(), value.clone());
        // Reported after the server's own values (`TimeZone` is `UTC` there); the
        // client's encoding as the server speaks it (psql sends `auto`).
        if REPORTED.contains(&name.as_str()) && name != "client_encoding" {
            self.changes
                .push((display_name(&name).to_string(), value.clone()));
        }
        self.values.insert(name.clone(), value);
        self.value_changed(&name);
        Ok(())
    }

    /// Makes `value` the server's default for `name` (from the configuration file):
    /// what RESET returns to, and the value unless the client chose one at startup.
    pub fn set_default(&mut self, name: &str, value: &str) -> SqlResult<()> {
        let name = name.to_lowercase();
        let value = if TIMEOUTS.contains(&name.as_str()) {
            show_ms(parse_timeout(&name, value)?)
        } else {
            value.to_string()
        };
        if !self.from_startup.contains(&name) {
            self.values.insert(name.clone(), value.clone());
            self.value_changed(&name);
            self.defaults.insert(name, value);
        }
        Ok(())
    }

    /// The zone `timestamptz` values are read and shown in.
    pub fn time_zone(&self) -> TimeZone {
        self.time_zone
    }

    /// The timeouts the server enforces for this session.
    pub fn timeouts(&self) -> SessionTimeouts {
        self.timeouts
    }

    /// Re-parses the timeouts after `name` got a new value. `startup`, `set_default`
    /// and `store` call it; every other change of a timeout goes through `store`
    /// (`set`, `set_local`, `reset`, `end_transaction`). The rest only add or remove
    /// custom names, which are never timeouts.
    fn value_changed(&mut self, name: &str) {
        if name == "timezone" {
            self.time_zone = self
                .values
                .get(name)
                .and_then(|v| TimeZone::parse(v))
                .unwrap_or_default();
            return;
        }
        if !TIMEOUTS.contains(&name) {
            return;
        }
        let get = |name: &str| {
            self.values
                .get(name)
                .and_then(|v| parse_timeout(name, v).ok())
                .filter(|ms| *ms > 0)
                .map(Duration::from_millis)
        };
        self.timeouts = SessionTimeouts {
            statement: get("statement_timeout"),
            idle_in_transaction: get("idle_in_transaction_session_timeout"),
            idle_session: get("idle_session_timeout"),
        };
    }

    fn known(&self, name: &str) -> bool {
        // Custom settings (`pgwide.as_of`, `myapp.x`) are allowed, as in PostgreSQL.
        self.values.contains_key(name) || name.contains('.')
    }

    pub fn set(&mut self, name: &str, value: &str) -> SqlResult<()> {
        let name = name.to_lowercase();
        let value = check(&name, value, self.known(&name))?;
        // A session-wide SET outlives the transaction, overriding an earlier SET LOCAL.
        self.saved.remove(&name);
        self.store(name, value);
        Ok(())
    }

    /// SET LOCAL: `value` until the transaction ends (`end_transaction`).
    pub fn set_local(&mut self, name: &str, value: &str) -> SqlResult<()> {
        let name = name.to_lowercase();
        let value = check(&name, value, self.known(&name))?;
        if !self.saved.contains_key(&name) {
            self.saved
                .insert(name.clone(), self.values.get(&name).cloned());
        }
        self.store(name, value);
        Ok(())
    }

    /// `set_config(name, value, is_local)`: a NULL value returns the setting to its
    /// default; a local change is dropped when no transaction is open, as it ends with
    /// the statement.
    pub fn set_config(
        &mut self,
        name: &str,
        value: Option<&str>,
        local: bool,
        in_transaction: bool,
    ) -> SqlResult<()> {
        let lower = name.to_lowercase();
        let value = match value {
            Some(value) => value.to_string(),
            None => self.default_value(&lower),
        };
        match (local, in_transaction) {
            (false, _) => self.set(&lower, &value),
            (true, true) => self.set_local(&lower, &value),
            (true, false) => {
                check(&lower, &value, self.known(&lower))?;
                // The statement was its own transaction; a custom setting it made
                // stays, empty, as in PostgreSQL.
                self.values.entry(lower).or_default();
                Ok(())
            }
        }
    }

    /// What RESET gives `name`: its default, or empty for a custom setting.
    pub fn default_value(&self, name: &str) -> String {
        self.defaults.get(name).cloned().unwrap_or_default()
    }

    /// The end of a transaction: SET LOCAL values go back to what they were before. A
    /// custom setting first made by SET LOCAL stays, empty, as in PostgreSQL.
    pub fn end_transaction(&mut self) {
        for (name, before) in std::mem::take(&mut self.saved) {
            let before = before.unwrap_or_default();
            if self.values.get(&name) != Some(&before) {
                self.store(name, before);
            }
        }
    }

    fn store(&mut self, name: String, value: String) {
        if REPORTED.contains(&name.as_str()) {
            self.changes
                .push((display_name(&name).to_string(), value.clone()));
        }
        self.values.insert(name.clone(), value);
        self.value_changed(&name);
    }

    pub fn reset(&mut self, name: &str) -> SqlResult<()> {
        let name = name.to_lowercase();
        match self.defaults.get(&name).cloned() {
            Some(default) => self.set(&name, &default),
            None if name.contains('.') => {
                self.saved.remove(&name);
                self.values.remove(&name);
                Ok(())
            }
            None => Err(SqlError::new(
                SqlState::UndefinedObject,
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

    /// The value of `name`, given in lower case, if it is set; without the copies and
    /// the error `get` makes, for what every statement looks up.
    pub fn value(&self, lower_case_name: &str) -> Option<&str> {
        self.values.get(lower_case_name).map(String::as_str)
    }

    pub fn get(&self, name: &str) -> SqlResult<String> {
        let name = name.to_lowercase();
        self.values.get(&name).cloned().ok_or_else(|| {
            SqlError::new(
                SqlState::UndefinedObject,
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

    /// What RESET returns each setting to.
    pub fn defaults(&self) -> Vec<(String, String)> {
        self.defaults
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    pub fn take_changes(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.changes)
    }
}

/// Checks `value` for the setting `name` (lower case) as SET does and gives it as SHOW
/// shows it. `known`: the setting exists (custom `a.b` names always do).
pub fn check(name: &str, value: &str, known: bool) -> SqlResult<String> {
    if !known {
        return Err(SqlError::new(
            SqlState::UndefinedObject,
            format!("unrecognized configuration parameter \"{name}\""),
        ));
    }
    if matches!(
        name,
        "server_version"
            | "server_version_num"
            | "server_encoding"
            | "integer_datetimes"
            | "is_superuser"
            | "max_identifier_length"
            | "max_index_keys"
    ) {
        return Err(SqlError::new(
            SqlState::LockNotAvailable,
            format!("parameter \"{name}\" cannot be changed"),
        ));
    }
    check_transaction_mode(name, value)?;
    check_storage_setting(name, value)?;
    if name == PARTITION_SIZE_ADVICE {
        partition_size_advice(value)?;
    }
    if name == "timezone" {
        return match TimeZone::parse(value) {
            None => Err(invalid_time_zone(value)),
            Some(zone) => Ok(zone_setting(value, zone)),
        };
    }
    if name == "client_encoding"
        && !matches!(
            value.to_uppercase().replace(['-', '_'], "").as_str(),
            "UTF8" | "UNICODE"
        )
    {
        return Err(SqlError::new(
            SqlState::InvalidParameterValue,
            format!("client_encoding \"{value}\" is not supported; pgwide speaks UTF8"),
        ));
    }
    Ok(
        if name == "transaction_isolation" || name == "default_transaction_isolation" {
            value.to_lowercase()
        } else if let ("transaction_read_only" | "default_transaction_read_only", Some(on)) =
            (name, read_only_value(value))
        {
            // Kept as PostgreSQL shows a Boolean, which `SessionState::read_only` reads.
            if on { "on" } else { "off" }.to_string()
        } else if TIMEOUTS.contains(&name) {
            show_ms(parse_timeout(name, value)?)
        } else {
            value.to_string()
        },
    )
}

/// The settings of the startup packet's `options`, as PostgreSQL reads its command
/// line there: `-c name=value` and `--name=value`, words split at spaces, a backslash
/// keeping the next character (`-c search_path=a,\ b`); `-` in a name is `_`.
fn command_line_options(options: &str) -> Vec<(String, String)> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_ascii_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut settings = Vec::new();
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        let setting = match word.as_str() {
            "-c" => words.next(),
            _ => word
                .strip_prefix("--")
                .or_else(|| word.strip_prefix("-c"))
                .map(str::to_string),
        };
        if let Some((name, value)) = setting.as_deref().and_then(|s| s.split_once('=')) {
            settings.push((name.replace('-', "_"), value.to_string()));
        }
    }
    settings
}

fn invalid_time_zone(value: &str) -> SqlError {
    SqlError::new(
        SqlState::InvalidParameterValue,
        format!("invalid value for parameter \"TimeZone\": \"{value}\""),
    )
}

/// How `SHOW TimeZone` gives a zone set as `value`: an IANA zone by its own name
/// (`europe/berlin` is `Europe/Berlin`), anything else as written.
fn zone_setting(value: &str, zone: TimeZone) -> String {
    match zone {
        TimeZone::Named(named) => named.name().to_string(),
        TimeZone::Fixed(..) => value.to_string(),
    }
}

/// The isolation levels and access modes pgwide gives (docs/postgresql.md §5). It reads
/// committed data and makes write-write conflicts fail at COMMIT: that is READ
/// COMMITTED (READ UNCOMMITTED means the same in PostgreSQL). A READ ONLY block may be
/// REPEATABLE READ, reading one snapshot (`SessionState::check_transaction_modes`
/// refuses it in a block that may write); as a default for every transaction it is
/// refused, and SERIALIZABLE always is.
fn check_transaction_mode(name: &str, value: &str) -> SqlResult<()> {
    let refused = |what: &str| {
        Err(SqlError::unsupported(format!(
            "{what} is not supported: pgwide gives READ COMMITTED reads with write \
             conflicts failing at COMMIT, and REPEATABLE READ to READ ONLY blocks \
             (BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY), and refuses a mode it \
             would ignore"
        )))
    };
    // READ ONLY is enforced: `SessionState::allow_write`.
    match name {
        "transaction_isolation" | "default_transaction_isolation" => {
            match value.to_lowercase().as_str() {
                "read committed" | "read uncommitted" => Ok(()),
                "repeatable read" if name == "transaction_isolation" => Ok(()),
                "repeatable read" => refused("default_transaction_isolation 'repeatable read'"),
                "serializable" => refused("SERIALIZABLE"),
                _ => Err(SqlError::new(
                    SqlState::InvalidParameterValue,
                    format!("invalid value for parameter \"{name}\": \"{value}\""),
                )),
            }
        }
        "transaction_read_only" | "default_transaction_read_only" => {
            read_only_value(value).map(|_| ()).ok_or_else(|| {
                SqlError::new(
                    SqlState::InvalidParameterValue,
                    format!("parameter \"{name}\" requires a Boolean value"),
                )
            })
        }
        _ => Ok(()),
    }
}

/// The settings of pg_dump's scripts that name a place or kind of storage: the only
/// tablespace pgwide has is the default (`''`, `pg_default`), its only access method
/// `heap`; PostgreSQL refuses a name it does not know, as pgwide does (42704).
fn check_storage_setting(name: &str, value: &str) -> SqlResult<()> {
    let (known, what): (&[&str], &str) = match name {
        "default_tablespace" => (&["", "pg_default"], "tablespace"),
        "default_table_access_method" => (&["heap"], "table access method"),
        "xmloption" => (&["content", "document"], ""),
        "check_function_bodies" => {
            return read_only_value(value).map(|_| ()).ok_or_else(|| {
                SqlError::new(
                    SqlState::InvalidParameterValue,
                    format!("parameter \"{name}\" requires a Boolean value"),
                )
            })
        }
        _ => return Ok(()),
    };
    match (known.contains(&value.to_lowercase().as_str()), what) {
        (true, _) => Ok(()),
        (false, "") => Err(SqlError::new(
            SqlState::InvalidParameterValue,
            format!("invalid value for parameter \"{name}\": \"{value}\""),
        )),
        (false, what) => Err(SqlError::new(
            SqlState::UndefinedObject,
            format!("{what} \"{value}\" does not exist"),
        )),
    }
}

/// A Boolean setting's value as PostgreSQL reads one (`on`, `true`, `yes`, `1`, and
/// their opposites, in any case).
fn read_only_value(value: &str) -> Option<bool> {
    match value.trim().to_lowercase().as_str() {
        "on" | "true" | "yes" | "1" | "t" | "y" => Some(true),
        "off" | "false" | "no" | "0" | "f" | "n" => Some(false),
        _ => None,
    }
}

/// The setting a transaction mode of BEGIN or SET TRANSACTION sets, and its value.
pub fn transaction_mode(mode: &sqlparser::ast::TransactionMode) -> (&'static str, &'static str) {
    use sqlparser::ast::{TransactionAccessMode, TransactionIsolationLevel, TransactionMode};
    match mode {
        TransactionMode::AccessMode(TransactionAccessMode::ReadOnly) => {
            ("transaction_read_only", "on")
        }
        TransactionMode::AccessMode(TransactionAccessMode::ReadWrite) => {
            ("transaction_read_only", "off")
        }
        TransactionMode::IsolationLevel(level) => (
            "transaction_isolation",
            match level {
                TransactionIsolationLevel::ReadUncommitted => "read uncommitted",
                TransactionIsolationLevel::ReadCommitted => "read committed",
                TransactionIsolationLevel::RepeatableRead => "repeatable read",
                TransactionIsolationLevel::Serializable => "serializable",
                TransactionIsolationLevel::Snapshot => "snapshot",
            },
        ),
    }
}

/// A time setting in milliseconds: a bare number is milliseconds, or a number with one
/// of PostgreSQL's units (`us`, `ms`, `s`, `min`, `h`, `d`); fractions round to the
/// nearest millisecond.
fn parse_timeout(name: &str, value: &str) -> SqlResult<u64> {
    let invalid = || {
        SqlError::new(
            SqlState::InvalidParameterValue,
            format!("invalid value for parameter \"{name}\": \"{value}\""),
        )
    };
    let text = value.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| invalid())?;
    let scale = match unit.trim() {
        "" | "ms" => 1.0,
        "us" => 0.001,
        "s" => 1_000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return Err(invalid()),
    };
    let ms = (number * scale).round();
    if !ms.is_finite() || !(0.0..=MAX_TIMEOUT_MS).contains(&ms) {
        return Err(SqlError::new(
            SqlState::InvalidParameterValue,
            format!(
                "{value} is outside the valid range for parameter \"{name}\" (0 .. 2147483647)"
            ),
        ));
    }
    Ok(ms as u64)
}

/// Milliseconds as PostgreSQL's SHOW prints them: in the largest unit that divides
/// them exactly.
fn show_ms(ms: u64) -> String {
    if ms == 0 {
        return "0".to_string();
    }
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("min", 60_000),
        ("s", 1_000),
    ] {
        if ms % size == 0 {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// The setting that says how much data under one partition key is too much.
pub const PARTITION_SIZE_ADVICE: &str = "pgwide.partition_size_advice";

/// The bytes `pgwide.partition_size_advice` is set to: a whole number of bytes, or of
/// the units PostgreSQL's memory settings take (`B`, `kB`, `MB`, `GB`, `TB`).
pub fn partition_size_advice(value: &str) -> SqlResult<u64> {
    let text = value.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let multiplier: u64 = match unit.trim() {
        "" | "B" => 1,
        "kB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => 0,
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(multiplier))
        .filter(|bytes| *bytes > 0)
        .ok_or_else(|| {
            SqlError::new(
                SqlState::InvalidParameterValue,
                format!(
                    "invalid value for parameter \"{PARTITION_SIZE_ADVICE}\": \"{value}\"; \
                     expected a size above zero such as 1GB or 64MB (units B, kB, MB, GB, TB)"
                ),
            )
        })
}

/// The value of `pgwide.as_of`: milliseconds since the Unix epoch, or a timestamp with
/// time zone in PostgreSQL's text (one without an offset is read in `zone`), as the
/// milliseconds it means.
pub fn parse_as_of(value: &str, zone: &TimeZone) -> SqlResult<i64> {
    let text = value.trim().trim_matches('\'');
    let ms = match text.parse::<i64>() {
        Ok(ms) => Some(ms),
        Err(_) => super::datetime::parse_timestamp(text, Some(zone))
            .ok()
            .filter(|micros| {
                *micros != super::datetime::TIMESTAMP_INFINITY
                    && *micros != super::datetime::TIMESTAMP_MINUS_INFINITY
            })
            .map(|micros| micros.div_euclid(1000)),
    };
    ms.filter(|ms| *ms >= 0).ok_or_else(|| {
        SqlError::new(
            SqlState::InvalidParameterValue,
            format!(
                "invalid value for parameter \"pgwide.as_of\": \"{value}\"; expected milliseconds since the Unix epoch or a timestamp with time zone from 1970 on"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_startup_options_set_what_they_name() {
        let mut s = Settings::new("u");
        s.startup(
            "options",
            "-c TimeZone=Asia/Kolkata --statement-timeout=5s -csearch_path=a,\\ b",
        )
        .unwrap();
        assert_eq!(s.get("timezone").unwrap(), "Asia/Kolkata");
        assert!(!s.time_zone().is_utc());
        assert_eq!(s.get("statement_timeout").unwrap(), "5s");
        assert_eq!(s.get("search_path").unwrap(), "a, b");
        // What RESET returns to, as a startup parameter is.
        s.set("timezone", "UTC").unwrap();
        s.reset("timezone").unwrap();
        assert_eq!(s.get("timezone").unwrap(), "Asia/Kolkata");
    }

    #[test]
    fn a_startup_value_postgresql_would_refuse_is_refused() {
        let mut s = Settings::new("u");
        for (name, value) in [
            ("TimeZone", "Mars/Olympus_Mons"),
            ("options", "-c TimeZone=nowhere"),
            ("statement_timeout", "soon"),
            ("options", "-c idle_session_timeout=-1"),
        ] {
            let e = s.startup(name, value).unwrap_err();
            assert_eq!(e.code(), "22023", "{name}={value}");
        }
        assert!(s.time_zone().is_utc());
        assert_eq!(s.get("statement_timeout").unwrap(), "0");
        // A parameter pgwide does not know is some other server's: no error.
        s.startup("geqo_effort", "5").unwrap();
    }

    #[test]
    fn timeouts_parse_units_and_show_like_postgres() {
        let mut s = Settings::new("u");
        for (input, shown, ms) in [
            ("100ms", "100ms", 100),
            ("1500", "1500ms", 1500),
            ("2s", "2s", 2000),
            ("1.5s", "1500ms", 1500),
            ("5min", "5min", 300_000),
            (" 1 h ", "1h", 3_600_000),
            ("0", "0", 0),
        ] {
            s.set("statement_timeout", input).unwrap();
            assert_eq!(s.get("statement_timeout").unwrap(), shown, "{input}");
            assert_eq!(
                s.timeouts().statement,
                (ms > 0).then(|| Duration::from_millis(ms)),
                "{input}"
            );
        }
        for bad in ["abc", "10 parsecs", "-1", "1e12", ""] {
            let e = s.set("idle_session_timeout", bad).unwrap_err();
            assert_eq!(e.code(), "22023", "{bad}");
        }
        assert_eq!(s.get("idle_session_timeout").unwrap(), "0");
    }

    #[test]
    fn server_defaults_yield_to_startup_parameters_and_reset_returns_to_either() {
        let mut s = Settings::new("u");
        s.startup("statement_timeout", "250").unwrap();
        s.set_default("statement_timeout", "1000").unwrap();
        s.set_default("idle_session_timeout", "60000").unwrap();
        assert_eq!(s.get("statement_timeout").unwrap(), "250ms");
        assert_eq!(s.get("idle_session_timeout").unwrap(), "1min");
        s.set("statement_timeout", "5s").unwrap();
        s.set("idle_session_timeout", "0").unwrap();
        s.reset_all();
        // PostgreSQL's RESET: the client's startup option, else the server's default.
        assert_eq!(s.get("statement_timeout").unwrap(), "250ms");
        assert_eq!(s.get("idle_session_timeout").unwrap(), "1min");
        assert!(s.set_default("statement_timeout", "soon").is_err());
    }

    #[test]
    fn enforced_timeouts_follow_every_way_a_setting_changes() {
        let ms = |n| Some(Duration::from_millis(n));
        let mut s = Settings::new("u");
        assert_eq!(s.timeouts(), SessionTimeouts::default());
        s.startup("statement_timeout", "250").unwrap();
        s.set_default("idle_session_timeout", "60000").unwrap();
        s.set_default("idle_in_transaction_session_timeout", "5s")
            .unwrap();
        let configured = SessionTimeouts {
            statement: ms(250),
            idle_in_transaction: ms(5000),
            idle_session: ms(60_000),
        };
        assert_eq!(s.timeouts(), configured);
        s.set_local("statement_timeout", "10ms").unwrap();
        s.set_config("idle_session_timeout", Some("0"), true, true)
            .unwrap();
        assert_eq!(s.timeouts().statement, ms(10));
        assert_eq!(s.timeouts().idle_session, None);
        s.end_transaction();
        assert_eq!(s.timeouts(), configured);
        s.set("idle_in_transaction_session_timeout", "0").unwrap();
        assert_eq!(s.timeouts().idle_in_transaction, None);
        s.set("statement_timeout", "0").unwrap();
        s.reset_all();
        assert_eq!(s.timeouts(), configured);
    }
}
