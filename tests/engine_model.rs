//! Model-based test of the engine, after sled's `prop_tree_matches_btreemap`: random
//! sequences of writes (PutRow, UpdateRow with every column operation, DeleteRow, atomic
//! and independent batches, with row and column conditions), reads (GetRow, BatchGetRow,
//! paged GetRange in both directions, also read as row views), option changes, clock moves and GC run against the
//! engine over `MemoryBackend` and against a plain `BTreeMap` model of versioned cells.
//! The model applies docs/table-store.md §5 and §6 directly: per column the newest
//! `max_versions` versions with `version/1000 + ttl > now/1000` are visible; a row exists
//! if it was written and (no TTL, or it has a visible cell, or it stores no cell at all
//! and its last write is still alive).
//! A write stores only the visible versions of the row it changes; GC removes the rest of
//! what no read can see, and raising the options shows again what neither removed. Every
//! result must match.

use pgwide::engine::{
    BatchMode, Capacity, Cell, Clock, ColumnCondition, ColumnOp, CompareOp, Condition,
    ConditionFailure, Direction, Engine, EngineError, GcReport, Limits, ManualClock, OptionValue,
    PkBound, PkColumn, PkType, PkValue, RangeRequest, ReadOptions, Row, RowChange, RowExistence,
    RowWrite, TableMeta, TableSpec, Value, WriteOutcome, DEFAULT_INSTANCE,
};
use pgwide::storage::MemoryBackend;
use proptest::prelude::*;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

const T0: i64 = 1_700_000_000_000;
const OFFSET_S: i64 = 5;
const PAGE_ROWS: usize = 3;
const COLS: [&str; 3] = ["c0", "c1", "c2"];
const PARTS: [&str; 2] = ["a", "b"];
const IDS: [i64; 4] = [-1, 0, 1, 2];
const BOUND_PARTS: [&str; 5] = ["", "a", "aa", "b", "c"];
const BOUND_IDS: [i64; 6] = [-2, -1, 0, 1, 2, 3];

// ---------------------------------------------------------------- operations

#[derive(Debug, Clone)]
enum CondSpec {
    Compare {
        col: usize,
        op: usize,
        value: Value,
        pass_if_missing: bool,
    },
    Exists {
        col: usize,
        present: bool,
    },
    Not(Box<CondSpec>),
    And(Box<CondSpec>, Box<CondSpec>),
    Or(Box<CondSpec>, Box<CondSpec>),
}

#[derive(Debug, Clone)]
enum ColSpec {
    Put {
        col: usize,
        value: Value,
        /// Explicit version as an offset from now in ms; `None` = server-assigned.
        delta: Option<i64>,
    },
    /// Deletes the `pick`-th stored version of the column (or a version that is not there).
    DeleteVersion {
        col: usize,
        pick: usize,
    },
    DeleteAll {
        col: usize,
    },
    Increment {
        col: usize,
        by: i64,
    },
    Add {
        col: usize,
        by: i64,
    },
}

#[derive(Debug, Clone)]
enum ChangeSpec {
    Put(Vec<(usize, Value, Option<i64>)>),
    Update(Vec<ColSpec>),
    Delete,
}

#[derive(Debug, Clone)]
struct WriteSpec {
    key: (usize, usize),
    change: ChangeSpec,
    row: RowExistence,
    column: Option<CondSpec>,
    return_row: bool,
}

#[derive(Debug, Clone)]
struct ReadSpec {
    columns: Option<Vec<usize>>,
    max_versions: Option<i64>,
    /// Version range as offsets from now: `[now + a, now + a + len)`.
    version_range: Option<(i64, i64)>,
    filter: Option<CondSpec>,
}

#[derive(Debug, Clone, Copy)]
enum BoundSpec {
    Min,
    Max,
    Val(usize),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum WriteMode {
    Single,
    Atomic,
    Independent,
}

#[derive(Debug, Clone)]
enum Op {
    Write(Vec<WriteSpec>, WriteMode),
    Get((usize, usize), ReadSpec),
    BatchGet(Vec<(usize, usize)>, ReadSpec),
    Range {
        start: [BoundSpec; 2],
        end: [BoundSpec; 2],
        backward: bool,
        limit: Option<usize>,
        read: ReadSpec,
    },
    Alter {
        ttl: Option<i64>,
        max_versions: Option<i64>,
    },
    Advance(i64),
    Gc,
    /// A background-style pass (`gc_all`): after its first whole pass over the table, it
    /// examines only the rows writes left hidden versions in, and must remove all the
    /// same.
    GcAll,
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => (-3i64..4).prop_map(Value::Integer),
        1 => "[xy]{0,2}".prop_map(Value::String),
    ]
}

