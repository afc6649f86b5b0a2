//! PostgreSQL's array functions that DataFusion lacks or defines differently:
//! `array_lower`/`array_upper` (1-based arrays, 0-based `int2vector`s), `array_length`
//! (NULL for an empty array) and `cardinality` (an `integer`),
//! `information_schema._pg_expandarray` (as `pgwide_expandarray`, a list of `(x, n)`
//! records that `pg_compat` unnests), subscripts of `int2vector` columns and
//! `parse_ident`. pgwide keeps `pg_index.indkey`-style `int2vector`s in their text form
//! (`1 2`), as PostgreSQL prints them, so every function here accepts that form too.

use super::udf::{int, string, udf, Body};
use datafusion::arrow::array::{Array, ArrayRef, Int64Array, StructArray};
use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::utils::SingleRowListArrayBuilder;
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::execution::session_state::SessionState;
use datafusion::execution::FunctionRegistry;
use std::sync::Arc;

/// An array argument's elements and the subscript of its first one: 1 for an array,
/// 0 for an `int2vector` given as text.
fn elements(value: Option<&ScalarValue>) -> Option<(Vec<ScalarValue>, i64)> {
    let value = value?;
    if let Some(vector) = string(Some(value)) {
        let items = vector
            .split_whitespace()
            .map(|n| ScalarValue::Int64(n.parse().ok()))
            .collect();
        return Some((items, 0));
    }
    let list: ArrayRef = match value {
        ScalarValue::List(a) if !a.is_null(0) => a.value(0),
        ScalarValue::LargeList(a) if !a.is_null(0) => a.value(0),
        ScalarValue::FixedSizeList(a) if !a.is_null(0) => a.value(0),
        _ => return None,
    };
    let items = (0..list.len())
        .map(|i| ScalarValue::try_from_array(&list, i))
        .collect::<Result<Vec<_>>>()
        .ok()?;
    Some((items, 1))
}

/// `array_lower(a, 1)` / `array_upper(a, 1)`: NULL for an empty array or another
/// dimension (pgwide's arrays have one).
fn bound(args: &[ScalarValue], upper: bool) -> ScalarValue {
    let bound = match (elements(args.first()), int(args.get(1))) {
        (Some((items, first)), Some(1)) if !items.is_empty() => Some(if upper {
            first + items.len() as i64 - 1
        } else {
            first
        }),
        _ => None,
    };
    ScalarValue::Int64(bound)
}

/// The `(x, n)` record type `_pg_expandarray` returns.
fn expanded_fields() -> Fields {
    Fields::from(vec![
        Field::new("x", DataType::Int64, true),
        Field::new("n", DataType::Int64, true),
    ])
}

fn expanded_type() -> DataType {
    DataType::List(Arc::new(Field::new_list_field(
        DataType::Struct(expanded_fields()),
        true,
    )))
}

/// Every element `x` of the array with its 1-based position `n`.
fn expand(args: &[ScalarValue]) -> ScalarValue {
    let Some((items, _)) = elements(args.first()) else {
        return ScalarValue::try_from(&expanded_type()).unwrap_or(ScalarValue::Null);
    };
    let x: Int64Array = items
        .iter()
        .map(|v| match v.cast_to(&DataType::Int64) {
            Ok(ScalarValue::Int64(i)) => i,
            _ => None,
        })
        .collect();
    let n: Int64Array = (1..=items.len() as i64).map(Some).collect();
    let records = StructArray::new(
        expanded_fields(),
        vec![Arc::new(x) as ArrayRef, Arc::new(n) as ArrayRef],
        None,
    );
    SingleRowListArrayBuilder::new(Arc::new(records)).build_list_scalar()
}

/// `vector[i]` of an `int2vector`, whose subscripts start at 0.
fn int2vector_at(args: &[ScalarValue]) -> ScalarValue {
    let item = match (elements(args.first()), int(args.get(1))) {
        (Some((items, first)), Some(i)) => usize::try_from(i - first)
            .ok()
            .and_then(|i| items.get(i).cloned()),
        _ => None,
    };
    ScalarValue::Int64(item.and_then(|v| match v.cast_to(&DataType::Int64) {
        Ok(ScalarValue::Int64(i)) => i,
        _ => None,
    }))
}

