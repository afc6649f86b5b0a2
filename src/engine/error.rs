//! Errors of the engine. Every variant carries the value that was wrong so the SQL layer
//! can say it; `crate::sqlstate` maps each variant to a SQLSTATE.

use super::types::{IntegerWidth, PkType, ValueType};
use crate::storage::StorageError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    #[error("invalid name \"{name}\": names are 1-255 bytes of letters, digits and underscores, not starting with a digit")]
    InvalidName { name: String },
    #[error("invalid instance name \"{name}\": instance names are 3-16 bytes of letters, digits and hyphens, starting with a letter and not ending with a hyphen")]
    InvalidInstanceName { name: String },
    #[error("database \"{name}\" does not exist")]
    InstanceNotFound { name: String },
    #[error("database \"{name}\" already exists")]
    InstanceExists { name: String },
    #[error("database \"{name}\" is not empty: it still has {tables} table(s)")]
    InstanceNotEmpty { name: String, tables: usize },
    #[error("relation \"{name}\" does not exist")]
    TableNotFound { name: String },
    #[error("relation \"{name}\" already exists")]
    TableExists { name: String },
    /// PostgreSQL's wording for a sequence past its bound without CYCLE.
    #[error("nextval: reached {} value of sequence \"{name}\" ({limit})", if *ascending { "maximum" } else { "minimum" })]
    SequenceLimit {
        name: String,
        ascending: bool,
        limit: i64,
    },
    #[error("setval: value {value} is out of bounds for sequence \"{name}\" ({min}..{max})")]
    SetvalOutOfBounds {
        name: String,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error("RESTART value ({value}) cannot be {} ({bound})", if *below { "less than MINVALUE" } else { "greater than MAXVALUE" })]
    RestartOutOfBounds { value: i64, below: bool, bound: i64 },
    #[error("type \"{name}\" already exists")]
    TypeExists { name: String },
    #[error("type \"{name}\" does not exist")]
    TypeNotFound { name: String },
    /// PostgreSQL's wording, with its DETAIL after a colon.
    #[error("cannot drop type {name} because other objects depend on it: column {column} of table {table} depends on type {name}")]
    TypeInUse {
        name: String,
        table: String,
        column: String,
    },
    #[error("invalid input value for enum {type_name}: \"{value}\"")]
    InvalidEnumValue { type_name: String, value: String },
    #[error("invalid enum label \"{label}\": labels must be 63 bytes or less")]
    InvalidEnumLabel { label: String },
    #[error("enum label \"{label}\" already exists")]
    EnumLabelExists { label: String },
    #[error("\"{label}\" is not an existing enum label")]
    EnumLabelNotFound { label: String },
    #[error("renaming a label of enum type {name} is not supported while a column uses the type (column {column} of table {table}): pgwide stores a value as its label's text, so every row would have to be rewritten")]
    EnumLabelInUse {
        name: String,
        table: String,
        column: String,
    },
    #[error("column \"{name}\" already exists")]
    ColumnExists { name: String },
    #[error("column \"{column}\" of relation \"{table}\" does not exist")]
    NoSuchColumn { table: String, column: String },
    #[error("column \"{column}\" is in a primary key")]
    KeyColumnNotNull { column: String },
    /// ADD PRIMARY KEY on a table that has one (PostgreSQL's wording).
    #[error("multiple primary keys for table \"{table}\" are not allowed")]
    PrimaryKeyExists { table: String },
    /// A read of a table's stream from a position after which records were removed
    /// or changes went unrecorded: a consumer resuming there would miss them.
    #[error("the stream of table \"{table}\" no longer has the records after position {after}: records up to position {removed_through} are gone (expired after stream_expiration_hours, or changes went unrecorded: TRUNCATE, ADD PRIMARY KEY, or the stream turned off); read after position {removed_through}, knowing that changes were missed")]
    StreamRecordsRemoved {
        table: String,
        after: u64,
        removed_through: u64,
    },
    /// A statement over a table's reserved read or write throughput for this second
    /// (docs/table-store.md §9.1); nothing of it was applied.
    #[error("{}", throughput_message(table, option, *limit, *needed, *available))]
    ThroughputExceeded {
        table: String,
        /// `reserved_read_cu` or `reserved_write_cu`.
        option: &'static str,
        limit: u64,
        needed: u64,
        available: u64,
    },
    /// An index or foreign key over a schema-free column whose cells have several
    /// value types (docs/table-store.md §3): its entries would need one.
    #[error("column \"{column}\" of table \"{table}\" holds values of several types (it was never declared), so an index or foreign key cannot cover it; copy its values into a declared column first")]
    MixedColumn { table: String, column: String },
    /// ADD PRIMARY KEY over a column some row has no value in (PostgreSQL's wording).
    #[error("column \"{column}\" of relation \"{table}\" contains null values")]
    KeyColumnHasNulls { table: String, column: String },
    #[error("a primary key has 1 to 4 columns, not {count}")]
    PkColumnCount { count: usize },
    #[error("primary key column \"{column}\" has type {given}, but only String (TEXT), Integer (BIGINT) and Binary (BYTEA) are allowed")]
    BadPkType { column: String, given: String },
    #[error("primary key needs {expected} values, got {given}")]
    PkArity { expected: usize, given: usize },
    #[error("primary key column \"{column}\" is {expected:?}, but the value {value} is {given:?}")]
    PkTypeMismatch {
        column: String,
        expected: PkType,
        given: PkType,
        value: String,
    },
    #[error("column \"{column}\" is a primary key column and cannot be written as an attribute")]
    PkColumnAsAttribute { column: String },
    #[error("value of primary key column \"{column}\" is {size} bytes, over the limit of {limit}")]
    PkValueTooLarge {
        column: String,
        size: usize,
        limit: usize,
    },
    #[error("value of column \"{column}\" is {size} bytes, over the limit of {limit}")]
    ValueTooLarge {
        column: String,
        size: usize,
        limit: usize,
    },
    #[error("{count} columns written in one row, over the limit of {limit}")]
    TooManyColumns { count: usize, limit: usize },
    #[error("{count} columns requested, over the limit of {limit} columns to get")]
    TooManyColumnsToGet { count: usize, limit: usize },
    #[error("{what} of {count} rows is over the limit of {limit}")]
    BatchTooLarge {
        what: &'static str,
        count: usize,
        limit: usize,
    },
    #[error("write of {bytes} bytes is over the request limit of {limit}")]
    RequestTooLarge { bytes: usize, limit: usize },
    #[error("{count} tables in database \"{instance}\", the limit is {limit}")]
    TooManyTables {
        instance: String,
        count: usize,
        limit: usize,
    },
    #[error("{count} databases exist, the limit is {limit}")]
    TooManyInstances { count: usize, limit: usize },
    #[error("invalid value {value} for table option \"{option}\": {reason}")]
    BadOption {
        option: String,
        value: String,
        reason: String,
    },
    #[error("version {version} of column \"{column}\" is outside the allowed window [{min}, {max}) set by max_version_offset")]
    VersionOutOfRange {
        column: String,
        version: i64,
        min: i64,
        max: i64,
    },
    #[error("version {version} of column \"{column}\" has already expired under the table's ttl of {ttl} seconds")]
    ExpiredWrite {
        column: String,
        version: i64,
        ttl: i64,
    },
    #[error("column \"{column}\" holds {found:?}, which cannot be incremented; increment needs an Integer")]
    IncrementType { column: String, found: ValueType },
    #[error("integer overflow incrementing column \"{column}\"")]
    IncrementOverflow { column: String },
    /// PostgreSQL's wording; the column is kept for the log.
    #[error("{} out of range", width.sql_name())]
    IntegerOutOfRange { column: String, width: IntegerWidth },
    /// A double past single precision's range written to a REAL column (PostgreSQL's
    /// wording).
    #[error("value out of range: {}", if *overflow { "overflow" } else { "underflow" })]
    RealOutOfRange { column: String, overflow: bool },
    /// A string longer than a `VARCHAR(n)` column's limit (PostgreSQL's wording).
    #[error("value too long for type character varying({limit})")]
    ValueTooLong { column: String, limit: u32 },
    /// A write that would leave a `NOT NULL` column without a value (PostgreSQL's
    /// wording).
    #[error(
        "null value in column \"{column}\" of relation \"{table}\" violates not-null constraint"
    )]
    NullInNotNull { table: String, column: String },
    /// A write giving a row the values of a unique index another row shows
    /// (PostgreSQL's wording, with its DETAIL after a colon).
    #[error(
        "duplicate key value violates unique constraint \"{index}\": Key ({columns})=({values}) already exists."
    )]
    UniqueViolation {
        index: String,
        columns: String,
        values: String,
    },
    /// CREATE UNIQUE INDEX over rows that already share values (PostgreSQL's wording).
    #[error(
        "could not create unique index \"{index}\": Key ({columns})=({values}) is duplicated."
    )]
    DuplicateInIndex {
        index: String,
        columns: String,
        values: String,
    },
    /// A child row whose referencing values no parent row shows (PostgreSQL's wording,
    /// with its DETAIL, `Key (a)=(1) is not present in table "p".`, after a colon).
    /// Three strings at most per variant: every `Result` carrying this enum is as large
    /// as its largest variant, and deep recursions over expressions carry many.
    #[error(
        "insert or update on table \"{table}\" violates foreign key constraint \"{constraint}\": {detail}"
    )]
    ForeignKeyViolation {
        table: String,
        constraint: String,
        detail: String,
    },
    /// A parent row deleted or re-keyed while child rows still show its values, under
    /// `NO ACTION` or `RESTRICT`; `on_child` is `"fk" on table "c"` and `detail`
    /// PostgreSQL's DETAIL.
    #[error(
        "update or delete on table \"{table}\" violates foreign key constraint {on_child}: {detail}"
    )]
    ForeignKeyReferenced {
        table: String,
        on_child: String,
        detail: String,
    },
    /// A row a write leaves that a CHECK constraint finds false (PostgreSQL's wording).
    #[error("new row for relation \"{table}\" violates check constraint \"{constraint}\"")]
    CheckViolation { table: String, constraint: String },
    /// ADD CONSTRAINT ... CHECK over rows already there that fail it.
    #[error("check constraint \"{constraint}\" of relation \"{table}\" is violated by some row")]
    CheckViolatedByRows { constraint: String, table: String },
    /// A CHECK constraint that could not be evaluated on a row.
    #[error("check constraint \"{constraint}\" could not be evaluated: {message}")]
    CheckFailed { constraint: String, message: String },
    #[error("there is no unique constraint matching given keys for referenced table \"{parent}\"")]
    NoUniqueMatch { parent: String },
    #[error(
        "foreign key constraint \"{constraint}\" cannot be implemented: Key columns \"{column}\" and \"{parent_column}\" are of incompatible types."
    )]
    ForeignKeyTypes {
        constraint: String,
        column: String,
        parent_column: String,
    },
    #[error("constraint \"{name}\" for relation \"{table}\" already exists")]
    ConstraintExists { name: String, table: String },
    #[error("constraint \"{name}\" of relation \"{table}\" does not exist")]
    ConstraintNotFound { name: String, table: String },
    #[error("index \"{name}\" does not exist")]
    IndexNotFound { name: String },
    #[error("bad continuation key for this range")]
    BadContinuation,
    #[error("the row was changed concurrently too many times; retry")]
    WriteConflict,
    /// A write planned against a table that was truncated (or dropped) before it
    /// committed: its rows would land where the table no longer reads.
    #[error("relation \"{name}\" was truncated or dropped while this write ran; run it again")]
    TableReplaced { name: String },
    /// A read of a REPEATABLE READ snapshot, after more was written while it was open
    /// than it can keep (`storage::MAX_KEPT_BYTES`).
    #[error("snapshot too old: more than {limit} bytes were written while this transaction's snapshot was open; run it again")]
    SnapshotTooOld { limit: usize },
    /// A read of a REPEATABLE READ snapshot after a schema change its tables and
    /// catalog may no longer match.
    #[error("could not serialize access: the schema changed since this transaction's snapshot was taken; run it again")]
    SchemaChangedSinceSnapshot,
    #[error("storage failure: {0}")]
    Storage(String),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
}

impl From<StorageError> for EngineError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::Corrupt(m) => EngineError::Corrupt(m),
            StorageError::SnapshotTooOld { limit } => EngineError::SnapshotTooOld { limit },
            other => EngineError::Storage(other.to_string()),
        }
    }
}

pub type EngineResult<T> = Result<T, EngineError>;

/// Says which budget a throttled statement ran out of, and whether waiting helps.
fn throughput_message(
    table: &str,
    option: &str,
    limit: u64,
    needed: u64,
    available: u64,
) -> String {
    let what = if option == "reserved_read_cu" {
        "read"
    } else {
        "write"
    };
    if needed > limit {
        format!(
            "the statement needs {needed} {what} CU, more than table \"{table}\"'s {option} = {limit} allows in one second: split it, or raise the option with ALTER TABLE {table} SET ({option} = ...)"
        )
    } else {
        format!(
            "table \"{table}\" is over its {option} = {limit} for this second: the statement needs {needed} {what} CU and {available} are left; retry after a moment, or raise the option"
        )
    }
}
