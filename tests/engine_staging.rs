//! Model-based test of a transaction's staged writes (`StagedWrites`): random statements
//! (batches of PutRow, UpdateRow and DeleteRow with row conditions, atomic or
//! independent, some of them failing half way on an increment that overflows),
//! savepoints, ROLLBACK TO and RELEASE. The model is what the staged writes mean: the
//! writes kept so far, committed in one batch over the same stored rows. After every
//! step, what the transaction sees of each row (`preview_rows`) and each statement's
//! outcomes must match the model's, and COMMIT at the end must store exactly that.

use pgwide::engine::{
    BatchMode, ColumnOp, Condition, Engine, Limits, ManualClock, PkColumn, PkType, PkValue,
    ReadOptions, Row, RowChange, RowExistence, RowWrite, StagedMark, StagedWrites, TableMeta,
    TableSpec, Value, WriteOutcome, DEFAULT_INSTANCE,
};
use pgwide::storage::MemoryBackend;
use proptest::prelude::*;
use std::sync::Arc;

const T0: i64 = 1_700_000_000_000;
const KEYS: i64 = 4;
const COLS: [&str; 2] = ["c0", "c1"];

#[derive(Debug, Clone)]
enum Change {
    Put(i64),
    Update(usize, i64),
    Increment(i64),
    DeleteColumn(usize),
    Delete,
}

#[derive(Debug, Clone)]
struct WriteSpec {
    key: i64,
    change: Change,
    existence: RowExistence,
}

#[derive(Debug, Clone)]
enum Step {
    Statement(Vec<WriteSpec>, bool),
    Savepoint,
    /// Rolls back to the open savepoint at this index (modulo the number open).
    RollbackTo(usize),
    /// Releases the open savepoint at this index and every later one.
    Release(usize),
}

fn value() -> impl Strategy<Value = i64> {
    // i64::MAX makes a later increment overflow: an error half way through a statement.
    prop_oneof![4 => -3i64..4, 1 => Just(i64::MAX)]
}

fn write_spec() -> impl Strategy<Value = WriteSpec> {
    let change = prop_oneof![
        value().prop_map(Change::Put),
        (0..COLS.len(), value()).prop_map(|(c, v)| Change::Update(c, v)),
        (1i64..3).prop_map(Change::Increment),
        (0..COLS.len()).prop_map(Change::DeleteColumn),
        Just(Change::Delete),
    ];
    let existence = prop_oneof![
        Just(RowExistence::Ignore),
        Just(RowExistence::ExpectExist),
        Just(RowExistence::ExpectNotExist),
    ];
    (0..KEYS, change, existence).prop_map(|(key, change, existence)| WriteSpec {
        key,
        change,
        existence,
    })
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (prop::collection::vec(write_spec(), 1..4), any::<bool>())
            .prop_map(|(writes, atomic)| Step::Statement(writes, atomic)),
        2 => Just(Step::Savepoint),
        1 => (0usize..4).prop_map(Step::RollbackTo),
        1 => (0usize..4).prop_map(Step::Release),
    ]
}

fn row_write(spec: &WriteSpec) -> RowWrite {
    let put = |column: usize, value: i64| ColumnOp::Put {
        column: COLS[column].into(),
        value: Value::Integer(value),
        version: None,
    };
    let change = match spec.change {
        Change::Put(v) => RowChange::Put(vec![put(0, v)]),
        Change::Update(c, v) => RowChange::Update(vec![put(c, v)]),
        Change::Increment(by) => RowChange::Update(vec![ColumnOp::Increment {
            column: COLS[0].into(),
            by,
        }]),
        Change::DeleteColumn(c) => RowChange::Update(vec![ColumnOp::DeleteAll {
            column: COLS[c].into(),
        }]),
        Change::Delete => RowChange::Delete,
    };
    // A PutRow or UpdateRow that expects no row is what INSERT sends; UpdateRow with it
    // is refused by Table Store, so it expects nothing instead.
    let existence = match (&change, spec.existence) {
        (RowChange::Update(_), RowExistence::ExpectNotExist) => RowExistence::Ignore,
        (_, existence) => existence,
    };
    RowWrite {
        pk: vec![PkValue::Integer(spec.key)],
        change,
        condition: Condition::row(existence),
        return_row: false,
    }
}

