//! Scalar expressions: compiled once from the sqlparser AST against a relation's columns
//! (with `$n` parameter types inferred from what they meet), then evaluated per row with
//! SQL's NULL semantics.

use super::char_casts::CastLength;
use super::sql_types::{ArrayOf, Datum, SqlError, SqlResult, SqlType};
use super::values::{cast, compare};
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, BinaryOperator, Expr, UnaryOperator};
use std::cmp::Ordering;

/// Comparison operators are the engine's, so a comparison pushed down to the engine
/// needs no translation.
pub use crate::engine::CompareOp as CmpOp;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// A compiled expression. `Column(i)` is slot `i` of the row being evaluated.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Column(usize),
    Const(Datum),
    Param(usize),
    Compare(CmpOp, Box<Scalar>, Box<Scalar>),
    And(Vec<Scalar>),
    Or(Vec<Scalar>),
    Not(Box<Scalar>),
    IsNull(Box<Scalar>, bool),
    InList(Box<Scalar>, Vec<Scalar>, bool),
    Arith(ArithOp, Box<Scalar>, Box<Scalar>),
    Neg(Box<Scalar>),
    Concat(Box<Scalar>, Box<Scalar>),
    Like(Box<Scalar>, Box<Scalar>, bool, bool),
    Cast(Box<Scalar>, SqlType),
    Function(Function, Vec<Scalar>),
    /// `COALESCE(a, b, ...)`: the first operand that is not NULL.
    Coalesce(Vec<Scalar>),
}

impl Scalar {
    /// Whether evaluating this reads a column of the row (PostgreSQL asks for SELECT
    /// privilege on whatever a statement reads, UPDATE and DELETE included).
    pub fn reads_columns(&self) -> bool {
        let mut reads = false;
        self.visit_columns(&mut |_| reads = true);
        reads
    }

    /// Calls `visit` with the slot of every column the expression reads.
    pub fn visit_columns(&self, visit: &mut impl FnMut(usize)) {
        match self {
            Scalar::Column(slot) => visit(*slot),
            Scalar::Const(_) | Scalar::Param(_) => {}
            Scalar::Compare(_, l, r)
            | Scalar::Arith(_, l, r)
            | Scalar::Concat(l, r)
            | Scalar::Like(l, r, _, _) => {
                l.visit_columns(visit);
                r.visit_columns(visit);
            }
            Scalar::And(parts)
            | Scalar::Or(parts)
            | Scalar::Function(_, parts)
            | Scalar::Coalesce(parts) => parts.iter().for_each(|p| p.visit_columns(visit)),
            Scalar::Not(inner)
            | Scalar::Neg(inner)
            | Scalar::IsNull(inner, _)
            | Scalar::Cast(inner, _) => inner.visit_columns(visit),
            Scalar::InList(value, list, _) => {
                value.visit_columns(visit);
                list.iter().for_each(|p| p.visit_columns(visit));
            }
        }
    }
}

/// Scalar functions evaluated per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    Md5,
    Lpad,
    Substr,
    Lower,
    Upper,
    Length,
    /// A `real`'s text form (`0.1`, not the double it is held in, `0.10000000149011612`).
    RealText,
    /// The text of a `timestamp`, `timestamptz` (in the session's zone), `date` or
    /// `uuid`.
    OwnKindText,
}

/// What expressions are compiled against: the relation's columns and the statement's
/// parameters.
pub trait Scope {
    /// The slot and type of a column, by (folded) name and optional qualifier.
    fn column(&mut self, qualifier: Option<&str>, name: &str) -> SqlResult<(usize, SqlType)>;
}

/// A scope with no columns (SELECT without FROM, VALUES).
pub struct NoColumns;

impl Scope for NoColumns {
    fn column(&mut self, _: Option<&str>, name: &str) -> SqlResult<(usize, SqlType)> {
        Err(SqlError::new(
            SqlState::UndefinedColumn,
            format!("column \"{name}\" does not exist"),
        ))
    }
}

/// Parameter types seen so far: given by the client or inferred.
#[derive(Debug, Clone, Default)]
pub struct Params {
    pub types: Vec<Option<SqlType>>,
    /// The session's database and user, for current_database() and current_user.
    pub session: (String, String),
}

impl Params {
    pub fn new(given: &[Option<SqlType>]) -> Self {
        Params {
            types: given.to_vec(),
            session: Default::default(),
        }
    }

    fn note(&mut self, index: usize, ty: Option<SqlType>) {
        if self.types.len() <= index {
            self.types.resize(index + 1, None);
        }
        // A parameter is a value, not a column: a numeric one keeps its own scale
        // (`price = $1` compares exactly; an INSERT fits it to the column later).
        if self.types[index].is_none() {
            self.types[index] = ty.map(comparison_type);
        }
    }

    pub fn ty(&self, index: usize) -> Option<SqlType> {
        self.types.get(index).copied().flatten()
    }

    /// Final types: anything never inferred is TEXT, as PostgreSQL's `unknown` becomes.
    pub fn finish(&self) -> Vec<SqlType> {
        self.types
            .iter()
            .map(|t| t.unwrap_or(SqlType::Text))
            .collect()
    }
}

/// Folds an identifier as PostgreSQL does: unquoted names become lower case.
pub fn fold(ident: &ast::Ident) -> String {
    if ident.quote_style.is_some() {
        ident.value.clone()
    } else {
        ident.value.to_lowercase()
    }
}

/// `quote_ident`: quotes unless the name is a plain lower-case identifier, so that
/// `fold` reads it back as it is.
pub fn quote_ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// The index of a `$n` placeholder.
pub fn placeholder_index(text: &str) -> SqlResult<usize> {
    let number = text
        .strip_prefix('$')
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n >= 1)
        .ok_or_else(|| SqlError::syntax(format!("bad parameter placeholder {text}")))?;
    // A statement's parameter types are kept by number, so `$9223372036854775807` would
    // ask for a list that long. No Bind message can carry more than 65,535 values.
    if number > MAX_PARAMETERS {
        return Err(SqlError::new(
            SqlState::UndefinedParameter,
            format!("there is no parameter {text}"),
        ));
    }
    Ok(number - 1)
}

/// The most parameters a statement can be given: a Bind message counts them in 16 bits.
const MAX_PARAMETERS: usize = u16::MAX as usize;

/// Compiles an expression; `expected` is the type the context wants (for parameters).
pub fn compile(
    expr: &Expr,
    scope: &mut dyn Scope,
    params: &mut Params,
    expected: Option<SqlType>,
) -> SqlResult<Scalar> {
    compile_unfolded(expr, scope, params, expected).map(fold_constant)
}

/// An operation whose operands are all constants, computed once now, so that a key
/// compared with it (`h = substr(md5('200003'), 1, 4) || '200003'`, `s = 2 + 2`) picks
/// the access path as a constant would. Operands were folded first (compilation is
/// bottom up); one that fails (`1 / 0`) is left to fail when it runs.
fn fold_constant(scalar: Scalar) -> Scalar {
    let is_const = |s: &Scalar| matches!(s, Scalar::Const(_));
    let operation_of_constants = |s: &Scalar| match s {
        Scalar::Arith(_, l, r) | Scalar::Concat(l, r) => is_const(l) && is_const(r),
        // Every function the fast path has is pure.
        Scalar::Function(_, args) => args.iter().all(is_const),
        _ => false,
    };
    let foldable = match &scalar {
        // Integer arithmetic checked against its type (`1 + 2` is an integer); a cast of
        // a constant alone stays, as it says the constant's type.
        Scalar::Cast(inner, _) => operation_of_constants(inner),
        other => operation_of_constants(other),
    };
    if !foldable {
        return scalar;
    }
    match eval(&scalar, &[], &[]) {
        Ok(value) => Scalar::Const(value),
        Err(_) => scalar,
    }
}

