//! Dates, times and uuids as text, both ways, as PostgreSQL reads and writes them where
//! DataFusion would use Arrow's forms (a uuid is Arrow's 16-byte fixed binary, which
//! DataFusion's SQL cannot name):
//! - a cast of a timestamp or date to text becomes `pg_time_text`, which writes
//!   `2024-03-01 10:00:00+00` (Arrow: `2024-03-01T10:00:00Z`);
//! - a quoted literal cast to, or compared with, a timestamp, date, time, interval or
//!   uuid is read by pgwide's parsers (`'2024-03-01 10:00'`, `'infinity'`, `'0044-03-15
//!   BC'`, `'1 day 02:00:00'`, which Arrow's parser refuses) into a literal of that
//!   type;
//! - `extract` is a `numeric` and `date_part` a `double precision`, with the fraction of
//!   a second (Arrow's `second` field is whole seconds);
//! - `TIMESTAMP` without a precision is planned in microseconds, PostgreSQL's unit, not
//!   Arrow's nanoseconds, whose range ends in 2262;
//! - `x::uuid` becomes `pg_uuid_in(x)`, and `gen_random_uuid()` makes a version 4 uuid.

use super::pg_integer_overflow::{is_comparison, rewrite_expressions};
use crate::sql::datetime;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    Between, BinaryExpr, Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, TryCast, Volatility,
};
use sqlparser::ast::{self, Query};
use std::ops::ControlFlow;
use std::sync::Arc;

/// Rewrites the casts of dates and times to and from text in `plan`, and the quoted
/// literals compared with them.
pub fn rewrite(plan: LogicalPlan) -> Result<LogicalPlan> {
    rewrite_expressions(plan, |expr, schema| {
        let read = literal_times(expr, schema)?;
        match read.transformed {
            true => Ok(read),
            false => time_text(read.data, schema),
        }
    })
}

/// Gives every `TIMESTAMP` type of `query` without a precision (also an array's
/// element type) PostgreSQL's microseconds, and makes every cast to `uuid` a call of `pg_uuid_in`. A cast to a
/// `TIMESTAMP(p)` of fewer digits is refused: DataFusion would truncate where
/// PostgreSQL rounds.
pub fn microsecond_timestamps(query: &mut Query) -> crate::sql::sql_types::SqlResult<()> {
    let mut refused = None;
    let _ = ast::visit_expressions_mut(query, |expr| {
        // `ARRAY[...]::uuid[]` (also what `'{...}'::uuid[]` became): each element
        // read as a uuid, as below; DataFusion has no uuid type to cast to.
        if let ast::Expr::Cast {
            expr: inner,
            data_type: ast::DataType::Array(ast::ArrayElemTypeDef::SquareBracket(element, None)),
            ..
        } = expr
        {
            if let (ast::Expr::Array(array), ast::DataType::Uuid) = (&mut **inner, &**element) {
                for item in array.elem.iter_mut() {
                    let value = std::mem::replace(item, ast::Expr::value(ast::Value::Null));
                    *item = uuid_in(value);
                }
                *expr = match array.elem.is_empty() {
                    // Without an element to type it, the empty list is given the type
                    // uuids have in Arrow.
                    true => super::sql_ast::parse_expr(
                        "arrow_cast(ARRAY[], 'List(FixedSizeBinary(16))')",
                    )
                    .unwrap_or_else(|| (**inner).clone()),
                    false => (**inner).clone(),
                };
                return ControlFlow::Continue(());
            }
        }
        let uuid_of = match expr {
            ast::Expr::Cast {
                expr: inner,
                data_type: ast::DataType::Uuid,
                ..
            } => Some((**inner).clone()),
            ast::Expr::TypedString(typed) if typed.data_type == ast::DataType::Uuid => {
                Some(ast::Expr::Value(typed.value.clone()))
            }
            _ => None,
        };
        if let Some(inner) = uuid_of {
            *expr = uuid_in(inner);
            return ControlFlow::<()>::Continue(());
        }
        if let ast::Expr::TypedString(typed) = expr {
            if let Err(e) = timestamp_literal_for_arrow(typed) {
                refused = Some(e);
                return ControlFlow::Break(());
            }
        }
        let data_type = match expr {
            ast::Expr::Cast { data_type, .. } => data_type,
            ast::Expr::TypedString(typed) => &mut typed.data_type,
            _ => return ControlFlow::<()>::Continue(()),
        };
        // An array's elements too (`'{...}'::timestamptz[]`).
        let data_type = match data_type {
            ast::DataType::Array(ast::ArrayElemTypeDef::SquareBracket(element, _)) => {
                &mut **element
            }
            other => other,
        };
        match data_type {
            ast::DataType::Timestamp(precision @ None, _) => *precision = Some(6),
            ast::DataType::Timestamp(Some(p), _) if *p < 6 => {
                refused = crate::sql::sql_types::sql_type(data_type).err();
                return ControlFlow::Break(());
            }
            _ => {}
        }
        ControlFlow::Continue(())
    });
    refused.map_or(Ok(()), Err)
}

