//! DataFusion queries over the extended protocol: parameters inferred from the plan and
//! bound at execution, binary results of the types PostgreSQL gives (count(*) is
//! bigint), and the memory limit's clear error.

use crate::common;

use common::{code, simple_rows, TestServer};

async fn orders(client: &tokio_postgres::Client) {
    client
        .batch_execute(
            "CREATE TABLE o (c BIGINT, n BIGINT, amount DOUBLE PRECISION, tag TEXT, PRIMARY KEY (c, n));
             INSERT INTO o VALUES (1, 1, 10, 'x'), (1, 2, 20, 'y'), (2, 1, 5, 'x'), (3, 1, 1, 'z');",
        )
        .await
        .expect("setup");
}

#[tokio::test]
async fn parameters_are_inferred_and_bound() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    orders(&client).await;
    let stmt = client
        .prepare("SELECT tag, count(*), sum(amount) FROM o WHERE c = $1 GROUP BY tag ORDER BY tag")
        .await
        .expect("prepare");
    assert_eq!(stmt.params(), &[tokio_postgres::types::Type::INT8]);
    assert_eq!(
        stmt.columns()[1].type_(),
        &tokio_postgres::types::Type::INT8
    );
    let rows = client.query(&stmt, &[&1i64]).await.expect("query");
    let got: Vec<(String, i64, f64)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    assert_eq!(got, vec![("x".into(), 1, 10.0), ("y".into(), 1, 20.0)]);
    // The same statement again with another value: bound at execution, not planning.
    let rows = client.query(&stmt, &[&2i64]).await.expect("query");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<_, i64>(1), 1);
    // A text parameter compared with a text column, in a join.
    let rows = client
        .query(
            "SELECT a.n, b.n FROM o a JOIN o b ON a.c = b.c AND a.n < b.n WHERE a.tag = $1",
            &[&"x"],
        )
        .await
        .expect("join");
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].get::<_, i64>(0), rows[0].get::<_, i64>(1)), (1, 2));
}

#[tokio::test]
async fn errors_carry_sqlstates_over_the_extended_protocol() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    orders(&client).await;
    assert_eq!(
        code(client.prepare("SELECT count(*) FROM missing").await),
        "42P01"
    );
    assert_eq!(
        code(client.prepare("SELECT count(nope) FROM o").await),
        "42703"
    );
    assert_eq!(
        code(client.query("SELECT sum(c) / 0 FROM o", &[]).await),
        "22012"
    );
    // The session still works afterwards.
    let row = client
        .query_one("SELECT count(*) FROM o", &[])
        .await
        .expect("count");
    assert_eq!(row.get::<_, i64>(0), 4);
}

#[tokio::test]
async fn a_query_over_the_memory_limit_fails_cleanly() {
    let server = TestServer::start_with(|config| config.query_memory_mb = 1).await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE big (id BIGINT, payload TEXT, PRIMARY KEY (id))")
        .await
        .expect("create");
    let payload = "p".repeat(200);
    for chunk in 0..20 {
        let values: Vec<String> = (0..500)
            .map(|i| format!("({}, '{payload}{}')", chunk * 500 + i, i % 100))
            .collect();
        client
            .batch_execute(&format!("INSERT INTO big VALUES {}", values.join(", ")))
            .await
            .expect("insert");
    }
    // The hash join's build side (2 MB of payloads) cannot spill.
    let result = client
        .query(
            "SELECT count(*) FROM big a JOIN big b ON a.payload = b.payload AND a.id <> b.id",
            &[],
        )
        .await;
    assert_eq!(code(result), "53200");
    // Small queries still run in the same pool.
    let row = client
        .query_one("SELECT count(*) FROM big WHERE id < 10", &[])
        .await
        .expect("small query");
    assert_eq!(row.get::<_, i64>(0), 10);
}

