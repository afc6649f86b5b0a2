//! Casts to `VARCHAR(n)` and `CHAR(n)` in a query DataFusion plans: DataFusion casts to
//! a string of any length, so each becomes `pgwide_cast_length(CAST(x AS TEXT), n,
//! padded)`, which cuts the value to n characters (or refuses to pad it) as
//! `char_casts` says.

use super::udf::{int, row_by_row, string};
use crate::sql::char_casts::CastLength;
use crate::sql::sql_error::{SqlError, SqlResult};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::session_state::SessionState;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use sqlparser::ast::{self, Expr, Query};
use std::ops::ControlFlow;
use std::sync::Arc;

const FUNCTION: &str = "pgwide_cast_length";

/// Rewrites every cast to a character type with a length in `query`; a length of 0 or
/// over the limit is 22023.
pub fn rewrite(query: &mut Query) -> SqlResult<()> {
    let mut failure = None;
    let _ = ast::visit_expressions_mut(query, |expr| {
        let Expr::Cast { data_type, .. } = expr else {
            return ControlFlow::Continue(());
        };
        let length = match CastLength::of(data_type) {
            Ok(Some(length)) => length,
            Ok(None) => return ControlFlow::Continue(()),
            Err(e) => {
                failure = Some(e);
                return ControlFlow::Break(());
            }
        };
        let Expr::Cast { data_type, .. } = expr else {
            return ControlFlow::Continue(());
        };
        *data_type = ast::DataType::Text;
        let cast = std::mem::replace(expr, Expr::value(ast::Value::Null));
        let padded = matches!(length, CastLength::Padded(_));
        *expr = super::sql_ast::function_call(
            FUNCTION,
            vec![
                cast,
                Expr::value(ast::Value::Number(length.chars().to_string(), false)),
                Expr::value(ast::Value::Boolean(padded)),
            ],
        );
        ControlFlow::Continue(())
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Registers `pgwide_cast_length`.
pub fn register(state: &mut SessionState) -> Result<()> {
    state.register_udf(Arc::new(ScalarUDF::new_from_impl(CastToLength {
        signature: Signature::one_of(vec![TypeSignature::Any(3)], Volatility::Immutable),
    })))?;
    Ok(())
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct CastToLength {
    signature: Signature,
}

impl ScalarUDFImpl for CastToLength {
    fn name(&self) -> &str {
        FUNCTION
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        row_by_row(args, &DataType::Utf8, |values| {
            let (Some(text), Some(n)) = (string(values.first()), int(values.get(1))) else {
                return Ok(ScalarValue::Utf8(None));
            };
            let n = u64::try_from(n).unwrap_or(1);
            let length = match values.get(2) {
                Some(ScalarValue::Boolean(Some(true))) => CastLength::Padded(n),
                _ => CastLength::Varying(n),
            };
            length
                .apply(text)
                .map(|cut| ScalarValue::Utf8(Some(cut)))
                .map_err(|e: SqlError| DataFusionError::External(Box::new(e)))
        })
    }
}
