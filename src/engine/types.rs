//! The values of the Table Store model: primary-key values, attribute values, cells, rows.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::cmp::Ordering;

/// The type of a primary-key column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PkType {
    String,
    Integer,
    Binary,
}

/// The type of an attribute value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ValueType {
    String,
    Integer,
    Double,
    Boolean,
    Binary,
}

impl ValueType {
    pub fn name(self) -> &'static str {
        match self {
            ValueType::String => "String",
            ValueType::Integer => "Integer",
            ValueType::Double => "Double",
            ValueType::Boolean => "Boolean",
            ValueType::Binary => "Binary",
        }
    }
}

impl PkType {
    /// The attribute value type holding the same values.
    pub fn value_type(self) -> ValueType {
        match self {
            PkType::String => ValueType::String,
            PkType::Integer => ValueType::Integer,
            PkType::Binary => ValueType::Binary,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PkType::String => "String",
            PkType::Integer => "Integer",
            PkType::Binary => "Binary",
        }
    }
}

/// A primary-key column value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PkValue {
    Integer(i64),
    String(String),
    Binary(Vec<u8>),
}

impl PkValue {
    pub fn pk_type(&self) -> PkType {
        match self {
            PkValue::Integer(_) => PkType::Integer,
            PkValue::String(_) => PkType::String,
            PkValue::Binary(_) => PkType::Binary,
        }
    }

    /// Bytes counted for capacity units and the 1 KB limit.
    pub fn size(&self) -> usize {
        match self {
            PkValue::Integer(_) => 8,
            PkValue::String(s) => s.len(),
            PkValue::Binary(b) => b.len(),
        }
    }
}

impl std::fmt::Display for PkValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        PkRef::from(self).fmt(f)
    }
}

/// A primary-key column value borrowed from where it is stored: a key the backend lends,
/// or a [`PkValue`]. A String or Binary value holding a zero byte is stored escaped and
/// so is owned once decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PkRef<'a> {
    Integer(i64),
    String(Cow<'a, str>),
    Binary(Cow<'a, [u8]>),
}

impl PkRef<'_> {
    pub fn to_value(&self) -> PkValue {
        match self {
            PkRef::Integer(i) => PkValue::Integer(*i),
            PkRef::String(s) => PkValue::String(s.clone().into_owned()),
            PkRef::Binary(b) => PkValue::Binary(b.clone().into_owned()),
        }
    }

    pub fn into_value(self) -> PkValue {
        match self {
            PkRef::Integer(i) => PkValue::Integer(i),
            PkRef::String(s) => PkValue::String(s.into_owned()),
            PkRef::Binary(b) => PkValue::Binary(b.into_owned()),
        }
    }

    /// Bytes counted for capacity units (see [`PkValue::size`]).
    pub fn size(&self) -> usize {
        match self {
            PkRef::Integer(_) => 8,
            PkRef::String(s) => s.len(),
            PkRef::Binary(b) => b.len(),
        }
    }
}

impl<'a> From<&'a PkValue> for PkRef<'a> {
    fn from(value: &'a PkValue) -> Self {
        match value {
            PkValue::Integer(i) => PkRef::Integer(*i),
            PkValue::String(s) => PkRef::String(Cow::Borrowed(s)),
            PkValue::Binary(b) => PkRef::Binary(Cow::Borrowed(b)),
        }
    }
}

impl std::fmt::Display for PkRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PkRef::Integer(i) => write!(f, "{i}"),
            PkRef::String(s) => write!(f, "'{s}'"),
            PkRef::Binary(b) => write!(f, "0x{}", hex(b)),
        }
    }
}

/// A full primary key, one value per PK column in declared order.
pub type PrimaryKey = Vec<PkValue>;

/// One end of a GetRange: a value, or the smallest/largest possible value of a column.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PkBound {
    InfMin,
    Value(PkValue),
    InfMax,
}

/// An attribute value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Value {
    String(String),
    Integer(i64),
    Double(f64),
    Boolean(bool),
    Binary(Vec<u8>),
}