/// Latency of a point get on the fast path and through DataFusion (same GetRow), to see
/// what DataFusion's planning costs: `cargo test --release --test in_process --
/// sql_datafusion::point_get_latency --ignored --nocapture`.
#[tokio::test]
#[ignore]
async fn point_get_latency() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    orders(&client).await;
    let fast = client
        .prepare("SELECT amount FROM o WHERE c = $1 AND n = $2")
        .await
        .expect("fast");
    let datafusion = client
        .prepare("SELECT abs(amount) FROM o WHERE c = $1 AND n = $2")
        .await
        .expect("datafusion");
    for (name, stmt) in [("fast path", &fast), ("DataFusion", &datafusion)] {
        let runs = 2000u32;
        let start = std::time::Instant::now();
        for _ in 0..runs {
            let rows = client.query(stmt, &[&1i64, &2i64]).await.expect("get");
            assert_eq!(rows.len(), 1);
        }
        println!(
            "{name}: {:?} per prepared point get",
            start.elapsed() / runs
        );
        let sql = if name == "fast path" {
            "SELECT amount FROM o WHERE c = 1 AND n = 2"
        } else {
            "SELECT abs(amount) FROM o WHERE c = 1 AND n = 2"
        };
        let start = std::time::Instant::now();
        for _ in 0..runs {
            client.simple_query(sql).await.expect("simple");
        }
        println!(
            "{name}: {:?} per simple-query point get",
            start.elapsed() / runs
        );
    }
}

/// A client whose NOTICEs arrive on a channel.
async fn connect_with_notices(
    server: &TestServer,
) -> (
    tokio_postgres::Client,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    use futures::StreamExt;
    let (client, mut connection) = tokio_postgres::connect(
        &format!(
            "host=127.0.0.1 port={} user=tester dbname=postgres",
            server.port
        ),
        tokio_postgres::NoTls,
    )
    .await
    .expect("connect");
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let tokio_postgres::AsyncMessage::Notice(notice) = message {
                let _ = tx.send(format!("{} {}", notice.code().code(), notice.message()));
            }
        }
    });
    (client, rx)
}

#[tokio::test]
async fn a_cell_of_another_type_is_null_with_a_notice_naming_row_and_column() {
    use pgwide::engine::{ColumnOp, Condition, PkValue, RowChange, RowWrite, Value};
    let server = TestServer::start().await;
    let (client, mut notices) = connect_with_notices(&server).await;
    client
        .batch_execute(
            "CREATE TABLE stock (id BIGINT PRIMARY KEY, qty BIGINT, label TEXT);
             INSERT INTO stock VALUES (1, 5, 'a'), (3, 7, 'c');",
        )
        .await
        .expect("setup");
    // Another writer (a Table Store SDK, say) stores a String where SQL declared BIGINT.
    let engine = server.gateway.engine();
    let table = engine.table("postgres", "stock").expect("table");
    engine
        .put_row(
            &table,
            RowWrite {
                pk: vec![PkValue::Integer(2)],
                change: RowChange::Put(vec![
                    ColumnOp::Put {
                        column: "qty".into(),
                        value: Value::String("lots".into()),
                        version: None,
                    },
                    ColumnOp::Put {
                        column: "label".into(),
                        value: Value::Integer(42),
                        version: None,
                    },
                ]),
                condition: Condition::IGNORE,
                return_row: false,
            },
        )
        .await
        .expect("engine write");

    // The fast path: the odd cell is NULL, the lossless one (Integer as text) converts.
    let row = client
        .query_one("SELECT qty, label FROM stock WHERE id = 2", &[])
        .await
        .expect("point get");
    assert_eq!(row.get::<_, Option<i64>>(0), None);
    assert_eq!(row.get::<_, Option<String>>(1).as_deref(), Some("42"));
    let notice = notices.recv().await.expect("a notice");
    assert!(
        notice.starts_with("01000")
            && notice.contains("\"qty\"")
            && notice.contains("(id)=(2)")
            && notice.contains("String"),
        "{notice}"
    );

    // Through DataFusion the aggregate still answers; the notice comes again.
    let row = client
        .query_one("SELECT sum(qty)::bigint, count(*) FROM stock", &[])
        .await
        .expect("aggregate");
    assert_eq!(row.get::<_, Option<i64>>(0), Some(12));
    assert_eq!(row.get::<_, i64>(1), 3);
    let notice = notices.recv().await.expect("a notice");
    assert!(notice.contains("(id)=(2)"), "{notice}");
    // Rows without odd cells leave no notice behind.
    client
        .query_one("SELECT qty FROM stock WHERE id = 1", &[])
        .await
        .expect("clean read");
    assert!(notices.try_recv().is_err());
}

