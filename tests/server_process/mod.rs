//! The one way tests run the real `pgwide serve` binary: on a free loopback port over a
//! data directory (the test's, or a temporary one it owns), with extra flags and
//! environment; it waits until the server accepts connections, runs psql, client
//! programs and setup statements against it, and stops it by SIGTERM, SIGKILL or drop.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::Duration;

pub struct Pgwide {
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
    /// Every line the server logged so far.
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// The data directory's parent when the server made it itself (`fresh`).
    _temp: Option<tempfile::TempDir>,
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
    /// Starts the server on a free port and waits until it accepts connections. A port
    /// found free can be taken by another test's server before this one binds it; the
    /// server then exits, and it is started again on another port.
    pub fn start(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Pgwide {
        for _ in 0..3 {
            if let Ok(server) = Self::try_start_on(dir, free_port(), args, env) {
                return server;
            }
        }
        Self::start_on(dir, free_port(), args, env)
    }

    /// A server with default flags over a new temporary data directory, removed with it.
    pub fn fresh() -> Pgwide {
        let temp = tempfile::tempdir().expect("temporary directory");
        let mut server = Self::start(&temp.path().join("data"), &[], &[]);
        server._temp = Some(temp);
        server
    }

    pub fn start_on(dir: &Path, port: u16, args: &[&str], env: &[(&str, &str)]) -> Pgwide {
        match Self::try_start_on(dir, port, args, env) {
            Ok(server) => server,
            Err(status) => panic!("pgwide exited at start-up: {status}"),
        }
    }

    /// Starts the server and waits for its log to say it is listening: a connection to
    /// the port alone could reach another test's server that took the port first (or,
    /// as nothing listens yet, the connecting socket itself). `Err` when it exited.
    fn try_start_on(
        dir: &Path,
        port: u16,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Pgwide, ExitStatus> {
        let mut child = command(dir, &format!("127.0.0.1:{port}"), args, env)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("pgwide starts");
        let log = child.stdout.take().expect("the server's log is piped");
        let (ready, is_ready) = std::sync::mpsc::channel();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = std::sync::Arc::clone(&lines);
        // Reads the log to its end, so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut ready = Some(ready);
            for line in BufReader::new(log).lines() {
                let Ok(line) = line else { break };
                if line.contains("pgwide is ready") {
                    if let Some(ready) = ready.take() {
                        let _ = ready.send(());
                    }
                }
                kept.lock().unwrap_or_else(|p| p.into_inner()).push(line);
            }
        });
        for _ in 0..400 {
            if is_ready.recv_timeout(Duration::from_millis(50)).is_ok() {
                return Ok(Pgwide {
                    port,
                    dir: dir.to_path_buf(),
                    child: Some(child),
                    log: lines,
                    _temp: None,
                });
            }
            if let Ok(Some(status)) = child.try_wait() {
                return Err(status);
            }
        }
        let _ = child.kill();
        panic!("pgwide did not start listening");
    }

    /// The lines the server has logged so far (at `RUST_LOG=info`).
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// SIGTERM and wait: a clean shutdown.
    pub fn stop(mut self) {
        self.terminate();
    }

    /// SIGTERM and wait, returning how the server exited.
    pub fn terminate(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("the server is running");
        let sent = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "SIGTERM sent");
        child.wait().expect("pgwide exits")
    }

    /// SIGKILL and wait: a crash.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("SIGKILL");
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

    /// Runs psql as `postgres` on database `postgres` with `args` after the connection
    /// options (`-f file`, `-c sql`, output flags).
    pub fn psql_args(&self, args: &[&str]) -> Output {
        Command::new("psql")
            .args(["-X", "-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "postgres", "-d", "postgres"])
            .args(args)
            .output()
            .expect("psql runs (the test command installs postgresql-client)")
    }

    /// Runs each statement in order over the simple protocol as `postgres`, failing on
    /// the first error.
    pub fn setup(&self, statements: &[&str]) {
        let port = self.port;
        block_on(async move {
            let client = connect(port, "postgres", None, "postgres")
                .await
                .expect("connect for setup");
            for sql in statements {
                if let Err(e) = client.batch_execute(sql).await {
                    panic!("setup statement failed: {sql}: {e:?}");
                }
            }
        });
    }

    /// The rows of one query over the simple protocol, as text.
    pub fn query(&self, sql: &str) -> Vec<Vec<Option<String>>> {
        let port = self.port;
        block_on(async move {
            let client = connect(port, "postgres", None, "postgres")
                .await
                .expect("connect for a query");
            let messages = client
                .simple_query(sql)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
            messages
                .into_iter()
                .filter_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(row) => Some(
                        (0..row.len())
                            .map(|i| row.get(i).map(String::from))
                            .collect(),
                    ),
                    _ => None,
                })
                .collect()
        })
    }

    /// Runs a client program with PGHOST/PGPORT/PGUSER/PGDATABASE pointing at this server.
    pub fn run(&self, program: &str, args: &[&str], cwd: &Path) -> Output {
        self.run_with_env(program, args, cwd, &[])
    }

    /// `run`, with `env` set besides.
    pub fn run_with_env(
        &self,
        program: &str,
        args: &[&str],
        cwd: &Path,
        env: &[(&str, &str)],
    ) -> Output {
        Command::new(program)
            .args(args)
            .current_dir(cwd)
            .envs(env.iter().copied())
            .env("PGHOST", "127.0.0.1")
            .env("PGPORT", self.port.to_string())
            .env("PGUSER", "postgres")
            .env("PGDATABASE", "postgres")
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run {program} ({e}); run scripts/test to install the clients")
            })
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

/// Runs `future` to completion on a runtime of its own, for synchronous tests.
fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(future)
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

/// `tests/clients/<sub>`.
pub fn clients_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(sub)
}

/// Fails the test with the program's output unless it exited 0; its stdout.
pub fn assert_success(what: &str, output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{what} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    stdout
}
