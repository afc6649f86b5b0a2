//! The fast-path reads of docs/table-store.md §12 over the wire: GetRow, BatchGetRow (IN),
//! GetRange forward/backward with LIMIT/OFFSET, attribute filters, projections, the
//! versions relation, and the Table Store semantics (docs/table-store.md) through SQL.

use crate::common;

use common::{code, simple_rows, TestServer};

async fn purchases(client: &tokio_postgres::Client) {
    client
        .batch_execute(
            "CREATE TABLE p (card BIGINT, seller TEXT, dev BIGINT, amount DOUBLE PRECISION, paid BOOLEAN, PRIMARY KEY (card, seller, dev));
             INSERT INTO p VALUES (1, 'a', 1, 10.0, true), (1, 'a', 2, 20.0, false), (1, 'b', 1, 30.0, true),
                                  (2, 'a', 1, 40.0, false), (-5, 'z', 9, 50.0, true);",
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn point_get_batch_get_and_ranges() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    purchases(&client).await;
    // GetRow, extended protocol with parameters, binary results.
    let row = client
        .query_one(
            "SELECT amount, paid FROM p WHERE card = $1 AND seller = $2 AND dev = $3",
            &[&1i64, &"a", &2i64],
        )
        .await
        .unwrap();
    assert_eq!((row.get::<_, f64>(0), row.get::<_, bool>(1)), (20.0, false));
    // BatchGetRow through IN, in PK order.
    let rows = simple_rows(
        &client,
        "SELECT dev FROM p WHERE card = 1 AND seller = 'a' AND dev IN (2, 1, 7)",
    )
    .await;
    assert_eq!(rows, vec![vec!["1"], vec!["2"]]);
    // Integer PKs sort numerically, negatives first.
    let rows = simple_rows(&client, "SELECT card FROM p").await;
    assert_eq!(
        rows,
        vec![vec!["-5"], vec!["1"], vec!["1"], vec!["1"], vec!["2"]]
    );
    // Prefix equality plus a range on the next PK column, forward and backward.
    let rows = simple_rows(
        &client,
        "SELECT seller, dev FROM p WHERE card = 1 AND seller >= 'a' AND seller < 'b'",
    )
    .await;
    assert_eq!(rows, vec![vec!["a", "1"], vec!["a", "2"]]);
    let rows = simple_rows(&client, "SELECT seller, dev FROM p WHERE card = 1 ORDER BY card DESC, seller DESC, dev DESC LIMIT 2").await;
    assert_eq!(rows, vec![vec!["b", "1"], vec!["a", "2"]]);
    let rows = simple_rows(
        &client,
        "SELECT dev FROM p WHERE card = 1 AND seller = 'a' AND dev > 1",
    )
    .await;
    assert_eq!(rows, vec![vec!["2"]]);
    let rows = simple_rows(&client, "SELECT dev FROM p WHERE card = 1 AND seller = 'a' AND dev <= 1 ORDER BY card DESC, seller DESC, dev DESC").await;
    assert_eq!(rows, vec![vec!["1"]]);
    let rows = simple_rows(&client, "SELECT card FROM p ORDER BY card LIMIT 2 OFFSET 1").await;
    assert_eq!(rows, vec![vec!["1"], vec!["1"]]);
    // Attribute filters and ORDER BY on a non-key column.
    let rows = simple_rows(
        &client,
        "SELECT card, amount FROM p WHERE paid = true AND amount > 15 ORDER BY amount DESC",
    )
    .await;
    assert_eq!(rows, vec![vec!["-5", "50"], vec!["1", "30"]]);
    let stmt = client
        .prepare("SELECT card FROM p WHERE card = $1 AND seller = $2 AND dev = $3")
        .await
        .unwrap();
    for _ in 0..3 {
        assert!(client
            .query(&stmt, &[&9i64, &"x", &1i64])
            .await
            .unwrap()
            .is_empty());
    }
}

#[tokio::test]
async fn errors_carry_sqlstates() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    purchases(&client).await;
    assert_eq!(
        code(client.query("SELECT * FROM missing", &[]).await),
        "42P01"
    );
    assert_eq!(code(client.query("SELECT nope FROM p", &[]).await), "42703");
    assert_eq!(code(client.query("SELEC 1", &[]).await), "42601");
    assert_eq!(
        code(
            client
                .batch_execute("CREATE TABLE p (a TEXT PRIMARY KEY)")
                .await
        ),
        "42P07"
    );
    assert_eq!(
        code(
            client
                .batch_execute("CREATE TABLE f (a DOUBLE PRECISION PRIMARY KEY)")
                .await
        ),
        "42804"
    );
    assert_eq!(
        code(
            client
                .batch_execute("CREATE TABLE \"1bad\" (a TEXT PRIMARY KEY)")
                .await
        ),
        "42602"
    );
    assert_eq!(
        code(client.batch_execute("CREATE TABLE five (a BIGINT, b BIGINT, c BIGINT, d BIGINT, e BIGINT, PRIMARY KEY (a, b, c, d, e))").await),
        "22023"
    );
    client
        .batch_execute(
            "CREATE TABLE four (a BIGINT, b TEXT, c BYTEA, d INT, PRIMARY KEY (a, b, c, d))",
        )
        .await
        .unwrap();
    assert_eq!(
        code(
            client
                .batch_execute("CREATE TABLE o (a TEXT PRIMARY KEY) WITH (max_versions = 0)")
                .await
        ),
        "22023"
    );
    assert_eq!(
        code(
            client
                .batch_execute("CREATE TABLE o (a TEXT PRIMARY KEY) WITH (bogus = 1)")
                .await
        ),
        "22023"
    );
    // PK values up to 1 KB, attribute values up to 2 MB; beyond: 54000 and nothing stored.
    client
        .batch_execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)")
        .await
        .unwrap();
    let kb = "k".repeat(1024);
    client
        .execute("INSERT INTO kv (k) VALUES ($1)", &[&kb])
        .await
        .unwrap();
    assert_eq!(
        code(
            client
                .execute("INSERT INTO kv (k) VALUES ($1)", &[&format!("{kb}x")])
                .await
        ),
        "54000"
    );
    let big = "v".repeat(2 * 1024 * 1024 + 1);
    assert_eq!(
        code(
            client
                .execute("INSERT INTO kv (k, v) VALUES ('big', $1)", &[&big])
                .await
        ),
        "54000"
    );
    assert!(client
        .query("SELECT k FROM kv WHERE k = 'big'", &[])
        .await
        .unwrap()
        .is_empty());
    // Databases are instances.
    assert_eq!(code(server.connect_to("nodb").await.map(|_| ())), "3D000");
    client.batch_execute("CREATE DATABASE shop").await.unwrap();
    assert_eq!(
        code(client.batch_execute("CREATE DATABASE shop").await),
        "42P04"
    );
    assert_eq!(
        code(client.batch_execute("CREATE DATABASE ab").await),
        "42602"
    );
    let shop = server.connect_to("shop").await.unwrap();
    assert_eq!(code(shop.query("SELECT * FROM p", &[]).await), "42P01");
}

