//! A change and its stream record commit together: clients write a streamed table
//! through the real `pgwide serve` binary (INSERT, multi-row INSERT, UPDATE, DELETE)
//! and the server is killed with SIGKILL at random moments. After each restart,
//! replaying the stream from its start must give exactly the table's rows (a change
//! without its record, or a record without its change, would make them differ), the
//! positions must only grow, and a consumer that resumes after the last position it
//! read before the crash must find every record exactly once: the ones it read are
//! still there, unchanged, and the new ones follow them.

mod server_process;

use rand::{Rng, SeedableRng};
use server_process::{free_port, Pgwide};
use std::collections::BTreeMap;
use std::time::Duration;

const CLIENTS: i64 = 3;
const CYCLES: u64 = 6;

/// One stream record as a consumer keeps it.
#[derive(Debug, Clone, PartialEq)]
struct Record {
    position: i64,
    operation: String,
    id: i64,
    /// The value the record puts in `v`, if it puts one.
    v: Option<i64>,
}

async fn connect(port: u16) -> tokio_postgres::Client {
    server_process::connect(port, "crash", None, "postgres")
        .await
        .expect("connect")
}

/// Writes to keys of its own until the server dies.
async fn writer(port: u16, client_no: i64, seed: u64) {
    let client = connect(port).await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    loop {
        let key = client_no * 1_000_000 + rng.gen_range(0..30);
        let value: i64 = rng.gen_range(0..1_000_000);
        let sql = match rng.gen_range(0..4) {
            0 => format!("INSERT INTO t VALUES ({key}, {value}) ON CONFLICT (id) DO NOTHING"),
            1 => format!("UPDATE t SET v = {value} WHERE id = {key}"),
            2 => format!("DELETE FROM t WHERE id = {key}"),
            _ => {
                let first = client_no * 1_000_000 + 100 + rng.gen_range(0..100_000) * 3;
                let rows: Vec<String> = (0..3)
                    .map(|i| format!("({}, {})", first + i, value + i))
                    .collect();
                format!(
                    "INSERT INTO t VALUES {} ON CONFLICT (id) DO NOTHING",
                    rows.join(", ")
                )
            }
        };
        if client.execute(sql.as_str(), &[]).await.is_err() {
            return;
        }
    }
}

/// The records after `after`, in position order.
async fn records_after(client: &tokio_postgres::Client, after: i64) -> Vec<Record> {
    let rows = client
        .query(
            "SELECT position, operation, id, columns::text FROM stream.t \
             WHERE position > $1 ORDER BY position",
            &[&after],
        )
        .await
        .expect("the stream reads");
    rows.iter()
        .map(|row| {
            let columns: serde_json::Value =
                serde_json::from_str(&row.get::<_, String>(3)).expect("columns is JSON");
            let v = columns.as_array().and_then(|cells| {
                cells
                    .iter()
                    .find(|c| c["column"] == "v" && c["op"] == "PUT")
                    .and_then(|c| c["value"].as_i64())
            });
            Record {
                position: row.get(0),
                operation: row.get(1),
                id: row.get(2),
                v,
            }
        })
        .collect()
}

/// The table as replaying `records` from an empty one makes it.
fn replay(records: &[Record]) -> BTreeMap<i64, Option<i64>> {
    let mut rows = BTreeMap::new();
    for record in records {
        match record.operation.as_str() {
            "PUT" => {
                rows.insert(record.id, record.v);
            }
            "UPDATE" => {
                let row = rows.get_mut(&record.id).unwrap_or_else(|| {
                    panic!("an UPDATE record for row {} no record created", record.id)
                });
                if record.v.is_some() {
                    *row = record.v;
                }
            }
            "DELETE" => {
                rows.remove(&record.id);
            }
            other => panic!("unknown operation {other}"),
        }
    }
    rows
}

async fn stored(client: &tokio_postgres::Client) -> BTreeMap<i64, Option<i64>> {
    client
        .query("SELECT id, v FROM t", &[])
        .await
        .expect("read the table")
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkill_never_parts_a_change_from_its_stream_record() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let mut server = Pgwide::start_on(&data, port, &[], &[]);
    connect(port)
        .await
        .batch_execute(
            "CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT) WITH (stream_enabled = true)",
        )
        .await
        .unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut consumed: Vec<Record> = Vec::new();
    for cycle in 0..CYCLES {
        let writers: Vec<_> = (0..CLIENTS)
            .map(|c| tokio::spawn(writer(port, c, cycle * 100 + c as u64)))
            .collect();
        tokio::time::sleep(Duration::from_millis(rng.gen_range(150..600))).await;
        server.kill();
        for w in writers {
            let _ = w.await;
        }
        server = Pgwide::start_on(&data, port, &[], &[]);
        let client = connect(port).await;
        // The consumer goes on after the last position it read.
        let after = consumed.last().map_or(0, |r| r.position);
        let fresh = records_after(&client, after).await;
        consumed.extend(fresh);
        let everything = records_after(&client, 0).await;
        assert_eq!(
            everything, consumed,
            "cycle {cycle}: the stream read from its start is not what the consumer read"
        );
        assert!(everything.windows(2).all(|w| w[0].position < w[1].position));
        eprintln!(
            "cycle {cycle}: {} records in all, {} rows",
            everything.len(),
            replay(&everything).len()
        );
        assert_eq!(
            replay(&everything),
            stored(&client).await,
            "cycle {cycle}: the stream replayed is not the table"
        );
    }
    assert!(
        consumed.len() > CYCLES as usize * 10,
        "the writers wrote: {} records",
        consumed.len()
    );
    server.kill();
}
