//! The session's `TimeZone` in DataFusion's plans. A `timestamptz` is an instant in
//! Arrow (UTC microseconds, labelled `+00:00`); what depends on the zone is done by
//! functions that read the session's zone from the plan's config (`zone_setting`), as
//! PostgreSQL does it:
//! - a `timestamptz` becomes the wall-clock `timestamp`, `date` or `time` it is in the
//!   zone, and a `timestamp` or `date` the instant it names there (`pg_local_time`,
//!   `pg_instant`), wherever a cast between them is, written or implied by a
//!   comparison (`tz = ts`, `tz >= date '2024-07-01'`);
//! - `date_trunc` and `date_part` of a `timestamptz` work on its wall-clock time;
//! - `timestamptz ± interval` adds months and days on the wall clock and the rest as
//!   elapsed time (`pg_timestamptz_plus`), so a day is 23 hours across a change to
//!   summer time;
//! - `current_date` is the date in the zone, `localtimestamp` the wall-clock time
//!   (`pg_time`);
//! - a `timestamptz` written as JSON is its text in the zone (`pg_timestamptz_json`);
//! - `extract(timezone | timezone_hour | timezone_minute ...)` is the zone's offset
//!   (`pg_zone_offset`);
//! - a date or time cast to text, written or implied (`'at ' || tz`), is PostgreSQL's
//!   text (`pg_value_text`), not Arrow's `2024-03-01T10:00:00Z`.
//!
//! In UTC only the last two apply: the rest would change nothing. A plan made in one
//! zone is made again in another (the session's `PlannedFor`).

use super::convert::UTC;
use super::pg_integer_overflow::rewrite_expressions;
use super::zone_setting::zone;
use crate::sql::datetime::{self, TimeZone, MICROS_PER_DAY};
use crate::sql::sql_types::SqlError;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, TimestampMicrosecondArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, IntervalMonthDayNanoType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    BinaryExpr, Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TryCast, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::{Arc, LazyLock};

/// The analyzer rule; see the module's note. It runs after DataFusion's type coercion,
/// so the casts comparisons imply are there to rewrite.
#[derive(Debug)]
pub struct ZonedTimes;

impl AnalyzerRule for ZonedTimes {
    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> Result<LogicalPlan> {
        let plan = rewrite_everywhere(plan, super::pg_time_text::time_text)?;
        let plan = rewrite_everywhere(plan, zone_fields)?;
        if zone(config).is_utc() {
            return Ok(plan);
        }
        let plan = rewrite_everywhere(plan, differences)?;
        rewrite_everywhere(plan, zoned)
    }

    fn name(&self) -> &str {
        "pgwide_zoned_times"
    }
}

/// `rewrite_expressions`, and the conditions of joins too.
fn rewrite_everywhere(
    plan: LogicalPlan,
    rule: fn(Expr, &DFSchema) -> Result<Transformed<Expr>>,
) -> Result<LogicalPlan> {
    let plan = rewrite_expressions(plan, rule)?;
    plan.transform_up_with_subqueries(|node| match node {
        LogicalPlan::Join(_) => {
            let schema = Arc::clone(node.schema());
            node.map_expressions(|e| e.transform_up(|e| rule(e, &schema)))
        }
        other => Ok(Transformed::no(other)),
    })
    .map(|transformed| transformed.data)
}

fn is_text(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
    )
}

fn is_instant(ty: &DataType) -> bool {
    matches!(ty, DataType::Timestamp(_, Some(_)))
}

fn is_local(ty: &DataType) -> bool {
    matches!(ty, DataType::Timestamp(_, None))
}

