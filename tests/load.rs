//! Load: 200 concurrent connections against the real `pgwide serve` binary doing mixed
//! reads and writes — point gets, single-row inserts, updates and PK range reads — for
//! 60 seconds (`PGWIDE_LOAD_SECS`). No statement may fail and the server's peak memory
//! (VmHWM) must stay bounded. Prints throughput, p50/p99 latency and memory; the
//! numbers are for reading, not asserted (timings are never asserted).

mod server_process;

use rand::{Rng, SeedableRng};
use server_process::Pgwide;
use std::time::{Duration, Instant};
use tokio_postgres::{Client, NoTls};

const CLIENTS: usize = 200;
/// Rows loaded before the run: `PARTS` partitions of `ROWS_PER_PART` ids.
const PARTS: i64 = 20;
const ROWS_PER_PART: i64 = 500;
/// A generous bound on the server's peak resident memory.
const MAX_RSS_KB: u64 = 1024 * 1024;

/// A field of /proc/<pid>/status in kB.
fn status_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"))
}

async fn connect(port: u16) -> Client {
    let (client, connection) = tokio_postgres::connect(
        &format!("host=127.0.0.1 port={port} user=load dbname=postgres"),
        NoTls,
    )
    .await
    .expect("connect");
    tokio::spawn(connection);
    client
}

/// What one client did: operations, latencies in microseconds, errors.
#[derive(Default)]
struct Tally {
    latencies_us: Vec<u32>,
    errors: Vec<String>,
    by_kind: [u64; 4],
}

async fn client_loop(port: u16, me: usize, until: Instant) -> Tally {
    let client = connect(port).await;
    let get = client
        .prepare("SELECT v, n FROM items WHERE part = $1 AND id = $2")
        .await
        .expect("prepare get");
    let insert = client
        .prepare("INSERT INTO items (part, id, v, n) VALUES ($1, $2, $3, $4)")
        .await
        .expect("prepare insert");
    let update = client
        .prepare("UPDATE items SET v = $3 WHERE part = $1 AND id = $2")
        .await
        .expect("prepare update");
    let range = client
        .prepare("SELECT id, v FROM items WHERE part = $1 AND id >= $2 AND id < $3")
        .await
        .expect("prepare range");
    let mut rng = rand::rngs::StdRng::seed_from_u64(me as u64);
    let mut tally = Tally::default();
    // Inserts go to a partition of this client's own, so they never collide.
    let own_part = 1_000 + me as i64;
    let mut next_id = 0i64;
    while Instant::now() < until {
        let part = rng.gen_range(0..PARTS);
        let id = rng.gen_range(0..ROWS_PER_PART);
        let kind = match rng.gen_range(0..100) {
            0..=49 => 0,
            50..=69 => 1,
            70..=89 => 2,
            _ => 3,
        };
        let started = Instant::now();
        let result = match kind {
            0 => client.query(&get, &[&part, &id]).await.map(|rows| {
                assert_eq!(rows.len(), 1, "row ({part}, {id}) is missing");
            }),
            1 => {
                next_id += 1;
                let value = format!("client {me} row {next_id}");
                client
                    .execute(&insert, &[&own_part, &next_id, &value, &next_id])
                    .await
                    .map(|n| assert_eq!(n, 1))
            }
            2 => {
                let value = format!("updated by {me}");
                client
                    .execute(&update, &[&part, &id, &value])
                    .await
                    .map(|n| assert_eq!(n, 1))
            }
            _ => {
                let end = id + 20;
                client.query(&range, &[&part, &id, &end]).await.map(|rows| {
                    let expected = (end.min(ROWS_PER_PART) - id) as usize;
                    assert_eq!(rows.len(), expected, "range {part} [{id}, {end})");
                })
            }
        };
        let micros = started.elapsed().as_micros().min(u32::MAX as u128) as u32;
        match result {
            Ok(()) => {
                tally.latencies_us.push(micros);
                tally.by_kind[kind] += 1;
            }
            Err(e) => tally.errors.push(format!("{e:?}")),
        }
    }
    tally
}

