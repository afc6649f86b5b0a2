//! The access-path planner, beneath both the fast path (`select`, `dml`) and the
//! DataFusion table provider: a WHERE clause over one relation is split into what picks
//! the access path — full-PK equality (GetRow), IN lists on the PK (BatchGetRow), a PK
//! prefix plus a range on the next column (GetRange, forward or backward), equality or
//! IN on a secondary index's leading columns (IndexGet) or a full-range scan — the
//! attribute comparisons also handed to the engine's filter, and a
//! residual predicate. `requests` turns a plan and its parameters into engine requests;
//! `describe` writes it for EXPLAIN.

mod describe;
mod requests;

pub use describe::describe;

use super::expr::{compile, CmpOp, Params, Scalar};
use super::relation::{Relation, RelationKind, Source};
use super::sql_types::{SqlResult, SqlType};
use crate::engine::{Direction, PkType};
use sqlparser::ast::Expr;

/// How rows are found.
#[derive(Debug, Clone)]
pub enum Access {
    /// Candidate values per PK column; their product is the set of keys (GetRow /
    /// BatchGetRow).
    Keys(Vec<Vec<Scalar>>),
    /// Equality on a PK prefix, then an optional range on the next column (GetRange);
    /// an empty prefix without bounds is a full scan.
    Range {
        prefix: Vec<Scalar>,
        lower: Option<(Scalar, bool)>,
        upper: Option<(Scalar, bool)>,
    },
    /// Candidate values per leading column of secondary index `index` (its position in
    /// the table's indexes): the rows its entries for them name, fetched by key
    /// (IndexGet). The predicate stays in the residual, since an entry may name a row
    /// that no longer shows its values (`engine::index`).
    Index {
        index: usize,
        values: Vec<Vec<Scalar>>,
    },
}

/// A planned read of one relation.
#[derive(Debug, Clone)]
pub struct ReadPlan {
    pub relation: Relation,
    pub access: Access,
    pub direction: Direction,
    /// Evaluated on every row the access path yields.
    pub residual: Option<Scalar>,
    /// Attribute comparisons also handed to the engine: (column, op, operand).
    pub pushed: Vec<(String, CmpOp, Scalar)>,
    /// Comparisons on `versions.<table>.version`, handed to the engine as its version
    /// range (they stay in the residual too, which keeps the result exact).
    pub version_bounds: Vec<(CmpOp, Scalar)>,
}

impl ReadPlan {
    /// Whether the statement filters rows by their values (a WHERE clause), which
    /// reads the table as much as a SELECT does.
    pub fn filters(&self) -> bool {
        let keyed = match &self.access {
            Access::Keys(_) | Access::Index { .. } => true,
            Access::Range {
                prefix,
                lower,
                upper,
            } => !prefix.is_empty() || lower.is_some() || upper.is_some(),
        };
        keyed || self.residual.is_some() || !self.pushed.is_empty()
    }
}

/// Splits a predicate into its AND-ed parts.
pub fn conjuncts(s: Scalar, out: &mut Vec<Scalar>) {
    match s {
        Scalar::And(parts) => parts.into_iter().for_each(|p| conjuncts(p, out)),
        other => out.push(other),
    }
}

fn is_operand(s: &Scalar) -> bool {
    match s {
        Scalar::Const(_) | Scalar::Param(_) => true,
        Scalar::Cast(inner, _) => is_operand(inner),
        _ => false,
    }
}

/// `column op operand` in either order, normalized to the column on the left.
fn column_comparison(s: &Scalar) -> Option<(usize, CmpOp, &Scalar)> {
    match s {
        Scalar::Compare(op, l, r) => match (&**l, &**r) {
            (Scalar::Column(c), operand) if is_operand(operand) => Some((*c, *op, operand)),
            (operand, Scalar::Column(c)) if is_operand(operand) => Some((*c, op.flip(), operand)),
            _ => None,
        },
        _ => None,
    }
}

