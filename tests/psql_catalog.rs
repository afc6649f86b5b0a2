//! psql's meta-commands (`\l`, `\dt`, `\d`, `\d+`, `\x`) and catalog queries against the
//! real `pgwide serve` binary, compared with `tests/psql/catalog.expected` (rewrite it
//! with `PGWIDE_BLESS=1`). The expected file holds no OIDs or times, so it is stable.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// A `pgwide serve` on a free port, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(data: &Path) -> Server {
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
            .arg(data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pgwide starts");
        let ready = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(100));
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(ready, "pgwide did not start listening");
        Server { child, port }
    }

    /// Runs psql with `args` after the connection options.
    fn psql(&self, args: &[&str]) -> Output {
        Command::new("psql")
            .args(["-X", "-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "postgres", "-d", "postgres"])
            .args(args)
            .output()
            .expect("psql runs (the test command installs postgresql-client)")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn psql_meta_commands_describe_tables() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("data"));
    let root = env!("CARGO_MANIFEST_DIR");
    let output = server.psql(&["-f", &format!("{root}/tests/psql/catalog.sql")]);
    let mut got = String::from_utf8_lossy(&output.stdout).into_owned();
    got.push_str(&String::from_utf8_lossy(&output.stderr));
    let got = got.replace(&format!("{root}/"), "");
    let path = format!("{root}/tests/psql/catalog.expected");
    if std::env::var_os("PGWIDE_BLESS").is_some() {
        std::fs::write(&path, &got).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        got.trim_end(),
        expected.trim_end(),
        "psql output differs from tests/psql/catalog.expected"
    );
}

#[test]
fn table_oids_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let query = "SELECT relname || '=' || oid FROM pg_catalog.pg_class ORDER BY 1";
    let before = {
        let server = Server::start(&data);
        let created = server.psql(&["-c", "CREATE TABLE a (k TEXT PRIMARY KEY)"]);
        assert!(created.status.success());
        server.psql(&["-c", "CREATE TABLE b (k BIGINT PRIMARY KEY, v TEXT)"]);
        server.psql(&["-c", "DROP TABLE a"]);
        server.psql(&["-c", "CREATE TABLE c (k TEXT PRIMARY KEY)"]);
        server.psql(&["-A", "-t", "-c", query]).stdout
    };
    let after = Server::start(&data).psql(&["-A", "-t", "-c", query]).stdout;
    let before = String::from_utf8_lossy(&before).into_owned();
    assert_eq!(before.lines().count(), 4, "b, b_pkey, c, c_pkey: {before}");
    assert_eq!(before, String::from_utf8_lossy(&after));
}
