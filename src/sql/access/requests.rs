//! Engine requests from a planned read and its parameters: the keys of a GetRow or
//! BatchGetRow, the bounds of a GetRange, the pushed-down column conditions, and the
//! read options (columns, versions, time travel).

use super::{Access, ReadPlan};
use crate::engine::{
    ColumnCondition, Direction, Engine, PkBound, PkValue, PrimaryKey, RangeRequest, ReadOptions,
    TableMeta, Value,
};
use crate::sql::expr::{eval, CmpOp, Scalar};
use crate::sql::relation::RelationKind;
use crate::sql::sql_types::{Datum, SqlError, SqlResult};
use crate::sql::values::{
    coerce_for_output, column_value, compare, datum_into_pk, datum_to_natural_value,
    datum_to_value, declared_type, value_to_datum,
};

/// An operand compared with PK column `k`, as that column's value; `None` if it is NULL.
fn operand_pk_or_null(
    s: &Scalar,
    params: &[Datum],
    table: &TableMeta,
    k: usize,
) -> SqlResult<Option<PkValue>> {
    let column = &table.pk[k];
    match eval(s, &[], params)? {
        Datum::Null => Ok(None),
        d => datum_into_pk(d, column.ty, &column.name).map(Some),
    }
}

impl ReadPlan {
    /// The WHERE clause's attribute comparisons as engine conditions, with this
    /// execution's parameters; a NULL or unconvertible operand is left to the residual.
    pub fn pushed_conditions(&self, params: &[Datum]) -> SqlResult<Vec<ColumnCondition>> {
        let mut filters = Vec::new();
        for (column, op, operand) in &self.pushed {
            let datum = eval(operand, &[], params)?;
            let ty = self.relation.table.column(column).map(|c| c.ty);
            let value = match (ty, &datum) {
                (_, Datum::Null) => None,
                (Some(ty), d) => datum_to_value(d, ty).ok(),
                (None, d) => datum_to_natural_value(d),
            };
            if let Some(value) = value {
                filters.push(ColumnCondition::Compare {
                    column: column.clone(),
                    op: *op,
                    value,
                    pass_if_missing: false,
                });
            }
        }
        Ok(filters)
    }

    /// The engine read options: needed columns, versions, pushed-down filter.
    pub(crate) fn read_options(&self, params: &[Datum]) -> SqlResult<ReadOptions> {
        let mut filters = self.pushed_conditions(params)?;
        let attributes = self.relation.needed_attributes();
        let versions = self.relation.kind == RelationKind::Versions;
        Ok(ReadOptions {
            columns: if versions || attributes.len() > 128 {
                None
            } else {
                Some(attributes)
            },
            max_versions: if versions { Some(i64::MAX) } else { None },
            version_range: self.version_range(params)?,
            filter: match filters.len() {
                0 => None,
                1 => filters.pop(),
                _ => Some(ColumnCondition::And(filters)),
            },
            as_of: None,
            snapshot: None,
        })
    }

    /// `[start, end)` from the comparisons on `version`; `None` when there are none.
    fn version_range(&self, params: &[Datum]) -> SqlResult<Option<(i64, i64)>> {
        if self.version_bounds.is_empty() {
            return Ok(None);
        }
        let (mut start, mut end) = (0i64, i64::MAX);
        for (op, operand) in &self.version_bounds {
            let Datum::Int(v) = eval(operand, &[], params)? else {
                // NULL or a non-integer: leave it to the residual.
                continue;
            };
            match op {
                CmpOp::Eq => {
                    start = start.max(v);
                    end = end.min(v.saturating_add(1));
                }
                CmpOp::Ge => start = start.max(v),
                CmpOp::Gt => start = start.max(v.saturating_add(1)),
                CmpOp::Le => end = end.min(v.saturating_add(1)),
                CmpOp::Lt => end = end.min(v),
                CmpOp::Ne => {}
            }
        }
        Ok(Some((start, end.max(start))))
    }

