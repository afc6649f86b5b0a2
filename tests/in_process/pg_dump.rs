//! The real pg_dump 15 against pgwide: it reads one snapshot (a REPEATABLE READ READ
//! ONLY block) through pgwide's catalog, and its script restores into a real
//! PostgreSQL 15 with the same tables, declared types, keys, defaults, sequences, view
//! and rows.

use crate::common::{simple_rows, TestServer};
use crate::differential::Postgres;
use std::process::Command;

/// Statements that make a schema of the usual kinds, with rows.
const SCHEMA: &str = "\
    CREATE TABLE book (id BIGINT PRIMARY KEY, title TEXT NOT NULL, price NUMERIC(10,2), \
        added TIMESTAMPTZ DEFAULT now(), tags TEXT[]); \
    CREATE INDEX book_title ON book (title); \
    CREATE TABLE author (id SERIAL PRIMARY KEY, name VARCHAR(40) UNIQUE, born DATE, \
        score REAL CHECK (score >= 0)); \
    CREATE TABLE wrote (author_id INTEGER REFERENCES author (id), book_id BIGINT, \
        PRIMARY KEY (author_id, book_id)); \
    CREATE SEQUENCE ticket START 100 INCREMENT 5; \
    CREATE VIEW cheap AS SELECT id, title FROM book WHERE price < 10; \
    INSERT INTO book VALUES (1, 'Dune', 9.50, '2024-01-02 03:04:05+00', '{sf,classic}'), \
        (2, 'Emma', NULL, '2024-05-06 07:08:09+00', NULL), \
        (3, 'It''s \\ tab\tand newline\n', 12.00, NULL, '{}'); \
    INSERT INTO author (name, born, score) VALUES ('Herbert', '1920-10-08', 4.5), \
        ('Austen', '1775-12-16', 5); \
    INSERT INTO wrote VALUES (1, 1), (2, 2); \
    SELECT nextval('ticket'); SELECT nextval('ticket')";

/// What the test compares on both sides.
const READS: &[&str] = &[
    "SELECT id, title, price, added, tags FROM book ORDER BY id",
    "SELECT id, name, born, score FROM author ORDER BY id",
    "SELECT author_id, book_id FROM wrote ORDER BY 1, 2",
    "SELECT * FROM cheap ORDER BY id",
    "SELECT nextval('ticket'), nextval('author_id_seq')",
    "SELECT table_name, column_name, data_type, is_nullable, column_default \
     FROM information_schema.columns WHERE table_schema = 'public' \
     ORDER BY table_name, ordinal_position",
];

