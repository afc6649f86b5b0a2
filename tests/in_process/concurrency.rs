//! The isolation pgwide gives, across connections (docs/postgresql.md, "Transactions"):
//! read committed, with a transaction block's writes applied atomically at COMMIT, and
//! write-write conflicts won by the first committer. A block whose rows another session
//! changed after the block first touched them fails at COMMIT with 40001 and applies
//! nothing; statements outside a block never lose a concurrent update.

use crate::common;

use common::{code, simple_rows, TestServer};

async fn counter_table(client: &tokio_postgres::Client) {
    client
        .batch_execute(
            "CREATE TABLE c (k BIGINT PRIMARY KEY, n BIGINT, note TEXT);
             INSERT INTO c VALUES (1, 0, 'start'), (2, 0, 'start')",
        )
        .await
        .expect("setup");
}

async fn value(client: &tokio_postgres::Client, sql: &str) -> String {
    simple_rows(client, sql).await[0][0].clone()
}

/// A block's blind UPDATE must not overwrite an update another session committed
/// after the block wrote the row: its COMMIT is 40001 and the other update stays.
#[tokio::test]
async fn a_blind_update_loses_to_an_earlier_commit() {
    let server = TestServer::start().await;
    let a = server.connect().await;
    let b = server.connect().await;
    counter_table(&a).await;
    a.batch_execute("BEGIN; UPDATE c SET note = 'from a' WHERE k = 1")
        .await
        .expect("a stages");
    b.batch_execute("UPDATE c SET note = 'from b' WHERE k = 1")
        .await
        .expect("b commits");
    assert_eq!(code(a.batch_execute("COMMIT").await), "40001");
    assert_eq!(value(&a, "SELECT note FROM c WHERE k = 1").await, "from b");
    // The connection is usable again, outside any block.
    a.batch_execute("UPDATE c SET note = 'again' WHERE k = 1")
        .await
        .expect("after the failed commit");
}

/// Of two blocks writing the same row, the first to commit wins.
#[tokio::test]
async fn the_first_of_two_blocks_to_commit_wins() {
    let server = TestServer::start().await;
    let a = server.connect().await;
    let b = server.connect().await;
    counter_table(&a).await;
    for (client, who) in [(&a, "a"), (&b, "b")] {
        client
            .batch_execute(&format!(
                "BEGIN; UPDATE c SET n = n + 1, note = '{who}' WHERE k = 1"
            ))
            .await
            .expect("stage");
    }
    b.batch_execute("COMMIT").await.expect("b commits first");
    assert_eq!(code(a.batch_execute("COMMIT").await), "40001");
    assert_eq!(
        simple_rows(&a, "SELECT n, note FROM c WHERE k = 1").await,
        [["1", "b"]]
    );
}

/// DELETE and INSERT conflict the same way; blocks on different rows do not.
#[tokio::test]
async fn every_write_form_conflicts_and_other_rows_do_not() {
    let server = TestServer::start().await;
    let a = server.connect().await;
    let b = server.connect().await;
    counter_table(&a).await;
    a.batch_execute("BEGIN; DELETE FROM c WHERE k = 1")
        .await
        .expect("a");
    b.batch_execute("UPDATE c SET n = 5 WHERE k = 1")
        .await
        .expect("b");
    assert_eq!(code(a.batch_execute("COMMIT").await), "40001");
    assert_eq!(value(&a, "SELECT n FROM c WHERE k = 1").await, "5");

    a.batch_execute("BEGIN; INSERT INTO c VALUES (3, 1, 'a')")
        .await
        .expect("a");
    b.batch_execute("INSERT INTO c VALUES (3, 2, 'b')")
        .await
        .expect("b");
    assert_eq!(code(a.batch_execute("COMMIT").await), "40001");
    assert_eq!(value(&a, "SELECT note FROM c WHERE k = 3").await, "b");

    a.batch_execute("BEGIN; UPDATE c SET note = 'a' WHERE k = 1")
        .await
        .expect("a");
    b.batch_execute("BEGIN; UPDATE c SET note = 'b' WHERE k = 2")
        .await
        .expect("b");
    a.batch_execute("COMMIT").await.expect("a commits");
    b.batch_execute("COMMIT").await.expect("b commits too");
    assert_eq!(
        simple_rows(&a, "SELECT note FROM c WHERE k IN (1, 2) ORDER BY k").await,
        [["a"], ["b"]]
    );
}

/// A block reads its own writes; nobody else sees them before COMMIT.
#[tokio::test]
async fn a_block_reads_its_writes_and_only_it_does() {
    let server = TestServer::start().await;
    let a = server.connect().await;
    let b = server.connect().await;
    counter_table(&a).await;
    a.batch_execute("BEGIN; UPDATE c SET n = 7 WHERE k = 1; INSERT INTO c VALUES (9, 9, 'new')")
        .await
        .expect("stage");
    assert_eq!(value(&a, "SELECT n FROM c WHERE k = 1").await, "7");
    assert_eq!(value(&a, "SELECT count(*) FROM c").await, "3");
    assert_eq!(value(&b, "SELECT n FROM c WHERE k = 1").await, "0");
    assert_eq!(value(&b, "SELECT count(*) FROM c").await, "2");
    a.batch_execute("COMMIT").await.expect("commit");
    assert_eq!(value(&b, "SELECT n FROM c WHERE k = 1").await, "7");
    assert_eq!(value(&b, "SELECT count(*) FROM c").await, "3");
}

