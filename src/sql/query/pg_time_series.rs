//! `generate_series` of timestamps, as PostgreSQL's: each value is the one before plus
//! the step, months and days on the session's wall clock for a `timestamptz`
//! (`pg_time_zone`), so a monthly series from January 30th runs 30, 29 (February), 29
//! and a daily one keeps midnight across a change of clocks. DataFusion's counts each
//! value from the start, in UTC. Its quoted bounds and step are read as the start's
//! type and an interval, as PostgreSQL resolves them. `pg_set_functions` calls it for a
//! `generate_series` whose arguments are plainly times.

use super::pg_time_zone::plus_interval;
use super::zone_setting::zone;
use crate::sql::datetime::TimeZone;
use crate::sql::sql_types::SqlError;
use crate::sqlstate::SqlState;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, TimestampMicrosecondArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Field, IntervalMonthDayNanoType, IntervalUnit, TimeUnit,
};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// Most values one series may have: a series is built whole before its rows are read,
/// so an endless one (a microsecond step over years) is refused, not run out of memory.
const MOST_VALUES: usize = 10_000_000;

/// The name the series of timestamps is called by: `pg_set_functions` gives it to a
/// `generate_series` whose arguments are plainly times.
pub const TIME_SERIES: &str = "pg_time_series";

/// Registers `pg_time_series`.
pub fn register(state: &mut datafusion::execution::session_state::SessionState) -> Result<()> {
    datafusion::execution::FunctionRegistry::register_udf(
        state,
        Arc::new(ScalarUDF::new_from_impl(TimeSeriesFunction {
            signature: Signature::user_defined(Volatility::Stable),
        })),
    )?;
    Ok(())
}

/// The type of a series over `args`: its first timestamp bound's, a date's being a
/// timestamptz's, as PostgreSQL picks for it.
fn element_type(args: &[DataType]) -> Result<DataType> {
    args.iter()
        .take(2)
        .find_map(|t| match t {
            DataType::Timestamp(_, zone) => {
                Some(DataType::Timestamp(TimeUnit::Microsecond, zone.clone()))
            }
            DataType::Date32 => Some(DataType::Timestamp(
                TimeUnit::Microsecond,
                Some(super::convert::UTC.into()),
            )),
            _ => None,
        })
        .ok_or_else(|| {
            let types: Vec<String> = args.iter().map(ToString::to_string).collect();
            failed(SqlError::new(
                SqlState::UndefinedFunction,
                format!(
                    "function generate_series({}) does not exist",
                    types.join(", ")
                ),
            ))
        })
}

/// `pg_time_series(start, stop, step)`: the series as one list, which the SELECT list
/// unnests into rows.
#[derive(Debug, PartialEq, Eq, Hash)]
struct TimeSeriesFunction {
    signature: Signature,
}

impl ScalarUDFImpl for TimeSeriesFunction {
    fn name(&self) -> &str {
        TIME_SERIES
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        if args.len() != 3 {
            return Err(failed(SqlError::new(
                SqlState::UndefinedFunction,
                "generate_series of timestamps takes a start, a stop and a step",
            )));
        }
        let element = element_type(args)?;
        Ok(vec![
            element.clone(),
            element,
            DataType::Interval(IntervalUnit::MonthDayNano),
        ])
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        let element = element_type(args)?;
        Ok(DataType::List(Arc::new(Field::new_list_field(
            element, true,
        ))))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalar = super::udf::all_scalar(&args);
        let element_type = args
            .args
            .first()
            .map(ColumnarValue::data_type)
            .unwrap_or(DataType::Timestamp(TimeUnit::Microsecond, None));
        let element_zone = match &element_type {
            DataType::Timestamp(_, zone) => zone.clone(),
            _ => None,
        };
        // A wall-clock series moves on a clock without changes.
        let zone = match element_zone {
            Some(_) => zone(&args.config_options),
            None => TimeZone::default(),
        };
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let [start, stop, step] = arrays.as_slice() else {
            return Err(DataFusionError::Internal(
                "pg_time_series takes a start, a stop and a step".into(),
            ));
        };
        let micros = |a: &ArrayRef| -> Result<TimestampMicrosecondArray> {
            Ok(cast(
                a,
                &DataType::Timestamp(TimeUnit::Microsecond, element_zone.clone()),
            )?
            .as_primitive()
            .clone())
        };
        let (start, stop) = (micros(start)?, micros(stop)?);
        let step = cast(step, &DataType::Interval(IntervalUnit::MonthDayNano))?;
        let step = step.as_primitive::<IntervalMonthDayNanoType>();
        let mut lists: Vec<Option<Vec<Option<i64>>>> = Vec::with_capacity(start.len());
        for row in 0..start.len() {
            if start.is_null(row) || stop.is_null(row) || step.is_null(row) {
                lists.push(None);
                continue;
            }
            let values = series(start.value(row), stop.value(row), step.value(row), &zone)?;
            lists.push(Some(values.into_iter().map(Some).collect()));
        }
        let field = Arc::new(Field::new_list_field(element_type.clone(), true));
        let mut builder = datafusion::arrow::array::ListBuilder::new(
            datafusion::arrow::array::TimestampMicrosecondBuilder::new()
                .with_timezone_opt(element_zone),
        )
        .with_field(field);
        for list in lists {
            match list {
                Some(values) => {
                    builder.values().extend(values);
                    builder.append(true);
                }
                None => builder.append(false),
            }
        }
        let out: ListArray = builder.finish();
        let out: ArrayRef = Arc::new(out);
        super::udf::result(out, scalar)
    }
}

fn failed(e: SqlError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// The values from `start` to `stop` (inclusive) by `step`, each from the one before.
fn series(
    start: i64,
    stop: i64,
    step: datafusion::arrow::datatypes::IntervalMonthDayNano,
    zone: &TimeZone,
) -> Result<Vec<i64>> {
    let span = i128::from(step.months) * 30 * 86_400_000_000_000
        + i128::from(step.days) * 86_400_000_000_000
        + i128::from(step.nanoseconds);
    if span == 0 {
        return Err(failed(SqlError::new(
            SqlState::InvalidParameterValue,
            "step size cannot equal zero",
        )));
    }
    let mut values = Vec::new();
    let mut at = start;
    while (span > 0 && at <= stop) || (span < 0 && at >= stop) {
        if values.len() == MOST_VALUES {
            return Err(failed(SqlError::new(
                SqlState::ProgramLimitExceeded,
                format!("generate_series of timestamps makes at most {MOST_VALUES} values"),
            )));
        }
        values.push(at);
        let next = plus_interval(at, step.months, step.days, step.nanoseconds / 1000, zone)
            .map_err(failed)?;
        if next == at {
            break;
        }
        at = next;
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::datetime;
    use datafusion::arrow::datatypes::IntervalMonthDayNano;

    fn at(text: &str) -> i64 {
        datetime::parse_timestamp(text, Some(&TimeZone::default())).expect(text)
    }

    #[test]
    fn each_month_follows_the_one_before() {
        let months = series(
            at("2024-01-30 00:00+00"),
            at("2024-04-01 00:00+00"),
            IntervalMonthDayNano::new(1, 0, 0),
            &TimeZone::default(),
        )
        .expect("a series");
        let expected =
            ["2024-01-30", "2024-02-29", "2024-03-29"].map(|d| at(&format!("{d} 00:00+00")));
        assert_eq!(months, expected);
    }

    #[test]
    fn a_zero_step_is_refused() {
        let zero = series(
            0,
            10,
            IntervalMonthDayNano::new(0, 0, 0),
            &TimeZone::default(),
        );
        assert!(zero.is_err());
    }
}
