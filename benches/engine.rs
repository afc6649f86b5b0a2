//! Engine operations against raw sled over the same data, in the same run: GetRow vs
//! `Db::get` (and GetRow with the row cache turned off), PutRow vs `Db::insert` (non-durable, and durable with group commit vs
//! insert + flush, one writer and eight), GetRange of 100 rows vs `Db::range`, and a
//! bulk-load chunk of 1,000 new rows vs one `apply_batch` of 1,000 keys: what sled alone
//! allows a COPY.
//!
//! `cargo bench --bench engine -- --warm-up-time 1 --measurement-time 3`; results are in
//! `bench/ENGINE_RESULTS.md`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use pgwide::engine::{
    BatchMode, ColumnOp, Condition, Direction, Engine, Limits, PkBound, PkColumn, PkType, PkValue,
    RangeRequest, ReadOptions, RowChange, RowExistence, RowWrite, SystemClock, TableMeta,
    TableSpec, Value, DEFAULT_INSTANCE,
};
use pgwide::storage::{CacheOptions, Cached, SledBackend, SledOptions};
use rand::Rng;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROWS: i64 = 10_000;
const VALUE_BYTES: usize = 100;
const WRITERS: u64 = 8;

struct Setup {
    engine: Arc<Engine>,
    table: Arc<TableMeta>,
    raw: sled::Db,
    _dirs: Vec<tempfile::TempDir>,
}

/// A value of `bytes` bytes that starts with `i`, so no two rows store the same value.
fn value_of(i: i64, bytes: usize) -> Vec<u8> {
    let mut v = vec![b'x'; bytes];
    v[..8].copy_from_slice(&i.to_be_bytes());
    v
}

fn value(i: i64) -> Vec<u8> {
    value_of(i, VALUE_BYTES)
}

fn put(i: i64) -> RowWrite {
    put_with(i, value(i), Condition::IGNORE)
}

/// A put of `value` into column `v` of row `i`, under `condition`.
fn put_with(i: i64, value: Vec<u8>, condition: Condition) -> RowWrite {
    RowWrite {
        pk: vec![PkValue::Integer(i)],
        change: RowChange::Put(vec![ColumnOp::Put {
            column: "v".into(),
            value: Value::Binary(value),
            version: None,
        }]),
        condition,
        return_row: false,
    }
}

async fn setup(durable: bool, rows: i64) -> Setup {
    setup_with(durable, rows, CacheOptions::default().row_cache_bytes).await
}

async fn setup_with(durable: bool, rows: i64, row_cache_bytes: u64) -> Setup {
    let engine_dir = tempfile::tempdir().unwrap();
    let raw_dir = tempfile::tempdir().unwrap();
    let sled = SledBackend::open(
        engine_dir.path(),
        SledOptions {
            durable,
            cache_capacity: 256 * 1024 * 1024,
            ..SledOptions::default()
        },
    )
    .unwrap();
    let backend = Cached::new(
        sled,
        CacheOptions {
            row_cache_bytes,
            ..CacheOptions::default()
        },
    );
    let engine = Engine::open(Arc::new(backend), Arc::new(SystemClock), Limits::default())
        .await
        .unwrap();
    let table = engine
        .create_table(
            DEFAULT_INSTANCE,
            TableSpec {
                name: "bench".into(),
                pk: vec![PkColumn {
                    name: "id".into(),
                    ty: PkType::Integer,
                }],
                ..TableSpec::default()
            },
        )
        .await
        .unwrap();
    let raw = sled::Config::new()
        .path(raw_dir.path())
        .cache_capacity(256 * 1024 * 1024)
        .open()
        .unwrap();
    for chunk in (0..rows).collect::<Vec<_>>().chunks(200) {
        let writes = chunk
            .iter()
            .map(|&i| (Arc::clone(&table), put(i)))
            .collect();
        engine.batch_write_row(writes).await.unwrap();
        let mut batch = sled::Batch::default();
        for &i in chunk {
            batch.insert(&i.to_be_bytes(), value(i));
        }
        raw.apply_batch(batch).unwrap();
    }
    Setup {
        engine: Arc::new(engine),
        table,
        raw,
        _dirs: vec![engine_dir, raw_dir],
    }
}

fn reads(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = rt.block_on(setup(false, ROWS));
    let uncached = rt.block_on(setup_with(false, ROWS, 0));
    let read = ReadOptions::default();

    let mut group = c.benchmark_group("get_row");
    for (name, s) in [("engine", &s), ("engine_without_row_cache", &uncached)] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let i = rand::thread_rng().gen_range(0..ROWS);
                let got = s
                    .engine
                    .get_row(&s.table, &[PkValue::Integer(i)], &read)
                    .await
                    .unwrap();
                assert!(got.row.is_some());
            })
        });
    }
    group.bench_function("raw_sled", |b| {
        b.iter(|| {
            let i = rand::thread_rng().gen_range(0..ROWS);
            let got = s.raw.get(i.to_be_bytes()).unwrap();
            assert!(got.is_some());
        })
    });
    group.finish();

    let mut group = c.benchmark_group("get_range_100");
    group.throughput(Throughput::Elements(100));
    group.bench_function("engine", |b| {
        b.to_async(&rt).iter(|| async {
            let i = rand::thread_rng().gen_range(0..ROWS - 100);
            let page = s
                .engine
                .get_range(
                    &s.table,
                    &RangeRequest {
                        start: vec![PkBound::Value(PkValue::Integer(i))],
                        end: vec![PkBound::InfMax],
                        direction: Direction::Forward,
                        limit: Some(100),
                        read: read.clone(),
                    },
                )
                .await
                .unwrap();
            assert_eq!(page.rows.len(), 100);
        })
    });
    group.bench_function("raw_sled", |b| {
        b.iter(|| {
            let i = rand::thread_rng().gen_range(0..ROWS - 100);
            let rows: Vec<(sled::IVec, sled::IVec)> = s
                .raw
                .range(i.to_be_bytes()..)
                .take(100)
                .map(|r| r.unwrap())
                .collect();
            assert_eq!(rows.len(), 100);
        })
    });
    group.finish();
}

