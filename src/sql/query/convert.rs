//! Type mapping between SQL datums and Arrow: engine rows into RecordBatches for the
//! scan, RecordBatches into wire rows for the client, and parameters into scalars.
//! Arrow types pgwide's `SqlType` lacks (dates, timestamps, decimals, lists) are sent
//! as text in PostgreSQL's format where it differs from Arrow's.

use crate::sql::datetime;
use crate::sql::pg_interval::Interval;
use crate::sql::pg_numeric::{self, NumericTypmod};
use crate::sql::session_zone;
use crate::sql::sql_types::{ArrayOf, Datum, OutputColumn, SqlError, SqlResult, SqlType};
use crate::sqlstate::SqlState;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryBuilder, BooleanBuilder, Date32Array, Decimal128Array,
    FixedSizeBinaryBuilder, Float32Array, Float64Builder, Int16Array, Int32Array, Int64Builder,
    IntervalMonthDayNanoArray, LargeBinaryBuilder, LargeStringBuilder, StringBuilder,
    Time64MicrosecondArray, TimestampMicrosecondArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Decimal256Type, DurationMicrosecondType, Float64Type,
    Int64Type, IntervalMonthDayNano, IntervalMonthDayNanoType, IntervalUnit, SchemaRef,
    Time64MicrosecondType, TimeUnit, TimestampMicrosecondType,
};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::common::ScalarValue;
use std::sync::Arc;

/// The zone of a `timestamptz` column: UTC, the session zone DataFusion is given.
pub const UTC: &str = "+00:00";

/// The Arrow type a SQL type is planned as.
pub fn arrow_type(ty: SqlType) -> DataType {
    match ty {
        SqlType::Bool => DataType::Boolean,
        SqlType::Int2 => DataType::Int16,
        SqlType::Int4 => DataType::Int32,
        SqlType::Int8 => DataType::Int64,
        // Unsigned 32-bit integers are planned as nothing else, so an OID column keeps
        // its type through joins, UNION and CASE.
        SqlType::Oid => DataType::UInt32,
        SqlType::Float4 => DataType::Float32,
        SqlType::Float8 => DataType::Float64,
        SqlType::Text => DataType::Utf8,
        // The catalogs' `name` columns are string views, a string type nothing else is
        // planned as, so `array_agg(attname)` stays `name[]` as in PostgreSQL.
        SqlType::Name => DataType::Utf8View,
        SqlType::Bytea => DataType::Binary,
        SqlType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
        SqlType::TimestampTz => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
        SqlType::Date => DataType::Date32,
        SqlType::Uuid => DataType::FixedSizeBinary(16),
        SqlType::Numeric(Some(typmod)) => {
            DataType::Decimal128(typmod.precision, typmod.scale as i8)
        }
        // DataFusion's own `numeric` without a typmod.
        SqlType::Numeric(None) => DataType::Decimal128(38, 10),
        SqlType::Array(of) => DataType::List(Arc::new(
            datafusion::arrow::datatypes::Field::new_list_field(arrow_type(of.element()), true),
        )),
        // JSON is text, in string types of its own that nothing else is planned as, so
        // a value keeps its type through CASE, COALESCE and UNION (`pg_json_plan`).
        SqlType::Jsonb => JSONB,
        SqlType::Json => JSON,
        SqlType::Time => DataType::Time64(TimeUnit::Microsecond),
        SqlType::Interval => DataType::Interval(IntervalUnit::MonthDayNano),
        // Text, its field marked with the type (`pg_enum_plan`).
        SqlType::Enum(_) => DataType::Utf8,
    }
}

/// The Arrow type of a `jsonb` value: its normal form's text.
pub const JSONB: DataType = DataType::LargeUtf8;
/// The Arrow type of a `json` value: its input text's bytes.
pub const JSON: DataType = DataType::LargeBinary;