    /// The GetRange request for a Range access; `None` when an operand is NULL, as no
    /// row then matches (a comparison with NULL is never true).
    pub(crate) fn range_request(
        &self,
        params: &[Datum],
        read: ReadOptions,
    ) -> SqlResult<Option<RangeRequest>> {
        let (prefix, lower, upper) = match &self.access {
            Access::Range {
                prefix,
                lower,
                upper,
            } => (prefix.as_slice(), lower, upper),
            // An index read that cannot use its index here scans (see `index_keys`).
            Access::Index { .. } => (&[][..], &None, &None),
            Access::Keys(_) => return Err(SqlError::internal("a range request of a keyed read")),
        };
        let table = &self.relation.table;
        let mut start = Vec::new();
        let mut end = Vec::new();
        for (k, operand) in prefix.iter().enumerate() {
            let Some(v) = operand_pk_or_null(operand, params, table, k)? else {
                return Ok(None);
            };
            start.push(PkBound::Value(v.clone()));
            end.push(PkBound::Value(v));
        }
        let k = prefix.len();
        let last = k + 1 == table.pk.len();
        let mut null_bound = false;
        let mut bound = |b: &Option<(Scalar, bool)>| -> SqlResult<Option<(PkValue, bool)>> {
            let Some((s, inclusive)) = b else {
                return Ok(None);
            };
            let v = operand_pk_or_null(s, params, table, k)?;
            null_bound |= v.is_none();
            Ok(v.map(|v| (v, *inclusive)))
        };
        let (lower, upper) = (bound(lower)?, bound(upper)?);
        if null_bound {
            return Ok(None);
        }
        let forward = self.direction == Direction::Forward;
        if k < table.pk.len() {
            // Forward reads [low, high); backward from high (inclusive) down to low
            // (exclusive). Pad the remaining columns so the bound covers whole groups.
            let (low, low_pad) = match lower {
                None => (PkBound::InfMin, PkBound::InfMin),
                Some((v, inclusive)) => {
                    let pad = if inclusive {
                        PkBound::InfMin
                    } else {
                        PkBound::InfMax
                    };
                    if last {
                        match (forward, inclusive) {
                            (true, true) | (false, false) => (PkBound::Value(v), pad),
                            (true, false) => successor(v),
                            // Down to just below `v`, or to the prefix's start
                            // (more than asked; the residual keeps the result exact).
                            (false, true) => (
                                predecessor(&v).map_or(PkBound::InfMin, PkBound::Value),
                                PkBound::InfMin,
                            ),
                        }
                    } else {
                        (PkBound::Value(v), pad)
                    }
                }
            };
            let (high, high_pad) = match upper {
                None => (PkBound::InfMax, PkBound::InfMax),
                Some((v, inclusive)) => {
                    let pad = if inclusive {
                        PkBound::InfMax
                    } else {
                        PkBound::InfMin
                    };
                    if last {
                        match (forward, inclusive) {
                            (true, false) | (false, true) => (PkBound::Value(v), pad),
                            (true, true) => successor(v),
                            // From just below `v`. Without a predecessor: from `v`
                            // itself for a String or Binary (the residual drops it),
                            // and from nothing for i64::MIN (no row is below it).
                            (false, false) => {
                                let start = match predecessor(&v) {
                                    Some(below) => PkBound::Value(below),
                                    None if matches!(v, PkValue::Integer(_)) => PkBound::InfMin,
                                    None => PkBound::Value(v),
                                };
                                (start, PkBound::InfMin)
                            }
                        }
                    } else {
                        (PkBound::Value(v), pad)
                    }
                }
            };
            let rest = table.pk.len() - k - 1;
            let (first, first_pad, second, second_pad) = if forward {
                (low, low_pad, high, high_pad)
            } else {
                (high, high_pad, low, low_pad)
            };
            start.push(first);
            start.extend(std::iter::repeat_n(first_pad, rest));
            end.push(second);
            end.extend(std::iter::repeat_n(second_pad, rest));
        }
        Ok(Some(RangeRequest {
            start,
            end,
            direction: self.direction,
            limit: None,
            read,
        }))
    }

