//! Alembic 1.20 with SQLAlchemy 2 against the real `pgwide serve`, stock settings:
//! `alembic init`, revision --autogenerate, upgrade head, check and downgrade base over
//! models with an autoincrement key, DateTime, Numeric, an index, unique constraints
//! and a foreign key (`tests/clients/alembic/flow.py` holds the steps and checks;
//! scripts/test installs Alembic).

mod server_process;

use server_process::{assert_success, clients_dir, Pgwide};
use std::process::Command;

#[test]
fn alembic_migrates_up_and_down() {
    let installed = Command::new("python3")
        .args(["-c", "import alembic, sqlalchemy, psycopg"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        installed,
        "python3 with Alembic, SQLAlchemy and psycopg is missing: run scripts/test to install them"
    );
    let server = Pgwide::fresh();
    let output = server.run("python3", &["flow.py"], &clients_dir("alembic"));
    let stdout = assert_success("tests/clients/alembic/flow.py", &output);
    assert!(stdout.contains("ALEMBIC FLOW OK"), "{stdout}");
    // The checks the program made, so a silently skipped step shows up here.
    let checks = stdout.lines().filter(|l| l.starts_with("ok ")).count();
    assert_eq!(checks, 7, "a check was skipped:\n{stdout}");
}
