//! Enum values in a query DataFusion plans. A column of an enum type is planned as
//! text, its Arrow field marked with the type's OID ([`ENUM_OID_KEY`]), so the result
//! column is described with the type. Text compares and sorts by its bytes, an enum
//! by its labels' declared order (`sad < ok < happy`), so after planning:
//!
//! - `<`, `<=`, `>`, `>=` and `BETWEEN` over an enum compare its labels' positions, a
//!   label written as a literal becoming its position (22P02 if the type lacks it);
//! - `ORDER BY` an enum sorts by position, in a query, an aggregate's arguments and a
//!   window;
//! - `=`, `<>` and `IN` against literals stay text comparisons, the literals checked
//!   to be labels (22P02, as PostgreSQL reads them as the type);
//! - `min`/`max` of an enum are refused (0A000) rather than answered alphabetically;
//! - a cast drops the mark: `m::text` is text and sorts as text.
//!
//! Only a column, a cast to an enum type (`pg_enum_casts`) or an alias of either is
//! known as an enum here: an enum value computed by CASE or COALESCE is text, and
//! compares as text.

use super::pg_integer_overflow::rewrite_expressions;
use super::udf::{row_by_row, string};
use crate::engine::{EngineError, EnumTypeMeta};
use crate::sql::sql_error::SqlError;
use crate::sqlstate::SqlState;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, ExprSchema, ScalarValue};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::{AggregateFunction, Cast, ScalarFunction, TryCast};
use datafusion::logical_expr::{
    Between, BinaryExpr, ColumnarValue, Expr, LogicalPlan, Operator, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Sort, SortExpr, Volatility,
};
use std::collections::HashMap;
use std::sync::Arc;

/// The Arrow field metadata key holding an enum column's type OID.
pub const ENUM_OID_KEY: &str = "pgwide.enum_oid";

/// The function a cast to an enum type becomes (`pg_enum_casts`), whose result this
/// module knows as the type's.
pub const CAST_FUNCTION: &str = "pgwide_enum_cast";

/// The enum types of a database, by OID.
pub type EnumTypes = HashMap<u32, Arc<EnumTypeMeta>>;

/// The metadata marking a field as holding values of the enum type `oid`.
pub fn field_metadata(oid: u32) -> HashMap<String, String> {
    HashMap::from([(ENUM_OID_KEY.to_string(), oid.to_string())])
}

/// The enum type OID a field is marked with, if any.
pub fn field_enum_oid(field: &Field) -> Option<u32> {
    field.metadata().get(ENUM_OID_KEY)?.parse().ok()
}

/// Rewrites `plan`'s comparisons, sorts and casts of enum values (see the module's
/// documentation). Free for a database without enum types.
pub fn rewrite(plan: LogicalPlan, types: &EnumTypes) -> Result<LogicalPlan> {
    if types.is_empty() {
        return Ok(plan);
    }
    let plan = rewrite_expressions(plan, |expr, schema| by_position(expr, schema, types))?;
    plan.transform_up_with_subqueries(|node| match node {
        LogicalPlan::Sort(sort) => sorted_by_position(sort, types).map(Transformed::yes),
        other => Ok(Transformed::no(other)),
    })
    .map(|transformed| transformed.data)
}

/// The enum type of `expr`, if it is a column of one (or an alias of one).
fn enum_type<'a>(expr: &Expr, schema: &DFSchema, types: &'a EnumTypes) -> Option<&'a EnumTypeMeta> {
    match expr {
        Expr::Column(column) => {
            let field = schema.field_from_column(column).ok()?;
            types.get(&field_enum_oid(field)?).map(|t| &**t)
        }
        Expr::Alias(alias) => enum_type(&alias.expr, schema, types),
        Expr::ScalarFunction(call) if call.name() == CAST_FUNCTION => {
            let oid = match call.args.get(1) {
                Some(Expr::Literal(value, _)) => value.cast_to(&DataType::UInt32).ok()?,
                _ => return None,
            };
            match oid {
                ScalarValue::UInt32(Some(oid)) => types.get(&oid).map(|t| &**t),
                _ => None,
            }
        }
        _ => None,
    }
}

