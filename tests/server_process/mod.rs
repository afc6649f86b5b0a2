//! Runs the real `pgwide` binary on a free loopback port over a temporary data
//! directory, with extra flags and environment, for the auth and TLS tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

pub struct Pgwide {
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

pub fn command(dir: &Path, listen: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pgwide"));
    command
        .args(["serve", "--listen", listen, "--data-dir"])
        .arg(dir)
        .args(args)
        .env_remove("PGWIDE_SUPERUSER_PASSWORD")
        .env("RUST_LOG", "info");
    for (k, v) in env {
        command.env(k, v);
    }
    command
}

impl Pgwide {
    /// Starts the server and waits until it accepts connections.
    pub fn start(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Pgwide {
        let port = free_port();
        Self::start_on(dir, port, args, env)
    }

    pub fn start_on(dir: &Path, port: u16, args: &[&str], env: &[(&str, &str)]) -> Pgwide {
        let mut child = command(dir, &format!("127.0.0.1:{port}"), args, env)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pgwide starts");
        for _ in 0..400 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Pgwide {
                    port,
                    dir: dir.to_path_buf(),
                    child: Some(child),
                };
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("pgwide exited at start-up: {status}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        panic!("pgwide did not start listening");
    }

    /// SIGTERM and wait: a clean shutdown.
    pub fn stop(mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let _ = child.wait();
        }
    }

    /// Runs psql with `conninfo` (host and port added) and returns its output.
    pub fn psql(&self, conninfo: &str, sql: &str, env: &[(&str, &str)]) -> Output {
        let mut command = Command::new("psql");
        command
            .arg(format!("{conninfo} port={}", self.port))
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .env_remove("PGPASSWORD")
            .env_remove("PGSSLMODE")
            .env("PGCONNECT_TIMEOUT", "10")
            .stdin(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().expect("psql runs")
    }
}

impl Drop for Pgwide {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A tokio-postgres connection as `user` with `password`.
pub async fn connect(
    port: u16,
    user: &str,
    password: Option<&str>,
    database: &str,
) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let mut config = tokio_postgres::Config::new();
    config
        .host("127.0.0.1")
        .port(port)
        .user(user)
        .dbname(database);
    if let Some(password) = password {
        config.password(password);
    }
    let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    Ok(client)
}

/// The SQLSTATE and message of a failed call.
pub fn code_of(e: &tokio_postgres::Error) -> (String, String) {
    match e.as_db_error() {
        Some(db) => (db.code().code().to_string(), db.message().to_string()),
        None => (String::new(), e.to_string()),
    }
}
