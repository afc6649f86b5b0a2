//! Crash recovery, after sled's `test_crash_recovery`: a child process writes through the
//! engine over durable sled and prints every acknowledged write; the parent kills it with
//! SIGKILL at a random moment, reopens the database and checks that every acknowledged
//! write is there with its value and version, that no multi-row atomic batch is half
//! applied, and that every bulk load acknowledged after its closing wait is whole (its
//! batches skip the log and are made durable by a sync of sled). State accumulates over
//! the cycles, so recovery is also checked on top of earlier recoveries. A sequence is
//! drawn from all along: no value it handed out may ever be handed out again.
//!
//! The child is this test binary itself, re-run with `child_entry` selected (an ignored
//! test that only does work when `PGWIDE_CRASH_DIR` is set).

use pgwide::engine::Direction;
use pgwide::engine::{
    BatchMode, ColumnOp, Condition, Engine, Limits, PkBound, PkColumn, PkType, PkValue,
    RangeRequest, ReadOptions, Row, RowChange, RowWrite, SequenceSpec, SequenceType, SystemClock,
    TableSpec, Value, WriteOutcome, DEFAULT_INSTANCE,
};
use pgwide::storage::{CacheOptions, Cached, SledBackend, SledOptions};
use rand::Rng;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CYCLES: usize = 24;
/// Atomic batches alternate between these sizes: a few rows stored key by key, and
/// enough new consecutive rows for the backend to store them packed.
const BATCH_ROWS: [usize; 2] = [3, 40];
/// A bulk load writes this many batches of this many new rows, then waits once.
const LOAD_BATCHES: usize = 3;
const LOAD_ROWS: usize = 40;

async fn open(dir: &Path) -> Engine {
    let sled = SledBackend::open(
        dir,
        SledOptions {
            durable: true,
            cache_capacity: 32 * 1024 * 1024,
            // Small, so kills also land during checkpoints and between log files.
            checkpoint_bytes: 64 * 1024,
        },
    )
    .unwrap();
    let backend = Cached::new(sled, CacheOptions::default());
    let engine = Engine::open(Arc::new(backend), Arc::new(SystemClock), Limits::default())
        .await
        .unwrap();
    if engine.sequence(DEFAULT_INSTANCE, "crash_seq").is_err() {
        engine
            .create_sequence(
                DEFAULT_INSTANCE,
                SequenceSpec {
                    name: "crash_seq".into(),
                    data_type: Some(SequenceType::Int8),
                    increment: 1,
                    min: 1,
                    max: i64::MAX,
                    start: 1,
                    cycle: false,
                    owner: None,
                },
            )
            .await
            .unwrap();
    }
    if engine.table(DEFAULT_INSTANCE, "crash").is_err() {
        engine
            .create_table(
                DEFAULT_INSTANCE,
                TableSpec {
                    name: "crash".into(),
                    pk: vec![PkColumn {
                        name: "k".into(),
                        ty: PkType::String,
                    }],
                    ..TableSpec::default()
                },
            )
            .await
            .unwrap();
    }
    engine
}

fn put(key: &str, value: &str) -> RowWrite {
    RowWrite {
        pk: vec![PkValue::String(key.into())],
        change: RowChange::Put(vec![ColumnOp::Put {
            column: "v".into(),
            value: Value::String(value.into()),
            version: None,
        }]),
        condition: Condition::IGNORE,
        return_row: true,
    }
}