fn by_position(expr: Expr, schema: &DFSchema, types: &EnumTypes) -> Result<Transformed<Expr>> {
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let ty = enum_type(&left, schema, types).or_else(|| enum_type(&right, schema, types));
            let Some(ty) = ty else {
                return Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr {
                    left,
                    op,
                    right,
                })));
            };
            check_same_type(ty, &left, &right, schema, types)?;
            match op {
                Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq => {
                    Ok(Transformed::yes(Expr::BinaryExpr(BinaryExpr {
                        left: Box::new(position(*left, ty)?),
                        op,
                        right: Box::new(position(*right, ty)?),
                    })))
                }
                Operator::Eq
                | Operator::NotEq
                | Operator::IsDistinctFrom
                | Operator::IsNotDistinctFrom => {
                    check_label(&left, ty)?;
                    check_label(&right, ty)?;
                    Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr {
                        left,
                        op,
                        right,
                    })))
                }
                _ => Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr {
                    left,
                    op,
                    right,
                }))),
            }
        }
        Expr::Between(between) => match enum_type(&between.expr, schema, types) {
            Some(ty) => Ok(Transformed::yes(Expr::Between(Between {
                expr: Box::new(position(*between.expr, ty)?),
                negated: between.negated,
                low: Box::new(position(*between.low, ty)?),
                high: Box::new(position(*between.high, ty)?),
            }))),
            None => Ok(Transformed::no(Expr::Between(between))),
        },
        Expr::InList(in_list) => {
            if let Some(ty) = enum_type(&in_list.expr, schema, types) {
                for item in &in_list.list {
                    check_label(item, ty)?;
                }
            }
            Ok(Transformed::no(Expr::InList(in_list)))
        }
        Expr::AggregateFunction(AggregateFunction { func, params })
            if matches!(func.name(), "min" | "max")
                && params
                    .args
                    .iter()
                    .any(|arg| enum_type(arg, schema, types).is_some()) =>
        {
            Err(external(SqlError::unsupported(format!(
                "{} of an enum type's values is not supported yet (it would compare their \
                 text, not the labels' order); cast to text for the alphabetical one",
                func.name()
            ))))
        }
        // The type's own name, where the text it is planned as would say `text`.
        Expr::ScalarFunction(call)
            if call.name() == "pg_typeof"
                && call.args.len() == 1
                && enum_type(&call.args[0], schema, types).is_some() =>
        {
            let name = enum_type(&call.args[0], schema, types).map(|t| t.name.clone());
            Ok(Transformed::yes(Expr::Literal(
                ScalarValue::Utf8(name),
                None,
            )))
        }
        // `string_agg(x, ',' ORDER BY m)`, `row_number() OVER (ORDER BY m)`.
        Expr::AggregateFunction(mut call) => {
            let changed = sort_keys_by_position(&mut call.params.order_by, schema, types)?;
            Ok(Transformed::new_transformed(
                Expr::AggregateFunction(call),
                changed,
            ))
        }
        Expr::WindowFunction(mut call) => {
            let changed = sort_keys_by_position(&mut call.params.order_by, schema, types)?;
            Ok(Transformed::new_transformed(
                Expr::WindowFunction(call),
                changed,
            ))
        }
        // A cast's result is its target type's, not the enum's: it loses the mark.
        Expr::Cast(Cast { expr, field }) if enum_type(&expr, schema, types).is_some() => {
            Ok(Transformed::yes(Expr::Cast(Cast {
                expr,
                field: unmarked(field.data_type()),
            })))
        }
        Expr::TryCast(TryCast { expr, field }) if enum_type(&expr, schema, types).is_some() => {
            Ok(Transformed::yes(Expr::TryCast(TryCast {
                expr,
                field: unmarked(field.data_type()),
            })))
        }
        other => Ok(Transformed::no(other)),
    }
}

/// A cast target that keeps no metadata of what it casts (DataFusion's type-only cast
/// target would keep it).
fn unmarked(data_type: &DataType) -> Arc<Field> {
    Arc::new(Field::new("cast", data_type.clone(), true))
}