/// `parse_ident('a."B".c')`: the dot-separated names, unquoted ones folded to lower
/// case. `None` for a malformed name (PostgreSQL raises 22023 there).
pub fn parse_ident(name: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut chars = name.trim().chars().peekable();
    loop {
        let mut part = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        part.push('"');
                    }
                    '"' => break,
                    c => part.push(c),
                }
            }
        } else {
            while let Some(c) = chars.peek().copied() {
                if c == '.' || c.is_whitespace() {
                    break;
                }
                part.push(c.to_ascii_lowercase());
                chars.next();
            }
            if part.is_empty() {
                return None;
            }
        }
        parts.push(part);
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => return Some(parts),
            Some('.') => {}
            Some(_) => return None,
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
    }
}

/// Registers the array functions on `state`.
pub fn register(state: &mut SessionState) -> Result<()> {
    let text_list = DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true)));
    let functions: Vec<(&str, DataType, Arc<Body>)> = vec![
        (
            "array_lower",
            DataType::Int64,
            Arc::new(|a| bound(a, false)),
        ),
        ("array_upper", DataType::Int64, Arc::new(|a| bound(a, true))),
        // The number of elements, an `integer` (DataFusion's is unsigned).
        (
            "cardinality",
            DataType::Int32,
            Arc::new(|a| {
                ScalarValue::Int32(
                    elements(a.first()).and_then(|(items, _)| i32::try_from(items.len()).ok()),
                )
            }),
        ),
        // An `integer`, NULL for an empty array or another dimension (DataFusion's is
        // an unsigned 0).
        (
            "array_length",
            DataType::Int32,
            Arc::new(|a| {
                let length = match (elements(a.first()), int(a.get(1))) {
                    (Some((items, _)), Some(1)) if !items.is_empty() => {
                        i32::try_from(items.len()).ok()
                    }
                    _ => None,
                };
                ScalarValue::Int32(length)
            }),
        ),
        ("pgwide_expandarray", expanded_type(), Arc::new(expand)),
        (
            "pgwide_int2vector_at",
            DataType::Int64,
            Arc::new(int2vector_at),
        ),
        (
            "parse_ident",
            text_list.clone(),
            Arc::new(move |a| match string(a.first()).and_then(parse_ident) {
                Some(parts) => {
                    let parts: Vec<ScalarValue> = parts
                        .into_iter()
                        .map(|p| ScalarValue::Utf8(Some(p)))
                        .collect();
                    ScalarValue::List(ScalarValue::new_list_nullable(&parts, &DataType::Utf8))
                }
                None => ScalarValue::try_from(&text_list).unwrap_or(ScalarValue::Null),
            }),
        ),
    ];
    for (name, returns, body) in functions {
        state.register_udf(Arc::new(udf(name, returns, body)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_ident_splits_and_folds_like_postgres() {
        assert_eq!(
            parse_ident("public.Items"),
            Some(vec!["public".to_string(), "items".to_string()])
        );
        assert_eq!(
            parse_ident("\"My \"\"T\"\".x\" . b"),
            Some(vec!["My \"T\".x".to_string(), "b".to_string()])
        );
        assert_eq!(parse_ident("a..b"), None);
        assert_eq!(parse_ident("\"open"), None);
    }

    #[test]
    fn int2vector_text_is_zero_based_and_arrays_one_based() {
        let vector = ScalarValue::Utf8(Some("3 1 2".into()));
        let one = ScalarValue::Int64(Some(1));
        assert_eq!(
            bound(&[vector.clone(), one.clone()], true),
            ScalarValue::Int64(Some(2))
        );
        assert_eq!(
            bound(&[vector.clone(), one.clone()], false),
            ScalarValue::Int64(Some(0))
        );
        assert_eq!(
            int2vector_at(&[vector.clone(), ScalarValue::Int64(Some(0))]),
            ScalarValue::Int64(Some(3))
        );
        let list = ScalarValue::List(ScalarValue::new_list_nullable(
            &[ScalarValue::Utf8(Some("a".into()))],
            &DataType::Utf8,
        ));
        assert_eq!(bound(&[list, one], false), ScalarValue::Int64(Some(1)));
    }
}