fn compile_unfolded(
    expr: &Expr,
    scope: &mut dyn Scope,
    params: &mut Params,
    expected: Option<SqlType>,
) -> SqlResult<Scalar> {
    Ok(match expr {
        Expr::Identifier(ident) => Scalar::Column(scope.column(None, &fold(ident))?.0),
        Expr::CompoundIdentifier(parts) => {
            let names: Vec<String> = parts.iter().map(fold).collect();
            let (qualifier, name) = match names.as_slice() {
                [q, n] => (Some(q.as_str()), n.as_str()),
                [_, q, n] => (Some(q.as_str()), n.as_str()),
                _ => {
                    return Err(SqlError::new(
                        SqlState::UndefinedColumn,
                        format!("column \"{}\" does not exist", names.join(".")),
                    ))
                }
            };
            Scalar::Column(scope.column(qualifier, name)?.0)
        }
        Expr::Value(v) => literal(&v.value, params, expected)?,
        Expr::Nested(inner) => compile(inner, scope, params, expected)?,
        Expr::UnaryOp { op, expr } => match op {
            // -9223372036854775808 is a bigint, though its digits alone are not.
            UnaryOperator::Minus
                if matches!(&**expr, Expr::Value(v)
                    if matches!(&v.value, ast::Value::Number(n, _) if n == "9223372036854775808")) =>
            {
                Scalar::Const(Datum::Int(i64::MIN))
            }
            UnaryOperator::Minus => match compile_typed(expr, scope, params, expected)? {
                (Scalar::Const(Datum::Int(i)), _) => Scalar::Const(Datum::Int(-i)),
                (Scalar::Const(Datum::Float(f)), _) => Scalar::Const(Datum::Float(-f)),
                (Scalar::Const(Datum::Numeric(n)), _) => Scalar::Const(Datum::Numeric(-n)),
                // A numeric negates exactly here; a date, time or uuid not at all.
                (other, ty) if family(&other, ty) == Some(Family::Numeric) => {
                    Scalar::Neg(Box::new(other))
                }
                (other, ty) if is_own_kind(&other, ty) => return Err(temporal_operand()),
                (other, _) => Scalar::Neg(Box::new(other)),
            },
            UnaryOperator::Plus => compile(expr, scope, params, expected)?,
            UnaryOperator::Not => Scalar::Not(Box::new(compile_operand(
                expr,
                scope,
                params,
                Some(SqlType::Bool),
            )?)),
            other => {
                return Err(SqlError::unsupported(format!(
                    "operator {other} is not supported"
                )))
            }
        },
        Expr::BinaryOp { left, op, right } => binary(left, op, right, scope, params)?,
        Expr::IsNull(e) => Scalar::IsNull(Box::new(compile(e, scope, params, None)?), false),
        Expr::IsNotNull(e) => Scalar::IsNull(Box::new(compile(e, scope, params, None)?), true),
        Expr::IsTrue(e) => Scalar::Compare(
            CmpOp::Eq,
            Box::new(compile_operand(e, scope, params, Some(SqlType::Bool))?),
            Box::new(Scalar::Const(Datum::Bool(true))),
        ),
        Expr::IsFalse(e) => Scalar::Compare(
            CmpOp::Eq,
            Box::new(compile_operand(e, scope, params, Some(SqlType::Bool))?),
            Box::new(Scalar::Const(Datum::Bool(false))),
        ),
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let (target, ty) = compile_typed(expr, scope, params, None)?;
            let items = list
                .iter()
                .map(|e| compile_comparable(e, scope, params, ty))
                .collect::<SqlResult<Vec<_>>>()?;
            Scalar::InList(Box::new(target), items, *negated)
        }
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => {
            let (target, ty) = compile_typed(expr, scope, params, None)?;
            let low = compile_comparable(low, scope, params, ty)?;
            let high = compile_comparable(high, scope, params, ty)?;
            let within = Scalar::And(vec![
                Scalar::Compare(CmpOp::Ge, Box::new(target.clone()), Box::new(low)),
                Scalar::Compare(CmpOp::Le, Box::new(target), Box::new(high)),
            ]);
            if *negated {
                Scalar::Not(Box::new(within))
            } else {
                within
            }
        }
        Expr::Like {
            negated,
            expr: target,
            pattern,
            ..
        }
        | Expr::ILike {
            negated,
            expr: target,
            pattern,
            ..
        } => Scalar::Like(
            Box::new(compile_operand(target, scope, params, Some(SqlType::Text))?),
            Box::new(compile_operand(
                pattern,
                scope,
                params,
                Some(SqlType::Text),
            )?),
            *negated,
            matches!(expr, Expr::ILike { .. }),
        ),
        Expr::Cast {
            expr, data_type, ..
        } => compile_cast(expr, data_type, scope, params)?,
        Expr::TypedString(typed) => {
            let ty = super::sql_types::sql_type(&typed.data_type)?;
            if ty.json_kind().is_some() {
                return Err(temporal_operand());
            }
            match literal(&typed.value.value, params, Some(ty))? {
                Scalar::Const(d) => typed_constant(cast(d, ty)?, ty),
                other => other,
            }
        }
        Expr::Function(function) => session_function(function, scope, params)?,
        Expr::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            let mut args = vec![compile_operand(expr, scope, params, Some(SqlType::Text))?];
            args.push(match substring_from {
                Some(from) => compile_operand(from, scope, params, Some(SqlType::Int8))?,
                None => Scalar::Const(Datum::Int(1)),
            });
            if let Some(len) = substring_for {
                args.push(compile_operand(len, scope, params, Some(SqlType::Int8))?);
            }
            Scalar::Function(Function::Substr, args)
        }
        other => {
            return Err(SqlError::unsupported(format!(
                "expression {other} is not supported here"
            )))
        }
    })
}

/// The argument-free functions clients call to learn about the session.
fn session_function(
    function: &ast::Function,
    scope: &mut dyn Scope,
    params: &mut Params,
) -> SqlResult<Scalar> {
    let name = function.name.to_string().to_lowercase();
    let name = name.strip_prefix("pg_catalog.").unwrap_or(&name);
    let no_args = match &function.args {
        ast::FunctionArguments::None => true,
        ast::FunctionArguments::List(list) => list.args.is_empty(),
        ast::FunctionArguments::Subquery(_) => false,
    };
    let function_of = |name: &str| match name {
        "md5" => Some((Function::Md5, 1..=1)),
        "lpad" => Some((Function::Lpad, 2..=3)),
        "substr" | "substring" => Some((Function::Substr, 2..=3)),
        "lower" => Some((Function::Lower, 1..=1)),
        "upper" => Some((Function::Upper, 1..=1)),
        "length" | "char_length" => Some((Function::Length, 1..=1)),
        _ => None,
    };
    if let (Some((f, arity)), ast::FunctionArguments::List(list)) =
        (function_of(name), &function.args)
    {
        if !arity.contains(&list.args.len()) {
            return Err(SqlError::undefined_function(format!(
                "function {name} does not take {} arguments",
                list.args.len()
            )));
        }
        let mut args = Vec::new();
        for (i, arg) in list.args.iter().enumerate() {
            let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(expr)) = arg else {
                return Err(SqlError::unsupported(format!("argument {arg} of {name}")));
            };
            let ty = if i == 0 {
                SqlType::Text
            } else if f == Function::Lpad && i == 2 {
                SqlType::Text
            } else {
                SqlType::Int8
            };
            args.push(compile_operand(expr, scope, params, Some(ty))?);
        }
        return Ok(Scalar::Function(f, args));
    }
    if let ("coalesce", ast::FunctionArguments::List(list)) = (name, &function.args) {
        let mut operands = Vec::with_capacity(list.args.len());
        for arg in &list.args {
            let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(expr)) = arg else {
                return Err(SqlError::unsupported(format!("argument {arg} of coalesce")));
            };
            operands.push(compile_operand(expr, scope, params, None)?);
        }
        if operands.is_empty() {
            return Err(SqlError::syntax("syntax error at or near \")\""));
        }
        return Ok(Scalar::Coalesce(operands));
    }
    let (database, user) = &params.session;
    let value = match (name, no_args) {
        ("version", true) => format!(
            "PostgreSQL {} (pgwide {})",
            super::SERVER_VERSION,
            env!("CARGO_PKG_VERSION")
        ),
        ("current_database", true) => database.clone(),
        ("current_schema", true) => "public".into(),
        ("current_user" | "session_user" | "user" | "current_role", true) => user.clone(),
        _ => {
            return Err(SqlError::undefined_function(format!(
                "function {} does not exist or is not supported yet",
                function.name
            )))
        }
    };
    Ok(Scalar::Const(Datum::Text(value)))
}

