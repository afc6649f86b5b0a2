//! PostgreSQL's JSON functions and operators over `json` and `jsonb` values, which
//! DataFusion carries as the string types `convert::JSON` and `convert::JSONB`: the
//! casts to them, `->`, `->>`, `#>`, `#>>`, `@>`, `?`, `||`, `-`, jsonb equality, the
//! builders (`jsonb_build_object`, `to_jsonb`, ...) and the aggregates `jsonb_agg`
//! and `json_agg`. `pg_json_plan` turns the operators and casts into these calls.

use super::convert::{JSON, JSONB};
use crate::sql::pg_json::{self, JsonKind, Node, Value};
use crate::sql::sql_types::SqlError;
use crate::sql::{datetime, pg_numeric};
use crate::sqlstate::SqlState;
use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, TypeSignature, Volatility,
};
use std::sync::Arc;

/// The functions `pg_json_plan` calls for casts and operators.
pub const JSON_IN: &str = "pg_json_in";
pub const JSONB_IN: &str = "pg_jsonb_in";
pub const GET: &str = "pg_json_get";
pub const GET_TEXT: &str = "pg_json_get_text";
pub const PATH: &str = "pg_json_path";
pub const PATH_TEXT: &str = "pg_json_path_text";
pub const CONTAINS: &str = "pg_jsonb_contains";
pub const EXISTS: &str = "pg_jsonb_exists";
pub const EQUAL: &str = "pg_jsonb_eq";
pub const CONCAT: &str = "pg_jsonb_concat";
pub const DELETE: &str = "pg_jsonb_delete";
pub const EXISTS_ANY: &str = "pg_jsonb_exists_any";
pub const EXISTS_ALL: &str = "pg_jsonb_exists_all";
pub const DELETE_PATH: &str = "pg_jsonb_delete_path";

fn failed(e: SqlError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// The JSON type an Arrow type carries, if any.
pub fn json_kind(ty: &DataType) -> Option<JsonKind> {
    match *ty {
        JSONB => Some(JsonKind::Jsonb),
        JSON => Some(JsonKind::Json),
        _ => None,
    }
}

fn arrow_of(kind: JsonKind) -> DataType {
    match kind {
        JsonKind::Json => JSON,
        JsonKind::Jsonb => JSONB,
    }
}

/// A JSON value of `kind` as a scalar.
fn json_scalar(kind: JsonKind, text: Option<String>) -> ScalarValue {
    match kind {
        JsonKind::Json => ScalarValue::LargeBinary(text.map(String::into_bytes)),
        JsonKind::Jsonb => ScalarValue::LargeUtf8(text),
    }
}

/// The text of a string or JSON argument; `None` for NULL.
fn text_of(value: &ScalarValue) -> Result<Option<String>> {
    Ok(match value {
        ScalarValue::LargeBinary(bytes) => match bytes {
            Some(bytes) => Some(
                String::from_utf8(bytes.clone())
                    .map_err(|_| failed(SqlError::internal("a json value is not UTF-8")))?,
            ),
            None => None,
        },
        v if v.is_null() => None,
        v => Some(
            super::udf::string(Some(v))
                .ok_or_else(|| {
                    failed(SqlError::undefined_function(format!(
                        "a JSON operator or function does not take a {} argument",
                        v.data_type()
                    )))
                })?
                .to_string(),
        ),
    })
}

/// A JSON argument parsed, with its text; `None` for NULL. A plain string is read as
/// JSON, as PostgreSQL reads an untyped literal where JSON is expected.
fn parsed(value: &ScalarValue) -> Result<Option<(String, Node)>> {
    let Some(text) = text_of(value)? else {
        return Ok(None);
    };
    let node = pg_json::parse(&text).map_err(failed)?;
    Ok(Some((text, node)))
}

/// A scalar function over JSON, row by row.
struct JsonFunction {
    name: &'static str,
    signature: Signature,
    returns: fn(&[DataType]) -> DataType,
    body: fn(&[ScalarValue], &[DataType]) -> Result<ScalarValue>,
}

impl std::fmt::Debug for JsonFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JsonFunction({})", self.name)
    }
}
impl PartialEq for JsonFunction {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for JsonFunction {}
impl std::hash::Hash for JsonFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}

