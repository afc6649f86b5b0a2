//! Every validation rule and limit of the engine, each checked for the exact error (with
//! the offending value) and for leaving stored data untouched; then the behaviours a user
//! sees: conditions, atomic versus independent batches, rows without attributes, lazy
//! TTL / Max Versions with GC, GetRange paging, capacity units, server-assigned versions,
//! DROP TABLE, and the catalog surviving a reopen.

use pgwide::engine::{
    AttrColumn, BatchMode, Capacity, ColumnCondition, ColumnOp, CompareOp, Condition,
    ConditionFailure, Direction, Engine, EngineError, EngineResult, GcReport, Limits, ManualClock,
    OptionValue, PkBound, PkColumn, PkType, PkValue, RangeRequest, ReadOptions, Row, RowChange,
    RowExistence, RowWrite, TableMeta, TableSpec, Value, ValueType, WriteOutcome, DEFAULT_INSTANCE,
};
use pgwide::storage::{
    Backend, CacheOptions, Cached, Check, Direction as ScanDirection, DurabilityTickets, Entry,
    KeyRange, MemoryBackend, OrderedKv, PartitionReads, ReadAround, SledBackend, SledOptions,
    StorageResult, SyncTicket, WriteBatch,
};
use std::future::Future;
use std::ops::Bound;
use std::sync::Arc;

/// 2023-11-14 22:13:20.500 UTC: half a second past a whole second, so flooring to
/// seconds matters.
const NOW: i64 = 1_700_000_000_500;
const NOW_S: i64 = 1_700_000_000;
const DB: &str = DEFAULT_INSTANCE;

struct Env {
    engine: Engine,
    clock: ManualClock,
}

async fn env_with(limits: Limits) -> Env {
    let clock = ManualClock::new(NOW);
    let engine = Engine::open(
        Arc::new(MemoryBackend::new()),
        Arc::new(clock.clone()),
        limits,
    )
    .await
    .unwrap();
    Env { engine, clock }
}

async fn env() -> Env {
    env_with(Limits::default()).await
}

/// An engine over the durable sled backend in `dir`, for tests that reopen it.
async fn durable_engine(dir: &std::path::Path, clock: ManualClock) -> Engine {
    let sled = SledBackend::open(
        dir,
        SledOptions {
            durable: true,
            cache_capacity: 16 * 1024 * 1024,
            ..SledOptions::default()
        },
    )
    .unwrap();
    let backend = Cached::new(sled, CacheOptions::default());
    Engine::open(Arc::new(backend), Arc::new(clock), Limits::default())
        .await
        .unwrap()
}

fn pk_col(name: &str, ty: PkType) -> PkColumn {
    PkColumn {
        name: name.into(),
        ty,
    }
}

fn spec(name: &str, pk: Vec<PkColumn>, options: &[(&str, i64)]) -> TableSpec {
    TableSpec {
        name: name.into(),
        pk,
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), OptionValue::Integer(*v)))
            .collect(),
        ..TableSpec::default()
    }
}

/// A table `name` with one String PK column `id`.
async fn table(env: &Env, name: &str, options: &[(&str, i64)]) -> Arc<TableMeta> {
    env.engine
        .create_table(DB, spec(name, vec![pk_col("id", PkType::String)], options))
        .await
        .unwrap()
}

fn s(v: &str) -> PkValue {
    PkValue::String(v.into())
}

fn put(column: &str, value: Value) -> ColumnOp {
    ColumnOp::Put {
        column: column.into(),
        value,
        version: None,
    }
}

fn put_at(column: &str, value: Value, version: i64) -> ColumnOp {
    ColumnOp::Put {
        column: column.into(),
        value,
        version: Some(version),
    }
}

fn int(i: i64) -> Value {
    Value::Integer(i)
}

fn text(t: &str) -> Value {
    Value::String(t.into())
}

fn write(pk: &[PkValue], change: RowChange) -> RowWrite {
    RowWrite {
        pk: pk.to_vec(),
        change,
        condition: Condition::IGNORE,
        return_row: false,
    }
}

fn conditional(pk: &[PkValue], change: RowChange, condition: Condition) -> RowWrite {
    RowWrite {
        condition,
        ..write(pk, change)
    }
}

async fn put_row(env: &Env, t: &Arc<TableMeta>, pk: &[PkValue], ops: Vec<ColumnOp>) {
    let result = env
        .engine
        .put_row(t, write(pk, RowChange::Put(ops)))
        .await
        .unwrap();
    assert_eq!(result.applied(), 1);
}

async fn update(env: &Env, t: &Arc<TableMeta>, pk: &[PkValue], ops: Vec<ColumnOp>) {
    let result = env
        .engine
        .put_row(t, write(pk, RowChange::Update(ops)))
        .await
        .unwrap();
    assert_eq!(result.applied(), 1);
}

async fn delete_row(env: &Env, t: &Arc<TableMeta>, pk: &[PkValue]) {
    let result = env
        .engine
        .put_row(t, write(pk, RowChange::Delete))
        .await
        .unwrap();
    assert_eq!(result.applied(), 1);
}

/// ALTER TABLE t SET (`option` = `value`); the table as it is after.
async fn set_option(env: &Env, option: &str, value: i64) -> Arc<TableMeta> {
    let change = [(option.to_string(), OptionValue::Integer(value))];
    env.engine
        .alter_table_options(DB, "t", &change)
        .await
        .unwrap()
}

/// Writes three versions of column `a` of row `key`, one and two and three seconds old.
async fn three_versions(env: &Env, t: &Arc<TableMeta>, key: &str) {
    for (i, v) in [NOW - 3000, NOW - 2000, NOW - 1000].iter().enumerate() {
        update(env, t, &[s(key)], vec![put_at("a", int(i as i64), *v)]).await;
    }
}

fn all_versions() -> ReadOptions {
    ReadOptions {
        max_versions: Some(i64::from(i32::MAX)),
        ..ReadOptions::default()
    }
}

async fn get(env: &Env, t: &TableMeta, pk: &[PkValue], read: &ReadOptions) -> Option<Row> {
    env.engine.get_row(t, pk, read).await.unwrap().row
}

/// Every key and value in the backend: catalog and data.
async fn snapshot(engine: &Engine) -> Vec<Entry> {
    let everything = KeyRange {
        start: Bound::Unbounded,
        end: Bound::Unbounded,
    };
    engine
        .backend()
        .scan(&everything, ScanDirection::Forward, usize::MAX)
        .await
        .unwrap()
}

/// Runs `op`, expects exactly `expected`, and checks that nothing stored changed.
async fn refused<T: std::fmt::Debug>(
    env: &Env,
    expected: EngineError,
    op: impl Future<Output = EngineResult<T>>,
) {
    let before = snapshot(&env.engine).await;
    let catalog_before = env.engine.tables(DB).unwrap();
    let got = op.await;
    match got {
        Err(e) => assert_eq!(e, expected),
        Ok(v) => panic!("expected {expected:?}, got Ok({v:?})"),
    }
    assert!(
        snapshot(&env.engine).await == before,
        "stored data changed after refused operation ({expected:?})"
    );
    assert_eq!(env.engine.tables(DB).unwrap(), catalog_before);
}

fn bad_name(name: &str) -> EngineError {
    EngineError::InvalidName { name: name.into() }
}

// ---------------------------------------------------------------- names

