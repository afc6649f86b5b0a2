//! The one table that maps engine errors to SQLSTATEs (DESIGN §3 "Errors"). The message
//! is the engine's, which names the offending value; internals go to the log only.

use super::types::SqlError;
use crate::engine::EngineError;

/// The SQLSTATE for an engine error.
pub fn sqlstate(error: &EngineError) -> &'static str {
    use EngineError::*;
    match error {
        InvalidName { .. } | InvalidInstanceName { .. } => "42602",
        InstanceNotFound { .. } => "3D000",
        InstanceExists { .. } => "42P04",
        InstanceNotEmpty { .. } => "55006",
        TableNotFound { .. } => "42P01",
        TableExists { .. } => "42P07",
        ColumnExists { .. } => "42701",
        PkColumnCount { .. } => "22023",
        BadPkType { .. } | PkTypeMismatch { .. } | IncrementType { .. } => "42804",
        PkArity { .. } | PkColumnAsAttribute { .. } => "22023",
        PkValueTooLarge { .. }
        | ValueTooLarge { .. }
        | TooManyColumns { .. }
        | TooManyColumnsToGet { .. }
        | BatchTooLarge { .. }
        | RequestTooLarge { .. }
        | TooManyTables { .. }
        | TooManyInstances { .. } => "54000",
        BadOption { .. } | VersionOutOfRange { .. } | ExpiredWrite { .. } | BadContinuation => {
            "22023"
        }
        IncrementOverflow { .. } => "22003",
        WriteConflict => "40001",
        Storage(_) => "58030",
        Corrupt(_) => "XX001",
    }
}

impl From<EngineError> for SqlError {
    fn from(error: EngineError) -> Self {
        let code = sqlstate(&error);
        match &error {
            EngineError::Storage(_) | EngineError::Corrupt(_) => {
                tracing::error!("engine failure: {error}");
                SqlError::new(code, "the storage layer failed; see the server log")
            }
            _ => SqlError::new(code, error.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{PkType, ValueType};

    /// Every variant, so a new one cannot be added without choosing its SQLSTATE here.
    fn every_variant() -> Vec<(EngineError, &'static str)> {
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
            (BadContinuation, "22023"),
            (WriteConflict, "40001"),
            (Storage(s()), "58030"),
            (Corrupt(s()), "XX001"),
        ]
    }

    #[test]
    fn every_engine_error_has_its_sqlstate() {
        for (error, code) in every_variant() {
            let sql: SqlError = error.clone().into();
            assert_eq!(sql.code, code, "{error:?}");
            assert!(!sql.message.is_empty());
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
            sql.message.contains("\"id\"") && sql.message.contains("1025"),
            "{}",
            sql.message
        );
        let sql: SqlError = EngineError::Storage("disk /dev/vda gone".into()).into();
        assert!(
            !sql.message.contains("/dev/vda"),
            "internal details must not leak"
        );
    }
}