fn binary(
    left: &Expr,
    op: &BinaryOperator,
    right: &Expr,
    scope: &mut dyn Scope,
    params: &mut Params,
) -> SqlResult<Scalar> {
    let cmp = match op {
        BinaryOperator::Eq => Some(CmpOp::Eq),
        BinaryOperator::NotEq => Some(CmpOp::Ne),
        BinaryOperator::Lt => Some(CmpOp::Lt),
        BinaryOperator::LtEq => Some(CmpOp::Le),
        BinaryOperator::Gt => Some(CmpOp::Gt),
        BinaryOperator::GtEq => Some(CmpOp::Ge),
        _ => None,
    };
    // Compile a column side first so a parameter on the other side takes its type.
    let compile_pair = |scope: &mut dyn Scope,
                        params: &mut Params,
                        hint: Option<SqlType>|
     -> SqlResult<(Typed, Typed)> {
        let left_is_param =
            matches!(left, Expr::Value(v) if matches!(v.value, ast::Value::Placeholder(_)));
        if left_is_param {
            let (r, rty) = compile_typed(right, scope, params, hint)?;
            let (l, lty) = compile_typed(left, scope, params, rty.or(hint))?;
            Ok(((l, lty), (r, rty)))
        } else {
            let (l, lty) = compile_typed(left, scope, params, hint)?;
            let (r, rty) = compile_typed(right, scope, params, lty.or(hint))?;
            Ok(((l, lty), (r, rty)))
        }
    };
    if let Some(cmp) = cmp {
        let ((l, lty), (r, rty)) = compile_pair(scope, params, None)?;
        let (l, r) = comparable(l, lty, r, rty)?;
        return Ok(Scalar::Compare(cmp, Box::new(l), Box::new(r)));
    }
    Ok(match op {
        BinaryOperator::And => Scalar::And(vec![
            compile_operand(left, scope, params, Some(SqlType::Bool))?,
            compile_operand(right, scope, params, Some(SqlType::Bool))?,
        ]),
        BinaryOperator::Or => Scalar::Or(vec![
            compile_operand(left, scope, params, Some(SqlType::Bool))?,
            compile_operand(right, scope, params, Some(SqlType::Bool))?,
        ]),
        BinaryOperator::StringConcat => {
            let ((l, lty), (r, rty)) = compile_pair(scope, params, Some(SqlType::Text))?;
            if is_own_kind(&l, lty) || is_own_kind(&r, rty) {
                return Err(temporal_operand());
            }
            Scalar::Concat(Box::new(l), Box::new(r))
        }
        BinaryOperator::Plus
        | BinaryOperator::Minus
        | BinaryOperator::Multiply
        | BinaryOperator::Divide
        | BinaryOperator::Modulo => {
            let arith = match op {
                BinaryOperator::Plus => ArithOp::Add,
                BinaryOperator::Minus => ArithOp::Sub,
                BinaryOperator::Multiply => ArithOp::Mul,
                BinaryOperator::Divide => ArithOp::Div,
                _ => ArithOp::Mod,
            };
            let ((l, lty), (r, rty)) = compile_pair(scope, params, Some(SqlType::Int8))?;
            // Numerics add, subtract and multiply exactly here, with PostgreSQL's scale
            // (the larger one's, or their sum); with an integer too.
            let numeric = |s: &Scalar, ty| family(s, ty) == Some(Family::Numeric);
            let exact = |s: &Scalar, ty: Option<SqlType>| {
                numeric(s, ty)
                    || matches!(s, Scalar::Const(Datum::Int(_)))
                    || ty.is_some_and(|ty| ty.integer_rank().is_some())
            };
            if matches!(arith, ArithOp::Add | ArithOp::Sub | ArithOp::Mul)
                && (numeric(&l, lty) || numeric(&r, rty))
                && exact(&l, lty)
                && exact(&r, rty)
            {
                return Ok(Scalar::Arith(arith, Box::new(l), Box::new(r)));
            }
            if is_own_kind(&l, lty) || is_own_kind(&r, rty) {
                return Err(temporal_operand());
            }
            // A decimal literal is a numeric: with anything but a double, so is the
            // result (`2 * 1.25` is 2.50), which DataFusion computes.
            let (left_decimal, right_decimal) =
                (is_decimal_literal(left), is_decimal_literal(right));
            let double = |ty: Option<SqlType>, decimal: bool| {
                !decimal && matches!(ty, Some(SqlType::Float4 | SqlType::Float8))
            };
            let numeric_literal = (left_decimal && !double(rty, right_decimal))
                || (right_decimal && !double(lty, left_decimal));
            if numeric_literal {
                return Err(temporal_operand());
            }
            let narrow = narrow_integer_result(&l, lty, &r, rty);
            let computed = Scalar::Arith(arith, Box::new(l), Box::new(r));
            // Integers narrower than bigint compute in their type, as PostgreSQL's
            // int4pl and int2mul do: the result is checked against it (22003).
            match narrow {
                Some(ty) => Scalar::Cast(Box::new(computed), ty),
                None => computed,
            }
        }
        other => {
            return Err(SqlError::unsupported(format!(
                "operator {other} is not supported"
            )))
        }
    })
}

/// A constant of type `ty`, kept under its Cast when its own type would otherwise say
/// something else (5::bigint is a bigint, not an integer; a timestamp's value does not
/// say whether it is a timestamptz).
fn typed_constant(d: Datum, ty: SqlType) -> Scalar {
    match ty {
        SqlType::Int2
        | SqlType::Int8
        | SqlType::Float4
        | SqlType::Timestamp
        | SqlType::TimestampTz
        | SqlType::Date
        | SqlType::Uuid => Scalar::Cast(Box::new(Scalar::Const(d)), ty),
        _ => Scalar::Const(d),
    }
}

/// A compiled operand and its type, where known.
type Typed = (Scalar, Option<SqlType>);

/// Whether a compiled operand is a date, time, uuid or numeric
/// (`SqlType::is_distinct_kind`).
fn is_own_kind(scalar: &Scalar, ty: Option<SqlType>) -> bool {
    family(scalar, ty).is_some()
}

/// The types that compare with each other: dates and times, uuids, numerics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Time,
    Uuid,
    Numeric,
    /// `json` and `jsonb`, which the fast path only stores and returns.
    Json,
    /// `time`.
    Clock,
    /// `interval`.
    Interval,
    /// Arrays, which the fast path only stores and returns.
    Array,
}

/// The family of a compiled operand of type `ty` (or, for a constant, of its value).
fn family(scalar: &Scalar, ty: Option<SqlType>) -> Option<Family> {
    let of_value = |d: &Datum| match d {
        Datum::Timestamp(_) | Datum::TimestampTz(_) | Datum::Date(_) => Some(Family::Time),
        Datum::Uuid(_) => Some(Family::Uuid),
        Datum::Numeric(_) => Some(Family::Numeric),
        Datum::Time(_) => Some(Family::Clock),
        Datum::Interval(_) => Some(Family::Interval),
        _ => None,
    };
    match scalar {
        Scalar::Const(d) if of_value(d).is_some() => of_value(d),
        _ => ty.and_then(type_family),
    }
}

fn type_family(ty: SqlType) -> Option<Family> {
    match ty {
        SqlType::Timestamp | SqlType::TimestampTz | SqlType::Date => Some(Family::Time),
        SqlType::Uuid => Some(Family::Uuid),
        SqlType::Numeric(_) => Some(Family::Numeric),
        SqlType::Json | SqlType::Jsonb => Some(Family::Json),
        SqlType::Time => Some(Family::Clock),
        SqlType::Interval => Some(Family::Interval),
        SqlType::Array(_) => Some(Family::Array),
        _ => None,
    }
}

