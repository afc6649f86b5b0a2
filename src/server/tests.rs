//! Wire-level tests: `serve` on 127.0.0.1:0 with a fake SQL layer, driven by
//! tokio-postgres and, where a behaviour is invisible to it (ReadyForQuery status,
//! ParameterStatus, flushing, malformed messages, text-format parameters), by a raw
//! protocol client defined here.

mod fake;
mod raw;

use super::{serve_with, Listeners, ServerOptions, UnixSocket};
use fake::FakeFactory;
use raw::Raw;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

async fn start_with(options: ServerOptions) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    start_on(listener.into(), options)
}

fn start_on(listeners: Listeners, options: ServerOptions) -> Server {
    let addr = listeners.tcp_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve_with(
        listeners,
        Arc::new(FakeFactory),
        options,
        async {
            let _ = stopped.await;
        },
    ));
    Server {
        addr,
        stop: Some(stop),
        task,
    }
}

async fn start() -> Server {
    start_with(ServerOptions::default()).await
}

async fn connect_db(addr: SocketAddr, db: &str) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::Config::new()
        .host(addr.ip().to_string())
        .port(addr.port())
        .user("tester")
        .dbname(db)
        .application_name("wire-tests")
        .connect(NoTls)
        .await?;
    tokio::spawn(connection);
    Ok(client)
}

async fn connect(addr: SocketAddr) -> Client {
    connect_db(addr, "postgres").await.unwrap()
}

fn code(e: &tokio_postgres::Error) -> &str {
    e.code().map(SqlState::code).unwrap_or("<none>")
}

fn rows(messages: &[SimpleQueryMessage]) -> Vec<Vec<Option<String>>> {
    messages
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).map(str::to_owned)).collect())
            }
            _ => None,
        })
        .collect()
}

fn completions(messages: &[SimpleQueryMessage]) -> Vec<u64> {
    messages
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::CommandComplete(n) => Some(*n),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn simple_query_runs_every_statement_with_text_results() {
    let server = start().await;
    let client = connect(server.addr).await;
    let messages = client
        .simple_query("SELECT fixed; INSERT INTO t VALUES (1); SELECT fixed")
        .await
        .unwrap();
    assert_eq!(completions(&messages), vec![2, 1, 2]);
    let rows = rows(&messages);
    assert_eq!(rows.len(), 4);
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        rows[0],
        vec![
            s("1"),
            s("alice"),
            s("1.5"),
            s("t"),
            s("\\x01ff"),
            s("-32768"),
            s("2147483647"),
            s("0.1")
        ]
    );
    assert_eq!(
        rows[1],
        vec![
            s("-9223372036854775808"),
            None,
            s("-Infinity"),
            s("f"),
            None,
            None,
            None,
            s("NaN")
        ]
    );
}

#[tokio::test]
async fn empty_query_gets_empty_query_response() {
    let server = start().await;
    let client = connect(server.addr).await;
    // tokio-postgres reports EmptyQueryResponse as a completion of 0 rows.
    let messages = client.simple_query("").await.unwrap();
    assert_eq!(completions(&messages), vec![0]);
    assert!(rows(&messages).is_empty());
    let mut raw = Raw::connect(server.addr, "postgres").await;
    for sql in ["", " ;; "] {
        raw.query(sql).await;
        assert_eq!(
            raw.kinds_until_ready().await,
            b"IZ".to_vec(),
            "query {sql:?}"
        );
    }
    // An empty statement in the extended protocol executes to EmptyQueryResponse too.
    raw.parse("", "", &[])
        .bind("", &[], &[])
        .execute(0)
        .sync()
        .send()
        .await;
    assert_eq!(raw.kinds_until_ready().await, b"12IZ".to_vec());
}