/// `pg_uuid_in(value)`: a cast to uuid.
fn uuid_in(value: ast::Expr) -> ast::Expr {
    super::sql_ast::function_call(UUID_IN, vec![value])
}

/// Rewrites the text of a `timestamp '...'` / `timestamptz '...'` literal into the
/// full ISO form Arrow's parser reads (`2024-01-01T00:00:00.000000Z`), as PostgreSQL
/// reads it: DataFusion casts the literals of a VALUES list while it plans, before
/// [`rewrite`] can read them, and Arrow refused `'2024-01-01 00:00'`. A text PostgreSQL
/// refuses is its error (22007, 22008); special words (`now`, `infinity`) are left to
/// the later reading.
fn timestamp_literal_for_arrow(typed: &mut ast::TypedString) -> crate::sql::SqlResult<()> {
    let zoned = match typed.data_type {
        ast::DataType::Timestamp(
            _,
            ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone,
        ) => false,
        ast::DataType::Timestamp(_, ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz) => {
            true
        }
        _ => return Ok(()),
    };
    let ast::Value::SingleQuotedString(text) = &typed.value.value else {
        return Ok(());
    };
    if !text.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
        return Ok(());
    }
    // Read in the session's zone, which the plan is made again in if it changes.
    let zone = crate::sql::session_zone::current();
    let micros = datetime::parse_timestamp(text, zoned.then_some(&zone))?;
    let Some(at) = chrono::DateTime::from_timestamp_micros(micros) else {
        return Ok(());
    };
    if !(1..=9999).contains(&chrono::Datelike::year(&at)) {
        return Ok(());
    }
    let mut iso = at.naive_utc().format("%Y-%m-%dT%H:%M:%S%.6f").to_string();
    if zoned {
        iso.push('Z');
    }
    typed.value.value = ast::Value::SingleQuotedString(iso);
    Ok(())
}