/// The fast path leaves date and time arithmetic, functions and text forms to
/// DataFusion, whose are PostgreSQL's (`date + 1`, `ts - interval '1 day'`, `ts::text`),
/// and so the same for uuids and numerics: it only compares, stores and returns them.
/// A cast, out of line: `compile_unfolded` recurses once per nesting level, and its
/// frame is what bounds how deep a clause may nest on a thread's stack.
#[inline(never)]
fn compile_cast(
    expr: &Expr,
    data_type: &ast::DataType,
    scope: &mut dyn Scope,
    params: &mut Params,
) -> SqlResult<Scalar> {
    // Arrays are DataFusion's (`'{a,b}'::text[]`, see `query::pg_array_literals`).
    if matches!(data_type, ast::DataType::Array(_)) {
        return Err(SqlError::unsupported(format!("a cast to {data_type}")));
    }
    if let Some(length) = CastLength::of(data_type)? {
        return cast_to_length(expr, length, scope, params);
    }
    // A type of the database's own (an enum) is DataFusion's (`query::pg_enum_casts`).
    let ty = match (data_type, super::sql_types::sql_type(data_type)) {
        (ast::DataType::Custom(..), Err(e)) => return Err(SqlError::unsupported(e.message())),
        (_, ty) => ty?,
    };
    // JSON's operators and functions are DataFusion's, and a JSON constant's
    // type would not survive here to send them there.
    if ty.json_kind().is_some() {
        return Err(temporal_operand());
    }
    // A constant is cast now; kept under its Cast when its own type would
    // otherwise say something else (5::bigint is a bigint, not an integer).
    let typed = |d: Datum| typed_constant(d, ty);
    if let (Some(whole), SqlType::Int2 | SqlType::Int4 | SqlType::Int8) =
        (numeric_literal_rounded(expr)?, ty)
    {
        return Ok(typed(cast(Datum::Int(whole), ty)?));
    }
    let (inner, source) = compile_typed(expr, scope, params, Some(ty))?;
    if let (Scalar::Column(_), Some(source)) = (&inner, source) {
        refuse_uncastable(source, ty)?;
    }
    // A date, time or uuid column's text.
    if let (Scalar::Column(_), Some(source), SqlType::Text) = (&inner, source, ty) {
        if source.is_distinct_kind() {
            return Ok(Scalar::Function(Function::OwnKindText, vec![inner]));
        }
    }
    // Any other cast to or from one computed per row is DataFusion's.
    let per_row = !matches!(inner, Scalar::Const(_) | Scalar::Param(_));
    if per_row && (ty.is_distinct_kind() || is_own_kind(&inner, source)) {
        return Err(temporal_operand());
    }
    if let (Scalar::Column(_), Some(SqlType::Float4), SqlType::Text) = (&inner, source, ty) {
        return Ok(Scalar::Function(Function::RealText, vec![inner]));
    }
    Ok(match inner {
        Scalar::Const(d) => typed(cast(d, ty)?),
        Scalar::Param(i) => {
            params.note(i, Some(ty));
            Scalar::Cast(Box::new(Scalar::Param(i)), ty)
        }
        other => Scalar::Cast(Box::new(other), ty),
    })
}

/// A cast to `VARCHAR(n)` or `CHAR(n)` (`char_casts`): of a constant, made now; of
/// anything else, DataFusion's (`query::pg_char_casts`).
fn cast_to_length(
    expr: &Expr,
    length: CastLength,
    scope: &mut dyn Scope,
    params: &mut Params,
) -> SqlResult<Scalar> {
    let (inner, _) = compile_typed(expr, scope, params, Some(SqlType::Text))?;
    match inner {
        Scalar::Const(Datum::Null) => Ok(Scalar::Const(Datum::Null)),
        Scalar::Const(d) => match cast(d, SqlType::Text)? {
            Datum::Text(text) => Ok(Scalar::Const(Datum::Text(length.apply(&text)?))),
            other => Ok(Scalar::Const(other)),
        },
        _ => Err(SqlError::unsupported(
            "a cast of a value computed per row to a length is not supported here yet (it is \
             in a SELECT's query)",
        )),
    }
}

fn temporal_operand() -> SqlError {
    SqlError::unsupported(
        "this operation on a date, time, uuid, numeric or JSON value is not supported here yet (it \
         is in a SELECT's query)",
    )
}

/// The type a value compared with a column of type `ty` is read as: a numeric without
/// the column's typmod, so `n = '1.505'` compares exactly, as in PostgreSQL.
fn comparison_type(ty: SqlType) -> SqlType {
    match ty {
        SqlType::Numeric(_) => SqlType::Numeric(None),
        ty => ty,
    }
}

/// Compiles an operand of an operator or function the fast path computes itself, which
/// must not be a date or time (`temporal_operand`).
fn compile_operand(
    expr: &Expr,
    scope: &mut dyn Scope,
    params: &mut Params,
    hint: Option<SqlType>,
) -> SqlResult<Scalar> {
    let (scalar, ty) = compile_typed(expr, scope, params, hint)?;
    if is_own_kind(&scalar, ty) {
        return Err(temporal_operand());
    }
    Ok(scalar)
}

/// Compiles a value compared with an operand of type `ty` (an IN list's item, a
/// BETWEEN bound), checked as `comparable` checks the two sides of a comparison.
fn compile_comparable(
    expr: &Expr,
    scope: &mut dyn Scope,
    params: &mut Params,
    ty: Option<SqlType>,
) -> SqlResult<Scalar> {
    let (scalar, item_type) = compile_typed(expr, scope, params, ty)?;
    refuse_enum_comparison(ty, item_type)?;
    let target_time = ty.filter(|ty| ty.is_distinct_kind());
    if target_time.is_none() && is_own_kind(&scalar, item_type) && ty.is_some() {
        return Err(temporal_operand());
    }
    facing(target_time, scalar, item_type)
}

/// An enum compares in its labels' order and a literal compared with it must be one
/// of them; the fast path knows neither, DataFusion's plan does (`pg_enum_plan`).
fn refuse_enum_comparison(left: Option<SqlType>, right: Option<SqlType>) -> SqlResult<()> {
    match [left, right]
        .into_iter()
        .flatten()
        .any(|ty| matches!(ty, SqlType::Enum(_)))
    {
        true => Err(SqlError::unsupported("a comparison of an enum value")),
        false => Ok(()),
    }
}

/// The two sides of a comparison, when the fast path compares them as PostgreSQL
/// would. A date or time compares only with a date or time: a quoted literal on the
/// other side is read as one, anything else (`ts = 5`, a text column) goes to
/// DataFusion, which coerces or refuses as PostgreSQL does.
fn comparable(
    left: Scalar,
    left_type: Option<SqlType>,
    right: Scalar,
    right_type: Option<SqlType>,
) -> SqlResult<(Scalar, Scalar)> {
    refuse_enum_comparison(left_type, right_type)?;
    // A constant timestamp's kind is its context's; in a UTC session, pgwide's only,
    // timestamp and timestamptz compare as one.
    let time_of = |s: &Scalar, ty: Option<SqlType>| {
        is_own_kind(s, ty).then(|| ty.unwrap_or(SqlType::TimestampTz))
    };
    let (left_time, right_time) = (time_of(&left, left_type), time_of(&right, right_type));
    let right = facing(left_time, right, right_type)?;
    let left = facing(right_time, left, left_type)?;
    Ok((left, right))
}