fn emit(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

/// Child mode: write until killed, printing each write after it is acknowledged.
#[test]
#[ignore = "run by acknowledged_writes_survive_sigkill in a child process"]
fn child_entry() {
    let Ok(dir) = std::env::var("PGWIDE_CRASH_DIR") else {
        return;
    };
    let cycle: usize = std::env::var("PGWIDE_CRASH_CYCLE")
        .unwrap()
        .parse()
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let engine = Arc::new(open(Path::new(&dir)).await);
        emit("\nREADY");
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut tasks = Vec::new();
        // Two writers of single rows (their syncs can be shared) and one of atomic batches.
        for writer in 0..2 {
            let engine = Arc::clone(&engine);
            tasks.push(tokio::spawn(async move {
                let t = engine.table(DEFAULT_INSTANCE, "crash").unwrap();
                let mut i = 0;
                while Instant::now() < deadline {
                    let key = format!("c{cycle:02}-w{writer}-{i:05}");
                    let value = format!("value-{cycle}-{writer}-{i}");
                    let result = engine.put_row(&t, put(&key, &value)).await.unwrap();
                    let WriteOutcome::Applied(Some(row)) = &result.outcomes[0] else {
                        panic!("{result:?}");
                    };
                    let version = row.latest("v").unwrap().version;
                    emit(&format!("ACK {key} {value} {version}"));
                    i += 1;
                }
            }));
        }
        // A sequence's values, each printed once handed out.
        let drawer = Arc::clone(&engine);
        tasks.push(tokio::spawn(async move {
            let sequence = drawer.sequence(DEFAULT_INSTANCE, "crash_seq").unwrap();
            while Instant::now() < deadline {
                let value = drawer.nextval(&sequence).await.unwrap();
                emit(&format!("SEQ {value}"));
                tokio::task::yield_now().await;
            }
        }));
        let loader = Arc::clone(&engine);
        let engine = Arc::clone(&engine);
        tasks.push(tokio::spawn(async move {
            let t = engine.table(DEFAULT_INSTANCE, "crash").unwrap();
            let mut i = 0;
            while Instant::now() < deadline {
                let rows = BATCH_ROWS[i % 2];
                let batch = format!("c{cycle:02}-b{i:05}x{rows}");
                let writes = (0..rows)
                    .map(|r| (Arc::clone(&t), put(&format!("{batch}-{r:02}"), &batch)))
                    .collect();
                let result = engine.write_rows(writes, BatchMode::Atomic).await.unwrap();
                assert_eq!(result.applied(), rows);
                emit(&format!("BATCH {batch}"));
                i += 1;
            }
        }));
        // And one bulk loader, as COPY writes: batches of new rows that are not
        // durable when written, acknowledged together once the last one is.
        tasks.push(tokio::spawn(async move {
            let engine = loader;
            let t = engine.table(DEFAULT_INSTANCE, "crash").unwrap();
            let mut i = 0;
            while Instant::now() < deadline {
                let mut loaded = Vec::new();
                let mut ticket = None;
                for part in 0..LOAD_BATCHES {
                    let batch = format!("c{cycle:02}-bload{i:05}.{part}x{LOAD_ROWS}");
                    let writes = (0..LOAD_ROWS)
                        .map(|r| (Arc::clone(&t), put(&format!("{batch}-{r:02}"), &batch)))
                        .collect();
                    let (result, written) = engine
                        .write_rows_unsynced(writes, BatchMode::Atomic)
                        .await
                        .unwrap();
                    assert_eq!(result.applied(), LOAD_ROWS);
                    loaded.push(batch);
                    ticket = Some(written);
                }
                engine.wait_durable(ticket.unwrap()).await.unwrap();
                for batch in loaded {
                    emit(&format!("BATCH {batch}"));
                }
                i += 1;
            }
        }));
        for task in tasks {
            task.await.unwrap();
        }
    });
}

/// What the children acknowledged, over all cycles.
#[derive(Default)]
struct Acked {
    /// key → (value, version)
    rows: BTreeMap<String, (String, i64)>,
    batches: BTreeSet<String>,
    /// Every value the sequence handed out.
    sequence_values: BTreeSet<i64>,
}