/// `extract(timezone | timezone_hour | timezone_minute FROM x)` of a `timestamptz`:
/// the session zone's offset east of UTC at `x` (DataFusion has no such field).
fn zone_fields(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Expr::ScalarFunction(call) = expr else {
        return Ok(Transformed::no(expr));
    };
    let field = match call.args.first() {
        Some(Expr::Literal(ScalarValue::Utf8(Some(f)) | ScalarValue::Utf8View(Some(f)), _)) => {
            f.to_ascii_lowercase()
        }
        _ => String::new(),
    };
    let unit = match field.as_str() {
        "timezone" => 1,
        "timezone_hour" => 3600,
        "timezone_minute" => 60,
        _ => 0,
    };
    if call.func.name() != "date_part" || call.args.len() != 2 || unit == 0 {
        return Ok(Transformed::no(Expr::ScalarFunction(call)));
    }
    if !is_instant(&call.args[1].get_type(schema)?) {
        return Ok(Transformed::no(Expr::ScalarFunction(call)));
    }
    let offset = Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::clone(&ZONE_OFFSET),
        vec![call.args[1].clone()],
    ));
    // Seconds east; its hours and minutes, each with the offset's sign.
    let part = match unit {
        1 => offset,
        3600 => Expr::BinaryExpr(BinaryExpr::new(
            Box::new(offset),
            Operator::Divide,
            Box::new(Expr::Literal(ScalarValue::Int64(Some(3600)), None)),
        )),
        _ => Expr::BinaryExpr(BinaryExpr::new(
            Box::new(Expr::BinaryExpr(BinaryExpr::new(
                Box::new(offset),
                Operator::Modulo,
                Box::new(Expr::Literal(ScalarValue::Int64(Some(3600)), None)),
            ))),
            Operator::Divide,
            Box::new(Expr::Literal(ScalarValue::Int64(Some(60)), None)),
        )),
    };
    Ok(Transformed::yes(Expr::Cast(Cast::new(
        Box::new(part),
        DataType::Float64,
    ))))
}

/// The zone's part of one expression; see the module's note.
fn zoned(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let ty = |e: &Expr| e.get_type(schema);
    Ok(match expr {
        Expr::Cast(Cast { expr: inner, field }) => {
            match converted(*inner.clone(), &ty(&inner)?, field.data_type()) {
                Some(converted) => Transformed::yes(converted),
                None => Transformed::no(Expr::Cast(Cast { expr: inner, field })),
            }
        }
        Expr::TryCast(TryCast { expr: inner, field }) => {
            match converted(*inner.clone(), &ty(&inner)?, field.data_type()) {
                Some(converted) => Transformed::yes(converted),
                None => Transformed::no(Expr::TryCast(TryCast { expr: inner, field })),
            }
        }
        Expr::ScalarFunction(call) if call.func.name() == "date_trunc" && call.args.len() == 2 => {
            if !is_instant(&ty(&call.args[1])?) {
                return Ok(Transformed::no(Expr::ScalarFunction(call)));
            }
            let ScalarFunction { func, mut args } = call;
            let original = args[1].clone();
            args[1] = local_time(original.clone());
            let truncated = Expr::ScalarFunction(ScalarFunction::new_udf(func, args));
            Transformed::yes(Expr::ScalarFunction(ScalarFunction::new_udf(
                Arc::clone(&INSTANT_NEAR),
                vec![truncated, original],
            )))
        }
        Expr::ScalarFunction(call)
            if call.func.name() == "date_part"
                && call.args.len() == 2
                && !is_epoch(&call.args[0]) =>
        {
            if !is_instant(&ty(&call.args[1])?) {
                return Ok(Transformed::no(Expr::ScalarFunction(call)));
            }
            let ScalarFunction { func, mut args } = call;
            args[1] = local_time(args[1].clone());
            Transformed::yes(Expr::ScalarFunction(ScalarFunction::new_udf(func, args)))
        }
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(op, Operator::Plus | Operator::Minus) =>
        {
            let interval = |t: &DataType| matches!(t, DataType::Interval(_));
            let (l, r) = (ty(&left)?, ty(&right)?);
            match (
                is_instant(&l) && interval(&r),
                op,
                interval(&l) && is_instant(&r),
            ) {
                (true, _, _) => Transformed::yes(plus(*left, *right, op == Operator::Minus)),
                (_, Operator::Plus, true) => Transformed::yes(plus(*right, *left, false)),
                _ => Transformed::no(Expr::BinaryExpr(BinaryExpr { left, op, right })),
            }
        }
        Expr::ScalarFunction(mut call) if JSON_BUILDERS.contains(&call.func.name()) => {
            let changed = json_times(&mut call.args, schema)?;
            transformed(Expr::ScalarFunction(call), changed)
        }
        Expr::AggregateFunction(mut call) if JSON_BUILDERS.contains(&call.func.name()) => {
            let changed = json_times(&mut call.params.args, schema)?;
            transformed(Expr::AggregateFunction(call), changed)
        }
        other => Transformed::no(other),
    })
}

