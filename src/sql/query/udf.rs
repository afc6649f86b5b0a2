//! PostgreSQL functions as DataFusion scalar UDFs, built from plain functions over
//! `ScalarValue`s, and the argument helpers the function modules share.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use std::sync::Arc;

pub(super) type Body = dyn Fn(&[ScalarValue]) -> ScalarValue + Send + Sync;

/// A function of any arguments computed one row at a time.
struct PgFunction {
    name: String,
    signature: Signature,
    returns: DataType,
    body: Arc<Body>,
}

impl std::fmt::Debug for PgFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgFunction({})", self.name)
    }
}

impl PartialEq for PgFunction {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for PgFunction {}
impl std::hash::Hash for PgFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}

impl ScalarUDFImpl for PgFunction {
    fn name(&self) -> &str {
        &self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(self.returns.clone())
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        row_by_row(args, &self.returns, |values| Ok((self.body)(values)))
    }
}

/// Computes a function one row at a time with `body`: once for scalar arguments.
pub(super) fn row_by_row(
    args: ScalarFunctionArgs,
    returns: &DataType,
    body: impl Fn(&[ScalarValue]) -> Result<ScalarValue>,
) -> Result<ColumnarValue> {
    let rows = args.number_rows;
    let scalar = args
        .args
        .iter()
        .all(|a| matches!(a, ColumnarValue::Scalar(_)));
    let arrays = ColumnarValue::values_to_arrays(&args.args)?;
    let count = if scalar { 1 } else { rows };
    let mut out = Vec::with_capacity(count);
    for row in 0..count {
        let values = arrays
            .iter()
            .map(|a| ScalarValue::try_from_array(a, row))
            .collect::<Result<Vec<_>>>()?;
        out.push(body(&values)?);
    }
    if scalar {
        let value = out
            .pop()
            .map_or_else(|| ScalarValue::try_from(returns), Ok)?;
        return Ok(ColumnarValue::Scalar(value));
    }
    if out.is_empty() {
        return Ok(ColumnarValue::Array(
            datafusion::arrow::array::new_empty_array(returns),
        ));
    }
    Ok(ColumnarValue::Array(ScalarValue::iter_to_array(out)?))
}

/// Whether every argument of a call is a scalar, so its result is one too.
pub(super) fn all_scalar(args: &ScalarFunctionArgs) -> bool {
    args.args
        .iter()
        .all(|a| matches!(a, ColumnarValue::Scalar(_)))
}

/// A function's result computed as `out`: its one value when every argument was a
/// scalar (`all_scalar`), else the array.
pub(super) fn result(
    out: datafusion::arrow::array::ArrayRef,
    scalar: bool,
) -> Result<ColumnarValue> {
    Ok(if scalar {
        ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?)
    } else {
        ColumnarValue::Array(out)
    })
}

pub(super) fn int(value: Option<&ScalarValue>) -> Option<i64> {
    match value? {
        ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) => s.parse().ok(),
        v => v.cast_to(&DataType::Int64).ok().and_then(|v| match v {
            ScalarValue::Int64(i) => i,
            _ => None,
        }),
    }
}

pub(super) fn text(value: Option<String>) -> ScalarValue {
    ScalarValue::Utf8(value)
}

/// A function of any arguments named `name`, computed row by row by `body`.
pub(super) fn udf(name: &str, returns: DataType, body: Arc<Body>) -> ScalarUDF {
    ScalarUDF::new_from_impl(PgFunction {
        name: name.to_string(),
        signature: Signature::one_of(
            vec![TypeSignature::Nullary, TypeSignature::VariadicAny],
            Volatility::Stable,
        ),
        returns,
        body,
    })
}

/// The text of a string argument.
pub(super) fn string(value: Option<&ScalarValue>) -> Option<&str> {
    match value? {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)) => Some(s),
        _ => None,
    }
}
