//! Schema-free columns over the wire (docs/table-store.md §3): a column no declaration
//! names holds cells of different value types, shown as text once it does, with each
//! cell's own type in `versions.t`; comparisons on it see every cell; `SET n = n + k`
//! on it is Table Store's increment, a missing cell counting as 0, in UPDATE and in an
//! upsert; declared columns keep PostgreSQL's rules; and Table Store's whole-row
//! replace (PutRow over an existing row) is a DELETE and an INSERT in one block.

use crate::common::{code, simple_rows, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undeclared_column_keeps_each_cells_own_type() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT, qty BIGINT); \
             INSERT INTO items (id, size) VALUES (1, 42); \
             INSERT INTO items (id, size) VALUES (2, 'large'); \
             INSERT INTO items (id, size) VALUES (3, true); \
             INSERT INTO items (id, size) VALUES (4, '\\xdead'::bytea)",
        )
        .await
        .expect("writes of four types");
    assert_eq!(
        simple_rows(&client, "SELECT id, size FROM items ORDER BY id").await,
        [["1", "42"], ["2", "large"], ["3", "true"], ["4", "\\xdead"]]
    );
    assert_eq!(
        simple_rows(
            &client,
            "SELECT id, value_type, value FROM versions.items ORDER BY id"
        )
        .await,
        [
            ["1", "Integer", "42"],
            ["2", "String", "large"],
            ["3", "Boolean", "true"],
            ["4", "Binary", "\\xdead"]
        ]
    );
    // The column is text now, for drivers and the catalog.
    let types = simple_rows(
        &client,
        "SELECT pg_typeof(size)::text FROM items WHERE id = 1",
    )
    .await;
    assert_eq!(types, [["text"]]);
    // A comparison sees the Integer cell as its text, on the fast path, in DataFusion
    // and in an UPDATE's WHERE.
    assert_eq!(
        simple_rows(&client, "SELECT id FROM items WHERE size = '42'").await,
        [["1"]]
    );
    assert_eq!(
        simple_rows(
            &client,
            "SELECT size, count(*) FROM items WHERE size IN ('42', 'large') \
             GROUP BY size ORDER BY size"
        )
        .await,
        [["42", "1"], ["large", "1"]]
    );
    client
        .batch_execute("UPDATE items SET name = 'answer' WHERE size = '42'")
        .await
        .expect("update by a mixed column");
    assert_eq!(
        simple_rows(&client, "SELECT id FROM items WHERE name = 'answer'").await,
        [["1"]]
    );
    // An index needs one type: refused over a mixed column, and nothing is created.
    let index = client
        .batch_execute("CREATE INDEX items_size ON items (size)")
        .await;
    assert_eq!(code(index), "0A000");
    assert!(simple_rows(
        &client,
        "SELECT 1 FROM pg_class WHERE relname = 'items_size'"
    )
    .await
    .is_empty());
    // A mistyped column goes with its cells.
    client
        .batch_execute("ALTER TABLE items DROP COLUMN size")
        .await
        .expect("drop");
    assert_eq!(
        simple_rows(&client, "SELECT * FROM items WHERE id = 1").await,
        [["1", "answer", "NULL"]]
    );
    // A value with no stored type of its own goes into a text column as its text.
    client
        .batch_execute(
            "INSERT INTO items (id, note) VALUES (10, 'x'); \
             INSERT INTO items (id, note) VALUES (11, '2026-01-01 00:00:00+00'::timestamptz)",
        )
        .await
        .expect("a timestamp into a column of Strings");
    assert_eq!(
        simple_rows(&client, "SELECT note FROM items WHERE id = 11").await,
        [["2026-01-01 00:00:00+00"]]
    );
    // A declared column is PostgreSQL's: a value of another type is refused.
    let refused = client
        .batch_execute("INSERT INTO items (id, qty) VALUES (9, 'large')")
        .await;
    assert_eq!(code(refused), "22P02");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fraction_in_a_column_of_integers_is_kept_not_rounded() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE readings (id BIGINT PRIMARY KEY); \
             INSERT INTO readings (id, level) VALUES (1, 42); \
             INSERT INTO readings (id, level) VALUES (2, 7.0); \
             INSERT INTO readings (id, level) VALUES (3, 4.5)",
        )
        .await
        .expect("writes");
    // COPY's text that the column's type cannot read stays text.
    let sink = client
        .copy_in("COPY readings (id, level) FROM STDIN")
        .await
        .expect("copy");
    futures::pin_mut!(sink);
    use futures::SinkExt;
    sink.send(bytes::Bytes::from_static(b"4\thigh\n"))
        .await
        .expect("copy data");
    sink.finish().await.expect("copy ends");
    // 7.0 is the Integer 7; 4.5 stays 4.5, a Double, and the column is mixed.
    assert_eq!(
        simple_rows(
            &client,
            "SELECT id, value_type, value FROM versions.readings ORDER BY id"
        )
        .await,
        [
            ["1", "Integer", "42"],
            ["2", "Integer", "7"],
            ["3", "Double", "4.5"],
            ["4", "String", "high"]
        ]
    );
    assert_eq!(
        simple_rows(&client, "SELECT level FROM readings ORDER BY id").await,
        [["42"], ["7"], ["4.5"], ["high"]]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_increment_of_a_missing_cell_starts_from_zero() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE counters (id BIGINT PRIMARY KEY, total BIGINT); \
             INSERT INTO counters (id) VALUES (1), (2); \
             UPDATE counters SET hits = hits + 1 WHERE id = 1; \
             UPDATE counters SET hits = hits + 1 WHERE id = 1; \
             UPDATE counters SET hits = hits - 3 WHERE id = 2; \
             INSERT INTO counters (id) VALUES (1) \
               ON CONFLICT (id) DO UPDATE SET hits = counters.hits + 10; \
             INSERT INTO counters AS c (id) VALUES (3) \
               ON CONFLICT (id) DO UPDATE SET hits = c.hits + 5; \
             INSERT INTO counters AS c (id) VALUES (3) \
               ON CONFLICT (id) DO UPDATE SET hits = c.hits + 5; \
             UPDATE counters SET total = total + 1 WHERE id = 1",
        )
        .await
        .expect("increments");
    // A declared column keeps SQL's NULL + 1 = NULL.
    assert_eq!(
        simple_rows(&client, "SELECT id, hits, total FROM counters ORDER BY id").await,
        [["1", "12", "NULL"], ["2", "-3", "NULL"], ["3", "5", "NULL"]]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_replaced_in_one_block_keeps_only_what_was_written() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE profiles (id BIGINT PRIMARY KEY, a TEXT, b TEXT) \
             WITH (max_versions = 3); \
             INSERT INTO profiles (id, a, b, extra) VALUES (1, 'a1', 'b1', 7); \
             UPDATE profiles SET a = 'a2' WHERE id = 1; \
             BEGIN; \
             DELETE FROM profiles WHERE id = 1; \
             INSERT INTO profiles (id, a) VALUES (1, 'new'); \
             COMMIT",
        )
        .await
        .expect("replace");
    // Every other column, and every older version, is gone, as after a PutRow.
    assert_eq!(
        simple_rows(&client, "SELECT * FROM profiles").await,
        [["1", "new", "NULL", "NULL"]]
    );
    assert_eq!(
        simple_rows(&client, "SELECT column_name, value FROM versions.profiles").await,
        [["a", "new"]]
    );
}