#[tokio::test]
async fn binary_parameters_and_results_round_trip_every_type() {
    let server = start().await;
    let client = connect(server.addr).await;
    let types = [
        Type::BOOL,
        Type::INT2,
        Type::INT4,
        Type::INT8,
        Type::FLOAT4,
        Type::FLOAT8,
        Type::TEXT,
        Type::BYTEA,
    ];
    let stmt = client
        .prepare_typed("echo $1 $2 $3 $4 $5 $6 $7 $8", &types)
        .await
        .unwrap();
    let bytes: &[u8] = &[0, 1, 254, 255];
    let row = client
        .query_one(
            &stmt,
            &[
                &true,
                &i16::MIN,
                &i32::MAX,
                &i64::MIN,
                &0.1f32,
                &f64::INFINITY,
                &"héllo",
                &bytes,
            ],
        )
        .await
        .unwrap();
    assert!(row.get::<_, bool>(0));
    assert_eq!(row.get::<_, i16>(1), i16::MIN);
    assert_eq!(row.get::<_, i32>(2), i32::MAX);
    assert_eq!(row.get::<_, i64>(3), i64::MIN);
    assert_eq!(row.get::<_, f32>(4), 0.1f32);
    assert_eq!(row.get::<_, f64>(5), f64::INFINITY);
    assert_eq!(row.get::<_, &str>(6), "héllo");
    assert_eq!(row.get::<_, &[u8]>(7), bytes);

    let row = client
        .query_one(
            &stmt,
            &[
                &false,
                &0i16,
                &-1i32,
                &i64::MAX,
                &f32::NAN,
                &-0.5f64,
                &"",
                &&b""[..],
            ],
        )
        .await
        .unwrap();
    assert!(!row.get::<_, bool>(0));
    assert_eq!(row.get::<_, i64>(3), i64::MAX);
    assert!(row.get::<_, f32>(4).is_nan());
    assert_eq!(row.get::<_, f64>(5), -0.5);
    assert_eq!(row.get::<_, &str>(6), "");
}

#[tokio::test]
async fn null_parameters_come_back_null() {
    let server = start().await;
    let client = connect(server.addr).await;
    let stmt = client
        .prepare_typed("echo $1 $2", &[Type::INT8, Type::TEXT])
        .await
        .unwrap();
    let row = client
        .query_one(&stmt, &[&None::<i64>, &Some("x")])
        .await
        .unwrap();
    assert_eq!(row.get::<_, Option<i64>>(0), None);
    assert_eq!(row.get::<_, Option<&str>>(1), Some("x"));
}

#[tokio::test]
async fn text_format_parameters_and_results() {
    let server = start().await;
    let mut raw = Raw::connect(server.addr, "postgres").await;
    let oids = [16, 21, 23, 20, 700, 701, 25, 17];
    let values = [
        "on",
        " -5",
        "42",
        "9000000000",
        "0.5",
        "-Infinity",
        "héllo",
        "\\x00ff",
    ];
    raw.parse("", "echo $1 $2 $3 $4 $5 $6 $7 $8", &oids)
        .bind("", &values.map(Some), &[0])
        .execute(0)
        .sync()
        .send()
        .await;
    let messages = raw.until_ready().await;
    let row = messages
        .iter()
        .find(|(k, _)| *k == b'D')
        .expect("a DataRow");
    let fields: Vec<String> = raw::data_row_fields(&row.1)
        .into_iter()
        .map(|f| String::from_utf8(f.unwrap()).unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "t",
            "-5",
            "42",
            "9000000000",
            "0.5",
            "-Infinity",
            "héllo",
            "\\x00ff"
        ]
    );
}

#[tokio::test]
async fn bad_parameter_bytes_are_22p02_and_skip_to_sync() {
    let server = start().await;
    let mut raw = Raw::connect(server.addr, "postgres").await;
    // A binary int4 of three bytes, then an Execute that must be skipped.
    raw.parse("", "echo $1", &[23])
        .bind_binary("", &[Some(vec![0, 0, 1])])
        .execute(0)
        .sync()
        .send()
        .await;
    let messages = raw.until_ready().await;
    let kinds: Vec<u8> = messages.iter().map(|m| m.0).collect();
    assert_eq!(kinds, b"1EZ".to_vec());
    assert_eq!(raw::error_code(&messages[1].1), "22P02");
    // Text that is not an integer; the connection is still fine afterwards.
    raw.parse("", "echo $1", &[23])
        .bind("", &[Some("12x")], &[])
        .sync()
        .send()
        .await;
    let messages = raw.until_ready().await;
    assert_eq!(raw::error_code(&messages[1].1), "22P02");
    raw.query("SELECT fixed").await;
    assert_eq!(raw.kinds_until_ready().await, b"TDDCZ".to_vec());
}