    /// The keys of the rows an Index access's entries name, deduplicated and in scan
    /// order, as a Keys access gives them; `None` when an operand has no value of its
    /// column's type (`i = 'x'`), which the read then leaves to a scan and its residual,
    /// so it fails or matches as it would without the index.
    pub(crate) async fn index_keys(
        &self,
        engine: &Engine,
        params: &[Datum],
    ) -> SqlResult<Option<Vec<PrimaryKey>>> {
        let Access::Index { index, values } = &self.access else {
            return Ok(Some(Vec::new()));
        };
        let table = &self.relation.table;
        let Some(index) = table.indexes.get(*index) else {
            return Ok(None);
        };
        let mut lookups: Vec<Vec<Value>> = vec![Vec::new()];
        for (column, candidates) in index.columns.iter().zip(values) {
            let ty = declared_type(table, column);
            let mut column_values = Vec::with_capacity(candidates.len());
            for candidate in candidates {
                let operand = eval(candidate, &[], params)?;
                if operand == Datum::Null {
                    continue;
                }
                let Ok(value) = column_value(operand.clone(), ty) else {
                    return Ok(None);
                };
                // A value the column can hold but not the operand's own (`i = 1.5`
                // stored as 2): nothing equals the operand.
                let stored = value_to_datum(value.as_ref());
                let stored = match ty {
                    Some(ty) => coerce_for_output(stored, ty),
                    None => stored,
                };
                if compare(&stored, &operand) == Some(std::cmp::Ordering::Equal) {
                    column_values.push(value);
                }
            }
            lookups = extended(lookups, &column_values);
        }
        let mut keys = Vec::new();
        for lookup in &lookups {
            match engine.index_keys(table, index, lookup).await? {
                Some(found) => keys.extend(found),
                // Dropped since the read was planned: scan instead.
                None => return Ok(None),
            }
        }
        Ok(Some(self.in_scan_order(keys)))
    }

    /// Every key of a Keys access, deduplicated and in scan order.
    pub(crate) fn keys(&self, params: &[Datum]) -> SqlResult<Vec<PrimaryKey>> {
        let Access::Keys(candidates) = &self.access else {
            return Ok(Vec::new());
        };
        let table = &self.relation.table;
        if candidates.iter().all(|options| options.len() == 1) {
            // One key (a point get): built directly, without the product's copies.
            let mut key = Vec::with_capacity(candidates.len());
            for (k, options) in candidates.iter().enumerate() {
                match operand_pk_or_null(&options[0], params, table, k)? {
                    Some(v) => key.push(v),
                    None => return Ok(Vec::new()),
                }
            }
            return Ok(vec![key]);
        }
        let mut keys: Vec<PrimaryKey> = vec![Vec::new()];
        for (k, options) in candidates.iter().enumerate() {
            let mut values = Vec::with_capacity(options.len());
            for s in options {
                match eval(s, &[], params)? {
                    Datum::Null => {}
                    d => values.push(datum_into_pk(d, table.pk[k].ty, &table.pk[k].name)?),
                }
            }
            keys = extended(keys, &values);
        }
        Ok(self.in_scan_order(keys))
    }

    /// Keys deduplicated, in the order a scan in the read's direction meets them.
    fn in_scan_order(&self, mut keys: Vec<PrimaryKey>) -> Vec<PrimaryKey> {
        keys.sort_by_key(|k| crate::engine::encode_pk(k));
        keys.dedup();
        if self.direction == Direction::Backward {
            keys.reverse();
        }
        keys
    }
}

/// Each of `prefixes` extended by each of `values`: the next column of a product.
fn extended<T: Clone>(prefixes: Vec<Vec<T>>, values: &[T]) -> Vec<Vec<T>> {
    prefixes
        .into_iter()
        .flat_map(|prefix| {
            values.iter().map(move |v| {
                let mut extended = prefix.clone();
                extended.push(v.clone());
                extended
            })
        })
        .collect()
}

/// The smallest value above `v`, as a bound.
fn successor(v: PkValue) -> (PkBound, PkBound) {
    let bound = match v {
        PkValue::Integer(i) => i
            .checked_add(1)
            .map_or(PkBound::InfMax, |n| PkBound::Value(PkValue::Integer(n))),
        PkValue::String(mut s) => {
            s.push('\0');
            PkBound::Value(PkValue::String(s))
        }
        PkValue::Binary(mut b) => {
            b.push(0);
            PkBound::Value(PkValue::Binary(b))
        }
    };
    (bound, PkBound::InfMin)
}

/// The largest value below `v`: none below i64::MIN, and none for a String or Binary
/// (below "b" are "a", "az", "azz", ... without a largest).
fn predecessor(v: &PkValue) -> Option<PkValue> {
    match v {
        PkValue::Integer(i) => i.checked_sub(1).map(PkValue::Integer),
        PkValue::String(_) | PkValue::Binary(_) => None,
    }
}
