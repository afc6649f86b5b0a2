//! The SQL layer's error, `SqlError`: what a statement reports to its client. Errors of
//! the layers below (engine, auth) are kept whole, so callers can match on what went
//! wrong, and get their SQLSTATE from `crate::sqlstate` when they are reported. Errors
//! the SQL layer finds itself name their `SqlState` where they are made.

use crate::auth::AuthError;
use crate::engine::EngineError;
use crate::sqlstate::SqlState;

/// An error a statement reports: a SQLSTATE, a message that names the offending value,
/// and whether the connection survives it.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlError {
    /// The engine refused the request or failed.
    Engine(EngineError),
    /// Roles and privileges.
    Auth(AuthError),
    /// The statement was interrupted from outside the session.
    Canceled(Interruption),
    /// A feature pgwide does not have.
    Unsupported(String),
    /// A function or operator with these argument types does not exist.
    UndefinedFunction(String),
    /// The statement does not parse.
    Syntax(String),
    /// A failure with no better class; the details went to the log.
    Internal(String),
    /// Any other error a statement can run into: its SQLSTATE and its message.
    Statement { state: SqlState, message: String },
    /// An error after which the server closes the connection.
    Fatal { state: SqlState, message: String },
}

/// Why a running statement was stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interruption {
    /// A CancelRequest from the client.
    UserRequest,
    /// `statement_timeout` passed.
    StatementTimeout,
    /// The client ended `COPY … FROM STDIN` with CopyFail.
    CopyFailed(String),
}

/// `ERROR` or `FATAL`, as sent in the ErrorResponse's `S` and `V` fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Fatal,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "ERROR",
            Severity::Fatal => "FATAL",
        }
    }
}

impl SqlError {
    /// An error of the statement with this SQLSTATE and message.
    pub fn new(state: SqlState, message: impl Into<String>) -> Self {
        SqlError::Statement {
            state,
            message: message.into(),
        }
    }

    /// An error that ends the connection.
    pub fn fatal(state: SqlState, message: impl Into<String>) -> Self {
        SqlError::Fatal {
            state,
            message: message.into(),
        }
    }

    pub fn syntax(message: impl Into<String>) -> Self {
        SqlError::Syntax(message.into())
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        SqlError::Unsupported(message.into())
    }

    pub fn undefined_function(message: impl Into<String>) -> Self {
        SqlError::UndefinedFunction(message.into())
    }

    pub fn internal(message: impl Into<String>) -> Self {
        SqlError::Internal(message.into())
    }

    /// The SQLSTATE the client is told.
    pub fn sqlstate(&self) -> SqlState {
        match self {
            SqlError::Engine(e) => SqlState::from(e),
            SqlError::Auth(e) => SqlState::from(e),
            SqlError::Canceled(_) => SqlState::QueryCanceled,
            SqlError::Unsupported(_) => SqlState::FeatureNotSupported,
            SqlError::UndefinedFunction(_) => SqlState::UndefinedFunction,
            SqlError::Syntax(_) => SqlState::SyntaxError,
            SqlError::Internal(_) => SqlState::InternalError,
            SqlError::Statement { state, .. } | SqlError::Fatal { state, .. } => *state,
        }
    }

    /// The SQLSTATE's five characters.
    pub fn code(&self) -> &'static str {
        self.sqlstate().code()
    }

    /// The message the client is told: it names the offending value, never internals.
    pub fn message(&self) -> String {
        match self {
            SqlError::Engine(EngineError::Storage(_) | EngineError::Corrupt(_)) => {
                "the storage layer failed; see the server log".to_string()
            }
            SqlError::Engine(e) => e.to_string(),
            SqlError::Auth(e) => e.to_string(),
            SqlError::Canceled(Interruption::UserRequest) => {
                "canceling statement due to user request".to_string()
            }
            SqlError::Canceled(Interruption::StatementTimeout) => {
                "canceling statement due to statement timeout".to_string()
            }
            SqlError::Canceled(Interruption::CopyFailed(reason)) => {
                format!("COPY from stdin failed: {reason}")
            }
            SqlError::Unsupported(message)
            | SqlError::UndefinedFunction(message)
            | SqlError::Syntax(message)
            | SqlError::Internal(message)
            | SqlError::Statement { message, .. }
            | SqlError::Fatal { message, .. } => message.clone(),
        }
    }

    /// Whether the connection ends after this error.
    pub fn severity(&self) -> Severity {
        match self {
            SqlError::Fatal { .. } | SqlError::Auth(AuthError::NoConnectPrivilege { .. }) => {
                Severity::Fatal
            }
            _ => Severity::Error,
        }
    }

    /// The same error with `context` after its message (a COPY's line number), keeping
    /// its SQLSTATE.
    pub fn with_context(self, context: &str) -> SqlError {
        let state = self.sqlstate();
        let message = format!("{} ({context})", self.message());
        match self.severity() {
            Severity::Fatal => SqlError::fatal(state, message),
            Severity::Error => SqlError::new(state, message),
        }
    }
}

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message(), self.code())
    }
}