#[tokio::test]
async fn max_versions_raised_makes_old_versions_visible_again() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE book (id TEXT PRIMARY KEY, len BIGINT) WITH (max_versions = 2)",
        )
        .await
        .unwrap();
    let now: i64 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    client
        .execute(
            "INSERT INTO book (id, _version, len) VALUES ('4776', $1, 400)",
            &[&(now - 5000)],
        )
        .await
        .unwrap();
    client
        .execute(
            "UPDATE book SET len = 500, _version = $1 WHERE id = '4776'",
            &[&(now - 1000)],
        )
        .await
        .unwrap();
    // Lowering hides the older version; no write rewrites the row before it is raised
    // again (a write would store only the newest, see background_gc).
    client
        .batch_execute("ALTER TABLE book SET (max_versions = 1)")
        .await
        .unwrap();
    let count = |rows: Vec<tokio_postgres::Row>| rows.len();
    assert_eq!(
        count(
            client
                .query("SELECT version FROM versions.book", &[])
                .await
                .unwrap()
        ),
        1
    );
    client
        .batch_execute("ALTER TABLE book SET (max_versions = 2)")
        .await
        .unwrap();
    let rows = client
        .query("SELECT value FROM versions.book WHERE id = '4776'", &[])
        .await
        .unwrap();
    let values: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(
        values,
        vec!["500", "400"],
        "newest first, the old version visible again"
    );
    assert_eq!(
        simple_rows(&client, "SELECT len FROM book").await,
        vec![vec!["500"]]
    );
    // Deleting one version through the versions relation.
    let deleted = client
        .execute(
            "DELETE FROM versions.book WHERE id = '4776' AND column_name = 'len' AND version = $1",
            &[&(now - 1000)],
        )
        .await
        .unwrap();
    assert_eq!(deleted, 1);
    assert_eq!(
        simple_rows(&client, "SELECT len FROM book").await,
        vec![vec!["400"]]
    );
}