/// The wire type of an Arrow column; anything without its own SQL type is text.
pub fn sql_type(ty: &DataType) -> SqlType {
    match ty {
        DataType::Boolean => SqlType::Bool,
        DataType::Int8 | DataType::Int16 | DataType::UInt8 => SqlType::Int2,
        DataType::Int32 | DataType::UInt16 => SqlType::Int4,
        DataType::UInt32 => SqlType::Oid,
        DataType::Int64 | DataType::UInt64 => SqlType::Int8,
        DataType::Float16 | DataType::Float32 => SqlType::Float4,
        DataType::Float64 => SqlType::Float8,
        DataType::Timestamp(_, None) => SqlType::Timestamp,
        DataType::Timestamp(_, Some(_)) => SqlType::TimestampTz,
        DataType::Date32 | DataType::Date64 => SqlType::Date,
        DataType::Decimal128(precision, scale) => SqlType::Numeric(
            u8::try_from(*scale)
                .ok()
                .map(|scale| NumericTypmod {
                    precision: *precision,
                    scale,
                })
                .filter(|t| t.precision <= pg_numeric::MAX_PRECISION && t.scale <= t.precision),
        ),
        DataType::Decimal256(..) => SqlType::Numeric(None),
        DataType::LargeUtf8 => SqlType::Jsonb,
        DataType::Utf8View => SqlType::Name,
        DataType::Time32(_) | DataType::Time64(_) => SqlType::Time,
        // `timestamp - timestamp` is Arrow's duration; PostgreSQL's, an interval.
        DataType::Interval(_) | DataType::Duration(_) => SqlType::Interval,
        DataType::LargeBinary => SqlType::Json,
        // uuid columns and `gen_random_uuid()`.
        DataType::FixedSizeBinary(16) => SqlType::Uuid,
        DataType::Binary | DataType::BinaryView | DataType::FixedSizeBinary(_) => SqlType::Bytea,
        // Lists are arrays of their element's type, so clients parse them into arrays
        // (SQLAlchemy's `array_agg(attname)`); lists of lists travel as text.
        DataType::List(item) => ArrayOf::of(sql_type(item.data_type()))
            .map(SqlType::Array)
            .unwrap_or(SqlType::Text),
        _ => SqlType::Text,
    }
}

