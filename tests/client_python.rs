//! psycopg 3, SQLAlchemy 2 and pandas against the real `pgwide serve`: binds in text and
//! binary, bytea, `inspect()`, the ORM's unit of work on pgwide tables, `read_sql`
//! (`tests/clients/python/client.py` holds the checks; scripts/test installs the packages).

mod server_process;

use server_process::{assert_success, clients_dir, Pgwide};
use std::process::Command;

fn python() -> &'static str {
    let ok = Command::new("python3")
        .args(["-c", "import psycopg, sqlalchemy, pandas"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "python3 with psycopg, SQLAlchemy and pandas is missing: run scripts/test to install them"
    );
    "python3"
}

#[test]
fn psycopg_sqlalchemy_pandas() {
    let python = python();
    let server = Pgwide::fresh();
    server.setup(&[
        "CREATE TABLE users (id BIGINT PRIMARY KEY, name TEXT, score DOUBLE PRECISION, \
         active BOOLEAN, avatar BYTEA, small SMALLINT, big BIGINT, ratio REAL)",
        "CREATE TABLE events (device TEXT, seq BIGINT, payload TEXT, PRIMARY KEY (device, seq))",
    ]);
    let output = server.run(python, &["client.py"], &clients_dir("python"));
    let stdout = assert_success("tests/clients/python/client.py", &output);
    assert!(stdout.contains("ALL PYTHON CHECKS PASSED"), "{stdout}");
    // The checks the program made, so a silently skipped part shows up here.
    let checks = stdout.lines().filter(|l| l.starts_with("ok ")).count();
    assert_eq!(checks, 102, "a check was skipped:\n{stdout}");
}
