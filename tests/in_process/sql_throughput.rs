//! Reserved throughput over the wire: a table's `reserved_write_cu` /
//! `reserved_read_cu` refuse statements past the second's budget with 53400 and apply
//! nothing of them (an INSERT, a loop of INSERTs, a COPY whose first chunk fitted),
//! raising the option counts at once, and `pgwide.table_stats` shows the budget, the
//! last minute's consumption and the refusals.

use crate::common::{code, simple_rows, TestServer};

/// The error of a statement refused for want of budget: its SQLSTATE and message.
fn refusal(result: Result<impl std::fmt::Debug, tokio_postgres::Error>) -> (String, String) {
    let message = match &result {
        Err(e) => e
            .as_db_error()
            .map(|db| db.message().to_string())
            .unwrap_or_default(),
        Ok(_) => String::new(),
    };
    (code(result), message)
}

async fn count(client: &tokio_postgres::Client, table: &str) -> i64 {
    client
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .await
        .expect("count")
        .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_past_the_budget_are_refused_and_leave_nothing() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE metered (id BIGINT PRIMARY KEY, note TEXT) \
             WITH (reserved_write_cu = 50)",
        )
        .await
        .expect("create");
    // 60 rows of 1 write CU each: more than a second's budget, ever.
    let sixty = "INSERT INTO metered SELECT g, 'x' FROM generate_series(1000, 1059) g";
    let (state, message) = refusal(client.execute(sixty, &[]).await);
    assert_eq!(state, "53400");
    assert!(
        message.contains("needs 60 write CU")
            && message.contains("\"metered\"'s reserved_write_cu = 50"),
        "{message}"
    );
    assert_eq!(count(&client, "metered").await, 0);

    // One-row INSERTs as fast as the connection goes: the budget runs out, every
    // refused one is absent and every acknowledged one present.
    let insert = client
        .prepare("INSERT INTO metered VALUES ($1, 'x')")
        .await
        .expect("prepare");
    let (mut accepted, mut refused) = (Vec::new(), 0u64);
    for id in 0..500i64 {
        match client.execute(&insert, &[&id]).await {
            Ok(_) => accepted.push(id),
            Err(e) => {
                let (state, message) = refusal(Err::<(), _>(e));
                assert_eq!(state, "53400");
                assert!(
                    message.contains("\"metered\" is over its reserved_write_cu = 50"),
                    "{message}"
                );
                refused += 1;
            }
        }
    }
    assert!(refused > 0, "500 INSERTs never ran out of 50 CU per second");
    let stored: Vec<i64> = client
        .query("SELECT id FROM metered ORDER BY id", &[])
        .await
        .expect("ids")
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(stored, accepted);

    // A transaction block is charged at COMMIT, all or nothing.
    let block = client
        .batch_execute(&format!("BEGIN; {sixty}; COMMIT"))
        .await;
    assert_eq!(refusal(block).0, "53400");
    assert_eq!(count(&client, "metered").await, accepted.len() as i64);

    // Raised, the limit counts from the next statement.
    client
        .batch_execute("ALTER TABLE metered SET (reserved_write_cu = 5000)")
        .await
        .expect("alter");
    client.execute(sixty, &[]).await.expect("60 rows fit now");

    let stats = simple_rows(
        &client,
        "SELECT reserved_write_cu, reserved_read_cu, write_cu_last_minute, throttled_writes \
         FROM pgwide.table_stats WHERE \"table\" = 'metered'",
    )
    .await;
    assert_eq!(
        stats,
        [[
            "5000".to_string(),
            "0".to_string(),
            (accepted.len() + 60).to_string(),
            (refused + 2).to_string(),
        ]]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_refused_midway_takes_back_the_chunks_it_wrote() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE loaded (id BIGINT PRIMARY KEY, note TEXT) \
             WITH (reserved_write_cu = 1000)",
        )
        .await
        .expect("create");
    // COPY writes chunks of 1000 rows: the first takes the whole budget, and the next
    // finds it empty unless a second passed; five chunks would need four seconds.
    let sink = client
        .copy_in("COPY loaded FROM STDIN")
        .await
        .expect("copy");
    futures::pin_mut!(sink);
    use futures::SinkExt;
    let data: String = (0..5000).map(|i| format!("{i}\tx\n")).collect();
    sink.send(bytes::Bytes::from(data))
        .await
        .expect("copy data");
    let (state, _) = refusal(sink.finish().await);
    assert_eq!(state, "53400");
    assert_eq!(count(&client, "loaded").await, 0);
    // The first chunk was written (1000 CU) and deleted again (1000 CU, which no
    // budget refuses); a chunk sent while the refused one was in flight may have
    // fitted, and was taken back too.
    let row = client
        .query_one(
            "SELECT write_cu_last_minute, throttled_writes FROM pgwide.table_stats \
             WHERE \"table\" = 'loaded'",
            &[],
        )
        .await
        .expect("stats");
    let (written, throttled): (i64, i64) = (row.get(0), row.get(1));
    assert!(
        written >= 2000 && written % 2000 == 0 && written < 10_000,
        "{written} CU written"
    );
    // The refused chunk, and maybe the one in flight beside it.
    assert!((1..=2).contains(&throttled), "{throttled} chunks refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_stop_when_the_read_budget_is_spent() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE looked_up (id BIGINT PRIMARY KEY, note TEXT) \
             WITH (reserved_read_cu = 5); \
             INSERT INTO looked_up VALUES (1, 'x')",
        )
        .await
        .expect("create");
    let get = client
        .prepare("SELECT note FROM looked_up WHERE id = 1")
        .await
        .expect("prepare");
    let mut refused = None;
    for _ in 0..200 {
        if let Err(e) = client.query(&get, &[]).await {
            refused = Some(refusal(Err::<(), _>(e)));
            break;
        }
    }
    let (state, message) = refused.expect("200 point gets never ran out of 5 CU per second");
    assert_eq!(state, "53400");
    assert!(
        message.contains("\"looked_up\" is over its reserved_read_cu = 5"),
        "{message}"
    );
    client
        .batch_execute("ALTER TABLE looked_up SET (reserved_read_cu = 0)")
        .await
        .expect("alter");
    assert_eq!(client.query(&get, &[]).await.expect("unlimited").len(), 1);
}