#[tokio::test]
async fn describe_reports_parameter_and_column_types() {
    let server = start().await;
    let client = connect(server.addr).await;
    let stmt = client.prepare("SELECT fixed").await.unwrap();
    let columns: Vec<(&str, &Type)> = stmt
        .columns()
        .iter()
        .map(|c| (c.name(), c.type_()))
        .collect();
    assert_eq!(
        columns,
        vec![
            ("id", &Type::INT8),
            ("name", &Type::TEXT),
            ("score", &Type::FLOAT8),
            ("ok", &Type::BOOL),
            ("data", &Type::BYTEA),
            ("small", &Type::INT2),
            ("mid", &Type::INT4),
            ("ratio", &Type::FLOAT4),
        ]
    );
    // Untyped parameters are inferred by the SQL layer (the fake says TEXT); an
    // unknown OID is treated as "infer".
    let stmt = client
        .prepare_typed("echo $1 $2", &[Type::UNKNOWN, Type::INT4])
        .await
        .unwrap();
    assert_eq!(stmt.params(), &[Type::TEXT, Type::INT4]);
    assert_eq!(stmt.columns().len(), 2);
    let stmt = client.prepare("INSERT INTO t VALUES ($1)").await.unwrap();
    assert!(
        stmt.columns().is_empty(),
        "a command is described as NoData"
    );
    assert_eq!(client.execute(&stmt, &[&"v"]).await.unwrap(), 1);
}

#[tokio::test]
async fn errors_carry_sqlstate_and_the_connection_survives() {
    let server = start().await;
    let client = connect(server.addr).await;
    let e = client.simple_query("SELECT bad").await.unwrap_err();
    assert_eq!(code(&e), "22023");
    assert_eq!(
        e.as_db_error().unwrap().message(),
        "bad value in \"SELECT bad\""
    );
    // An error stops the rest of a simple query.
    let e = client
        .batch_execute("SELECT bad; SET never = run")
        .await
        .unwrap_err();
    assert_eq!(code(&e), "22023");
    assert_eq!(
        code(&client.prepare("prepare_bad").await.unwrap_err()),
        "42601"
    );
    assert_eq!(
        code(&client.query("exec bad", &[]).await.unwrap_err()),
        "22023"
    );
    // A value that does not fit its column type is an error, not a panic.
    assert_eq!(
        code(&client.simple_query("mismatch").await.unwrap_err()),
        "42804"
    );
    assert_eq!(
        code(&client.query("mismatch", &[]).await.unwrap_err()),
        "42804"
    );
    let messages = client.simple_query("SELECT fixed").await.unwrap();
    assert_eq!(rows(&messages).len(), 2);
    assert_eq!(client.query("SELECT fixed", &[]).await.unwrap().len(), 2);
}

async fn status(raw: &mut Raw, sql: &str) -> u8 {
    raw.query(sql).await;
    raw.until_ready().await.last().unwrap().1[0]
}