/// One side of a comparison whose other side is a date, time or uuid of type `other`
/// (if it is one): a quoted literal is read as that type; a side of the same family
/// (dates and times, or uuids), a parameter (typed from the other side) or NULL is
/// kept; anything else is refused.
fn facing(other: Option<SqlType>, side: Scalar, side_type: Option<SqlType>) -> SqlResult<Scalar> {
    let Some(other) = other else {
        return Ok(side);
    };
    // jsonb compares by value (`1.0` equals `1`), json not at all, an interval by its
    // length (`1 mon` equals `30 days`), where the stored forms differ: DataFusion's
    // turn.
    if matches!(
        type_family(other),
        Some(Family::Json | Family::Interval | Family::Array)
    ) {
        return Err(temporal_operand());
    }
    let side = match side {
        Scalar::Const(Datum::Text(text)) => {
            Scalar::Const(cast(Datum::Text(text), comparison_type(other))?)
        }
        Scalar::Const(Datum::Int(i)) if matches!(other, SqlType::Numeric(_)) => {
            Scalar::Const(Datum::Numeric(i.into()))
        }
        side => time_facing(other, side, side_type)?,
    };
    let same_family =
        family(&side, side_type).is_some() && family(&side, side_type) == type_family(other);
    if same_family || matches!(side, Scalar::Param(_) | Scalar::Const(Datum::Null)) {
        return Ok(side);
    }
    Err(temporal_operand())
}

/// A date or time constant or parameter compared with a date or time of type `other`,
/// of another kind: made `other`'s type where PostgreSQL would convert it so (a date to a
/// timestamp, a timestamp to a timestamptz in the session's zone); where PostgreSQL
/// would convert the other side instead, to a timestamptz, DataFusion's turn.
fn time_facing(other: SqlType, side: Scalar, side_type: Option<SqlType>) -> SqlResult<Scalar> {
    let rank = |ty: SqlType| match ty {
        SqlType::Date => Some(0),
        SqlType::Timestamp => Some(1),
        SqlType::TimestampTz => Some(2),
        _ => None,
    };
    // A parameter the client typed: converted as it is bound.
    if let (Scalar::Param(_), Some(own)) = (&side, side_type) {
        return match (rank(own), rank(other)) {
            (Some(a), Some(b)) if a < b => Ok(Scalar::Cast(Box::new(side), other)),
            (Some(2), Some(b)) if b < 2 => Err(temporal_operand()),
            _ => Ok(side),
        };
    }
    let constant = match &side {
        Scalar::Const(d) => Some(d),
        Scalar::Cast(inner, _) => match inner.as_ref() {
            Scalar::Const(d) => Some(d),
            _ => None,
        },
        _ => None,
    };
    let Some((datum, own)) = constant.and_then(|d| datum_type(d).map(|ty| (d, ty))) else {
        return Ok(side);
    };
    match (rank(own), rank(other)) {
        (Some(a), Some(b)) if a < b => Ok(typed_constant(cast(datum.clone(), other)?, other)),
        (Some(2), Some(b)) if b < 2 => Err(temporal_operand()),
        _ => Ok(side),
    }
}

/// The type of integer arithmetic over operands of these types when narrower than
/// bigint: the wider operand's, an integer literal being an `integer` when it fits.
fn narrow_integer_result(
    left: &Scalar,
    left_type: Option<SqlType>,
    right: &Scalar,
    right_type: Option<SqlType>,
) -> Option<SqlType> {
    let type_of = |s: &Scalar, ty: Option<SqlType>| match s {
        Scalar::Const(Datum::Int(i)) if i32::try_from(*i).is_ok() => Some(SqlType::Int4),
        Scalar::Const(Datum::Int(_)) => Some(SqlType::Int8),
        _ => ty.filter(|ty| ty.integer_rank().is_some()),
    };
    let (left, right) = (type_of(left, left_type)?, type_of(right, right_type)?);
    let wider = match left.integer_rank() >= right.integer_rank() {
        true => left,
        false => right,
    };
    (wider != SqlType::Int8).then_some(wider)
}

/// Compiles and reports the expression's type when it is a column (for inference).
fn compile_typed(
    expr: &Expr,
    scope: &mut dyn Scope,
    params: &mut Params,
    hint: Option<SqlType>,
) -> SqlResult<(Scalar, Option<SqlType>)> {
    match expr {
        Expr::Identifier(ident) => {
            let (slot, ty) = scope.column(None, &fold(ident))?;
            Ok((Scalar::Column(slot), Some(ty)))
        }
        Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
            let names: Vec<String> = parts.iter().map(fold).collect();
            let (slot, ty) =
                scope.column(Some(&names[names.len() - 2]), &names[names.len() - 1])?;
            Ok((Scalar::Column(slot), Some(ty)))
        }
        Expr::Nested(inner) => compile_typed(inner, scope, params, hint),
        _ => {
            let s = compile(expr, scope, params, hint)?;
            let ty = match &s {
                Scalar::Const(d) => datum_type(d),
                Scalar::Param(i) => params.ty(*i),
                Scalar::Cast(_, ty) => Some(*ty),
                _ => None,
            };
            Ok((s, ty))
        }
    }
}

/// 42846 for a cast PostgreSQL has not (bigint, smallint, floats and bytea to and from
/// boolean; only integer and boolean cast to each other), whatever the values.
fn refuse_uncastable(source: SqlType, target: SqlType) -> SqlResult<()> {
    use SqlType::{Bool, Bytea, Float4, Float8, Int2, Int8};
    let refused = matches!(
        (source, target),
        (Int2 | Int8 | Float4 | Float8 | Bytea, Bool)
            | (Bool, Int2 | Int8 | Float4 | Float8 | Bytea)
    );
    match refused {
        true => Err(SqlError::new(
            SqlState::CannotCoerce,
            format!("cannot cast type {} to {}", source.name(), target.name()),
        )),
        false => Ok(()),
    }
}

fn datum_type(d: &Datum) -> Option<SqlType> {
    match d {
        Datum::Null => None,
        Datum::Bool(_) => Some(SqlType::Bool),
        Datum::Int(_) => Some(SqlType::Int8),
        Datum::Float(_) => Some(SqlType::Float8),
        Datum::Text(_) => Some(SqlType::Text),
        Datum::Bytes(_) => Some(SqlType::Bytea),
        Datum::Timestamp(_) => Some(SqlType::Timestamp),
        Datum::TimestampTz(_) => Some(SqlType::TimestampTz),
        Datum::Date(_) => Some(SqlType::Date),
        Datum::Uuid(_) => Some(SqlType::Uuid),
        Datum::Time(_) => Some(SqlType::Time),
        Datum::Interval(_) => Some(SqlType::Interval),
        Datum::Numeric(_) => Some(SqlType::Numeric(None)),
        Datum::Array(items) => items
            .iter()
            .find_map(datum_type)
            .and_then(ArrayOf::of)
            .map(SqlType::Array),
    }
}

/// Whether `expr` is a number literal with a point or an exponent (`1.5`, `-2e3`).
fn is_decimal_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Value(v) => {
            matches!(&v.value, ast::Value::Number(n, _) if n.contains(['.', 'e', 'E']))
        }
        Expr::Nested(inner) => is_decimal_literal(inner),
        Expr::UnaryOp {
            op: UnaryOperator::Minus | UnaryOperator::Plus,
            expr,
        } => is_decimal_literal(expr),
        _ => false,
    }
}

/// A decimal literal (`2.5`, `-316.15`) rounded to an integer as PostgreSQL rounds a
/// numeric, half away from zero; `None` for anything else. A double from a column
/// rounds half to even instead (`values::datum_to_value`).
pub fn numeric_literal_rounded(expr: &Expr) -> SqlResult<Option<i64>> {
    let (negative, text) = match expr {
        Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => (false, n),
            _ => return Ok(None),
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match &**expr {
            Expr::Value(v) => match &v.value {
                ast::Value::Number(n, _) => (true, n),
                _ => return Ok(None),
            },
            _ => return Ok(None),
        },
        Expr::Nested(inner) => return numeric_literal_rounded(inner),
        _ => return Ok(None),
    };
    if !text.contains(['.', 'e', 'E']) {
        return Ok(None);
    }
    let Ok(value) = text.parse::<f64>() else {
        return Ok(None);
    };
    let value = if negative { -value } else { value };
    super::values::float_to_bigint(value.round()).map(Some)
}

