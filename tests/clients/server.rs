//! The real `pgwide serve` binary on a free port with a temporary data directory, for the
//! client tests (`tests/client_*.rs`), plus a synchronous way to set tables up through
//! tokio-postgres and to run a client program as a child process.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// A `pgwide serve` process, killed when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Server {
    pub fn start() -> Server {
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(env!("CARGO_BIN_EXE_pgwide"))
            .args([
                "serve",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--data-dir",
            ])
            .arg(dir.path().join("data"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pgwide starts");
        let ready = (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(50));
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(ready, "pgwide did not start listening");
        Server {
            child,
            port,
            _dir: dir,
        }
    }

    /// Runs each statement in order over the simple protocol, failing on the first error.
    pub fn setup(&self, statements: &[&str]) {
        let port = self.port;
        let statements: Vec<String> = statements.iter().map(|s| s.to_string()).collect();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async move {
                let (client, connection) = tokio_postgres::connect(
                    &format!("host=127.0.0.1 port={port} user=postgres dbname=postgres"),
                    tokio_postgres::NoTls,
                )
                .await
                .expect("connect for setup");
                tokio::spawn(connection);
                for sql in &statements {
                    if let Err(e) = client.batch_execute(sql).await {
                        panic!("setup statement failed: {sql}: {e:?}");
                    }
                }
            });
    }

    /// The rows of one query over the simple protocol, as text.
    pub fn query(&self, sql: &str) -> Vec<Vec<Option<String>>> {
        let port = self.port;
        let sql = sql.to_string();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async move {
                let (client, connection) = tokio_postgres::connect(
                    &format!("host=127.0.0.1 port={port} user=postgres dbname=postgres"),
                    tokio_postgres::NoTls,
                )
                .await
                .expect("connect for a query");
                tokio::spawn(connection);
                let messages = client
                    .simple_query(&sql)
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
        Command::new(program)
            .args(args)
            .current_dir(cwd)
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

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tests/clients/<sub>`.
pub fn clients_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(sub)
}

/// Fails the test with the client's output unless it exited 0.
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
