//! `ALTER TABLE ... ADD PRIMARY KEY` on a table created without one, as pg_dump's
//! scripts key every table after its COPY: the rows are re-keyed by the columns, reads
//! by them become point gets, and a key the rows break (a NULL, a duplicate) is refused
//! with PostgreSQL's error, leaving the table as it was.

use crate::common::{code, simple_rows, TestServer};
use crate::sql_indexes::explain;

/// The SQLSTATE, message and DETAIL of a failed statement (pgwide writes PostgreSQL's
/// DETAIL into the message, after a colon).
async fn failure(client: &tokio_postgres::Client, sql: &str) -> (String, String, String) {
    let error = client
        .batch_execute(sql)
        .await
        .expect_err(&format!("{sql} should fail"));
    let db = error.as_db_error().expect("a server error");
    (
        db.code().code().to_string(),
        db.message().to_string(),
        db.detail().unwrap_or_default().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adding_a_primary_key_rekeys_the_rows_it_has() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE reading (device TEXT NOT NULL, taken TIMESTAMPTZ NOT NULL, \
                 value REAL, note TEXT); \
             CREATE INDEX reading_note ON reading (note); \
             INSERT INTO reading SELECT 'd' || (g % 7), \
                 TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 minute', \
                 g / 4.0, 'n' || (g % 3) FROM generate_series(1, 700) g; \
             UPDATE reading SET note = 'changed' WHERE value = 10",
        )
        .await
        .expect("a table without a key, with rows");
    let totals = "SELECT count(*), sum(value), count(DISTINCT note) FROM reading";
    let before = simple_rows(&client, totals).await;
    client
        .batch_execute(
            "ALTER TABLE ONLY reading ADD CONSTRAINT reading_pkey PRIMARY KEY (device, taken)",
        )
        .await
        .expect("add primary key");
    assert_eq!(simple_rows(&client, totals).await, before);
    // The columns keep their order and types; no hidden column shows.
    assert_eq!(
        simple_rows(
            &client,
            "SELECT * FROM reading WHERE device = 'd3' ORDER BY taken LIMIT 2"
        )
        .await,
        [
            ["d3", "2026-01-01 00:03:00+00", "0.75", "n0"],
            ["d3", "2026-01-01 00:10:00+00", "2.5", "n1"]
        ]
    );
    let point =
        "SELECT value FROM reading WHERE device = 'd3' AND taken = '2026-01-01 00:10:00+00'";
    assert!(explain(&client, point).await.contains("GetRow reading"));
    assert_eq!(simple_rows(&client, point).await, [["2.5"]]);
    let by_device = "SELECT count(*) FROM reading WHERE device = 'd3'";
    assert!(explain(&client, by_device)
        .await
        .contains("GetRange reading"));
    assert_eq!(simple_rows(&client, by_device).await, [["100"]]);
    // The index was rebuilt for the new keys.
    let by_note = "SELECT device, taken FROM reading WHERE note = 'changed'";
    assert!(explain(&client, by_note)
        .await
        .contains("IndexGet reading using reading_note"));
    assert_eq!(
        simple_rows(&client, by_note).await,
        [["d5", "2026-01-01 00:40:00+00"]]
    );
    // The catalog shows the key as PostgreSQL does.
    assert_eq!(
        simple_rows(
            &client,
            "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint \
             WHERE conrelid = 'reading'::regclass AND contype = 'p'"
        )
        .await,
        [["reading_pkey", "p", "PRIMARY KEY (device, taken)"]]
    );
    // Writes from now on are keyed: a duplicate is 23505, a missing key column 23502.
    client
        .batch_execute("INSERT INTO reading VALUES ('d9', '2026-02-01 00:00:00+00', 1, 'x')")
        .await
        .expect("insert");
    let (state, message, _) = failure(
        &client,
        "INSERT INTO reading VALUES ('d9', '2026-02-01 00:00:00+00', 2, 'y')",
    )
    .await;
    assert_eq!(
        (state.as_str(), message.contains("reading_pkey")),
        ("23505", true),
        "{message}"
    );
    assert_eq!(
        code(
            client
                .execute("INSERT INTO reading (device, value) VALUES ('d9', 3)", &[])
                .await
        ),
        "23502"
    );
    assert_eq!(simple_rows(&client, totals).await[0][0], "701");
}

