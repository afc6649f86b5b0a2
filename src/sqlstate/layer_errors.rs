//! Each layer's error enum to its SQLSTATE: storage, engine, auth and the wire server's.
//! Every match lists every variant, so a new error cannot be added without choosing its
//! code. Kept apart from the codes themselves, which every layer imports: this file
//! imports the layers, and the codes import nothing.

use super::SqlState;
use crate::auth::AuthError;
use crate::engine::EngineError;
use crate::server::WireError;
use crate::storage::StorageError;

impl From<&StorageError> for SqlState {
    fn from(error: &StorageError) -> Self {
        match error {
            StorageError::Io(_) => SqlState::IoError,
            StorageError::Corrupt(_) => SqlState::DataCorrupted,
            StorageError::BatchTooLarge { .. } => SqlState::ProgramLimitExceeded,
            StorageError::SnapshotTooOld { .. } => SqlState::SnapshotTooOld,
            StorageError::ReadOnlySnapshot => SqlState::ReadOnlySqlTransaction,
        }
    }
}

impl From<&EngineError> for SqlState {
    fn from(error: &EngineError) -> Self {
        use EngineError::*;
        match error {
            InvalidName { .. } | InvalidInstanceName { .. } => SqlState::InvalidName,
            InstanceNotFound { .. } => SqlState::InvalidCatalogName,
            InstanceExists { .. } => SqlState::DuplicateDatabase,
            InstanceNotEmpty { .. } => SqlState::ObjectInUse,
            TableNotFound { .. } => SqlState::UndefinedTable,
            TableExists { .. } => SqlState::DuplicateTable,
            ColumnExists { .. } => SqlState::DuplicateColumn,
            TypeExists { .. } | EnumLabelExists { .. } => SqlState::DuplicateObject,
            TypeNotFound { .. } => SqlState::UndefinedObject,
            TypeInUse { .. } => SqlState::DependentObjectsStillExist,
            InvalidEnumValue { .. } => SqlState::InvalidTextRepresentation,
            InvalidEnumLabel { .. } | EnumLabelNotFound { .. } => SqlState::InvalidParameterValue,
            EnumLabelInUse { .. } | MixedColumn { .. } => SqlState::FeatureNotSupported,
            NoSuchColumn { .. } => SqlState::UndefinedColumn,
            KeyColumnNotNull { .. } | PrimaryKeyExists { .. } => SqlState::InvalidTableDefinition,
            BadPkType { .. } | PkTypeMismatch { .. } | IncrementType { .. } => {
                SqlState::DatatypeMismatch
            }
            PkColumnCount { .. } | PkArity { .. } | PkColumnAsAttribute { .. } => {
                SqlState::InvalidParameterValue
            }
            PkValueTooLarge { .. }
            | ValueTooLarge { .. }
            | TooManyColumns { .. }
            | TooManyColumnsToGet { .. }
            | BatchTooLarge { .. }
            | RequestTooLarge { .. }
            | TooManyTables { .. }
            | TooManyInstances { .. } => SqlState::ProgramLimitExceeded,
            BadOption { .. }
            | VersionOutOfRange { .. }
            | ExpiredWrite { .. }
            | BadContinuation
            | RestartOutOfBounds { .. } => SqlState::InvalidParameterValue,
            IncrementOverflow { .. } | IntegerOutOfRange { .. } | RealOutOfRange { .. } => {
                SqlState::NumericValueOutOfRange
            }
            ValueTooLong { .. } => SqlState::StringDataRightTruncation,
            NullInNotNull { .. } | KeyColumnHasNulls { .. } => SqlState::NotNullViolation,
            UniqueViolation { .. } | DuplicateInIndex { .. } => SqlState::UniqueViolation,
            IndexNotFound { .. } | ConstraintNotFound { .. } => SqlState::UndefinedObject,
            ForeignKeyViolation { .. } | ForeignKeyReferenced { .. } => {
                SqlState::ForeignKeyViolation
            }
            NoUniqueMatch { .. } => SqlState::InvalidForeignKey,
            CheckViolation { .. } | CheckViolatedByRows { .. } => SqlState::CheckViolation,
            CheckFailed { .. } => SqlState::DataException,
            ForeignKeyTypes { .. } => SqlState::DatatypeMismatch,
            ConstraintExists { .. } => SqlState::DuplicateObject,
            SequenceLimit { .. } => SqlState::SequenceGeneratorLimitExceeded,
            SetvalOutOfBounds { .. } => SqlState::NumericValueOutOfRange,
            WriteConflict | TableReplaced { .. } | SchemaChangedSinceSnapshot => {
                SqlState::SerializationFailure
            }
            SnapshotTooOld { .. } => SqlState::SnapshotTooOld,
            StreamRecordsRemoved { .. } => SqlState::ObjectNotInPrerequisiteState,
            ThroughputExceeded { .. } => SqlState::ConfigurationLimitExceeded,
            // The engine keeps the storage layer's failures as text; whatever their
            // cause, the client sees an I/O failure and the log has the details.
            Storage(_) => SqlState::IoError,
            Corrupt(_) => SqlState::DataCorrupted,
        }
    }
}

impl From<&WireError> for SqlState {
    fn from(error: &WireError) -> Self {
        match error {
            // Never sent: the socket is gone. Logged under this class.
            WireError::Io(_) => SqlState::ConnectionFailure,
            WireError::Protocol(_) => SqlState::ProtocolViolation,
            WireError::TooLarge(_) => SqlState::ProgramLimitExceeded,
        }
    }
}

impl From<&AuthError> for SqlState {
    fn from(error: &AuthError) -> Self {
        match error {
            AuthError::RoleNotFound { .. } => SqlState::UndefinedObject,
            AuthError::RoleExists { .. } => SqlState::DuplicateObject,
            AuthError::EmptyPassword => SqlState::InvalidParameterValue,
            AuthError::Hashing { .. } => SqlState::InternalError,
            AuthError::Store { .. } => SqlState::IoError,
            AuthError::CorruptRole { .. } => SqlState::DataCorrupted,
            AuthError::NotSuperuser { .. }
            | AuthError::TablePrivilege { .. }
            | AuthError::NoConnectPrivilege { .. } => SqlState::InsufficientPrivilege,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_errors_have_their_sqlstates() {
        let cases = [
            (WireError::Io(std::io::Error::other("x")), "08006"),
            (WireError::Protocol("x".into()), "08P01"),
            (WireError::TooLarge("x".into()), "54000"),
        ];
        for (error, code) in cases {
            assert_eq!(SqlState::from(&error).code(), code, "{error:?}");
        }
    }

    #[test]
    fn storage_errors_have_their_sqlstates() {
        let cases = [
            (StorageError::Io("x".into()), "58030"),
            (StorageError::Corrupt("x".into()), "XX001"),
            (StorageError::BatchTooLarge { ops: 2, limit: 1 }, "54000"),
        ];
        for (error, code) in cases {
            assert_eq!(SqlState::from(&error).code(), code, "{error:?}");
        }
    }
}
