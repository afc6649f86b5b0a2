//! Row-existence and column conditions on writes, and the same column conditions used as
//! read filters. A column condition looks at the newest visible version of a column.

use super::types::{Row, Value};
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowExistence {
    Ignore,
    ExpectExist,
    ExpectNotExist,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompareOp {
    /// Whether `left op right` holds, given how `left` compares with `right`.
    pub fn holds(self, ordering: Ordering) -> bool {
        match self {
            CompareOp::Eq => ordering == Ordering::Equal,
            CompareOp::Ne => ordering != Ordering::Equal,
            CompareOp::Lt => ordering == Ordering::Less,
            CompareOp::Le => ordering != Ordering::Greater,
            CompareOp::Gt => ordering == Ordering::Greater,
            CompareOp::Ge => ordering != Ordering::Less,
        }
    }

    /// The operator with its operands swapped (`5 < a` is `a > 5`).
    pub fn flip(self) -> CompareOp {
        match self {
            CompareOp::Lt => CompareOp::Gt,
            CompareOp::Le => CompareOp::Ge,
            CompareOp::Gt => CompareOp::Lt,
            CompareOp::Ge => CompareOp::Le,
            other => other,
        }
    }
}

/// A predicate over a row's attribute columns.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnCondition {
    /// `column op value`. A missing column passes only if `pass_if_missing`; a value of
    /// another, incomparable type never passes.
    Compare {
        column: String,
        op: CompareOp,
        value: Value,
        pass_if_missing: bool,
    },
    /// The column has (`true`) or lacks (`false`) a visible value.
    Exists {
        column: String,
        present: bool,
    },
    And(Vec<ColumnCondition>),
    Or(Vec<ColumnCondition>),
    Not(Box<ColumnCondition>),
}

impl ColumnCondition {
    /// Whether the condition holds for `row` (its newest visible cells).
    pub fn matches(&self, row: &Row) -> bool {
        match self {
            ColumnCondition::Compare {
                column,
                op,
                value,
                pass_if_missing,
            } => match row.latest(column) {
                None => *pass_if_missing,
                Some(cell) => cell.value.compare(value).is_some_and(|o| op.holds(o)),
            },
            ColumnCondition::Exists { column, present } => row.latest(column).is_some() == *present,
            ColumnCondition::And(all) => all.iter().all(|c| c.matches(row)),
            ColumnCondition::Or(any) => any.iter().any(|c| c.matches(row)),
            ColumnCondition::Not(inner) => !inner.matches(row),
        }
    }

    /// Every column the condition reads.
    pub fn columns(&self, out: &mut Vec<String>) {
        match self {
            ColumnCondition::Compare { column, .. } | ColumnCondition::Exists { column, .. } => {
                out.push(column.clone())
            }
            ColumnCondition::And(all) | ColumnCondition::Or(all) => {
                all.iter().for_each(|c| c.columns(out))
            }
            ColumnCondition::Not(inner) => inner.columns(out),
        }
    }
}

/// The condition a write must meet to apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub row: RowExistence,
    pub column: Option<ColumnCondition>,
}

impl Condition {
    pub const IGNORE: Condition = Condition {
        row: RowExistence::Ignore,
        column: None,
    };

    pub fn row(row: RowExistence) -> Self {
        Condition { row, column: None }
    }

    /// Whether the write needs the row read before it (and so costs a read CU).
    pub fn reads_row(&self) -> bool {
        self.row != RowExistence::Ignore || self.column.is_some()
    }

    /// Checks the condition against the row as it is now (`None` = no visible row).
    pub fn check(&self, row: Option<&Row>) -> Result<(), ConditionFailure> {
        match (self.row, row) {
            (RowExistence::ExpectExist, None) => return Err(ConditionFailure::RowMissing),
            (RowExistence::ExpectNotExist, Some(_)) => return Err(ConditionFailure::RowExists),
            _ => {}
        }
        if let Some(column) = &self.column {
            let empty;
            let row = match row {
                Some(r) => r,
                None => {
                    empty = Row {
                        pk: Vec::new(),
                        cells: Vec::new(),
                    };
                    &empty
                }
            };
            if !column.matches(row) {
                return Err(ConditionFailure::ColumnConditionFailed);
            }
        }
        Ok(())
    }
}

/// Why a conditional write did not apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionFailure {
    RowExists,
    RowMissing,
    ColumnConditionFailed,
}
