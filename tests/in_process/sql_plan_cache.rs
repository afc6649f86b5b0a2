//! The simple-protocol plan cache over the wire: statements that differ only in their
//! literals share a plan, and the answers are the same as without the cache — after DDL,
//! for schema-free columns whose type comes from the literal, and for literals that do
//! not fit the cached plan's parameter types.

use crate::common;

use common::{code, simple_rows, TestServer};

#[tokio::test]
async fn cached_statements_answer_like_fresh_ones() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE t (id BIGINT, s TEXT, n BIGINT, PRIMARY KEY (id, s))")
        .await
        .unwrap();
    // The second and later INSERTs reuse the first one's template plan.
    for i in 1..=5 {
        client
            .simple_query(&format!(
                "INSERT INTO t (id, s, n, extra) VALUES ({i}, 'k''{i}', {}, {i})",
                i * 10
            ))
            .await
            .unwrap();
    }
    // A duplicate through the cached plan still fails as an INSERT must.
    let dup = client
        .simple_query("INSERT INTO t (id, s, n, extra) VALUES (1, 'k''1', 1, 1)")
        .await;
    assert_eq!(code(dup), "23505");
    for i in 1..=5 {
        let rows = simple_rows(
            &client,
            &format!("SELECT n, extra FROM t WHERE id = {i} AND s = 'k''{i}'"),
        )
        .await;
        assert_eq!(rows, vec![vec![(i * 10).to_string(), i.to_string()]]);
    }
    // The undeclared column got Integer values from the literals, not text.
    let types = simple_rows(
        &client,
        "SELECT DISTINCT value_type FROM versions.t WHERE id = 3 AND s = 'k''3' AND column_name = 'extra'",
    )
    .await;
    assert_eq!(types, vec![vec!["Integer"]]);
    // A literal the cached plan cannot take goes the uncached way, with its error.
    let bad = client
        .simple_query("SELECT n FROM t WHERE id = 'x' AND s = 'k''1'")
        .await;
    assert_eq!(code(bad), "22P02");
    // DDL invalidates: a column added later is returned by the same statement text.
    client
        .batch_execute("ALTER TABLE t ADD COLUMN note TEXT")
        .await
        .unwrap();
    client
        .simple_query("UPDATE t SET note = 'hi' WHERE id = 2 AND s = 'k''2'")
        .await
        .unwrap();
    let rows = simple_rows(&client, "SELECT * FROM t WHERE id = 2 AND s = 'k''2'").await;
    assert_eq!(rows[0].last().map(String::as_str), Some("hi"));
    // Positional ORDER BY stays positional.
    let rows = simple_rows(&client, "SELECT id, n FROM t WHERE id = 1 ORDER BY 1").await;
    assert_eq!(rows, vec![vec!["1", "10"]]);
}

/// A prepared statement (the extended protocol's Parse, as pgjdbc and node-postgres
/// keep them) is planned again after DDL, as PostgreSQL replans: an INSERT prepared
/// before its table was dropped and created again wrote to the dropped table, and
/// the acknowledged row was lost. A result that would change is 0A000.
#[tokio::test]
async fn prepared_statements_are_planned_again_after_ddl() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE pt (id INTEGER PRIMARY KEY, v TEXT)")
        .await
        .unwrap();
    let insert = client
        .prepare("INSERT INTO pt VALUES ($1, $2)")
        .await
        .unwrap();
    let select = client
        .prepare("SELECT * FROM pt WHERE id = $1")
        .await
        .unwrap();
    client.execute(&insert, &[&1i32, &"a"]).await.unwrap();
    client
        .batch_execute("DROP TABLE pt; CREATE TABLE pt (id INTEGER PRIMARY KEY, v TEXT)")
        .await
        .unwrap();
    assert_eq!(client.execute(&insert, &[&2i32, &"b"]).await.unwrap(), 1);
    assert_eq!(
        simple_rows(&client, "SELECT * FROM pt").await,
        vec![vec!["2".to_string(), "b".to_string()]],
        "the row is in the table as it is now"
    );
    let found = client.query(&select, &[&2i32]).await.unwrap();
    assert_eq!(found.len(), 1);
    client
        .batch_execute("ALTER TABLE pt ADD COLUMN w INTEGER")
        .await
        .unwrap();
    assert_eq!(code(client.query(&select, &[&2i32]).await), "0A000");
    client.batch_execute("DROP TABLE pt").await.unwrap();
    assert_eq!(code(client.execute(&insert, &[&3i32, &"c"]).await), "42P01");
}

/// A constant read in the session's zone is read again after `SET TIME ZONE`, in a
/// prepared statement and in a statement the simple protocol's cache holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_are_made_again_in_a_new_time_zone() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE tz (id INTEGER PRIMARY KEY, at TIMESTAMPTZ); \
             INSERT INTO tz VALUES (1, '2024-07-01 10:00+00')",
        )
        .await
        .unwrap();
    let literal = client
        .prepare("SELECT id FROM tz WHERE at = '2024-07-01 10:00'")
        .await
        .unwrap();
    assert_eq!(client.query(&literal, &[]).await.unwrap().len(), 1);
    let simple = "SELECT id FROM tz WHERE at = '2024-07-01 10:00'";
    assert_eq!(simple_rows(&client, simple).await.len(), 1);
    client
        .batch_execute("SET TIME ZONE 'Europe/Berlin'")
        .await
        .unwrap();
    assert!(
        client.query(&literal, &[]).await.unwrap().is_empty(),
        "10:00 in Berlin is 08:00 UTC"
    );
    assert!(simple_rows(&client, simple).await.is_empty());
    assert_eq!(
        simple_rows(&client, "SELECT id FROM tz WHERE at = '2024-07-01 12:00'").await,
        vec![vec!["1".to_string()]]
    );
    assert_eq!(
        simple_rows(&client, "SELECT at FROM tz").await,
        vec![vec!["2024-07-01 12:00:00+02".to_string()]]
    );
}

/// A literal that does not fit the cached template's parameter type is converted as
/// its own statement converts it: `4.5` into an integer column rounds half away from
/// zero (a numeric to an integer), after a template was cached from `42`. It was
/// bound as a float parameter and rounded to even (4), silently.
#[tokio::test]
async fn a_fraction_after_an_integer_rounds_as_postgresql_does() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE r (id BIGINT PRIMARY KEY, n BIGINT, m INTEGER)")
        .await
        .unwrap();
    for sql in [
        "INSERT INTO r VALUES (1, 42, 42)",
        "INSERT INTO r VALUES (2, 4.5, 4.5)",
        "INSERT INTO r VALUES (3, -2.5, 6.5)",
        "UPDATE r SET n = 7 WHERE id = 1",
        "UPDATE r SET n = 0.5 WHERE id = 1",
        // A schema-free column whose first value was an integer keeps the fraction
        // (docs/table-store.md §3).
        "INSERT INTO r (id, extra) VALUES (4, 42)",
        "INSERT INTO r (id, extra) VALUES (5, 4.5)",
    ] {
        client.simple_query(sql).await.expect(sql);
    }
    let rows = simple_rows(&client, "SELECT id, n, m, extra FROM r ORDER BY id").await;
    assert_eq!(
        rows,
        [
            ["1", "1", "42", "NULL"],
            ["2", "5", "5", "NULL"],
            ["3", "-3", "7", "NULL"],
            ["4", "NULL", "NULL", "42"],
            ["5", "NULL", "NULL", "4.5"],
        ]
    );
}
