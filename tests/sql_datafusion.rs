//! DataFusion queries over the extended protocol: parameters inferred from the plan and
//! bound at execution, binary results of the types PostgreSQL gives (count(*) is
//! bigint), and the memory limit's clear error.

mod common;

use common::{code, TestServer};

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
/// what DataFusion's planning costs: `cargo test --release --test sql_datafusion --
/// --ignored --nocapture`.
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
