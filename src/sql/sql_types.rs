//! The values, types and results the SQL layer hands to the wire server. The server only
//! encodes these; it knows nothing of tables or the engine.

use super::pg_numeric::NumericTypmod;
pub use super::sql_error::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use bigdecimal::BigDecimal;
use futures::stream::BoxStream;
use sqlparser::ast::{self, DataType};
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
    /// `name`, the catalogs' identifier type: a `Datum::Text` like `text`, told apart
    /// only in result descriptions (drivers treat `name[]` differently from `text[]`).
    Name,
    Bytea,
    /// `timestamp` (without time zone), a `Datum::Timestamp`.
    Timestamp,
    /// `timestamptz`, a `Datum::TimestampTz`.
    TimestampTz,
    /// `date`, a `Datum::Date`.
    Date,
    /// `uuid`, a `Datum::Uuid`.
    Uuid,
    /// `numeric`, a `Datum::Numeric`; a column's `NUMERIC(p,s)` carries its typmod.
    Numeric(Option<NumericTypmod>),
    /// A one-dimensional array (`bigint[]`, `text[]`), a `Datum::Array`.
    Array(ArrayOf),
    /// `json`, a `Datum::Text` holding the value's input text (`pg_json`).
    Json,
    /// `jsonb`, a `Datum::Text` holding the value's normal form (`pg_json`).
    Jsonb,
    /// `time` (without time zone), a `Datum::Time`.
    Time,
    /// `interval`, a `Datum::Interval`.
    Interval,
    /// A value of an enum type (`CREATE TYPE ... AS ENUM`), a `Datum::Text` holding its
    /// label; the type's OID (`SqlType::enum_oid`).
    Enum(u32),
    /// `oid`, the catalogs' object identifier: a `Datum::Int` like `bigint`, told apart
    /// in result descriptions (clients load an `oid` as a number and some load a
    /// `bigint` as text) and sent in binary as 4 bytes. Only query results have it:
    /// catalog columns, and `::oid` casts.
    Oid,
}

/// The element type of an array type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArrayOf {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Text,
    Name,
    Bytea,
    Date,
    Timestamp,
    TimestampTz,
    Uuid,
}

impl ArrayOf {
    /// The element type.
    pub fn element(self) -> SqlType {
        match self {
            ArrayOf::Bool => SqlType::Bool,
            ArrayOf::Int2 => SqlType::Int2,
            ArrayOf::Int4 => SqlType::Int4,
            ArrayOf::Int8 => SqlType::Int8,
            ArrayOf::Float4 => SqlType::Float4,
            ArrayOf::Float8 => SqlType::Float8,
            ArrayOf::Text => SqlType::Text,
            ArrayOf::Name => SqlType::Name,
            ArrayOf::Bytea => SqlType::Bytea,
            ArrayOf::Date => SqlType::Date,
            ArrayOf::Timestamp => SqlType::Timestamp,
            ArrayOf::TimestampTz => SqlType::TimestampTz,
            ArrayOf::Uuid => SqlType::Uuid,
        }
    }