/// A number literal: an integer that fits 64 bits is a bigint; any other number is a
/// `numeric`, as in PostgreSQL (so `0.1 + 0.2` is exactly `0.3`), except where it
/// meets a double or an integer column, which compares or stores it as a double.
fn number_literal(text: &str, expected: Option<SqlType>) -> SqlResult<Datum> {
    let as_float = matches!(
        expected,
        Some(SqlType::Float4 | SqlType::Float8 | SqlType::Int2 | SqlType::Int4 | SqlType::Int8)
    );
    if let Ok(i) = text.parse::<i64>() {
        return Ok(match expected {
            Some(SqlType::Numeric(_)) => Datum::Numeric(i.into()),
            _ => Datum::Int(i),
        });
    }
    if as_float {
        return text.parse::<f64>().map(Datum::Float).map_err(|_| {
            SqlError::new(
                SqlState::InvalidTextRepresentation,
                format!("invalid number {text}"),
            )
        });
    }
    super::pg_numeric::parse(text).map(Datum::Numeric)
}

fn literal(
    value: &ast::Value,
    params: &mut Params,
    expected: Option<SqlType>,
) -> SqlResult<Scalar> {
    use ast::Value as V;
    Ok(Scalar::Const(match value {
        V::Number(n, _) => number_literal(n, expected)?,
        V::SingleQuotedString(s)
        | V::EscapedStringLiteral(s)
        | V::DollarQuotedString(ast::DollarQuotedString { value: s, .. }) => match expected {
            Some(SqlType::Bytea) => Datum::Bytes(super::values::parse_bytea(s)?),
            // A quoted literal compared with or written to a date, time or uuid is read as
            // one.
            Some(ty) if ty.is_distinct_kind() => cast(Datum::Text(s.clone()), comparison_type(ty))?,
            _ => Datum::Text(s.clone()),
        },
        V::Boolean(b) => Datum::Bool(*b),
        V::Null => Datum::Null,
        V::Placeholder(p) => {
            let index = placeholder_index(p)?;
            params.note(index, expected);
            return Ok(Scalar::Param(index));
        }
        other => {
            return Err(SqlError::unsupported(format!(
                "literal {other} is not supported"
            )))
        }
    }))
}

/// `s` with every part that reads no column evaluated once: parameters, casts of them
/// and constant arithmetic become constants. A residual predicate is bound once per
/// execution instead of recomputing `$1::text` for every row. A part whose evaluation
/// fails is kept as it was, so the error still comes when (and if) a row needs it.
pub fn bind(s: &Scalar, params: &[Datum]) -> Scalar {
    if !s.reads_columns() {
        return match eval(s, &[], params) {
            Ok(value) => Scalar::Const(value),
            Err(_) => s.clone(),
        };
    }
    let bound = |inner: &Scalar| Box::new(bind(inner, params));
    let all = |parts: &[Scalar]| parts.iter().map(|p| bind(p, params)).collect();
    match s {
        Scalar::Column(_) | Scalar::Const(_) | Scalar::Param(_) => s.clone(),
        Scalar::Compare(op, l, r) => Scalar::Compare(*op, bound(l), bound(r)),
        Scalar::And(parts) => Scalar::And(all(parts)),
        Scalar::Or(parts) => Scalar::Or(all(parts)),
        Scalar::Not(inner) => Scalar::Not(bound(inner)),
        Scalar::IsNull(inner, negated) => Scalar::IsNull(bound(inner), *negated),
        Scalar::InList(value, list, negated) => Scalar::InList(bound(value), all(list), *negated),
        Scalar::Coalesce(operands) => Scalar::Coalesce(all(operands)),
        Scalar::Arith(op, l, r) => Scalar::Arith(*op, bound(l), bound(r)),
        Scalar::Neg(inner) => Scalar::Neg(bound(inner)),
        Scalar::Concat(l, r) => Scalar::Concat(bound(l), bound(r)),
        Scalar::Like(l, r, negated, insensitive) => {
            Scalar::Like(bound(l), bound(r), *negated, *insensitive)
        }
        Scalar::Cast(inner, ty) => Scalar::Cast(bound(inner), *ty),
        Scalar::Function(f, args) => Scalar::Function(*f, all(args)),
    }
}

/// A column's or constant's value without copying it; `None` for anything to compute.
fn borrowed<'a>(s: &'a Scalar, row: &'a [Datum]) -> Option<&'a Datum> {
    match s {
        Scalar::Column(i) => Some(row.get(*i).unwrap_or(&Datum::Null)),
        Scalar::Const(d) => Some(d),
        _ => None,
    }
}

/// Evaluates with SQL semantics: NULL propagates, comparisons with NULL are NULL.
pub fn eval(s: &Scalar, row: &[Datum], params: &[Datum]) -> SqlResult<Datum> {
    Ok(match s {
        Scalar::Column(i) => row.get(*i).cloned().unwrap_or(Datum::Null),
        Scalar::Const(d) => d.clone(),
        Scalar::Param(i) => params.get(*i).cloned().ok_or_else(|| {
            SqlError::new(
                SqlState::ProtocolViolation,
                format!("no value bound for parameter ${}", i + 1),
            )
        })?,
        Scalar::Compare(op, l, r) => {
            // Columns and constants are compared in place: a residual over text keys
            // would otherwise copy both strings for every row.
            let (l_owned, r_owned);
            let l = match borrowed(l, row) {
                Some(d) => d,
                None => {
                    l_owned = eval(l, row, params)?;
                    &l_owned
                }
            };
            let r = match borrowed(r, row) {
                Some(d) => d,
                None => {
                    r_owned = eval(r, row, params)?;
                    &r_owned
                }
            };
            if *l == Datum::Null || *r == Datum::Null {
                return Ok(Datum::Null);
            }
            match compare(l, r) {
                Some(o) => Datum::Bool(op.holds(o)),
                None => {
                    return Err(SqlError::undefined_function(format!(
                        "cannot compare {} with {}",
                        super::values::render(l),
                        super::values::render(r)
                    )))
                }
            }
        }
        Scalar::And(all) => three_valued(all, false, row, params)?,
        Scalar::Or(any) => three_valued(any, true, row, params)?,
        Scalar::Not(e) => match eval(e, row, params)? {
            Datum::Bool(b) => Datum::Bool(!b),
            _ => Datum::Null,
        },
        Scalar::IsNull(e, negated) => {
            Datum::Bool((eval(e, row, params)? == Datum::Null) != *negated)
        }
        Scalar::InList(e, list, negated) => {
            let target = eval(e, row, params)?;
            if target == Datum::Null {
                return Ok(Datum::Null);
            }
            let mut saw_null = false;
            for item in list {
                let v = eval(item, row, params)?;
                if v == Datum::Null {
                    saw_null = true;
                } else if compare(&target, &v) == Some(Ordering::Equal) {
                    return Ok(Datum::Bool(!negated));
                }
            }
            if saw_null {
                Datum::Null
            } else {
                Datum::Bool(*negated)
            }
        }
        Scalar::Arith(op, l, r) => arith(*op, eval(l, row, params)?, eval(r, row, params)?)?,
        Scalar::Neg(e) => match eval(e, row, params)? {
            Datum::Int(i) => Datum::Int(i.checked_neg().ok_or_else(overflow)?),
            Datum::Float(f) => Datum::Float(-f),
            Datum::Numeric(n) => Datum::Numeric(-n),
            Datum::Null => Datum::Null,
            other => {
                return Err(SqlError::undefined_function(format!(
                    "cannot negate {}",
                    super::values::render(&other)
                )))
            }
        },
        Scalar::Concat(l, r) => match (eval(l, row, params)?, eval(r, row, params)?) {
            (Datum::Null, _) | (_, Datum::Null) => Datum::Null,
            (a, b) => Datum::Text(format!("{}{}", as_text(a), as_text(b))),
        },
        Scalar::Like(e, p, negated, insensitive) => {
            match (eval(e, row, params)?, eval(p, row, params)?) {
                (Datum::Null, _) | (_, Datum::Null) => Datum::Null,
                (v, p) => {
                    let (mut v, mut p) = (as_text(v), as_text(p));
                    if *insensitive {
                        v = v.to_lowercase();
                        p = p.to_lowercase();
                    }
                    Datum::Bool(like(v.as_bytes(), p.as_bytes()) != *negated)
                }
            }
        }
        Scalar::Cast(e, ty) => cast(eval(e, row, params)?, *ty)?,
        Scalar::Coalesce(operands) => {
            for operand in operands {
                let value = eval(operand, row, params)?;
                if value != Datum::Null {
                    return Ok(value);
                }
            }
            Datum::Null
        }
        Scalar::Function(f, args) => {
            let args = args
                .iter()
                .map(|a| eval(a, row, params))
                .collect::<SqlResult<Vec<_>>>()?;
            if args.contains(&Datum::Null) {
                return Ok(Datum::Null);
            }
            call(*f, args)?
        }
    })
}

