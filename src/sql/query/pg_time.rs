//! PostgreSQL's clock functions. `now()`, `current_timestamp`, `transaction_timestamp()`
//! and `localtimestamp` are the start of the transaction (of the statement outside a
//! block), `statement_timestamp()` the start of the statement and `clock_timestamp()`
//! the time it is called. DataFusion folds `now()` into a constant from the start time
//! the session sets before each statement runs (`QueryEngine::physical`); the functions
//! here fold the same way, except `statement_timestamp()`, which `physical` replaces by
//! the statement's start, and `clock_timestamp()`, which is read on every call.

use crate::sql::datetime;
use chrono::{DateTime, Utc};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::execution::session_state::SessionState;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Expr, LogicalPlan, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::sync::Arc;

/// The name `statement_timestamp()` is registered under.
const STATEMENT_TIMESTAMP: &str = "statement_timestamp";

/// Which time a clock function reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Clock {
    /// The transaction's start, with its time zone (`timestamptz`).
    Transaction,
    /// The transaction's start as a local time (`timestamp`) in the session's zone.
    LocalTransaction,
    /// The transaction's start as a date in the session's zone (`current_date`).
    LocalDate,
    /// The statement's start.
    Statement,
    /// Now, on every call.
    Wall,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct ClockFunction {
    name: &'static str,
    clock: Clock,
    signature: Signature,
}

/// The Arrow type of a time with a zone: UTC microseconds, as PostgreSQL keeps them.
fn zoned() -> DataType {
    DataType::Timestamp(TimeUnit::Nanosecond, Some("+00:00".into()))
}

fn timestamp(at: DateTime<Utc>, zone: Option<&str>) -> ScalarValue {
    // Microseconds, as PostgreSQL keeps them; nanoseconds only as Arrow's unit.
    let micros = at.timestamp_micros();
    ScalarValue::TimestampNanosecond(micros.checked_mul(1000), zone.map(Arc::from))
}

impl ScalarUDFImpl for ClockFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(match self.clock {
            Clock::LocalTransaction => DataType::Timestamp(TimeUnit::Nanosecond, None),
            Clock::LocalDate => DataType::Date32,
            _ => zoned(),
        })
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        let (Some(start), Clock::Transaction | Clock::LocalTransaction | Clock::LocalDate) =
            (info.query_execution_start_time(), self.clock)
        else {
            return Ok(ExprSimplifyResult::Original(args));
        };
        if self.clock == Clock::Transaction {
            return Ok(ExprSimplifyResult::Simplified(Expr::Literal(
                timestamp(start, Some("+00:00")),
                None,
            )));
        }
        let zone = super::zone_setting::zone(info.config_options());
        let local = datetime::to_local(start.timestamp_micros(), &zone)
            .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))?;
        let value = match self.clock {
            Clock::LocalDate => {
                ScalarValue::Date32(Some(local.div_euclid(datetime::MICROS_PER_DAY) as i32))
            }
            _ => ScalarValue::TimestampNanosecond(local.checked_mul(1000), None),
        };
        Ok(ExprSimplifyResult::Simplified(Expr::Literal(value, None)))
    }

    fn invoke_with_args(&self, _: ScalarFunctionArgs) -> Result<ColumnarValue> {
        match self.clock {
            Clock::Wall => Ok(ColumnarValue::Scalar(timestamp(Utc::now(), Some("+00:00")))),
            // Folded by `simplify` or replaced by `with_statement_time` before a plan
            // runs; reaching here means a plan ran without either.
            _ => datafusion::common::internal_err!(
                "{}() was not folded into the statement's time",
                self.name
            ),
        }
    }
}

/// Registers the clock functions DataFusion lacks.
pub fn register(state: &mut SessionState) -> Result<()> {
    for (name, clock, volatility) in [
        (
            "transaction_timestamp",
            Clock::Transaction,
            Volatility::Stable,
        ),
        (
            "localtimestamp",
            Clock::LocalTransaction,
            Volatility::Stable,
        ),
        // DataFusion's is the date in its own zone, UTC.
        ("current_date", Clock::LocalDate, Volatility::Stable),
        (STATEMENT_TIMESTAMP, Clock::Statement, Volatility::Stable),
        ("clock_timestamp", Clock::Wall, Volatility::Volatile),
    ] {
        let function = ClockFunction {
            name,
            clock,
            signature: Signature::exact(vec![], volatility),
        };
        state.register_udf(Arc::new(ScalarUDF::new_from_impl(function)))?;
    }
    Ok(())
}

/// Whether the plan calls `statement_timestamp()`, which must be replaced before it runs.
pub fn uses_statement_time(plan: &LogicalPlan) -> bool {
    let mut found = false;
    let _ = plan.apply_with_subqueries(|node| {
        node.apply_expressions(|expr| {
            expr.apply(|e| {
                found |= is_statement_timestamp(e);
                Ok(if found {
                    datafusion::common::tree_node::TreeNodeRecursion::Stop
                } else {
                    datafusion::common::tree_node::TreeNodeRecursion::Continue
                })
            })
        })
    });
    found
}

/// The plan with every `statement_timestamp()` replaced by `start`.
pub fn with_statement_time(plan: LogicalPlan, start: DateTime<Utc>) -> Result<LogicalPlan> {
    plan.transform_up_with_subqueries(|node| {
        node.map_expressions(|expr| {
            expr.transform_up(|e| {
                Ok(if is_statement_timestamp(&e) {
                    Transformed::yes(Expr::Literal(timestamp(start, Some("+00:00")), None))
                } else {
                    Transformed::no(e)
                })
            })
        })
    })
    .map(|transformed| transformed.data)
}

fn is_statement_timestamp(expr: &Expr) -> bool {
    matches!(expr, Expr::ScalarFunction(call) if call.func.name() == STATEMENT_TIMESTAMP)
}
