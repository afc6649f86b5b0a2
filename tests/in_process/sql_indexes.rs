//! Secondary indexes over the wire beyond what the differential test compares: the
//! access path EXPLAIN names (on the fast path, for prepared statements and in
//! DataFusion), unique indexes under concurrent writers, and index changes inside
//! transaction blocks.

use crate::common;

use common::{code, simple_rows, TestServer};

async fn users(client: &tokio_postgres::Client) {
    client
        .batch_execute(
            "CREATE TABLE users (id BIGINT PRIMARY KEY, email TEXT UNIQUE, team INTEGER);
             CREATE INDEX users_team ON users (team);
             INSERT INTO users VALUES (1, 'a@x', 1), (2, 'b@x', 1), (3, 'c@x', 2);",
        )
        .await
        .expect("users");
}

/// The plan a statement gets, as one string.
pub(crate) async fn explain(client: &tokio_postgres::Client, sql: &str) -> String {
    simple_rows(client, &format!("EXPLAIN {sql}"))
        .await
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn lookups_by_an_indexed_column_read_through_the_index() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    users(&client).await;
    let plan = explain(&client, "SELECT id FROM users WHERE email = 'b@x'").await;
    assert!(
        plan.contains("IndexGet users using users_email_key"),
        "{plan}"
    );
    // Prepared, as an ORM sends it: the parameter is looked up in the index.
    let by_email = client
        .prepare("SELECT id, team FROM users WHERE email = $1")
        .await
        .expect("prepare");
    for (email, want) in [
        ("a@x", Some((1i64, 1i32))),
        ("c@x", Some((3, 2))),
        ("z@x", None),
    ] {
        let rows = client.query(&by_email, &[&email]).await.expect("query");
        let got = rows
            .first()
            .map(|r| (r.get::<_, i64>(0), r.get::<_, i32>(1)));
        assert_eq!(got, want, "{email}");
    }
    // DataFusion's scan of the table takes the same path.
    let plan = explain(&client, "SELECT count(*) FROM users WHERE team = 1").await;
    assert!(plan.contains("IndexGet users using users_team"), "{plan}");
    assert_eq!(
        simple_rows(&client, "SELECT count(*) FROM users WHERE team = 1").await,
        [["2"]]
    );
    // An index being written while rows change: a lookup sees each row's new values.
    client
        .batch_execute("UPDATE users SET team = 2 WHERE id = 1; DELETE FROM users WHERE id = 2")
        .await
        .expect("writes");
    assert_eq!(
        simple_rows(&client, "SELECT id FROM users WHERE team = 2 ORDER BY id").await,
        [["1"], ["3"]]
    );
    assert!(simple_rows(&client, "SELECT id FROM users WHERE team = 1")
        .await
        .is_empty());
}

/// Writers racing for one unique value: exactly one wins, the others get 23505.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_of_many_concurrent_writers_gets_a_unique_value() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    users(&client).await;
    let mut writers = Vec::new();
    for id in 10..26i64 {
        let client = server.connect().await;
        writers.push(tokio::spawn(async move {
            client
                .execute("INSERT INTO users VALUES ($1, 'race@x', 3)", &[&id])
                .await
                .map(|_| ())
                .map_err(|e| e.code().map(|c| c.code().to_string()))
        }));
    }
    let mut won = 0;
    for writer in writers {
        match writer.await.expect("writer") {
            Ok(()) => won += 1,
            Err(code) => assert_eq!(code.as_deref(), Some("23505")),
        }
    }
    assert_eq!(won, 1);
    assert_eq!(
        simple_rows(&client, "SELECT count(*) FROM users WHERE email = 'race@x'").await,
        [["1"]]
    );
}

#[tokio::test]
async fn index_changes_in_a_block_are_undone_and_checked_at_each_statement() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    users(&client).await;
    client
        .batch_execute("BEGIN; CREATE INDEX users_by_team_email ON users (team, email); ROLLBACK")
        .await
        .expect("rolled back");
    assert_eq!(
        simple_rows(
            &client,
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'users_by_team_email'"
        )
        .await,
        [["0"]]
    );
    // A block's statement that duplicates a stored row, or one the block wrote, fails
    // there (23505), as in PostgreSQL: a savepoint before it recovers the block.
    client
        .batch_execute("BEGIN; INSERT INTO users VALUES (4, 'd@x', 1); SAVEPOINT s")
        .await
        .expect("staged");
    // Reads in the block see its own rows, through a scan.
    assert_eq!(
        simple_rows(&client, "SELECT id FROM users WHERE email = 'd@x'").await,
        [["4"]]
    );
    for duplicate in [
        "INSERT INTO users VALUES (5, 'a@x', 1)",
        "INSERT INTO users VALUES (5, 'd@x', 1)",
        "UPDATE users SET email = 'b@x' WHERE id = 4",
    ] {
        assert_eq!(
            code(client.batch_execute(duplicate).await),
            "23505",
            "{duplicate}"
        );
        client
            .batch_execute("ROLLBACK TO SAVEPOINT s")
            .await
            .expect("back to the savepoint");
    }
    // A row another session commits meanwhile with the same values is found at COMMIT:
    // it fails, and none of the block's writes land.
    client
        .batch_execute("INSERT INTO users VALUES (5, 'e@x', 2)")
        .await
        .expect("not a duplicate yet");
    let other = server.connect().await;
    other
        .batch_execute("INSERT INTO users VALUES (6, 'e@x', 3)")
        .await
        .expect("the other session's row");
    assert_eq!(code(client.batch_execute("COMMIT").await), "23505");
    assert_eq!(
        simple_rows(&client, "SELECT id FROM users ORDER BY id").await,
        [["1"], ["2"], ["3"], ["6"]]
    );
}

/// Sessions upserting the same email at once through its unique index (Knex's
/// `onConflict('email').merge()`, Sequelize's `upsert`): every statement succeeds,
/// one row holds the email, and every increment landed; DO NOTHING racing the same
/// way inserts the row once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_upserts_on_a_unique_index_meet_on_one_row() {
    const SESSIONS: i64 = 4;
    const UPSERTS: i64 = 25;
    let server = TestServer::start().await;
    let setup = server.connect().await;
    setup
        .batch_execute(
            "CREATE TABLE hits (id BIGSERIAL PRIMARY KEY, email TEXT UNIQUE, n BIGINT, who TEXT)",
        )
        .await
        .expect("setup");
    let mut tasks = Vec::new();
    for who in 0..SESSIONS {
        let client = server.connect().await;
        tasks.push(tokio::spawn(async move {
            for _ in 0..UPSERTS {
                client
                    .execute(
                        "INSERT INTO hits (email, n, who) VALUES ('a@x', 1, $1) \
                         ON CONFLICT (email) DO UPDATE SET n = hits.n + 1, who = EXCLUDED.who",
                        &[&who.to_string()],
                    )
                    .await
                    .expect("upsert");
                client
                    .execute(
                        "INSERT INTO hits (email, n, who) VALUES ('b@x', 1, $1) \
                         ON CONFLICT DO NOTHING",
                        &[&who.to_string()],
                    )
                    .await
                    .expect("insert or nothing");
            }
        }));
    }
    for task in tasks {
        task.await.expect("session");
    }
    assert_eq!(
        simple_rows(&setup, "SELECT email, n FROM hits ORDER BY email").await,
        [
            ["a@x".to_string(), (SESSIONS * UPSERTS).to_string()],
            ["b@x".to_string(), "1".to_string()]
        ]
    );
}
