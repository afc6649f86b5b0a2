//! Limits that protect the server from bad or hostile clients, over the wire: each one
//! refuses the offending client with the right SQLSTATE while another client, connected
//! before and after, goes on working. Maximum message size (54000), maximum connections
//! (53300), authentication timeout, `statement_timeout` (57014), and the idle timeouts
//! (25P03, 57P05).

use crate::common;

use common::{code, simple_rows, TestServer};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio_postgres::{Client, NoTls};

/// Long enough for any limit under test to fire on a loaded machine; never a timing
/// assertion, only a bound on a hang.
const PATIENCE: Duration = Duration::from_secs(30);

/// A client whose connection task is kept, to see the FATAL error that ends it.
async fn connect(server: &TestServer) -> (Client, JoinHandle<Result<(), tokio_postgres::Error>>) {
    let (client, connection) = tokio_postgres::connect(
        &format!(
            "host=127.0.0.1 port={} user=tester dbname=postgres",
            server.port
        ),
        NoTls,
    )
    .await
    .expect("connect");
    (client, tokio::spawn(connection))
}

/// The SQLSTATE that ended a connection.
async fn fatal_code(connection: JoinHandle<Result<(), tokio_postgres::Error>>) -> String {
    let ended = tokio::time::timeout(PATIENCE, connection)
        .await
        .expect("the server closes the connection")
        .expect("connection task");
    code(ended)
}

/// Proves the server still serves: a fresh client runs a query.
async fn still_serving(server: &TestServer) {
    let client = server.connect().await;
    assert_eq!(simple_rows(&client, "SELECT 41 + 1").await, [["42"]]);
}

/// A raw protocol client: startup packet for user `raw`, database `postgres`.
fn startup_packet() -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&196_608i32.to_be_bytes());
    for s in ["user", "raw", "database", "postgres", ""] {
        body.extend_from_slice(s.as_bytes());
        body.push(0);
    }
    let mut packet = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    packet.extend_from_slice(&body);
    packet
}

