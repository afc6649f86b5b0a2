//! What an ORDER BY item names, by PostgreSQL's rules: an integer constant is a
//! position in the select list, a bare name an output column (before any input column
//! of that name), and anything else an expression over the input columns.

use crate::sql::expr::{fold, output_name};
use crate::sql::relation::Relation;
use crate::sql::sql_types::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, Expr, SelectItem, UnaryOperator, Value};

/// The expression `item` sorts by, in terms of the input columns.
pub fn resolve(
    item: &Expr,
    projection: &[SelectItem],
    relation: Option<&Relation>,
) -> SqlResult<Expr> {
    if let Some(position) = position(item)? {
        return output_at(position, projection, relation);
    }
    if let Expr::Identifier(name) = item {
        if let Some(expr) = output_named(&fold(name), projection)? {
            return Ok(expr);
        }
    }
    Ok(item.clone())
}

/// The select-list position an integer constant names (PostgreSQL folds `-1` into a
/// constant too); a constant of another type is 42601, as it sorts nothing.
fn position(item: &Expr) -> SqlResult<Option<i64>> {
    let (negative, value) = match item {
        Expr::Value(v) => (false, &v.value),
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match &**expr {
            Expr::Value(v) if matches!(v.value, Value::Number(..)) => (true, &v.value),
            _ => return Ok(None),
        },
        Expr::Nested(inner) => return position(inner),
        _ => return Ok(None),
    };
    match value {
        Value::Number(text, _) => match text.parse::<i64>() {
            Ok(n) => Ok(Some(if negative { -n } else { n })),
            Err(_) => Err(non_integer_constant()),
        },
        Value::Null | Value::Placeholder(_) => Ok(None),
        _ => Err(non_integer_constant()),
    }
}

fn non_integer_constant() -> SqlError {
    SqlError::syntax("non-integer constant in ORDER BY")
}

/// The select list's `position`th column (from 1), `*` expanded over the relation.
fn output_at(
    position: i64,
    projection: &[SelectItem],
    relation: Option<&Relation>,
) -> SqlResult<Expr> {
    let mut outputs = Vec::new();
    for item in projection {
        match item {
            SelectItem::UnnamedExpr(expr)
            | SelectItem::ExprWithAlias { expr, .. }
            | SelectItem::ExprWithAliases { expr, .. } => outputs.push(expr.clone()),
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                for column in relation.iter().flat_map(|r| r.columns.iter()) {
                    if !column.hidden {
                        let name = ast::Ident::with_quote('"', column.name.clone());
                        outputs.push(Expr::Identifier(name));
                    }
                }
            }
        }
    }
    usize::try_from(position)
        .ok()
        .and_then(|p| p.checked_sub(1))
        .and_then(|index| outputs.get(index).cloned())
        .ok_or_else(|| {
            SqlError::new(
                SqlState::InvalidColumnReference,
                format!("ORDER BY position {position} is not in select list"),
            )
        })
}

/// The expression of the output column called `name`, if one is; 42702 when several
/// differing ones are.
fn output_named(name: &str, projection: &[SelectItem]) -> SqlResult<Option<Expr>> {
    let mut found: Option<&Expr> = None;
    for item in projection {
        let (expr, output) = match item {
            SelectItem::ExprWithAlias { expr, alias } => (expr, fold(alias)),
            SelectItem::UnnamedExpr(expr) => (expr, output_name(expr)),
            _ => continue,
        };
        if output != name {
            continue;
        }
        match found {
            Some(earlier) if earlier != expr => {
                return Err(SqlError::new(
                    SqlState::AmbiguousColumn,
                    format!("ORDER BY \"{name}\" is ambiguous"),
                ))
            }
            _ => found = Some(expr),
        }
    }
    Ok(found.cloned())
}