    /// The array type of `element`, if it is a scalar type.
    pub fn of(element: SqlType) -> Option<ArrayOf> {
        Some(match element {
            SqlType::Bool => ArrayOf::Bool,
            SqlType::Int2 => ArrayOf::Int2,
            SqlType::Int4 => ArrayOf::Int4,
            SqlType::Int8 => ArrayOf::Int8,
            SqlType::Float4 => ArrayOf::Float4,
            SqlType::Float8 => ArrayOf::Float8,
            SqlType::Text => ArrayOf::Text,
            SqlType::Name => ArrayOf::Name,
            SqlType::Bytea => ArrayOf::Bytea,
            SqlType::Date => ArrayOf::Date,
            SqlType::Timestamp => ArrayOf::Timestamp,
            SqlType::TimestampTz => ArrayOf::TimestampTz,
            SqlType::Uuid => ArrayOf::Uuid,
            SqlType::Numeric(_)
            | SqlType::Json
            | SqlType::Jsonb
            | SqlType::Time
            | SqlType::Interval
            | SqlType::Enum(_)
            | SqlType::Oid
            | SqlType::Array(_) => return None,
        })
    }
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
            SqlType::Name => 19,
            SqlType::Float4 => 700,
            SqlType::Float8 => 701,
            SqlType::Date => 1082,
            SqlType::Timestamp => 1114,
            SqlType::TimestampTz => 1184,
            SqlType::Uuid => 2950,
            SqlType::Numeric(_) => 1700,
            SqlType::Json => 114,
            SqlType::Jsonb => 3802,
            SqlType::Time => 1083,
            SqlType::Interval => 1186,
            SqlType::Enum(oid) => oid,
            SqlType::Oid => 26,
            SqlType::Array(of) => match of {
                ArrayOf::Bool => 1000,
                ArrayOf::Bytea => 1001,
                ArrayOf::Int2 => 1005,
                ArrayOf::Int4 => 1007,
                ArrayOf::Text => 1009,
                ArrayOf::Name => 1003,
                ArrayOf::Int8 => 1016,
                ArrayOf::Float4 => 1021,
                ArrayOf::Float8 => 1022,
                ArrayOf::Date => 1182,
                ArrayOf::Timestamp => 1115,
                ArrayOf::TimestampTz => 1185,
                ArrayOf::Uuid => 2951,
            },
        }
    }

    /// The type with this OID, if pgwide supports it (VARCHAR and unknown map to TEXT,
    /// their arrays to `text[]`).
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
            1082 => SqlType::Date,
            1114 => SqlType::Timestamp,
            1184 => SqlType::TimestampTz,
            2950 => SqlType::Uuid,
            1700 => SqlType::Numeric(None),
            114 => SqlType::Json,
            3802 => SqlType::Jsonb,
            1083 => SqlType::Time,
            1186 => SqlType::Interval,
            1000 => SqlType::Array(ArrayOf::Bool),
            1001 => SqlType::Array(ArrayOf::Bytea),
            1005 => SqlType::Array(ArrayOf::Int2),
            1007 => SqlType::Array(ArrayOf::Int4),
            1009 | 1015 | 1003 | 1014 => SqlType::Array(ArrayOf::Text),
            1016 => SqlType::Array(ArrayOf::Int8),
            1021 => SqlType::Array(ArrayOf::Float4),
            1022 => SqlType::Array(ArrayOf::Float8),
            1182 => SqlType::Array(ArrayOf::Date),
            1115 => SqlType::Array(ArrayOf::Timestamp),
            1185 => SqlType::Array(ArrayOf::TimestampTz),
            2951 => SqlType::Array(ArrayOf::Uuid),
            _ => return None,
        })
    }

    /// The type of the enum type with catalog id `type_id`: its OID derives from the id
    /// as a table's or sequence's does (`16384 + 2 * id`), so it never meets theirs; the
    /// next OID is its array type's.
    pub fn enum_of(type_id: u32) -> SqlType {
        SqlType::Enum(16_384u32.saturating_add(type_id.saturating_mul(2)))
    }

    /// The catalog id of the enum type this is, if it is one.
    pub fn enum_type_id(self) -> Option<u32> {
        match self {
            SqlType::Enum(oid) => oid.checked_sub(16_384).map(|n| n / 2),
            _ => None,
        }
    }

    /// An integer type's width rank (smallint 1, integer 2, bigint 3): where integers of
    /// two types meet, the wider one is the result's, as PostgreSQL resolves them.
    pub fn integer_rank(self) -> Option<u8> {
        match self {
            SqlType::Int2 => Some(1),
            SqlType::Int4 => Some(2),
            SqlType::Int8 => Some(3),
            _ => None,
        }
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
            SqlType::Name => "name",
            SqlType::Float4 => "real",
            SqlType::Float8 => "double precision",
            SqlType::Date => "date",
            SqlType::Timestamp => "timestamp without time zone",
            SqlType::TimestampTz => "timestamp with time zone",
            SqlType::Uuid => "uuid",
            SqlType::Numeric(_) => "numeric",
            SqlType::Json => "json",
            SqlType::Jsonb => "jsonb",
            SqlType::Time => "time without time zone",
            SqlType::Interval => "interval",
            // Its own name is in the catalog (`format_type` prints it).
            SqlType::Enum(_) => "enum",
            SqlType::Oid => "oid",
            SqlType::Array(of) => match of {
                ArrayOf::Bool => "boolean[]",
                ArrayOf::Bytea => "bytea[]",
                ArrayOf::Int2 => "smallint[]",
                ArrayOf::Int4 => "integer[]",
                ArrayOf::Text => "text[]",
                ArrayOf::Name => "name[]",
                ArrayOf::Int8 => "bigint[]",
                ArrayOf::Float4 => "real[]",
                ArrayOf::Float8 => "double precision[]",
                ArrayOf::Date => "date[]",
                ArrayOf::Timestamp => "timestamp without time zone[]",
                ArrayOf::TimestampTz => "timestamp with time zone[]",
                ArrayOf::Uuid => "uuid[]",
            },
        }
    }

    /// Whether the type is a date or time.
    pub fn is_temporal(self) -> bool {
        matches!(
            self,
            SqlType::Timestamp | SqlType::TimestampTz | SqlType::Date
        )
    }

    /// Whether the type's values compare only with their own kind and have no text or
    /// number form the fast path may compute with: dates, times, uuids, numerics,
    /// JSON and arrays.
    pub fn is_distinct_kind(self) -> bool {
        self.is_temporal()
            || matches!(
                self,
                SqlType::Uuid
                    | SqlType::Numeric(_)
                    | SqlType::Json
                    | SqlType::Jsonb
                    | SqlType::Time
                    | SqlType::Interval
                    | SqlType::Array(_)
            )
    }

    /// The JSON type this is, if it is one.
    pub fn json_kind(self) -> Option<super::pg_json::JsonKind> {
        match self {
            SqlType::Json => Some(super::pg_json::JsonKind::Json),
            SqlType::Jsonb => Some(super::pg_json::JsonKind::Jsonb),
            _ => None,
        }
    }
}

