//! The server's log, as a user reads it to see what a tool sent: every failed statement
//! is logged with its SQLSTATE and its text, over both protocols, as PostgreSQL does
//! with `log_min_error_statement = error`.

mod server_process;

use server_process::Pgwide;
use std::time::Duration;

/// Waits up to two seconds for a log line holding every one of `words`.
fn logged(server: &Pgwide, words: &[&str]) -> bool {
    for _ in 0..40 {
        if server
            .log()
            .iter()
            .any(|line| words.iter().all(|w| line.contains(w)))
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[tokio::test]
async fn failed_statements_are_logged_with_their_sqlstate_and_text() {
    let server = Pgwide::fresh();
    let client = server_process::connect(server.port, "postgres", None, "postgres")
        .await
        .expect("connect");
    client
        .batch_execute("CREATE TABLE logged (id BIGINT PRIMARY KEY)")
        .await
        .expect("create");

    // Simple protocol.
    let missing = "SELECT * FROM no_such_table";
    assert!(client.simple_query(missing).await.is_err());
    // Extended protocol: a statement that parses, then fails when it runs.
    client
        .execute("INSERT INTO logged (id) VALUES (1)", &[])
        .await
        .expect("first insert");
    let duplicate = "INSERT INTO logged (id) VALUES ($1)";
    assert!(client.execute(duplicate, &[&1i64]).await.is_err());
    // Extended protocol: a statement that does not parse.
    assert!(client.prepare("SELEC 1").await.is_err());

    let log = server.log().join("\n");
    assert!(logged(&server, &["ERROR", "42P01", missing]), "{log}");
    assert!(logged(&server, &["ERROR", "23505", duplicate]), "{log}");
    assert!(logged(&server, &["ERROR", "42601", "SELEC 1"]), "{log}");
}