fn run_child(dir: &Path, cycle: usize, acked: &mut Acked) -> usize {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args([
            "child_entry",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("PGWIDE_CRASH_DIR", dir)
        .env("PGWIDE_CRASH_CYCLE", cycle.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                // A line cut off by the kill is not counted: the parent never saw it.
                Ok(_) if !line.ends_with('\n') => break,
                Ok(_) => {
                    let text = line.trim_end().to_string();
                    if text == "READY" {
                        let _ = ready_tx.send(());
                    }
                    lines.push(text);
                }
            }
        }
        lines
    });
    // Generous: on a loaded 2-core machine opening sled in a debug build can be slow.
    ready_rx
        .recv_timeout(Duration::from_secs(180))
        .expect("the child did not start");
    let delay = rand::thread_rng().gen_range(10..250);
    std::thread::sleep(Duration::from_millis(delay));
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let lines = reader.join().unwrap();
    let mut count = 0;
    for line in lines {
        let mut parts = line.split(' ');
        match parts.next() {
            Some("ACK") => {
                let key = parts.next().unwrap().to_string();
                let value = parts.next().unwrap().to_string();
                let version: i64 = parts.next().unwrap().parse().unwrap();
                acked.rows.insert(key, (value, version));
                count += 1;
            }
            Some("BATCH") => {
                acked.batches.insert(parts.next().unwrap().to_string());
                count += 1;
            }
            Some("SEQ") => {
                let value: i64 = parts.next().unwrap().parse().unwrap();
                let fresh = acked.sequence_values.insert(value);
                assert!(fresh, "sequence value {value} was handed out twice");
            }
            _ => {}
        }
    }
    count
}

async fn verify(dir: &Path, acked: &Acked) {
    let engine = open(dir).await;
    let t = engine.table(DEFAULT_INSTANCE, "crash").unwrap();
    let keys: Vec<&String> = acked.rows.keys().collect();
    for chunk in keys.chunks(100) {
        let pks: Vec<Vec<PkValue>> = chunk
            .iter()
            .map(|k| vec![PkValue::String((*k).clone())])
            .collect();
        let got = engine
            .batch_get_row(&t, &pks, &ReadOptions::default())
            .await
            .unwrap();
        for (key, row) in chunk.iter().zip(got.rows) {
            let (value, version) = &acked.rows[*key];
            let row = row.unwrap_or_else(|| panic!("acknowledged row {key} is lost"));
            let cell = row.latest("v").unwrap();
            assert_eq!(cell.value, Value::String(value.clone()), "{key}");
            assert_eq!(cell.version, *version, "{key}");
        }
    }
    // Every batch on disk is whole, and every acknowledged batch is on disk.
    let mut request = RangeRequest {
        start: vec![PkBound::InfMin],
        end: vec![PkBound::InfMax],
        direction: Direction::Forward,
        limit: None,
        read: ReadOptions::default(),
    };
    let mut rows: Vec<Row> = Vec::new();
    loop {
        let page = engine.get_range(&t, &request).await.unwrap();
        rows.extend(page.rows);
        match page.next_start {
            Some(next) => request.start = next.into_iter().map(PkBound::Value).collect(),
            None => break,
        }
    }
    let mut batches: BTreeMap<String, usize> = BTreeMap::new();
    for row in &rows {
        let PkValue::String(key) = &row.pk[0] else {
            unreachable!()
        };
        if key.contains("-b") {
            let batch = key.rsplit_once('-').unwrap().0.to_string();
            assert_eq!(row.latest("v").unwrap().value, Value::String(batch.clone()));
            *batches.entry(batch).or_default() += 1;
        }
    }
    for (batch, n) in &batches {
        let rows: usize = batch.rsplit_once('x').unwrap().1.parse().unwrap();
        assert_eq!(*n, rows, "batch {batch} is half applied");
    }
    for batch in &acked.batches {
        assert!(
            batches.contains_key(batch),
            "acknowledged batch {batch} is lost"
        );
    }
}

#[test]
fn acknowledged_writes_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let mut acked = Acked::default();
    let started = Instant::now();
    let mut total = 0;
    for cycle in 0..CYCLES {
        total += run_child(dir.path(), cycle, &mut acked);
        rt.block_on(verify(dir.path(), &acked));
    }
    assert!(
        acked.sequence_values.len() > CYCLES,
        "too few sequence values were drawn: {}",
        acked.sequence_values.len()
    );
    assert!(
        acked.rows.len() > CYCLES * 5 && acked.batches.len() > CYCLES,
        "too few writes were acknowledged to mean anything: {} rows, {} batches",
        acked.rows.len(),
        acked.batches.len()
    );
    eprintln!(
        "{CYCLES} kills, {total} acknowledged writes ({} rows, {} batches) all recovered, \
         {} sequence values none repeated, in {:?}",
        acked.rows.len(),
        acked.batches.len(),
        acked.sequence_values.len(),
        started.elapsed()
    );
}