/// Makes `extract` a `numeric` and `date_part` a `double precision`, as PostgreSQL's
/// are (DataFusion gives integers for most fields): `extract(epoch ...)` and
/// `extract(second ...)` keep six digits after the point, `milliseconds` three, as
/// PostgreSQL prints them (`1704103200.000000`).
pub fn extract_types(query: &mut Query) {
    let _ = ast::visit_expressions_mut(query, |expr| {
        let cast = |inner: ast::Expr, data_type: ast::DataType| ast::Expr::Cast {
            kind: ast::CastKind::Cast,
            expr: Box::new(inner),
            data_type,
            array: false,
            format: None,
        };
        match expr {
            // Seconds with their fraction: DataFusion's `second` field is whole seconds.
            ast::Expr::Extract {
                field: ast::DateTimeField::Second | ast::DateTimeField::Seconds,
                expr: inner,
                ..
            } => {
                let numeric =
                    ast::DataType::Numeric(ast::ExactNumberInfo::PrecisionAndScale(38, 6));
                *expr = cast(fractional_seconds((**inner).clone()), numeric);
            }
            ast::Expr::Function(f) if is_date_part_of_seconds(f) => {
                if let Some(inner) = second_argument(f) {
                    *expr = fractional_seconds(inner);
                }
            }
            ast::Expr::Extract { field, .. } => {
                use ast::DateTimeField as F;
                let scale = match field {
                    F::Second | F::Seconds | F::Epoch => 6,
                    F::Millisecond | F::Milliseconds => 3,
                    _ => 0,
                };
                let numeric =
                    ast::DataType::Numeric(ast::ExactNumberInfo::PrecisionAndScale(38, scale));
                *expr = cast(expr.clone(), numeric);
            }
            ast::Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("date_part") => {
                *expr = cast(expr.clone(), ast::DataType::DoublePrecision);
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
}

/// Whether `f` is `date_part('second', x)`.
fn is_date_part_of_seconds(f: &ast::Function) -> bool {
    let ast::FunctionArguments::List(list) = &f.args else {
        return false;
    };
    f.name.to_string().eq_ignore_ascii_case("date_part")
        && matches!(list.args.first(), Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
            ast::Expr::Value(v)))) if matches!(&v.value, ast::Value::SingleQuotedString(s)
                if s.eq_ignore_ascii_case("second") || s.eq_ignore_ascii_case("seconds")))
}

fn second_argument(f: &ast::Function) -> Option<ast::Expr> {
    let ast::FunctionArguments::List(list) = &f.args else {
        return None;
    };
    match list.args.get(1) {
        Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))) => Some(e.clone()),
        _ => None,
    }
}

/// `x`'s seconds with their fraction, a double: its microseconds field (seconds
/// included, as PostgreSQL's) over a million.
fn fractional_seconds(x: ast::Expr) -> ast::Expr {
    let argument = |e: ast::Expr| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e));
    let micros = ast::Expr::Function(ast::Function {
        name: ast::ObjectName::from(vec![ast::Ident::new("date_part")]),
        uses_odbc_syntax: false,
        parameters: ast::FunctionArguments::None,
        args: ast::FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: vec![
                argument(ast::Expr::value(ast::Value::SingleQuotedString(
                    "microsecond".into(),
                ))),
                argument(x),
            ],
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    });
    ast::Expr::BinaryOp {
        left: Box::new(ast::Expr::Cast {
            kind: ast::CastKind::Cast,
            expr: Box::new(micros),
            data_type: ast::DataType::DoublePrecision,
            array: false,
            format: None,
        }),
        op: ast::BinaryOperator::Divide,
        right: Box::new(ast::Expr::value(ast::Value::Number(
            "1000000.0".into(),
            false,
        ))),
    }
}