impl std::error::Error for SqlError {}

impl From<EngineError> for SqlError {
    fn from(error: EngineError) -> Self {
        if matches!(error, EngineError::Storage(_) | EngineError::Corrupt(_)) {
            tracing::error!("engine failure: {error}");
        }
        SqlError::Engine(error)
    }
}

impl From<AuthError> for SqlError {
    fn from(error: AuthError) -> Self {
        if matches!(
            error,
            AuthError::Store { .. } | AuthError::CorruptRole { .. } | AuthError::Hashing { .. }
        ) {
            tracing::error!("role store failure: {error}");
        }
        SqlError::Auth(error)
    }
}

pub type SqlResult<T> = Result<T, SqlError>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{PkType, ValueType};

    /// Every engine error with its SQLSTATE, so a new variant cannot be added without
    /// choosing one (the match in `crate::sqlstate` has no wildcard arm either).
    fn every_engine_error() -> Vec<(EngineError, &'static str)> {
        use EngineError::*;
        let s = || "x".to_string();
        vec![
            (InvalidName { name: s() }, "42602"),
            (InvalidInstanceName { name: s() }, "42602"),
            (InstanceNotFound { name: s() }, "3D000"),
            (InstanceExists { name: s() }, "42P04"),
            (
                InstanceNotEmpty {
                    name: s(),
                    tables: 1,
                },
                "55006",
            ),
            (TableNotFound { name: s() }, "42P01"),
            (TableExists { name: s() }, "42P07"),
            (ColumnExists { name: s() }, "42701"),
            (
                NoSuchColumn {
                    table: s(),
                    column: s(),
                },
                "42703",
            ),
            (KeyColumnNotNull { column: s() }, "42P16"),
            (PkColumnCount { count: 5 }, "22023"),
            (
                BadPkType {
                    column: s(),
                    given: s(),
                },
                "42804",
            ),
            (
                PkArity {
                    expected: 2,
                    given: 1,
                },
                "22023",
            ),
            (
                PkTypeMismatch {
                    column: s(),
                    expected: PkType::Integer,
                    given: PkType::String,
                    value: s(),
                },
                "42804",
            ),
            (PkColumnAsAttribute { column: s() }, "22023"),
            (
                PkValueTooLarge {
                    column: s(),
                    size: 2000,
                    limit: 1024,
                },
                "54000",
            ),
            (
                ValueTooLarge {
                    column: s(),
                    size: 3,
                    limit: 2,
                },
                "54000",
            ),
            (
                TooManyColumns {
                    count: 2000,
                    limit: 1024,
                },
                "54000",
            ),
            (
                TooManyColumnsToGet {
                    count: 200,
                    limit: 128,
                },
                "54000",
            ),
            (
                BatchTooLarge {
                    what: "BatchGetRow",
                    count: 101,
                    limit: 100,
                },
                "54000",
            ),
            (RequestTooLarge { bytes: 5, limit: 4 }, "54000"),
            (
                TooManyTables {
                    instance: s(),
                    count: 64,
                    limit: 64,
                },
                "54000",
            ),
            (
                TooManyInstances {
                    count: 10,
                    limit: 10,
                },
                "54000",
            ),
            (
                BadOption {
                    option: s(),
                    value: s(),
                    reason: s(),
                },
                "22023",
            ),
            (
                VersionOutOfRange {
                    column: s(),
                    version: 1,
                    min: 0,
                    max: 0,
                },
                "22023",
            ),
            (
                ExpiredWrite {
                    column: s(),
                    version: 1,
                    ttl: 1,
                },
                "22023",
            ),
            (
                IncrementType {
                    column: s(),
                    found: ValueType::String,
                },
                "42804",
            ),
            (IncrementOverflow { column: s() }, "22003"),
            (
                IntegerOutOfRange {
                    column: s(),
                    width: crate::engine::IntegerWidth::Int16,
                },
                "22003",
            ),
            (
                RealOutOfRange {
                    column: s(),
                    overflow: true,
                },
                "22003",
            ),
            (
                ValueTooLong {
                    column: s(),
                    limit: 3,
                },
                "22001",
            ),
            (
                NullInNotNull {
                    table: s(),
                    column: s(),
                },
                "23502",
            ),
            (
                KeyColumnHasNulls {
                    table: s(),
                    column: s(),
                },
                "23502",
            ),
            (PrimaryKeyExists { table: s() }, "42P16"),
            (
                StreamRecordsRemoved {
                    table: s(),
                    after: 1,
                    removed_through: 2,
                },
                "55000",
            ),
            (
                MixedColumn {
                    table: s(),
                    column: s(),
                },
                "0A000",
            ),
            (
                ThroughputExceeded {
                    table: s(),
                    option: "reserved_write_cu",
                    limit: 50,
                    needed: 1,
                    available: 0,
                },
                "53400",
            ),
            (
                ForeignKeyViolation {
                    table: s(),
                    constraint: s(),
                    detail: s(),
                },
                "23503",
            ),
            (
                ForeignKeyReferenced {
                    table: s(),
                    on_child: s(),
                    detail: s(),
                },
                "23503",
            ),
            (NoUniqueMatch { parent: s() }, "42830"),
            (
                CheckViolation {
                    table: s(),
                    constraint: s(),
                },
                "23514",
            ),
            (
                CheckViolatedByRows {
                    constraint: s(),
                    table: s(),
                },
                "23514",
            ),
            (
                CheckFailed {
                    constraint: s(),
                    message: s(),
                },
                "22000",
            ),
            (
                ForeignKeyTypes {
                    constraint: s(),
                    column: s(),
                    parent_column: s(),
                },
                "42804",
            ),
            (
                ConstraintExists {
                    name: s(),
                    table: s(),
                },
                "42710",
            ),
            (
                ConstraintNotFound {
                    name: s(),
                    table: s(),
                },
                "42704",
            ),
            (BadContinuation, "22023"),
            (WriteConflict, "40001"),
            (TableReplaced { name: s() }, "40001"),
            (SchemaChangedSinceSnapshot, "40001"),
            (SnapshotTooOld { limit: 1 }, "72000"),
            (Storage(s()), "58030"),
            (Corrupt(s()), "XX001"),
        ]
    }

    #[test]
    fn every_engine_error_has_its_sqlstate() {
        for (error, code) in every_engine_error() {
            let sql: SqlError = error.clone().into();
            assert_eq!(sql.code(), code, "{error:?}");
            assert!(!sql.message().is_empty());
        }
    }

    /// Every auth error with its SQLSTATE and severity.
    #[test]
    fn every_auth_error_has_its_sqlstate() {
        let s = || "x".to_string();
        let cases = [
            (
                AuthError::RoleNotFound { name: s() },
                "42704",
                Severity::Error,
            ),
            (
                AuthError::RoleExists { name: s() },
                "42710",
                Severity::Error,
            ),
            (AuthError::EmptyPassword, "22023", Severity::Error),
            (AuthError::Hashing { reason: s() }, "XX000", Severity::Error),
            (AuthError::Store { reason: s() }, "58030", Severity::Error),
            (
                AuthError::CorruptRole {
                    key: s(),
                    reason: s(),
                },
                "XX001",
                Severity::Error,
            ),
            (
                AuthError::NotSuperuser { action: s() },
                "42501",
                Severity::Error,
            ),
            (
                AuthError::TablePrivilege { table: s() },
                "42501",
                Severity::Error,
            ),
            (
                AuthError::NoConnectPrivilege { database: s() },
                "42501",
                Severity::Fatal,
            ),
        ];
        for (error, code, severity) in cases {
            let sql: SqlError = error.clone().into();
            assert_eq!(sql.code(), code, "{error:?}");
            assert_eq!(sql.severity(), severity, "{error:?}");
            assert!(sql.message().contains('x') || sql.message().contains("password"));
        }
    }

    #[test]
    fn interruptions_are_query_canceled_and_say_why() {
        for (why, words) in [
            (Interruption::UserRequest, "user request"),
            (Interruption::StatementTimeout, "statement timeout"),
            (Interruption::CopyFailed("stop".into()), "stop"),
        ] {
            let e = SqlError::Canceled(why);
            assert_eq!(e.code(), "57014");
            assert!(e.message().contains(words), "{}", e.message());
        }
    }

    #[test]
    fn messages_name_the_offending_value() {
        let sql: SqlError = EngineError::PkValueTooLarge {
            column: "id".into(),
            size: 1025,
            limit: 1024,
        }
        .into();
        assert!(
            sql.message().contains("\"id\"") && sql.message().contains("1025"),
            "{}",
            sql.message()
        );
        let sql: SqlError = EngineError::Storage("disk /dev/vda gone".into()).into();
        assert!(
            !sql.message().contains("/dev/vda"),
            "internal details must not leak"
        );
    }
}