/// A bound parameter as a scalar of the type DataFusion inferred for it.
pub fn datum_to_scalar(datum: &Datum, ty: &DataType) -> SqlResult<ScalarValue> {
    let natural = match datum {
        Datum::Null => return ScalarValue::try_from(ty).or(Ok(ScalarValue::Null)),
        Datum::Bool(b) => ScalarValue::Boolean(Some(*b)),
        Datum::Int(i) => ScalarValue::Int64(Some(*i)),
        Datum::Float(f) => ScalarValue::Float64(Some(*f)),
        // Text bound where the plan wants a time or interval is read as PostgreSQL reads
        // one, not as Arrow's cast would.
        Datum::Text(t) if matches!(ty, DataType::Interval(_)) => {
            interval_scalar(&crate::sql::pg_interval::parse(t)?)
                .cast_to(ty)
                .map_err(|_| {
                    SqlError::new(
                        SqlState::InvalidDatetimeFormat,
                        "an interval of another unit",
                    )
                })?
        }
        Datum::Text(t) if matches!(ty, DataType::Time64(TimeUnit::Microsecond)) => {
            ScalarValue::Time64Microsecond(Some(crate::sql::pg_interval::parse_time(t)?))
        }
        Datum::Text(t) => ScalarValue::Utf8(Some(t.clone())),
        Datum::Bytes(b) => ScalarValue::Binary(Some(b.clone())),
        Datum::Timestamp(_) | Datum::TimestampTz(_) => match ty {
            // A timestamptz's microseconds are UTC's, in any zone Arrow labels them with;
            // a timestamp becomes one (or one the other) in the session's zone.
            DataType::Timestamp(unit, zone) => {
                let micros = &match (datum, zone) {
                    (Datum::Timestamp(local), Some(_)) => {
                        datetime::from_local(*local, &session_zone::current())?
                    }
                    (Datum::TimestampTz(instant), None) => {
                        datetime::to_local(*instant, &session_zone::current())?
                    }
                    (Datum::Timestamp(micros) | Datum::TimestampTz(micros), _) => *micros,
                    _ => return Err(SqlError::internal("a timestamp parameter changed kind")),
                };
                let zone = zone.clone();
                return Ok(match unit {
                    TimeUnit::Second => {
                        ScalarValue::TimestampSecond(Some(micros.div_euclid(1_000_000)), zone)
                    }
                    TimeUnit::Millisecond => {
                        ScalarValue::TimestampMillisecond(Some(micros.div_euclid(1000)), zone)
                    }
                    TimeUnit::Microsecond => ScalarValue::TimestampMicrosecond(Some(*micros), zone),
                    TimeUnit::Nanosecond => ScalarValue::TimestampNanosecond(
                        Some(
                            micros
                                .checked_mul(1000)
                                .ok_or_else(crate::sql::datetime::timestamp_out_of_range)?,
                        ),
                        zone,
                    ),
                });
            }
            _ => match datum {
                Datum::TimestampTz(micros) => {
                    ScalarValue::TimestampMicrosecond(Some(*micros), Some(UTC.into()))
                }
                Datum::Timestamp(micros) => ScalarValue::TimestampMicrosecond(Some(*micros), None),
                _ => return Err(SqlError::internal("a timestamp parameter changed kind")),
            },
        },
        Datum::Date(days) => ScalarValue::Date32(Some(*days)),
        Datum::Time(micros) => ScalarValue::Time64Microsecond(Some(*micros)),
        Datum::Interval(i) => interval_scalar(i),
        Datum::Uuid(bytes) => ScalarValue::FixedSizeBinary(16, Some(bytes.to_vec())),
        Datum::Numeric(n) => {
            let (precision, scale) = match ty {
                DataType::Decimal128(precision, scale) => (*precision, *scale),
                _ => (38, n.fractional_digit_count().clamp(0, 38) as i8),
            };
            let unscaled = pg_numeric::to_i128(n, scale).ok_or_else(|| {
                SqlError::new(
                    SqlState::NumericValueOutOfRange,
                    format!(
                        "the numeric {} does not fit the query's numeric({precision},{scale}) \
                         without rounding",
                        pg_numeric::format(n)
                    ),
                )
            })?;
            ScalarValue::Decimal128(Some(unscaled), precision, scale)
        }
        Datum::Array(items) => {
            let element = match ty {
                DataType::List(field) => field.data_type().clone(),
                _ => items
                    .iter()
                    .find(|d| **d != Datum::Null)
                    .map_or(DataType::Utf8, natural_type),
            };
            let scalars = items
                .iter()
                .map(|d| datum_to_scalar(d, &element))
                .collect::<SqlResult<Vec<_>>>()?;
            ScalarValue::List(ScalarValue::new_list_nullable(&scalars, &element))
        }
    };
    if &natural.data_type() == ty || *ty == DataType::Null {
        return Ok(natural);
    }
    natural.cast_to(ty).map_err(|_| {
        SqlError::new(
            SqlState::InvalidTextRepresentation,
            format!(
                "invalid input syntax for type {}: {}",
                sql_type(ty).name(),
                crate::sql::values::render(datum)
            ),
        )
    })
}

