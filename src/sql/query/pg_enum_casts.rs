//! Casts to an enum type in a query DataFusion plans: `x::mood` becomes
//! `pgwide_enum_cast(CAST(x AS TEXT), <mood's OID>)`, which refuses a value that is
//! none of the type's labels (22P02) and returns the label as text marked with the type
//! (`pg_enum_plan`), so the result is described, compared and sorted as the enum.

use super::pg_enum_plan::{field_metadata, invalid_label, CAST_FUNCTION as FUNCTION};
use super::udf::{int, row_by_row, string};
use crate::engine::Engine;
use crate::sql::sql_error::SqlError;
use crate::sql::sql_types::SqlType;
use crate::sqlstate::SqlState;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::session_state::SessionState;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use sqlparser::ast::{self, Expr, Query};
use std::ops::ControlFlow;
use std::sync::Arc;

/// Rewrites every cast to one of `instance`'s enum types in `query`.
pub fn rewrite(query: &mut Query, engine: &Engine, instance: &str) {
    let _ = ast::visit_expressions_mut(query, |expr| {
        let Expr::Cast {
            data_type: ast::DataType::Custom(name, modifiers),
            ..
        } = expr
        else {
            return ControlFlow::<()>::Continue(());
        };
        let enum_type = crate::sql::ddl::object_name(name)
            .ok()
            .filter(|(schema, _)| schema.as_deref().is_none_or(|s| s == "public"))
            .and_then(|(_, name)| engine.enum_type(instance, &name));
        let Some(enum_type) = enum_type.filter(|_| modifiers.is_empty()) else {
            return ControlFlow::Continue(());
        };
        let Expr::Cast { data_type, .. } = expr else {
            return ControlFlow::Continue(());
        };
        *data_type = ast::DataType::Text;
        let cast = std::mem::replace(expr, Expr::value(ast::Value::Null));
        let oid = SqlType::enum_of(enum_type.id).oid();
        *expr = super::sql_ast::function_call(
            FUNCTION,
            vec![
                cast,
                Expr::value(ast::Value::Number(oid.to_string(), false)),
            ],
        );
        ControlFlow::Continue(())
    });
}

/// Registers `pgwide_enum_cast`, which reads the labels of `engine`'s enum types.
pub fn register(state: &mut SessionState, engine: &Arc<Engine>) -> Result<()> {
    state.register_udf(Arc::new(ScalarUDF::new_from_impl(EnumCast {
        engine: Arc::clone(engine),
        signature: Signature::any(2, Volatility::Immutable),
    })))?;
    Ok(())
}

struct EnumCast {
    engine: Arc<Engine>,
    signature: Signature,
}

impl std::fmt::Debug for EnumCast {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(FUNCTION)
    }
}

// One per session, all alike: the name says which function it is.
impl PartialEq for EnumCast {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for EnumCast {}
impl std::hash::Hash for EnumCast {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        FUNCTION.hash(state)
    }
}

/// The enum type OID a call's second argument names.
fn oid_argument(value: Option<&ScalarValue>) -> Option<u32> {
    int(value).and_then(|oid| u32::try_from(oid).ok())
}

impl ScalarUDFImpl for EnumCast {
    fn name(&self) -> &str {
        FUNCTION
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let field = Field::new(FUNCTION, DataType::Utf8, true);
        let oid = args.scalar_arguments.get(1).copied().flatten();
        Ok(Arc::new(match oid_argument(oid) {
            Some(oid) => field.with_metadata(field_metadata(oid)),
            None => field,
        }))
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        row_by_row(args, &DataType::Utf8, |values| {
            let Some(label) = string(values.first()) else {
                return Ok(ScalarValue::Utf8(None));
            };
            let enum_type = oid_argument(values.get(1))
                .and_then(|oid| SqlType::Enum(oid).enum_type_id())
                .and_then(|id| self.engine.enum_type_by_id(id))
                .ok_or_else(|| {
                    DataFusionError::External(Box::new(SqlError::new(
                        SqlState::UndefinedObject,
                        "the enum type of a cast was dropped while the query ran",
                    )))
                })?;
            match enum_type.position(label) {
                Some(_) => Ok(ScalarValue::Utf8(Some(label.to_string()))),
                None => Err(invalid_label(&enum_type.name, label)),
            }
        })
    }
}