fn delta() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![
        4 => Just(None),
        1 => Just(Some(0)),
        3 => (-4000i64..4000).prop_map(Some),
        1 => (-7000i64..7000).prop_map(Some),
    ]
}

fn leaf() -> impl Strategy<Value = CondSpec> {
    prop_oneof![
        3 => (0..3usize, 0..6usize, value(), any::<bool>()).prop_map(
            |(col, op, value, pass_if_missing)| CondSpec::Compare {
                col,
                op,
                value,
                pass_if_missing
            }
        ),
        1 => (0..3usize, any::<bool>()).prop_map(|(col, present)| CondSpec::Exists { col, present }),
    ]
}

fn cond() -> impl Strategy<Value = CondSpec> {
    prop_oneof![
        3 => leaf(),
        1 => leaf().prop_map(|c| CondSpec::Not(Box::new(c))),
        1 => (leaf(), leaf()).prop_map(|(a, b)| CondSpec::And(Box::new(a), Box::new(b))),
        1 => (leaf(), leaf()).prop_map(|(a, b)| CondSpec::Or(Box::new(a), Box::new(b))),
    ]
}

fn key() -> impl Strategy<Value = (usize, usize)> {
    (0..PARTS.len(), 0..IDS.len())
}

fn col_spec() -> impl Strategy<Value = ColSpec> {
    prop_oneof![
        4 => (0..3usize, value(), delta()).prop_map(|(col, value, delta)| ColSpec::Put { col, value, delta }),
        1 => (0..3usize, 0..4usize).prop_map(|(col, pick)| ColSpec::DeleteVersion { col, pick }),
        1 => (0..3usize).prop_map(|col| ColSpec::DeleteAll { col }),
        2 => (0..3usize, -2i64..3).prop_map(|(col, by)| ColSpec::Increment { col, by }),
        1 => (0..3usize, -2i64..3).prop_map(|(col, by)| ColSpec::Add { col, by }),
    ]
}

fn change() -> impl Strategy<Value = ChangeSpec> {
    prop_oneof![
        3 => proptest::collection::btree_map(0..3usize, (value(), delta()), 0..=3)
            .prop_map(|m| ChangeSpec::Put(m.into_iter().map(|(c, (v, d))| (c, v, d)).collect())),
        4 => proptest::collection::vec(col_spec(), 0..=3).prop_map(ChangeSpec::Update),
        1 => Just(ChangeSpec::Delete),
    ]
}

fn write_spec() -> impl Strategy<Value = WriteSpec> {
    let row = prop_oneof![
        4 => Just(RowExistence::Ignore),
        1 => Just(RowExistence::ExpectExist),
        1 => Just(RowExistence::ExpectNotExist),
    ];
    (
        key(),
        change(),
        row,
        proptest::option::weighted(0.25, cond()),
        any::<bool>(),
    )
        .prop_map(|(key, change, row, column, return_row)| WriteSpec {
            key,
            change,
            row,
            column,
            return_row,
        })
}

fn read_spec() -> impl Strategy<Value = ReadSpec> {
    (
        proptest::option::weighted(0.3, proptest::collection::vec(0..3usize, 0..3)),
        proptest::option::weighted(0.5, 1i64..4),
        proptest::option::weighted(0.3, (-6000i64..1000, 0i64..6000)),
        proptest::option::weighted(0.2, cond()),
    )
        .prop_map(|(columns, max_versions, version_range, filter)| ReadSpec {
            columns,
            max_versions,
            version_range,
            filter,
        })
}