fn int_arg(d: &Datum) -> SqlResult<i64> {
    match d {
        Datum::Int(i) => Ok(*i),
        Datum::Text(t) => t.trim().parse().map_err(|_| {
            SqlError::new(
                SqlState::InvalidTextRepresentation,
                format!("invalid input syntax for type integer: \"{t}\""),
            )
        }),
        other => Err(SqlError::new(
            SqlState::DatatypeMismatch,
            format!("expected an integer, got {}", super::values::render(other)),
        )),
    }
}

fn call(f: Function, mut args: Vec<Datum>) -> SqlResult<Datum> {
    if let (Function::RealText, Some(Datum::Float(value))) = (f, args.first()) {
        return Ok(Datum::Text((*value as f32).to_string()));
    }
    let text = |d: Datum| match d {
        Datum::Bytes(b) if f == Function::Md5 => b,
        other => as_text(other).into_bytes(),
    };
    let first = text(args.remove(0));
    Ok(match f {
        Function::Md5 => Datum::Text(format!("{:x}", md5::compute(&first))),
        Function::Lower => Datum::Text(String::from_utf8_lossy(&first).to_lowercase()),
        Function::Upper => Datum::Text(String::from_utf8_lossy(&first).to_uppercase()),
        Function::Length => Datum::Int(String::from_utf8_lossy(&first).chars().count() as i64),
        // A value that is not a double (NULL is handled before `call`).
        Function::RealText => Datum::Text(String::from_utf8_lossy(&first).into_owned()),
        // A timestamp, date or uuid: `as_text` writes each as PostgreSQL does.
        Function::OwnKindText => Datum::Text(String::from_utf8_lossy(&first).into_owned()),
        Function::Lpad => {
            let s: Vec<char> = String::from_utf8_lossy(&first).chars().collect();
            let width = int_arg(&args[0])?.max(0) as usize;
            let fill: Vec<char> = match args.get(1) {
                Some(d) => as_text(d.clone()).chars().collect(),
                None => vec![' '],
            };
            if s.len() >= width {
                Datum::Text(s[..width].iter().collect())
            } else if fill.is_empty() {
                Datum::Text(s.iter().collect())
            } else {
                let pad: String = fill.iter().cycle().take(width - s.len()).collect();
                Datum::Text(format!("{pad}{}", s.iter().collect::<String>()))
            }
        }
        Function::Substr => {
            let s: Vec<char> = String::from_utf8_lossy(&first).chars().collect();
            // SQL positions start at 1; a start before 1 eats into the length.
            let start = int_arg(&args[0])?;
            let end = match args.get(1) {
                Some(len) => {
                    let len = int_arg(len)?;
                    if len < 0 {
                        return Err(SqlError::new(
                            SqlState::SubstringError,
                            "negative substring length not allowed",
                        ));
                    }
                    start.saturating_add(len)
                }
                None => i64::MAX,
            };
            let from = (start.max(1) - 1) as usize;
            let to = (end.max(1) - 1).min(s.len() as i64) as usize;
            Datum::Text(if from >= to {
                String::new()
            } else {
                s[from..to].iter().collect()
            })
        }
    })
}

/// AND (`decisive` = false) or OR (`decisive` = true) with SQL's three-valued logic: one
/// decisive operand decides; otherwise any NULL makes the result NULL.
fn three_valued(
    items: &[Scalar],
    decisive: bool,
    row: &[Datum],
    params: &[Datum],
) -> SqlResult<Datum> {
    let mut saw_null = false;
    for e in items {
        match eval(e, row, params)? {
            Datum::Bool(b) if b == decisive => return Ok(Datum::Bool(decisive)),
            Datum::Null => saw_null = true,
            _ => {}
        }
    }
    Ok(if saw_null {
        Datum::Null
    } else {
        Datum::Bool(!decisive)
    })
}

/// Whether an evaluated predicate selects the row (NULL does not).
pub fn is_true(d: &Datum) -> bool {
    matches!(d, Datum::Bool(true))
}

/// A datum's text, as a cast to text gives it.
pub(crate) fn datum_text(d: Datum) -> String {
    as_text(d)
}

fn as_text(d: Datum) -> String {
    match d {
        Datum::Text(t) => t,
        Datum::Int(i) => i.to_string(),
        Datum::Float(f) => f.to_string(),
        Datum::Bool(b) => if b { "true" } else { "false" }.into(),
        Datum::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
        Datum::Null => String::new(),
        // Compilation sends dates and times to DataFusion wherever they would be text
        // (`compile_operand`); these are only for completeness.
        Datum::Timestamp(micros) => {
            super::datetime::format_timestamp(micros, None).unwrap_or_default()
        }
        Datum::TimestampTz(micros) => {
            let zone = super::session_zone::current();
            super::datetime::format_timestamp(micros, Some(&zone)).unwrap_or_default()
        }
        Datum::Date(days) => super::datetime::format_date(days).unwrap_or_default(),
        Datum::Uuid(bytes) => super::pg_uuid::format(&bytes),
        Datum::Time(micros) => super::pg_interval::format_time(micros),
        Datum::Interval(i) => super::pg_interval::format(&i),
        Datum::Numeric(n) => super::pg_numeric::format(&n),
        Datum::Array(items) => super::pg_array_text::format(
            items
                .into_iter()
                .map(|item| (item != Datum::Null).then(|| as_text(item)))
                .collect::<Vec<_>>()
                .iter()
                .map(Option::as_deref),
        ),
    }
}

fn overflow() -> SqlError {
    SqlError::new(SqlState::NumericValueOutOfRange, "bigint out of range")
}

/// `+`, `-` or `*` with a numeric operand (the other a numeric or an integer), exact.
fn numeric_arith(op: ArithOp, l: &Datum, r: &Datum) -> SqlResult<Datum> {
    let exact = |d: &Datum| match d {
        Datum::Numeric(n) => Some(n.clone()),
        Datum::Int(i) => Some(bigdecimal::BigDecimal::from(*i)),
        _ => None,
    };
    let (Some(a), Some(b)) = (exact(l), exact(r)) else {
        return Err(SqlError::undefined_function(format!(
            "operator does not exist for {} and {}",
            super::values::render(l),
            super::values::render(r)
        )));
    };
    let result = match op {
        ArithOp::Add => a + b,
        ArithOp::Sub => a - b,
        ArithOp::Mul => a * b,
        ArithOp::Div | ArithOp::Mod => {
            return Err(SqlError::unsupported("numeric division here"));
        }
    };
    super::pg_numeric::bounded(result).map(Datum::Numeric)
}

