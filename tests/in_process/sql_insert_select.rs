//! `INSERT ... SELECT` and `CREATE TABLE ... AS SELECT` over the wire: rows come from
//! the fast path or DataFusion, are converted like VALUES rows, and are written
//! atomically.

use crate::common;

use common::{code, simple_rows, TestServer};

async fn setup(client: &tokio_postgres::Client) {
    client
        .batch_execute(
            "CREATE TABLE src (id BIGINT PRIMARY KEY, name TEXT, score DOUBLE PRECISION);
             INSERT INTO src VALUES (1, 'a', 1.5), (2, 'b', NULL), (3, 'c', 3.0);
             CREATE TABLE dst (id BIGINT PRIMARY KEY, name TEXT, score DOUBLE PRECISION, n BIGINT);",
        )
        .await
        .expect("setup");
}

#[tokio::test]
async fn insert_select_copies_rows_and_reports_the_count() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    // A fast-path read, mapped onto named columns in another order.
    let n = client
        .execute(
            "INSERT INTO dst (name, id) SELECT name, id FROM src WHERE id >= 2",
            &[],
        )
        .await
        .expect("insert select");
    assert_eq!(n, 2);
    // A DataFusion query (aggregate) with conversions: count(*) into a BIGINT column,
    // an integer expression into a DOUBLE column.
    client
        .execute(
            "INSERT INTO dst SELECT 10 + count(*), 'total', sum(id), max(id) FROM src",
            &[],
        )
        .await
        .expect("aggregate insert select");
    assert_eq!(
        simple_rows(&client, "SELECT id, name, score, n FROM dst ORDER BY id").await,
        vec![
            vec!["2", "b", "NULL", "NULL"],
            vec!["3", "c", "NULL", "NULL"],
            vec!["13", "total", "6", "3"],
        ]
    );
    let messages = client
        .simple_query("INSERT INTO dst (id, n) SELECT id + 100, id FROM src")
        .await
        .expect("tag");
    assert!(messages
        .iter()
        .any(|m| matches!(m, tokio_postgres::SimpleQueryMessage::CommandComplete(3))));
}

#[tokio::test]
async fn insert_select_is_atomic_on_a_duplicate_key() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    client
        .execute("INSERT INTO dst (id) VALUES (3)", &[])
        .await
        .expect("seed");
    let err = client
        .execute("INSERT INTO dst (id, name) SELECT id, name FROM src", &[])
        .await;
    assert_eq!(code(err), "23505");
    assert_eq!(
        simple_rows(&client, "SELECT count(*) FROM dst").await,
        vec![vec!["1"]]
    );
    let err = client
        .execute("INSERT INTO dst (id) SELECT id, name FROM src", &[])
        .await;
    assert_eq!(code(err), "42601");
}

#[tokio::test]
async fn insert_select_sets_versions() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    // Versions are milliseconds and must lie near now (max_version_offset).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64;
    client
        .execute(
            &format!(
                "INSERT INTO dst (id, name, _version) SELECT id, name, {now} + id FROM src \
                 WHERE id = 1"
            ),
            &[],
        )
        .await
        .expect("insert with versions");
    assert_eq!(
        simple_rows(
            &client,
            "SELECT id, column_name, version FROM versions.dst ORDER BY id"
        )
        .await,
        vec![vec!["1".to_string(), "name".into(), (now + 1).to_string()]]
    );
}

#[tokio::test]
async fn create_table_as_takes_its_key_from_with_or_rowid() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    setup(&client).await;
    let messages = client
        .simple_query(
            "CREATE TABLE keyed WITH (primary_key = 'name', max_versions = 2) AS \
             SELECT name, id * 2 AS twice, score FROM src WHERE id < 3",
        )
        .await
        .expect("ctas");
    assert!(messages
        .iter()
        .any(|m| matches!(m, tokio_postgres::SimpleQueryMessage::CommandComplete(2))));
    assert_eq!(
        simple_rows(&client, "SELECT * FROM keyed ORDER BY name").await,
        vec![vec!["a", "2", "1.5"], vec!["b", "4", "NULL"]]
    );
    // The key is the named column: a second row with that name conflicts.
    let err = client
        .execute("INSERT INTO keyed (name) VALUES ('a')", &[])
        .await;
    assert_eq!(code(err), "23505");

    client
        .batch_execute("CREATE TABLE plain AS SELECT name, count(*) AS n FROM src GROUP BY name")
        .await
        .expect("ctas without key");
    assert_eq!(
        simple_rows(&client, "SELECT * FROM plain ORDER BY name").await,
        vec![vec!["a", "1"], vec!["b", "1"], vec!["c", "1"]]
    );
    // A key column that the query does not return is refused and leaves no table.
    let err = client
        .execute(
            "CREATE TABLE bad WITH (primary_key = 'nope') AS SELECT id FROM src",
            &[],
        )
        .await;
    assert_eq!(code(err), "42703");
    let err = client.execute("SELECT * FROM bad", &[]).await;
    assert_eq!(code(err), "42P01");
}