fn bound(values: usize) -> impl Strategy<Value = BoundSpec> {
    prop_oneof![
        1 => Just(BoundSpec::Min),
        1 => Just(BoundSpec::Max),
        4 => (0..values).prop_map(BoundSpec::Val),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let mode = prop_oneof![Just(WriteMode::Atomic), Just(WriteMode::Independent)];
    prop_oneof![
        10 => write_spec().prop_map(|w| Op::Write(vec![w], WriteMode::Single)),
        3 => (proptest::collection::vec(write_spec(), 2..5), mode).prop_map(|(w, m)| Op::Write(w, m)),
        4 => (key(), read_spec()).prop_map(|(k, r)| Op::Get(k, r)),
        1 => (proptest::collection::vec(key(), 1..4), read_spec()).prop_map(|(k, r)| Op::BatchGet(k, r)),
        3 => (
            [bound(BOUND_PARTS.len()), bound(BOUND_IDS.len())],
            [bound(BOUND_PARTS.len()), bound(BOUND_IDS.len())],
            any::<bool>(),
            proptest::option::weighted(0.6, 1usize..5),
            read_spec(),
        )
            .prop_map(|(start, end, backward, limit, read)| Op::Range {
                start,
                end,
                backward,
                limit,
                read
            }),
        1 => (
            proptest::option::of(prop_oneof![Just(-1i64), Just(1), Just(2), Just(4), Just(10)]),
            proptest::option::of(prop_oneof![Just(1i64), Just(2), Just(3), Just(5)]),
        )
            .prop_map(|(ttl, max_versions)| Op::Alter { ttl, max_versions }),
        3 => prop_oneof![Just(0i64), Just(1), Just(999), Just(1000), Just(1500), Just(3000)]
            .prop_map(Op::Advance),
        1 => Just(Op::Gc),
        1 => Just(Op::GcAll),
    ]
}

// ---------------------------------------------------------------- the model

type Key = (String, i64);

#[derive(Debug, Clone, Default)]
struct MRow {
    last_write: i64,
    /// Column → version → value (every stored version, visible or not).
    cols: BTreeMap<String, BTreeMap<i64, Value>>,
}

#[derive(Debug, Clone)]
struct Model {
    rows: BTreeMap<Key, MRow>,
    ttl: i64,
    max_versions: i64,
}

fn pk_of(key: &Key) -> Vec<PkValue> {
    vec![PkValue::String(key.0.clone()), PkValue::Integer(key.1)]
}

fn model_key(k: (usize, usize)) -> Key {
    (PARTS[k.0].to_string(), IDS[k.1])
}

/// Same-type comparison only (Integer with Integer, String with String).
fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Integer(x), Value::Integer(y)) => Some(x.cmp(y)),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

fn cond_holds(c: &CondSpec, row: &Row) -> bool {
    let latest = |col: usize| row.cells.iter().find(|c| c.column == COLS[col]);
    match c {
        CondSpec::Compare {
            col,
            op,
            value,
            pass_if_missing,
        } => match latest(*col) {
            None => *pass_if_missing,
            Some(cell) => compare(&cell.value, value).is_some_and(|o| match op {
                0 => o == Ordering::Equal,
                1 => o != Ordering::Equal,
                2 => o == Ordering::Less,
                3 => o != Ordering::Greater,
                4 => o == Ordering::Greater,
                _ => o != Ordering::Less,
            }),
        },
        CondSpec::Exists { col, present } => latest(*col).is_some() == *present,
        CondSpec::Not(inner) => !cond_holds(inner, row),
        CondSpec::And(a, b) => cond_holds(a, row) && cond_holds(b, row),
        CondSpec::Or(a, b) => cond_holds(a, row) || cond_holds(b, row),
    }
}

impl Model {
    fn alive(&self, version: i64, now: i64) -> bool {
        self.ttl == -1 || version.div_euclid(1000) + self.ttl > now.div_euclid(1000)
    }

    /// Visible cells: per column (name order) the newest `max_versions` alive versions.
    fn visible(&self, row: &MRow, now: i64) -> Vec<Cell> {
        let mut cells = Vec::new();
        for (column, versions) in &row.cols {
            for (&version, value) in versions
                .iter()
                .rev()
                .filter(|(&v, _)| self.alive(v, now))
                .take(self.max_versions as usize)
            {
                cells.push(Cell {
                    column: column.clone(),
                    version,
                    value: value.clone(),
                });
            }
        }
        cells
    }

    /// `row` with only its visible versions: what GC leaves of it, and what a write
    /// stores of the row it changed.
    fn visible_only(&self, row: &MRow, now: i64) -> MRow {
        let mut kept = MRow {
            last_write: row.last_write,
            cols: BTreeMap::new(),
        };
        for cell in self.visible(row, now) {
            kept.cols
                .entry(cell.column)
                .or_default()
                .insert(cell.version, cell.value);
        }
        kept
    }

    fn exists(&self, row: &MRow, now: i64) -> bool {
        let stores_cells = row.cols.values().any(|versions| !versions.is_empty());
        self.ttl == -1
            || if stores_cells {
                !self.visible(row, now).is_empty()
            } else {
                self.alive(row.last_write, now)
            }
    }

    fn current(&self, key: &Key, now: i64) -> Option<Row> {
        let row = self.rows.get(key)?;
        self.exists(row, now).then(|| Row {
            pk: pk_of(key),
            cells: self.visible(row, now),
        })
    }

