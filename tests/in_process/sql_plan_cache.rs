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
