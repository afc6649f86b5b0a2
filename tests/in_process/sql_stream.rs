//! A table's stream read over the wire: `stream.<table>` has one row per committed
//! change (from INSERT, UPDATE, an increment, DELETE, COPY and a transaction block), a
//! consumer resumes after the last position it read with a parameter, LISTEN on
//! `stream.<table>` wakes it when records arrive, and a stream turned on for a table
//! with rows begins at the next change.

use crate::common::{code, simple_rows, TestServer};
use crate::sql_notifications::listener;
use std::time::{Duration, Instant};

const RESUME: &str = "SELECT position, operation, id, columns::text FROM stream.book \
                      WHERE position > $1 ORDER BY position LIMIT 1000";

/// Rows of `RESUME` after `position`, as text.
async fn read_after(client: &tokio_postgres::Client, position: i64) -> Vec<Vec<String>> {
    client
        .query(RESUME, &[&position])
        .await
        .expect("the stream reads")
        .iter()
        .map(|row| {
            vec![
                row.get::<_, i64>(0).to_string(),
                row.get::<_, String>(1),
                row.get::<_, i64>(2).to_string(),
                row.get::<_, String>(3),
            ]
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_committed_change_is_one_record_in_order() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE book (id BIGINT PRIMARY KEY, title TEXT, n INTEGER, price NUMERIC(6,2)) \
             WITH (stream_enabled = true); \
             INSERT INTO book VALUES (1, 'Dune', 1, 9.50), (2, 'Emma', NULL, NULL); \
             UPDATE book SET n = n + 1 WHERE id = 1; \
             DELETE FROM book WHERE id = 2; \
             BEGIN; INSERT INTO book (id, title) VALUES (3, 'Ulysses'); \
             UPDATE book SET title = NULL WHERE id = 1; COMMIT; \
             BEGIN; INSERT INTO book (id) VALUES (4); ROLLBACK",
        )
        .await
        .expect("writes");
    let sink = client
        .copy_in("COPY book (id, title) FROM STDIN")
        .await
        .expect("copy");
    futures::pin_mut!(sink);
    use futures::SinkExt;
    sink.send(bytes::Bytes::from_static(b"5\tKim\n"))
        .await
        .expect("copy data");
    sink.finish().await.expect("copy ends");

    let rows = read_after(&client, 0).await;
    let positions: Vec<i64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{rows:?}");
    let shape: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[1].as_str(), r[2].as_str()))
        .collect();
    // The rolled-back INSERT of 4 left no record.
    assert_eq!(
        shape,
        [
            ("PUT", "1"),
            ("PUT", "2"),
            ("UPDATE", "1"),
            ("DELETE", "2"),
            ("PUT", "3"),
            ("UPDATE", "1"),
            ("PUT", "5")
        ]
    );
    assert!(
        rows[0][3].contains(r#""op": "PUT", "value": "9.50", "column": "price""#),
        "{}",
        rows[0][3]
    );
    assert!(
        rows[2][3].contains(r#""value": 2, "column": "n""#),
        "{}",
        rows[2][3]
    );
    assert!(
        rows[5][3].contains(r#""op": "DELETE_ALL_VERSIONS", "column": "title""#),
        "{}",
        rows[5][3]
    );
    // A consumer resumes after the last position it processed.
    let resumed = read_after(&client, positions[3]).await;
    assert_eq!(resumed, rows[4..].to_vec());
    // The relation's types, as a driver sees them.
    let types = simple_rows(
        &client,
        "SELECT pg_typeof(position)::text, pg_typeof(commit_time)::text, \
         pg_typeof(id)::text, pg_typeof(columns)::text FROM stream.book LIMIT 1",
    )
    .await;
    assert_eq!(
        types,
        [["bigint", "timestamp with time zone", "bigint", "jsonb"]]
    );
    // Records come in position order, so a consumer's page needs no sort and stops
    // reading at its LIMIT.
    let plan = simple_rows(&client, &format!("EXPLAIN {}", RESUME.replace("$1", "2"))).await;
    let plan: Vec<&str> = plan.iter().map(|row| row[0].as_str()).collect();
    assert!(
        plan.iter().all(|line| !line.contains("Sort"))
            && plan.iter().any(|line| line.contains("fetch=1000")),
        "{plan:#?}"
    );
    let page = read_after(&client, 0).await;
    let limited = simple_rows(
        &client,
        "SELECT position FROM stream.book WHERE position > 0 ORDER BY position LIMIT 2",
    )
    .await;
    assert_eq!(limited, [[page[0][0].clone()], [page[1][0].clone()]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_wakes_a_consumer_when_records_arrive() {
    let server = TestServer::start().await;
    let writer = server.connect().await;
    writer
        .batch_execute(
            "CREATE TABLE book (id BIGINT PRIMARY KEY, title TEXT) WITH (stream_enabled = true)",
        )
        .await
        .expect("table");
    let (consumer, mut notifications) = listener(&server).await;
    consumer
        .batch_execute("LISTEN \"stream.book\"")
        .await
        .expect("listen");
    let committed = Instant::now();
    writer
        .batch_execute("INSERT INTO book VALUES (1, 'Dune')")
        .await
        .expect("insert");
    let woken = tokio::time::timeout(Duration::from_secs(10), notifications.recv())
        .await
        .expect("woken")
        .expect("a notification");
    println!(
        "LISTEN woke the consumer {:?} after the INSERT was acknowledged",
        committed.elapsed()
    );
    assert_eq!(woken.channel(), "stream.book");
    let position: i64 = woken.payload().parse().expect("a position");
    let rows = read_after(&consumer, position - 1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][2], "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_turned_on_begins_at_the_next_change() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE book (id BIGINT PRIMARY KEY, title TEXT); \
             INSERT INTO book VALUES (1, 'Dune'), (2, 'Emma')",
        )
        .await
        .expect("table with rows");
    assert_eq!(
        code(client.query(RESUME, &[&0i64]).await),
        "55000",
        "a table without a stream says so"
    );
    client
        .batch_execute(
            "ALTER TABLE book SET (stream_enabled = true); \
             UPDATE book SET title = 'Emma.' WHERE id = 2",
        )
        .await
        .expect("stream on");
    let rows = read_after(&client, 0).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0][1].as_str(), rows[0][2].as_str()), ("UPDATE", "2"));
    let last: i64 = rows[0][0].parse().unwrap();

    // Off, a change, on again: a consumer that had read the stream must learn that
    // it missed that change.
    client
        .batch_execute(
            "ALTER TABLE book SET (stream_enabled = false); \
             DELETE FROM book WHERE id = 1; \
             ALTER TABLE book SET (stream_enabled = true)",
        )
        .await
        .expect("off and on");
    assert_eq!(code(client.query(RESUME, &[&last]).await), "55000");
    // So must one after TRUNCATE, which records no deletes.
    client
        .batch_execute("INSERT INTO book VALUES (3, 'Kim')")
        .await
        .expect("insert");
    let rows = simple_rows(&client, "SELECT max(position) FROM stream.book").await;
    let last: i64 = rows[0][0].parse().unwrap();
    client
        .batch_execute("TRUNCATE book")
        .await
        .expect("truncate");
    assert_eq!(code(client.query(RESUME, &[&last]).await), "55000");
    // The error names where to go on from; a consumer that starts over there reads on.
    assert!(read_after(&client, last + 1).await.is_empty());
    client
        .batch_execute("INSERT INTO book VALUES (4, 'Vera')")
        .await
        .expect("insert");
    assert_eq!(read_after(&client, last + 1).await.len(), 1);
}

/// A foreign key's cascade changes the child's rows: a streamed child records them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cascade_is_recorded_in_the_childs_stream() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE author (id BIGINT PRIMARY KEY); \
             CREATE TABLE book (id BIGINT PRIMARY KEY, \
                 author_id BIGINT REFERENCES author (id) ON DELETE CASCADE) \
             WITH (stream_enabled = true); \
             INSERT INTO author VALUES (1), (2); \
             INSERT INTO book VALUES (10, 1), (11, 2); \
             DELETE FROM author WHERE id = 1",
        )
        .await
        .expect("cascade");
    let rows = read_after(&client, 0).await;
    let shape: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[1].as_str(), r[2].as_str()))
        .collect();
    assert_eq!(shape, [("PUT", "10"), ("PUT", "11"), ("DELETE", "10")]);
}