/// The SQL type a declared type maps to.
pub fn sql_type(data_type: &DataType) -> SqlResult<SqlType> {
    use DataType as D;
    if let D::Timestamp(Some(p), _) = data_type {
        // A column keeps its precision (`ddl::time_precision`); a cast's rounding is
        // not done yet, and truncating instead would be wrong.
        if *p < 6 {
            return Err(SqlError::unsupported(format!(
                "a cast to {data_type} is not supported yet (columns of that type are)"
            )));
        }
    }
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
        D::Date => SqlType::Date,
        D::Uuid => SqlType::Uuid,
        D::JSON => SqlType::Json,
        D::JSONB => SqlType::Jsonb,
        D::Time(None, ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone) => SqlType::Time,
        D::Interval {
            fields: None,
            precision: None,
        } => SqlType::Interval,
        D::Array(ast::ArrayElemTypeDef::SquareBracket(element, None)) => {
            let element = sql_type(element)?;
            match ArrayOf::of(element) {
                Some(of) => SqlType::Array(of),
                None => {
                    return Err(SqlError::unsupported(format!(
                        "arrays of {} are not supported yet",
                        element.name()
                    )))
                }
            }
        }
        D::Numeric(info) | D::Decimal(info) | D::Dec(info) => SqlType::Numeric(numeric_typmod(info)?),
        // A precision (`TIMESTAMP(3)`) is kept by the column (`ddl::time_precision`).
        D::Timestamp(_, ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone) => {
            SqlType::Timestamp
        }
        D::Timestamp(_, ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz) => {
            SqlType::TimestampTz
        }
        D::Custom(name, _) if name.to_string().eq_ignore_ascii_case("name") => SqlType::Text,
        other => {
            return Err(SqlError::new(
                SqlState::UndefinedObject,
                format!("type {other} is not supported; use TEXT, BIGINT, INTEGER, SMALLINT, DOUBLE PRECISION, REAL, BOOLEAN, BYTEA, TIMESTAMP, TIMESTAMPTZ, DATE, TIME, INTERVAL, UUID, NUMERIC, JSON or JSONB"),
            ))
        }
    })
}