fn writes(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let next = AtomicI64::new(ROWS);
    for durable in [false, true] {
        let s = rt.block_on(setup(durable, 1000));
        let label = if durable { "durable" } else { "non_durable" };
        let mut group = c.benchmark_group(format!("put_row_{label}"));
        group.bench_function("engine", |b| {
            b.to_async(&rt).iter(|| async {
                let i = next.fetch_add(1, Ordering::Relaxed);
                s.engine.put_row(&s.table, put(i)).await.unwrap();
            })
        });
        group.bench_function("raw_sled", |b| {
            b.iter(|| {
                let i = next.fetch_add(1, Ordering::Relaxed);
                s.raw.insert(i.to_be_bytes(), value(i)).unwrap();
                if durable {
                    s.raw.flush().unwrap();
                }
            })
        });
        if durable {
            // Eight writers at once: the engine's group commit shares one sync among them.
            group.throughput(Throughput::Elements(1));
            group.bench_function(
                BenchmarkId::new("engine", format!("{WRITERS}_writers")),
                |b| {
                    b.to_async(&rt).iter_custom(|iters| {
                        let engine = Arc::clone(&s.engine);
                        let table = Arc::clone(&s.table);
                        let next = &next;
                        async move {
                            let per_writer = iters.div_ceil(WRITERS);
                            let start = Instant::now();
                            let tasks: Vec<_> = (0..WRITERS)
                                .map(|_| {
                                    let engine = Arc::clone(&engine);
                                    let table = Arc::clone(&table);
                                    let first =
                                        next.fetch_add(per_writer as i64, Ordering::Relaxed);
                                    tokio::spawn(async move {
                                        for i in first..first + per_writer as i64 {
                                            engine.put_row(&table, put(i)).await.unwrap();
                                        }
                                    })
                                })
                                .collect();
                            for task in tasks {
                                task.await.unwrap();
                            }
                            start
                                .elapsed()
                                .mul_f64(iters as f64 / (per_writer * WRITERS) as f64)
                        }
                    })
                },
            );
            group.bench_function(
                BenchmarkId::new("raw_sled", format!("{WRITERS}_writers")),
                |b| {
                    b.iter_custom(|iters| {
                        let per_writer = iters.div_ceil(WRITERS);
                        let start = Instant::now();
                        std::thread::scope(|scope| {
                            for _ in 0..WRITERS {
                                let first = next.fetch_add(per_writer as i64, Ordering::Relaxed);
                                let raw = &s.raw;
                                scope.spawn(move || {
                                    for i in first..first + per_writer as i64 {
                                        raw.insert(i.to_be_bytes(), value(i)).unwrap();
                                        raw.flush().unwrap();
                                    }
                                });
                            }
                        });
                        start
                            .elapsed()
                            .mul_f64(iters as f64 / (per_writer * WRITERS) as f64)
                    })
                },
            );
        }
        group.finish();
    }
}

/// Bytes of a bulk-loaded row's value: about what a `bench/run` purchase record encodes to.
const BULK_VALUE_BYTES: usize = 240;
/// Rows per bulk-load chunk, as `COPY` hands them to the engine.
const BULK_CHUNK: i64 = 1000;

fn bulk_value(i: i64) -> Vec<u8> {
    value_of(i, BULK_VALUE_BYTES)
}

fn bulk_put(i: i64) -> RowWrite {
    put_with(
        i,
        bulk_value(i),
        Condition::row(RowExistence::ExpectNotExist),
    )
}

/// A key as long as a `bench/run` row key (table id, four PK values: about 40 bytes).
fn bulk_key(i: i64) -> [u8; 40] {
    let mut k = [b'k'; 40];
    k[32..].copy_from_slice(&i.to_be_bytes());
    k
}

/// One COPY chunk of new rows, non-durable: the engine against sled's own `apply_batch`
/// of the same number of keys and bytes. Raw sled's rows/s is the ceiling for a COPY
/// that stores one sled key per row.
fn bulk_load(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = rt.block_on(setup(false, 1000));
    let next = AtomicI64::new(ROWS);
    let mut group = c.benchmark_group("bulk_load_chunk_1000");
    group.throughput(Throughput::Elements(BULK_CHUNK as u64));
    group.bench_function("engine", |b| {
        b.to_async(&rt).iter(|| async {
            let first = next.fetch_add(BULK_CHUNK, Ordering::Relaxed);
            let writes = (first..first + BULK_CHUNK)
                .map(|i| (Arc::clone(&s.table), bulk_put(i)))
                .collect();
            let result = s
                .engine
                .write_rows(writes, BatchMode::Atomic)
                .await
                .unwrap();
            assert_eq!(result.applied(), BULK_CHUNK as usize);
        })
    });
    group.bench_function("raw_sled", |b| {
        b.iter(|| {
            let first = next.fetch_add(BULK_CHUNK, Ordering::Relaxed);
            let mut batch = sled::Batch::default();
            for i in first..first + BULK_CHUNK {
                batch.insert(&bulk_key(i)[..], bulk_value(i));
            }
            s.raw.apply_batch(batch).unwrap();
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    targets = reads, writes, bulk_load
}
criterion_main!(benches);