/// 42883 for a comparison of two different enum types, as PostgreSQL has no operator
/// for it.
fn check_same_type(
    ty: &EnumTypeMeta,
    left: &Expr,
    right: &Expr,
    schema: &DFSchema,
    types: &EnumTypes,
) -> Result<()> {
    for side in [left, right] {
        if let Some(other) = enum_type(side, schema, types) {
            if other.id != ty.id {
                return Err(external(SqlError::new(
                    SqlState::UndefinedFunction,
                    format!(
                        "operator does not exist: {} = {} (values of two enum types do not \
                         compare)",
                        ty.name, other.name
                    ),
                )));
            }
        }
    }
    Ok(())
}

/// 22P02 if `expr` is a text literal that is none of `ty`'s labels.
fn check_label(expr: &Expr, ty: &EnumTypeMeta) -> Result<()> {
    match literal_text(expr) {
        Some(label) if ty.position(label).is_none() => Err(invalid_label(&ty.name, label)),
        _ => Ok(()),
    }
}

fn literal_text(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)),
            _,
        ) => Some(s),
        Expr::Cast(Cast { expr, .. }) => literal_text(expr),
        _ => None,
    }
}

/// 22P02 for a value the enum type `type_name` lacks, in the engine's words (a write
/// of one is refused there).
pub(super) fn invalid_label(type_name: &str, label: &str) -> DataFusionError {
    external(SqlError::from(EngineError::InvalidEnumValue {
        type_name: type_name.to_string(),
        value: label.to_string(),
    }))
}

fn external(error: SqlError) -> DataFusionError {
    DataFusionError::External(Box::new(error))
}

/// `expr`'s position among `ty`'s labels: a literal's computed now, anything else's by
/// `pgwide_enum_position` as rows are read.
fn position(expr: Expr, ty: &EnumTypeMeta) -> Result<Expr> {
    if let Some(label) = literal_text(&expr) {
        let at = ty
            .position(label)
            .ok_or_else(|| invalid_label(&ty.name, label))?;
        return Ok(Expr::Literal(
            ScalarValue::Int32(Some(i32::try_from(at).unwrap_or(i32::MAX))),
            None,
        ));
    }
    if matches!(expr, Expr::Literal(ScalarValue::Null, _)) {
        return Ok(Expr::Literal(ScalarValue::Int32(None), None));
    }
    let udf = ScalarUDF::new_from_impl(EnumPosition {
        type_name: ty.name.clone(),
        labels: ty.labels.clone(),
        signature: Signature::any(1, Volatility::Immutable),
    });
    Ok(Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::new(udf),
        vec![expr],
    )))
}

/// Sorts by an enum column's label positions instead of its text.
fn sorted_by_position(mut sort: Sort, types: &EnumTypes) -> Result<LogicalPlan> {
    let schema = Arc::clone(sort.input.schema());
    sort_keys_by_position(&mut sort.expr, &schema, types)?;
    Ok(LogicalPlan::Sort(sort))
}

/// Makes each enum sort key sort by its labels' positions; whether any was one.
fn sort_keys_by_position(
    keys: &mut [SortExpr],
    schema: &DFSchema,
    types: &EnumTypes,
) -> Result<bool> {
    let mut changed = false;
    for key in keys {
        if let Some(ty) = enum_type(&key.expr, schema, types) {
            let expr = std::mem::replace(&mut key.expr, Expr::Literal(ScalarValue::Null, None));
            key.expr = position(expr, ty)?;
            changed = true;
        }
    }
    Ok(changed)
}

/// `pgwide_enum_position(value)`: the position of `value` among one enum type's labels.
#[derive(Debug, PartialEq, Eq, Hash)]
struct EnumPosition {
    type_name: String,
    labels: Vec<String>,
    signature: Signature,
}

impl ScalarUDFImpl for EnumPosition {
    fn name(&self) -> &str {
        "pgwide_enum_position"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int32)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        row_by_row(args, &DataType::Int32, |values| {
            let Some(label) = string(values.first()) else {
                return Ok(ScalarValue::Int32(None));
            };
            match self.labels.iter().position(|l| l == label) {
                Some(at) => Ok(ScalarValue::Int32(Some(
                    i32::try_from(at).unwrap_or(i32::MAX),
                ))),
                None => Err(invalid_label(&self.type_name, label)),
            }
        })
    }
}
