//! The access path of a planned read in words, for EXPLAIN: `GetRow`, `BatchGetRow (n
//! keys, p partition keys)`, `GetRange [start, end) FORWARD|BACKWARD (partition keys)
//! limit N`, `IndexGet ... using index` or `Scan`, with the attribute filters handed to
//! the engine. How many partition keys a read touches is what the seeds' advice on
//! key design is about: a key list counts them, a range within one says 1, and any other
//! range touches as many as it holds. Fast-path and DataFusion plans describe their
//! reads with it alike.

use super::{Access, ReadPlan};
use crate::engine::{Direction, PkBound, PkValue, ReadOptions};
use crate::sql::expr::{CmpOp, Scalar};
use crate::sql::relation::RelationKind;
use crate::sql::values::{declared_type, render, stored_time_text};

/// One line naming how `plan` reads its relation. `limit` is the row limit handed to the
/// engine, if any.
pub fn describe(plan: &ReadPlan, limit: Option<usize>) -> String {
    let table = &plan.relation.table.name;
    let name = match plan.relation.kind {
        RelationKind::Table => table.clone(),
        RelationKind::Versions => format!("versions.{table}"),
    };
    let mut line = match &plan.access {
        Access::Keys(_) => match plan.keys(&[]) {
            Ok(keys) if keys.len() == 1 => {
                format!("GetRow {name} {}", key_text(plan, &keys[0]))
            }
            Ok(keys) => format!(
                "BatchGetRow {name} ({} keys, {})",
                keys.len(),
                partition_keys_text(distinct_partition_keys(&keys))
            ),
            Err(_) => format!("BatchGetRow {name}"),
        },
        Access::Index { index, values } => {
            let index = &plan.relation.table.indexes[*index];
            let columns: Vec<String> = index
                .columns
                .iter()
                .zip(values)
                .map(|(column, candidates)| match candidates.as_slice() {
                    [one] => format!("{column} = {}", operand_text(one)),
                    many => format!("{column} IN ({} values)", many.len()),
                })
                .collect();
            format!(
                "IndexGet {name} using {} ({})",
                index.name,
                columns.join(", ")
            )
        }
        Access::Range { .. } => match plan.range_request(&[], ReadOptions::default()) {
            Ok(Some(request)) => {
                let all_inf = request
                    .start
                    .iter()
                    .chain(&request.end)
                    .all(|b| !matches!(b, PkBound::Value(_)));
                let direction = match request.direction {
                    Direction::Forward => "FORWARD",
                    Direction::Backward => "BACKWARD",
                };
                // A range within one partition key names it in both bounds.
                let one_partition = matches!(
                    (request.start.first(), request.end.first()),
                    (Some(PkBound::Value(a)), Some(PkBound::Value(b))) if a == b
                );
                let partitions = match one_partition {
                    true => partition_keys_text(1),
                    false => "partition keys: as many as the range holds".to_string(),
                };
                if all_inf {
                    format!("Scan {name} {direction} (every partition key)")
                } else {
                    format!(
                        "GetRange {name} [{}, {}) {direction} ({partitions})",
                        bound_text(plan, &request.start),
                        bound_text(plan, &request.end)
                    )
                }
            }
            _ => format!("GetRange {name}"),
        },
    };
    let pushed = plan.residual.is_none() && plan.relation.kind == RelationKind::Table;
    if let Some(limit) = limit.filter(|_| pushed) {
        line.push_str(&format!(" limit {limit}"));
    }
    if let Some(residual) = &plan.residual {
        line.push_str(&format!(" where: {}", scalar_text(residual, plan)));
    }
    if !plan.pushed.is_empty() {
        let filters: Vec<String> = plan
            .pushed
            .iter()
            .map(|(column, op, operand)| {
                format!("{column} {} {}", op_text(*op), operand_text(operand))
            })
            .collect();
        line.push_str(&format!(" engine filter: {}", filters.join(" AND ")));
    }
    line
}

/// How many partition keys (first key column values) `keys` name.
fn distinct_partition_keys(keys: &[Vec<PkValue>]) -> usize {
    let mut partitions: Vec<&PkValue> = keys.iter().filter_map(|key| key.first()).collect();
    partitions.sort();
    partitions.dedup();
    partitions.len()
}

fn partition_keys_text(count: usize) -> String {
    match count {
        1 => "1 partition key".to_string(),
        n => format!("{n} partition keys"),
    }
}

/// A predicate as text with the relation's column names.
fn scalar_text(s: &Scalar, plan: &ReadPlan) -> String {
    let relation = &plan.relation;
    match s {
        Scalar::Column(slot) => relation
            .needed
            .get(*slot)
            .and_then(|&i| relation.columns.get(i))
            .map_or_else(|| "?".into(), |c| c.name.clone()),
        Scalar::Compare(op, l, r) => format!(
            "{} {} {}",
            scalar_text(l, plan),
            op_text(*op),
            scalar_text(r, plan)
        ),
        Scalar::And(parts) => parts
            .iter()
            .map(|p| scalar_text(p, plan))
            .collect::<Vec<_>>()
            .join(" AND "),
        Scalar::InList(target, list, negated) => format!(
            "{}{} IN ({})",
            scalar_text(target, plan),
            if *negated { " NOT" } else { "" },
            list.iter()
                .map(|p| scalar_text(p, plan))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => operand_text(other),
    }
}

fn key_text(plan: &ReadPlan, key: &[PkValue]) -> String {
    let parts: Vec<String> = key
        .iter()
        .enumerate()
        .map(|(k, v)| key_value_text(plan, k, v))
        .collect();
    format!("({})", parts.join(", "))
}

fn bound_text(plan: &ReadPlan, bound: &[PkBound]) -> String {
    let parts: Vec<String> = bound
        .iter()
        .enumerate()
        .map(|(k, b)| match b {
            PkBound::InfMin => "INF_MIN".to_string(),
            PkBound::InfMax => "INF_MAX".to_string(),
            PkBound::Value(v) => key_value_text(plan, k, v),
        })
        .collect();
    format!("({})", parts.join(", "))
}

/// Key column `k`'s value as written in SQL: a date or time as its text.
fn key_value_text(plan: &ReadPlan, k: usize, value: &PkValue) -> String {
    let table = &plan.relation.table;
    let declared = table.pk.get(k).and_then(|c| declared_type(table, &c.name));
    match (value, declared) {
        (PkValue::Integer(i), Some(ty)) => match stored_time_text(*i, ty) {
            Some(text) => format!("'{text}'"),
            None => value.to_string(),
        },
        _ => value.to_string(),
    }
}

fn op_text(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "=",
        CmpOp::Ne => "<>",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

fn operand_text(s: &Scalar) -> String {
    match s {
        Scalar::Const(d) => render(d),
        Scalar::Param(i) => format!("${}", i + 1),
        Scalar::Cast(inner, _) => operand_text(inner),
        _ => "?".into(),
    }
}