fn transformed(expr: Expr, changed: bool) -> Transformed<Expr> {
    match changed {
        true => Transformed::yes(expr),
        false => Transformed::no(expr),
    }
}

/// The functions that write their arguments as JSON values.
const JSON_BUILDERS: [&str; 8] = [
    "to_json",
    "to_jsonb",
    "json_build_object",
    "jsonb_build_object",
    "json_build_array",
    "jsonb_build_array",
    "json_agg",
    "jsonb_agg",
];

/// Makes each `timestamptz` of `args` its JSON text in the session's zone, a string
/// as JSON writes it (`"2024-03-31T03:30:00+02:00"`); whether any was.
fn json_times(args: &mut [Expr], schema: &DFSchema) -> Result<bool> {
    let mut changed = false;
    for arg in args.iter_mut() {
        if is_instant(&arg.get_type(schema)?) {
            *arg = Expr::ScalarFunction(ScalarFunction::new_udf(
                Arc::clone(&JSON_TEXT),
                vec![arg.clone()],
            ));
            changed = true;
        }
    }
    Ok(changed)
}

/// A difference between a `timestamptz` and a `timestamp` or date: PostgreSQL makes
/// the other an instant too (DataFusion subtracts the raw values, or makes both
/// wall-clock times).
fn differences(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Expr::BinaryExpr(BinaryExpr {
        left,
        op: Operator::Minus,
        right,
    }) = expr
    else {
        return Ok(Transformed::no(expr));
    };
    let (l, r) = (left.get_type(schema)?, right.get_type(schema)?);
    // The instant of one operand, when the other is an instant.
    let as_instant = |e: &Expr, ty: &DataType| -> Result<Option<Expr>> {
        Ok(match e {
            Expr::Cast(Cast { expr: inner, .. }) if is_local(ty) => {
                let from = inner.get_type(schema)?;
                if is_instant(&from) {
                    Some((**inner).clone())
                } else if from == DataType::Date32 || is_local(&from) {
                    Some(instant(e.clone()))
                } else {
                    None
                }
            }
            _ if is_local(ty) => Some(instant(e.clone())),
            _ if is_instant(ty) => Some(e.clone()),
            _ => None,
        })
    };
    let instant_side = |e: &Expr, ty: &DataType| -> Result<bool> {
        Ok(is_instant(ty)
            || matches!(e, Expr::Cast(Cast { expr: inner, .. }) if is_instant(&inner.get_type(schema)?)))
    };
    if !(instant_side(&left, &l)? || instant_side(&right, &r)?)
        || (is_instant(&l) && is_instant(&r))
    {
        return Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Minus,
            right,
        })));
    }
    match (as_instant(&left, &l)?, as_instant(&right, &r)?) {
        (Some(a), Some(b)) => Ok(Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(
            Box::new(a),
            Operator::Minus,
            Box::new(b),
        )))),
        _ => Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Minus,
            right,
        }))),
    }
}