/// The secondary index that fixes the most leading columns by equality or IN lists in
/// `parts` (a unique index with all of its columns fixed first), for a read that would
/// otherwise scan the table. Only ready indexes, and only columns whose stored form is
/// one per value: `jsonb`, intervals and arrays can be equal in SQL and stored apart.
fn index_access(relation: &Relation, parts: &[Scalar]) -> Option<Access> {
    let table = &relation.table;
    let candidates_for = |column: &str| -> Option<Vec<Scalar>> {
        let searchable = !matches!(
            crate::sql::values::declared_type(table, column),
            None | Some(SqlType::Json | SqlType::Jsonb | SqlType::Interval | SqlType::Array(_))
        );
        if !searchable {
            return None;
        }
        let names_column = |slot: usize| match relation.slot_source(slot) {
            Source::Pk(k) => table.pk[*k].name == column,
            Source::Attr(name) => name == column,
            _ => false,
        };
        parts.iter().find_map(|part| {
            if let Some((slot, CmpOp::Eq, operand)) = column_comparison(part) {
                if names_column(slot) {
                    return Some(vec![operand.clone()]);
                }
            }
            match part {
                Scalar::InList(target, list, false) => match **target {
                    Scalar::Column(slot)
                        if names_column(slot)
                            && !list.is_empty()
                            && list.iter().all(is_operand) =>
                    {
                        Some(list.clone())
                    }
                    _ => None,
                },
                _ => None,
            }
        })
    };
    let mut best: Option<(usize, Vec<Vec<Scalar>>, bool)> = None;
    for (i, index) in table.indexes.iter().enumerate() {
        if !index.ready {
            continue;
        }
        let values: Vec<Vec<Scalar>> = index
            .columns
            .iter()
            .map_while(|column| candidates_for(column))
            .collect();
        if values.is_empty() {
            continue;
        }
        let exact = index.unique && values.len() == index.columns.len();
        let better = match &best {
            None => true,
            Some((_, fixed, best_exact)) => (exact, values.len()) > (*best_exact, fixed.len()),
        };
        if better {
            best = Some((i, values, exact));
        }
    }
    best.map(|(index, values, _)| Access::Index { index, values })
}

/// Plans where rows come from: access path, residual and pushed-down filters.
pub fn plan_read(
    mut relation: Relation,
    selection: Option<&Expr>,
    params: &mut Params,
    direction: Direction,
) -> SqlResult<ReadPlan> {
    let mut parts = Vec::new();
    if let Some(expr) = selection {
        conjuncts(
            compile(expr, &mut relation, params, Some(SqlType::Bool))?,
            &mut parts,
        );
    }
    Ok(plan_access(relation, parts, direction))
}