#[test]
fn two_hundred_clients_mixed_reads_and_writes() {
    let seconds: u64 = std::env::var("PGWIDE_LOAD_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Pgwide::start(&dir.path().join("data"), &["--max-connections", "300"], &[]);
    let port = server.port;
    let pid = server.pid();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let loader = connect(port).await;
        loader
            .batch_execute(
                "CREATE TABLE items (part BIGINT, id BIGINT, v TEXT, n BIGINT, \
                 PRIMARY KEY (part, id))",
            )
            .await
            .expect("create");
        for part in 0..PARTS {
            let values: Vec<String> = (0..ROWS_PER_PART)
                .map(|id| {
                    format!(
                        "({part}, {id}, 'row {part}/{id} {}', {id})",
                        "p".repeat(120)
                    )
                })
                .collect();
            loader
                .batch_execute(&format!("INSERT INTO items VALUES {}", values.join(", ")))
                .await
                .expect("load");
        }
        let rss_before = status_kb(pid, "VmRSS:");

        let until = Instant::now() + Duration::from_secs(seconds);
        let started = Instant::now();
        let workers: Vec<_> = (0..CLIENTS)
            .map(|me| tokio::spawn(client_loop(port, me, until)))
            .collect();
        // Sample the server's memory while the load runs.
        let sampler = tokio::spawn(async move {
            let mut peak = 0;
            while Instant::now() < until {
                tokio::time::sleep(Duration::from_secs(5)).await;
                peak = peak.max(status_kb(pid, "VmRSS:"));
            }
            peak
        });
        let mut all = Tally::default();
        for worker in workers {
            let tally = worker.await.expect("client task");
            all.latencies_us.extend(tally.latencies_us);
            all.errors.extend(tally.errors);
            for (total, n) in all.by_kind.iter_mut().zip(tally.by_kind) {
                *total += n;
            }
        }
        let elapsed = started.elapsed().as_secs_f64();
        let sampled_peak = sampler.await.expect("sampler");
        let hwm = status_kb(pid, "VmHWM:");
        let rss_after = status_kb(pid, "VmRSS:");

        assert!(
            all.errors.is_empty(),
            "{} statements failed; first: {}",
            all.errors.len(),
            all.errors[0]
        );
        let mut latencies = all.latencies_us;
        latencies.sort_unstable();
        let pick = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize] as f64 / 1000.0;
        let total = latencies.len();
        eprintln!(
            "load: {CLIENTS} clients for {elapsed:.1} s: {total} statements, {:.0}/s \
             (gets {}, inserts {}, updates {}, ranges {}); latency p50 {:.2} ms, \
             p99 {:.2} ms, max {:.2} ms; server RSS before {} MB, sampled peak {} MB, \
             after {} MB, VmHWM {} MB",
            total as f64 / elapsed,
            all.by_kind[0],
            all.by_kind[1],
            all.by_kind[2],
            all.by_kind[3],
            pick(0.5),
            pick(0.99),
            pick(1.0),
            rss_before / 1024,
            sampled_peak / 1024,
            rss_after / 1024,
            hwm / 1024,
        );
        assert!(total > 0, "no statement completed");
        assert!(all.by_kind.iter().all(|n| *n > 0), "every kind ran");
        assert!(
            hwm < MAX_RSS_KB,
            "server peak RSS {} MB exceeds {} MB",
            hwm / 1024,
            MAX_RSS_KB / 1024
        );

        // Every insert is there: each client's partition holds its ids 1..=n.
        let check = connect(port).await;
        let rows = check
            .query("SELECT count(*) FROM items WHERE part >= 1000", &[])
            .await
            .expect("count inserts");
        let inserted: i64 = rows[0].get(0);
        assert_eq!(
            inserted as u64, all.by_kind[1],
            "acknowledged inserts present"
        );
    });
    drop(server);
}