/// A cast between a `timestamptz` and a wall-clock type (or text read as one) done in
/// the session's zone; `None` for any other cast.
fn converted(inner: Expr, from: &DataType, to: &DataType) -> Option<Expr> {
    let cast_to = |e: Expr, ty: DataType| Expr::Cast(Cast::new(Box::new(e), ty));
    let local = DataType::Timestamp(TimeUnit::Microsecond, None);
    Some(match (from, to) {
        (f, t) if is_instant(f) && is_local(t) => cast_to(local_time(inner), t.clone()),
        (f, DataType::Date32 | DataType::Time64(_)) if is_instant(f) => {
            cast_to(local_time(inner), to.clone())
        }
        (f, t) if is_local(f) && is_instant(t) => cast_to(instant(inner), t.clone()),
        (DataType::Date32, t) if is_instant(t) => {
            cast_to(instant(cast_to(inner, local)), t.clone())
        }
        (f, t) if is_text(f) && is_instant(t) => cast_to(
            Expr::ScalarFunction(ScalarFunction::new_udf(
                Arc::clone(&TIMESTAMPTZ_IN),
                vec![inner],
            )),
            t.clone(),
        ),
        _ => return None,
    })
}

fn is_epoch(field: &Expr) -> bool {
    matches!(
        field,
        Expr::Literal(ScalarValue::Utf8(Some(f)) | ScalarValue::Utf8View(Some(f)), _)
            if f.eq_ignore_ascii_case("epoch")
    )
}

/// `x`, a `timestamptz`, as the wall-clock `timestamp` it is in the session's zone.
fn local_time(x: Expr) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(&LOCAL_TIME), vec![x]))
}

/// `x`, a wall-clock `timestamp`, as the instant it names in the session's zone.
fn instant(x: Expr) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(&INSTANT), vec![x]))
}

fn plus(instant: Expr, interval: Expr, minus: bool) -> Expr {
    let function = if minus {
        &TIMESTAMPTZ_MINUS
    } else {
        &TIMESTAMPTZ_PLUS
    };
    Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::clone(function),
        vec![instant, interval],
    ))
}

/// What one of this module's functions computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Conversion {
    /// `pg_local_time(timestamptz)`.
    LocalTime,
    /// `pg_instant(timestamp)`.
    Instant,
    /// `pg_instant_near(timestamp, timestamptz)`: a repeated wall-clock time read with
    /// the second argument's offset (`datetime::from_local_near`).
    InstantNear,
    /// `pg_timestamptz_in(text)`.
    ReadText,
    /// `pg_timestamptz_json(timestamptz)`: its JSON text.
    JsonText,
    /// `pg_zone_offset(timestamptz)`: the zone's offset east of UTC there, in seconds.
    Offset,
    /// `pg_timestamptz_plus(timestamptz, interval)`, or minus.
    Plus { minus: bool },
}

static LOCAL_TIME: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| udf(Conversion::LocalTime));
static INSTANT: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| udf(Conversion::Instant));
static INSTANT_NEAR: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| udf(Conversion::InstantNear));
static TIMESTAMPTZ_IN: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| udf(Conversion::ReadText));
static JSON_TEXT: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| udf(Conversion::JsonText));
static ZONE_OFFSET: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| udf(Conversion::Offset));
static TIMESTAMPTZ_PLUS: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| udf(Conversion::Plus { minus: false }));
static TIMESTAMPTZ_MINUS: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| udf(Conversion::Plus { minus: true }));

fn udf(conversion: Conversion) -> Arc<ScalarUDF> {
    let arguments = match conversion {
        Conversion::Plus { .. } | Conversion::InstantNear => 2,
        _ => 1,
    };
    Arc::new(ScalarUDF::new_from_impl(ZoneFunction {
        conversion,
        signature: Signature::any(arguments, Volatility::Stable),
    }))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct ZoneFunction {
    conversion: Conversion,
    signature: Signature,
}

fn instant_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()))
}