impl Value {
    pub fn value_type(&self) -> ValueType {
        self.as_ref().value_type()
    }

    /// Bytes counted for capacity units and the 2 MB limit.
    pub fn size(&self) -> usize {
        self.as_ref().size()
    }

    pub fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Value::String(s) => ValueRef::String(s),
            Value::Integer(i) => ValueRef::Integer(*i),
            Value::Double(d) => ValueRef::Double(*d),
            Value::Boolean(b) => ValueRef::Boolean(*b),
            Value::Binary(b) => ValueRef::Binary(b),
        }
    }

    /// Compares two values of comparable types: same type, or Integer with Double
    /// (numerically). `None` when the types cannot be compared.
    pub fn compare(&self, other: &Value) -> Option<Ordering> {
        match (self, other) {
            (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
            (Value::Integer(a), Value::Integer(b)) => Some(a.cmp(b)),
            (Value::Double(a), Value::Double(b)) => a.partial_cmp(b),
            (Value::Integer(a), Value::Double(b)) => (*a as f64).partial_cmp(b),
            (Value::Double(a), Value::Integer(b)) => a.partial_cmp(&(*b as f64)),
            (Value::Boolean(a), Value::Boolean(b)) => Some(a.cmp(b)),
            (Value::Binary(a), Value::Binary(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_ref().fmt(f)
    }
}

impl std::fmt::Display for ValueRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValueRef::String(s) => write!(f, "{s}"),
            ValueRef::Integer(i) => write!(f, "{i}"),
            ValueRef::Double(d) => write!(f, "{d}"),
            ValueRef::Boolean(b) => write!(f, "{b}"),
            ValueRef::Binary(b) => write!(f, "\\x{}", hex(b)),
        }
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// An attribute value borrowed from where it is stored: a row value the backend lends
/// (see [`RowView`](super::RowView)), or a [`Value`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueRef<'a> {
    String(&'a str),
    Integer(i64),
    Double(f64),
    Boolean(bool),
    Binary(&'a [u8]),
}

impl ValueRef<'_> {
    pub fn value_type(self) -> ValueType {
        match self {
            ValueRef::String(_) => ValueType::String,
            ValueRef::Integer(_) => ValueType::Integer,
            ValueRef::Double(_) => ValueType::Double,
            ValueRef::Boolean(_) => ValueType::Boolean,
            ValueRef::Binary(_) => ValueType::Binary,
        }
    }

    /// Bytes counted for capacity units (see [`Value::size`]).
    pub fn size(self) -> usize {
        match self {
            ValueRef::String(s) => s.len(),
            ValueRef::Binary(b) => b.len(),
            ValueRef::Integer(_) | ValueRef::Double(_) => 8,
            ValueRef::Boolean(_) => 1,
        }
    }

    pub fn to_value(self) -> Value {
        match self {
            ValueRef::String(s) => Value::String(s.to_owned()),
            ValueRef::Integer(i) => Value::Integer(i),
            ValueRef::Double(d) => Value::Double(d),
            ValueRef::Boolean(b) => Value::Boolean(b),
            ValueRef::Binary(b) => Value::Binary(b.to_vec()),
        }
    }
}

/// One version of one attribute cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub column: String,
    /// Milliseconds since the Unix epoch.
    pub version: i64,
    pub value: Value,
}

/// A row as read: its primary key and its visible cells, ordered by column name and,
/// within a column, newest version first.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub pk: PrimaryKey,
    pub cells: Vec<Cell>,
}

impl Row {
    /// The newest visible version of `column`.
    pub fn latest(&self, column: &str) -> Option<&Cell> {
        self.cells.iter().find(|c| c.column == column)
    }

    /// Bytes of the row as counted for read capacity units: PK values plus, for every
    /// returned cell, its column name and value.
    pub fn size(&self) -> usize {
        self.pk.iter().map(PkValue::size).sum::<usize>()
            + self
                .cells
                .iter()
                .map(|c| c.column.len() + c.value.size())
                .sum::<usize>()
    }
}

