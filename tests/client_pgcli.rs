//! pgcli against the real `pgwide serve`, with its stock settings: its metadata class
//! lists the tables, views, columns, foreign keys and types it completes with and runs
//! backslash commands (`tests/clients/pgcli/metadata.py` holds the checks), and pgcli
//! itself, driven in tmux as a user types, offers a table and completes a column.
//! scripts/test installs pgcli and tmux.

mod server_process;

use server_process::{assert_success, clients_dir, Pgwide};
use std::process::Command;
use std::time::{Duration, Instant};

const SCHEMA: &[&str] = &[
    "CREATE TABLE parent (id BIGINT PRIMARY KEY, name TEXT)",
    "CREATE TABLE child (id BIGINT PRIMARY KEY, parent_id BIGINT REFERENCES parent (id), \
     note VARCHAR(20))",
    "CREATE VIEW kids AS SELECT id, note FROM child",
    "CREATE TYPE mood AS ENUM ('a', 'b')",
];

fn installed(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn pgcli_metadata_lists_what_it_completes_with() {
    assert!(
        installed("python3", &["-c", "import pgcli, pgspecial"]),
        "pgcli is missing: run scripts/test to install it"
    );
    let server = Pgwide::fresh();
    server.setup(SCHEMA);
    let output = server.run("python3", &["metadata.py"], &clients_dir("pgcli"));
    let stdout = assert_success("tests/clients/pgcli/metadata.py", &output);
    assert!(stdout.contains("ALL PGCLI CHECKS PASSED"), "{stdout}");
    let checks = stdout.lines().filter(|l| l.starts_with("ok ")).count();
    assert_eq!(checks, 18, "a check was skipped:\n{stdout}");
}

/// tmux on a socket of the test's own, so parallel tests and a user's tmux are apart.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Types `text` as keys, literally.
    fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "pgcli", "-l", text]);
    }

    fn key(&self, key: &str) {
        self.run(&["send-keys", "-t", "pgcli", key]);
    }

    /// The screen once it shows `wanted`, or what it showed when time ran out.
    fn screen_showing(&self, wanted: &str) -> Result<String, String> {
        self.screen_within(wanted, Duration::from_secs(30))
    }

    /// The screen once the line typed as `text` offers `wanted`. pgcli loads its
    /// completions in the background after the prompt shows, and offers them as keys
    /// come: the line is typed again until they are there.
    fn offering(&self, text: &str, wanted: &str) -> Result<String, String> {
        let mut last = String::new();
        for _ in 0..10 {
            self.key("C-u");
            self.type_text(text);
            match self.screen_within(wanted, Duration::from_secs(3)) {
                Ok(screen) => return Ok(screen),
                Err(screen) => last = screen,
            }
        }
        Err(last)
    }

    fn screen_within(&self, wanted: &str, wait: Duration) -> Result<String, String> {
        let deadline = Instant::now() + wait;
        loop {
            let screen = self.run(&["capture-pane", "-t", "pgcli", "-p"]);
            if screen.contains(wanted) {
                return Ok(screen);
            }
            if Instant::now() > deadline {
                return Err(screen);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

#[test]
fn pgcli_completes_a_table_and_a_column() {
    assert!(
        installed("tmux", &["-V"]),
        "tmux is missing: run scripts/test"
    );
    assert!(
        installed("pgcli", &["--version"]),
        "pgcli is missing: run scripts/test to install it"
    );
    let server = Pgwide::fresh();
    server.setup(SCHEMA);
    // A fresh configuration directory: pgcli writes its stock config there.
    let config = tempfile::tempdir().unwrap();
    let tmux = Tmux {
        socket: format!("pgwide-test-{}", std::process::id()),
    };
    let command = format!(
        "env XDG_CONFIG_HOME={} pgcli -h 127.0.0.1 -p {} -U postgres postgres",
        config.path().display(),
        server.port
    );
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "pgcli",
        "-x",
        "150",
        "-y",
        "40",
        &command,
    ]);
    let started = tmux.screen_showing("postgres>");
    assert!(
        started.is_ok(),
        "pgcli did not start:\n{}",
        started.unwrap_err()
    );

    // A table is offered after FROM, from the metadata pgcli loaded at start.
    let offered = tmux.offering("SELECT * FROM pa", "parent");
    assert!(
        offered.is_ok(),
        "no table offered:\n{}",
        offered.unwrap_err()
    );

    // A column of the table in FROM is offered after WHERE, and Tab completes it.
    let offered = tmux.offering("SELECT note FROM child WHERE par", "parent_id");
    assert!(
        offered.is_ok(),
        "no column offered:\n{}",
        offered.unwrap_err()
    );
    tmux.key("Tab");
    tmux.type_text(" IS NULL;");
    tmux.key("Enter");
    let ran = tmux.screen_showing("SELECT 0");
    assert!(
        ran.is_ok(),
        "the completed statement did not run:\n{}",
        ran.unwrap_err()
    );
    let screen = ran.unwrap_or_default();
    assert!(
        screen.contains("WHERE parent_id IS NULL"),
        "Tab did not complete the column:\n{screen}"
    );
}