fn arith(op: ArithOp, l: Datum, r: Datum) -> SqlResult<Datum> {
    let as_int = |d: &Datum| match d {
        Datum::Int(i) => Some(*i),
        Datum::Text(t) => t.trim().parse().ok(),
        _ => None,
    };
    let as_float = |d: &Datum| match d {
        Datum::Int(i) => Some(*i as f64),
        Datum::Float(f) => Some(*f),
        Datum::Text(t) => t.trim().parse().ok(),
        _ => None,
    };
    if l == Datum::Null || r == Datum::Null {
        return Ok(Datum::Null);
    }
    if matches!(l, Datum::Numeric(_)) || matches!(r, Datum::Numeric(_)) {
        return numeric_arith(op, &l, &r);
    }
    if let (Some(a), Some(b), false) = (
        as_int(&l),
        as_int(&r),
        matches!(l, Datum::Float(_)) || matches!(r, Datum::Float(_)),
    ) {
        let result = match op {
            ArithOp::Add => a.checked_add(b),
            ArithOp::Sub => a.checked_sub(b),
            ArithOp::Mul => a.checked_mul(b),
            ArithOp::Div | ArithOp::Mod if b == 0 => {
                return Err(SqlError::new(SqlState::DivisionByZero, "division by zero"))
            }
            ArithOp::Div => a.checked_div(b),
            ArithOp::Mod => a.checked_rem(b),
        };
        return result.map(Datum::Int).ok_or_else(overflow);
    }
    match (as_float(&l), as_float(&r)) {
        (Some(a), Some(b)) => Ok(Datum::Float(match op {
            ArithOp::Add => a + b,
            ArithOp::Sub => a - b,
            ArithOp::Mul => a * b,
            ArithOp::Div if b == 0.0 => {
                return Err(SqlError::new(SqlState::DivisionByZero, "division by zero"))
            }
            ArithOp::Div => a / b,
            ArithOp::Mod => a % b,
        })),
        _ => Err(SqlError::undefined_function(format!(
            "operator does not exist for {} and {}",
            super::values::render(&l),
            super::values::render(&r)
        ))),
    }
}

/// SQL LIKE with `%` and `_` (backslash escapes the next character).
fn like(value: &[u8], pattern: &[u8]) -> bool {
    match pattern.split_first() {
        None => value.is_empty(),
        Some((b'%', rest)) => (0..=value.len()).any(|i| like(&value[i..], rest)),
        Some((b'_', rest)) => !value.is_empty() && like(&value[1..], rest),
        Some((b'\\', rest)) if !rest.is_empty() => {
            value.first() == Some(&rest[0]) && like(&value[1..], &rest[1..])
        }
        Some((c, rest)) => value.first() == Some(c) && like(&value[1..], rest),
    }
}

/// The column name PostgreSQL gives an unaliased expression.
pub fn output_name(expr: &Expr) -> String {
    const UNNAMED: &str = "?column?";
    match expr {
        Expr::Identifier(ident) => fold(ident),
        Expr::CompoundIdentifier(parts) => parts.last().map(fold).unwrap_or_default(),
        Expr::Nested(expr) => output_name(expr),
        // A cast is named by what it casts, or failing that by its type (`1::int` is
        // `int4`), as PostgreSQL names it; a name that itself came from a type yields
        // to the outer cast's (`time '10:00'::text` is `text`).
        Expr::Cast {
            expr, data_type, ..
        } => match output_name(expr) {
            _ if named_by_type(expr) => type_column_name(data_type),
            name if name == UNNAMED => type_column_name(data_type),
            name => name,
        },
        Expr::TypedString(typed) => type_column_name(&typed.data_type),
        Expr::Function(f) => match f.name.0.last() {
            Some(part) => part.to_string().trim_matches('"').to_lowercase(),
            None => UNNAMED.into(),
        },
        // A scalar subquery is named by its one column.
        Expr::Subquery(query) => first_column_name(&query.body).unwrap_or_else(|| UNNAMED.into()),
        Expr::Exists { negated: false, .. } => "exists".into(),
        Expr::Case { .. } => "case".into(),
        Expr::Array(_) => "array".into(),
        Expr::Substring {
            shorthand: true, ..
        } => "substr".into(),
        Expr::Substring { .. } => "substring".into(),
        Expr::Position { .. } => "position".into(),
        Expr::Extract { .. } => "extract".into(),
        Expr::Ceil { .. } => "ceil".into(),
        Expr::Floor { .. } => "floor".into(),
        Expr::Overlay { .. } => "overlay".into(),
        Expr::Trim { .. } => "btrim".into(),
        Expr::Interval(_) => "interval".into(),
        Expr::AtTimeZone { .. } => "timezone".into(),
        // A subscript (`tags[1]`) is named by what it subscripts.
        Expr::CompoundFieldAccess { root, .. } => output_name(root),
        _ => UNNAMED.into(),
    }
}

/// The name of a query's first output column, as its select list gives it.
fn first_column_name(body: &ast::SetExpr) -> Option<String> {
    match body {
        ast::SetExpr::Select(select) => match select.projection.first()? {
            ast::SelectItem::UnnamedExpr(expr) => Some(output_name(expr)),
            ast::SelectItem::ExprWithAlias { alias, .. } => Some(fold(alias)),
            _ => None,
        },
        ast::SetExpr::Query(query) => first_column_name(&query.body),
        ast::SetExpr::SetOperation { left, .. } => first_column_name(left),
        _ => None,
    }
}

/// The column name PostgreSQL gives a value of this declared type: its internal name.
/// Whether `expr`'s output name is a type's: a typed literal or a cast of something
/// unnamed.
fn named_by_type(expr: &Expr) -> bool {
    match expr {
        Expr::TypedString(_) | Expr::Interval(_) => true,
        Expr::Cast { expr, .. } => named_by_type(expr) || output_name(expr) == "?column?",
        Expr::Nested(inner) => named_by_type(inner),
        _ => false,
    }
}

fn type_column_name(data_type: &ast::DataType) -> String {
    use ast::DataType as D;
    match data_type {
        D::SmallInt(_) | D::Int2(_) => "int2".into(),
        D::Int(_) | D::Integer(_) | D::Int4(_) => "int4".into(),
        D::BigInt(_) | D::Int8(_) => "int8".into(),
        D::Real | D::Float4 => "float4".into(),
        D::Double(_) | D::DoublePrecision | D::Float8 | D::Float(_) => "float8".into(),
        D::Boolean | D::Bool => "bool".into(),
        D::Varchar(_) | D::CharacterVarying(_) => "varchar".into(),
        D::Char(_) | D::Character(_) => "bpchar".into(),
        D::Numeric(_) | D::Decimal(_) => "numeric".into(),
        D::Timestamp(_, ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz) => {
            "timestamptz".into()
        }
        D::Interval { .. } => "interval".into(),
        D::Array(
            ast::ArrayElemTypeDef::SquareBracket(element, _)
            | ast::ArrayElemTypeDef::AngleBracket(element)
            | ast::ArrayElemTypeDef::Parenthesis(element),
        ) => type_column_name(element),
        other => other.to_string().to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_evaluates_what_reads_no_column_once() {
        // seller_id >= $1::text AND n < 1 / $2
        let predicate = Scalar::And(vec![
            Scalar::Compare(
                CmpOp::Ge,
                Box::new(Scalar::Column(0)),
                Box::new(Scalar::Cast(Box::new(Scalar::Param(0)), SqlType::Text)),
            ),
            Scalar::Compare(
                CmpOp::Lt,
                Box::new(Scalar::Column(1)),
                Box::new(Scalar::Arith(
                    ArithOp::Div,
                    Box::new(Scalar::Const(Datum::Int(1))),
                    Box::new(Scalar::Param(1)),
                )),
            ),
        ]);
        let params = [Datum::Int(100), Datum::Int(0)];
        let Scalar::And(parts) = bind(&predicate, &params) else {
            panic!("the conjunction stays a conjunction");
        };
        let Scalar::Compare(_, column, bound) = &parts[0] else {
            panic!("a comparison stays a comparison");
        };
        assert!(matches!(**column, Scalar::Column(0)));
        assert!(matches!(&**bound, Scalar::Const(Datum::Text(t)) if t == "100"));
        // 1 / 0 fails: it is left to fail when a row needs it, as before binding.
        let Scalar::Compare(_, _, division) = &parts[1] else {
            panic!("a comparison stays a comparison");
        };
        assert!(matches!(**division, Scalar::Arith(..)));
        let row = [Datum::Text("150".into()), Datum::Int(5)];
        assert!(eval(&parts[1], &row, &params).is_err());
        assert_eq!(
            eval(&parts[0], &row, &params).expect("evaluates"),
            Datum::Bool(true)
        );
    }
}