impl ScalarUDFImpl for ZoneFunction {
    fn name(&self) -> &str {
        match self.conversion {
            Conversion::LocalTime => "pg_local_time",
            Conversion::Instant => "pg_instant",
            Conversion::InstantNear => "pg_instant_near",
            Conversion::ReadText => "pg_timestamptz_in",
            Conversion::JsonText => "pg_timestamptz_json",
            Conversion::Offset => "pg_zone_offset",
            Conversion::Plus { minus: false } => "pg_timestamptz_plus",
            Conversion::Plus { minus: true } => "pg_timestamptz_minus",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(match self.conversion {
            Conversion::LocalTime => DataType::Timestamp(TimeUnit::Microsecond, None),
            Conversion::JsonText => DataType::Utf8,
            Conversion::Offset => DataType::Int64,
            _ => instant_type(),
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let zone = zone(&args.config_options);
        let scalar = super::udf::all_scalar(&args);
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let first = arrays
            .first()
            .ok_or_else(|| DataFusionError::Internal(format!("{} takes a value", self.name())))?;
        let out: ArrayRef = match self.conversion {
            Conversion::LocalTime => {
                let micros = micros_of(first, Some(UTC.into()))?;
                Arc::new(map_micros(&micros, |m| datetime::to_local(m, &zone))?)
            }
            Conversion::Instant => {
                let micros = micros_of(first, None)?;
                Arc::new(
                    map_micros(&micros, |m| datetime::from_local(m, &zone))?.with_timezone(UTC),
                )
            }
            Conversion::InstantNear => {
                let micros = micros_of(first, None)?;
                let near = arrays.get(1).ok_or_else(|| {
                    DataFusionError::Internal("pg_instant_near takes an instant".into())
                })?;
                let near = micros_of(near, Some(UTC.into()))?;
                let read: Result<TimestampMicrosecondArray> = micros
                    .iter()
                    .zip(near.iter())
                    .map(|(m, n)| match (m, n) {
                        (Some(m), Some(n)) => datetime::from_local_near(m, &zone, n)
                            .map(Some)
                            .map_err(external),
                        (Some(m), None) => {
                            datetime::from_local(m, &zone).map(Some).map_err(external)
                        }
                        (None, _) => Ok(None),
                    })
                    .collect();
                Arc::new(read?.with_timezone(UTC))
            }
            Conversion::Offset => {
                let micros = micros_of(first, Some(UTC.into()))?;
                let offsets: Result<datafusion::arrow::array::Int64Array> = micros
                    .iter()
                    .map(|m| {
                        m.map(|m| zone.shown_at(m).map(|(east, _)| i64::from(east)))
                            .transpose()
                            .map_err(external)
                    })
                    .collect();
                Arc::new(offsets?)
            }
            Conversion::JsonText => {
                let micros = micros_of(first, Some(UTC.into()))?;
                let texts: Result<datafusion::arrow::array::StringArray> = micros
                    .iter()
                    .map(|m| {
                        m.map(|m| super::pg_json_functions::timestamptz_json(m, &zone))
                            .transpose()
                            .map_err(external)
                    })
                    .collect();
                Arc::new(texts?)
            }
            Conversion::ReadText => {
                let texts = cast(first, &DataType::Utf8)?;
                let texts = texts.as_string::<i32>();
                let read: Result<TimestampMicrosecondArray> = texts
                    .iter()
                    .map(|text| {
                        text.map(|t| datetime::parse_timestamp(t, Some(&zone)))
                            .transpose()
                            .map_err(external)
                    })
                    .collect();
                Arc::new(read?.with_timezone(UTC))
            }
            Conversion::Plus { minus } => {
                let micros = micros_of(first, Some(UTC.into()))?;
                let intervals = arrays.get(1).ok_or_else(|| {
                    DataFusionError::Internal("pg_timestamptz_plus takes an interval".into())
                })?;
                let intervals = cast(
                    intervals,
                    &DataType::Interval(datafusion::arrow::datatypes::IntervalUnit::MonthDayNano),
                )?;
                let intervals = intervals.as_primitive::<IntervalMonthDayNanoType>();
                let sums: Result<TimestampMicrosecondArray> = (0..micros.len())
                    .map(|i| {
                        if micros.is_null(i) || intervals.is_null(i) {
                            return Ok(None);
                        }
                        let interval = intervals.value(i);
                        let sign = if minus { -1 } else { 1 };
                        plus_interval(
                            micros.value(i),
                            sign * interval.months,
                            sign * interval.days,
                            i64::from(sign) * (interval.nanoseconds / 1000),
                            &zone,
                        )
                        .map(Some)
                        .map_err(external)
                    })
                    .collect();
                Arc::new(sums?.with_timezone(UTC))
            }
        };
        super::udf::result(out, scalar)
    }
}

fn external(e: SqlError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// A timestamp array in microseconds, its instants (or wall-clock times) kept.
fn micros_of(array: &ArrayRef, zone: Option<Arc<str>>) -> Result<TimestampMicrosecondArray> {
    let zone = match array.data_type() {
        DataType::Timestamp(_, Some(own)) => Some(Arc::clone(own)),
        _ => zone,
    };
    let micros = cast(array, &DataType::Timestamp(TimeUnit::Microsecond, zone))?;
    Ok(micros.as_primitive().clone())
}

fn map_micros(
    micros: &TimestampMicrosecondArray,
    f: impl Fn(i64) -> crate::sql::sql_types::SqlResult<i64>,
) -> Result<TimestampMicrosecondArray> {
    micros
        .iter()
        .map(|m| m.map(&f).transpose().map_err(external))
        .collect()
}

/// PostgreSQL's `timestamptz + interval`: months on the wall clock (the day kept, or
/// the month's last), then days on the wall clock, each read back in the zone, then
/// the rest as elapsed time. Infinity stays itself.
pub(super) fn plus_interval(
    micros: i64,
    months: i32,
    days: i32,
    elapsed: i64,
    zone: &TimeZone,
) -> crate::sql::sql_types::SqlResult<i64> {
    if micros == datetime::TIMESTAMP_INFINITY || micros == datetime::TIMESTAMP_MINUS_INFINITY {
        return Ok(micros);
    }
    let mut at = micros;
    if months != 0 {
        let local = datetime::to_local(at, zone)?;
        at = datetime::from_local(datetime::add_months(local, months)?, zone)?;
    }
    if days != 0 {
        let local = datetime::to_local(at, zone)?;
        let moved = i64::from(days)
            .checked_mul(MICROS_PER_DAY)
            .and_then(|d| local.checked_add(d))
            .ok_or_else(datetime::timestamp_out_of_range)?;
        at = datetime::from_local(moved, zone)?;
    }
    at.checked_add(elapsed)
        .ok_or_else(datetime::timestamp_out_of_range)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn berlin() -> TimeZone {
        TimeZone::parse("Europe/Berlin").expect("a zone")
    }

    fn at(text: &str) -> i64 {
        datetime::parse_timestamp(text, Some(&TimeZone::default())).expect(text)
    }

    #[test]
    fn a_day_across_the_change_to_summer_time_is_23_hours() {
        let sum = plus_interval(at("2024-03-30 12:00+00"), 0, 1, 0, &berlin()).expect("sum");
        assert_eq!(sum, at("2024-03-31 11:00+00"));
        let hours = plus_interval(
            at("2024-03-30 12:00+00"),
            0,
            0,
            24 * 3_600_000_000,
            &berlin(),
        );
        assert_eq!(hours.expect("sum"), at("2024-03-31 12:00+00"));
    }

    #[test]
    fn a_month_keeps_the_wall_clock_and_clamps_the_day() {
        let sum = plus_interval(at("2024-01-31 09:00+00"), 1, 0, 0, &berlin()).expect("sum");
        assert_eq!(sum, at("2024-02-29 09:00+00"));
        let summer = plus_interval(at("2024-03-15 09:00+00"), 1, 0, 0, &berlin()).expect("sum");
        assert_eq!(summer, at("2024-04-15 08:00+00"));
    }
}
