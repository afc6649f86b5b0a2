//! Runs `sql/seed_examples.sql` with the real psql against the real `pgwide serve`
//! binary (the README's run command) and compares the output with
//! `sql/seed_examples.expected`.

use std::process::{Command, Stdio};

/// The allowed-version window in messages depends on the current time.
fn normalize(output: &str) -> String {
    output
        .lines()
        .map(
            |line| match (line.find("window ["), line.find(") set by")) {
                (Some(start), Some(end)) => format!(
                    "{}window [NOW-OFFSET, NOW+OFFSET{}",
                    &line[..start],
                    &line[end..]
                ),
                _ => line.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn seed_examples_run_with_psql() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_pgwide"))
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
    // Wait until it accepts connections.
    let ready = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(ready, "pgwide did not start listening");
    let root = env!("CARGO_MANIFEST_DIR");
    let output = Command::new("psql")
        .args([
            "-X",
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-f",
        ])
        .arg(format!("{root}/sql/seed_examples.sql"))
        .output()
        .expect("psql runs (the test command installs postgresql-client)");
    let _ = server.kill();
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    let got = normalize(&text.replace(&format!("{root}/"), ""));
    let expected = std::fs::read_to_string(format!("{root}/sql/seed_examples.expected")).unwrap();
    assert_eq!(
        got.trim_end(),
        expected.trim_end(),
        "psql output differs from sql/seed_examples.expected"
    );
}