    fn read(&self, key: &Key, now: i64, read: &ReadSpec) -> Option<Row> {
        let mut row = self.current(key, now)?;
        if let Some((a, len)) = read.version_range {
            row.cells
                .retain(|c| c.version >= now + a && c.version < now + a + len);
        }
        let per_column = read.max_versions.unwrap_or(1) as usize;
        let mut kept: Vec<Cell> = Vec::new();
        for cell in row.cells {
            let taken = kept.iter().filter(|c| c.column == cell.column).count();
            if taken < per_column {
                kept.push(cell);
            }
        }
        row.cells = kept;
        if let Some(filter) = &read.filter {
            if !cond_holds(filter, &row) {
                return None;
            }
        }
        if let Some(columns) = &read.columns {
            row.cells
                .retain(|c| columns.iter().any(|&i| COLS[i] == c.column));
        }
        Some(row)
    }

    fn server_version(row: &MRow, column: &str, now: i64) -> i64 {
        match row.cols.get(column).and_then(|v| v.keys().next_back()) {
            Some(&newest) if newest >= now && newest < now + 1000 => newest + 1,
            _ => now,
        }
    }

    /// The refusal an explicit version gets, if any (window first, then TTL).
    fn check_version(&self, column: &str, version: i64, now: i64) -> Result<(), EngineError> {
        let now_s = now.div_euclid(1000);
        let v_s = version.div_euclid(1000);
        if v_s < now_s - OFFSET_S || v_s >= now_s + OFFSET_S {
            return Err(EngineError::VersionOutOfRange {
                column: column.into(),
                version,
                min: (now_s - OFFSET_S) * 1000,
                max: (now_s + OFFSET_S) * 1000,
            });
        }
        if !self.alive(version, now) {
            return Err(EngineError::ExpiredWrite {
                column: column.into(),
                version,
                ttl: self.ttl,
            });
        }
        Ok(())
    }

    fn resolve_delete_version(&self, key: &Key, col: usize, pick: usize, now: i64) -> i64 {
        let versions: Vec<i64> = self
            .rows
            .get(key)
            .and_then(|r| r.cols.get(COLS[col]))
            .map(|v| v.keys().copied().collect())
            .unwrap_or_default();
        if versions.is_empty() || pick == versions.len() {
            now - 1
        } else {
            versions[pick % versions.len()]
        }
    }

    fn apply_change(&mut self, key: &Key, change: &RowChange, now: i64) -> Result<(), EngineError> {
        match change {
            RowChange::Delete => {
                self.rows.remove(key);
            }
            RowChange::Put(ops) => {
                let old = self.rows.remove(key).unwrap_or_default();
                let mut row = MRow {
                    last_write: now,
                    cols: BTreeMap::new(),
                };
                for op in ops {
                    if let ColumnOp::Put {
                        column,
                        value,
                        version,
                    } = op
                    {
                        let v = version.unwrap_or_else(|| Self::server_version(&old, column, now));
                        row.cols
                            .entry(column.clone())
                            .or_default()
                            .insert(v, value.clone());
                    }
                }
                self.rows.insert(key.clone(), row);
            }
            RowChange::Update(ops) => {
                let mut row = self.rows.remove(key).unwrap_or_default();
                for op in ops {
                    match op {
                        ColumnOp::Put {
                            column,
                            value,
                            version,
                        } => {
                            let v =
                                version.unwrap_or_else(|| Self::server_version(&row, column, now));
                            row.cols
                                .entry(column.clone())
                                .or_default()
                                .insert(v, value.clone());
                        }
                        ColumnOp::DeleteVersion { column, version } => {
                            if let Some(versions) = row.cols.get_mut(column) {
                                versions.remove(version);
                                if versions.is_empty() {
                                    row.cols.remove(column);
                                }
                            }
                        }
                        ColumnOp::DeleteAll { column } => {
                            row.cols.remove(column);
                        }
                        ColumnOp::Increment { column, by } | ColumnOp::Add { column, by } => {
                            let latest = self
                                .visible(&row, now)
                                .into_iter()
                                .find(|c| c.column == *column);
                            let base = match latest.map(|c| c.value) {
                                // SQL's NULL + by: the column keeps no value.
                                None if matches!(op, ColumnOp::Add { .. }) => continue,
                                None => 0,
                                Some(Value::Integer(i)) => i,
                                Some(other) => {
                                    return Err(EngineError::IncrementType {
                                        column: column.clone(),
                                        found: other.value_type(),
                                    })
                                }
                            };
                            let v = Self::server_version(&row, column, now);
                            row.cols
                                .entry(column.clone())
                                .or_default()
                                .insert(v, Value::Integer(base + by));
                        }
                    }
                }
                row.last_write = now;
                self.rows.insert(key.clone(), row);
            }
        }
        Ok(())
    }