/// The Arrow type a datum has by itself.
fn natural_type(datum: &Datum) -> DataType {
    match datum {
        Datum::Null => DataType::Null,
        Datum::Bool(_) => DataType::Boolean,
        Datum::Int(_) => DataType::Int64,
        Datum::Float(_) => DataType::Float64,
        Datum::Text(_) => DataType::Utf8,
        Datum::Bytes(_) => DataType::Binary,
        Datum::Timestamp(_) => DataType::Timestamp(TimeUnit::Microsecond, None),
        Datum::TimestampTz(_) => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
        Datum::Date(_) => DataType::Date32,
        Datum::Time(_) => DataType::Time64(TimeUnit::Microsecond),
        Datum::Interval(_) => DataType::Interval(IntervalUnit::MonthDayNano),
        Datum::Uuid(_) => DataType::FixedSizeBinary(16),
        Datum::Numeric(n) => {
            DataType::Decimal128(38, n.fractional_digit_count().clamp(0, 38) as i8)
        }
        Datum::Array(items) => DataType::List(Arc::new(
            datafusion::arrow::datatypes::Field::new_list_field(
                items
                    .iter()
                    .find(|d| **d != Datum::Null)
                    .map_or(DataType::Utf8, natural_type),
                true,
            ),
        )),
    }
}

/// An interval as Arrow's month-day-nanosecond scalar.
fn interval_scalar(i: &Interval) -> ScalarValue {
    ScalarValue::IntervalMonthDayNano(Some(IntervalMonthDayNano::new(
        i.months,
        i.days,
        i.micros.saturating_mul(1000),
    )))
}

