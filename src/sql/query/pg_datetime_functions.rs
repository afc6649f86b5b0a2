//! PostgreSQL's date and time functions DataFusion lacks or answers differently:
//! `to_char` with PostgreSQL's patterns (`sql/pg_to_char.rs` for dates and times,
//! `sql/pg_number_format.rs` for numbers), `x AT TIME ZONE z`, `age` and
//! `make_interval`.
//!
//! DataFusion plans `x AT TIME ZONE 'z'` as a cast that only relabels the zone of a
//! `timestamptz`, so `'10:00+00' AT TIME ZONE 'Europe/Berlin'` stayed 10:00 UTC where
//! PostgreSQL answers the wall-clock time `11:00` there. [`rewrite`] turns it into
//! `pg_at_time_zone(x, z)`, which converts in both directions as PostgreSQL does: a
//! `timestamptz` becomes the `timestamp` it reads as in the zone, a `timestamp` the
//! `timestamptz` it names there.
//!
//! The session's time zone is always UTC (`settings` refuses others), so a
//! `timestamptz` is shown by `to_char` and taken apart by `age` in UTC.

use super::sql_ast::{function_call as call, last};
use crate::sql::datetime::{self, TimeZone, MICROS_PER_DAY};
use crate::sql::pg_to_char::{self, ShownZone};
use crate::sql::sql_types::SqlError;
use crate::sqlstate::SqlState;
use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Timelike};
use datafusion::arrow::datatypes::{DataType, IntervalMonthDayNano, IntervalUnit, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::session_state::SessionState;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use sqlparser::ast::{self, Expr, FunctionArg, FunctionArgExpr, FunctionArguments};
use std::ops::ControlFlow;
use std::sync::Arc;

/// The name `AT TIME ZONE` is planned as.
const AT_TIME_ZONE: &str = "pg_at_time_zone";

/// `make_interval`'s parameters, in order; each defaults to 0.
const MAKE_INTERVAL_PARAMETERS: [&str; 7] =
    ["years", "months", "weeks", "days", "hours", "mins", "secs"];

/// Rewrites, before planning, what DataFusion would plan otherwise: `x AT TIME ZONE
/// z` and `timezone(z, x)` as `pg_at_time_zone(x, z)` (an untyped literal `x` read as
/// a `timestamptz`, as PostgreSQL reads it), `make_interval`'s named arguments as positional ones with
/// their defaults, and `age(x)` as `age(current_date, x)`.
pub fn rewrite(query: &mut ast::Query) {
    let _ = ast::visit_expressions_mut(query, |expr| {
        match expr {
            Expr::AtTimeZone {
                timestamp,
                time_zone,
            } => {
                let value = std::mem::replace(timestamp.as_mut(), Expr::value(ast::Value::Null));
                let zone = std::mem::replace(time_zone.as_mut(), Expr::value(ast::Value::Null));
                *expr = at_time_zone_call(value, zone);
            }
            // `timezone(zone, x)`, the function `AT TIME ZONE` is in PostgreSQL.
            Expr::Function(f) if last(&f.name) == "timezone" => {
                if let Some([zone, value]) = arguments(&f.args).as_deref() {
                    *expr = at_time_zone_call(value.clone(), zone.clone());
                }
            }
            Expr::Function(f) if last(&f.name) == "make_interval" => {
                if let Some(positional) = make_interval_arguments(&f.args) {
                    *expr = call("make_interval", positional);
                }
            }
            Expr::Function(f) if last(&f.name) == "age" => {
                if let Some([only]) = arguments(&f.args).as_deref() {
                    let today = Expr::Cast {
                        kind: ast::CastKind::DoubleColon,
                        expr: Box::new(call("current_date", vec![])),
                        data_type: ast::DataType::Timestamp(None, ast::TimezoneInfo::None),
                        array: false,
                        format: None,
                    };
                    *expr = call("age", vec![today, only.clone()]);
                }
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
}

/// `value AT TIME ZONE zone` as `pg_at_time_zone(value, zone)`, an untyped literal
/// `value` read as a `timestamptz`, as PostgreSQL reads it.
fn at_time_zone_call(value: Expr, zone: Expr) -> Expr {
    let value = match value {
        literal @ Expr::Value(_) => Expr::Cast {
            kind: ast::CastKind::DoubleColon,
            expr: Box::new(literal),
            data_type: ast::DataType::Timestamp(None, ast::TimezoneInfo::Tz),
            array: false,
            format: None,
        },
        other => other,
    };
    call(AT_TIME_ZONE, vec![value, zone])
}

/// A call's arguments when all are plain positional expressions.
fn arguments(args: &FunctionArguments) -> Option<Vec<Expr>> {
    let FunctionArguments::List(list) = args else {
        return None;
    };
    list.args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
            _ => None,
        })
        .collect()
}

/// `make_interval(days => 3)` as `make_interval(0, 0, 0, 3, 0, 0, 0)`; None when the
/// call has no named argument (or one `make_interval` does not have, left for
/// DataFusion to report).
fn make_interval_arguments(args: &FunctionArguments) -> Option<Vec<Expr>> {
    let FunctionArguments::List(list) = args else {
        return None;
    };
    let zero = || Expr::value(ast::Value::Number("0".into(), false));
    let mut out: Vec<Expr> = (0..MAKE_INTERVAL_PARAMETERS.len())
        .map(|_| zero())
        .collect();
    let mut named = false;
    for (position, arg) in list.args.iter().enumerate() {
        let (slot, value) = match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => (position, e),
            FunctionArg::Named {
                name,
                arg: FunctionArgExpr::Expr(e),
                ..
            }
            | FunctionArg::ExprNamed {
                name: Expr::Identifier(name),
                arg: FunctionArgExpr::Expr(e),
                ..
            } => {
                named = true;
                let slot = MAKE_INTERVAL_PARAMETERS
                    .iter()
                    .position(|p| p.eq_ignore_ascii_case(&name.value))?;
                (slot, e)
            }
            _ => return None,
        };
        *out.get_mut(slot)? = value.clone();
    }
    named.then_some(out)
}

fn failed(e: SqlError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// A timestamp, timestamptz or date argument as microseconds of wall-clock time (a
/// timestamptz's in the session's zone, UTC), with whether it had a zone.
fn wall_micros(value: &ScalarValue) -> Result<Option<(i64, bool)>> {
    Ok(match value {
        ScalarValue::Date32(days) => days.map(|d| (i64::from(d) * MICROS_PER_DAY, false)),
        ScalarValue::TimestampNanosecond(ns, zone) => {
            ns.map(|ns| (ns.div_euclid(1000), zone.is_some()))
        }
        ScalarValue::TimestampMicrosecond(us, zone) => us.map(|us| (us, zone.is_some())),
        ScalarValue::TimestampMillisecond(ms, zone) => ms.map(|ms| (ms * 1000, zone.is_some())),
        ScalarValue::TimestampSecond(s, zone) => s.map(|s| (s * 1_000_000, zone.is_some())),
        other if other.is_null() => None,
        other => {
            return Err(failed(SqlError::new(
                SqlState::UndefinedFunction,
                format!("a date or time was expected, not {}", other.data_type()),
            )))
        }
    })
}

fn naive(micros: i64) -> Result<NaiveDateTime> {
    DateTime::from_timestamp_micros(micros)
        .map(|at| at.naive_utc())
        .ok_or_else(|| failed(datetime::timestamp_out_of_range()))
}

fn timestamp(micros: i64, zoned: bool) -> ScalarValue {
    let zone = zoned.then(|| Arc::from("+00:00"));
    ScalarValue::TimestampNanosecond(micros.checked_mul(1000), zone)
}

fn interval_type() -> DataType {
    DataType::Interval(IntervalUnit::MonthDayNano)
}

fn is_time(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Timestamp(..) | DataType::Date32 | DataType::Null
    )
}

/// A function over dates and times whose argument types decide its result type.
#[derive(Debug, PartialEq, Eq, Hash)]
struct DateTimeFunction {
    name: &'static str,
    signature: Signature,
}

impl ScalarUDFImpl for DateTimeFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        let wrong = || {
            let types: Vec<String> = args.iter().map(ToString::to_string).collect();
            let name = if self.name == AT_TIME_ZONE {
                "timezone"
            } else {
                self.name
            };
            Err(failed(SqlError::new(
                SqlState::UndefinedFunction,
                format!("function {name}({}) does not exist", types.join(", ")),
            )))
        };
        match (self.name, args) {
            ("to_char", [DataType::Interval(_), _]) => Err(failed(SqlError::unsupported(
                "to_char of an interval is not supported yet",
            ))),
            ("to_char", [value, _]) if is_time(value) || value.is_numeric() => Ok(DataType::Utf8),
            // A date is cast to a timestamptz, midnight in the session's zone, as
            // PostgreSQL casts it here.
            (AT_TIME_ZONE, [DataType::Timestamp(_, Some(_)) | DataType::Date32, _]) => {
                Ok(DataType::Timestamp(TimeUnit::Nanosecond, None))
            }
            (AT_TIME_ZONE, [value, _]) if is_time(value) => Ok(DataType::Timestamp(
                TimeUnit::Nanosecond,
                Some("+00:00".into()),
            )),
            ("age", [a, b]) if is_time(a) && is_time(b) => Ok(interval_type()),
            ("make_interval", args) if args.len() <= MAKE_INTERVAL_PARAMETERS.len() => {
                Ok(interval_type())
            }
            _ => wrong(),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let returns = args.return_field.data_type().clone();
        let session = super::zone_setting::zone(&args.config_options);
        super::udf::row_by_row(args, &returns, |values| match self.name {
            "to_char" => to_char(values, &session),
            AT_TIME_ZONE => {
                Ok(at_time_zone(values, &session)?.unwrap_or(ScalarValue::try_from(&returns)?))
            }
            "age" => age(values, &session),
            _ => make_interval(values),
        })
    }
}

/// `to_char(value, template)`; a `timestamptz` shown in the session's zone.
fn to_char(values: &[ScalarValue], session: &TimeZone) -> Result<ScalarValue> {
    let [value, template] = values else {
        return Ok(ScalarValue::Utf8(None));
    };
    if value.data_type().is_numeric() {
        return number_to_char(value, template);
    }
    let (Some((micros, zoned)), Some(template)) =
        (wall_micros(value)?, super::udf::string(Some(template)))
    else {
        return Ok(ScalarValue::Utf8(None));
    };
    if !zoned {
        return Ok(ScalarValue::Utf8(Some(pg_to_char::format(
            naive(micros)?,
            None,
            template,
        ))));
    }
    let (east_seconds, abbreviation) = session.shown_at(micros).map_err(failed)?;
    let local = datetime::to_local(micros, session).map_err(failed)?;
    let shown = ShownZone {
        east_seconds,
        abbreviation,
    };
    Ok(ScalarValue::Utf8(Some(pg_to_char::format(
        naive(local)?,
        Some(&shown),
        template,
    ))))
}

/// `value AT TIME ZONE zone`; None for NULL.
/// `to_char` of a number: a float as the decimal PostgreSQL converts it to first (15
/// significant digits, 6 for a `real`), any other number as its exact text.
fn number_to_char(value: &ScalarValue, template: &ScalarValue) -> Result<ScalarValue> {
    let Some(template) = super::udf::string(Some(template)) else {
        return Ok(ScalarValue::Utf8(None));
    };
    let text = match value {
        v if v.is_null() => return Ok(ScalarValue::Utf8(None)),
        ScalarValue::Float64(Some(f)) if f.is_finite() => format!("{f:.14e}"),
        ScalarValue::Float32(Some(f)) if f.is_finite() => format!("{f:.5e}"),
        ScalarValue::Float64(_) | ScalarValue::Float32(_) => {
            return Err(failed(SqlError::unsupported(
                "to_char of an infinite or NaN float is not supported yet",
            )))
        }
        other => match other.cast_to(&DataType::Utf8)? {
            ScalarValue::Utf8(Some(text)) => text,
            _ => return Ok(ScalarValue::Utf8(None)),
        },
    };
    crate::sql::pg_number_format::format(&text, template)
        .map(|out| ScalarValue::Utf8(Some(out)))
        .map_err(failed)
}

fn at_time_zone(values: &[ScalarValue], session: &TimeZone) -> Result<Option<ScalarValue>> {
    let [value, zone] = values else {
        return Ok(None);
    };
    let Some(name) = super::udf::string(Some(zone)) else {
        if zone.is_null() {
            return Ok(None);
        }
        return Err(failed(SqlError::unsupported(
            "AT TIME ZONE takes a zone's name; an interval there is not supported yet",
        )));
    };
    let zone = TimeZone::for_at_time_zone(name).ok_or_else(|| {
        failed(SqlError::new(
            SqlState::InvalidParameterValue,
            format!("time zone \"{name}\" not recognized"),
        ))
    })?;
    let Some((micros, zoned)) = wall_micros(value)? else {
        return Ok(None);
    };
    if zoned || matches!(value, ScalarValue::Date32(_)) {
        let micros = match value {
            ScalarValue::Date32(_) => datetime::from_local(micros, session).map_err(failed)?,
            _ => micros,
        };
        let local = datetime::to_local(micros, &zone).map_err(failed)?;
        Ok(Some(timestamp(local, false)))
    } else {
        let instant = datetime::from_local(micros, &zone).map_err(failed)?;
        Ok(Some(timestamp(instant, true)))
    }
}

/// `age(a, b)`: `a - b` in years, months and days, then time, as PostgreSQL's
/// `timestamp_age` takes the two apart field by field and borrows from the next field
/// up (a month's days are those of the month `b` is in, or `a` when `a < b`).
fn age(values: &[ScalarValue], session: &TimeZone) -> Result<ScalarValue> {
    let [a, b] = values else {
        return Ok(ScalarValue::IntervalMonthDayNano(None));
    };
    let (Some(a), Some(b)) = (wall_micros(a)?, wall_micros(b)?) else {
        return Ok(ScalarValue::IntervalMonthDayNano(None));
    };
    // `timestamptz`s are compared on the session's wall clock.
    let local = |(micros, zoned): (i64, bool)| match zoned {
        true => datetime::to_local(micros, session).map_err(failed),
        false => Ok(micros),
    };
    let (a, b) = (local(a)?, local(b)?);
    let (t1, t2) = (naive(a)?, naive(b)?);
    let sub = |x: u32, y: u32| i64::from(x) - i64::from(y);
    let mut micros = i64::from(t1.nanosecond() / 1000) - i64::from(t2.nanosecond() / 1000);
    let mut fields = [
        sub(t1.second(), t2.second()),
        sub(t1.minute(), t2.minute()),
        sub(t1.hour(), t2.hour()),
        sub(t1.day(), t2.day()),
        sub(t1.month(), t2.month()),
        i64::from(t1.year()) - i64::from(t2.year()),
    ];
    let negative = a < b;
    if negative {
        micros = -micros;
        fields.iter_mut().for_each(|f| *f = -*f);
    }
    let [seconds, minutes, hours, days, months, years] = &mut fields;
    while micros < 0 {
        micros += 1_000_000;
        *seconds -= 1;
    }
    while *seconds < 0 {
        *seconds += 60;
        *minutes -= 1;
    }
    while *minutes < 0 {
        *minutes += 60;
        *hours -= 1;
    }
    while *hours < 0 {
        *hours += 24;
        *days -= 1;
    }
    let borrowed_month = if negative { t1 } else { t2 };
    while *days < 0 {
        *days += days_in_month(borrowed_month.year(), borrowed_month.month());
        *months -= 1;
    }
    while *months < 0 {
        *months += 12;
        *years -= 1;
    }
    let sign = if negative { -1 } else { 1 };
    let time = ((*hours * 60 + *minutes) * 60 + *seconds) * 1_000_000 + micros;
    let months = i32::try_from(sign * (*years * 12 + *months))
        .map_err(|_| failed(interval_out_of_range()))?;
    let days = i32::try_from(sign * *days).map_err(|_| failed(interval_out_of_range()))?;
    Ok(ScalarValue::IntervalMonthDayNano(Some(
        IntervalMonthDayNano::new(months, days, sign * time * 1000),
    )))
}

fn days_in_month(year: i32, month: u32) -> i64 {
    let next = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1)
    };
    let first = NaiveDate::from_ymd_opt(year, month, 1);
    match (first, next) {
        (Some(first), Some(next)) => (next - first).num_days(),
        _ => 30,
    }
}