/// Statements outside a block that compute a row's new values from its old ones never
/// lose a concurrent update: a row changed between the read and the write is read
/// again, as PostgreSQL's read committed re-evaluates it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_computed_updates_are_not_lost() {
    const CLIENTS: usize = 4;
    const UPDATES: usize = 40;
    let server = TestServer::start().await;
    let setup = server.connect().await;
    counter_table(&setup).await;
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let client = server.connect().await;
        tasks.push(tokio::spawn(async move {
            for _ in 0..UPDATES {
                // Not `n = n + 1` (Table Store's atomic increment): read, computed, written.
                client
                    .batch_execute("UPDATE c SET n = 1 + n, note = note || '.' WHERE k = 1")
                    .await
                    .expect("update");
            }
        }));
    }
    for task in tasks {
        task.await.expect("client task");
    }
    let total = CLIENTS * UPDATES;
    assert_eq!(
        simple_rows(&setup, "SELECT n, length(note) FROM c WHERE k = 1").await,
        [[total.to_string(), (total + 5).to_string()]]
    );
}

/// Increments (`n = n + k`) are applied at COMMIT to the value stored then, so blocks
/// that only increment a row do not conflict and none of their increments is lost
/// (pgbench's TPC-B-like script); a write whose condition failed (ON CONFLICT DO
/// NOTHING that did nothing) does not make the block conflict either.
#[tokio::test]
async fn increments_and_writes_that_did_nothing_do_not_conflict() {
    let server = TestServer::start().await;
    let a = server.connect().await;
    let b = server.connect().await;
    counter_table(&a).await;
    a.batch_execute("BEGIN; UPDATE c SET n = n + 5 WHERE k = 1")
        .await
        .expect("a");
    b.batch_execute("BEGIN; UPDATE c SET n = n + 7 WHERE k = 1; COMMIT")
        .await
        .expect("b");
    b.batch_execute("UPDATE c SET note = 'b' WHERE k = 1")
        .await
        .expect("b");
    a.batch_execute("COMMIT")
        .await
        .expect("a's increment commits");
    assert_eq!(
        simple_rows(&a, "SELECT n, note FROM c WHERE k = 1").await,
        [["12", "b"]]
    );

    a.batch_execute("BEGIN; INSERT INTO c VALUES (2, 9, 'again') ON CONFLICT (k) DO NOTHING")
        .await
        .expect("a");
    b.batch_execute("UPDATE c SET note = 'b2' WHERE k = 2")
        .await
        .expect("b");
    a.batch_execute("COMMIT")
        .await
        .expect("nothing of a's touched the row");
    assert_eq!(value(&a, "SELECT note FROM c WHERE k = 2").await, "b2");
}

/// Eight sessions inserting into a table with an identity key at once each get their
/// own keys: every row is there, and no key was given twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_inserts_get_distinct_generated_keys() {
    let server = TestServer::start().await;
    let setup = server.connect().await;
    setup
        .batch_execute(
            "CREATE TABLE g (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, who TEXT)",
        )
        .await
        .expect("setup");
    let mut sessions = Vec::new();
    for who in 0..8 {
        let client = server.connect().await;
        sessions.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for _ in 0..50 {
                let rows = client
                    .query(
                        "INSERT INTO g (who) VALUES ($1) RETURNING id",
                        &[&format!("s{who}")],
                    )
                    .await
                    .expect("insert");
                ids.push(rows[0].get::<_, i64>(0));
            }
            ids
        }));
    }
    let mut all = std::collections::BTreeSet::new();
    for session in sessions {
        for id in session.await.expect("session") {
            assert!(all.insert(id), "key {id} was given twice");
        }
    }
    assert_eq!(all.len(), 400);
    assert_eq!(value(&setup, "SELECT count(*) FROM g").await, "400");
}

/// SELECT ... FOR UPDATE in a block holds the rows it read to the block's COMMIT: a
/// change another session makes to one of them first fails that COMMIT with 40001
/// and nothing of the block lands (the block's decision rested on the value it
/// locked); rows nobody changed commit; increments, otherwise exempt, are held too
/// once their row is locked.
#[tokio::test]
async fn rows_locked_for_update_are_held_to_commit() {
    let server = TestServer::start().await;
    let a = server.connect().await;
    let b = server.connect().await;
    counter_table(&a).await;

    a.batch_execute("BEGIN").await.expect("begin");
    assert_eq!(
        value(&a, "SELECT n FROM c WHERE k = 1 FOR UPDATE").await,
        "0"
    );
    b.batch_execute("UPDATE c SET note = 'b' WHERE k = 1")
        .await
        .expect("no session waits on a lock");
    a.batch_execute("UPDATE c SET n = 1, note = 'a' WHERE k = 2")
        .await
        .expect("a writes another row");
    assert_eq!(code(a.batch_execute("COMMIT").await), "40001");
    assert_eq!(value(&a, "SELECT note FROM c WHERE k = 2").await, "start");

    a.batch_execute(
        "BEGIN; SELECT * FROM c WHERE k = 1 FOR SHARE; UPDATE c SET note = 'a' WHERE k = 2; \
         COMMIT",
    )
    .await
    .expect("nobody changed the locked row");
    assert_eq!(value(&a, "SELECT note FROM c WHERE k = 2").await, "a");

    a.batch_execute(
        "BEGIN; SELECT n FROM c WHERE k = 1 FOR NO KEY UPDATE; UPDATE c SET n = n + 1 WHERE k = 1",
    )
    .await
    .expect("lock, then increment");
    b.batch_execute("UPDATE c SET n = n + 10 WHERE k = 1")
        .await
        .expect("b increments");
    assert_eq!(code(a.batch_execute("COMMIT").await), "40001");
    assert_eq!(value(&a, "SELECT n FROM c WHERE k = 1").await, "10");
}