    /// A batch of writes: validation, then conditions and changes in order, all applied
    /// or (on an error, or a failed condition in an atomic batch) none.
    fn write(
        &mut self,
        writes: &[(Key, RowWrite)],
        mode: BatchMode,
        now: i64,
    ) -> Result<Vec<WriteOutcome>, EngineError> {
        for (_, write) in writes {
            if let RowChange::Put(ops) | RowChange::Update(ops) = &write.change {
                for op in ops {
                    if let ColumnOp::Put {
                        column,
                        version: Some(v),
                        ..
                    } = op
                    {
                        self.check_version(column, *v, now)?;
                    }
                }
            }
        }
        let mut work = self.clone();
        let mut outcomes = Vec::new();
        for (index, (key, write)) in writes.iter().enumerate() {
            let before = work.current(key, now);
            let failure = match (write.condition.row, &before) {
                (RowExistence::ExpectExist, None) => Some(ConditionFailure::RowMissing),
                (RowExistence::ExpectNotExist, Some(_)) => Some(ConditionFailure::RowExists),
                _ => None,
            };
            let failure = failure.or_else(|| {
                let spec = write.condition.column.as_ref()?;
                let empty = Row {
                    pk: Vec::new(),
                    cells: Vec::new(),
                };
                let holds = column_condition_holds(spec, before.as_ref().unwrap_or(&empty));
                (!holds).then_some(ConditionFailure::ColumnConditionFailed)
            });
            if let Some(failure) = failure {
                if mode == BatchMode::Atomic {
                    let mut all = vec![WriteOutcome::NotApplied; writes.len()];
                    all[index] = WriteOutcome::ConditionFailed(failure);
                    return Ok(all);
                }
                outcomes.push(WriteOutcome::ConditionFailed(failure));
                continue;
            }
            work.apply_change(key, &write.change, now)?;
            if let Some(row) = work.rows.get(key) {
                let kept = work.visible_only(row, now);
                work.rows.insert(key.clone(), kept);
            }
            let after = if write.return_row {
                work.current(key, now)
            } else {
                None
            };
            outcomes.push(WriteOutcome::Applied(after));
        }
        *self = work;
        Ok(outcomes)
    }

    fn gc(&mut self, now: i64) -> GcReport {
        let mut report = GcReport::default();
        let keys: Vec<Key> = self.rows.keys().cloned().collect();
        for key in keys {
            report.rows_examined += 1;
            let row = &self.rows[&key];
            let total: usize = row.cols.values().map(BTreeMap::len).sum();
            if !self.exists(row, now) {
                self.rows.remove(&key);
                report.rows_removed += 1;
                report.versions_removed += total as u64;
                continue;
            }
            let kept = self.visible_only(row, now);
            let kept_versions: usize = kept.cols.values().map(BTreeMap::len).sum();
            report.versions_removed += (total - kept_versions) as u64;
            self.rows.insert(key, kept);
        }
        report
    }
}

/// The engine's `ColumnCondition` built from a spec is only used as input; the model
/// evaluates the spec itself.
fn column_condition_holds(c: &ColumnCondition, row: &Row) -> bool {
    cond_holds(&spec_of(c), row)
}

fn spec_of(c: &ColumnCondition) -> CondSpec {
    let col = |name: &str| COLS.iter().position(|c| *c == name).unwrap_or(0);
    match c {
        ColumnCondition::Compare {
            column,
            op,
            value,
            pass_if_missing,
        } => CondSpec::Compare {
            col: col(column),
            op: match op {
                CompareOp::Eq => 0,
                CompareOp::Ne => 1,
                CompareOp::Lt => 2,
                CompareOp::Le => 3,
                CompareOp::Gt => 4,
                CompareOp::Ge => 5,
            },
            value: value.clone(),
            pass_if_missing: *pass_if_missing,
        },
        ColumnCondition::Exists { column, present } => CondSpec::Exists {
            col: col(column),
            present: *present,
        },
        ColumnCondition::Not(inner) => CondSpec::Not(Box::new(spec_of(inner))),
        ColumnCondition::And(all) => {
            CondSpec::And(Box::new(spec_of(&all[0])), Box::new(spec_of(&all[1])))
        }
        ColumnCondition::Or(any) => {
            CondSpec::Or(Box::new(spec_of(&any[0])), Box::new(spec_of(&any[1])))
        }
    }
}

