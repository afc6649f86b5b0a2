//! SQLSTATEs: the codes pgwide reports, named as PostgreSQL's error codes appendix names
//! them. This is the only file that spells a SQLSTATE; everything else names a variant.
//! `layer_errors` maps each layer's error enum (storage, engine, auth, the wire
//! server's) to a code with exhaustive matches, and `SqlError::sqlstate` hands its
//! variants to those.

mod layer_errors;

/// Defines `SqlState` with one variant per code, its `code()` and `ALL`, from one list,
/// so a code and its name cannot drift apart.
macro_rules! sqlstates {
    ($($name:ident => $code:literal,)*) => {
        /// A SQLSTATE pgwide reports. Variant names are PostgreSQL's condition names in
        /// CamelCase (`unique_violation` is `UniqueViolation`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum SqlState {
            $($name,)*
        }

        impl SqlState {
            /// Every SQLSTATE, for tests that must cover them all.
            pub const ALL: &'static [SqlState] = &[$(SqlState::$name,)*];

            /// The five-character code sent in the ErrorResponse's `C` field.
            pub const fn code(self) -> &'static str {
                match self {
                    $(SqlState::$name => $code,)*
                }
            }
        }
    };
}

sqlstates! {
    Warning => "01000",
    ConnectionFailure => "08006",
    ProtocolViolation => "08P01",
    FeatureNotSupported => "0A000",
    InvalidGrantOperation => "0LP01",
    CardinalityViolation => "21000",
    DataException => "22000",
    CharacterNotInRepertoire => "22021",
    DivisionByZero => "22012",
    DatetimeFieldOverflow => "22008",
    InvalidDatetimeFormat => "22007",
    SequenceGeneratorLimitExceeded => "2200H",
    InvalidParameterValue => "22023",
    InvalidRowCountInLimitClause => "2201W",
    InvalidTextRepresentation => "22P02",
    UntranslatableCharacter => "22P05",
    BadCopyFileFormat => "22P04",
    NullValueNotAllowed => "22004",
    NumericValueOutOfRange => "22003",
    SubstringError => "22011",
    NotNullViolation => "23502",
    UniqueViolation => "23505",
    ForeignKeyViolation => "23503",
    CheckViolation => "23514",
    ActiveSqlTransaction => "25001",
    ReadOnlySqlTransaction => "25006",
    NoActiveSqlTransaction => "25P01",
    InFailedSqlTransaction => "25P02",
    IdleInTransactionSessionTimeout => "25P03",
    InvalidSqlStatementName => "26000",
    InvalidAuthorizationSpecification => "28000",
    InvalidPassword => "28P01",
    InvalidCursorName => "34000",
    InvalidSavepointSpecification => "3B001",
    InvalidCatalogName => "3D000",
    InvalidSchemaName => "3F000",
    SerializationFailure => "40001",
    SnapshotTooOld => "72000",
    SyntaxError => "42601",
    InsufficientPrivilege => "42501",
    InvalidName => "42602",
    DatatypeMismatch => "42804",
    GroupingError => "42803",
    StringDataRightTruncation => "22001",
    CannotCoerce => "42846",
    GeneratedAlways => "428C9",
    UndefinedColumn => "42703",
    UndefinedFunction => "42883",
    UndefinedParameter => "42P02",
    UndefinedTable => "42P01",
    UndefinedObject => "42704",
    DuplicateColumn => "42701",
    DuplicateCursor => "42P03",
    DuplicateDatabase => "42P04",
    DuplicatePreparedStatement => "42P05",
    DuplicateSchema => "42P06",
    ReservedName => "42939",
    DuplicateTable => "42P07",
    DuplicateAlias => "42712",
    DuplicateObject => "42710",
    AmbiguousColumn => "42702",
    AmbiguousFunction => "42725",
    InvalidColumnReference => "42P10",
    InvalidTableDefinition => "42P16",
    InvalidObjectDefinition => "42P17",
    DependentObjectsStillExist => "2BP01",
    InvalidForeignKey => "42830",
    WrongObjectType => "42809",
    OutOfMemory => "53200",
    TooManyConnections => "53300",
    ConfigurationLimitExceeded => "53400",
    ProgramLimitExceeded => "54000",
    StatementTooComplex => "54001",
    ObjectNotInPrerequisiteState => "55000",
    ObjectInUse => "55006",
    LockNotAvailable => "55P02",
    QueryCanceled => "57014",
    AdminShutdown => "57P01",
    DatabaseDropped => "57P05",
    IoError => "58030",
    InternalError => "XX000",
    DataCorrupted => "XX001",
}

impl std::fmt::Display for SqlState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_sqlstate_has_a_distinct_five_character_code() {
        let mut seen = HashSet::new();
        for state in SqlState::ALL {
            let code = state.code();
            assert_eq!(code.len(), 5, "{state:?}");
            assert!(
                code.chars()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()),
                "{state:?}: {code}"
            );
            assert!(seen.insert(code), "{code} twice");
        }
    }
}
