//! REPEATABLE READ READ ONLY blocks, as pg_dump and a reporting session use them: every
//! statement of the block reads the rows as they were at its first statement, while
//! other sessions write on; the block's end lets the snapshot go.

use crate::common::{code, simple_rows, TestServer};
use crate::sql_copy::copy_out;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeatable_read_block_reads_one_snapshot_while_others_write() {
    let server = TestServer::start().await;
    let reader = server.connect().await;
    let writer = server.connect().await;
    writer
        .batch_execute(
            "CREATE TABLE acct (id BIGINT PRIMARY KEY, owner TEXT, balance BIGINT); \
             CREATE INDEX acct_owner ON acct (owner); \
             INSERT INTO acct SELECT g, 'o' || (g % 10), 100 FROM generate_series(1, 1000) g",
        )
        .await
        .expect("setup");
    reader
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .await
        .expect("begin");
    // Writes between BEGIN and the first statement are seen: the snapshot is taken by
    // the first statement that reads, as in PostgreSQL.
    writer
        .batch_execute("UPDATE acct SET balance = 90 WHERE id = 1")
        .await
        .expect("update before the snapshot");
    let totals = "SELECT count(*), sum(balance) FROM acct";
    assert_eq!(simple_rows(&reader, totals).await, [["1000", "99990"]]);
    assert_eq!(
        simple_rows(&reader, "SHOW transaction_isolation").await,
        [["repeatable read"]]
    );
    writer
        .batch_execute(
            "UPDATE acct SET balance = balance - 50 WHERE id <= 100; \
             DELETE FROM acct WHERE id > 900; \
             INSERT INTO acct SELECT g, 'new', 1 FROM generate_series(2001, 2500) g; \
             BEGIN; UPDATE acct SET owner = 'moved' WHERE id = 5; COMMIT",
        )
        .await
        .expect("writes after the snapshot");
    // Scans, point reads, the secondary index's column, ordered pages and COPY all see
    // the rows as they were.
    assert_eq!(simple_rows(&reader, totals).await, [["1000", "99990"]]);
    assert_eq!(
        simple_rows(&reader, "SELECT owner, balance FROM acct WHERE id = 5").await,
        [["o5", "100"]]
    );
    assert_eq!(
        simple_rows(&reader, "SELECT count(*) FROM acct WHERE owner = 'o5'").await,
        [["100"]]
    );
    assert_eq!(
        simple_rows(&reader, "SELECT id FROM acct ORDER BY id DESC LIMIT 2").await,
        [["1000"], ["999"]]
    );
    let copied = copy_out(&reader, "COPY acct (id, balance) TO STDOUT").await;
    assert_eq!(copied.lines().count(), 1000);
    assert!(copied.lines().any(|line| line == "950\t100"));
    // The writer sees what it wrote.
    assert_eq!(
        simple_rows(&writer, totals).await,
        [["1400", "85490"]],
        "900 old rows, 100 of them 50 lower (the first 40 lower), and 500 new ones of 1"
    );
    // The block writes nothing, and its end lets the snapshot go.
    assert_eq!(
        code(
            reader
                .batch_execute("INSERT INTO acct VALUES (9999, 'x', 1)")
                .await
        ),
        "25006"
    );
    reader.batch_execute("ROLLBACK").await.expect("rollback");
    assert_eq!(simple_rows(&reader, totals).await, [["1400", "85490"]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_dumps_transaction_reads_a_snapshot_and_fails_cleanly_on_a_schema_change() {
    let server = TestServer::start().await;
    let reader = server.connect().await;
    let writer = server.connect().await;
    writer
        .batch_execute(
            "CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a')",
        )
        .await
        .expect("setup");
    // pg_dump 15's opening, statement for statement.
    reader
        .batch_execute("BEGIN; SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        .await
        .expect("pg_dump's transaction");
    assert_eq!(simple_rows(&reader, "SELECT v FROM t").await, [["a"]]);
    writer
        .batch_execute("UPDATE t SET v = 'b' WHERE id = 1")
        .await
        .expect("update");
    assert_eq!(simple_rows(&reader, "SELECT v FROM t").await, [["a"]]);
    // Once the block has read, its level and access mode are fixed (25001, as in
    // PostgreSQL).
    assert_eq!(
        code(reader.batch_execute("SET TRANSACTION READ WRITE").await),
        "25001"
    );
    reader.batch_execute("ROLLBACK").await.expect("rollback");

    // A schema change while a snapshot is open: the block's next statement is 40001,
    // never old rows read through a new schema.
    reader
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .await
        .expect("begin");
    assert_eq!(simple_rows(&reader, "SELECT v FROM t").await, [["b"]]);
    writer
        .batch_execute("ALTER TABLE t ADD COLUMN w BIGINT")
        .await
        .expect("DDL goes on");
    assert_eq!(code(reader.batch_execute("SELECT v FROM t").await), "40001");
    reader.batch_execute("ROLLBACK").await.expect("rollback");
    assert_eq!(
        simple_rows(&reader, "SELECT v, w FROM t").await,
        [["b", "NULL"]]
    );
}