fn to_condition(c: &CondSpec) -> ColumnCondition {
    match c {
        CondSpec::Compare {
            col,
            op,
            value,
            pass_if_missing,
        } => ColumnCondition::Compare {
            column: COLS[*col].into(),
            op: [
                CompareOp::Eq,
                CompareOp::Ne,
                CompareOp::Lt,
                CompareOp::Le,
                CompareOp::Gt,
                CompareOp::Ge,
            ][*op],
            value: value.clone(),
            pass_if_missing: *pass_if_missing,
        },
        CondSpec::Exists { col, present } => ColumnCondition::Exists {
            column: COLS[*col].into(),
            present: *present,
        },
        CondSpec::Not(inner) => ColumnCondition::Not(Box::new(to_condition(inner))),
        CondSpec::And(a, b) => ColumnCondition::And(vec![to_condition(a), to_condition(b)]),
        CondSpec::Or(a, b) => ColumnCondition::Or(vec![to_condition(a), to_condition(b)]),
    }
}

fn to_read(r: &ReadSpec, now: i64) -> ReadOptions {
    ReadOptions {
        columns: r
            .columns
            .as_ref()
            .map(|c| c.iter().map(|&i| COLS[i].to_string()).collect()),
        max_versions: r.max_versions,
        version_range: r.version_range.map(|(a, len)| (now + a, now + a + len)),
        filter: r.filter.as_ref().map(to_condition),
        as_of: None,
        snapshot: None,
    }
}

fn to_bound(specs: &[BoundSpec; 2]) -> Vec<PkBound> {
    vec![
        match specs[0] {
            BoundSpec::Min => PkBound::InfMin,
            BoundSpec::Max => PkBound::InfMax,
            BoundSpec::Val(i) => PkBound::Value(PkValue::String(BOUND_PARTS[i].into())),
        },
        match specs[1] {
            BoundSpec::Min => PkBound::InfMin,
            BoundSpec::Max => PkBound::InfMax,
            BoundSpec::Val(i) => PkBound::Value(PkValue::Integer(BOUND_IDS[i])),
        },
    ]
}

