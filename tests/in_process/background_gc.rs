//! The background GC of a running server: on its own thread, at the configured interval,
//! it removes the versions no read can see, and reads go on showing the same rows. Writes
//! keep no such versions in the first place.

use crate::common;

use common::TestServer;
use pgwide::storage::{Direction, KeyRange};
use std::ops::Bound;
use std::time::{Duration, Instant};

/// Bytes the server stores for every row, catalog included.
async fn stored_bytes(server: &TestServer) -> usize {
    let everything = KeyRange {
        start: Bound::Unbounded,
        end: Bound::Unbounded,
    };
    server
        .gateway
        .engine()
        .backend()
        .scan(&everything, Direction::Forward, usize::MAX)
        .await
        .unwrap()
        .iter()
        .map(|(key, value)| key.len() + value.len())
        .sum()
}

/// Creates `notes` with `max_versions`, then writes its row's `body` five times over (an
/// INSERT, then four UPDATEs), 1,000 bytes each time; afterwards sets Max Versions to
/// `then`.
async fn write_five_versions(client: &tokio_postgres::Client, max_versions: i64, then: i64) {
    client
        .batch_execute(&format!(
            "CREATE TABLE notes (id BIGINT PRIMARY KEY, body TEXT) WITH (max_versions = {max_versions})"
        ))
        .await
        .unwrap();
    client
        .execute("INSERT INTO notes VALUES (1, $1)", &[&"a".repeat(1000)])
        .await
        .unwrap();
    for body in ["b", "c", "d", "e"] {
        client
            .execute(
                "UPDATE notes SET body = $1 WHERE id = 1",
                &[&body.repeat(1000)],
            )
            .await
            .unwrap();
    }
    client
        .batch_execute(&format!("ALTER TABLE notes SET (max_versions = {then})"))
        .await
        .unwrap();
}

#[tokio::test]
async fn versions_past_max_versions_are_removed_by_the_background_pass() {
    let server = TestServer::start_with(|config| config.gc_interval_secs = 1).await;
    let client = server.connect().await;
    // Lowering hides the four older versions at once; only GC removes them.
    write_five_versions(&client, 5, 1).await;
    let with_hidden_versions = stored_bytes(&server).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut stored = with_hidden_versions;
    while stored > with_hidden_versions - 3000 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stored = stored_bytes(&server).await;
    }
    assert!(
        stored <= with_hidden_versions - 3000,
        "the four hidden 1,000-byte versions are still stored: {stored} bytes, {with_hidden_versions} before"
    );
    let row = client
        .query_one("SELECT left(body, 3) FROM notes WHERE id = 1", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "eee");
}

/// An UPDATE of a table with max_versions = 1 stores the new version only: raising Max
/// Versions afterwards shows no older one, as no GC pass had to remove it.
#[tokio::test]
async fn an_update_keeps_no_version_past_max_versions() {
    let server = TestServer::start_with(|config| config.gc_interval_secs = 3600).await;
    let client = server.connect().await;
    write_five_versions(&client, 1, 5).await;
    let rows = client
        .query(
            "SELECT left(value, 3) FROM versions.notes WHERE id = 1 AND column_name = 'body'",
            &[],
        )
        .await
        .unwrap();
    let bodies: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
    assert_eq!(bodies, vec!["eee"]);
}