impl ScalarUDFImpl for JsonFunction {
    fn name(&self) -> &str {
        self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok((self.returns)(args))
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let types: Vec<DataType> = args.args.iter().map(|a| a.data_type()).collect();
        let returns = (self.returns)(&types);
        super::udf::row_by_row(args, &returns, |values| (self.body)(values, &types))
    }
}

/// The kind of the JSON value a function's first argument is: a plain string is json.
fn first_kind(types: &[DataType]) -> JsonKind {
    types.first().and_then(json_kind).unwrap_or(JsonKind::Json)
}

/// `->` and `#>`: the member, element or path's value, of the argument's JSON type.
fn get(values: &[ScalarValue], types: &[DataType], path: bool) -> Result<ScalarValue> {
    let kind = first_kind(types);
    let found = navigate(values, path)?;
    Ok(json_scalar(
        kind,
        found.map(|(text, node)| node.text(&text).to_string()),
    ))
}

/// `->>` and `#>>`: as `->`, as text (a string's contents, NULL for null).
fn get_text(values: &[ScalarValue], path: bool) -> Result<ScalarValue> {
    let found = navigate(values, path)?;
    Ok(ScalarValue::Utf8(
        found.and_then(|(text, node)| node.as_text(&text)),
    ))
}

/// The source text and the node a `->` key or `#>` path leads to.
fn navigate(values: &[ScalarValue], path: bool) -> Result<Option<(String, Node)>> {
    let [json, key] = values else {
        return Err(failed(SqlError::internal(
            "a JSON operator takes two arguments",
        )));
    };
    let Some((text, root)) = parsed(json)? else {
        return Ok(None);
    };
    if key.is_null() {
        return Ok(None);
    }
    let steps: Vec<String> = match (path, key) {
        (true, key) => match text_array(key)?.into_iter().collect::<Option<Vec<_>>>() {
            Some(steps) => steps,
            None => return Ok(None),
        },
        (false, key) => {
            let step = match super::udf::string(Some(key)) {
                Some(member) => member.to_string(),
                None => {
                    let index = super::udf::int(Some(key)).ok_or_else(|| {
                        failed(SqlError::undefined_function(format!(
                            "operator does not exist: json -> {}",
                            key.data_type()
                        )))
                    })?;
                    // A jsonb scalar is also the one element of itself, as PostgreSQL
                    // stores it.
                    let scalar = !matches!(root.value, Value::Array(_) | Value::Object(_));
                    if scalar && first_kind_is_jsonb(json) && (index == 0 || index == -1) {
                        return Ok(Some((text, root)));
                    }
                    return Ok(root.element(index).cloned().map(|n| (text, n)));
                }
            };
            vec![step]
        }
    };
    let mut node = &root;
    for step in &steps {
        let next = match &node.value {
            Value::Object(_) => node.member(step),
            // A path step into an array is an index; one that is not a number leads
            // nowhere (PostgreSQL's NULL, not an error).
            Value::Array(_) => step
                .trim()
                .parse::<i64>()
                .ok()
                .and_then(|i| node.element(i)),
            _ => None,
        };
        match next {
            Some(next) => node = next,
            None => return Ok(None),
        }
    }
    let node = node.clone();
    Ok(Some((text, node)))
}

fn first_kind_is_jsonb(value: &ScalarValue) -> bool {
    matches!(value, ScalarValue::LargeUtf8(_))
}