/// Picks the access path for AND-ed predicate `parts` over `relation`'s slots; what the
/// path does not enforce exactly stays in the residual. Shared by the fast path and the
/// DataFusion table provider, which hands in its pushed-down filters.
pub fn plan_access(relation: Relation, parts: Vec<Scalar>, direction: Direction) -> ReadPlan {
    let pk_count = relation.table.pk.len();
    let pk_slot = |relation: &Relation, slot: usize| match relation.slot_source(slot) {
        Source::Pk(k) => Some(*k),
        _ => None,
    };
    // Equality (or IN) per PK column, in order, as long as each column is fixed.
    let mut fixed: Vec<Vec<Scalar>> = Vec::new();
    let mut used = vec![false; parts.len()];
    'columns: for k in 0..pk_count {
        for (i, part) in parts.iter().enumerate() {
            if used[i] {
                continue;
            }
            if let Some((slot, CmpOp::Eq, operand)) = column_comparison(part) {
                if pk_slot(&relation, slot) == Some(k) {
                    fixed.push(vec![operand.clone()]);
                    used[i] = true;
                    continue 'columns;
                }
            }
            if let Scalar::InList(target, list, false) = part {
                if let Scalar::Column(slot) = **target {
                    if pk_slot(&relation, slot) == Some(k)
                        && list.iter().all(is_operand)
                        && !list.is_empty()
                    {
                        fixed.push(list.clone());
                        used[i] = true;
                        continue 'columns;
                    }
                }
            }
        }
        break;
    }
    let access = if fixed.len() == pk_count {
        Access::Keys(fixed)
    } else if fixed.iter().all(|candidates| candidates.len() == 1) {
        let k = fixed.len();
        // A bound the range enforces exactly leaves the residual, as equality on the
        // prefix does (and a read without residual can hand its LIMIT to the engine).
        // Only a backward read's bound that needs the predecessor of a String or Binary
        // on the last key column is not exact (no such value exists; see
        // `predecessor`), and stays.
        let no_predecessor = direction == Direction::Backward
            && k + 1 == pk_count
            && relation.table.pk[k].ty != PkType::Integer;
        let (mut lower, mut upper) = (None, None);
        for (i, part) in parts.iter().enumerate() {
            if used[i] {
                continue;
            }
            if let Some((slot, op, operand)) = column_comparison(part) {
                if pk_slot(&relation, slot) != Some(k) {
                    continue;
                }
                match op {
                    CmpOp::Gt | CmpOp::Ge if lower.is_none() => {
                        let inclusive = op == CmpOp::Ge;
                        lower = Some((operand.clone(), inclusive));
                        used[i] = !(no_predecessor && inclusive);
                    }
                    CmpOp::Lt | CmpOp::Le if upper.is_none() => {
                        let inclusive = op == CmpOp::Le;
                        upper = Some((operand.clone(), inclusive));
                        used[i] = !(no_predecessor && !inclusive);
                    }
                    _ => {}
                }
            }
        }
        Access::Range {
            prefix: fixed.into_iter().flatten().collect(),
            lower,
            upper,
        }
    } else {
        // IN on a prefix without the rest fixed: scan the prefix-free range, filter.
        used.iter_mut().for_each(|u| *u = false);
        Access::Range {
            prefix: Vec::new(),
            lower: None,
            upper: None,
        }
    };
    let access = match access {
        Access::Range {
            prefix,
            lower: None,
            upper: None,
        } if prefix.is_empty() && relation.kind == RelationKind::Table => {
            index_access(&relation, &parts).unwrap_or(Access::Range {
                prefix,
                lower: None,
                upper: None,
            })
        }
        other => other,
    };
    let mut pushed = Vec::new();
    let mut residual_parts = Vec::new();
    let mut version_bounds = Vec::new();
    for (i, part) in parts.into_iter().enumerate() {
        if used[i] {
            continue;
        }
        if let Some((slot, op, operand)) = column_comparison(&part) {
            match relation.slot_source(slot) {
                Source::Attr(name)
                    if relation.kind == RelationKind::Table
                        && engine_compares_as_sql(&relation.table, name) =>
                {
                    pushed.push((name.clone(), op, operand.clone()))
                }
                Source::Version => version_bounds.push((op, operand.clone())),
                _ => {}
            }
        }
        residual_parts.push(part);
    }
    let residual = match residual_parts.len() {
        0 => None,
        1 => residual_parts.pop(),
        _ => Some(Scalar::And(residual_parts)),
    };
    ReadPlan {
        relation,
        access,
        direction,
        residual,
        pushed,
        version_bounds,
    }
}

/// Whether the engine judges a comparison on attribute `column` as SQL would, so the
/// comparison may be pushed down to it.
fn engine_compares_as_sql(table: &crate::engine::TableMeta, column: &str) -> bool {
    // A mixed column's cells of other types than String, shown as text, are not
    // compared with a String by the engine.
    if table.declared.mixed.contains(column) {
        return false;
    }
    // A numeric is stored as its text, which does not sort or compare as its value
    // (`'10.00' < '9.00'`, `'1.5' <> '1.50'`).
    !matches!(
        crate::sql::values::declared_type(table, column),
        Some(SqlType::Numeric(_))
    )
}