/// Builds one RecordBatch of scan rows. Every datum already has its column's type (the
/// relation coerces odd cells, or makes them NULL); a mismatch here becomes NULL too.
pub fn rows_to_batch(schema: &SchemaRef, rows: &[Vec<Datum>]) -> Result<RecordBatch, ArrowError> {
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for (i, field) in schema.fields().iter().enumerate() {
        let values = rows.iter().map(|row| row.get(i).unwrap_or(&Datum::Null));
        let array: ArrayRef = match field.data_type() {
            // SMALLINT and INTEGER columns, whose values the engine keeps in range.
            DataType::Int16 => Arc::new(Int16Array::from_iter(values.map(|d| match d {
                Datum::Int(i) => i16::try_from(*i).ok(),
                _ => None,
            }))),
            DataType::Int32 => Arc::new(Int32Array::from_iter(values.map(|d| match d {
                Datum::Int(i) => i32::try_from(*i).ok(),
                _ => None,
            }))),
            DataType::Int64 => {
                let mut b = Int64Builder::with_capacity(rows.len());
                values.for_each(|d| {
                    b.append_option(if let Datum::Int(i) = d {
                        Some(*i)
                    } else {
                        None
                    })
                });
                Arc::new(b.finish())
            }
            // REAL columns, whose values the engine keeps in single precision.
            DataType::Float32 => Arc::new(Float32Array::from_iter(values.map(|d| match d {
                Datum::Float(f) => Some(*f as f32),
                Datum::Int(i) => Some(*i as f32),
                _ => None,
            }))),
            DataType::Float64 => {
                let mut b = Float64Builder::with_capacity(rows.len());
                values.for_each(|d| {
                    b.append_option(match d {
                        Datum::Float(f) => Some(*f),
                        Datum::Int(i) => Some(*i as f64),
                        _ => None,
                    })
                });
                Arc::new(b.finish())
            }
            DataType::Boolean => {
                let mut b = BooleanBuilder::with_capacity(rows.len());
                values.for_each(|d| {
                    b.append_option(if let Datum::Bool(v) = d {
                        Some(*v)
                    } else {
                        None
                    })
                });
                Arc::new(b.finish())
            }
            DataType::Timestamp(TimeUnit::Microsecond, zone) => Arc::new(
                TimestampMicrosecondArray::from_iter(values.map(|d| match d {
                    Datum::Timestamp(micros) | Datum::TimestampTz(micros) => Some(*micros),
                    _ => None,
                }))
                .with_timezone_opt(zone.clone()),
            ),
            DataType::Date32 => Arc::new(Date32Array::from_iter(values.map(|d| match d {
                Datum::Date(days) => Some(*days),
                _ => None,
            }))),
            DataType::Time64(TimeUnit::Microsecond) => {
                Arc::new(Time64MicrosecondArray::from_iter(values.map(|d| match d {
                    Datum::Time(micros) => Some(*micros),
                    _ => None,
                })))
            }
            DataType::Interval(IntervalUnit::MonthDayNano) => Arc::new(
                IntervalMonthDayNanoArray::from_iter(values.map(|d| match d {
                    Datum::Interval(i) => Some(IntervalMonthDayNano::new(
                        i.months,
                        i.days,
                        i.micros.saturating_mul(1000),
                    )),
                    _ => None,
                })),
            ),
            DataType::FixedSizeBinary(16) => {
                let mut b = FixedSizeBinaryBuilder::with_capacity(rows.len(), 16);
                for d in values {
                    match d {
                        Datum::Uuid(bytes) => b.append_value(bytes)?,
                        _ => b.append_null(),
                    }
                }
                Arc::new(b.finish())
            }
            // NUMERIC(p,s) columns, whose values the engine keeps at their scale.
            DataType::Decimal128(precision, scale) => Arc::new(
                Decimal128Array::from_iter(values.map(|d| match d {
                    Datum::Numeric(n) => pg_numeric::to_i128(n, *scale),
                    _ => None,
                }))
                .with_precision_and_scale(*precision, *scale)?,
            ),
            DataType::LargeUtf8 => {
                let mut b = LargeStringBuilder::new();
                values.for_each(|d| match d {
                    Datum::Text(v) => b.append_value(v),
                    _ => b.append_null(),
                });
                Arc::new(b.finish())
            }
            DataType::LargeBinary => {
                let mut b = LargeBinaryBuilder::new();
                values.for_each(|d| match d {
                    Datum::Text(v) => b.append_value(v),
                    _ => b.append_null(),
                });
                Arc::new(b.finish())
            }
            // Array columns: each row's elements as scalars of the element type.
            DataType::List(item) => {
                let element = item.data_type();
                let mut lists = Vec::with_capacity(rows.len());
                for d in values {
                    lists.push(match d {
                        Datum::Array(items) => {
                            let scalars = items
                                .iter()
                                .map(|i| datum_to_scalar(i, element))
                                .collect::<SqlResult<Vec<_>>>()
                                .map_err(|e| ArrowError::CastError(e.message()))?;
                            ScalarValue::List(ScalarValue::new_list_nullable(&scalars, element))
                        }
                        _ => ScalarValue::try_from(field.data_type())
                            .map_err(|e| ArrowError::CastError(e.to_string()))?,
                    });
                }
                match lists.is_empty() {
                    true => datafusion::arrow::array::new_empty_array(field.data_type()),
                    false => ScalarValue::iter_to_array(lists)
                        .map_err(|e| ArrowError::CastError(e.to_string()))?,
                }
            }
            DataType::Binary => {
                let mut b = BinaryBuilder::new();
                values.for_each(|d| {
                    b.append_option(if let Datum::Bytes(v) = d {
                        Some(v)
                    } else {
                        None
                    })
                });
                Arc::new(b.finish())
            }
            _ => {
                let mut b = StringBuilder::new();
                values.for_each(|d| {
                    b.append_option(if let Datum::Text(v) = d {
                        Some(v)
                    } else {
                        None
                    })
                });
                Arc::new(b.finish())
            }
        };
        columns.push(array);
    }
    RecordBatch::try_new_with_options(
        Arc::clone(schema),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows.len())),
    )
}

/// The rows of a result batch as datums of the columns' SQL types.
pub fn batch_rows(batch: &RecordBatch, columns: &[OutputColumn]) -> Vec<SqlResult<Vec<Datum>>> {
    let converted: SqlResult<Vec<Vec<Datum>>> = batch
        .columns()
        .iter()
        .zip(columns)
        .map(|(array, column)| column_datums(array, column.ty))
        .collect();
    let converted = match converted {
        Ok(c) => c,
        Err(e) => return vec![Err(e)],
    };
    (0..batch.num_rows())
        .map(|row| {
            Ok(converted
                .iter()
                .map(|column| column.get(row).cloned().unwrap_or(Datum::Null))
                .collect())
        })
        .collect()
}

