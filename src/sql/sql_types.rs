//! The values, types and results the SQL layer hands to the wire server. The server only
//! encodes these; it knows nothing of tables or the engine.

pub use super::sql_error::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use futures::stream::BoxStream;
use sqlparser::ast::DataType;
use std::sync::Arc;

/// The PostgreSQL types pgwide speaks on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlType {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Text,
    Bytea,
    /// `text[]`, only produced by catalog queries (`array_agg`, `reloptions`); its
    /// datum is the array's text form (`{a,"b c"}`).
    TextArray,
}

impl SqlType {
    /// The PostgreSQL type OID.
    pub fn oid(self) -> u32 {
        match self {
            SqlType::Bool => 16,
            SqlType::Bytea => 17,
            SqlType::Int8 => 20,
            SqlType::Int2 => 21,
            SqlType::Int4 => 23,
            SqlType::Text => 25,
            SqlType::Float4 => 700,
            SqlType::Float8 => 701,
            SqlType::TextArray => 1009,
        }
    }

    /// The type with this OID, if pgwide supports it (VARCHAR and unknown map to TEXT).
    pub fn from_oid(oid: u32) -> Option<SqlType> {
        Some(match oid {
            16 => SqlType::Bool,
            17 => SqlType::Bytea,
            20 => SqlType::Int8,
            21 => SqlType::Int2,
            23 => SqlType::Int4,
            25 | 1043 | 705 | 19 | 1042 => SqlType::Text,
            700 => SqlType::Float4,
            701 => SqlType::Float8,
            _ => return None,
        })
    }

    /// The name PostgreSQL prints for the type.
    pub fn name(self) -> &'static str {
        match self {
            SqlType::Bool => "boolean",
            SqlType::Bytea => "bytea",
            SqlType::Int8 => "bigint",
            SqlType::Int2 => "smallint",
            SqlType::Int4 => "integer",
            SqlType::Text => "text",
            SqlType::Float4 => "real",
            SqlType::Float8 => "double precision",
            SqlType::TextArray => "text[]",
        }
    }
}

/// The SQL type a declared type maps to.
pub fn sql_type(data_type: &DataType) -> SqlResult<SqlType> {
    use DataType as D;
    Ok(match data_type {
        D::Text | D::Varchar(_) | D::Char(_) | D::String(_) | D::Nvarchar(_) | D::CharacterVarying(_) | D::Character(_) => SqlType::Text,
        D::BigInt(_) | D::Int8(_) | D::Int64 => SqlType::Int8,
        D::Int(_) | D::Integer(_) | D::Int4(_) | D::Int32 => SqlType::Int4,
        D::SmallInt(_) | D::Int2(_) | D::Int16 => SqlType::Int2,
        D::Double(_) | D::DoublePrecision | D::Float8 | D::Float64 => SqlType::Float8,
        D::Real | D::Float4 | D::Float32 => SqlType::Float4,
        D::Float(_) => SqlType::Float8,
        D::Boolean | D::Bool => SqlType::Bool,
        D::Bytea => SqlType::Bytea,
        D::Custom(name, _) if name.to_string().eq_ignore_ascii_case("name") => SqlType::Text,
        other => {
            return Err(SqlError::new(
                SqlState::UndefinedObject,
                format!("type {other} is not supported; use TEXT, BIGINT, INTEGER, SMALLINT, DOUBLE PRECISION, REAL, BOOLEAN or BYTEA"),
            ))
        }
    })
}

/// One SQL value. Integers of every width travel as `Int`, floats as `Float`; the
/// column's `SqlType` says how to put them on the wire.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Datum {
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    Bytes(Vec<u8>),
}

/// A column of a result.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputColumn {
    pub name: String,
    pub ty: SqlType,
    /// The table column the values come straight from, for RowDescription; `None` for
    /// a computed column.
    pub origin: Option<ColumnOrigin>,
}

/// A result column's base table column as PostgreSQL identifies it: the table's
/// `pg_class.oid` and the column's `pg_attribute.attnum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnOrigin {
    pub table_oid: u32,
    pub attnum: i16,
}

/// Rows of a result, produced lazily page by page.
pub type RowStream = BoxStream<'static, SqlResult<Vec<Datum>>>;

/// What executing one statement gives the client.
pub enum StatementResult {
    /// A row set (SELECT, SHOW, RETURNING ...).
    Query {
        columns: Arc<Vec<OutputColumn>>,
        rows: RowStream,
    },
    /// An INSERT, UPDATE or DELETE with RETURNING: its rows, then the command's own
    /// tag (`DELETE 2`), not SELECT's.
    Returning {
        columns: Arc<Vec<OutputColumn>>,
        rows: RowStream,
        tag: String,
    },
    /// A command tag such as `INSERT 0 3`, `UPDATE 1`, `CREATE TABLE`.
    Command { tag: String },
    /// `COPY ... FROM STDIN`: the server sends CopyInResponse and feeds the client's
    /// CopyData into the sink; CopyDone finishes it and gives the command tag.
    CopyIn {
        columns: usize,
        sink: Box<dyn CopySink>,
    },
    /// `COPY ... TO STDOUT`: the rows, which the server formats as CopyData lines in
    /// `format`, then the tag `COPY <rows>`.
    CopyOut {
        columns: Arc<Vec<OutputColumn>>,
        format: CopyFormat,
        rows: RowStream,
    },
}

impl StatementResult {
    /// A result that is only a command tag.
    pub fn command(tag: impl Into<String>) -> Self {
        StatementResult::Command { tag: tag.into() }
    }
}

/// The text or CSV format of a COPY (PostgreSQL's options and defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyFormat {
    pub csv: bool,
    pub delimiter: u8,
    /// How NULL is written: `\N` in text, the empty string in CSV.
    pub null: String,
    pub header: bool,
    pub quote: u8,
    pub escape: u8,
}

impl CopyFormat {
    pub fn text() -> Self {
        CopyFormat {
            csv: false,
            delimiter: b'\t',
            null: "\\N".into(),
            header: false,
            quote: b'"',
            escape: b'"',
        }
    }

    pub fn csv() -> Self {
        CopyFormat {
            csv: true,
            delimiter: b',',
            null: String::new(),
            ..CopyFormat::text()
        }
    }
}

/// Receives the data of a `COPY ... FROM STDIN`.
#[async_trait::async_trait]
pub trait CopySink: Send {
    /// One CopyData message's bytes (lines may span messages).
    async fn data(&mut self, chunk: &[u8]) -> SqlResult<()>;
    /// CopyDone: applies what is left and returns the command tag (`COPY <rows>`).
    async fn finish(self: Box<Self>) -> SqlResult<String>;
    /// CopyFail or an error: undoes whatever the COPY already wrote.
    async fn abort(self: Box<Self>);
}

/// The transaction state reported in ReadyForQuery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionStatus {
    Idle,
    InTransaction,
    Failed,
}