#[tokio::test]
async fn ready_for_query_reports_transaction_status() {
    let server = start().await;
    let mut raw = Raw::connect(server.addr, "postgres").await;
    assert_eq!(status(&mut raw, "BEGIN").await, b'T');
    assert_eq!(status(&mut raw, "SELECT bad").await, b'E');
    assert_eq!(status(&mut raw, "SELECT fixed").await, b'E');
    assert_eq!(status(&mut raw, "ROLLBACK").await, b'I');
    // The extended protocol reports the same state at Sync.
    raw.query("BEGIN").await;
    raw.until_ready().await;
    raw.parse("", "SELECT bad", &[])
        .bind("", &[], &[])
        .execute(0)
        .sync()
        .send()
        .await;
    assert_eq!(raw.until_ready().await.last().unwrap().1[0], b'E');

    // tokio-postgres transactions work end to end.
    let mut client = connect(server.addr).await;
    let tx = client.transaction().await.unwrap();
    tx.execute("INSERT INTO t VALUES (1)", &[]).await.unwrap();
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn parameter_status_at_startup_and_after_set() {
    let server = start().await;
    let mut raw = Raw::connect(server.addr, "postgres").await;
    let param = |name: &str| raw.parameters.get(name).cloned().unwrap_or_default();
    assert_eq!(param("server_version"), "15.12");
    assert_eq!(param("server_version_num"), "150012");
    assert_eq!(param("client_encoding"), "UTF8");
    assert_eq!(param("DateStyle"), "ISO, MDY");
    assert_eq!(param("TimeZone"), "UTC");
    assert_eq!(param("integer_datetimes"), "on");
    assert_eq!(param("session_authorization"), "raw");
    assert_eq!(param("application_name"), "rawtest");
    raw.query("SET search_path = wide").await;
    let messages = raw.until_ready().await;
    let status = messages
        .iter()
        .find(|m| m.0 == b'S')
        .expect("a ParameterStatus");
    assert_eq!(&status.1[..], b"search_path\0wide\0");
}

#[tokio::test]
async fn only_sync_and_flush_write_to_the_socket() {
    let server = start().await;
    let mut raw = Raw::connect(server.addr, "postgres").await;
    raw.parse("", "echo $1", &[23])
        .bind("", &[Some("7")], &[])
        .describe_portal()
        .execute(0)
        .send()
        .await;
    assert!(
        raw.try_recv(Duration::from_millis(300)).await.is_none(),
        "nothing may be sent before Sync or Flush"
    );
    raw.flush_msg().send().await;
    assert_eq!(raw.kinds(5).await, b"12TDC".to_vec());
    assert!(raw.try_recv(Duration::from_millis(100)).await.is_none());
    raw.sync().send().await;
    assert_eq!(raw.kinds_until_ready().await, b"Z".to_vec());
}

#[tokio::test]
async fn the_unnamed_portal_is_replaced_by_each_bind_and_dropped_at_sync() {
    let server = start().await;
    let mut raw = Raw::connect(server.addr, "postgres").await;
    raw.parse("", "echo $1", &[23])
        .bind("", &[Some("7")], &[])
        .bind("", &[Some("8")], &[])
        .execute(0)
        .sync()
        .send()
        .await;
    let messages = raw.until_ready().await;
    let kinds: Vec<u8> = messages.iter().map(|m| m.0).collect();
    assert_eq!(kinds, b"122DCZ".to_vec());
    assert_eq!(
        raw::data_row_fields(&messages[3].1),
        vec![Some(b"8".to_vec())],
        "the second Bind's parameter"
    );
    // No transaction block is open, so Sync ended the portal.
    raw.execute(0).sync().send().await;
    let messages = raw.until_ready().await;
    assert_eq!(messages[0].0, b'E');
    assert_eq!(raw::error_code(&messages[0].1), "34000");
}

#[tokio::test]
async fn execute_row_limit_suspends_the_portal() {
    let server = start().await;
    let mut client = connect(server.addr).await;
    let tx = client.transaction().await.unwrap();
    let stmt = tx.prepare("many").await.unwrap();
    let portal = tx.bind(&stmt, &[]).await.unwrap();
    let mut batches = Vec::new();
    for _ in 0..4 {
        let rows = tx.query_portal(&portal, 2).await.unwrap();
        batches.push(rows.iter().map(|r| r.get::<_, i64>(0)).collect::<Vec<_>>());
    }
    assert_eq!(batches, vec![vec![1, 2], vec![3, 4], vec![5], vec![]]);
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn cancel_request_stops_the_running_statement() {
    let server = start().await;
    let client = connect(server.addr).await;
    for sql in ["sleep", "slow"] {
        let token = client.cancel_token();
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            token.cancel_query(NoTls).await
        });
        let started = std::time::Instant::now();
        let e = client.query(sql, &[]).await.unwrap_err();
        assert_eq!(code(&e), "57014", "{sql}");
        assert!(started.elapsed() < Duration::from_secs(10));
        canceller.await.unwrap().unwrap();
    }
    assert_eq!(client.query("SELECT fixed", &[]).await.unwrap().len(), 2);
}