#[tokio::test]
async fn table_and_column_names() {
    let env = env().await;
    let t = table(&env, "seed", &[]).await;
    put_row(&env, &t, &[s("k")], vec![put("a", int(1))]).await;
    let long = "x".repeat(256);
    for name in ["", "1abc", "9", "a-b", "a b", "naïve", "a.b", long.as_str()] {
        refused(
            &env,
            bad_name(name),
            env.engine
                .create_table(DB, spec(name, vec![pk_col("id", PkType::String)], &[])),
        )
        .await;
        // The same rules for PK columns, declared attribute columns and written columns.
        refused(
            &env,
            bad_name(name),
            env.engine
                .create_table(DB, spec("ok", vec![pk_col(name, PkType::String)], &[])),
        )
        .await;
        let mut with_column = spec("ok", vec![pk_col("id", PkType::String)], &[]);
        with_column.columns.push(AttrColumn {
            name: name.into(),
            ty: ValueType::Integer,
        });
        refused(
            &env,
            bad_name(name),
            env.engine.create_table(DB, with_column),
        )
        .await;
        refused(
            &env,
            bad_name(name),
            env.engine.put_row(
                &t,
                write(&[s("k")], RowChange::Put(vec![put(name, int(2))])),
            ),
        )
        .await;
        refused(
            &env,
            bad_name(name),
            env.engine.put_row(
                &t,
                write(
                    &[s("k")],
                    RowChange::Update(vec![put("a", int(3)), put(name, int(2))]),
                ),
            ),
        )
        .await;
    }
    // 255 bytes, a leading underscore, digits after the first byte, and case all work.
    let longest = "y".repeat(255);
    for name in [longest.as_str(), "_", "_9", "Book", "book", "A1_b2"] {
        let t = table(&env, name, &[]).await;
        put_row(&env, &t, &[s("k")], vec![put(name, int(1))]).await;
        let row = get(&env, &t, &[s("k")], &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(row.cells[0].column, name);
    }
    // Names are case-sensitive: "Book" and "book" are two tables.
    assert_ne!(
        env.engine.table(DB, "Book").unwrap().id,
        env.engine.table(DB, "book").unwrap().id
    );
    refused(
        &env,
        EngineError::TableExists {
            name: "Book".into(),
        },
        env.engine
            .create_table(DB, spec("Book", vec![pk_col("id", PkType::String)], &[])),
    )
    .await;
    refused(
        &env,
        EngineError::ColumnExists { name: "id".into() },
        env.engine.create_table(
            DB,
            spec(
                "dup",
                vec![pk_col("id", PkType::String), pk_col("id", PkType::Integer)],
                &[],
            ),
        ),
    )
    .await;
}

#[tokio::test]
async fn instance_names() {
    let env = env().await;
    let longest = "abcdefghijklmnop"; // 16 bytes
    for ok in ["abc", "my-db", "a1-2", "ABC", longest] {
        env.engine.create_instance(ok).await.unwrap();
        assert_eq!(env.engine.instance(ok).unwrap().name, ok);
    }
    for bad in [
        "ab",
        "abcdefghijklmnopq",
        "1abc",
        "-abc",
        "abc-",
        "a_bc",
        "a bc",
        "ab.c",
        "",
    ] {
        refused(
            &env,
            EngineError::InvalidInstanceName { name: bad.into() },
            env.engine.create_instance(bad),
        )
        .await;
    }
    refused(
        &env,
        EngineError::InstanceExists {
            name: "my-db".into(),
        },
        env.engine.create_instance("my-db"),
    )
    .await;
    // A table in another instance is a different table.
    env.engine
        .create_table("my-db", spec("t", vec![pk_col("id", PkType::Integer)], &[]))
        .await
        .unwrap();
    assert!(matches!(
        env.engine.table(DB, "t"),
        Err(EngineError::TableNotFound { .. })
    ));
    refused(
        &env,
        EngineError::InstanceNotFound {
            name: "nope".into(),
        },
        env.engine
            .create_table("nope", spec("t", vec![pk_col("id", PkType::Integer)], &[])),
    )
    .await;
}

// ---------------------------------------------------------------- primary keys

#[tokio::test]
async fn primary_key_column_count() {
    let env = env().await;
    refused(
        &env,
        EngineError::PkColumnCount { count: 0 },
        env.engine.create_table(DB, spec("t", vec![], &[])),
    )
    .await;
    let five: Vec<PkColumn> = (0..5)
        .map(|i| pk_col(&format!("k{i}"), PkType::Integer))
        .collect();
    refused(
        &env,
        EngineError::PkColumnCount { count: 5 },
        env.engine.create_table(DB, spec("t", five.clone(), &[])),
    )
    .await;
    let four = env
        .engine
        .create_table(DB, spec("t", five[..4].to_vec(), &[]))
        .await
        .unwrap();
    assert_eq!(four.pk.len(), 4);
}

#[tokio::test]
async fn primary_key_type_and_arity() {
    let env = env().await;
    let t = env
        .engine
        .create_table(
            DB,
            spec(
                "t",
                vec![
                    pk_col("region", PkType::String),
                    pk_col("n", PkType::Integer),
                ],
                &[],
            ),
        )
        .await
        .unwrap();
    let good = [s("eu"), PkValue::Integer(1)];
    put_row(&env, &t, &good, vec![put("a", int(1))]).await;
    let mismatch = EngineError::PkTypeMismatch {
        column: "n".into(),
        expected: PkType::Integer,
        given: PkType::String,
        value: "'1'".into(),
    };
    let wrong_type = [s("eu"), s("1")];
    refused(
        &env,
        mismatch.clone(),
        env.engine.put_row(
            &t,
            write(&wrong_type, RowChange::Put(vec![put("a", int(2))])),
        ),
    )
    .await;
    refused(
        &env,
        mismatch.clone(),
        env.engine.get_row(&t, &wrong_type, &ReadOptions::default()),
    )
    .await;
    refused(
        &env,
        EngineError::PkTypeMismatch {
            column: "region".into(),
            expected: PkType::String,
            given: PkType::Binary,
            value: "0x6575".into(),
        },
        env.engine.put_row(
            &t,
            write(
                &[PkValue::Binary(b"eu".to_vec()), PkValue::Integer(1)],
                RowChange::Delete,
            ),
        ),
    )
    .await;
    for given in [1usize, 3] {
        let pk: Vec<PkValue> =
            [s("eu"), PkValue::Integer(1), PkValue::Integer(2)][..given].to_vec();
        let arity = EngineError::PkArity { expected: 2, given };
        refused(
            &env,
            arity.clone(),
            env.engine
                .put_row(&t, write(&pk, RowChange::Put(vec![put("a", int(2))]))),
        )
        .await;
        refused(
            &env,
            arity.clone(),
            env.engine.get_row(&t, &pk, &ReadOptions::default()),
        )
        .await;
        refused(
            &env,
            arity.clone(),
            env.engine
                .batch_get_row(&t, &[good.to_vec(), pk.clone()], &ReadOptions::default()),
        )
        .await;
        let bound: Vec<PkBound> = pk.iter().cloned().map(PkBound::Value).collect();
        refused(
            &env,
            arity,
            env.engine.get_range(
                &t,
                &RangeRequest {
                    start: bound,
                    end: vec![PkBound::InfMax, PkBound::InfMax],
                    direction: Direction::Forward,
                    limit: None,
                    read: ReadOptions::default(),
                },
            ),
        )
        .await;
    }
    refused(
        &env,
        mismatch,
        env.engine.get_range(
            &t,
            &RangeRequest {
                start: vec![PkBound::Value(s("eu")), PkBound::Value(s("1"))],
                end: vec![PkBound::InfMax, PkBound::InfMax],
                direction: Direction::Forward,
                limit: None,
                read: ReadOptions::default(),
            },
        ),
    )
    .await;
    // The row written first is untouched by all of that.
    let row = get(&env, &t, &good, &ReadOptions::default()).await.unwrap();
    assert_eq!(row.cells[0].value, int(1));
}

#[tokio::test]
async fn primary_key_value_size() {
    let env = env().await;
    let t = env
        .engine
        .create_table(
            DB,
            spec(
                "t",
                vec![pk_col("s", PkType::String), pk_col("b", PkType::Binary)],
                &[],
            ),
        )
        .await
        .unwrap();
    let kb = "k".repeat(1024);
    let exactly = [s(&kb), PkValue::Binary(vec![7; 1024])];
    put_row(&env, &t, &exactly, vec![put("a", int(1))]).await;
    assert!(get(&env, &t, &exactly, &ReadOptions::default())
        .await
        .is_some());
    refused(
        &env,
        EngineError::PkValueTooLarge {
            column: "s".into(),
            size: 1025,
            limit: 1024,
        },
        env.engine.put_row(
            &t,
            write(
                &[s(&format!("{kb}k")), PkValue::Binary(vec![])],
                RowChange::Put(vec![]),
            ),
        ),
    )
    .await;
    refused(
        &env,
        EngineError::PkValueTooLarge {
            column: "b".into(),
            size: 1025,
            limit: 1024,
        },
        env.engine.put_row(
            &t,
            write(
                &[s("x"), PkValue::Binary(vec![0; 1025])],
                RowChange::Put(vec![]),
            ),
        ),
    )
    .await;
    // Configurable: a 16-byte PK limit.
    let small = env_with(Limits {
        max_pk_value_bytes: 16,
        ..Limits::default()
    })
    .await;
    let t = table(&small, "t", &[]).await;
    put_row(&small, &t, &[s(&"z".repeat(16))], vec![]).await;
    refused(
        &small,
        EngineError::PkValueTooLarge {
            column: "id".into(),
            size: 17,
            limit: 16,
        },
        small
            .engine
            .put_row(&t, write(&[s(&"z".repeat(17))], RowChange::Put(vec![]))),
    )
    .await;
}

#[tokio::test]
async fn attribute_value_size() {
    let env = env().await;
    let t = table(&env, "t", &[]).await;
    let two_mb = 2 * 1024 * 1024;
    let exactly = Value::Binary(vec![1; two_mb]);
    put_row(&env, &t, &[s("big")], vec![put("blob", exactly.clone())]).await;
    let row = get(&env, &t, &[s("big")], &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(row.cells[0].value, exactly);
    refused(
        &env,
        EngineError::ValueTooLarge {
            column: "blob".into(),
            size: two_mb + 1,
            limit: two_mb,
        },
        env.engine.put_row(
            &t,
            write(
                &[s("big")],
                RowChange::Update(vec![put("blob", Value::String("s".repeat(two_mb + 1)))]),
            ),
        ),
    )
    .await;
    let row = get(&env, &t, &[s("big")], &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(row.cells[0].value, exactly);
}

#[tokio::test]
async fn columns_per_write_and_columns_to_get() {
    let env = env().await;
    let t = table(&env, "t", &[]).await;
    let ops = |n: usize| -> Vec<ColumnOp> {
        (0..n)
            .map(|i| put(&format!("c{i}"), int(i as i64)))
            .collect()
    };
    put_row(&env, &t, &[s("wide")], ops(1024)).await;
    let row = get(&env, &t, &[s("wide")], &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(row.cells.len(), 1024);
    let too_many = EngineError::TooManyColumns {
        count: 1025,
        limit: 1024,
    };
    refused(
        &env,
        too_many.clone(),
        env.engine
            .put_row(&t, write(&[s("wide")], RowChange::Put(ops(1025)))),
    )
    .await;
    refused(
        &env,
        too_many.clone(),
        env.engine
            .put_row(&t, write(&[s("other")], RowChange::Update(ops(1025)))),
    )
    .await;
    refused(
        &env,
        too_many,
        env.engine.batch_write_row(vec![
            (Arc::clone(&t), write(&[s("x")], RowChange::Put(ops(1)))),
            (Arc::clone(&t), write(&[s("y")], RowChange::Put(ops(1025)))),
        ]),
    )
    .await;

    let names = |n: usize| ReadOptions {
        columns: Some((0..n).map(|i| format!("c{i}")).collect()),
        ..ReadOptions::default()
    };
    let row = get(&env, &t, &[s("wide")], &names(128)).await.unwrap();
    assert_eq!(row.cells.len(), 128);
    let too_many = EngineError::TooManyColumnsToGet {
        count: 129,
        limit: 128,
    };
    refused(
        &env,
        too_many.clone(),
        env.engine.get_row(&t, &[s("wide")], &names(129)),
    )
    .await;
    refused(
        &env,
        too_many.clone(),
        env.engine
            .batch_get_row(&t, &[vec![s("wide")]], &names(129)),
    )
    .await;
    refused(
        &env,
        too_many,
        env.engine.get_range(
            &t,
            &RangeRequest {
                start: vec![PkBound::InfMin],
                end: vec![PkBound::InfMax],
                direction: Direction::Forward,
                limit: None,
                read: names(129),
            },
        ),
    )
    .await;
}

#[tokio::test]
async fn batch_limits() {
    let env = env().await;
    let t = table(&env, "t", &[]).await;
    let pks =
        |n: usize| -> Vec<Vec<PkValue>> { (0..n).map(|i| vec![s(&format!("r{i:03}"))]).collect() };
    let result = env
        .engine
        .batch_get_row(&t, &pks(100), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(result.rows.len(), 100);
    assert_eq!(result.capacity.read, 100, "a missing row costs 1 read CU");
    refused(
        &env,
        EngineError::BatchTooLarge {
            what: "BatchGetRow",
            count: 101,
            limit: 100,
        },
        env.engine
            .batch_get_row(&t, &pks(101), &ReadOptions::default()),
    )
    .await;

    let writes = |n: usize| -> Vec<(Arc<TableMeta>, RowWrite)> {
        pks(n)
            .into_iter()
            .map(|pk| {
                (
                    Arc::clone(&t),
                    write(&pk, RowChange::Put(vec![put("a", int(1))])),
                )
            })
            .collect()
    };
    refused(
        &env,
        EngineError::BatchTooLarge {
            what: "BatchWriteRow",
            count: 201,
            limit: 200,
        },
        env.engine.batch_write_row(writes(201)),
    )
    .await;
    assert_eq!(
        env.engine
            .batch_write_row(writes(200))
            .await
            .unwrap()
            .applied(),
        200
    );

    // Bytes: PK values + column names + values. Three rows of 1.5 MB are over 4 MB.
    let mb = 1024 * 1024 + 512 * 1024;
    let big: Vec<(Arc<TableMeta>, RowWrite)> = ["p", "q", "r"]
        .iter()
        .map(|k| {
            (
                Arc::clone(&t),
                write(
                    &[s(k)],
                    RowChange::Put(vec![put("v", Value::Binary(vec![0; mb]))]),
                ),
            )
        })
        .collect();
    refused(
        &env,
        EngineError::RequestTooLarge {
            bytes: 3 * (1 + 1 + mb),
            limit: 4 * 1024 * 1024,
        },
        env.engine.batch_write_row(big.clone()),
    )
    .await;
    assert_eq!(
        env.engine
            .batch_write_row(big[..2].to_vec())
            .await
            .unwrap()
            .applied(),
        2
    );

    // Configurable: 2 rows and 100 bytes per BatchWriteRow, 2 rows per BatchGetRow.
    let small = env_with(Limits {
        max_batch_write_rows: 2,
        max_batch_write_bytes: 100,
        max_batch_get_rows: 2,
        ..Limits::default()
    })
    .await;
    let t = table(&small, "t", &[]).await;
    let w = |k: &str, v: &str| {
        (
            Arc::clone(&t),
            write(&[s(k)], RowChange::Put(vec![put("v", text(v))])),
        )
    };
    refused(
        &small,
        EngineError::BatchTooLarge {
            what: "BatchWriteRow",
            count: 3,
            limit: 2,
        },
        small
            .engine
            .batch_write_row(vec![w("a", ""), w("b", ""), w("c", "")]),
    )
    .await;
    refused(
        &small,
        EngineError::RequestTooLarge {
            bytes: 1 + 1 + 99,
            limit: 100,
        },
        small.engine.batch_write_row(vec![w("a", &"x".repeat(99))]),
    )
    .await;
    small
        .engine
        .batch_write_row(vec![w("a", &"x".repeat(98))])
        .await
        .unwrap();
    refused(
        &small,
        EngineError::BatchTooLarge {
            what: "BatchGetRow",
            count: 3,
            limit: 2,
        },
        small.engine.batch_get_row(
            &t,
            &[vec![s("a")], vec![s("b")], vec![s("c")]],
            &ReadOptions::default(),
        ),
    )
    .await;
}

#[tokio::test]
async fn tables_and_instances_limits() {
    let env = env().await;
    for i in 0..64 {
        table(&env, &format!("t{i}"), &[]).await;
    }
    refused(
        &env,
        EngineError::TooManyTables {
            instance: DB.into(),
            count: 64,
            limit: 64,
        },
        env.engine
            .create_table(DB, spec("t64", vec![pk_col("id", PkType::String)], &[])),
    )
    .await;
    // Dropping one makes room again.
    env.engine.drop_table(DB, "t0").await.unwrap();
    table(&env, "t64", &[]).await;

    // Ten instances, counting the default one.
    for i in 1..10 {
        env.engine.create_instance(&format!("db{i}")).await.unwrap();
    }
    assert_eq!(env.engine.instances().len(), 10);
    refused(
        &env,
        EngineError::TooManyInstances {
            count: 10,
            limit: 10,
        },
        env.engine.create_instance("db10"),
    )
    .await;
    assert!(env.engine.instance("db10").is_err());

    // Configurable.
    let small = env_with(Limits {
        max_instances: 2,
        max_tables_per_instance: 1,
        ..Limits::default()
    })
    .await;
    small.engine.create_instance("second").await.unwrap();
    refused(
        &small,
        EngineError::TooManyInstances { count: 2, limit: 2 },
        small.engine.create_instance("third"),
    )
    .await;
    table(&small, "only", &[]).await;
    refused(
        &small,
        EngineError::TooManyTables {
            instance: DB.into(),
            count: 1,
            limit: 1,
        },
        small
            .engine
            .create_table(DB, spec("two", vec![pk_col("id", PkType::String)], &[])),
    )
    .await;
}

// ---------------------------------------------------------------- options

#[tokio::test]
async fn bad_option_values() {
    let env = env().await;
    let t = table(&env, "t", &[("ttl", 100), ("max_versions", 3)]).await;
    put_row(&env, &t, &[s("k")], vec![put("a", int(1))]).await;
    let cases: Vec<(&str, OptionValue)> = vec![
        ("ttl", OptionValue::Integer(0)),
        ("ttl", OptionValue::Integer(-2)),
        ("max_versions", OptionValue::Integer(0)),
        ("max_versions", OptionValue::Integer(-1)),
        ("max_version_offset", OptionValue::Integer(0)),
        ("reserved_read_cu", OptionValue::Integer(5001)),
        ("reserved_write_cu", OptionValue::Integer(5001)),
        ("reserved_read_cu", OptionValue::Integer(-1)),
        ("ttl", OptionValue::Text("forever".into())),
        ("stream_enabled", OptionValue::Text("maybe".into())),
        ("stream_expiration_hours", OptionValue::Integer(25)),
        ("colour", OptionValue::Integer(1)),
    ];
    for (option, value) in cases {
        let check = |e: EngineError| match e {
            EngineError::BadOption {
                option: o,
                value: v,
                reason,
            } => {
                assert_eq!(o, option);
                assert_eq!(v, value.to_string());
                assert!(!reason.is_empty());
                if option == "colour" {
                    assert!(
                        reason.contains("max_versions"),
                        "lists known options: {reason}"
                    );
                }
            }
            other => panic!("{option}={value}: {other:?}"),
        };
        let before = snapshot(&env.engine).await;
        let mut bad = spec("u", vec![pk_col("id", PkType::String)], &[]);
        bad.options.push((option.to_string(), value.clone()));
        check(env.engine.create_table(DB, bad).await.unwrap_err());
        check(
            env.engine
                .alter_table_options(
                    DB,
                    "t",
                    &[
                        ("max_versions".to_string(), OptionValue::Integer(1)),
                        (option.to_string(), value.clone()),
                    ],
                )
                .await
                .unwrap_err(),
        );
        assert!(
            snapshot(&env.engine).await == before,
            "{option}={value} changed data"
        );
        // The good change listed before the bad one was not applied either.
        let now = env.engine.table(DB, "t").unwrap();
        assert_eq!((now.options.ttl, now.options.max_versions), (100, 3));
        assert!(matches!(
            env.engine.table(DB, "u"),
            Err(EngineError::TableNotFound { .. })
        ));
    }
    // The edges that are allowed.
    let meta = env
        .engine
        .alter_table_options(
            DB,
            "t",
            &[
                ("ttl".into(), OptionValue::Integer(-1)),
                ("max_versions".into(), OptionValue::Integer(1)),
                ("max_version_offset".into(), OptionValue::Integer(1)),
                ("reserved_read_cu".into(), OptionValue::Integer(5000)),
                ("reserved_write_cu".into(), OptionValue::Integer(0)),
                ("stream_expiration_hours".into(), OptionValue::Integer(24)),
            ],
        )
        .await
        .unwrap();
    assert_eq!(meta.options.ttl, -1);
    assert_eq!(meta.options.reserved_read_cu, 5000);
    let reloaded = env.engine.table(DB, "t").unwrap();
    assert_eq!(reloaded.options, meta.options);
}

// ---------------------------------------------------------------- versions

#[tokio::test]
async fn explicit_version_window() {
    let env = env().await;
    let t = table(&env, "t", &[]).await; // max_version_offset 86400
    let min = (NOW_S - 86400) * 1000;
    let max = (NOW_S + 86400) * 1000;
    for ok in [min, min + 999, NOW, max - 1] {
        update(&env, &t, &[s("k")], vec![put_at("a", int(ok), ok)]).await;
    }
    let row = get(&env, &t, &[s("k")], &all_versions()).await.unwrap();
    let versions: Vec<i64> = row.cells.iter().map(|c| c.version).collect();
    assert_eq!(
        versions,
        vec![max - 1],
        "max_versions 1 hides the older ones"
    );
    for bad in [min - 1, min - 1000, max, max + 1, -5, 0] {
        let expected = EngineError::VersionOutOfRange {
            column: "b".into(),
            version: bad,
            min,
            max,
        };
        // The whole row is refused, including its valid columns.
        refused(
            &env,
            expected.clone(),
            env.engine.put_row(
                &t,
                write(
                    &[s("k")],
                    RowChange::Update(vec![put("c", int(1)), put_at("b", int(2), bad)]),
                ),
            ),
        )
        .await;
        refused(
            &env,
            expected,
            env.engine.put_row(
                &t,
                write(&[s("new")], RowChange::Put(vec![put_at("b", int(2), bad)])),
            ),
        )
        .await;
    }
    // A smaller offset narrows the window; the clock moving moves it.
    env.engine
        .alter_table_options(
            DB,
            "t",
            &[("max_version_offset".into(), OptionValue::Integer(10))],
        )
        .await
        .unwrap();
    let t = env.engine.table(DB, "t").unwrap();
    refused(
        &env,
        EngineError::VersionOutOfRange {
            column: "a".into(),
            version: NOW - 11_000,
            min: (NOW_S - 10) * 1000,
            max: (NOW_S + 10) * 1000,
        },
        env.engine.put_row(
            &t,
            write(
                &[s("k")],
                RowChange::Update(vec![put_at("a", int(0), NOW - 11_000)]),
            ),
        ),
    )
    .await;
    env.clock.advance(-5_000);
    update(&env, &t, &[s("k")], vec![put_at("a", int(0), NOW - 11_000)]).await;
}

#[tokio::test]
async fn expired_writes_are_refused() {
    let env = env().await;
    let t = table(&env, "t", &[("ttl", 3600)]).await;
    let edge = (NOW_S - 3600) * 1000;
    for bad in [edge, edge + 999, edge - 1000] {
        refused(
            &env,
            EngineError::ExpiredWrite {
                column: "a".into(),
                version: bad,
                ttl: 3600,
            },
            env.engine.put_row(
                &t,
                write(&[s("k")], RowChange::Put(vec![put_at("a", int(1), bad)])),
            ),
        )
        .await;
    }
    update(&env, &t, &[s("k")], vec![put_at("a", int(1), edge + 1000)]).await;
    let row = get(&env, &t, &[s("k")], &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(row.cells[0].version, edge + 1000);
    // It expires when its second is up.
    env.clock.set((NOW_S + 1) * 1000 - 1);
    assert!(get(&env, &t, &[s("k")], &ReadOptions::default())
        .await
        .is_some());
    env.clock.set((NOW_S + 1) * 1000);
    let row = get(&env, &t, &[s("k")], &ReadOptions::default()).await;
    assert!(
        row.is_none(),
        "its only cell expired, so the row is gone however recent its last write"
    );
    // A row that never had a cell lives as long as its last write.
    update(&env, &t, &[s("bare")], vec![]).await;
    assert!(get(&env, &t, &[s("bare")], &ReadOptions::default())
        .await
        .is_some());
}

#[tokio::test]
async fn increments() {
    let env = env().await;
    let t = table(&env, "t", &[]).await;
    put_row(
        &env,
        &t,
        &[s("k")],
        vec![put("n", int(5)), put("name", text("x"))],
    )
    .await;
    let incr = |column: &str, by: i64| ColumnOp::Increment {
        column: column.into(),
        by,
    };
    let result = env
        .engine
        .put_row(
            &t,
            RowWrite {
                return_row: true,
                ..write(
                    &[s("k")],
                    RowChange::Update(vec![incr("n", 3), incr("fresh", -2)]),
                )
            },
        )
        .await
        .unwrap();
    let WriteOutcome::Applied(Some(row)) = &result.outcomes[0] else {
        panic!("{result:?}")
    };
    assert_eq!(row.latest("n").unwrap().value, int(8));
    assert_eq!(
        row.latest("fresh").unwrap().value,
        int(-2),
        "missing counts as 0"
    );
    refused(
        &env,
        EngineError::IncrementType {
            column: "name".into(),
            found: ValueType::String,
        },
        env.engine.put_row(
            &t,
            write(
                &[s("k")],
                RowChange::Update(vec![incr("n", 1), incr("name", 1)]),
            ),
        ),
    )
    .await;
    update(&env, &t, &[s("k")], vec![put("n", int(i64::MAX))]).await;
    refused(
        &env,
        EngineError::IncrementOverflow { column: "n".into() },
        env.engine
            .put_row(&t, write(&[s("k")], RowChange::Update(vec![incr("n", 1)]))),
    )
    .await;
}

#[tokio::test]
async fn pk_column_as_attribute() {
    let env = env().await;
    let t = table(&env, "t", &[]).await;
    for op in [
        put("id", text("x")),
        ColumnOp::Increment {
            column: "id".into(),
            by: 1,
        },
        ColumnOp::DeleteAll {
            column: "id".into(),
        },
    ] {
        refused(
            &env,
            EngineError::PkColumnAsAttribute {
                column: "id".into(),
            },
            env.engine
                .put_row(&t, write(&[s("k")], RowChange::Update(vec![op]))),
        )
        .await;
    }
}

// ---------------------------------------------------------------- conditions and batches

fn cmp(column: &str, op: CompareOp, value: Value, pass_if_missing: bool) -> ColumnCondition {
    ColumnCondition::Compare {
        column: column.into(),
        op,
        value,
        pass_if_missing,
    }
}

#[tokio::test]
async fn row_conditions() {
    let env = env().await;
    let t = table(&env, "t", &[]).await;
    let before = snapshot(&env.engine).await;
    let result = env
        .engine
        .put_row(
            &t,
            conditional(
                &[s("k")],
                RowChange::Update(vec![put("a", int(1))]),
                Condition::row(RowExistence::ExpectExist),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        result.outcomes,
        vec![WriteOutcome::ConditionFailed(ConditionFailure::RowMissing)]
    );
    assert!(snapshot(&env.engine).await == before);
    let insert = |v: i64| {
        conditional(
            &[s("k")],
            RowChange::Put(vec![put("a", int(v))]),
            Condition::row(RowExistence::ExpectNotExist),
        )
    };
    assert_eq!(
        env.engine.put_row(&t, insert(1)).await.unwrap().applied(),
        1
    );
    let result = env.engine.put_row(&t, insert(2)).await.unwrap();
    assert_eq!(
        result.first_failure(),
        Some((0, ConditionFailure::RowExists))
    );
    let row = get(&env, &t, &[s("k")], &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(row.latest("a").unwrap().value, int(1));
    // EXPECT_EXIST now holds, for updates and deletes alike.
    let result = env
        .engine
        .put_row(
            &t,
            conditional(
                &[s("k")],
                RowChange::Delete,
                Condition::row(RowExistence::ExpectExist),
            ),
        )
        .await
        .unwrap();
    assert_eq!(result.applied(), 1);
    assert!(get(&env, &t, &[s("k")], &ReadOptions::default())
        .await
        .is_none());
}

#[tokio::test]
async fn column_conditions() {
    let env = env().await;
    let t = table(&env, "t", &[]).await;
    put_row(
        &env,
        &t,
        &[s("k")],
        vec![put("n", int(10)), put("s", text("abc"))],
    )
    .await;
    let attempt = |column: ColumnCondition| {
        conditional(
            &[s("k")],
            RowChange::Update(vec![ColumnOp::Increment {
                column: "hits".into(),
                by: 1,
            }]),
            Condition {
                row: RowExistence::Ignore,
                column: Some(column),
            },
        )
    };
    let cases = vec![
        (cmp("n", CompareOp::Eq, int(10), false), true),
        (cmp("n", CompareOp::Gt, int(10), false), false),
        (cmp("n", CompareOp::Ge, int(10), false), true),
        (cmp("n", CompareOp::Lt, Value::Double(10.5), false), true),
        (cmp("s", CompareOp::Ne, text("abc"), false), false),
        (cmp("s", CompareOp::Eq, int(10), true), false), // incomparable types never pass
        (cmp("missing", CompareOp::Eq, int(1), false), false),
        (cmp("missing", CompareOp::Eq, int(1), true), true), // pass_if_missing
        (
            ColumnCondition::And(vec![
                cmp("n", CompareOp::Ge, int(5), false),
                cmp("s", CompareOp::Eq, text("abc"), false),
            ]),
            true,
        ),
        (
            ColumnCondition::And(vec![
                cmp("n", CompareOp::Ge, int(5), false),
                cmp("s", CompareOp::Eq, text("zzz"), false),
            ]),
            false,
        ),
        (
            ColumnCondition::Or(vec![
                cmp("n", CompareOp::Lt, int(5), false),
                cmp("s", CompareOp::Eq, text("abc"), false),
            ]),
            true,
        ),
        (
            ColumnCondition::Or(vec![
                cmp("n", CompareOp::Lt, int(5), false),
                cmp("s", CompareOp::Eq, text("zzz"), false),
            ]),
            false,
        ),
        (
            ColumnCondition::Not(Box::new(cmp("n", CompareOp::Eq, int(10), false))),
            false,
        ),
        (
            ColumnCondition::Not(Box::new(cmp("n", CompareOp::Eq, int(11), false))),
            true,
        ),
    ];
    let mut hits = 0;
    for (condition, passes) in cases {
        let before = snapshot(&env.engine).await;
        let result = env
            .engine
            .put_row(&t, attempt(condition.clone()))
            .await
            .unwrap();
        if passes {
            hits += 1;
            assert_eq!(result.applied(), 1, "{condition:?} should pass");
        } else {
            assert_eq!(
                result.outcomes,
                vec![WriteOutcome::ConditionFailed(
                    ConditionFailure::ColumnConditionFailed
                )],
                "{condition:?} should fail"
            );
            assert!(snapshot(&env.engine).await == before);
        }
    }
    let row = get(&env, &t, &[s("k")], &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(row.latest("hits").unwrap().value, int(hits));
    // A column condition on a missing row sees no columns.
    let result = env
        .engine
        .put_row(
            &t,
            conditional(
                &[s("absent")],
                RowChange::Put(vec![put("a", int(1))]),
                Condition {
                    row: RowExistence::Ignore,
                    column: Some(cmp("a", CompareOp::Eq, int(1), false)),
                },
            ),
        )
        .await
        .unwrap();
    assert_eq!(result.applied(), 0);
    // Read filters use the same conditions.
    let read = ReadOptions {
        filter: Some(cmp("n", CompareOp::Gt, int(100), false)),
        ..ReadOptions::default()
    };
    assert!(get(&env, &t, &[s("k")], &read).await.is_none());
}

#[tokio::test]
async fn atomic_versus_independent_batches() {
    let env = env().await;
    let t = table(&env, "t", &[]).await;
    put_row(&env, &t, &[s("exists")], vec![put("a", int(0))]).await;
    let batch = || {
        vec![
            (
                Arc::clone(&t),
                write(&[s("one")], RowChange::Put(vec![put("a", int(1))])),
            ),
            (
                Arc::clone(&t),
                conditional(
                    &[s("exists")],
                    RowChange::Put(vec![put("a", int(2))]),
                    Condition::row(RowExistence::ExpectNotExist),
                ),
            ),
            (
                Arc::clone(&t),
                write(&[s("three")], RowChange::Put(vec![put("a", int(3))])),
            ),
        ]
    };
    let before = snapshot(&env.engine).await;
    let result = env
        .engine
        .write_rows(batch(), BatchMode::Atomic)
        .await
        .unwrap();
    assert_eq!(
        result.outcomes,
        vec![
            WriteOutcome::NotApplied,
            WriteOutcome::ConditionFailed(ConditionFailure::RowExists),
            WriteOutcome::NotApplied,
        ]
    );
    assert!(
        snapshot(&env.engine).await == before,
        "atomic: nothing written"
    );
    let result = env.engine.batch_write_row(batch()).await.unwrap();
    assert_eq!(result.applied(), 2);
    assert_eq!(
        result.first_failure(),
        Some((1, ConditionFailure::RowExists))
    );
    for (k, v) in [("one", 1), ("exists", 0), ("three", 3)] {
        let row = get(&env, &t, &[s(k)], &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(row.latest("a").unwrap().value, int(v), "{k}");
    }
    // A later write in a batch sees an earlier one on the same row.
    let result = env
        .engine
        .write_rows(
            vec![
                (
                    Arc::clone(&t),
                    write(&[s("seq")], RowChange::Put(vec![put("a", int(1))])),
                ),
                (
                    Arc::clone(&t),
                    conditional(
                        &[s("seq")],
                        RowChange::Update(vec![put("b", int(2))]),
                        Condition::row(RowExistence::ExpectExist),
                    ),
                ),
            ],
            BatchMode::Atomic,
        )
        .await
        .unwrap();
    assert_eq!(result.applied(), 2);
    let row = get(&env, &t, &[s("seq")], &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(row.cells.len(), 2);
}

// ---------------------------------------------------------------- rows and visibility

#[tokio::test]
async fn rows_without_attributes() {
    let env = env().await;
    let t = table(&env, "t", &[]).await;
    put_row(&env, &t, &[s("bare")], vec![]).await;
    let row = get(&env, &t, &[s("bare")], &ReadOptions::default())
        .await
        .unwrap();
    assert!(row.cells.is_empty(), "a row with no attributes exists");
    put_row(
        &env,
        &t,
        &[s("k")],
        vec![put("a", int(1)), put("b", int(2))],
    )
    .await;
    update(
        &env,
        &t,
        &[s("k")],
        vec![
            ColumnOp::DeleteAll { column: "a".into() },
            ColumnOp::DeleteAll { column: "b".into() },
        ],
    )
    .await;
    let row = get(&env, &t, &[s("k")], &ReadOptions::default())
        .await
        .unwrap();
    assert!(
        row.cells.is_empty(),
        "deleting every attribute keeps the row"
    );
    let page = env
        .engine
        .get_range(
            &t,
            &RangeRequest {
                start: vec![PkBound::InfMin],
                end: vec![PkBound::InfMax],
                direction: Direction::Forward,
                limit: None,
                read: ReadOptions::default(),
            },
        )
        .await
        .unwrap();
    assert_eq!(page.rows.len(), 2);
    delete_row(&env, &t, &[s("k")]).await;
    assert!(get(&env, &t, &[s("k")], &ReadOptions::default())
        .await
        .is_none());
    assert!(get(&env, &t, &[s("bare")], &ReadOptions::default())
        .await
        .is_some());
}

#[tokio::test]
async fn raising_options_reveals_uncollected_data_until_gc() {
    let env = env().await;
    let t = table(&env, "t", &[("max_versions", 3), ("ttl", 100)]).await;
    three_versions(&env, &t, "k").await;
    // Lowering hides the two older versions; no write has rewritten the row since.
    let t = set_option(&env, "max_versions", 1).await;
    let versions = |row: Option<Row>| -> Vec<i64> {
        row.map(|r| r.cells.iter().map(|c| c.version).collect())
            .unwrap_or_default()
    };
    let t_now = || env.engine.table(DB, "t").unwrap();
    assert_eq!(
        versions(get(&env, &t, &[s("k")], &all_versions()).await),
        vec![NOW - 1000]
    );
    let engine = &env.engine;
    let alter = |changes: Vec<(&str, i64)>| {
        let changes: Vec<(String, OptionValue)> = changes
            .into_iter()
            .map(|(k, v)| (k.to_string(), OptionValue::Integer(v)))
            .collect();
        async move { engine.alter_table_options(DB, "t", &changes).await.unwrap() }
    };
    alter(vec![("max_versions", 3)]).await;
    assert_eq!(
        versions(get(&env, &t_now(), &[s("k")], &all_versions()).await),
        vec![NOW - 1000, NOW - 2000, NOW - 3000],
        "raising max_versions shows the older versions again"
    );
    // Time passes: with ttl 100 all three expire, oldest first (versions are in seconds
    // NOW_S - 1, - 2, - 3; at NOW_S + 97 only those after NOW_S - 3 are alive).
    env.clock.set(NOW + 97_000);
    assert_eq!(
        versions(get(&env, &t_now(), &[s("k")], &all_versions()).await),
        vec![NOW - 1000, NOW - 2000]
    );
    env.clock.set(NOW + 100_000);
    assert!(
        get(&env, &t_now(), &[s("k")], &all_versions())
            .await
            .is_none(),
        "expired row"
    );
    alter(vec![("ttl", -1), ("max_versions", 2)]).await;
    assert_eq!(
        versions(get(&env, &t_now(), &[s("k")], &all_versions()).await),
        vec![NOW - 1000, NOW - 2000],
        "raising ttl shows expired data again"
    );
    // GC removes what the current options hide; raising them again shows nothing more.
    let report = env.engine.gc_table(&t_now()).await.unwrap();
    assert_eq!(report.versions_removed, 1);
    alter(vec![("max_versions", 5)]).await;
    assert_eq!(
        versions(get(&env, &t_now(), &[s("k")], &all_versions()).await),
        vec![NOW - 1000, NOW - 2000]
    );
    // GC of an expired row removes the row for good.
    alter(vec![("ttl", 50)]).await;
    assert!(get(&env, &t_now(), &[s("k")], &all_versions())
        .await
        .is_none());
    let report = env.engine.gc_all().await.unwrap();
    assert_eq!((report.rows_removed, report.versions_removed), (1, 2));
    alter(vec![("ttl", -1)]).await;
    assert!(get(&env, &t_now(), &[s("k")], &all_versions())
        .await
        .is_none());
    let data = snapshot(&env.engine).await;
    assert!(
        data.iter().all(|(k, _)| k[0] == 0),
        "only catalog keys are left"
    );
}

#[tokio::test]
async fn background_gc_passes_over_tables_with_nothing_new_to_collect() {
    let env = env().await;
    let t = table(&env, "t", &[("max_versions", 1)]).await;
    three_versions(&env, &t, "k").await;
    let first = env.engine.gc_all().await.unwrap();
    assert_eq!(
        (first.rows_examined, first.versions_removed),
        (1, 0),
        "the first pass reads the whole table; the writes stored no hidden version"
    );
    let idle = env.engine.gc_all().await.unwrap();
    assert_eq!(
        idle,
        GcReport::default(),
        "no writes, no TTL: the table is skipped"
    );

    // New rows, new columns and overwrites past Max Versions leave no hidden version
    // (a write stores only what reads can see): the table is not read again.
    put_row(&env, &t, &[s("new")], vec![put("a", int(1))]).await;
    update(&env, &t, &[s("k")], vec![put("b", int(1))]).await;
    three_versions(&env, &t, "l").await;
    update(&env, &t, &[s("new")], vec![put_at("a", int(2), NOW + 1000)]).await;
    assert_eq!(
        env.engine.gc_all().await.unwrap(),
        GcReport::default(),
        "only writes: the table is skipped"
    );

    // Raising and lowering Max Versions again is a change a pass must look at, and
    // a TTL means rows expire with time alone, so such a table is never skipped.
    let raised = set_option(&env, "max_versions", 3).await;
    update(
        &env,
        &raised,
        &[s("k")],
        vec![put_at("a", int(9), NOW - 500)],
    )
    .await;
    assert_eq!(env.engine.gc_all().await.unwrap().versions_removed, 0);
    set_option(&env, "max_versions", 1).await;
    let lowered = env.engine.gc_all().await.unwrap();
    assert_eq!((lowered.rows_examined, lowered.versions_removed), (3, 1));
    set_option(&env, "ttl", 86400).await;
    assert_eq!(env.engine.gc_all().await.unwrap().rows_examined, 3);
    assert_eq!(env.engine.gc_all().await.unwrap().rows_examined, 3);
    env.clock.set(NOW + 86_401_000);
    let expired = env.engine.gc_all().await.unwrap();
    assert_eq!((expired.rows_examined, expired.rows_removed), (3, 3));
}

/// Max Versions raised, written under and lowered back between two passes: the write
/// hid nothing when it was made, and the table's options end as the last pass saw them,
/// yet the next pass must collect the version the lowering hid.
#[tokio::test]
async fn a_pass_after_max_versions_went_up_and_back_down_collects_what_that_hid() {
    let env = env().await;
    let t = table(&env, "t", &[("max_versions", 2)]).await;
    for (i, v) in [NOW - 2000, NOW - 1000].iter().enumerate() {
        update(&env, &t, &[s("k")], vec![put_at("a", int(i as i64), *v)]).await;
    }
    assert_eq!(env.engine.gc_all().await.unwrap().versions_removed, 0);
    let raised = set_option(&env, "max_versions", 3).await;
    update(
        &env,
        &raised,
        &[s("k")],
        vec![put_at("a", int(9), NOW - 3000)],
    )
    .await;
    set_option(&env, "max_versions", 2).await;

    let report = env.engine.gc_all().await.unwrap();
    assert_eq!((report.rows_examined, report.versions_removed), (1, 1));
    let row = get(
        &env,
        &env.engine.table(DB, "t").unwrap(),
        &[s("k")],
        &all_versions(),
    )
    .await;
    let versions: Vec<i64> = row.unwrap().cells.iter().map(|c| c.version).collect();
    assert_eq!(versions, vec![NOW - 1000, NOW - 2000]);
}

/// A write stores only the versions reads can see: what it pushes past Max Versions,
/// and what lowered options hid in any column of the row it rewrites, is gone at once,
/// so GC finds nothing and raising Max Versions shows nothing older.
#[tokio::test]
async fn a_write_stores_only_the_versions_reads_can_see() {
    let env = env().await;
    let t = table(&env, "t", &[("max_versions", 2)]).await;
    three_versions(&env, &t, "k").await;
    let lowered = set_option(&env, "max_versions", 1).await;
    update(&env, &lowered, &[s("k")], vec![put("b", int(7))]).await;
    let whole = env.engine.gc_all().await.unwrap();
    assert_eq!((whole.rows_examined, whole.versions_removed), (1, 0));
    let raised = set_option(&env, "max_versions", 3).await;
    let row = get(&env, &raised, &[s("k")], &all_versions())
        .await
        .unwrap();
    let stored: Vec<(&str, i64)> = row
        .cells
        .iter()
        .map(|c| (c.column.as_str(), c.version))
        .collect();
    assert_eq!(stored, vec![("a", NOW - 1000), ("b", NOW)]);
}

/// A memory backend that refuses the next unsynced conditional write (GC's rewrite of a
/// row) when armed, as if another write had changed the row in between.
#[derive(Default)]
struct RefusesNextRewrite {
    inner: MemoryBackend,
    armed: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl OrderedKv for RefusesNextRewrite {
    async fn get(&self, key: &[u8]) -> StorageResult<Option<Vec<u8>>> {
        self.inner.get(key).await
    }

    async fn scan(
        &self,
        range: &KeyRange,
        direction: ScanDirection,
        limit: usize,
    ) -> StorageResult<Vec<Entry>> {
        self.inner.scan(range, direction, limit).await
    }

    async fn write_if(&self, checks: &[Check], batch: WriteBatch) -> StorageResult<bool> {
        self.inner.write_if(checks, batch).await
    }
}

#[async_trait::async_trait]
impl DurabilityTickets for RefusesNextRewrite {
    async fn write_if_unsynced(
        &self,
        checks: Vec<Check>,
        batch: WriteBatch,
    ) -> StorageResult<Option<SyncTicket>> {
        if self.armed.swap(false, std::sync::atomic::Ordering::SeqCst) {
            return Ok(None);
        }
        self.inner.write_if_unsynced(checks, batch).await
    }
}

impl PartitionReads for RefusesNextRewrite {}

impl ReadAround for RefusesNextRewrite {}

/// A row GC could not rewrite, because a write came in between, is looked at again by
/// the next pass: that pass neither skips the table nor leaves the row out of the rows
/// it examines.
#[tokio::test]
async fn a_row_gc_lost_to_a_write_in_between_is_collected_by_the_next_pass() {
    let backend = Arc::new(RefusesNextRewrite::default());
    let clock = ManualClock::new(NOW);
    let engine = Engine::open(
        Arc::clone(&backend) as Arc<dyn Backend>,
        Arc::new(clock.clone()),
        Limits::default(),
    )
    .await
    .unwrap();
    let env = Env { engine, clock };
    let t = table(&env, "t", &[("max_versions", 3)]).await;
    three_versions(&env, &t, "k").await;
    assert_eq!(env.engine.gc_all().await.unwrap().rows_examined, 1);
    set_option(&env, "max_versions", 1).await;
    backend
        .armed
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let lost = env.engine.gc_all().await.unwrap();
    assert_eq!((lost.rows_examined, lost.versions_removed), (1, 0));
    let next = env.engine.gc_all().await.unwrap();
    assert_eq!((next.rows_examined, next.versions_removed), (1, 2));
}

/// GC's rewrites on the durable sled backend do not wait for a sync of their own; the
/// next acknowledged write's sync covers them, so they survive a reopen.
#[tokio::test]
async fn gc_removals_on_sled_are_made_durable_by_later_writes() {
    let dir = tempfile::tempdir().unwrap();
    let open = || async {
        let clock = ManualClock::new(NOW);
        let engine = durable_engine(dir.path(), clock.clone()).await;
        Env { engine, clock }
    };
    {
        let env = open().await;
        let t = table(&env, "t", &[("max_versions", 3)]).await;
        three_versions(&env, &t, "k").await;
        let t = set_option(&env, "max_versions", 1).await;
        assert_eq!(env.engine.gc_all().await.unwrap().versions_removed, 2);
        put_row(&env, &t, &[s("later")], vec![put("a", int(9))]).await;
    }
    let env = open().await;
    let t = env.engine.table(DB, "t").unwrap();
    let row = get(&env, &t, &[s("k")], &all_versions()).await.unwrap();
    assert_eq!(
        row.cells.iter().map(|c| c.version).collect::<Vec<_>>(),
        vec![NOW - 1000]
    );
    let report = env.engine.gc_all().await.unwrap();
    assert_eq!((report.rows_examined, report.versions_removed), (2, 0));
}

#[tokio::test]
async fn get_range_pages() {
    let env = env_with(Limits {
        max_range_rows: 4,
        ..Limits::default()
    })
    .await;
    let t = env
        .engine
        .create_table(DB, spec("t", vec![pk_col("n", PkType::Integer)], &[]))
        .await
        .unwrap();
    let rows: Vec<(Arc<TableMeta>, RowWrite)> = (-5..10i64)
        .map(|n| {
            (
                Arc::clone(&t),
                write(
                    &[PkValue::Integer(n)],
                    RowChange::Put(vec![put("v", int(n * 10))]),
                ),
            )
        })
        .collect();
    env.engine.batch_write_row(rows).await.unwrap();
    let read_all = |start: Vec<PkBound>, end: Vec<PkBound>, direction, limit| {
        let mut request = RangeRequest {
            start,
            end,
            direction,
            limit,
            read: ReadOptions::default(),
        };
        let engine = &env.engine;
        let t = &t;
        async move {
            let mut pages = Vec::new();
            loop {
                let page = engine.get_range(t, &request).await.unwrap();
                let ns: Vec<i64> = page
                    .rows
                    .iter()
                    .map(|r| match r.pk[0] {
                        PkValue::Integer(n) => n,
                        _ => unreachable!(),
                    })
                    .collect();
                let next = page.next_start.clone();
                pages.push((ns, next.clone()));
                match next {
                    Some(next) => request.start = next.into_iter().map(PkBound::Value).collect(),
                    None => return pages,
                }
            }
        }
    };
    let i = |n: i64| PkBound::Value(PkValue::Integer(n));
    let ip = |n: i64| Some(vec![PkValue::Integer(n)]);
    // Forward over everything: pages of at most 4 (the configured limit), negatives first.
    let pages = read_all(
        vec![PkBound::InfMin],
        vec![PkBound::InfMax],
        Direction::Forward,
        None,
    )
    .await;
    assert_eq!(
        pages,
        vec![
            (vec![-5, -4, -3, -2], ip(-1)),
            (vec![-1, 0, 1, 2], ip(3)),
            (vec![3, 4, 5, 6], ip(7)),
            (vec![7, 8, 9], None),
        ]
    );
    // Inclusive start, exclusive end.
    let pages = read_all(vec![i(0)], vec![i(4)], Direction::Forward, None).await;
    assert_eq!(pages, vec![(vec![0, 1, 2, 3], None)]);
    // Backward: from the larger start (inclusive) down to the end (exclusive).
    let pages = read_all(vec![i(6)], vec![i(-2)], Direction::Backward, Some(3)).await;
    assert_eq!(
        pages,
        vec![
            (vec![6, 5, 4], ip(3)),
            (vec![3, 2, 1], ip(0)),
            (vec![0, -1], None),
        ]
    );
    let pages = read_all(
        vec![PkBound::InfMax],
        vec![PkBound::InfMin],
        Direction::Backward,
        None,
    )
    .await;
    assert_eq!(pages[0], (vec![9, 8, 7, 6], ip(5)));
    assert_eq!(pages.len(), 4);
    // An empty or inverted range returns nothing and no continuation.
    let pages = read_all(vec![i(4)], vec![i(4)], Direction::Forward, None).await;
    assert_eq!(pages, vec![(vec![], None)]);
    let pages = read_all(vec![i(4)], vec![i(0)], Direction::Forward, None).await;
    assert_eq!(pages, vec![(vec![], None)]);

    // The byte limit also ends a page: rows of 8 (PK) + 1 + 8 bytes, 40-byte pages.
    let env2 = env_with(Limits {
        max_range_bytes: 40,
        ..Limits::default()
    })
    .await;
    let t2 = env2
        .engine
        .create_table(DB, spec("t", vec![pk_col("n", PkType::Integer)], &[]))
        .await
        .unwrap();
    for n in 0..5 {
        put_row(&env2, &t2, &[PkValue::Integer(n)], vec![put("v", int(n))]).await;
    }
    let page = env2
        .engine
        .get_range(
            &t2,
            &RangeRequest {
                start: vec![PkBound::InfMin],
                end: vec![PkBound::InfMax],
                direction: Direction::Forward,
                limit: None,
                read: ReadOptions::default(),
            },
        )
        .await
        .unwrap();
    assert_eq!(page.rows.len(), 3, "17 + 17 < 40 <= 51 bytes");
    assert_eq!(page.next_start, Some(vec![PkValue::Integer(3)]));
}

#[tokio::test]
async fn capacity_units() {
    let env = env().await;
    let t = table(&env, "cu", &[]).await;
    // 2-byte PK + 1-byte column name + 7600-byte value = 7603 bytes: 2 write CU.
    let result = env
        .engine
        .put_row(
            &t,
            write(
                &[s("k1")],
                RowChange::Put(vec![put("v", Value::Binary(vec![0; 7600]))]),
            ),
        )
        .await
        .unwrap();
    assert_eq!(result.capacity, Capacity { read: 0, write: 2 });
    // A 0.1 KB row read: 1 read CU; the 7.6 KB row: 2; a missing row: 1.
    put_row(
        &env,
        &t,
        &[s("k2")],
        vec![put("v", Value::Binary(vec![0; 97]))],
    )
    .await;
    let small = env
        .engine
        .get_row(&t, &[s("k2")], &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(small.capacity, Capacity { read: 1, write: 0 });
    let big = env
        .engine
        .get_row(&t, &[s("k1")], &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(big.capacity.read, 2);
    let missing = env
        .engine
        .get_row(&t, &[s("nope")], &ReadOptions::default())
        .await
        .unwrap();
    assert!(missing.row.is_none());
    assert_eq!(missing.capacity, Capacity { read: 1, write: 0 });
    // A conditional write reads the row first and pays for it.
    let result = env
        .engine
        .put_row(
            &t,
            conditional(
                &[s("k2")],
                RowChange::Update(vec![put("w", int(1))]),
                Condition::row(RowExistence::ExpectExist),
            ),
        )
        .await
        .unwrap();
    assert_eq!(result.capacity, Capacity { read: 1, write: 1 });
    let stats = env.engine.table_stats(&t);
    assert_eq!(stats.write_cu, 2 + 1 + 1);
    assert_eq!(stats.read_cu, 1 + 2 + 1 + 1);
    assert_eq!(stats.writes, 3);
    assert_eq!(stats.reads, 3);
    // Totals are per table.
    let other = table(&env, "other", &[]).await;
    put_row(&env, &other, &[s("k")], vec![]).await;
    assert_eq!(env.engine.table_stats(&t), stats);
    assert_eq!(env.engine.table_stats(&other).write_cu, 1);
}

#[tokio::test]
async fn server_versions_increase_within_one_millisecond() {
    let env = env().await;
    let t = table(&env, "t", &[("max_versions", 100)]).await;
    // The clock does not move at all.
    for i in 0..20 {
        update(&env, &t, &[s("k")], vec![put("a", int(i))]).await;
    }
    // PutRow and increments also get fresh versions.
    let incr = ColumnOp::Increment {
        column: "a".into(),
        by: 100,
    };
    update(&env, &t, &[s("k")], vec![incr]).await;
    let row = get(&env, &t, &[s("k")], &all_versions()).await.unwrap();
    let versions: Vec<i64> = row.cells.iter().map(|c| c.version).collect();
    let expected: Vec<i64> = (0..21).rev().map(|i| NOW + i).collect();
    assert_eq!(versions, expected, "strictly increasing, newest first");
    assert_eq!(row.cells[0].value, int(119));
    put_row(&env, &t, &[s("k")], vec![put("a", int(-1))]).await;
    let row = get(&env, &t, &[s("k")], &all_versions()).await.unwrap();
    assert_eq!(row.cells.len(), 1, "PutRow replaces the row");
    assert_eq!(row.cells[0].version, NOW + 21);
    // Once the clock passes them, versions are the clock again.
    env.clock.advance(5000);
    update(&env, &t, &[s("k")], vec![put("a", int(0))]).await;
    let row = get(&env, &t, &[s("k")], &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(row.cells[0].version, NOW + 5000);
}

#[tokio::test]
async fn drop_table_removes_data() {
    let env = env().await;
    let t = table(&env, "t", &[]).await;
    for k in ["a", "b", "c"] {
        put_row(&env, &t, &[s(k)], vec![put("v", text(k))]).await;
    }
    env.engine.drop_table(DB, "t").await.unwrap();
    assert!(matches!(
        env.engine.table(DB, "t"),
        Err(EngineError::TableNotFound { .. })
    ));
    let data = snapshot(&env.engine).await;
    assert!(data.iter().all(|(k, _)| k[0] == 0), "no data keys are left");
    let again = table(&env, "t", &[]).await;
    assert_ne!(again.id, t.id);
    assert!(get(&env, &again, &[s("a")], &ReadOptions::default())
        .await
        .is_none());
    // Instances drop with their tables.
    env.engine.create_instance("scratch").await.unwrap();
    let st = env
        .engine
        .create_table(
            "scratch",
            spec("x", vec![pk_col("id", PkType::String)], &[]),
        )
        .await
        .unwrap();
    put_row(&env, &st, &[s("a")], vec![put("v", int(1))]).await;
    env.engine.drop_instance("scratch").await.unwrap();
    assert!(env.engine.instance("scratch").is_err());
    assert!(get(&env, &again, &[s("a")], &ReadOptions::default())
        .await
        .is_none());
    let data = snapshot(&env.engine).await;
    assert!(data.iter().all(|(k, _)| k[0] == 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalog_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let open = || durable_engine(dir.path(), ManualClock::new(NOW));
    let (id, options) = {
        let engine = open().await;
        engine.create_instance("shop").await.unwrap();
        let t = engine
            .create_table(
                "shop",
                spec(
                    "orders",
                    vec![
                        pk_col("region", PkType::String),
                        pk_col("n", PkType::Integer),
                    ],
                    &[("ttl", 86400), ("max_versions", 3)],
                ),
            )
            .await
            .unwrap();
        engine
            .put_row(
                &t,
                write(
                    &[s("eu"), PkValue::Integer(1)],
                    RowChange::Put(vec![put("total", int(42))]),
                ),
            )
            .await
            .unwrap();
        let dropped = engine
            .create_table(
                "shop",
                spec("gone", vec![pk_col("k", PkType::Integer)], &[]),
            )
            .await
            .unwrap();
        engine.drop_table("shop", "gone").await.unwrap();
        let t = engine.table("shop", "orders").unwrap();
        assert!(t.column("total").is_some(), "written columns become known");
        assert!(dropped.id > t.id);
        (t.id, t.options.clone())
    };
    let engine = open().await;
    let names: Vec<String> = engine.instances().into_iter().map(|i| i.name).collect();
    assert_eq!(names, vec!["postgres".to_string(), "shop".to_string()]);
    let t = engine.table("shop", "orders").unwrap();
    assert_eq!((t.id, &t.options), (id, &options));
    assert_eq!(t.pk_types(), vec![PkType::String, PkType::Integer]);
    assert_eq!(t.column("total").map(|c| c.ty), Some(ValueType::Integer));
    assert!(engine.table("shop", "gone").is_err());
    let row = engine
        .get_row(&t, &[s("eu"), PkValue::Integer(1)], &ReadOptions::default())
        .await
        .unwrap()
        .row
        .unwrap();
    assert_eq!(row.latest("total").unwrap().value, int(42));
    // Ids are never reused, even for a table dropped before the restart.
    let fresh = engine
        .create_table(
            "shop",
            spec("gone", vec![pk_col("k", PkType::Integer)], &[]),
        )
        .await
        .unwrap();
    assert!(fresh.id > id + 1);
}

/// Many tasks incrementing one new row at once: every increment counts exactly once.
async fn concurrent_increments(engine: Arc<Engine>) {
    let t = engine
        .create_table(
            DB,
            spec("counters", vec![pk_col("id", PkType::String)], &[]),
        )
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let engine = Arc::clone(&engine);
        let t = Arc::clone(&t);
        tasks.push(tokio::spawn(async move {
            for _ in 0..25 {
                let result = engine
                    .put_row(
                        &t,
                        write(
                            &[s("c")],
                            RowChange::Update(vec![ColumnOp::Increment {
                                column: "n".into(),
                                by: 1,
                            }]),
                        ),
                    )
                    .await
                    .unwrap();
                assert_eq!(result.applied(), 1);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let row = engine
        .get_row(&t, &[s("c")], &ReadOptions::default())
        .await
        .unwrap()
        .row
        .unwrap();
    assert_eq!(row.latest("n").unwrap().value, int(200));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_increments_on_a_new_row() {
    let clock = Arc::new(pgwide::engine::SystemClock);
    let memory = Engine::open(
        Arc::new(MemoryBackend::new()),
        clock.clone(),
        Limits::default(),
    )
    .await
    .unwrap();
    concurrent_increments(Arc::new(memory)).await;
    let dir = tempfile::tempdir().unwrap();
    let sled = SledBackend::open(dir.path(), SledOptions::default()).unwrap();
    let cached = Cached::new(sled, CacheOptions::default());
    let engine = Engine::open(Arc::new(cached), clock, Limits::default())
        .await
        .unwrap();
    concurrent_increments(Arc::new(engine)).await;
}

/// A PutRow expecting no row is first tried without reading the row (the commit's check
/// insists on an absent key); a row that is stored after all is read on the retry, so
/// a live row still fails the condition, an expired one is replaced, and a key written
/// twice in one atomic batch fails on its second write.
#[tokio::test]
async fn puts_expecting_no_row_see_stored_and_expired_rows() {
    let env = env().await;
    let t = table(&env, "t", &[("ttl", 100)]).await;
    let insert = |key: &str, column: &str, v: i64| {
        conditional(
            &[s(key)],
            RowChange::Put(vec![put(column, int(v))]),
            Condition::row(RowExistence::ExpectNotExist),
        )
    };
    put_row(&env, &t, &[s("live")], vec![put("a", int(1))]).await;
    let result = env
        .engine
        .put_row(&t, insert("live", "a", 2))
        .await
        .unwrap();
    assert_eq!(
        result.first_failure(),
        Some((0, ConditionFailure::RowExists))
    );
    put_row(
        &env,
        &t,
        &[s("old")],
        vec![put("a", int(1)), put("b", int(1))],
    )
    .await;
    env.clock.advance(101_000);
    let result = env.engine.put_row(&t, insert("old", "c", 3)).await.unwrap();
    assert_eq!(result.applied(), 1, "an expired row does not exist");
    let row = get(&env, &t, &[s("old")], &all_versions()).await.unwrap();
    let columns: Vec<&str> = row.cells.iter().map(|c| c.column.as_str()).collect();
    assert_eq!(columns, ["c"]);
    let before = snapshot(&env.engine).await;
    let result = env
        .engine
        .write_rows(
            vec![
                (Arc::clone(&t), insert("twice", "a", 1)),
                (Arc::clone(&t), insert("twice", "a", 2)),
            ],
            BatchMode::Atomic,
        )
        .await
        .unwrap();
    assert_eq!(
        result.first_failure(),
        Some((1, ConditionFailure::RowExists))
    );
    assert!(
        snapshot(&env.engine).await == before,
        "the atomic batch left nothing"
    );
}

#[tokio::test]
async fn a_data_directory_of_an_older_row_format_is_refused_with_an_explanation() {
    use pgwide::storage::{OrderedKv, WriteBatch};
    // What a build from before packed rows left: a catalog record, no format record.
    let backend = Arc::new(MemoryBackend::new());
    let mut batch = WriteBatch::default();
    batch.put(vec![0x00, b'S'], 7u32.to_be_bytes().to_vec());
    backend.write(batch).await.unwrap();
    let refused = Engine::open(backend, Arc::new(ManualClock::new(NOW)), Limits::default()).await;
    match refused {
        Err(EngineError::Corrupt(message)) => {
            assert!(message.contains("row format 1"), "{message}")
        }
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }

    // A new directory records the current format and opens again afterwards.
    let backend = Arc::new(MemoryBackend::new());
    let clock = Arc::new(ManualClock::new(NOW));
    Engine::open(backend.clone(), clock.clone(), Limits::default())
        .await
        .unwrap();
    Engine::open(backend, clock, Limits::default())
        .await
        .unwrap();
}

/// The keys a secondary index's entries for `values` name.
async fn indexed(env: &Env, table: &str, index: &str, values: &[Value]) -> Vec<Vec<PkValue>> {
    let t = env.engine.table(DB, table).unwrap();
    let index = t.indexes.iter().find(|i| i.name == index).unwrap().clone();
    env.engine
        .index_keys(&t, &index, values)
        .await
        .unwrap()
        .expect("a ready index")
}

fn index_spec(name: &str, columns: &[&str], unique: bool) -> pgwide::engine::IndexSpec {
    pgwide::engine::IndexSpec {
        name: name.into(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        unique,
        constraint: false,
    }
}

#[tokio::test]
async fn a_secondary_index_follows_every_write_of_its_rows() {
    let env = env().await;
    let t = table(&env, "people", &[]).await;
    put_row(&env, &t, &[s("a")], vec![put("city", text("oslo"))]).await;
    put_row(&env, &t, &[s("b")], vec![put("city", text("rome"))]).await;
    let t = env
        .engine
        .create_index(DB, "people", index_spec("by_city", &["city"], false))
        .await
        .unwrap();
    assert!(t.indexes[0].ready, "built before it is used");
    assert_eq!(
        indexed(&env, "people", "by_city", &[text("oslo")]).await,
        [[s("a")]]
    );
    // PutRow, UpdateRow, DeleteRow and a column's deletion each move the entry.
    put_row(&env, &t, &[s("c")], vec![put("city", text("oslo"))]).await;
    update(&env, &t, &[s("a")], vec![put("city", text("rome"))]).await;
    assert_eq!(
        indexed(&env, "people", "by_city", &[text("oslo")]).await,
        [[s("c")]]
    );
    assert_eq!(
        indexed(&env, "people", "by_city", &[text("rome")]).await,
        [[s("a")], [s("b")]]
    );
    delete_row(&env, &t, &[s("b")]).await;
    update(
        &env,
        &t,
        &[s("c")],
        vec![ColumnOp::DeleteAll {
            column: "city".into(),
        }],
    )
    .await;
    assert_eq!(
        indexed(&env, "people", "by_city", &[text("rome")]).await,
        [[s("a")]]
    );
    assert!(indexed(&env, "people", "by_city", &[text("oslo")])
        .await
        .is_empty());
    // TRUNCATE empties the index with the table.
    env.engine.truncate_tables(DB, &["people"]).await.unwrap();
    assert!(indexed(&env, "people", "by_city", &[text("rome")])
        .await
        .is_empty());
}

/// A row the TTL hid keeps its entry (reads check the row again), and no longer holds
/// a unique index's values: another row may take them.
#[tokio::test]
async fn rows_hidden_by_the_ttl_let_their_unique_values_go() {
    let env = env().await;
    let t = table(&env, "sessions", &[("ttl", 86_400)]).await;
    put_row(&env, &t, &[s("old")], vec![put("token", text("t1"))]).await;
    env.engine
        .create_index(DB, "sessions", index_spec("by_token", &["token"], true))
        .await
        .unwrap();
    let duplicate = env
        .engine
        .put_row(
            &t,
            write(&[s("new")], RowChange::Put(vec![put("token", text("t1"))])),
        )
        .await;
    assert!(
        matches!(duplicate, Err(EngineError::UniqueViolation { ref index, .. }) if index == "by_token"),
        "{duplicate:?}"
    );
    env.clock.advance(86_400_000 + 1_000);
    assert_eq!(
        indexed(&env, "sessions", "by_token", &[text("t1")]).await,
        [[s("old")]]
    );
    let got = env
        .engine
        .get_row(&t, &[s("old")], &ReadOptions::default())
        .await
        .unwrap();
    assert!(got.row.is_none(), "hidden by the TTL");
    put_row(&env, &t, &[s("new")], vec![put("token", text("t1"))]).await;
    assert_eq!(
        indexed(&env, "sessions", "by_token", &[text("t1")]).await,
        [[s("new")]]
    );
}

#[tokio::test]
async fn a_unique_index_over_shared_values_is_not_created() {
    let env = env().await;
    let t = table(&env, "tags", &[]).await;
    put_row(&env, &t, &[s("a")], vec![put("n", int(1))]).await;
    put_row(&env, &t, &[s("b")], vec![put("n", int(1))]).await;
    let made = env
        .engine
        .create_index(DB, "tags", index_spec("tags_n", &["n"], true))
        .await;
    assert!(
        matches!(made, Err(EngineError::DuplicateInIndex { .. })),
        "{made:?}"
    );
    assert!(env.engine.table(DB, "tags").unwrap().indexes.is_empty());
    assert!(env.engine.index(DB, "tags_n").is_none());
}

#[tokio::test]
async fn indexes_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let open = || durable_engine(dir.path(), ManualClock::new(NOW));
    {
        let engine = open().await;
        let t = engine
            .create_table(DB, spec("items", vec![pk_col("id", PkType::Integer)], &[]))
            .await
            .unwrap();
        engine
            .create_index(DB, "items", index_spec("items_sku", &["sku"], true))
            .await
            .unwrap_err();
        engine
            .put_row(
                &t,
                write(
                    &[PkValue::Integer(1)],
                    RowChange::Put(vec![put("sku", text("x"))]),
                ),
            )
            .await
            .unwrap();
        engine
            .create_index(DB, "items", index_spec("items_sku", &["sku"], true))
            .await
            .unwrap();
    }
    let engine = open().await;
    let (t, index) = engine.index(DB, "items_sku").expect("still there");
    assert!(index.unique && index.ready);
    assert_eq!(
        engine.index_keys(&t, &index, &[text("x")]).await.unwrap(),
        Some(vec![vec![PkValue::Integer(1)]])
    );
    let duplicate = engine
        .put_row(
            &t,
            write(
                &[PkValue::Integer(2)],
                RowChange::Put(vec![put("sku", text("x"))]),
            ),
        )
        .await;
    assert!(matches!(
        duplicate,
        Err(EngineError::UniqueViolation { .. })
    ));
}

/// ADD PRIMARY KEY on a table keyed by the hidden `_rowid`: each row moves to the key
/// its column's value makes, with every version of its other cells that a read can
/// see; versions Max Versions hides and rows the TTL expired stay behind, and the table
/// reads the same after a reopen.
#[tokio::test]
async fn adding_a_primary_key_moves_every_visible_version() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(NOW);
    let env = Env {
        engine: durable_engine(dir.path(), clock.clone()).await,
        clock,
    };
    let keyless = TableSpec {
        auto_rowid: true,
        columns: vec![
            AttrColumn {
                name: "k".into(),
                ty: ValueType::Integer,
            },
            AttrColumn {
                name: "a".into(),
                ty: ValueType::Integer,
            },
        ],
        ..spec(
            "t",
            vec![pk_col("_rowid", PkType::Integer)],
            &[("max_versions", 2), ("ttl", 10)],
        )
    };
    let t = env.engine.create_table(DB, keyless).await.unwrap();
    let rowid = |i: i64| [PkValue::Integer(i)];
    put_row(
        &env,
        &t,
        &rowid(1),
        vec![put("k", int(8)), put("a", int(0))],
    )
    .await;
    env.clock.advance(15_000);
    let now = NOW + 15_000;
    put_row(&env, &t, &rowid(2), vec![put("k", int(7))]).await;
    for (i, version) in [now - 3000, now - 2000, now - 1000].iter().enumerate() {
        update(
            &env,
            &t,
            &rowid(2),
            vec![put_at("a", int(i as i64), *version)],
        )
        .await;
    }
    put_row(&env, &t, &rowid(3), vec![put("k", int(9))]).await;

    let keyed = env
        .engine
        .add_primary_key(DB, "t", vec![pk_col("k", PkType::Integer)], None)
        .await
        .unwrap();
    assert!(!keyed.auto_rowid);
    assert_eq!(keyed.pk, vec![pk_col("k", PkType::Integer)]);
    assert!(keyed.column("k").is_none() && keyed.column("a").is_some());
    let check = |engine: Engine| async move {
        let t = engine.table(DB, "t").unwrap();
        let read = |k: i64| {
            let (engine, t) = (&engine, &t);
            async move {
                engine
                    .get_row(t, &[PkValue::Integer(k)], &all_versions())
                    .await
                    .unwrap()
                    .row
                    .map(|row| {
                        row.cells
                            .iter()
                            .map(|c| (c.column.clone(), c.version, c.value.clone()))
                            .collect::<Vec<_>>()
                    })
            }
        };
        assert_eq!(
            read(7).await,
            Some(vec![
                ("a".to_string(), now - 1000, int(2)),
                ("a".to_string(), now - 2000, int(1)),
            ])
        );
        assert_eq!(read(9).await, Some(vec![]));
        // Expired by the TTL before the key was added: not copied.
        assert_eq!(read(8).await, None);
        engine
    };
    let engine = check(env.engine).await;
    drop(engine);
    check(durable_engine(dir.path(), ManualClock::new(now)).await).await;

    // A table that has a key keeps it.
    let engine = durable_engine(dir.path(), ManualClock::new(now)).await;
    assert_eq!(
        engine
            .add_primary_key(DB, "t", vec![pk_col("a", PkType::Integer)], None)
            .await
            .unwrap_err(),
        EngineError::PrimaryKeyExists { table: "t".into() }
    );
}

/// A table's stream: each committed write leaves one record with its operation, key and
/// column changes, in position order; the positions go on after a reopen (a consumer
/// resumes exactly where it was); records older than `stream_expiration_hours` are
/// removed by GC, and reading from before them is refused rather than skipping them,
/// as it is after a TRUNCATE.
#[tokio::test]
async fn a_stream_records_every_change_once_and_refuses_what_expired() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(NOW);
    let env = Env {
        engine: durable_engine(dir.path(), clock.clone()).await,
        clock,
    };
    let t = table(
        &env,
        "t",
        &[("stream_enabled", 1), ("stream_expiration_hours", 1)],
    )
    .await;
    put_row(
        &env,
        &t,
        &[s("a")],
        vec![put("n", int(1)), put("x", text("one"))],
    )
    .await;
    update(&env, &t, &[s("a")], vec![put("n", int(2))]).await;
    update(
        &env,
        &t,
        &[s("a")],
        vec![ColumnOp::DeleteAll { column: "x".into() }],
    )
    .await;
    delete_row(&env, &t, &[s("a")]).await;
    let records = env.engine.stream_records(&t, None, 100).await.unwrap();
    let summary: Vec<(u64, &str, usize)> = records
        .iter()
        .map(|r| (r.position, r.operation.name(), r.columns.len()))
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, "PUT", 2),
            (2, "UPDATE", 1),
            (3, "UPDATE", 1),
            (4, "DELETE", 0)
        ]
    );
    assert_eq!(records[1].columns[0].value, Some(int(2)));
    // The server's version, moved past the row's first one written the same moment.
    assert_eq!(records[1].columns[0].version, Some(NOW + 1));
    assert_eq!(
        records[2].columns[0].operation.name(),
        "DELETE_ALL_VERSIONS"
    );
    let resumed = env.engine.stream_records(&t, Some(2), 100).await.unwrap();
    assert_eq!(
        resumed.iter().map(|r| r.position).collect::<Vec<_>>(),
        [3, 4]
    );

    // Reopened: nothing lost, and new records go on after the old ones.
    drop(env);
    let clock = ManualClock::new(NOW + 1000);
    let env = Env {
        engine: durable_engine(dir.path(), clock.clone()).await,
        clock,
    };
    let t = env.engine.table(DB, "t").unwrap();
    assert_eq!(
        env.engine.stream_records(&t, None, 100).await.unwrap(),
        records
    );
    put_row(&env, &t, &[s("b")], vec![put("n", int(5))]).await;
    let after = env.engine.stream_records(&t, Some(4), 100).await.unwrap();
    assert_eq!(after.iter().map(|r| r.position).collect::<Vec<_>>(), [5]);

    // An hour later GC removes the first four; reading from before them is refused.
    env.clock.advance(3_600_000 - 500);
    let report = env.engine.gc_all().await.unwrap();
    assert_eq!(report.stream_records_removed, 4);
    let error = env
        .engine
        .stream_records(&t, Some(2), 100)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            EngineError::StreamRecordsRemoved {
                removed_through: 4,
                ..
            }
        ),
        "{error}"
    );
    let kept = env.engine.stream_records(&t, Some(4), 100).await.unwrap();
    assert_eq!(kept.iter().map(|r| r.position).collect::<Vec<_>>(), [5]);

    // TRUNCATE removes the stream's records too, and says so to a consumer.
    env.engine.truncate_tables(DB, &["t"]).await.unwrap();
    let t = env.engine.table(DB, "t").unwrap();
    assert!(env.engine.stream_records(&t, Some(4), 100).await.is_err());
    put_row(&env, &t, &[s("c")], vec![put("n", int(6))]).await;
    // TRUNCATE took position 6 to mark what went unrecorded.
    assert!(env.engine.stream_records(&t, Some(5), 100).await.is_err());
    let fresh = env.engine.stream_records(&t, Some(6), 100).await.unwrap();
    assert_eq!(fresh.iter().map(|r| r.position).collect::<Vec<_>>(), [7]);
}

/// Reserved throughput (docs/table-store.md §9.1): a write over the table's budget for
/// the second is refused whole and leaves nothing; the budget refills with the clock;
/// an ALTER that raises it counts at once; reads are admitted while budget is left.
#[tokio::test]
async fn reserved_throughput_refuses_what_is_over_the_budget_and_applies_none_of_it() {
    let env = env().await;
    let t = table(
        &env,
        "t",
        &[("reserved_write_cu", 50), ("reserved_read_cu", 3)],
    )
    .await;
    let row = |i: usize| {
        write(
            &[s(&format!("k{i:03}"))],
            RowChange::Put(vec![put("a", int(1))]),
        )
    };
    // A full bucket: 50 one-CU rows pass, the 51st is refused.
    for i in 0..50 {
        env.engine.put_row(&t, row(i)).await.unwrap();
    }
    let refused = env.engine.put_row(&t, row(50)).await.unwrap_err();
    assert!(matches!(
        refused,
        EngineError::ThroughputExceeded {
            option: "reserved_write_cu",
            limit: 50,
            needed: 1,
            ..
        }
    ));
    assert!(refused
        .to_string()
        .contains("table \"t\" is over its reserved_write_cu = 50"));
    assert!(get(&env, &t, &[s("k050")], &ReadOptions::default())
        .await
        .is_none());
    // A batch is refused whole, not in part, even when part of it would fit.
    env.clock.advance(100);
    let batch: Vec<_> = (60..66).map(|i| (Arc::clone(&t), row(i))).collect();
    assert!(env
        .engine
        .write_rows(batch, BatchMode::Atomic)
        .await
        .is_err());
    // Five CU came back in the 100 ms.
    let batch: Vec<_> = (60..65).map(|i| (Arc::clone(&t), row(i))).collect();
    env.engine
        .write_rows(batch, BatchMode::Atomic)
        .await
        .unwrap();
    // Raising the limit takes effect at once, without waiting for the refill.
    let t = set_option(&env, "reserved_write_cu", 1000).await;
    let batch: Vec<_> = (100..200).map(|i| (Arc::clone(&t), row(i))).collect();
    env.engine
        .write_rows(batch, BatchMode::Atomic)
        .await
        .unwrap();

    // Reads: three gets spend the read budget, the fourth waits for the refill.
    env.clock.advance(2000);
    for _ in 0..3 {
        get(&env, &t, &[s("k000")], &ReadOptions::default()).await;
    }
    let refused = env
        .engine
        .get_row(&t, &[s("k000")], &ReadOptions::default())
        .await;
    assert!(matches!(
        refused,
        Err(EngineError::ThroughputExceeded {
            option: "reserved_read_cu",
            ..
        })
    ));
    env.clock.advance(400);
    assert!(get(&env, &t, &[s("k000")], &ReadOptions::default())
        .await
        .is_some());

    let stats = env.engine.table_stats(&t);
    assert_eq!(stats.write_cu, 50 + 5 + 100);
    let recent = env.engine.recent_throughput(&t);
    assert_eq!(recent.write_cu_last_minute, 155);
    assert_eq!((recent.throttled_writes, recent.throttled_reads), (2, 1));
    // The four gets and the one that found k050 missing.
    assert_eq!(recent.read_cu_last_minute, 5);
}