/// Reads backend messages until the server closes the socket; returns (type, body).
async fn read_until_closed(stream: &mut TcpStream) -> Vec<(u8, Vec<u8>)> {
    let mut bytes = Vec::new();
    tokio::time::timeout(PATIENCE, async {
        let mut chunk = [0u8; 4096];
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await
    .expect("the server closes the connection");
    let mut messages = Vec::new();
    let mut rest = &bytes[..];
    while rest.len() >= 5 {
        let len = i32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        let end = (1 + len).min(rest.len());
        messages.push((rest[0], rest[5..end].to_vec()));
        rest = &rest[end..];
    }
    messages
}

/// The SQLSTATE and message of an ErrorResponse body.
fn error_fields(body: &[u8]) -> (String, String) {
    let (mut code, mut message) = (String::new(), String::new());
    for field in body.split(|b| *b == 0) {
        match field.first() {
            Some(b'C') => code = String::from_utf8_lossy(&field[1..]).into_owned(),
            Some(b'M') => message = String::from_utf8_lossy(&field[1..]).into_owned(),
            _ => {}
        }
    }
    (code, message)
}

/// Connects and completes startup, consuming everything up to ReadyForQuery.
async fn raw_session(server: &TestServer) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", server.port))
        .await
        .expect("connect");
    stream.write_all(&startup_packet()).await.expect("startup");
    let mut seen = Vec::new();
    tokio::time::timeout(PATIENCE, async {
        let mut chunk = [0u8; 4096];
        // ReadyForQuery ('Z', length 5, status) ends the startup reply.
        while !seen.windows(6).any(|w| w == [b'Z', 0, 0, 0, 5, b'I']) {
            let n = stream.read(&mut chunk).await.expect("startup reply");
            assert!(n > 0, "server closed during startup");
            seen.extend_from_slice(&chunk[..n]);
        }
    })
    .await
    .expect("startup completes");
    stream
}

#[tokio::test]
async fn oversized_message_is_refused_without_reading_its_body() {
    let server = TestServer::start_with(|c| c.max_message_bytes = 64 * 1024).await;
    let bystander = server.connect().await;

    // A Query header announcing 1 GB, and then nothing: the server must answer from the
    // header alone, not wait for (or buffer) the body.
    let mut stream = raw_session(&server).await;
    let mut header = vec![b'Q'];
    header.extend_from_slice(&(1_000_000_000i32).to_be_bytes());
    stream.write_all(&header).await.expect("send header");
    let messages = read_until_closed(&mut stream).await;
    let (kind, body) = messages.last().expect("an error before closing");
    assert_eq!(*kind, b'E');
    let (sqlstate, message) = error_fields(body);
    assert_eq!(sqlstate, "54000", "{message}");
    assert!(message.contains("message too large"), "{message}");

    // A real client sending a query just over the limit is told so too.
    let (client, connection) = connect(&server).await;
    let big = format!("SELECT '{}'", "x".repeat(70 * 1024));
    assert_eq!(code(client.simple_query(&big).await), "54000");
    drop(connection);

    // Just under the limit is fine, and the others go on.
    let fits = format!("SELECT length('{}')", "x".repeat(60 * 1024));
    assert_eq!(simple_rows(&bystander, &fits).await, [["61440"]]);
    still_serving(&server).await;
}

#[tokio::test]
async fn oversized_copy_data_ends_the_copy_and_the_connection() {
    let server = TestServer::start_with(|c| c.max_message_bytes = 16 * 1024).await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE t (k INT PRIMARY KEY, v TEXT)")
        .await
        .expect("create");
    let mut stream = raw_session(&server).await;
    let mut query = b"COPY t FROM STDIN\0".to_vec();
    let mut message = vec![b'Q'];
    message.extend_from_slice(&((4 + query.len()) as i32).to_be_bytes());
    message.append(&mut query);
    // One CopyData chunk of 32 KiB: twice the limit.
    let row = format!("1\t{}\n", "y".repeat(32 * 1024));
    message.push(b'd');
    message.extend_from_slice(&((4 + row.len()) as i32).to_be_bytes());
    message.extend_from_slice(row.as_bytes());
    stream.write_all(&message).await.expect("send copy");
    let messages = read_until_closed(&mut stream).await;
    let (kind, body) = messages.last().expect("an error before closing");
    assert_eq!(*kind, b'E');
    assert_eq!(error_fields(body).0, "54000");
    // Nothing of the COPY was applied.
    assert_eq!(
        simple_rows(&client, "SELECT count(*) FROM t").await,
        [["0"]]
    );
    still_serving(&server).await;
}

#[tokio::test]
async fn connections_past_max_connections_are_refused_until_one_leaves() {
    let server = TestServer::start_with(|c| c.max_connections = 2).await;
    let first = server.connect().await;
    let second = server.connect().await;
    assert_eq!(code(server.connect_to("postgres").await), "53300");
    // The two admitted sessions are unaffected.
    assert_eq!(simple_rows(&first, "SELECT 1").await, [["1"]]);
    assert_eq!(simple_rows(&second, "SELECT 2").await, [["2"]]);
    drop(second);
    // The slot is freed when the connection ends, which the server sees shortly after.
    let mut admitted = None;
    for _ in 0..200 {
        match server.connect_to("postgres").await {
            Ok(client) => {
                admitted = Some(client);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    let third = admitted.expect("a slot frees up once a client leaves");
    assert_eq!(simple_rows(&third, "SELECT 3").await, [["3"]]);
}

#[tokio::test]
async fn clients_that_do_not_finish_startup_are_dropped_after_the_authentication_timeout() {
    let server = TestServer::start_with(|c| c.authentication_timeout_ms = 300).await;
    let bystander = server.connect().await;

    // Connects and sends nothing.
    let mut silent = TcpStream::connect(("127.0.0.1", server.port))
        .await
        .expect("connect");
    // Sends half a startup packet and stalls.
    let mut half = TcpStream::connect(("127.0.0.1", server.port))
        .await
        .expect("connect");
    let packet = startup_packet();
    half.write_all(&packet[..packet.len() / 2])
        .await
        .expect("half a packet");

    // Before the client has said anything (not even whether it wants TLS) the
    // connection is just closed, as PostgreSQL does; `read_until_closed` fails the test
    // if it stays open.
    let messages = read_until_closed(&mut silent).await;
    assert!(
        messages.iter().all(|(kind, _)| *kind == b'E'),
        "{messages:?}"
    );
    // Mid-startup, the client is told why.
    let messages = read_until_closed(&mut half).await;
    let (kind, body) = messages.last().expect("an error before closing");
    assert_eq!(*kind, b'E');
    let (sqlstate, message) = error_fields(body);
    assert_eq!(sqlstate, "08P01");
    assert_eq!(message, "canceling authentication due to timeout");
    // A client that completes startup in time is served, before and after.
    assert_eq!(simple_rows(&bystander, "SELECT 1").await, [["1"]]);
    still_serving(&server).await;
}

#[tokio::test]
async fn statement_timeout_cancels_the_statement_and_aborts_its_transaction() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    let other = server.connect().await;
    assert_eq!(
        code(client.simple_query("SET statement_timeout = 'soon'").await),
        "22023"
    );
    client
        .batch_execute("SET statement_timeout = '100ms'")
        .await
        .expect("set");
    assert_eq!(
        simple_rows(&client, "SHOW statement_timeout").await,
        [["100ms"]]
    );
    let error = client
        .simple_query("SELECT pg_sleep(30)")
        .await
        .expect_err("times out");
    let db = error.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "57014");
    assert_eq!(db.message(), "canceling statement due to statement timeout");
    // The session goes on; a fast statement is unaffected.
    assert_eq!(simple_rows(&client, "SELECT 1").await, [["1"]]);

    // The extended protocol too.
    assert_eq!(
        code(client.query("SELECT pg_sleep(30)", &[]).await),
        "57014"
    );

    // A statement that keeps streaming rows is stopped too, not only one that waits.
    assert_eq!(
        code(
            client
                .query("SELECT * FROM generate_series(1, 10000000000)", &[])
                .await
        ),
        "57014"
    );

    // In a transaction block the timeout aborts the transaction, as any error does.
    client
        .batch_execute("CREATE TABLE t (k INT PRIMARY KEY, v TEXT)")
        .await
        .expect("create");
    client
        .batch_execute("BEGIN; INSERT INTO t VALUES (1, 'staged')")
        .await
        .expect("begin");
    assert_eq!(
        code(client.simple_query("SELECT pg_sleep(30)").await),
        "57014"
    );
    assert_eq!(code(client.simple_query("SELECT 1").await), "25P02");
    client.batch_execute("ROLLBACK").await.expect("rollback");
    assert_eq!(
        simple_rows(&client, "SELECT count(*) FROM t").await,
        [["0"]]
    );

    // Another session has no timeout and sleeps to the end.
    assert_eq!(simple_rows(&other, "SELECT pg_sleep(0.2)").await, [[""]]);
    // Integer milliseconds, and 0 turns it off.
    client
        .batch_execute("SET statement_timeout = 1500")
        .await
        .expect("set");
    assert_eq!(
        simple_rows(&client, "SHOW statement_timeout").await,
        [["1500ms"]]
    );
    client
        .batch_execute("SET statement_timeout = 0")
        .await
        .expect("set");
    assert_eq!(simple_rows(&client, "SELECT pg_sleep(0.2)").await, [[""]]);
}

#[tokio::test]
async fn statement_timeout_from_the_config_is_every_session_default() {
    let server = TestServer::start_with(|c| c.statement_timeout_ms = 200).await;
    let client = server.connect().await;
    assert_eq!(
        simple_rows(&client, "SHOW statement_timeout").await,
        [["200ms"]]
    );
    assert_eq!(
        code(client.simple_query("SELECT pg_sleep(30)").await),
        "57014"
    );
    // A session may lift it, and RESET brings back the server's default.
    client
        .batch_execute("SET statement_timeout = 0")
        .await
        .expect("set");
    assert_eq!(simple_rows(&client, "SELECT pg_sleep(0.3)").await, [[""]]);
    client
        .batch_execute("RESET statement_timeout")
        .await
        .expect("reset");
    assert_eq!(
        simple_rows(&client, "SHOW statement_timeout").await,
        [["200ms"]]
    );
    still_serving(&server).await;
}

#[tokio::test]
async fn idle_in_transaction_timeout_ends_the_session_and_discards_its_writes() {
    let server = TestServer::start().await;
    let bystander = server.connect().await;
    bystander
        .batch_execute("CREATE TABLE t (k INT PRIMARY KEY, v TEXT)")
        .await
        .expect("create");
    let (client, connection) = connect(&server).await;
    client
        .batch_execute("SET idle_in_transaction_session_timeout = '1s'")
        .await
        .expect("set");
    // Outside a transaction it does not apply.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // Nor while a statement runs inside one.
    client
        .batch_execute("BEGIN; INSERT INTO t VALUES (1, 'staged')")
        .await
        .expect("begin");
    assert_eq!(simple_rows(&client, "SELECT pg_sleep(2)").await, [[""]]);
    // Idle in the transaction: the server ends the session.
    assert_eq!(fatal_code(connection).await, "25P03");
    assert!(client.is_closed());
    assert_eq!(
        simple_rows(&bystander, "SELECT count(*) FROM t").await,
        [["0"]]
    );
    still_serving(&server).await;
}

#[tokio::test]
async fn idle_session_timeout_ends_an_idle_session() {
    let server = TestServer::start_with(|c| c.idle_session_timeout_ms = 60_000).await;
    let bystander = server.connect().await;
    let (client, connection) = connect(&server).await;
    assert_eq!(
        simple_rows(&client, "SHOW idle_session_timeout").await,
        [["1min"]]
    );
    client
        .batch_execute("SET idle_session_timeout = '300ms'")
        .await
        .expect("set");
    assert_eq!(fatal_code(connection).await, "57P05");
    assert!(client.is_closed());
    assert_eq!(simple_rows(&bystander, "SELECT 1").await, [["1"]]);
    still_serving(&server).await;
}