/// The typmod of `NUMERIC`, `NUMERIC(p)` or `NUMERIC(p,s)`.
fn numeric_typmod(info: &ast::ExactNumberInfo) -> SqlResult<Option<NumericTypmod>> {
    Ok(match info {
        ast::ExactNumberInfo::None => None,
        ast::ExactNumberInfo::Precision(p) => Some(NumericTypmod::new(*p, None)?),
        ast::ExactNumberInfo::PrecisionAndScale(p, s) => {
            let scale = u64::try_from(*s).map_err(|_| {
                SqlError::unsupported(format!("NUMERIC({p},{s}): a negative scale"))
            })?;
            Some(NumericTypmod::new(*p, Some(scale))?)
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
    /// A `timestamp`: microseconds since 1970-01-01 00:00 on a clock of no zone,
    /// `i64::MAX`/`MIN` for ±infinity (see `datetime`).
    Timestamp(i64),
    /// A `timestamptz`: an instant, microseconds since 1970-01-01 00:00 UTC, ±infinity as
    /// for `Timestamp`. The kinds are apart because converting between them, or to a
    /// date, takes the session's `TimeZone`.
    TimestampTz(i64),
    /// A `date`: days since 1970-01-01, `i32::MAX`/`MIN` for ±infinity.
    Date(i32),
    /// A `uuid`'s 16 bytes.
    Uuid([u8; 16]),
    /// A `numeric`, with the scale it was written or computed with.
    Numeric(BigDecimal),
    /// A one-dimensional array's elements, each a datum of its element type.
    Array(Vec<Datum>),
    /// A `time`: microseconds since midnight.
    Time(i64),
    /// An `interval`.
    Interval(super::pg_interval::Interval),
}

impl Datum {
    /// A date, time, uuid or interval: a value of a kind of its own, which only a
    /// column declared with its type stores (as an Integer or Binary only that type
    /// reads back), and which becomes another type only by a cast of its own.
    pub fn is_own_kind(&self) -> bool {
        matches!(
            self,
            Datum::Timestamp(_)
                | Datum::TimestampTz(_)
                | Datum::Date(_)
                | Datum::Uuid(_)
                | Datum::Time(_)
                | Datum::Interval(_)
        )
    }
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

impl OutputColumn {
    /// The type OID and type modifier RowDescription gives the column: a table column
    /// declared `VARCHAR` is `character varying` (pgwide keeps it as text), a table
    /// column's `NUMERIC(p,s)` or `VARCHAR(n)` carries its `atttypmod`.
    pub fn described_type(&self) -> (u32, i32) {
        const VARCHAR_OID: u32 = 1043;
        let varchar = self
            .origin
            .and_then(|o| o.varchar_typmod)
            .filter(|_| self.ty == SqlType::Text);
        let oid = varchar.map_or(self.ty.oid(), |_| VARCHAR_OID);
        let typmod = match (self.ty, self.origin, varchar) {
            (_, _, Some(typmod)) => typmod,
            (SqlType::Numeric(Some(typmod)), Some(_), _) => typmod.atttypmod(),
            _ => -1,
        };
        (oid, typmod)
    }
}

/// A result column's base table column as PostgreSQL identifies it: the table's
/// `pg_class.oid` and the column's `pg_attribute.attnum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnOrigin {
    pub table_oid: u32,
    pub attnum: i16,
    /// The column is declared `VARCHAR`: its `atttypmod` (the limit plus 4, or -1), as
    /// RowDescription reports it with the type `character varying`.
    pub varchar_typmod: Option<i32>,
}

impl ColumnOrigin {
    /// The origin of `table`'s column `column`, the `attnum`th visible one.
    pub fn of(
        table: &crate::engine::TableMeta,
        table_oid: i64,
        column: &str,
        attnum: i64,
    ) -> Option<Self> {
        let varchar_typmod = table.is_varchar(column).then(|| {
            table.max_chars(column).map_or(-1, |limit| {
                i32::try_from(limit).map_or(-1, |l| l.saturating_add(4))
            })
        });
        Some(ColumnOrigin {
            table_oid: u32::try_from(table_oid).ok()?,
            attnum: i16::try_from(attnum).ok()?,
            varchar_typmod,
        })
    }
}

impl ColumnOrigin {
    /// A result column computed as `CAST(x AS VARCHAR[(n)])` is `character varying`
    /// with the length's typmod, as PostgreSQL describes it, though pgwide computes it as
    /// text (cut to the length, see `char_casts`).
    pub fn of_varchar_cast(expr: &ast::Expr) -> Option<Self> {
        let ast::Expr::Cast { data_type, .. } = expr else {
            return None;
        };
        let length = match data_type {
            ast::DataType::Varchar(length) | ast::DataType::CharacterVarying(length) => length,
            _ => return None,
        };
        let typmod = match length {
            None => -1,
            Some(ast::CharacterLength::IntegerLength { length, .. }) => {
                i32::try_from(*length).map_or(-1, |l| l.saturating_add(4))
            }
            Some(ast::CharacterLength::Max) => return None,
        };
        Some(ColumnOrigin {
            table_oid: 0,
            attnum: 0,
            varchar_typmod: Some(typmod),
        })
    }
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