/// Compares a key with a range bound column by column; INF_MIN/INF_MAX decide at once.
fn cmp_bound(key: &Key, bound: &[PkBound]) -> Ordering {
    let parts = [PkValue::String(key.0.clone()), PkValue::Integer(key.1)];
    for (value, b) in parts.iter().zip(bound) {
        let o = match b {
            PkBound::InfMin => return Ordering::Greater,
            PkBound::InfMax => return Ordering::Less,
            PkBound::Value(v) => value.cmp(v),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

// ---------------------------------------------------------------- the runner

struct Harness {
    engine: Engine,
    clock: ManualClock,
    model: Model,
}

impl Harness {
    async fn new() -> Self {
        let clock = ManualClock::new(T0);
        let limits = Limits {
            max_range_rows: PAGE_ROWS,
            ..Limits::default()
        };
        let engine = Engine::open(
            Arc::new(MemoryBackend::new()),
            Arc::new(clock.clone()),
            limits,
        )
        .await
        .unwrap();
        engine
            .create_table(
                DEFAULT_INSTANCE,
                TableSpec {
                    name: "t".into(),
                    pk: vec![
                        PkColumn {
                            name: "part".into(),
                            ty: PkType::String,
                        },
                        PkColumn {
                            name: "id".into(),
                            ty: PkType::Integer,
                        },
                    ],
                    options: vec![
                        ("max_versions".into(), OptionValue::Integer(2)),
                        ("max_version_offset".into(), OptionValue::Integer(OFFSET_S)),
                    ],
                    ..TableSpec::default()
                },
            )
            .await
            .unwrap();
        Harness {
            engine,
            clock,
            model: Model {
                rows: BTreeMap::new(),
                ttl: -1,
                max_versions: 2,
            },
        }
    }

    fn table(&self) -> Arc<TableMeta> {
        self.engine.table(DEFAULT_INSTANCE, "t").unwrap()
    }

    fn row_write(&self, w: &WriteSpec, now: i64) -> RowWrite {
        let key = model_key(w.key);
        let change = match &w.change {
            ChangeSpec::Put(cols) => RowChange::Put(
                cols.iter()
                    .map(|(c, v, d)| ColumnOp::Put {
                        column: COLS[*c].into(),
                        value: v.clone(),
                        version: d.map(|d| now + d),
                    })
                    .collect(),
            ),
            ChangeSpec::Update(ops) => RowChange::Update(
                ops.iter()
                    .map(|op| match op {
                        ColSpec::Put { col, value, delta } => ColumnOp::Put {
                            column: COLS[*col].into(),
                            value: value.clone(),
                            version: delta.map(|d| now + d),
                        },
                        ColSpec::DeleteVersion { col, pick } => ColumnOp::DeleteVersion {
                            column: COLS[*col].into(),
                            version: self.model.resolve_delete_version(&key, *col, *pick, now),
                        },
                        ColSpec::DeleteAll { col } => ColumnOp::DeleteAll {
                            column: COLS[*col].into(),
                        },
                        ColSpec::Increment { col, by } => ColumnOp::Increment {
                            column: COLS[*col].into(),
                            by: *by,
                        },
                        ColSpec::Add { col, by } => ColumnOp::Add {
                            column: COLS[*col].into(),
                            by: *by,
                        },
                    })
                    .collect(),
            ),
            ChangeSpec::Delete => RowChange::Delete,
        };
        RowWrite {
            pk: pk_of(&key),
            change,
            condition: Condition {
                row: w.row,
                column: w.column.as_ref().map(to_condition),
            },
            return_row: w.return_row,
        }
    }

    async fn run(&mut self, op: &Op) -> Result<(), TestCaseError> {
        let now = self.clock.now_ms();
        let table = self.table();
        match op {
            Op::Write(specs, mode) => {
                let writes: Vec<(Key, RowWrite)> = specs
                    .iter()
                    .map(|w| (model_key(w.key), self.row_write(w, now)))
                    .collect();
                let engine_writes: Vec<_> = writes
                    .iter()
                    .map(|(_, w)| (Arc::clone(&table), w.clone()))
                    .collect();
                let (got, batch_mode) = match mode {
                    WriteMode::Single => (
                        self.engine
                            .put_row(&table, engine_writes.into_iter().next().unwrap().1)
                            .await,
                        BatchMode::Atomic,
                    ),
                    WriteMode::Atomic => (
                        self.engine
                            .write_rows(engine_writes, BatchMode::Atomic)
                            .await,
                        BatchMode::Atomic,
                    ),
                    WriteMode::Independent => (
                        self.engine.batch_write_row(engine_writes).await,
                        BatchMode::Independent,
                    ),
                };
                let want = self.model.write(&writes, batch_mode, now);
                prop_assert_eq!(got.map(|r| r.outcomes), want, "write {:?}", op);
            }
            Op::Get(k, read) => {
                let key = model_key(*k);
                let got = self
                    .engine
                    .get_row(&table, &pk_of(&key), &to_read(read, now))
                    .await
                    .unwrap();
                let want = self.model.read(&key, now, read);
                prop_assert_eq!(
                    got.capacity,
                    Capacity::read(want.as_ref().map_or(0, Row::size)),
                    "GetRow capacity"
                );
                prop_assert_eq!(got.row, want, "GetRow {:?}", key);
            }
            Op::BatchGet(keys, read) => {
                let pks: Vec<_> = keys.iter().map(|k| pk_of(&model_key(*k))).collect();
                let got = self
                    .engine
                    .batch_get_row(&table, &pks, &to_read(read, now))
                    .await
                    .unwrap();
                let want: Vec<_> = keys
                    .iter()
                    .map(|k| self.model.read(&model_key(*k), now, read))
                    .collect();
                prop_assert_eq!(got.rows, want, "BatchGetRow");
            }
            Op::Range {
                start,
                end,
                backward,
                limit,
                read,
            } => {
                let direction = if *backward {
                    Direction::Backward
                } else {
                    Direction::Forward
                };
                let mut request = RangeRequest {
                    start: to_bound(start),
                    end: to_bound(end),
                    direction,
                    limit: *limit,
                    read: to_read(read, now),
                };
                let end_bound = request.end.clone();
                let mut pages = 0;
                loop {
                    pages += 1;
                    prop_assert!(pages <= 20, "GetRange does not finish");
                    let got = self.engine.get_range(&table, &request).await.unwrap();
                    // The same page read as views: the same rows, paging, and costs.
                    let mut viewed = Vec::new();
                    let visit = self
                        .engine
                        .get_range_views(&table, &request, |row| viewed.push(row.to_row()))
                        .await
                        .unwrap();
                    prop_assert_eq!(&viewed, &got.rows, "GetRange as views of {:?}", op);
                    prop_assert_eq!(visit.returned, got.rows.len());
                    prop_assert_eq!(&visit.next_start, &got.next_start);
                    prop_assert_eq!(visit.rows_scanned, got.rows_scanned);
                    prop_assert_eq!(visit.capacity, got.capacity);
                    // The model's page: stored rows in range, in scan order.
                    let mut stored: Vec<&Key> = self
                        .model
                        .rows
                        .keys()
                        .filter(|k| {
                            let s = cmp_bound(k, &request.start);
                            let e = cmp_bound(k, &end_bound);
                            if *backward {
                                s != Ordering::Greater && e == Ordering::Greater
                            } else {
                                s != Ordering::Less && e == Ordering::Less
                            }
                        })
                        .collect();
                    if *backward {
                        stored.reverse();
                    }
                    let page_limit = limit.unwrap_or(usize::MAX).min(PAGE_ROWS);
                    let mut rows = Vec::new();
                    let mut scanned = 0u64;
                    let mut next_start = None;
                    for (i, key) in stored.iter().enumerate() {
                        scanned += 1;
                        if let Some(row) = self.model.read(key, now, read) {
                            rows.push(row);
                        }
                        if rows.len() >= page_limit {
                            next_start = stored.get(i + 1).map(|k| pk_of(k));
                            break;
                        }
                    }
                    prop_assert_eq!(&got.rows, &rows, "GetRange page {} of {:?}", pages, op);
                    prop_assert_eq!(&got.next_start, &next_start, "next_start of {:?}", op);
                    prop_assert_eq!(got.rows_scanned, scanned);
                    match got.next_start {
                        Some(next) => {
                            request.start = next.into_iter().map(PkBound::Value).collect();
                        }
                        None => break,
                    }
                    if limit.is_some() {
                        // A caller with a limit may still page on; do it for the next page.
                        request.limit = *limit;
                    }
                }
            }
            Op::Alter { ttl, max_versions } => {
                let mut changes = Vec::new();
                if let Some(ttl) = ttl {
                    changes.push(("ttl".to_string(), OptionValue::Integer(*ttl)));
                    self.model.ttl = *ttl;
                }
                if let Some(mv) = max_versions {
                    changes.push(("max_versions".to_string(), OptionValue::Integer(*mv)));
                    self.model.max_versions = *mv;
                }
                let meta = self
                    .engine
                    .alter_table_options(DEFAULT_INSTANCE, "t", &changes)
                    .await
                    .unwrap();
                prop_assert_eq!(meta.options.ttl, self.model.ttl);
                prop_assert_eq!(meta.options.max_versions, self.model.max_versions);
            }
            Op::Advance(ms) => self.clock.advance(*ms),
            Op::Gc => {
                let got = self.engine.gc_table(&table).await.unwrap();
                let want = self.model.gc(now);
                prop_assert_eq!(got, want, "GC report");
            }
            Op::GcAll => {
                let got = self.engine.gc_all().await.unwrap();
                let want = self.model.gc(now);
                prop_assert_eq!(
                    (got.versions_removed, got.rows_removed),
                    (want.versions_removed, want.rows_removed),
                    "gc_all removes what a whole pass would"
                );
            }
        }
        Ok(())
    }
}

async fn full_scan_matches(h: &Harness) -> Result<(), TestCaseError> {
    // After the sequence, the whole table read in one unpaged pass equals the model.
    let now = h.clock.now_ms();
    let table = h.table();
    let read = ReadSpec {
        columns: None,
        max_versions: Some(10),
        version_range: None,
        filter: None,
    };
    let mut request = RangeRequest {
        start: vec![PkBound::InfMin, PkBound::InfMin],
        end: vec![PkBound::InfMax, PkBound::InfMax],
        direction: Direction::Forward,
        limit: None,
        read: to_read(&read, now),
    };
    let mut got = Vec::new();
    loop {
        let page = h.engine.get_range(&table, &request).await.unwrap();
        got.extend(page.rows);
        match page.next_start {
            Some(next) => request.start = next.into_iter().map(PkBound::Value).collect(),
            None => break,
        }
    }
    let want: Vec<Row> = h
        .model
        .rows
        .keys()
        .filter_map(|k| h.model.read(k, now, &read))
        .collect();
    prop_assert_eq!(got, want, "final full scan");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1024,
        max_shrink_iters: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn engine_matches_model(ops in proptest::collection::vec(op(), 1..100)) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let mut h = Harness::new().await;
            for op in &ops {
                h.run(op).await?;
            }
            full_scan_matches(&h).await
        })?;
    }
}
