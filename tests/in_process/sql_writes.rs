//! Every row of the writes table of docs/table-store.md §12 over the wire, in the simple
//! protocol (text results) and the extended protocol (tokio-postgres binds parameters and
//! reads binary results).

use crate::common;

use common::{code, simple_rows, TestServer};

async fn setup(client: &tokio_postgres::Client) {
    client
        .batch_execute(
            "CREATE TABLE items (id TEXT, n BIGINT, price DOUBLE PRECISION, note TEXT, PRIMARY KEY (id)) WITH (max_versions = 3)",
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn insert_is_atomic_and_duplicates_are_23505() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    let tag = client
        .execute("INSERT INTO items (id, n) VALUES ('a', 1), ('b', 2)", &[])
        .await
        .unwrap();
    assert_eq!(tag, 2);
    // One existing key fails the whole statement: 'c' must not be stored.
    let err = client
        .execute("INSERT INTO items (id, n) VALUES ('c', 3), ('a', 9)", &[])
        .await;
    assert_eq!(code(err), "23505");
    assert!(simple_rows(&client, "SELECT id FROM items WHERE id = 'c'")
        .await
        .is_empty());
    // A duplicate inside one statement is a conflict too.
    assert_eq!(
        code(
            client
                .execute("INSERT INTO items (id) VALUES ('d'), ('d')", &[])
                .await
        ),
        "23505"
    );
    assert_eq!(
        simple_rows(&client, "SELECT id, n FROM items").await,
        vec![vec!["a", "1"], vec!["b", "2"]]
    );
    // Extended protocol with parameters.
    let stmt = client
        .prepare("INSERT INTO items (id, n, price) VALUES ($1, $2, $3)")
        .await
        .unwrap();
    client
        .execute(&stmt, &[&"e", &5i64, &2.5f64])
        .await
        .unwrap();
    assert_eq!(
        code(client.execute(&stmt, &[&"e", &6i64, &1.0f64]).await),
        "23505"
    );
    let row = client
        .query_one("SELECT n, price FROM items WHERE id = $1", &[&"e"])
        .await
        .unwrap();
    assert_eq!((row.get::<_, i64>(0), row.get::<_, f64>(1)), (5, 2.5));
}

#[tokio::test]
async fn on_conflict_do_nothing_and_do_update_merge() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    client
        .batch_execute("INSERT INTO items (id, n, note) VALUES ('a', 1, 'keep')")
        .await
        .unwrap();
    let n = client
        .execute(
            "INSERT INTO items (id, n) VALUES ('a', 7), ('b', 8) ON CONFLICT DO NOTHING",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(n, 1, "only 'b' is new");
    assert_eq!(
        simple_rows(&client, "SELECT n FROM items WHERE id = 'a'").await,
        vec![vec!["1"]]
    );
    client
        .execute("INSERT INTO items (id, n) VALUES ('a', 42) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n", &[])
        .await
        .unwrap();
    // The merge keeps the other columns.
    assert_eq!(
        simple_rows(&client, "SELECT n, note FROM items WHERE id = 'a'").await,
        vec![vec!["42", "keep"]]
    );
}

#[tokio::test]
async fn upsert_is_one_atomic_statement() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    client
        .batch_execute("INSERT INTO items (id, n, note) VALUES ('a', 1, 'keep')")
        .await
        .unwrap();
    let ids = || async { simple_rows(&client, "SELECT id, n FROM items ORDER BY id").await };
    // SET fails on the conflicting row ('a', n = 0): 'b', before it, is not stored.
    let upsert = "INSERT INTO items (id, n) VALUES ('b', 2), ('a', 0) \
                  ON CONFLICT (id) DO UPDATE SET n = 10 / EXCLUDED.n";
    assert_eq!(code(client.batch_execute(upsert).await), "22012");
    assert_eq!(ids().await, vec![vec!["a", "1"]]);
    // SET is evaluated only for rows that conflict: a new row with n = 0 is inserted.
    let upsert = "INSERT INTO items (id, n) VALUES ('c', 0), ('a', 5) \
                  ON CONFLICT (id) DO UPDATE SET n = 10 / EXCLUDED.n";
    assert_eq!(client.execute(upsert, &[]).await.unwrap(), 2);
    assert_eq!(ids().await, vec![vec!["a", "2"], vec!["c", "0"]]);
    // The same key twice in one statement is 21000, as in PostgreSQL, and nothing stays.
    let twice = "INSERT INTO items (id, n) VALUES ('d', 1), ('d', 2) \
                 ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n";
    assert_eq!(code(client.batch_execute(twice).await), "21000");
    assert_eq!(ids().await.len(), 2);
    // 1,000 rows, half of them stored, through several engine batches: one statement,
    // with RETURNING in statement order; then the same inside a transaction block.
    let values = |from: usize, count: usize, n: i64| -> String {
        (from..from + count)
            .map(|i| format!("('k{i:05}', {n})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    client
        .batch_execute(&format!(
            "INSERT INTO items (id, n) VALUES {}",
            values(0, 500, 1)
        ))
        .await
        .unwrap();
    // The count and sum of n of the 'k…' rows.
    let k_totals = || {
        simple_rows(
            &client,
            "SELECT count(*), sum(n) FROM items WHERE id >= 'k'",
        )
    };
    let returned = client
        .query(
            &format!(
                "INSERT INTO items (id, n) VALUES {} ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n + 1 RETURNING id, n",
                values(0, 1000, 7)
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(returned.len(), 1000);
    assert_eq!(returned[0].get::<_, String>(0), "k00000");
    assert_eq!(returned[0].get::<_, i64>(1), 8);
    assert_eq!(returned[999].get::<_, i64>(1), 7);
    assert_eq!(k_totals().await, vec![vec!["1000", "7500"]]);
    client.batch_execute("BEGIN").await.unwrap();
    let n = client
        .execute(
            &format!(
                "INSERT INTO items (id, n) VALUES {} ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n",
                values(500, 1000, 3)
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(n, 1000);
    assert_eq!(k_totals().await, vec![vec!["1500", "7000"]]);
    client.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(k_totals().await, vec![vec!["1000", "7500"]]);
}

#[tokio::test]
async fn update_puts_deletes_increments_and_checks_conditions() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    client
        .batch_execute("INSERT INTO items (id, n, price, note) VALUES ('a', 10, 5.0, 'x')")
        .await
        .unwrap();
    assert_eq!(
        client
            .execute(
                "UPDATE items SET note = 'y', price = NULL WHERE id = 'a'",
                &[]
            )
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        simple_rows(&client, "SELECT price, note FROM items WHERE id = 'a'").await,
        vec![vec!["NULL", "y"]]
    );
    // SET c = NULL deletes every version of the cell.
    assert!(simple_rows(
        &client,
        "SELECT version FROM versions.items WHERE id = 'a' AND column_name = 'price'"
    )
    .await
    .is_empty());
    // Atomic increment, returning the new value (extended protocol, binary result).
    let row = client
        .query_one(
            "UPDATE items SET n = n + $1 WHERE id = $2 RETURNING n",
            &[&5i64, &"a"],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 15);
    let rows = simple_rows(
        &client,
        "UPDATE items SET n = n - 1 WHERE id = 'a' RETURNING id, n",
    )
    .await;
    assert_eq!(rows, vec![vec!["a", "14"]]);
    // A column condition that does not hold: UPDATE 0, nothing changes.
    assert_eq!(
        client
            .execute(
                "UPDATE items SET note = 'z' WHERE id = 'a' AND n > 100",
                &[]
            )
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        client
            .execute(
                "UPDATE items SET note = 'z' WHERE id = 'a' AND n >= 14",
                &[]
            )
            .await
            .unwrap(),
        1
    );
    // A missing row is UPDATE 0, not an insert.
    assert_eq!(
        client
            .execute("UPDATE items SET note = 'q' WHERE id = 'nope'", &[])
            .await
            .unwrap(),
        0
    );
    assert!(
        simple_rows(&client, "SELECT id FROM items WHERE id = 'nope'")
            .await
            .is_empty()
    );
    // UPDATE with a WHERE on attributes scans, then writes each row.
    client
        .batch_execute("INSERT INTO items (id, n) VALUES ('b', 1), ('c', 2)")
        .await
        .unwrap();
    assert_eq!(
        client
            .execute("UPDATE items SET note = 'small' WHERE n < 5", &[])
            .await
            .unwrap(),
        2
    );
}

#[tokio::test]
async fn delete_by_key_and_by_scan() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    client
        .batch_execute("INSERT INTO items (id, n) VALUES ('a', 1), ('b', 2), ('c', 3)")
        .await
        .unwrap();
    assert_eq!(
        client
            .execute("DELETE FROM items WHERE id = $1", &[&"a"])
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        client
            .execute("DELETE FROM items WHERE id = 'a'", &[])
            .await
            .unwrap(),
        0
    );
    let rows = simple_rows(&client, "DELETE FROM items WHERE n >= 3 RETURNING id").await;
    assert_eq!(rows, vec![vec!["c"]]);
    assert_eq!(
        simple_rows(&client, "SELECT id FROM items").await,
        vec![vec!["b"]]
    );
}

#[tokio::test]
async fn explicit_versions_and_undeclared_columns() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    let now: i64 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    client
        .execute(
            "INSERT INTO items (id, _version, n) VALUES ('a', $1, 1)",
            &[&(now - 2000)],
        )
        .await
        .unwrap();
    client
        .execute(
            "UPDATE items SET n = 2, _version = $1 WHERE id = 'a'",
            &[&(now - 1000)],
        )
        .await
        .unwrap();
    let versions = client
        .query(
            "SELECT version, value FROM versions.items WHERE id = 'a' AND column_name = 'n'",
            &[],
        )
        .await
        .unwrap();
    let got: Vec<(i64, String)> = versions.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        got,
        vec![(now - 1000, "2".to_string()), (now - 2000, "1".to_string())]
    );
    // Outside [now - max_version_offset, now + max_version_offset): refused, row unchanged.
    let err = client
        .execute(
            "UPDATE items SET n = 3, _version = $1 WHERE id = 'a'",
            &[&(now + 2 * 86_400_000)],
        )
        .await;
    assert_eq!(code(err), "22023");
    assert_eq!(
        simple_rows(&client, "SELECT n FROM items WHERE id = 'a'").await,
        vec![vec!["2"]]
    );
    // A column nobody declared: written, then readable by name with its type.
    client
        .execute("INSERT INTO items (id, color) VALUES ('b', 'red')", &[])
        .await
        .unwrap();
    let row = client
        .query_one("SELECT color FROM items WHERE id = 'b'", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "red");
}

#[tokio::test]
async fn transactions_buffer_writes_until_commit() {
    let server = TestServer::start().await;
    let mut client = server.connect().await;
    setup(&client).await;
    let other = server.connect().await;
    {
        let tx = client.transaction().await.unwrap();
        tx.execute("INSERT INTO items (id, n) VALUES ('a', 1)", &[])
            .await
            .unwrap();
        tx.execute("UPDATE items SET n = n + 1 WHERE id = 'a'", &[])
            .await
            .unwrap();
        // The session sees its own writes; others do not, yet.
        assert_eq!(
            tx.query_one("SELECT n FROM items WHERE id = 'a'", &[])
                .await
                .unwrap()
                .get::<_, i64>(0),
            2
        );
        assert_eq!(
            tx.query("SELECT id FROM items", &[]).await.unwrap().len(),
            1
        );
        assert!(other
            .query("SELECT id FROM items WHERE id = 'a'", &[])
            .await
            .unwrap()
            .is_empty());
        tx.rollback().await.unwrap();
    }
    assert!(client
        .query("SELECT id FROM items", &[])
        .await
        .unwrap()
        .is_empty());
    let tx = client.transaction().await.unwrap();
    tx.execute("INSERT INTO items (id, n) VALUES ('b', 1), ('c', 2)", &[])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        simple_rows(&other, "SELECT id, n FROM items").await,
        vec![vec!["b", "1"], vec!["c", "2"]]
    );
    // An error aborts the transaction: 25P02 until ROLLBACK.
    client.batch_execute("BEGIN").await.unwrap();
    assert_eq!(
        code(
            client
                .execute("INSERT INTO items (id) VALUES ('b')", &[])
                .await
        ),
        "23505"
    );
    assert_eq!(code(client.execute("SELECT 1", &[]).await), "25P02");
    client.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(
        client
            .query_one("SELECT 1", &[])
            .await
            .unwrap()
            .get::<_, i32>(0),
        1
    );
}

#[tokio::test]
async fn savepoints_and_failed_statements_restore_what_the_block_sees() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    client
        .batch_execute("INSERT INTO items (id, n) VALUES ('a', 1), ('z', 9223372036854775807)")
        .await
        .unwrap();
    let rows = |sql: &'static str| simple_rows(&client, sql);
    client
        .batch_execute(
            "BEGIN; UPDATE items SET n = 2 WHERE id = 'a'; SAVEPOINT s1; \
             UPDATE items SET n = 3 WHERE id = 'a'; INSERT INTO items (id, n) VALUES ('b', 1); \
             SAVEPOINT s2; INSERT INTO items (id, n) VALUES ('c', 1); DELETE FROM items WHERE id = 'a'",
        )
        .await
        .unwrap();
    assert_eq!(
        rows("SELECT id, n FROM items ORDER BY id").await,
        vec![
            vec!["b", "1"],
            vec!["c", "1"],
            vec!["z", "9223372036854775807"]
        ]
    );
    client
        .batch_execute("ROLLBACK TO SAVEPOINT s2")
        .await
        .unwrap();
    assert_eq!(
        rows("SELECT id, n FROM items WHERE id IN ('a', 'b', 'c') ORDER BY id").await,
        vec![vec!["a", "3"], vec!["b", "1"]]
    );
    // ROLLBACK TO keeps the savepoint; rolling back to the outer one drops 'b' too, so
    // inserting 'b' again is no duplicate.
    client
        .batch_execute("ROLLBACK TO SAVEPOINT s1; INSERT INTO items (id, n) VALUES ('b', 7)")
        .await
        .unwrap();
    assert_eq!(
        rows("SELECT id, n FROM items WHERE id IN ('a', 'b', 'c') ORDER BY id").await,
        vec![vec!["a", "2"], vec!["b", "7"]]
    );
    // A statement that fails half way (the increment of 'z' overflows after 'a' and 'b'
    // were incremented) leaves nothing of itself in what the block sees.
    client
        .batch_execute("RELEASE SAVEPOINT s1; SAVEPOINT s3")
        .await
        .unwrap();
    assert_eq!(
        code(client.batch_execute("UPDATE items SET n = n + 1").await),
        "22003"
    );
    assert_eq!(code(client.batch_execute("SELECT 1").await), "25P02");
    client
        .batch_execute("ROLLBACK TO SAVEPOINT s3")
        .await
        .unwrap();
    assert_eq!(
        rows("SELECT id, n FROM items WHERE id IN ('a', 'b') ORDER BY id").await,
        vec![vec!["a", "2"], vec!["b", "7"]]
    );
    // Without any savepoint open, a failed statement is undone all the same.
    client.batch_execute("RELEASE SAVEPOINT s3").await.unwrap();
    assert_eq!(
        code(
            client
                .batch_execute("INSERT INTO items (id, n) VALUES ('d', 1), ('b', 1)")
                .await
        ),
        "23505"
    );
    client.batch_execute("ROLLBACK").await.unwrap();
    client
        .batch_execute("BEGIN; UPDATE items SET n = 5 WHERE id = 'a'; INSERT INTO items (id, n) VALUES ('e', 1)")
        .await
        .unwrap();
    assert_eq!(
        code(
            client
                .batch_execute("INSERT INTO items (id, n) VALUES ('f', 1), ('e', 2)")
                .await
        ),
        "23505"
    );
    // COMMIT of an aborted block rolls it back.
    client.batch_execute("COMMIT").await.unwrap();
    assert_eq!(
        rows("SELECT id, n FROM items ORDER BY id").await,
        vec![vec!["a", "1"], vec!["z", "9223372036854775807"]]
    );
    client
        .batch_execute("BEGIN; UPDATE items SET n = 5 WHERE id = 'a'; SAVEPOINT s; INSERT INTO items (id, n) VALUES ('e', 1); ROLLBACK TO SAVEPOINT s; INSERT INTO items (id, n) VALUES ('f', 1); COMMIT")
        .await
        .unwrap();
    assert_eq!(
        rows("SELECT id, n FROM items ORDER BY id").await,
        vec![
            vec!["a", "5"],
            vec!["f", "1"],
            vec!["z", "9223372036854775807"]
        ]
    );
}

#[tokio::test]
async fn a_block_sees_the_rows_it_wrote_as_it_left_them_and_loses_them_to_an_earlier_commit() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    let other = server.connect().await;
    client
        .batch_execute(
            "INSERT INTO items (id, n, note) VALUES ('a', 1, 'first'), ('b', 1, 'first')",
        )
        .await
        .unwrap();
    client
        .batch_execute("BEGIN; UPDATE items SET n = 10 WHERE id = 'a'")
        .await
        .unwrap();
    other
        .batch_execute("UPDATE items SET note = 'other' WHERE id IN ('a', 'b')")
        .await
        .unwrap();
    // A row the block wrote is seen as the block left it (as in PostgreSQL, where the
    // other UPDATE would wait for this block); a row it did not write is read afresh.
    assert_eq!(
        simple_rows(&client, "SELECT id, n, note FROM items").await,
        vec![vec!["a", "10", "first"], vec!["b", "1", "other"]]
    );
    // The other session changed a row the block wrote after the block wrote it: the
    // first committer wins, so COMMIT fails with 40001 and applies nothing (as under
    // PostgreSQL's REPEATABLE READ), and the other session's note stays.
    assert_eq!(code(client.batch_execute("COMMIT").await), "40001");
    assert_eq!(
        simple_rows(&other, "SELECT id, n, note FROM items").await,
        vec![vec!["a", "1", "other"], vec!["b", "1", "other"]]
    );
    // A block of many single-row statements, each over the rows of all before it.
    let mut block = String::from("BEGIN;");
    for i in 0..2000 {
        block.push_str(&format!(
            "INSERT INTO items (id, n) VALUES ('k{i:04}', {i});"
        ));
        if i % 2 == 1 {
            block.push_str(&format!(
                "UPDATE items SET n = n + 1 WHERE id = 'k{:04}';",
                i - 1
            ));
        }
    }
    block.push_str("COMMIT");
    client.batch_execute(&block).await.unwrap();
    assert_eq!(
        simple_rows(&other, "SELECT count(*), sum(n) FROM items WHERE id >= 'k'").await,
        vec![vec!["2000", "2000000"]]
    );
}