/// A `text[]` argument's elements: a list, or an array literal's text (`'{a,b}'`).
fn text_array(value: &ScalarValue) -> Result<Vec<Option<String>>> {
    match value {
        ScalarValue::List(list) => {
            let items = list.value(0);
            (0..items.len())
                .map(|i| text_of(&ScalarValue::try_from_array(&items, i)?))
                .collect()
        }
        value => {
            let literal = text_of(value)?.unwrap_or_default();
            crate::sql::pg_array_text::parse(&literal).map_err(failed)
        }
    }
}

/// `?|` (`all` false) and `?&` (`all` true): whether any or all of the keys exist at
/// the top level; NULL keys are skipped, as PostgreSQL skips them.
fn exists_keys(values: &[ScalarValue], all: bool) -> Result<ScalarValue> {
    let [json, keys] = values else {
        return Err(failed(SqlError::internal("?| and ?& take two arguments")));
    };
    let (Some((_, node)), false) = (parsed(json)?, keys.is_null()) else {
        return Ok(ScalarValue::Boolean(None));
    };
    let keys: Vec<String> = text_array(keys)?.into_iter().flatten().collect();
    let has = |k: &String| pg_json::has_key(&node.value, k);
    Ok(ScalarValue::Boolean(Some(match all {
        true => keys.iter().all(has),
        false => keys.iter().any(has),
    })))
}

/// `#-`: the value without what the path leads to (unchanged if it leads nowhere).
fn delete_path(values: &[ScalarValue]) -> Result<ScalarValue> {
    let [json, path] = values else {
        return Err(failed(SqlError::internal("#- takes two arguments")));
    };
    let (Some((text, node)), false) = (parsed(json)?, path.is_null()) else {
        return Ok(ScalarValue::LargeUtf8(None));
    };
    let Some(steps) = text_array(path)?.into_iter().collect::<Option<Vec<_>>>() else {
        return Err(failed(SqlError::new(
            SqlState::NullValueNotAllowed,
            "path element at position 1 is null",
        )));
    };
    if !matches!(node.value, Value::Array(_) | Value::Object(_)) {
        return Err(failed(SqlError::new(
            SqlState::InvalidParameterValue,
            "cannot delete path in scalar",
        )));
    }
    jsonb_value(&without_path(&node, &text, &steps, 1)?)
}