/// A key the rows break is PostgreSQL's error, and the table stays as it was,
/// without a key and still taking rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_the_rows_break_is_refused_and_changes_nothing() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE dup (k INTEGER, v TEXT); \
             INSERT INTO dup VALUES (1, 'a'), (2, 'b'), (1, 'c'); \
             CREATE TABLE hole (k INTEGER, v TEXT); \
             INSERT INTO hole VALUES (1, 'a'), (NULL, 'b')",
        )
        .await
        .expect("tables");
    assert_eq!(
        failure(&client, "ALTER TABLE dup ADD PRIMARY KEY (k)").await,
        (
            "23505".to_string(),
            "could not create unique index \"dup_pkey\": Key (k)=(1) is duplicated.".to_string(),
            String::new()
        )
    );
    assert_eq!(
        failure(&client, "ALTER TABLE hole ADD PRIMARY KEY (k)").await,
        (
            "23502".to_string(),
            "column \"k\" of relation \"hole\" contains null values".to_string(),
            String::new()
        )
    );
    for table in ["dup", "hole"] {
        client
            .batch_execute(&format!("INSERT INTO {table} VALUES (1, 'again')"))
            .await
            .expect("still keyless");
        assert_eq!(
            simple_rows(
                &client,
                &format!("SELECT count(*) FROM {table} WHERE k = 1")
            )
            .await,
            [[if table == "dup" { "3" } else { "2" }]],
        );
        assert!(simple_rows(
            &client,
            &format!(
                "SELECT 1 FROM pg_constraint WHERE conrelid = '{table}'::regclass \
                 AND contype = 'p'"
            )
        )
        .await
        .is_empty());
    }
    // Once the rows allow it, the key is added.
    client
        .batch_execute(
            "DELETE FROM dup WHERE v IN ('c', 'again'); ALTER TABLE dup ADD PRIMARY KEY (k)",
        )
        .await
        .expect("a key the rows allow");
    assert_eq!(
        simple_rows(&client, "SELECT k, v FROM dup ORDER BY k").await,
        [["1", "a"], ["2", "b"]]
    );
}

/// What a primary key cannot be, each with PostgreSQL's SQLSTATE (0A000 where pgwide
/// would have to ignore what was asked).
#[tokio::test]
async fn keys_that_cannot_be_are_refused() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE keyed (id BIGINT PRIMARY KEY, x TEXT); \
             CREATE TABLE loose (a INTEGER, b DOUBLE PRECISION, c TEXT, d TIMESTAMP(3))",
        )
        .await
        .expect("tables");
    for (sql, want) in [
        ("ALTER TABLE keyed ADD PRIMARY KEY (x)", "42P16"),
        ("ALTER TABLE loose ADD PRIMARY KEY (nope)", "42703"),
        ("ALTER TABLE loose ADD PRIMARY KEY (a, a)", "42701"),
        ("ALTER TABLE loose ADD PRIMARY KEY (b)", "42804"),
        ("ALTER TABLE loose ADD PRIMARY KEY (d)", "0A000"),
        ("ALTER TABLE loose ADD PRIMARY KEY (a) DEFERRABLE", "0A000"),
        (
            "ALTER TABLE loose ADD PRIMARY KEY (a), ADD COLUMN e TEXT",
            "0A000",
        ),
        (
            "CREATE TABLE two (a INTEGER PRIMARY KEY, b INTEGER PRIMARY KEY)",
            "42P16",
        ),
        ("BEGIN; ALTER TABLE loose ADD PRIMARY KEY (a)", "0A000"),
        (
            "ALTER TABLE keyed ADD COLUMN y INTEGER PRIMARY KEY",
            "42P16",
        ),
        (
            "ALTER TABLE loose ADD COLUMN y INTEGER PRIMARY KEY",
            "0A000",
        ),
        // A key's index is a relation: its name cannot be another's.
        (
            "CREATE TABLE clash (a INTEGER CONSTRAINT keyed PRIMARY KEY)",
            "42P07",
        ),
        (
            "ALTER TABLE loose ADD CONSTRAINT keyed PRIMARY KEY (a)",
            "42P07",
        ),
    ] {
        assert_eq!(code(client.batch_execute(sql).await), want, "{sql}");
        client.batch_execute("ROLLBACK").await.ok();
    }
    assert!(simple_rows(
        &client,
        "SELECT 1 FROM pg_class WHERE relname IN ('two', 'clash') \
         UNION ALL SELECT 1 FROM pg_attribute WHERE attname = 'y'"
    )
    .await
    .is_empty());
}

/// A primary key keeps the name it is declared with (Alembic names its version
/// table's `alembic_version_pkc`), in the catalog and in its errors.
#[tokio::test]
async fn a_primary_key_keeps_its_name() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE v (num VARCHAR(32) NOT NULL, CONSTRAINT v_pkc PRIMARY KEY (num)); \
             CREATE TABLE w (a INTEGER CONSTRAINT w_key PRIMARY KEY); \
             CREATE TABLE x (a INTEGER, b TEXT); \
             ALTER TABLE x ADD CONSTRAINT x_by_a PRIMARY KEY (a); \
             INSERT INTO v VALUES ('1'); INSERT INTO x VALUES (1, 'one')",
        )
        .await
        .expect("named keys");
    assert_eq!(
        simple_rows(
            &client,
            "SELECT conrelid::regclass::text, conname FROM pg_constraint WHERE contype = 'p' \
             ORDER BY 1"
        )
        .await,
        [["v", "v_pkc"], ["w", "w_key"], ["x", "x_by_a"]]
    );
    assert_eq!(
        simple_rows(
            &client,
            "SELECT indexrelid::regclass::text FROM pg_index WHERE indisprimary ORDER BY 1"
        )
        .await,
        [["v_pkc"], ["w_key"], ["x_by_a"]]
    );
    for (sql, name) in [
        ("INSERT INTO v VALUES ('1')", "v_pkc"),
        ("INSERT INTO x VALUES (1, 'again')", "x_by_a"),
    ] {
        let (state, message, _) = failure(&client, sql).await;
        assert_eq!(state, "23505", "{sql}");
        assert!(message.contains(&format!("\"{name}\"")), "{message}");
    }
}