#[tokio::test]
async fn tables_without_a_primary_key_get_a_hidden_rowid() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE t (a INT, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y')")
        .await
        .unwrap();
    let rows = client.query("SELECT * FROM t", &[]).await.unwrap();
    assert_eq!(rows[0].columns().len(), 2, "_rowid is hidden from SELECT *");
    assert_eq!(
        simple_rows(&client, "SELECT b FROM t WHERE a = 2").await,
        vec![vec!["y"]]
    );
}

#[tokio::test]
async fn set_and_show() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "SET application_name = 'tests'; SET extra_float_digits = 3; SET TIME ZONE 'UTC'",
        )
        .await
        .unwrap();
    assert_eq!(
        simple_rows(&client, "SHOW application_name").await,
        vec![vec!["tests"]]
    );
    assert_eq!(
        simple_rows(&client, "SHOW server_version").await,
        vec![vec!["15.12"]]
    );
    assert_eq!(
        code(client.batch_execute("SET no_such_thing = 1").await),
        "42704"
    );
    // What pgwide gives is accepted; SERIALIZABLE it does not give (sql_refusals.rs).
    client
        .batch_execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
        .await
        .unwrap();
}

/// Range reads within one partition are served from memory once the partition has been
/// read four times with no write between (the sled backend's partition cache). Every
/// kind of write from another session, between such reads, must show in the next read.
#[tokio::test]
async fn range_reads_within_a_partition_see_every_write_between_them() {
    let server = TestServer::start().await;
    let reader = server.connect().await;
    let writer = server.connect().await;
    writer
        .batch_execute(
            "CREATE TABLE t (p BIGINT, s TEXT, n BIGINT, v TEXT, PRIMARY KEY (p, s, n));
             INSERT INTO t SELECT 1, 's' || lpad(g::text, 3, '0'), g % 3, 'old' FROM generate_series(0, 299) g;
             INSERT INTO t SELECT 2, 's' || lpad(g::text, 3, '0'), 0, 'other' FROM generate_series(0, 49) g;",
        )
        .await
        .unwrap();
    let range = "SELECT s, n, v FROM t WHERE p = 1 AND s >= 's100' AND s < 's104'";
    // Enough reads that the later ones come from the cached copy.
    let read_repeatedly = || async {
        let first = simple_rows(&reader, range).await;
        for _ in 0..5 {
            assert_eq!(simple_rows(&reader, range).await, first);
        }
        first
    };
    let row = |s: &str, n: &str, v: &str| vec![s.to_owned(), n.to_owned(), v.to_owned()];
    assert_eq!(
        read_repeatedly().await,
        vec![
            row("s100", "1", "old"),
            row("s101", "2", "old"),
            row("s102", "0", "old"),
            row("s103", "1", "old")
        ]
    );

    writer
        .execute(
            "UPDATE t SET v = 'updated' WHERE p = 1 AND s = 's101' AND n = 2",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(read_repeatedly().await[1], row("s101", "2", "updated"));

    writer
        .execute("DELETE FROM t WHERE p = 1 AND s = 's102' AND n = 0", &[])
        .await
        .unwrap();
    let rows = read_repeatedly().await;
    assert_eq!(rows.len(), 3);
    assert!(!rows.contains(&row("s102", "0", "old")));

    writer
        .execute("INSERT INTO t VALUES (1, 's102', 7, 'inserted')", &[])
        .await
        .unwrap();
    assert_eq!(read_repeatedly().await[2], row("s102", "7", "inserted"));

    // A write to another partition, then a committed block of two writes to this one.
    writer
        .batch_execute(
            "UPDATE t SET v = 'elsewhere' WHERE p = 2 AND s = 's001' AND n = 0;
             BEGIN;
             UPDATE t SET v = 'in block' WHERE p = 1 AND s = 's100' AND n = 1;
             INSERT INTO t VALUES (1, 's103', 9, 'in block');
             COMMIT;",
        )
        .await
        .unwrap();
    assert_eq!(
        read_repeatedly().await,
        vec![
            row("s100", "1", "in block"),
            row("s101", "2", "updated"),
            row("s102", "7", "inserted"),
            row("s103", "1", "old"),
            row("s103", "9", "in block")
        ]
    );

    // COPY into the partition, then the partition read backward with a LIMIT.
    let sink = writer.copy_in("COPY t FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    use futures::SinkExt;
    sink.send(bytes::Bytes::from_static(b"1\ts1025\t0\tcopied\n"))
        .await
        .unwrap();
    sink.finish().await.unwrap();
    let backward = "SELECT s, n, v FROM t WHERE p = 1 AND s >= 's100' AND s < 's104' \
                    ORDER BY p DESC, s DESC, n DESC LIMIT 3";
    assert_eq!(
        simple_rows(&reader, backward).await,
        vec![
            row("s103", "9", "in block"),
            row("s103", "1", "old"),
            row("s1025", "0", "copied")
        ]
    );
    writer
        .batch_execute("DELETE FROM t WHERE p = 1")
        .await
        .unwrap();
    assert!(read_repeatedly().await.is_empty());
    assert_eq!(
        simple_rows(&reader, "SELECT count(*) FROM t WHERE p = 2").await,
        vec![vec!["50"]]
    );
}

/// A row whose every cell outlived the TTL is gone, even though its last write is
/// recent (a write with an explicit old version); it used to linger with every
/// attribute NULL. A row that never had a cell lives as long as its write.
#[tokio::test]
async fn rows_whose_cells_all_expired_are_gone() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64;
    // Visible while ⌊v/1000⌋ + 3 > ⌊now/1000⌋: with v one second back, for the rest of
    // this second and the next one (at least a second for the set-up), then gone.
    let old = now_ms - 1_000;
    let expired_at_ms = (now_ms.div_euclid(1000) + 2) * 1000;
    client
        .batch_execute(&format!(
            "CREATE TABLE expiring (pk BIGINT PRIMARY KEY, a BIGINT) WITH (ttl = 3);
             INSERT INTO expiring (pk, a, _version) VALUES (1, 5, {old});
             INSERT INTO expiring (pk) VALUES (2);"
        ))
        .await
        .expect("setup");
    assert_eq!(
        simple_rows(&client, "SELECT pk, a FROM expiring ORDER BY pk").await,
        [["1", "5"], ["2", "NULL"]]
    );
    let wait_ms = expired_at_ms - now_ms + 50;
    tokio::time::sleep(std::time::Duration::from_millis(wait_ms as u64)).await;
    for sql in [
        "SELECT pk, a FROM expiring ORDER BY pk",
        "SELECT pk, a FROM expiring WHERE pk IN (1, 2) ORDER BY pk",
    ] {
        assert_eq!(simple_rows(&client, sql).await, [["2", "NULL"]], "{sql}");
    }
    assert_eq!(
        simple_rows(&client, "SELECT count(*) FROM expiring").await,
        [["1"]]
    );
}

/// A WHERE clause nested 95 parentheses deep is planned (sqlparser's default limit
/// refused 50), on a test thread's ordinary stack.
#[tokio::test]
async fn deeply_nested_where_clauses_are_planned() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE deep (k BIGINT PRIMARY KEY, v BIGINT); INSERT INTO deep VALUES (1, 10), (2, 20)")
        .await
        .expect("setup");
    let sql = format!(
        "SELECT v FROM deep WHERE {}k = 2{}",
        "(".repeat(95),
        ")".repeat(95)
    );
    assert_eq!(simple_rows(&client, &sql).await, [["20"]]);
}

/// A long chain of arithmetic is typed in one pass over it: asking each operand's type
/// twice per level made `SELECT 1+1+...+1` take time doubling with each term (30 terms
/// ran for minutes on one thread). A chain deeper than the parser's limit is 54001, as
/// PostgreSQL's stack depth limit is, not a stack overflow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_arithmetic_chains_are_typed_in_linear_time() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    purchases(&client).await;
    let ones = vec!["1"; 60].join(" + ");
    let amounts = vec!["amount"; 60].join(" + ");
    let sql =
        format!("SELECT {ones}, {amounts} FROM p WHERE card = 1 AND seller = 'a' AND dev = 1");
    let rows = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        simple_rows(&client, &sql),
    )
    .await
    .expect("a chain of 60 terms is typed and computed at once");
    assert_eq!(rows, vec![vec!["60".to_string(), "600".to_string()]]);
    let deep = format!("SELECT {}", vec!["1"; 1000].join(" + "));
    assert_eq!(code(client.simple_query(&deep).await), "54001");
}