fn arrow_error(e: ArrowError) -> SqlError {
    tracing::warn!("result conversion failed: {e}");
    SqlError::internal(format!("cannot convert a result column: {e}"))
}

/// One result column as datums.
fn column_datums(array: &ArrayRef, ty: SqlType) -> SqlResult<Vec<Datum>> {
    let len = array.len();
    // A NULL literal's column: its `is_null` is false (a NullArray has no validity
    // buffer), yet every value is NULL.
    if array.data_type() == &DataType::Null {
        return Ok(vec![Datum::Null; len]);
    }
    let mut out = Vec::with_capacity(len);
    match ty {
        SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Oid => {
            let ints = cast(array, &DataType::Int64).map_err(arrow_error)?;
            let ints = ints.as_primitive::<Int64Type>();
            (0..len).for_each(|i| {
                out.push(if ints.is_null(i) {
                    Datum::Null
                } else {
                    Datum::Int(ints.value(i))
                })
            });
        }
        SqlType::Float4 | SqlType::Float8 => {
            let floats = cast(array, &DataType::Float64).map_err(arrow_error)?;
            let floats = floats.as_primitive::<Float64Type>();
            (0..len).for_each(|i| {
                out.push(if floats.is_null(i) {
                    Datum::Null
                } else {
                    Datum::Float(floats.value(i))
                })
            });
        }
        SqlType::Bool => {
            let bools = array
                .as_boolean_opt()
                .ok_or_else(|| SqlError::internal("boolean column is not boolean"))?;
            (0..len).for_each(|i| {
                out.push(if bools.is_null(i) {
                    Datum::Null
                } else {
                    Datum::Bool(bools.value(i))
                })
            });
        }
        SqlType::Bytea => {
            let bytes = cast(array, &DataType::Binary).map_err(arrow_error)?;
            let bytes = bytes.as_binary::<i32>();
            (0..len).for_each(|i| {
                out.push(if bytes.is_null(i) {
                    Datum::Null
                } else {
                    Datum::Bytes(bytes.value(i).to_vec())
                })
            });
        }
        SqlType::Timestamp | SqlType::TimestampTz => {
            // In its own zone, so the microseconds stay UTC's (a cast to another zone
            // would keep them too, but a cast to none would move them).
            let zone = match array.data_type() {
                DataType::Timestamp(_, zone) => zone.clone(),
                _ => None,
            };
            let micros = cast(array, &DataType::Timestamp(TimeUnit::Microsecond, zone))
                .map_err(arrow_error)?;
            let micros = micros.as_primitive::<TimestampMicrosecondType>();
            let datum = match ty {
                SqlType::TimestampTz => Datum::TimestampTz,
                _ => Datum::Timestamp,
            };
            (0..len).for_each(|i| {
                out.push(if micros.is_null(i) {
                    Datum::Null
                } else {
                    datum(micros.value(i))
                })
            });
        }
        SqlType::Uuid => {
            let bytes = array
                .as_fixed_size_binary_opt()
                .ok_or_else(|| SqlError::internal("uuid column is not 16 bytes"))?;
            for i in 0..len {
                out.push(match <[u8; 16]>::try_from(bytes.value(i)) {
                    Ok(uuid) if !bytes.is_null(i) => Datum::Uuid(uuid),
                    _ => Datum::Null,
                });
            }
        }
        // A wider decimal (a sum of 38-digit ones, a 42-digit literal): each value as
        // its digits, which no 128-bit cast could hold.
        SqlType::Numeric(_) if matches!(array.data_type(), DataType::Decimal256(..)) => {
            let decimals = array.as_primitive::<Decimal256Type>();
            let scale = decimals.scale();
            for i in 0..len {
                out.push(match decimals.is_null(i) {
                    true => Datum::Null,
                    false => Datum::Numeric(
                        pg_numeric::from_unscaled_text(&decimals.value(i).to_string(), scale)
                            .ok_or_else(|| SqlError::internal("a decimal's digits do not parse"))?,
                    ),
                });
            }
        }
        SqlType::Numeric(_) => {
            let decimals = match array.data_type() {
                DataType::Decimal128(..) => Arc::clone(array),
                // An integer, at scale 0.
                _ => cast(array, &DataType::Decimal128(38, 0)).map_err(arrow_error)?,
            };
            let scale = match decimals.data_type() {
                DataType::Decimal128(_, scale) => *scale,
                _ => 0,
            };
            let decimals = decimals.as_primitive::<Decimal128Type>();
            (0..len).for_each(|i| {
                out.push(if decimals.is_null(i) {
                    Datum::Null
                } else {
                    Datum::Numeric(pg_numeric::from_i128(decimals.value(i), scale))
                })
            });
        }
        SqlType::Time => {
            let micros =
                cast(array, &DataType::Time64(TimeUnit::Microsecond)).map_err(arrow_error)?;
            let micros = micros.as_primitive::<Time64MicrosecondType>();
            (0..len).for_each(|i| {
                out.push(match micros.is_null(i) {
                    true => Datum::Null,
                    false => Datum::Time(micros.value(i)),
                })
            });
        }
        SqlType::Interval => out = interval_datums(array)?,
        SqlType::Date => {
            let days = cast(array, &DataType::Date32).map_err(arrow_error)?;
            let days = days.as_primitive::<Date32Type>();
            (0..len).for_each(|i| {
                out.push(if days.is_null(i) {
                    Datum::Null
                } else {
                    Datum::Date(days.value(i))
                })
            });
        }
        SqlType::Array(of) => {
            let lists = array
                .as_list_opt::<i32>()
                .ok_or_else(|| SqlError::internal("array column is not a list"))?;
            for i in 0..len {
                out.push(if lists.is_null(i) {
                    Datum::Null
                } else {
                    Datum::Array(column_datums(&lists.value(i), of.element())?)
                });
            }
        }
        SqlType::Json | SqlType::Jsonb | SqlType::Enum(_) => {
            let text = cast(array, &DataType::Utf8).map_err(arrow_error)?;
            let text = text.as_string::<i32>();
            (0..len).for_each(|i| {
                out.push(match text.is_null(i) {
                    true => Datum::Null,
                    false => Datum::Text(text.value(i).to_string()),
                })
            });
        }
        SqlType::Text | SqlType::Name => match array.data_type() {
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                let text = cast(array, &DataType::Utf8).map_err(arrow_error)?;
                let text = text.as_string::<i32>();
                (0..len).for_each(|i| {
                    out.push(if text.is_null(i) {
                        Datum::Null
                    } else {
                        Datum::Text(text.value(i).to_string())
                    })
                });
            }
            DataType::List(_) => {
                let lists = array
                    .as_list_opt::<i32>()
                    .ok_or_else(|| SqlError::internal("list column is not a list"))?;
                for i in 0..len {
                    out.push(if lists.is_null(i) {
                        Datum::Null
                    } else {
                        Datum::Text(pg_array_text(&lists.value(i))?)
                    });
                }
            }
            _ => {
                // PostgreSQL's text forms: a space between date and time.
                let options = FormatOptions::new()
                    .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S%.f"))
                    .with_timestamp_tz_format(Some("%Y-%m-%d %H:%M:%S%.f%:z"))
                    .with_datetime_format(Some("%Y-%m-%d %H:%M:%S%.f"));
                let formatter =
                    ArrayFormatter::try_new(array.as_ref(), &options).map_err(arrow_error)?;
                (0..len).for_each(|i| {
                    out.push(if array.is_null(i) {
                        Datum::Null
                    } else {
                        Datum::Text(formatter.value(i).to_string())
                    })
                });
            }
        },
    }
    Ok(out)
}