/// now() and current_timestamp are the transaction's start, as in PostgreSQL: the same
/// in every statement of a block, while clock_timestamp() moves on. They once failed in
/// every query with XX000.
#[tokio::test]
async fn clock_functions_report_the_transactions_start() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    let row = simple_rows(
        &client,
        "SELECT now() = current_timestamp, now() = transaction_timestamp(), \
         statement_timestamp() >= now(), clock_timestamp() >= now(), \
         current_date = CAST(now() AS date), now(), localtimestamp",
    )
    .await;
    assert_eq!(row[0][..5], ["t", "t", "t", "t", "t"], "{row:?}");
    // PostgreSQL's text forms: a space before the time, microseconds at most, +00.
    let stamp = &row[0][5];
    let (date, time) = stamp.split_once(' ').expect("date and time");
    assert_eq!(date.len(), 10, "{stamp}");
    assert!(time.ends_with("+00") && time.len() <= 18, "{stamp}");
    assert!(
        !row[0][6].contains('+'),
        "localtimestamp has no zone: {row:?}"
    );

    client.batch_execute("BEGIN").await.expect("begin");
    let first = simple_rows(&client, "SELECT now(), clock_timestamp()").await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let second = simple_rows(&client, "SELECT now(), clock_timestamp()").await;
    client.batch_execute("COMMIT").await.expect("commit");
    assert_eq!(first[0][0], second[0][0], "now() is fixed for the block");
    assert_ne!(first[0][1], second[0][1], "clock_timestamp() moves");
    let after = simple_rows(&client, "SELECT now()").await;
    assert_ne!(
        after[0][0], first[0][0],
        "the next transaction has its own now()"
    );

    let zone = client
        .simple_query("SHOW TIME ZONE")
        .await
        .expect("SHOW TIME ZONE");
    let tokio_postgres::SimpleQueryMessage::Row(row) = &zone[1] else {
        panic!("no row: {zone:?}");
    };
    assert_eq!(row.columns()[0].name(), "TimeZone");
    assert_eq!(row.get(0), Some("UTC"));
}

/// What `psql "options=-c TimeZone=..."` and psycopg's `options=` send: the session
/// starts in that zone, and a zone no one knows refuses the connection (22023) rather
/// than showing every timestamptz in a zone the client did not ask for.
#[tokio::test]
async fn the_startup_options_set_the_zone_and_an_unknown_one_refuses_the_connection() {
    let server = TestServer::start().await;
    let connect = |options: &str| {
        let mut config = tokio_postgres::Config::new();
        config
            .host("127.0.0.1")
            .port(server.port)
            .user("tester")
            .dbname("postgres")
            .options(options);
        async move {
            let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
            tokio::spawn(connection);
            Ok::<_, tokio_postgres::Error>(client)
        }
    };
    let client = connect("-c TimeZone=asia/kolkata").await.expect("connect");
    assert_eq!(
        simple_rows(
            &client,
            "SELECT current_setting('TimeZone'), timestamptz '2024-01-01 00:00Z'"
        )
        .await,
        [["Asia/Kolkata", "2024-01-01 05:30:00+05:30"]]
    );
    assert_eq!(code(connect("-c TimeZone=Mars/Olympus").await), "22023");
    assert_eq!(code(connect("-c statement_timeout=soon").await), "22023");
}

/// Arrays of intervals and times print their elements as PostgreSQL's output functions
/// do (`1 day`, `02:00:00`, `13:30:00.25`), not in Arrow's forms (`1 days`), and an
/// interval array literal reads every interval form a lone interval does. The expected
/// texts are PostgreSQL 15's for the same statements.
#[tokio::test]
async fn interval_and_time_arrays_print_as_postgres_prints_them() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    for (sql, expected) in [
        (
            "SELECT '{1 day, 2 hours, \"1 mon 3 days 04:05:06.5\", NULL}'::interval[]",
            "{\"1 day\",02:00:00,\"1 mon 3 days 04:05:06.5\",NULL}",
        ),
        (
            "SELECT array[interval '1 year', interval '-1 day']",
            "{\"1 year\",\"-1 days\"}",
        ),
        (
            "SELECT '{12:00, 13:30:00.25}'::time[]",
            "{12:00:00,13:30:00.25}",
        ),
        (
            "SELECT array_agg(d) FROM (VALUES (interval '1 day'), (interval '3 hours')) v(d)",
            "{\"1 day\",03:00:00}",
        ),
    ] {
        assert_eq!(simple_rows(&client, sql).await, [[expected]], "{sql}");
    }
}
