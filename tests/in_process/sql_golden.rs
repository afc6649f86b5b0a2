//! Golden SQL files: each `tests/sql/NAME.sql` runs statement by statement against a
//! fresh in-process server over the simple query protocol, and what a psql user would
//! see — columns, rows, row counts, SQLSTATEs and messages — must equal
//! `tests/sql/NAME.out`. `PGWIDE_BLESS=1 cargo test --test in_process sql_golden::` rewrites the
//! `.out` files from the current behaviour (review the diff before committing it).

use crate::common;

use common::TestServer;
use std::path::PathBuf;
use tokio_postgres::SimpleQueryMessage;

/// The statements of a script: each ends with `;` at the end of a line. `--` lines
/// outside a statement are kept as they are, so the output reads like the input.
fn statements(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in script.lines() {
        if current.is_empty() && (line.trim().is_empty() || line.trim_start().starts_with("--")) {
            out.push(line.to_string());
            continue;
        }
        if !current.is_empty() {
            current.push('\n');
        }
        current.push_str(line);
        if line.trim_end().ends_with(';') {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Runs one statement and renders what the client received.
async fn run(client: &tokio_postgres::Client, sql: &str) -> String {
    let mut out = String::new();
    match client.simple_query(sql).await {
        Err(e) => match e.as_db_error() {
            Some(db) => out.push_str(&format!("ERROR {}: {}\n", db.code().code(), db.message())),
            None => out.push_str(&format!("ERROR (no SQLSTATE): {e}\n")),
        },
        Ok(messages) => {
            let mut rows = 0usize;
            let mut query = false;
            for message in messages {
                match message {
                    SimpleQueryMessage::RowDescription(columns) => {
                        query = true;
                        let names: Vec<&str> = columns.iter().map(|c| c.name()).collect();
                        out.push_str(&names.join(" | "));
                        out.push('\n');
                    }
                    SimpleQueryMessage::Row(row) => {
                        rows += 1;
                        let values: Vec<&str> = (0..row.len())
                            .map(|i| row.get(i).unwrap_or("NULL"))
                            .collect();
                        out.push_str(&values.join(" | "));
                        out.push('\n');
                    }
                    SimpleQueryMessage::CommandComplete(n) => {
                        if query {
                            out.push_str(&format!("({rows} rows)\n"));
                        } else {
                            out.push_str(&format!("OK {n}\n"));
                        }
                        rows = 0;
                        query = false;
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

async fn golden(name: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sql");
    let script = std::fs::read_to_string(dir.join(format!("{name}.sql"))).expect("script");
    let server = TestServer::start().await;
    let client = server.connect().await;
    let mut actual = String::new();
    for statement in statements(&script) {
        actual.push_str(&statement);
        actual.push('\n');
        if statement.trim().is_empty() || statement.trim_start().starts_with("--") {
            continue;
        }
        actual.push_str(&run(&client, &statement).await);
    }
    let expected_path = dir.join(format!("{name}.out"));
    if std::env::var("PGWIDE_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&expected_path, &actual).expect("write .out");
        return;
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(e, a)| e != a)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        let context = |text: &str| {
            text.lines()
                .skip(line.saturating_sub(3))
                .take(8)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "{name}.out differs at line {}:\n--- expected\n{}\n--- actual\n{}\n(PGWIDE_BLESS=1 regenerates)",
            line + 1,
            context(&expected),
            context(&actual)
        );
    }
}

/// Every script has a test below, so none is silently skipped.
#[test]
fn every_script_is_listed() {
    let listed = [
        "queries",
        "functions",
        "versions",
        "explain",
        "transactions",
    ];
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sql");
    for entry in std::fs::read_dir(dir).expect("tests/sql") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "sql") {
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            assert!(listed.contains(&stem.as_str()), "{stem}.sql has no test");
        }
    }
}

#[tokio::test]
async fn queries() {
    golden("queries").await;
}

#[tokio::test]
async fn functions() {
    golden("functions").await;
}

#[tokio::test]
async fn versions() {
    golden("versions").await;
}

#[tokio::test]
async fn explain() {
    golden("explain").await;
}

#[tokio::test]
async fn transactions() {
    golden("transactions").await;
}