/// An interval or duration column as intervals: a duration (`timestamp - timestamp`)
/// as whole days and the rest, as PostgreSQL's subtraction gives it; nanoseconds below
/// a microsecond are dropped.
pub fn interval_datums(array: &ArrayRef) -> SqlResult<Vec<Datum>> {
    let len = array.len();
    let datum = |i: usize, value: Interval| match array.is_null(i) {
        true => Datum::Null,
        false => Datum::Interval(value),
    };
    Ok(match array.data_type() {
        DataType::Duration(_) => {
            let micros =
                cast(array, &DataType::Duration(TimeUnit::Microsecond)).map_err(arrow_error)?;
            let micros = micros.as_primitive::<DurationMicrosecondType>();
            (0..len)
                .map(|i| datum(i, Interval::from_micros(micros.value(i))))
                .collect()
        }
        _ => {
            let intervals = cast(array, &DataType::Interval(IntervalUnit::MonthDayNano))
                .map_err(arrow_error)?;
            let intervals = intervals.as_primitive::<IntervalMonthDayNanoType>();
            (0..len)
                .map(|i| {
                    let v = intervals.value(i);
                    datum(
                        i,
                        Interval {
                            months: v.months,
                            days: v.days,
                            micros: v.nanoseconds / 1000,
                        },
                    )
                })
                .collect()
        }
    })
}