/// A quoted literal as a time of type `ty`, read by `datetime` (a `timestamptz` in the
/// session's zone, which the plan is made again in if it changes); `None` when `ty` is
/// no date or time type.
fn read_time(text: &str, ty: &DataType) -> Result<Option<ScalarValue>> {
    let failed = |e: crate::sql::SqlError| DataFusionError::External(Box::new(e));
    let session_zone = crate::sql::session_zone::current();
    Ok(Some(match ty {
        DataType::Timestamp(unit, zone) => {
            let micros = datetime::parse_timestamp(text, zone.as_ref().map(|_| &session_zone))
                .map_err(failed)?;
            let scaled = match unit {
                TimeUnit::Second => Some(micros.div_euclid(1_000_000)),
                TimeUnit::Millisecond => Some(micros.div_euclid(1000)),
                TimeUnit::Microsecond => Some(micros),
                TimeUnit::Nanosecond => micros.checked_mul(1000),
            }
            .ok_or_else(|| failed(datetime::timestamp_out_of_range()))?;
            let zone = zone.clone();
            match unit {
                TimeUnit::Second => ScalarValue::TimestampSecond(Some(scaled), zone),
                TimeUnit::Millisecond => ScalarValue::TimestampMillisecond(Some(scaled), zone),
                TimeUnit::Microsecond => ScalarValue::TimestampMicrosecond(Some(scaled), zone),
                TimeUnit::Nanosecond => ScalarValue::TimestampNanosecond(Some(scaled), zone),
            }
        }
        DataType::Date32 => ScalarValue::Date32(Some(datetime::parse_date(text).map_err(failed)?)),
        DataType::FixedSizeBinary(16) => ScalarValue::FixedSizeBinary(
            16,
            Some(crate::sql::parse_uuid(text).map_err(failed)?.to_vec()),
        ),
        // An array literal (`'{a,b}'`) read as PostgreSQL's, each element as the
        // element type.
        DataType::List(item) => {
            let element = item.data_type();
            let mut scalars = Vec::new();
            for value in crate::sql::pg_array_text::parse(text).map_err(failed)? {
                let datum = value.map_or(crate::sql::Datum::Null, crate::sql::Datum::Text);
                scalars.push(super::convert::datum_to_scalar(&datum, element).map_err(failed)?);
            }
            ScalarValue::List(ScalarValue::new_list_nullable(&scalars, element))
        }
        DataType::Time64(TimeUnit::Microsecond) => ScalarValue::Time64Microsecond(Some(
            crate::sql::pg_interval::parse_time(text).map_err(failed)?,
        )),
        DataType::Interval(datafusion::arrow::datatypes::IntervalUnit::MonthDayNano) => {
            let i = crate::sql::pg_interval::parse(text).map_err(failed)?;
            ScalarValue::IntervalMonthDayNano(Some(
                datafusion::arrow::datatypes::IntervalMonthDayNano::new(
                    i.months,
                    i.days,
                    i.micros.saturating_mul(1000),
                ),
            ))
        }
        _ => return Ok(None),
    }))
}

/// The text of a string literal.
fn quoted(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Literal(
            ScalarValue::Utf8(Some(text))
            | ScalarValue::Utf8View(Some(text))
            | ScalarValue::LargeUtf8(Some(text)),
            _,
        ) => Some(text),
        _ => None,
    }
}

/// `expr` with a quoted literal read as a time of `ty`, if it is one.
fn read_as(expr: Expr, ty: &DataType) -> Result<Transformed<Expr>> {
    let Some(text) = quoted(&expr) else {
        return Ok(Transformed::no(expr));
    };
    Ok(match read_time(text, ty)? {
        Some(value) => Transformed::yes(Expr::Literal(value, None)),
        None => Transformed::no(expr),
    })
}