fn pg_dump(port: u16, user: &str) -> String {
    let output = Command::new("pg_dump")
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", user])
        .args(["--no-password", "postgres"])
        .output()
        .expect("pg_dump runs (the test command installs postgresql-client)");
    assert!(
        output.status.success(),
        "pg_dump failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("a UTF-8 dump")
}

fn pg_dumpall(port: u16, user: &str) -> String {
    let output = Command::new("pg_dumpall")
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", user])
        .arg("--no-password")
        .output()
        .expect("pg_dumpall runs (the test command installs postgresql-client)");
    assert!(
        output.status.success(),
        "pg_dumpall failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("a UTF-8 dump")
}

/// Runs `script` with psql against the server on `port`, stopping at the first error.
fn restore(port: u16, user: &str, script: &str) {
    let restored = run_psql(port, user, script, true);
    assert!(
        restored.status.success(),
        "the dump did not restore: {}\n{script}",
        String::from_utf8_lossy(&restored.stderr)
    );
}

/// The error lines of running `script` with psql against the server on `port`, going
/// on past them, as a pg_dumpall script is restored.
fn restore_past_errors(port: u16, user: &str, script: &str) -> Vec<String> {
    let restored = run_psql(port, user, script, false);
    String::from_utf8_lossy(&restored.stderr)
        .lines()
        .filter(|line| line.contains("ERROR") || line.contains("error:"))
        .map(|line| {
            line.split_once("ERROR:")
                .map_or(line, |(_, e)| e)
                .trim()
                .to_string()
        })
        .collect()
}

fn run_psql(port: u16, user: &str, script: &str, stop_on_error: bool) -> std::process::Output {
    Command::new("psql")
        .args(["-X", "-q", "-v"])
        .arg(format!("ON_ERROR_STOP={}", u8::from(stop_on_error)))
        .args(["-h", "127.0.0.1"])
        .args(["-p", &port.to_string(), "-U", user, "-d", "postgres"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            if let Some(stdin) = child.stdin.as_mut() {
                stdin.write_all(script.as_bytes())?;
            }
            child.wait_with_output()
        })
        .expect("psql runs")
}

/// pg_dumpall carries the roles, with their password verifiers, and every database with
/// its tables and rows. Its script restores into a fresh pgwide and into PostgreSQL 15
/// alike: the one error on both is its `CREATE ROLE postgres`, a role every server has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_dumpall_of_pgwide_restores_roles_and_databases() {
    // Trusted: a role with a password would otherwise make every client need one.
    let trust = |config: &mut pgwide::config::Config| config.auth = pgwide::auth::AuthMode::Trust;
    let server = TestServer::start_with(trust).await;
    let admin = server.connect().await;
    admin
        .batch_execute(
            "CREATE ROLE carol LOGIN PASSWORD 'secret'; \
             CREATE DATABASE shop WITH TEMPLATE = template0 ENCODING = 'UTF8' LOCALE = 'C'",
        )
        .await
        .expect("role and database");
    let shop = server.connect_to("shop").await.expect("connect to shop");
    shop.batch_execute(
        "CREATE TABLE item (sku TEXT PRIMARY KEY, qty INTEGER NOT NULL); \
         INSERT INTO item VALUES ('a-1', 1), ('b-2', 20)",
    )
    .await
    .expect("shop's table");
    let script = pg_dumpall(server.port, "tester");
    assert!(script.contains("\\connect shop"), "{script}");
    let role = "SELECT rolname, rolcanlogin::text, rolsuper::text, rolpassword \
                FROM pg_authid WHERE rolname = 'carol'";
    let items = "SELECT sku, qty FROM item ORDER BY sku";
    let carol = simple_rows(&admin, role).await;
    assert!(carol[0][3].starts_with("SCRAM-SHA-256$4096:"), "{carol:?}");
    let expected_errors = vec![r#"role "postgres" already exists"#.to_string()];

    let fresh = TestServer::start_with(trust).await;
    assert_eq!(
        restore_past_errors(fresh.port, "tester", &script),
        expected_errors
    );
    let restored = fresh.connect().await;
    assert_eq!(simple_rows(&restored, role).await, carol);
    let restored_shop = fresh.connect_to("shop").await.expect("restored shop");
    let columns = "SELECT column_name, data_type, is_nullable FROM information_schema.columns \
                   WHERE table_name = 'item' ORDER BY ordinal_position";
    assert_same_answers(&shop, &restored_shop, &[items, columns]).await;

    let postgres = Postgres::start();
    assert_eq!(
        restore_past_errors(postgres.port(), "postgres", &script),
        expected_errors
    );
    assert_eq!(simple_rows(&postgres.connect().await, role).await, carol);
    let postgres_shop = postgres.connect_to("shop").await;
    assert_same_answers(&shop, &postgres_shop, &[items, columns]).await;
}

/// A pgwide server with `SCHEMA` made, a client of it, and pg_dump's script of it.
async fn dumped_schema() -> (TestServer, tokio_postgres::Client, String) {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client.batch_execute(SCHEMA).await.expect("schema");
    let script = pg_dump(server.port, "tester");
    (server, client, script)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_dump_of_pgwide_restores_into_postgres_with_the_same_rows() {
    let (_server, pgwide, script) = dumped_schema().await;
    // A table with Table Store's defaults has no storage parameters to carry.
    assert!(!script.contains("WITH (ttl"), "{script}");
    assert!(script.contains("CREATE TABLE public.book"), "{script}");

    let postgres = Postgres::start();
    restore(postgres.port(), "postgres", &script);
    let postgres = postgres.connect().await;
    assert_same_answers(&pgwide, &postgres, READS).await;
}

/// Asserts that each of `statements` gets the same rows from `a` as from `b`.
async fn assert_same_answers(
    a: &tokio_postgres::Client,
    b: &tokio_postgres::Client,
    statements: &[&str],
) {
    for sql in statements {
        assert_eq!(
            simple_rows(a, sql).await,
            simple_rows(b, sql).await,
            "{sql}"
        );
    }
}

/// The same dump restores into a fresh pgwide: its tables are created without keys,
/// loaded by COPY and keyed by `ADD CONSTRAINT ... PRIMARY KEY` after, as pg_dump
/// writes them; the rows, types, defaults and sequences come back, and the sequences
/// go on where they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_dump_of_pgwide_restores_into_pgwide() {
    let (_server, original, script) = dumped_schema().await;
    let fresh = TestServer::start().await;
    restore(fresh.port, "tester", &script);
    let restored = fresh.connect().await;
    assert_same_answers(&original, &restored, READS).await;
    let constraints = "SELECT conrelid::regclass::text, contype, pg_get_constraintdef(oid) \
                       FROM pg_constraint ORDER BY 1, 2, 3";
    // The SERIAL column, restored as an integer with a nextval default, is the key.
    let insert = "INSERT INTO author (name) VALUES ('Woolf') RETURNING id";
    assert_same_answers(&original, &restored, &[constraints, insert]).await;
}

/// Options PostgreSQL has no storage parameter for go into the dump as pgwide took
/// them, so a restore into pgwide keeps them (PostgreSQL refuses them by name).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tables_table_store_options_are_in_its_dump() {
    let server = TestServer::start().await;
    let pgwide = server.connect().await;
    pgwide
        .batch_execute(
            "CREATE TABLE events (id BIGINT PRIMARY KEY) WITH (ttl = 86400, max_versions = 3)",
        )
        .await
        .expect("schema");
    let script = pg_dump(server.port, "tester");
    assert!(
        script.contains("WITH (ttl='86400', max_versions='3')"),
        "{script}"
    );
}