/// A double rounded to the nearest `f32` (SQL `real`) and widened back. `Err(true)` when
/// a finite value is past a real's range (overflow), `Err(false)` when a non-zero value
/// is nearer zero than any real (underflow); infinities and NaN pass.
pub fn single_precision(value: f64) -> Result<f64, bool> {
    let single = value as f32;
    if value.is_finite() && single.is_infinite() {
        return Err(true);
    }
    if value != 0.0 && single == 0.0 {
        return Err(false);
    }
    Ok(f64::from(single))
}

/// A SQL type a column was declared with that one of the engine's value types holds:
/// `TIMESTAMP`, `TIMESTAMPTZ` and `DATE` as an Integer (microseconds or days since
/// 1970-01-01), `UUID` as a 16-byte Binary, so stored keys sort as the values do. The
/// engine stores the value type; the SQL layer reads and writes it as the SQL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SqlKind {
    Timestamp,
    TimestampTz,
    Date,
    Uuid,
    /// `NUMERIC(precision, scale)`, stored as its String text (`1.50`).
    Numeric {
        precision: u8,
        scale: u8,
    },
    /// `json`, stored as its String input text.
    Json,
    /// `jsonb`, stored as its String normal form.
    Jsonb,
    /// `time`, stored as an Integer: microseconds since midnight.
    Time,
    /// `interval`, stored as a 16-byte Binary: `interval_send`'s microseconds, days
    /// and months.
    Interval,
    /// A one-dimensional array, stored as its String text (`{1,2,NULL}`); `element` is
    /// the element type's PostgreSQL OID.
    Array {
        element: u32,
    },
    /// A value of an enum type (`CREATE TYPE ... AS ENUM`), stored as its label's
    /// String; `type_id` is the type's catalog id (`EnumTypeMeta`).
    Enum {
        type_id: u32,
    },
}

/// What a column's declared SQL type says beyond its stored value type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Declared {
    /// An integer narrower than 64 bits.
    pub width: Option<IntegerWidth>,
    /// A REAL: values rounded to the nearest `f32`.
    pub single_precision: bool,
    /// A `VARCHAR(n)`'s limit, in characters.
    pub max_chars: Option<u32>,
    /// Declared `VARCHAR` (with a limit or without): text shown as `character varying`.
    pub varchar: bool,
    pub kind: Option<SqlKind>,
    /// `NOT NULL`: every row has a value in the column.
    pub not_null: bool,
    /// A `TIMESTAMP(p)`'s digits of a second below 6: written values are rounded to
    /// them.
    pub time_precision: Option<u8>,
}

/// A microsecond timestamp rounded to `digits` digits of a second, half away from zero
/// as PostgreSQL rounds to a `timestamp(p)`; ±infinity (the extreme integers) stay.
pub fn round_timestamp(micros: i64, digits: u8) -> i64 {
    if micros == i64::MAX || micros == i64::MIN || digits >= 6 {
        return micros;
    }
    let unit = 10i64.pow(u32::from(6 - digits));
    let half = unit / 2;
    let rounded = if micros >= 0 {
        micros.saturating_add(half) / unit
    } else {
        -(micros.saturating_neg().saturating_add(half) / unit)
    };
    rounded.saturating_mul(unit)
}

/// A narrower integer type than Table Store's 64-bit Integer that a column was declared
/// with (SQL `SMALLINT` or `INTEGER`): a write of a value outside its range is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IntegerWidth {
    Int16,
    Int32,
}

impl IntegerWidth {
    pub fn holds(self, value: i64) -> bool {
        match self {
            IntegerWidth::Int16 => i16::try_from(value).is_ok(),
            IntegerWidth::Int32 => i32::try_from(value).is_ok(),
        }
    }

    /// The SQL name of the type, for messages.
    pub fn sql_name(self) -> &'static str {
        match self {
            IntegerWidth::Int16 => "smallint",
            IntegerWidth::Int32 => "integer",
        }
    }
}