#[tokio::test]
async fn a_block_reads_a_range_over_several_pages_with_its_writes_laid_over() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    // 12,000 stored rows: more than two GetRange pages of 5,000.
    let values: Vec<String> = (0..12_000).map(|i| format!("('k{i:05}', {i})")).collect();
    for chunk in values.chunks(2_000) {
        client
            .batch_execute(&format!(
                "INSERT INTO items (id, n) VALUES {}",
                chunk.join(", ")
            ))
            .await
            .unwrap();
    }
    client
        .batch_execute(
            "BEGIN; DELETE FROM items WHERE id = 'k04999'; UPDATE items SET n = -1 WHERE id = 'k05000'; \
             INSERT INTO items (id, n) VALUES ('k04998x', 1), ('a', 1), ('z', 1); \
             DELETE FROM items WHERE id = 'k11999'",
        )
        .await
        .unwrap();
    let rows = simple_rows(
        &client,
        "SELECT id, n FROM items WHERE id >= 'k' AND id < 'l'",
    )
    .await;
    let ids: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(ids.len(), 12_000 - 2 + 1);
    assert_eq!(
        &ids[4_997..5_001],
        &["k04997", "k04998", "k04998x", "k05000"]
    );
    assert_eq!(rows[5_000][1], "-1");
    assert_eq!(ids.last(), Some(&"k11998"));
    // Rows outside the range stay out; LIMIT counts the rows the block sees.
    assert_eq!(
        simple_rows(
            &client,
            "SELECT id FROM items WHERE id >= 'k04998' AND id < 'l' LIMIT 3"
        )
        .await,
        vec![vec!["k04998"], vec!["k04998x"], vec!["k05000"]]
    );
    assert_eq!(
        simple_rows(
            &client,
            "SELECT id FROM items WHERE id >= 'k04997' AND id < 'k05001' ORDER BY id DESC"
        )
        .await,
        vec![
            vec!["k05000"],
            vec!["k04998x"],
            vec!["k04998"],
            vec!["k04997"]
        ]
    );
    assert_eq!(
        simple_rows(&client, "SELECT count(*) FROM items").await,
        vec![vec!["12001"]]
    );
    client.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(
        simple_rows(&client, "SELECT count(*) FROM items").await,
        vec![vec!["12000"]]
    );
}