/// An engine over fresh memory with table `t` holding rows 0 and 1.
async fn engine_with_rows() -> (Engine, Arc<TableMeta>) {
    let engine = Engine::open(
        Arc::new(MemoryBackend::new()),
        Arc::new(ManualClock::new(T0)),
        Limits::default(),
    )
    .await
    .unwrap();
    engine
        .create_table(
            DEFAULT_INSTANCE,
            TableSpec {
                name: "t".into(),
                pk: vec![PkColumn {
                    name: "id".into(),
                    ty: PkType::Integer,
                }],
                ..TableSpec::default()
            },
        )
        .await
        .unwrap();
    let table = engine.table(DEFAULT_INSTANCE, "t").unwrap();
    let base = (0..2)
        .map(|key| {
            let spec = WriteSpec {
                key,
                change: Change::Put(10 + key),
                existence: RowExistence::Ignore,
            };
            (Arc::clone(&table), row_write(&spec))
        })
        .collect();
    engine.write_rows(base, BatchMode::Atomic).await.unwrap();
    (engine, table)
}

fn every_key() -> Vec<Vec<PkValue>> {
    (0..KEYS).map(|k| vec![PkValue::Integer(k)]).collect()
}

fn all_versions() -> ReadOptions {
    ReadOptions {
        max_versions: Some(100),
        ..ReadOptions::default()
    }
}

/// The model: the writes kept, each with the table, as COMMIT will apply them.
type Kept = Vec<(Arc<TableMeta>, RowWrite)>;

/// What committing `kept` over the stored rows gives, and then `writes` over that: the
/// rows after `kept` and the outcomes of `writes` (`None` for an error).
async fn model(
    kept: &Kept,
    writes: &Kept,
    mode: BatchMode,
) -> (Vec<Option<Row>>, Option<Vec<WriteOutcome>>) {
    let (engine, table) = engine_with_rows().await;
    if !kept.is_empty() {
        let result = engine.write_rows(kept.clone(), BatchMode::Atomic).await;
        assert!(
            result.unwrap().first_failure().is_none(),
            "kept writes apply again"
        );
    }
    let rows = engine
        .batch_get_row(&table, &every_key(), &all_versions())
        .await
        .unwrap()
        .rows;
    let outcomes = if writes.is_empty() {
        Some(Vec::new())
    } else {
        engine
            .write_rows(writes.clone(), mode)
            .await
            .ok()
            .map(|r| r.outcomes)
    };
    (rows, outcomes)
}

async fn run(steps: Vec<Step>) {
    let (engine, table) = engine_with_rows().await;
    let mut staged = StagedWrites::default();
    let mut kept: Kept = Vec::new();
    let mut marks: Vec<(StagedMark, usize)> = Vec::new();
    for step in steps {
        match step {
            Step::Statement(specs, atomic) => {
                let mode = if atomic {
                    BatchMode::Atomic
                } else {
                    BatchMode::Independent
                };
                let writes: Kept = specs
                    .iter()
                    .map(|s| (Arc::clone(&table), row_write(s)))
                    .collect();
                let (_, expected) = model(&kept, &writes, mode).await;
                let got = engine
                    .stage_writes(&mut staged, writes.clone(), mode)
                    .await
                    .ok()
                    .map(|r| r.outcomes);
                assert_eq!(got, expected, "outcomes of {specs:?}");
                if let Some(outcomes) = got {
                    let failed = mode == BatchMode::Atomic
                        && outcomes
                            .iter()
                            .any(|o| matches!(o, WriteOutcome::ConditionFailed(_)));
                    if !failed {
                        kept.extend(
                            writes
                                .into_iter()
                                .zip(&outcomes)
                                .filter(|(_, o)| matches!(o, WriteOutcome::Applied(_)))
                                .map(|(w, _)| w),
                        );
                    }
                }
            }
            Step::Savepoint => marks.push((staged.mark(), kept.len())),
            Step::RollbackTo(i) if !marks.is_empty() => {
                let at = i % marks.len();
                let (mark, len) = marks[at];
                staged.rollback_to(mark);
                kept.truncate(len);
                staged.release(marks.len() - (at + 1));
                marks.truncate(at + 1);
            }
            Step::Release(i) if !marks.is_empty() => {
                let at = i % marks.len();
                staged.release(marks.len() - at);
                marks.truncate(at);
            }
            Step::RollbackTo(_) | Step::Release(_) => {}
        }
        let (expected, _) = model(&kept, &Vec::new(), BatchMode::Atomic).await;
        let seen = engine
            .preview_rows(&staged.view(), &table, &every_key(), &all_versions())
            .await
            .unwrap();
        assert_eq!(seen, expected, "rows the transaction sees");
    }
    let (expected, _) = model(&kept, &Vec::new(), BatchMode::Atomic).await;
    engine.commit_staged(staged).await.unwrap();
    let stored = engine
        .batch_get_row(&table, &every_key(), &all_versions())
        .await
        .unwrap()
        .rows;
    assert_eq!(stored, expected, "rows after COMMIT");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn staged_writes_match_committing_the_kept_writes(steps in prop::collection::vec(step(), 1..16)) {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(run(steps));
    }
}