/// Reads the quoted literals cast to a time, or compared with one (`=`, `<`, ...,
/// `IN`, `BETWEEN`).
fn literal_times(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let time_type = |e: &Expr| e.get_type(schema).ok().filter(reads_quoted);
    match expr {
        Expr::Cast(Cast { expr: inner, field }) if quoted(&inner).is_some() => {
            match read_as(*inner, field.data_type())? {
                read if read.transformed => Ok(read),
                kept => Ok(Transformed::no(Expr::Cast(Cast {
                    expr: Box::new(kept.data),
                    field,
                }))),
            }
        }
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(&op) => {
            let (left, right) = match (time_type(&left), time_type(&right)) {
                (Some(ty), None) => (Transformed::no(*left), read_as(*right, &ty)?),
                (None, Some(ty)) => (read_as(*left, &ty)?, Transformed::no(*right)),
                _ => (Transformed::no(*left), Transformed::no(*right)),
            };
            let changed = left.transformed || right.transformed;
            let expr = Expr::BinaryExpr(BinaryExpr::new(
                Box::new(left.data),
                op,
                Box::new(right.data),
            ));
            Ok(if changed {
                Transformed::yes(expr)
            } else {
                Transformed::no(expr)
            })
        }
        Expr::InList(InList {
            expr: target,
            list,
            negated,
        }) => {
            let Some(ty) = time_type(&target) else {
                return Ok(Transformed::no(Expr::InList(InList {
                    expr: target,
                    list,
                    negated,
                })));
            };
            let mut changed = false;
            let list = list
                .into_iter()
                .map(|item| {
                    let read = read_as(item, &ty)?;
                    changed |= read.transformed;
                    Ok(read.data)
                })
                .collect::<Result<Vec<_>>>()?;
            let expr = Expr::InList(InList {
                expr: target,
                list,
                negated,
            });
            Ok(if changed {
                Transformed::yes(expr)
            } else {
                Transformed::no(expr)
            })
        }
        Expr::Between(Between {
            expr: target,
            negated,
            low,
            high,
        }) => {
            let Some(ty) = time_type(&target) else {
                return Ok(Transformed::no(Expr::Between(Between {
                    expr: target,
                    negated,
                    low,
                    high,
                })));
            };
            let (low, high) = (read_as(*low, &ty)?, read_as(*high, &ty)?);
            let changed = low.transformed || high.transformed;
            let expr = Expr::Between(Between {
                expr: target,
                negated,
                low: Box::new(low.data),
                high: Box::new(high.data),
            });
            Ok(if changed {
                Transformed::yes(expr)
            } else {
                Transformed::no(expr)
            })
        }
        other => Ok(Transformed::no(other)),
    }
}

fn is_text(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
    )
}

/// A date, time, interval or uuid: a type whose text is PostgreSQL's, not Arrow's.
fn is_time(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Timestamp(..)
            | DataType::Date32
            | DataType::Date64
            | DataType::FixedSizeBinary(16)
            | DataType::Time32(_)
            | DataType::Time64(_)
            | DataType::Interval(_)
            | DataType::Duration(_)
    )
}

/// A type a quoted literal compared with it may be read as: the times, and arrays
/// (`tags = '{a,b}'`); `read_time` says which units it reads.
fn reads_quoted(ty: &DataType) -> bool {
    is_time(ty) || matches!(ty, DataType::List(_))
}

/// A cast of a date, time, uuid, float or array to text: PostgreSQL's text (also run
/// after DataFusion's type coercion, on the casts it added, by `pg_time_zone`).
pub(super) fn time_text(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let (inner, target) = match &expr {
        Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field }) => {
            (expr, field.data_type())
        }
        _ => return Ok(Transformed::no(expr)),
    };
    let source = inner.get_type(schema)?;
    let list = matches!(source, DataType::List(_));
    let float = matches!(source, DataType::Float32 | DataType::Float64);
    if !(is_text(target) && (is_time(&source) || list || float)) {
        return Ok(Transformed::no(expr));
    }
    let call = Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::new(ScalarUDF::new_from_impl(TimeText::new(list))),
        vec![(**inner).clone()],
    ));
    Ok(Transformed::yes(match target {
        DataType::Utf8 => call,
        other => Expr::Cast(Cast::new(Box::new(call), other.clone())),
    }))
}

/// The text of a date, time, uuid or float (`pg_value_text`), or of an array
/// (`pg_array_text`: PostgreSQL's `{a,"b c",NULL}`, each element in its own text form,
/// where Arrow's cast wrote `[a, b c, ]`).
#[derive(Debug, PartialEq, Eq, Hash)]
struct TimeText {
    signature: Signature,
    list: bool,
}

impl TimeText {
    fn new(list: bool) -> Self {
        TimeText {
            signature: Signature::any(1, Volatility::Immutable),
            list,
        }
    }
}