/// A list of lists (which has no SQL type here) in PostgreSQL's text form: a
/// multidimensional array's inner arrays unquoted (`{{1,2},{3,4}}`), booleans as
/// `t`/`f`, floats in PostgreSQL's shortest text.
fn pg_array_text(values: &ArrayRef) -> SqlResult<String> {
    if let Some(lists) = values.as_list_opt::<i32>() {
        let inner = (0..lists.len())
            .map(|i| match lists.is_null(i) {
                true => Ok("NULL".to_string()),
                false => pg_array_text(&lists.value(i)),
            })
            .collect::<SqlResult<Vec<_>>>()?;
        return Ok(format!("{{{}}}", inner.join(",")));
    }
    let texts: Vec<Option<String>> = match values.data_type() {
        DataType::Boolean => {
            let bools = values.as_boolean();
            (0..bools.len())
                .map(|i| (!bools.is_null(i)).then(|| if bools.value(i) { "t" } else { "f" }.into()))
                .collect()
        }
        DataType::Float64 | DataType::Float32 => {
            let single = values.data_type() == &DataType::Float32;
            let floats = cast(values, &DataType::Float64).map_err(arrow_error)?;
            let floats = floats.as_primitive::<datafusion::arrow::datatypes::Float64Type>();
            (0..floats.len())
                .map(|i| {
                    (!floats.is_null(i))
                        .then(|| crate::sql::pg_float_text::float_text(floats.value(i), single))
                })
                .collect()
        }
        // Arrow's text of an interval (`1 days`) or a time is not PostgreSQL's.
        DataType::Interval(_) | DataType::Duration(_) => interval_datums(values)?
            .iter()
            .map(|d| match d {
                Datum::Interval(i) => Some(crate::sql::pg_interval::format(i)),
                _ => None,
            })
            .collect(),
        DataType::Time32(_) | DataType::Time64(_) => {
            let micros =
                cast(values, &DataType::Time64(TimeUnit::Microsecond)).map_err(arrow_error)?;
            let micros = micros.as_primitive::<Time64MicrosecondType>();
            (0..micros.len())
                .map(|i| {
                    (!micros.is_null(i))
                        .then(|| crate::sql::pg_interval::format_time(micros.value(i)))
                })
                .collect()
        }
        _ => {
            let text = cast(values, &DataType::Utf8).map_err(arrow_error)?;
            let text = text.as_string::<i32>();
            (0..text.len())
                .map(|i| (!text.is_null(i)).then(|| text.value(i).to_string()))
                .collect()
        }
    };
    Ok(crate::sql::pg_array_text::format(
        texts.iter().map(Option::as_deref),
    ))
}