/// Connections share the connection threads (`--connection-threads`, 4 by default). A
/// statement that runs for a long time must not hold up the connections on its thread,
/// and a CancelRequest, which arrives on a new connection that may land on that same
/// thread, must still stop it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_statement_leaves_its_thread_to_others_and_can_be_canceled() {
    let server = Pgwide::fresh();
    let long = connect(server.port).await;
    let others = futures::future::join_all((0..7).map(|_| connect(server.port))).await;
    let cancel = long.cancel_token();
    let running = tokio::spawn(async move {
        long.simple_query("SELECT count(*) FROM generate_series(1, 10000000000)")
            .await
    });
    // Each of the other connections (on every thread) is served while it runs; were a
    // thread held, its query would wait for ten billion rows.
    tokio::time::sleep(Duration::from_millis(300)).await;
    for client in &others {
        let answer = tokio::time::timeout(Duration::from_secs(30), client.simple_query("SELECT 1"))
            .await
            .expect("served while the long statement runs")
            .expect("SELECT 1");
        let values: Vec<Option<&str>> = answer
            .iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(row) => Some(row.get(0)),
                _ => None,
            })
            .collect();
        assert_eq!(values, [Some("1")]);
    }
    cancel
        .cancel_query(NoTls)
        .await
        .expect("send CancelRequest");
    let ended = tokio::time::timeout(Duration::from_secs(60), running)
        .await
        .expect("the canceled statement ends")
        .expect("task");
    let err = ended.expect_err("the statement was canceled");
    assert_eq!(
        err.as_db_error().map(|e| e.code().code()),
        Some("57014"),
        "{err}"
    );
}

/// The server turns transparent huge pages off for itself (`main.rs`): with them on, the
/// allocator's fresh and purged 2 MiB regions were zeroed whole, 11% of a COPY's CPU.
#[test]
#[cfg(target_os = "linux")]
fn the_server_runs_without_transparent_huge_pages() {
    let server = Pgwide::fresh();
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", server.pid())).expect("proc status");
    let thp = status
        .lines()
        .find_map(|l| l.strip_prefix("THP_enabled:"))
        .map(str::trim);
    assert_eq!(thp, Some("0"), "THP_enabled in /proc/<pid>/status");
    server.stop();
}

/// The CPUs in a `Cpus_allowed_list` line of /proc ("0-3,6").
fn cpu_list(text: &str) -> Vec<usize> {
    text.split(',')
        .flat_map(|part| match part.split_once('-') {
            Some((from, to)) => (from.parse().unwrap()..=to.parse().unwrap()).collect(),
            None => vec![part.parse().unwrap()],
        })
        .collect()
}

/// The CPUs each thread of `pid` whose name starts with `prefix` may run on, in the
/// order of their names.
fn cpus_of_threads(pid: u32, prefix: &str) -> Vec<Vec<usize>> {
    let mut threads: Vec<(String, Vec<usize>)> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("proc tasks")
        .filter_map(|task| {
            let task = task.ok()?.path();
            let name = std::fs::read_to_string(task.join("comm")).ok()?;
            let status = std::fs::read_to_string(task.join("status")).ok()?;
            let cpus = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
            Some((name.trim().to_string(), cpu_list(cpus.trim())))
        })
        .filter(|(name, _)| name.starts_with(prefix))
        .collect();
    threads.sort();
    threads.into_iter().map(|(_, cpus)| cpus).collect()
}

/// By default an idle server ties connection thread i to the i-th CPU it may use
/// (`server::placement`) when there are 2-4 of them; `--pin-connection-threads never`
/// leaves the threads on every CPU.
#[test]
#[cfg(target_os = "linux")]
fn idle_connection_threads_are_spread_over_the_cpus_unless_told_not_to() {
    let server = Pgwide::fresh();
    let allowed = cpus_of_threads(server.pid(), "pgwide")
        .into_iter()
        .max_by_key(Vec::len)
        .expect("the main thread");
    // Four threads by default; with more CPUs than that they are never tied.
    let tied = (2..=4).contains(&allowed.len());
    let spread: Vec<Vec<usize>> = (0..4)
        .map(|i| match tied {
            true => vec![allowed[i % allowed.len()]],
            false => allowed.clone(),
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = cpus_of_threads(server.pid(), "pgwide-conn");
    // Start-up work on other threads may free them for a moment; idle, they are tied.
    while seen != spread && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        seen = cpus_of_threads(server.pid(), "pgwide-conn");
    }
    server.stop();
    assert_eq!(seen, spread);

    let temp = tempfile::tempdir().expect("temporary directory");
    let free = Pgwide::start(
        &temp.path().join("data"),
        &["--pin-connection-threads", "never"],
        &[],
    );
    std::thread::sleep(Duration::from_millis(500));
    let seen = cpus_of_threads(free.pid(), "pgwide-conn");
    free.stop();
    assert_eq!(seen, vec![allowed; 4]);
}