impl ScalarUDFImpl for TimeText {
    fn name(&self) -> &str {
        if self.list {
            "pg_array_text"
        } else {
            "pg_value_text"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let zone = super::zone_setting::zone(&args.config_options);
        super::udf::row_by_row(args, &DataType::Utf8, |values| {
            let value = values
                .first()
                .ok_or_else(|| DataFusionError::Internal("pg_value_text takes one value".into()))?;
            let text = if self.list {
                list_text(value, &zone)
            } else {
                value_text(value, &zone)
            };
            text.map(ScalarValue::Utf8)
                .map_err(|e| DataFusionError::Execution(e.to_string()))
        })
    }
}

/// An array's text, PostgreSQL's literal: elements as `value_text` gives dates, times
/// and uuids, booleans as `t`/`f`, the rest as their cast to text.
fn list_text(
    value: &ScalarValue,
    zone: &datetime::TimeZone,
) -> crate::sql::SqlResult<Option<String>> {
    let ScalarValue::List(lists) = value else {
        return Ok(None);
    };
    if datafusion::arrow::array::Array::is_null(lists.as_ref(), 0) {
        return Ok(None);
    }
    let elements = lists.value(0);
    let mut texts = Vec::with_capacity(elements.len());
    let mut nested = false;
    for i in 0..elements.len() {
        let element = ScalarValue::try_from_array(&elements, i)
            .map_err(|e| crate::sql::SqlError::internal(e.to_string()))?;
        texts.push(match &element {
            e if e.is_null() => None,
            ScalarValue::Boolean(Some(b)) => Some(if *b { "t" } else { "f" }.to_string()),
            ScalarValue::List(_) => {
                nested = true;
                list_text(&element, zone)?
            }
            e if is_time(&e.data_type())
                || matches!(e, ScalarValue::Float32(_) | ScalarValue::Float64(_)) =>
            {
                value_text(e, zone)?
            }
            e => match e.cast_to(&DataType::Utf8) {
                Ok(ScalarValue::Utf8(text)) => text,
                _ => Some(e.to_string()),
            },
        });
    }
    if nested {
        // A multidimensional array's inner arrays are written as they are, unquoted.
        let inner: Vec<&str> = texts
            .iter()
            .map(|t| t.as_deref().unwrap_or("NULL"))
            .collect();
        return Ok(Some(format!("{{{}}}", inner.join(","))));
    }
    Ok(Some(crate::sql::pg_array_text::format(
        texts.iter().map(Option::as_deref),
    )))
}

/// The text of a date, time, interval or uuid value, as PostgreSQL prints it (a
/// `timestamptz` in `zone`).
fn value_text(
    value: &ScalarValue,
    zone: &datetime::TimeZone,
) -> crate::sql::SqlResult<Option<String>> {
    let internal = |e: DataFusionError| crate::sql::SqlError::internal(e.to_string());
    match value {
        ScalarValue::Float64(v) => Ok(v.map(|v| crate::sql::pg_float_text::float_text(v, false))),
        ScalarValue::Float32(v) => {
            Ok(v.map(|v| crate::sql::pg_float_text::float_text(f64::from(v), true)))
        }
        ScalarValue::Date32(days) => days.map(datetime::format_date).transpose(),
        ScalarValue::FixedSizeBinary(16, bytes) => Ok(bytes
            .as_deref()
            .and_then(|b| <[u8; 16]>::try_from(b).ok())
            .map(|b| crate::sql::format_uuid(&b))),
        ScalarValue::Date64(ms) => ms
            .map(|ms| datetime::format_date((ms.div_euclid(86_400_000)) as i32))
            .transpose(),
        ScalarValue::Time32Second(_)
        | ScalarValue::Time32Millisecond(_)
        | ScalarValue::Time64Microsecond(_)
        | ScalarValue::Time64Nanosecond(_) => {
            match value
                .cast_to(&DataType::Time64(TimeUnit::Microsecond))
                .map_err(internal)?
            {
                ScalarValue::Time64Microsecond(micros) => {
                    Ok(micros.map(crate::sql::pg_interval::format_time))
                }
                _ => Ok(None),
            }
        }
        ScalarValue::IntervalYearMonth(_)
        | ScalarValue::IntervalDayTime(_)
        | ScalarValue::IntervalMonthDayNano(_)
        | ScalarValue::DurationSecond(_)
        | ScalarValue::DurationMillisecond(_)
        | ScalarValue::DurationMicrosecond(_)
        | ScalarValue::DurationNanosecond(_) => {
            let array = value.to_array().map_err(internal)?;
            let datums = super::convert::interval_datums(&array)?;
            Ok(match datums.first() {
                Some(crate::sql::Datum::Interval(i)) => Some(crate::sql::pg_interval::format(i)),
                _ => None,
            })
        }
        other => {
            let (micros, zoned) = match other
                .cast_to(&DataType::Timestamp(TimeUnit::Microsecond, zone_of(other)))
                .map_err(internal)?
            {
                ScalarValue::TimestampMicrosecond(micros, zone) => (micros, zone.is_some()),
                _ => (None, false),
            };
            micros
                .map(|m| datetime::format_timestamp(m, zoned.then_some(zone)))
                .transpose()
        }
    }
}

/// A timestamp scalar's zone: kept through the unit cast, so its instant stays.
fn zone_of(value: &ScalarValue) -> Option<Arc<str>> {
    match value {
        ScalarValue::TimestampSecond(_, zone)
        | ScalarValue::TimestampMillisecond(_, zone)
        | ScalarValue::TimestampMicrosecond(_, zone)
        | ScalarValue::TimestampNanosecond(_, zone) => zone.clone(),
        _ => None,
    }
}

/// The function a cast to `uuid` becomes.
const UUID_IN: &str = "pg_uuid_in";

/// `pg_uuid_in(text)`, a cast to uuid (22P02 for a malformed one), and
/// `gen_random_uuid()`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct UuidFunction {
    name: &'static str,
    signature: Signature,
}