#[tokio::test]
async fn missing_database_fails_startup_with_3d000() {
    let server = start().await;
    let e = connect_db(server.addr, "missing").await.unwrap_err();
    assert_eq!(code(&e), "3D000");
    assert_eq!(e.as_db_error().unwrap().severity(), "FATAL");
    connect(server.addr).await;
}

#[tokio::test]
async fn malformed_message_closes_only_that_connection() {
    let server = start().await;
    let bystander = connect(server.addr).await;
    let malformed: [&[u8]; 3] = [
        b"x\0\0\0\x04",           // unknown message type
        b"B\0\0\0\x08\0\0\0\x05", // Bind with a truncated parameter list
        b"Q\0\0\0\x08abcd",       // Query without its terminating NUL
    ];
    for bytes in malformed {
        let mut raw = Raw::connect(server.addr, "postgres").await;
        raw.send_bytes(bytes).await;
        let (kind, body) = raw.recv().await.expect("an ErrorResponse");
        assert_eq!(kind, b'E');
        assert_eq!(raw::error_code(&body), "08P01");
        assert!(
            raw.recv().await.is_none(),
            "connection closed after {bytes:?}"
        );
    }
    assert_eq!(bystander.query("SELECT fixed", &[]).await.unwrap().len(), 2);
}

#[tokio::test]
async fn connections_beyond_the_limit_are_refused() {
    let server = start_with(ServerOptions {
        max_connections: 1,
        ..ServerOptions::default()
    })
    .await;
    let first = connect(server.addr).await;
    let refused = connect_db(server.addr, "postgres").await.unwrap_err();
    assert_eq!(code(&refused), "53300");
    drop(first);
}

#[tokio::test]
async fn shutdown_finishes_running_statements_then_closes() {
    let mut server = start().await;
    let client = connect(server.addr).await;
    let idle = connect(server.addr).await;
    let running =
        tokio::spawn(async move { client.simple_query("nap").await.map(|m| completions(&m)) });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let _ = server.stop.take().unwrap().send(());
    let served = tokio::time::timeout(Duration::from_secs(5), &mut server.task).await;
    assert!(served.expect("serve returns promptly").unwrap().is_ok());
    // The statement that was running completed; the idle session was terminated.
    assert_eq!(running.await.unwrap().unwrap(), vec![1]);
    assert!(idle.simple_query("SELECT fixed").await.is_err());
    assert!(tokio::net::TcpStream::connect(server.addr).await.is_err());
}

#[tokio::test]
async fn unix_socket_clients_query_and_cancel_and_its_file_goes_at_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = tcp.local_addr().unwrap().port();
    let socket = UnixSocket::bind(dir.path(), port).unwrap();
    let path = socket.path().to_owned();
    assert_eq!(path, dir.path().join(format!(".s.PGSQL.{port}")));
    let mut server = start_on(
        Listeners::from(tcp).with_unix_socket(socket),
        ServerOptions::default(),
    );
    let (client, connection) = tokio_postgres::Config::new()
        .host_path(dir.path())
        .port(port)
        .user("tester")
        .dbname("postgres")
        .connect(NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    // Both protocols over the socket, and TCP clients alongside.
    assert_eq!(client.query("SELECT fixed", &[]).await.unwrap().len(), 2);
    let messages = client.simple_query("SELECT fixed").await.unwrap();
    assert_eq!(rows(&messages).len(), 2);
    let tcp_client = connect(server.addr).await;
    assert_eq!(
        tcp_client.query("SELECT fixed", &[]).await.unwrap().len(),
        2
    );
    // A CancelRequest comes through the socket too.
    let token = client.cancel_token();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        token.cancel_query(NoTls).await
    });
    let e = client.query("sleep", &[]).await.unwrap_err();
    assert_eq!(code(&e), "57014");
    canceller.await.unwrap().unwrap();

    let _ = server.stop.take().unwrap().send(());
    let served = tokio::time::timeout(Duration::from_secs(5), &mut server.task).await;
    assert!(served.expect("serve returns promptly").unwrap().is_ok());
    assert!(!path.exists(), "the socket file is removed at shutdown");
}