#[tokio::test]
async fn statements_above_the_batch_limits_stay_atomic() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    let values = |range: std::ops::Range<i32>| {
        range
            .map(|i| format!("('k{i:04}', {i})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // 450 rows, more than a BatchWriteRow's 200, all written.
    let n = client
        .execute(
            &format!("INSERT INTO items (id, n) VALUES {}", values(0..450)),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(n, 450);
    assert_eq!(
        client
            .query("SELECT id FROM items", &[])
            .await
            .unwrap()
            .len(),
        450
    );
    // A conflict in the last row: nothing of the statement stays.
    let sql = format!(
        "INSERT INTO items (id, n) VALUES {}, ('k0001', 1)",
        values(1000..1449)
    );
    assert_eq!(code(client.execute(&sql, &[]).await), "23505");
    assert_eq!(
        client
            .query("SELECT id FROM items", &[])
            .await
            .unwrap()
            .len(),
        450
    );
    // The same inside a transaction block.
    client.batch_execute("BEGIN").await.unwrap();
    assert_eq!(code(client.execute(&sql, &[]).await), "23505");
    client.batch_execute("ROLLBACK").await.unwrap();
    // UPDATE over every row.
    assert_eq!(
        client
            .execute("UPDATE items SET note = 'seen' WHERE n >= 0", &[])
            .await
            .unwrap(),
        450
    );
    // An error on one row of a large UPDATE (an increment past the bigint range on
    // the 401st) leaves every row as it was, the first 400 included.
    client
        .batch_execute("UPDATE items SET n = 9223372036854775807 WHERE id = 'k0400'")
        .await
        .unwrap();
    assert_eq!(
        code(
            client
                .execute("UPDATE items SET n = n + 1 WHERE n >= 0", &[])
                .await
        ),
        "22003"
    );
    assert_eq!(
        simple_rows(
            &client,
            "SELECT n FROM items WHERE id IN ('k0000', 'k0399') ORDER BY id"
        )
        .await,
        vec![vec!["0"], vec!["399"]]
    );
    // One row larger than a BatchWriteRow request (4 MB) is refused with 54000.
    let big = "x".repeat(1_500_000);
    let err = client
        .execute(
            "INSERT INTO items (id, note, a, b) VALUES ('huge', $1, $1, $1)",
            &[&big],
        )
        .await;
    assert_eq!(code(err), "54000");
}

/// DDL in a transaction block rolls back with it, as every migration tool assumes: a
/// table the block created is dropped again, and a table it altered gets its columns,
/// declarations and options back, at ROLLBACK, a failed COMMIT, a ROLLBACK TO a
/// savepoint before it, or the connection's end. What pgwide could not undo is refused
/// in a block.
#[tokio::test]
async fn ddl_in_a_block_rolls_back_with_it() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    let other = server.connect().await;
    let missing = |sql: &'static str| {
        let client = &client;
        async move {
            match client.simple_query(sql).await {
                Ok(_) => false,
                Err(e) => e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE),
            }
        }
    };
    client
        .batch_execute(
            "BEGIN; CREATE TABLE a (k BIGINT PRIMARY KEY, v TEXT); INSERT INTO a VALUES (1, 'x'); \
             CREATE TABLE a2 WITH (primary_key = 'k') AS SELECT k, v FROM a; ROLLBACK",
        )
        .await
        .expect("rolled back block");
    assert!(missing("SELECT * FROM a").await, "a");
    assert!(missing("SELECT * FROM a2").await, "a2");

    client
        .batch_execute(
            "BEGIN; CREATE TABLE b (k BIGINT PRIMARY KEY, v TEXT); INSERT INTO b VALUES (1, 'x'); \
             SAVEPOINT s; CREATE TABLE c (k BIGINT PRIMARY KEY); ROLLBACK TO SAVEPOINT s; \
             CREATE TABLE e (k BIGINT PRIMARY KEY); ALTER TABLE e ADD COLUMN y TEXT; DROP TABLE e; \
             COMMIT",
        )
        .await
        .expect("committed block");
    assert_eq!(simple_rows(&client, "SELECT v FROM b").await, [["x"]]);
    assert!(missing("SELECT * FROM c").await, "c");
    assert!(missing("SELECT * FROM e").await, "e");

    // An ALTER TABLE of a table the block did not create is undone too: its options
    // and columns are as before.
    let ttl = "SELECT ttl FROM pgwide.tables WHERE \"table\" = 'b'";
    let ttl_before = simple_rows(&client, ttl).await;
    client
        .batch_execute(
            "BEGIN; ALTER TABLE b SET (ttl = 100); ALTER TABLE b ADD COLUMN w TEXT; ROLLBACK",
        )
        .await
        .expect("rolled back alter");
    assert_eq!(simple_rows(&client, ttl).await, ttl_before);
    assert_eq!(code(client.batch_execute("SELECT w FROM b").await), "42703");

    // A sequence the block created is dropped again.
    client
        .batch_execute(
            "CREATE SEQUENCE kept; BEGIN; CREATE SEQUENCE q; SELECT nextval('q'); ROLLBACK",
        )
        .await
        .expect("rolled back sequence");
    assert_eq!(
        code(client.batch_execute("SELECT nextval('q')").await),
        "42P01"
    );

    // What a rollback could not undo is refused, and aborts the block (a foreign key
    // CASCADE drops from a table that stays); so is a check of the rows the block
    // wrote, which pgwide would read from the stored rows only.
    client
        .batch_execute("CREATE TABLE bref (k BIGINT PRIMARY KEY, b BIGINT REFERENCES b)")
        .await
        .expect("a table referencing b");
    for (sql, expected) in [
        ("DROP TABLE b CASCADE", "0A000"),
        ("DROP SEQUENCE kept", "0A000"),
        (
            "INSERT INTO b VALUES (2, NULL); ALTER TABLE b ALTER COLUMN v SET NOT NULL",
            "0A000",
        ),
        ("CREATE DATABASE elsewhere", "25001"),
        ("DISCARD ALL", "25001"),
    ] {
        client.batch_execute("BEGIN").await.expect("begin");
        assert_eq!(code(client.batch_execute(sql).await), expected, "{sql}");
        client.batch_execute("ROLLBACK").await.expect("rollback");
    }
    assert_eq!(simple_rows(&client, "SELECT v FROM b").await, [["x"]]);

    // A COMMIT that fails (another session changed a row the block wrote) drops the
    // block's tables too.
    client
        .batch_execute(
            "BEGIN; CREATE TABLE f (k BIGINT PRIMARY KEY); ALTER TABLE b ADD COLUMN z TEXT; \
             UPDATE b SET v = 'block' WHERE k = 1",
        )
        .await
        .expect("block");
    other
        .batch_execute("UPDATE b SET v = 'other' WHERE k = 1")
        .await
        .expect("other");
    assert_eq!(code(client.batch_execute("COMMIT").await), "40001");
    assert!(missing("SELECT * FROM f").await, "f");
    assert_eq!(code(client.batch_execute("SELECT z FROM b").await), "42703");

    // A connection that ends inside its block rolls it back.
    let leaving = server.connect().await;
    leaving
        .batch_execute("BEGIN; CREATE TABLE g (k BIGINT PRIMARY KEY)")
        .await
        .expect("block");
    drop(leaving);
    let mut gone = false;
    for _ in 0..100 {
        if missing("SELECT * FROM g").await {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(gone, "the ended connection's table stayed");
}

/// TRUNCATE against other sessions: a block that wrote to a table truncated before its
/// COMMIT fails with 40001 instead of committing rows under the table's old id, where
/// no read would find them; a prepared INSERT from before the TRUNCATE writes to the
/// table as it is now; RESTART IDENTITY in a block is refused, since a rollback could
/// not undo it.
#[tokio::test]
async fn truncate_is_atomic_against_other_sessions() {
    let server = TestServer::start().await;
    let writer = server.connect().await;
    let other = server.connect().await;
    writer
        .batch_execute(
            "CREATE TABLE tc (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO tc VALUES (1, 'old')",
        )
        .await
        .unwrap();
    writer
        .batch_execute("BEGIN; INSERT INTO tc VALUES (2, 'in the block')")
        .await
        .unwrap();
    other.batch_execute("TRUNCATE tc").await.unwrap();
    assert_eq!(code(writer.simple_query("COMMIT").await), "40001");
    assert_eq!(
        simple_rows(&other, "SELECT count(*) FROM tc").await,
        vec![vec!["0"]]
    );
    let insert = writer
        .prepare("INSERT INTO tc VALUES ($1, $2)")
        .await
        .unwrap();
    other.batch_execute("TRUNCATE tc").await.unwrap();
    assert_eq!(
        writer.execute(&insert, &[&3i32, &"after"]).await.unwrap(),
        1
    );
    assert_eq!(
        simple_rows(&other, "SELECT id, v FROM tc").await,
        vec![vec!["3", "after"]]
    );
    writer.batch_execute("BEGIN").await.unwrap();
    assert_eq!(
        code(writer.simple_query("TRUNCATE tc RESTART IDENTITY").await),
        "0A000"
    );
    writer.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(
        simple_rows(&other, "SELECT count(*) FROM tc").await,
        vec![vec!["1"]]
    );
}

/// RENAME COLUMN moves every version of the column's cells (Table Store keeps them),
/// not only the newest; a block that wrote to the table cannot rename its columns
/// (its staged writes name the old one), and nothing changes.
#[tokio::test]
async fn rename_column_keeps_every_version() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    client
        .batch_execute(
            "INSERT INTO items (id, note) VALUES ('a', 'v1');
             UPDATE items SET note = 'v2' WHERE id = 'a';
             UPDATE items SET note = 'v3' WHERE id = 'a';
             ALTER TABLE items RENAME COLUMN note TO remark;",
        )
        .await
        .expect("rename");
    assert_eq!(
        simple_rows(
            &client,
            "SELECT column_name, value FROM versions.items WHERE id = 'a' \
             ORDER BY version DESC"
        )
        .await,
        [["remark", "v3"], ["remark", "v2"], ["remark", "v1"]]
    );
    client
        .batch_execute("BEGIN; UPDATE items SET remark = 'v4' WHERE id = 'a'")
        .await
        .expect("write in a block");
    assert_eq!(
        code(
            client
                .batch_execute("ALTER TABLE items RENAME COLUMN remark TO note")
                .await
        ),
        "0A000"
    );
    client.batch_execute("ROLLBACK").await.expect("rollback");
    assert_eq!(
        simple_rows(&client, "SELECT remark FROM items").await,
        [["v3"]]
    );
}

/// A statement pgwide respells before parsing (here CREATE SEQUENCE's options, put in
/// sqlparser's order) keeps the quotes of every literal and identifier in the same query
/// string: a doubled quote once came back single, which ended the literal early.
#[tokio::test]
async fn respelled_statements_keep_their_literals_whole() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE weird (id BIGINT PRIMARY KEY, v TEXT); \
             CREATE SEQUENCE s START 100 INCREMENT 5; \
             INSERT INTO weird VALUES (1, 'x'';DROP TABLE weird;--'), \
                 (2, E'tab\\there\\\\'), (3, 'two\nlines'); \
             SELECT 1 AS \"we\"\"ird\"",
        )
        .await
        .expect("one query string");
    assert_eq!(
        simple_rows(&client, "SELECT v FROM weird ORDER BY id").await,
        [["x';DROP TABLE weird;--"], ["tab\there\\"], ["two\nlines"]]
    );
}