impl ScalarUDFImpl for UuidFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::FixedSizeBinary(16))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let returns = DataType::FixedSizeBinary(16);
        let random = self.name != UUID_IN;
        if random {
            // One per row: volatile, as PostgreSQL's.
            let values: Vec<ScalarValue> = (0..args.number_rows)
                .map(|_| ScalarValue::FixedSizeBinary(16, Some(crate::sql::random_uuid().to_vec())))
                .collect();
            return match values.is_empty() {
                true => Ok(ColumnarValue::Array(
                    datafusion::arrow::array::new_empty_array(&returns),
                )),
                false => Ok(ColumnarValue::Array(ScalarValue::iter_to_array(values)?)),
            };
        }
        super::udf::row_by_row(args, &returns, |values| {
            let value = values.first().cloned().unwrap_or(ScalarValue::Null);
            if let ScalarValue::FixedSizeBinary(16, _) = value {
                return Ok(value);
            }
            let Some(text) = super::udf::string(Some(&value)) else {
                return Ok(ScalarValue::FixedSizeBinary(16, None));
            };
            let bytes =
                crate::sql::parse_uuid(text).map_err(|e| DataFusionError::External(Box::new(e)))?;
            Ok(ScalarValue::FixedSizeBinary(16, Some(bytes.to_vec())))
        })
    }
}

/// Registers `pg_uuid_in` and `gen_random_uuid`.
pub fn register(state: &mut datafusion::execution::session_state::SessionState) -> Result<()> {
    for (name, signature) in [
        (UUID_IN, Signature::any(1, Volatility::Immutable)),
        ("gen_random_uuid", Signature::nullary(Volatility::Volatile)),
    ] {
        let udf = ScalarUDF::new_from_impl(UuidFunction { name, signature });
        datafusion::execution::FunctionRegistry::register_udf(state, Arc::new(udf))?;
    }
    Ok(())
}
