//! PostgreSQL's `avg` of integers (smallint, integer, bigint) is an exact `numeric`;
//! DataFusion's is a double, which loses digits past 2^53 and makes a Python client's
//! `Decimal` a `float`. This `avg` sums exactly (in 128 bits, so no bigint sum
//! overflows) and divides in decimal, rounding half away from zero as PostgreSQL does.
//!
//! Its scale is fixed at 16 digits: PostgreSQL's scale depends on the quotient (16 for
//! averages from 1 to 9999, more below, fewer above); a column of Arrow decimals has
//! one scale for all its values, so pgwide always shows 16. The value agrees with
//! PostgreSQL's to every digit both show.

use crate::sql::pg_numeric;
use crate::sql::sql_types::SqlError;
use crate::sqlstate::SqlState;
use bigdecimal::{BigDecimal, RoundingMode};
use datafusion::arrow::array::{ArrayRef, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Decimal128Type, Field, FieldRef, Int64Type};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};
use std::sync::{Arc, LazyLock};

/// The digits after the point of every average.
const SCALE: i8 = 16;

/// The result type: as wide as Arrow's decimals go.
const RESULT: DataType = DataType::Decimal128(38, SCALE);

/// The `avg` over integers that replaces DataFusion's (`pg_integer_overflow` swaps it in).
pub static INTEGER_AVG: LazyLock<Arc<AggregateUDF>> = LazyLock::new(|| {
    Arc::new(AggregateUDF::new_from_impl(IntegerAvg {
        signature: Signature::uniform(
            1,
            vec![DataType::Int16, DataType::Int32, DataType::Int64],
            Volatility::Immutable,
        ),
    }))
});

#[derive(Debug, PartialEq, Eq, Hash)]
struct IntegerAvg {
    signature: Signature,
}

impl AggregateUDFImpl for IntegerAvg {
    /// The name users wrote and see (`avg(t.a)`).
    fn name(&self) -> &str {
        "avg"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(RESULT)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![
            Arc::new(Field::new(
                format!("{}[sum]", args.name),
                DataType::Decimal128(38, 0),
                true,
            )),
            Arc::new(Field::new(
                format!("{}[count]", args.name),
                DataType::Int64,
                true,
            )),
        ])
    }

    fn accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(AvgAccumulator::default()))
    }
}

#[derive(Debug, Default)]
struct AvgAccumulator {
    sum: i128,
    count: i64,
}

fn too_large() -> DataFusionError {
    DataFusionError::External(Box::new(SqlError::new(
        SqlState::NumericValueOutOfRange,
        "the average's sum is out of range",
    )))
}

impl AvgAccumulator {
    fn add(&mut self, value: i128, count: i64) -> Result<()> {
        self.sum = self.sum.checked_add(value).ok_or_else(too_large)?;
        self.count = self.count.checked_add(count).ok_or_else(too_large)?;
        Ok(())
    }
}

impl Accumulator for AvgAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        for array in values {
            let integers = cast(array, &DataType::Int64)?;
            for value in integers.as_primitive::<Int64Type>().iter().flatten() {
                self.add(i128::from(value), 1)?;
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let [sums, counts] = states else {
            return datafusion::common::internal_err!("avg's state has two columns");
        };
        let sums = sums.as_primitive::<Decimal128Type>();
        let counts = counts.as_primitive::<Int64Type>();
        for (sum, count) in sums.iter().zip(counts.iter()) {
            if let (Some(sum), Some(count)) = (sum, count) {
                self.add(sum, count)?;
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::Decimal128(Some(self.sum), 38, 0),
            ScalarValue::Int64(Some(self.count)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        if self.count == 0 {
            return Ok(ScalarValue::Decimal128(None, 38, SCALE));
        }
        let quotient = (BigDecimal::from(self.sum) / BigDecimal::from(self.count))
            .with_scale_round(i64::from(SCALE), RoundingMode::HalfUp);
        let unscaled = pg_numeric::to_i128(&quotient, SCALE).ok_or_else(too_large)?;
        Ok(ScalarValue::Decimal128(Some(unscaled), 38, SCALE))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}