/// The text of `node` without the value `steps` lead to; `position` is the first
/// step's in the whole path, for the error a step into an array that is no integer is.
fn without_path(node: &Node, text: &str, steps: &[String], position: usize) -> Result<String> {
    let Some((step, rest)) = steps.split_first() else {
        return Ok(node.text(text).to_string());
    };
    match &node.value {
        Value::Object(members) => {
            let kept: Vec<String> = members
                .iter()
                .filter(|(k, _)| !(k == step && rest.is_empty()))
                .map(|(k, n)| {
                    let mut member = String::new();
                    pg_json::quote(k, &mut member);
                    let value = match k == step {
                        true => without_path(n, text, rest, position + 1)?,
                        false => n.text(text).to_string(),
                    };
                    Ok(format!("{member}: {value}"))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(format!("{{{}}}", kept.join(", ")))
        }
        Value::Array(items) => {
            let index = step.trim().parse::<i64>().map_err(|_| {
                failed(SqlError::new(
                    SqlState::InvalidTextRepresentation,
                    format!("path element at position {position} is not an integer: \"{step}\""),
                ))
            })?;
            let target = node.element(index).map(|n| n.span.clone());
            let kept: Vec<String> = items
                .iter()
                .filter(|i| !(Some(&i.span) == target.as_ref() && rest.is_empty()))
                .map(|i| match Some(&i.span) == target.as_ref() {
                    true => without_path(i, text, rest, position + 1),
                    false => Ok(i.text(text).to_string()),
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(format!("[{}]", kept.join(", ")))
        }
        _ => Ok(node.text(text).to_string()),
    }
}

/// `@>`: whether the first jsonb value contains the second.
fn contains(values: &[ScalarValue]) -> Result<ScalarValue> {
    let [outer, inner] = values else {
        return Err(failed(SqlError::internal("@> takes two arguments")));
    };
    Ok(ScalarValue::Boolean(
        match (parsed(outer)?, parsed(inner)?) {
            (Some((_, outer)), Some((_, inner))) => {
                Some(pg_json::contains(&outer.value, &inner.value))
            }
            _ => None,
        },
    ))
}

/// `?`: whether a key (or string element) exists at the top level.
fn exists(values: &[ScalarValue]) -> Result<ScalarValue> {
    let [json, key] = values else {
        return Err(failed(SqlError::internal("? takes two arguments")));
    };
    Ok(ScalarValue::Boolean(match (parsed(json)?, text_of(key)?) {
        (Some((_, node)), Some(key)) => Some(pg_json::has_key(&node.value, &key)),
        _ => None,
    }))
}

/// jsonb `=`, by value.
fn equal(values: &[ScalarValue]) -> Result<ScalarValue> {
    let [a, b] = values else {
        return Err(failed(SqlError::internal("= takes two arguments")));
    };
    Ok(ScalarValue::Boolean(match (parsed(a)?, parsed(b)?) {
        (Some((_, a)), Some((_, b))) => Some(pg_json::jsonb_equal(&a.value, &b.value)),
        _ => None,
    }))
}

/// jsonb `||`: two objects merge (the right one's keys winning); anything else
/// concatenates as arrays, a non-array being an array of itself.
fn concat(values: &[ScalarValue]) -> Result<ScalarValue> {
    let [a, b] = values else {
        return Err(failed(SqlError::internal("|| takes two arguments")));
    };
    let (Some((a_text, a)), Some((b_text, b))) = (parsed(a)?, parsed(b)?) else {
        return Ok(ScalarValue::LargeUtf8(None));
    };
    let text = match (&a.value, &b.value) {
        (Value::Object(_), Value::Object(_)) => {
            let inner = |text: &str| text.trim()[1..text.trim().len() - 1].trim().to_string();
            let parts: Vec<String> = [inner(a.text(&a_text)), inner(b.text(&b_text))]
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        _ => {
            let items = |node: &Node, text: &str| match &node.value {
                Value::Array(items) => items.iter().map(|i| i.text(text).to_string()).collect(),
                _ => vec![node.text(text).to_string()],
            };
            let mut all: Vec<String> = items(&a, &a_text);
            all.extend(items(&b, &b_text));
            format!("[{}]", all.join(", "))
        }
    };
    jsonb_value(&text)
}

/// jsonb `-`: an object without a key, an array without its string elements equal to
/// a text, or without the element at an integer's index.
fn delete(values: &[ScalarValue]) -> Result<ScalarValue> {
    let [json, key] = values else {
        return Err(failed(SqlError::internal("- takes two arguments")));
    };
    let Some((text, node)) = parsed(json)? else {
        return Ok(ScalarValue::LargeUtf8(None));
    };
    if key.is_null() {
        return Ok(ScalarValue::LargeUtf8(None));
    }
    let kept: Vec<String> = match (&node.value, super::udf::string(Some(key))) {
        (Value::Object(members), Some(key)) => {
            let kept = members
                .iter()
                .filter(|(k, _)| k != key)
                .map(|(k, n)| {
                    let mut member = String::new();
                    pg_json::quote(k, &mut member);
                    format!("{member}: {}", n.text(&text))
                })
                .collect::<Vec<_>>();
            return jsonb_value(&format!("{{{}}}", kept.join(", ")));
        }
        (Value::Array(items), Some(key)) => items
            .iter()
            .filter(|i| !matches!(&i.value, Value::String(s) if s == key))
            .map(|i| i.text(&text).to_string())
            .collect(),
        (Value::Array(items), None) => {
            let index = super::udf::int(Some(key)).unwrap_or(i64::MAX);
            let removed = node.element(index).map(|n| n.span.clone());
            items
                .iter()
                .filter(|i| Some(&i.span) != removed.as_ref())
                .map(|i| i.text(&text).to_string())
                .collect()
        }
        _ => {
            return Err(failed(SqlError::new(
                SqlState::InvalidParameterValue,
                "cannot delete from scalar",
            )))
        }
    };
    jsonb_value(&format!("[{}]", kept.join(", ")))
}

/// A jsonb scalar of JSON text built here (normalized on the way).
fn jsonb_value(text: &str) -> Result<ScalarValue> {
    Ok(ScalarValue::LargeUtf8(Some(
        pg_json::input(text, JsonKind::Jsonb).map_err(failed)?,
    )))
}

/// A cast to `json` or `jsonb`.
fn cast_in(values: &[ScalarValue], kind: JsonKind) -> Result<ScalarValue> {
    let text = match values.first() {
        Some(value) => text_of(value)?,
        None => None,
    };
    Ok(json_scalar(
        kind,
        text.map(|t| pg_json::input(&t, kind))
            .transpose()
            .map_err(failed)?,
    ))
}

/// Appends a SQL value as JSON, as `to_jsonb` writes it: numbers and booleans as
/// themselves, JSON as itself, dates and times in ISO 8601, everything else as a
/// string of its text.
fn write_value(value: &ScalarValue, out: &mut String) -> Result<()> {
    use ScalarValue as S;
    if value.is_null() {
        out.push_str("null");
        return Ok(());
    }
    match value {
        S::Boolean(Some(b)) => out.push_str(if *b { "true" } else { "false" }),
        S::Int8(Some(_))
        | S::Int16(Some(_))
        | S::Int32(Some(_))
        | S::Int64(Some(_))
        | S::UInt8(Some(_))
        | S::UInt16(Some(_))
        | S::UInt32(Some(_))
        | S::UInt64(Some(_)) => out.push_str(&value.to_string()),
        S::Float32(Some(f)) => write_float(f64::from(*f), out),
        S::Float64(Some(f)) => write_float(*f, out),
        S::Decimal128(Some(v), _, scale) => {
            out.push_str(&pg_numeric::format(&pg_numeric::from_i128(*v, *scale)))
        }
        S::LargeUtf8(Some(text)) => out.push_str(text),
        S::LargeBinary(Some(bytes)) => out.push_str(&String::from_utf8_lossy(bytes)),
        S::Utf8(Some(text)) | S::Utf8View(Some(text)) => pg_json::quote(text, out),
        S::Date32(Some(days)) => {
            pg_json::quote(&datetime::format_date(*days).map_err(failed)?, out)
        }
        S::TimestampMicrosecond(Some(micros), zone) => {
            let utc = datetime::TimeZone::default();
            let text =
                datetime::format_timestamp(*micros, zone.as_ref().map(|_| &utc)).map_err(failed)?;
            pg_json::quote(&iso_timestamp(&text, zone.is_some()), out)
        }
        S::TimestampSecond(..) | S::TimestampMillisecond(..) | S::TimestampNanosecond(..) => {
            let micros = value.cast_to(&DataType::Timestamp(
                TimeUnit::Microsecond,
                match value {
                    S::TimestampSecond(_, z)
                    | S::TimestampMillisecond(_, z)
                    | S::TimestampNanosecond(_, z) => z.clone(),
                    _ => None,
                },
            ))?;
            write_value(&micros, out)?
        }
        S::FixedSizeBinary(16, Some(bytes)) => match <[u8; 16]>::try_from(bytes.as_slice()) {
            Ok(uuid) => pg_json::quote(&crate::sql::format_uuid(&uuid), out),
            Err(_) => pg_json::quote(&hex(bytes), out),
        },
        S::Binary(Some(bytes)) | S::FixedSizeBinary(_, Some(bytes)) => {
            pg_json::quote(&hex(bytes), out)
        }
        S::List(list) => {
            let items = list.value(0);
            out.push('[');
            for i in 0..items.len() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(&ScalarValue::try_from_array(&items, i)?, out)?;
            }
            out.push(']');
        }
        other => {
            return Err(failed(SqlError::unsupported(format!(
                "a value of type {} cannot be made JSON yet",
                other.data_type()
            ))))
        }
    }
    Ok(())
}

/// A float as a JSON number (NaN and the infinities as strings, as PostgreSQL).
fn write_float(value: f64, out: &mut String) {
    match pg_numeric::from_f64(value) {
        Some(n) => out.push_str(&pg_numeric::format(&n)),
        None if value.is_nan() => out.push_str("\"NaN\""),
        None if value > 0.0 => out.push_str("\"Infinity\""),
        None => out.push_str("\"-Infinity\""),
    }
}

/// bytea's text form, `\x0102`.
fn hex(bytes: &[u8]) -> String {
    let mut text = String::from("\\x");
    for b in bytes {
        text.push_str(&format!("{b:02x}"));
    }
    text
}

/// A `timestamptz`'s JSON text in `zone`, unquoted: `2024-01-01T11:00:00+01:00`.
pub(super) fn timestamptz_json(
    micros: i64,
    zone: &datetime::TimeZone,
) -> crate::sql::sql_types::SqlResult<String> {
    Ok(iso_timestamp(
        &datetime::format_timestamp(micros, Some(zone))?,
        true,
    ))
}

/// `2024-01-01 10:00:00+00` as JSON writes it: `2024-01-01T10:00:00+00:00`.
fn iso_timestamp(text: &str, zoned: bool) -> String {
    let mut iso = text.replacen(' ', "T", 1);
    if zoned && iso.len() >= 3 {
        let zone_at = iso.len() - 3;
        if iso[zone_at..].starts_with(['+', '-']) {
            iso.push_str(":00");
        }
    }
    iso
}

/// `jsonb_build_object` / `json_build_object`: keys and values alternating.
fn build_object(values: &[ScalarValue], kind: JsonKind) -> Result<ScalarValue> {
    if !values.len().is_multiple_of(2) {
        return Err(failed(SqlError::new(
            SqlState::InvalidParameterValue,
            "argument list must have even number of elements",
        )));
    }
    let separator = match kind {
        JsonKind::Json => " : ",
        JsonKind::Jsonb => ": ",
    };
    let mut out = String::from("{");
    for (i, pair) in values.chunks(2).enumerate() {
        let key = match &pair[0] {
            k if k.is_null() => {
                return Err(failed(SqlError::new(
                    SqlState::InvalidParameterValue,
                    format!("argument {}: key must not be null", 2 * i + 1),
                )))
            }
            k => key_text(k)?,
        };
        if i > 0 {
            out.push_str(", ");
        }
        pg_json::quote(&key, &mut out);
        out.push_str(separator);
        write_value(&pair[1], &mut out)?;
    }
    out.push('}');
    finish(kind, out)
}

/// An object key: a string's contents, any other value's text.
fn key_text(key: &ScalarValue) -> Result<String> {
    match super::udf::string(Some(key)) {
        Some(s) => Ok(s.to_string()),
        None => {
            let mut text = String::new();
            write_value(key, &mut text)?;
            Ok(text.trim_matches('"').to_string())
        }
    }
}

/// `jsonb_build_array` / `json_build_array`.
fn build_array(values: &[ScalarValue], kind: JsonKind) -> Result<ScalarValue> {
    let mut out = String::from("[");
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_value(value, &mut out)?;
    }
    out.push(']');
    finish(kind, out)
}

/// JSON text built here as a value of `kind`: jsonb's normalized.
fn finish(kind: JsonKind, text: String) -> Result<ScalarValue> {
    match kind {
        JsonKind::Json => Ok(json_scalar(kind, Some(text))),
        JsonKind::Jsonb => jsonb_value(&text),
    }
}

/// `to_jsonb` / `to_json`: one value as JSON (NULL stays NULL).
fn to_json(values: &[ScalarValue], kind: JsonKind) -> Result<ScalarValue> {
    match values.first() {
        Some(v) if !v.is_null() => {
            let mut out = String::new();
            write_value(v, &mut out)?;
            finish(kind, out)
        }
        _ => Ok(json_scalar(kind, None)),
    }
}

/// `jsonb_typeof` / `json_typeof`.
fn type_of(values: &[ScalarValue]) -> Result<ScalarValue> {
    let found = match values.first() {
        Some(v) => parsed(v)?,
        None => None,
    };
    Ok(ScalarValue::Utf8(
        found.map(|(_, n)| n.type_name().to_string()),
    ))
}

/// `jsonb_array_length` / `json_array_length`: 22023 for a non-array.
fn array_length(values: &[ScalarValue]) -> Result<ScalarValue> {
    let found = match values.first() {
        Some(v) => parsed(v)?,
        None => None,
    };
    match found.map(|(_, n)| n.value) {
        None => Ok(ScalarValue::Int32(None)),
        Some(Value::Array(items)) => Ok(ScalarValue::Int32(i32::try_from(items.len()).ok())),
        Some(Value::Object(_)) => Err(failed(SqlError::new(
            SqlState::InvalidParameterValue,
            "cannot get array length of a non-array",
        ))),
        Some(_) => Err(failed(SqlError::new(
            SqlState::InvalidParameterValue,
            "cannot get array length of a scalar",
        ))),
    }
}

/// The scalar function named `name` of this module (`pg_json_plan` calls them).
pub fn function(name: &str) -> Option<Arc<ScalarUDF>> {
    FUNCTIONS.iter().find(|f| f.name() == name).cloned()
}

static FUNCTIONS: std::sync::LazyLock<Vec<Arc<ScalarUDF>>> = std::sync::LazyLock::new(functions);

/// Registers the JSON functions and aggregates.
pub fn register(state: &mut datafusion::execution::session_state::SessionState) -> Result<()> {
    for function in FUNCTIONS.iter() {
        state.register_udf(Arc::clone(function))?;
    }
    for kind in [JsonKind::Jsonb, JsonKind::Json] {
        let aggregate = JsonAgg {
            kind,
            signature: Signature::any(1, Volatility::Immutable),
        };
        state.register_udaf(Arc::new(AggregateUDF::new_from_impl(aggregate)))?;
    }
    Ok(())
}

fn functions() -> Vec<Arc<ScalarUDF>> {
    type Returns = fn(&[DataType]) -> DataType;
    type Body = fn(&[ScalarValue], &[DataType]) -> Result<ScalarValue>;
    let jsonb: Returns = |_| JSONB;
    let json: Returns = |_| JSON;
    let same: Returns = |types| arrow_of(first_kind(types));
    let text: Returns = |_| DataType::Utf8;
    let boolean: Returns = |_| DataType::Boolean;
    let int: Returns = |_| DataType::Int32;
    let functions: Vec<(&'static str, usize, Returns, Body)> = vec![
        (JSON_IN, 1, json, |v, _| cast_in(v, JsonKind::Json)),
        (JSONB_IN, 1, jsonb, |v, _| cast_in(v, JsonKind::Jsonb)),
        (GET, 2, same, |v, t| get(v, t, false)),
        (PATH, 2, same, |v, t| get(v, t, true)),
        (GET_TEXT, 2, text, |v, _| get_text(v, false)),
        (PATH_TEXT, 2, text, |v, _| get_text(v, true)),
        (CONTAINS, 2, boolean, |v, _| contains(v)),
        (EXISTS, 2, boolean, |v, _| exists(v)),
        (EQUAL, 2, boolean, |v, _| equal(v)),
        (CONCAT, 2, jsonb, |v, _| concat(v)),
        (DELETE, 2, jsonb, |v, _| delete(v)),
        (EXISTS_ANY, 2, boolean, |v, _| exists_keys(v, false)),
        (EXISTS_ALL, 2, boolean, |v, _| exists_keys(v, true)),
        (DELETE_PATH, 2, jsonb, |v, _| delete_path(v)),
        ("jsonb_typeof", 1, text, |v, _| type_of(v)),
        ("json_typeof", 1, text, |v, _| type_of(v)),
        ("jsonb_array_length", 1, int, |v, _| array_length(v)),
        ("json_array_length", 1, int, |v, _| array_length(v)),
        ("to_jsonb", 1, jsonb, |v, _| to_json(v, JsonKind::Jsonb)),
        ("to_json", 1, json, |v, _| to_json(v, JsonKind::Json)),
        ("jsonb_build_object", 0, jsonb, |v, _| {
            build_object(v, JsonKind::Jsonb)
        }),
        ("json_build_object", 0, json, |v, _| {
            build_object(v, JsonKind::Json)
        }),
        ("jsonb_build_array", 0, jsonb, |v, _| {
            build_array(v, JsonKind::Jsonb)
        }),
        ("json_build_array", 0, json, |v, _| {
            build_array(v, JsonKind::Json)
        }),
    ];
    let mut all = Vec::with_capacity(functions.len());
    for (name, arity, returns, body) in functions {
        let signature = match arity {
            0 => Signature::one_of(
                vec![TypeSignature::Nullary, TypeSignature::VariadicAny],
                Volatility::Immutable,
            ),
            n => Signature::any(n, Volatility::Immutable),
        };
        let function = JsonFunction {
            name,
            signature,
            returns,
            body,
        };
        all.push(Arc::new(ScalarUDF::new_from_impl(function)));
    }
    all
}

/// `jsonb_agg` / `json_agg`: the values of a group as a JSON array, NULL for none.
#[derive(Debug, PartialEq, Eq, Hash)]
struct JsonAgg {
    kind: JsonKind,
    signature: Signature,
}

impl AggregateUDFImpl for JsonAgg {
    fn name(&self) -> &str {
        match self.kind {
            JsonKind::Json => "json_agg",
            JsonKind::Jsonb => "jsonb_agg",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(arrow_of(self.kind))
    }

    /// The elements so far, each as JSON text, joined by `, `; NULL for none.
    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format!("{}[elements]", args.name),
            DataType::Utf8,
            true,
        ))])
    }

    fn accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(JsonAggAccumulator {
            kind: self.kind,
            elements: None,
        }))
    }
}

#[derive(Debug)]
struct JsonAggAccumulator {
    kind: JsonKind,
    elements: Option<String>,
}

impl JsonAggAccumulator {
    fn push(&mut self, element: &str) {
        match &mut self.elements {
            Some(elements) => {
                elements.push_str(", ");
                elements.push_str(element);
            }
            None => self.elements = Some(element.to_string()),
        }
    }
}

impl Accumulator for JsonAggAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(array) = values.first() else {
            return Ok(());
        };
        for row in 0..array.len() {
            let mut element = String::new();
            write_value(&ScalarValue::try_from_array(array, row)?, &mut element)?;
            self.push(&element);
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let Some(array) = states.first() else {
            return Ok(());
        };
        for row in 0..array.len() {
            if let Some(elements) = text_of(&ScalarValue::try_from_array(array, row)?)? {
                self.push(&elements);
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::Utf8(self.elements.clone())])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        match &self.elements {
            None => Ok(json_scalar(self.kind, None)),
            Some(elements) => finish(self.kind, format!("[{elements}]")),
        }
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.elements.as_ref().map_or(0, String::capacity)
    }
}
