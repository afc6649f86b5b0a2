//! Nothing acknowledged is lost: concurrent clients write through the real `pgwide serve`
//! binary (INSERT, UPDATE, DELETE, multi-row INSERT), recording every write the server
//! acknowledged with CommandComplete; the server is killed with SIGKILL at random moments,
//! restarted on the same data directory, and every acknowledged write must be there with
//! its value and version, and no multi-row statement visible in part. Then a SIGTERM
//! shutdown must not lose anything either.

mod server_process;

use rand::{Rng, SeedableRng};
use server_process::{free_port, Pgwide};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const CLIENTS: i64 = 4;
const CYCLES: usize = 20;

/// What a key may hold: certain after an acknowledgement; either of two after a write
/// that was in flight when the server died.
#[derive(Clone, Debug, PartialEq)]
enum Expect {
    Is(Option<(i64, i64)>),
    Either(Option<(i64, i64)>, Option<(i64, i64)>),
}

type State = Arc<Mutex<HashMap<i64, Expect>>>;

async fn connect(port: u16) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(
        &format!("host=127.0.0.1 port={port} user=crash dbname=postgres"),
        tokio_postgres::NoTls,
    )
    .await
    .expect("connect");
    tokio::spawn(connection);
    client
}

fn current(state: &State, key: i64) -> Option<(i64, i64)> {
    match state.lock().unwrap().get(&key) {
        Some(Expect::Is(v)) => *v,
        // Settled by the check after each restart before new writes start.
        Some(Expect::Either(_, _)) => unreachable!("unsettled key"),
        None => None,
    }
}

/// One client's writes until the server dies. Keys are private to the client.
async fn writer(port: u16, client_no: i64, state: State, base_version: i64, seed: u64, round: i64) {
    let client = connect(port).await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    // Versions only grow from round to round: a later write never carries an older one.
    let mut version = base_version + round * 1_000_000 + client_no * 100_000;
    loop {
        version += 1;
        let key = client_no * 1_000_000 + rng.gen_range(0..40);
        let before = current(&state, key);
        let value: i64 = rng.gen_range(0..1_000_000);
        let op = rng.gen_range(0..4);
        // Record the possible outcomes before sending, the certain one after the ack.
        let (sql, after, keys): (String, Vec<Option<(i64, i64)>>, Vec<i64>) = match (op, before) {
            (0, None) | (1, None) => (
                format!("INSERT INTO t (id, _version, v) VALUES ({key}, {version}, {value})"),
                vec![Some((value, version))],
                vec![key],
            ),
            (1, Some(_)) | (0, Some(_)) => (
                format!("UPDATE t SET v = {value}, _version = {version} WHERE id = {key}"),
                vec![Some((value, version))],
                vec![key],
            ),
            (2, _) => (
                format!("DELETE FROM t WHERE id = {key}"),
                vec![None],
                vec![key],
            ),
            _ => {
                // A multi-row INSERT of three fresh keys: all or none.
                let first = client_no * 1_000_000 + 100 + rng.gen_range(0..100_000) * 3;
                if (0..3).any(|i| current(&state, first + i).is_some()) {
                    continue;
                }
                let rows: Vec<String> = (0..3)
                    .map(|i| format!("({}, {version}, {})", first + i, value + i))
                    .collect();
                (
                    format!("INSERT INTO t (id, _version, v) VALUES {}", rows.join(", ")),
                    (0..3).map(|i| Some((value + i, version))).collect(),
                    (0..3).map(|i| first + i).collect(),
                )
            }
        };
        {
            let mut state = state.lock().unwrap();
            for (k, a) in keys.iter().zip(&after) {
                let old = match state.get(k) {
                    Some(Expect::Is(v)) => *v,
                    _ => None,
                };
                state.insert(*k, Expect::Either(old, *a));
            }
        }
        match client.execute(sql.as_str(), &[]).await {
            Ok(_) => {
                let mut state = state.lock().unwrap();
                for (k, a) in keys.iter().zip(&after) {
                    state.insert(*k, Expect::Is(*a));
                }
            }
            // The server is gone: the write stays undecided until the next check.
            Err(_) => return,
        }
    }
}

/// Reads every row back and checks it against what was acknowledged; settles keys
/// whose last write was in flight.
async fn check(port: u16, state: &State) -> usize {
    let client = connect(port).await;
    let rows = client
        .query(
            "SELECT id, version, value FROM versions.t WHERE column_name = 'v'",
            &[],
        )
        .await
        .expect("read back");
    let stored: HashMap<i64, (i64, i64)> = rows
        .iter()
        .map(|r| {
            (
                r.get::<_, i64>(0),
                (r.get::<_, String>(2).parse().unwrap(), r.get::<_, i64>(1)),
            )
        })
        .collect();
    let mut state = state.lock().unwrap();
    let mut in_flight_multi: HashMap<i64, bool> = HashMap::new();
    for (key, expect) in state.iter_mut() {
        let found = stored.get(key).copied();
        match expect.clone() {
            Expect::Is(v) => assert_eq!(found, v, "acknowledged state of key {key} lost"),
            Expect::Either(old, new) => {
                assert!(
                    found == old || found == new,
                    "key {key}: {found:?} is neither {old:?} nor {new:?}"
                );
                if key % 1_000_000 >= 100 {
                    in_flight_multi.insert(*key, found == new);
                }
                *expect = Expect::Is(found);
            }
        }
    }
    // A multi-row INSERT in flight: its three keys are all new or all old.
    for (key, applied) in &in_flight_multi {
        let group = (key - (key % 1_000_000 - 100) % 3..).take(3);
        for other in group {
            if let Some(other_applied) = in_flight_multi.get(&other) {
                assert_eq!(
                    applied, other_applied,
                    "multi-row INSERT visible in part at key {key}"
                );
            }
        }
    }
    for key in stored.keys() {
        assert!(state.contains_key(key), "key {key} was never written");
    }
    stored.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_sigkill_and_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let base_version = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        - 3_600_000;
    let state: State = Arc::new(Mutex::new(HashMap::new()));
    let mut server = Pgwide::start_on(&data, port, &[], &[]);
    connect(port)
        .await
        .batch_execute("CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)")
        .await
        .unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut acknowledged_before_kill = 0;
    for cycle in 0..CYCLES {
        let writers: Vec<_> = (0..CLIENTS)
            .map(|c| {
                tokio::spawn(writer(
                    port,
                    c,
                    Arc::clone(&state),
                    base_version,
                    (cycle as u64) * 100 + c as u64,
                    cycle as i64,
                ))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(rng.gen_range(100..600))).await;
        server.kill();
        for w in writers {
            let _ = w.await;
        }
        acknowledged_before_kill += state
            .lock()
            .unwrap()
            .values()
            .filter(|e| matches!(e, Expect::Is(Some(_))))
            .count();
        server = Pgwide::start_on(&data, port, &[], &[]);
        check(port, &state).await;
    }
    assert!(
        acknowledged_before_kill > CYCLES,
        "the writers got acknowledgements at all"
    );
    // A clean SIGTERM shutdown loses nothing either.
    let writers: Vec<_> = (0..CLIENTS)
        .map(|c| {
            tokio::spawn(writer(
                port,
                c,
                Arc::clone(&state),
                base_version,
                9_000 + c as u64,
                CYCLES as i64,
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let exit = server.terminate();
    assert!(exit.success(), "SIGTERM shuts down cleanly: {exit:?}");
    for w in writers {
        let _ = w.await;
    }
    let mut server = Pgwide::start_on(&data, port, &[], &[]);
    let rows = check(port, &state).await;
    assert!(rows > 0);
    let _ = server.kill();
}