fn interval_out_of_range() -> SqlError {
    SqlError::new(SqlState::DatetimeFieldOverflow, "interval out of range")
}

/// `make_interval(years, months, weeks, days, hours, mins, secs)`, missing trailing
/// arguments 0.
fn make_interval(values: &[ScalarValue]) -> Result<ScalarValue> {
    if values.iter().any(ScalarValue::is_null) {
        return Ok(ScalarValue::IntervalMonthDayNano(None));
    }
    let mut whole = [0i64; 6];
    for (slot, value) in whole.iter_mut().zip(values) {
        *slot = super::udf::int(Some(value)).ok_or_else(|| {
            failed(SqlError::new(
                SqlState::UndefinedFunction,
                format!("make_interval takes integers, not {}", value.data_type()),
            ))
        })?;
    }
    let seconds = match values.get(6) {
        Some(v) => match v.cast_to(&DataType::Float64)? {
            ScalarValue::Float64(Some(s)) => s,
            _ => 0.0,
        },
        None => 0.0,
    };
    let [years, months, weeks, days, hours, minutes] = whole;
    let out_of_range = || failed(interval_out_of_range());
    let months = years
        .checked_mul(12)
        .and_then(|m| m.checked_add(months))
        .and_then(|m| i32::try_from(m).ok())
        .ok_or_else(out_of_range)?;
    let days = weeks
        .checked_mul(7)
        .and_then(|d| d.checked_add(days))
        .and_then(|d| i32::try_from(d).ok())
        .ok_or_else(out_of_range)?;
    let second_micros = (seconds * 1e6).round();
    if !second_micros.is_finite() || second_micros.abs() > 9.2e18 {
        return Err(out_of_range());
    }
    let micros = hours
        .checked_mul(3_600_000_000)
        .and_then(|h| {
            minutes
                .checked_mul(60_000_000)
                .and_then(|m| h.checked_add(m))
        })
        .and_then(|t| t.checked_add(second_micros as i64))
        .ok_or_else(out_of_range)?;
    Ok(ScalarValue::IntervalMonthDayNano(Some(
        IntervalMonthDayNano::new(
            months,
            days,
            micros.checked_mul(1000).ok_or_else(out_of_range)?,
        ),
    )))
}

/// Registers `to_char`, `pg_at_time_zone`, `age` and `make_interval`.
pub fn register(state: &mut SessionState) -> Result<()> {
    for name in ["to_char", AT_TIME_ZONE, "age", "make_interval"] {
        let function = DateTimeFunction {
            name,
            signature: Signature::one_of(
                vec![TypeSignature::Nullary, TypeSignature::VariadicAny],
                Volatility::Immutable,
            ),
        };
        state.register_udf(Arc::new(ScalarUDF::new_from_impl(function)))?;
    }
    Ok(())
}
