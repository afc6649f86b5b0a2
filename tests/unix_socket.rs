//! The Unix-domain socket (`--unix-socket-dir`) with real clients against the real
//! binary: psql and psycopg connect through `host=DIR` and see what TCP clients see; a
//! socket file left by a killed server is taken over at restart, one a live server
//! holds stops a second server with a clear error, and a clean stop removes it.

mod server_process;

use server_process::Pgwide;
use std::path::Path;
use std::process::Command;

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn socket_args(dir: &Path) -> Vec<&str> {
    vec!["--unix-socket-dir", dir.to_str().unwrap()]
}

fn via_socket(dir: &Path) -> String {
    format!("host={} user=postgres dbname=postgres", dir.display())
}

#[test]
fn psql_and_psycopg_connect_through_the_socket_in_host_dir() {
    let temp = tempfile::tempdir().unwrap();
    let sockets = temp.path().join("sockets");
    std::fs::create_dir(&sockets).unwrap();
    let server = Pgwide::start(&temp.path().join("data"), &socket_args(&sockets), &[]);

    let info = server.psql(&via_socket(&sockets), "\\conninfo", &[]);
    assert!(info.status.success(), "{}", stderr(&info));
    let expected = format!("via socket in \"{}\"", sockets.display());
    assert!(stdout(&info).contains(&expected), "{}", stdout(&info));

    let written = server.psql(
        &via_socket(&sockets),
        "CREATE TABLE notes (id bigint, body text, PRIMARY KEY (id)); \
         INSERT INTO notes VALUES (1, 'over the socket');",
        &[],
    );
    assert!(written.status.success(), "{}", stderr(&written));
    // TCP clients see what socket clients wrote, and the other way round.
    assert_eq!(
        server.query("SELECT body FROM notes WHERE id = 1"),
        vec![vec![Some("over the socket".to_string())]]
    );
    server.setup(&["INSERT INTO notes VALUES (2, 'over TCP')"]);

    let script = format!(
        "import psycopg\n\
         with psycopg.connect(host={dir:?}, port={port}, user='postgres', dbname='postgres') as c:\n\
         \x20   rows = c.execute('SELECT id, body FROM notes WHERE id >= %s ORDER BY id', (1,)).fetchall()\n\
         \x20   print(rows)\n",
        dir = sockets.to_str().unwrap(),
        port = server.port,
    );
    let psycopg = Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(psycopg.status.success(), "{}", stderr(&psycopg));
    assert_eq!(
        stdout(&psycopg),
        "[(1, 'over the socket'), (2, 'over TCP')]"
    );
}

#[test]
fn a_killed_servers_socket_is_taken_over_a_live_one_is_not_and_a_clean_stop_removes_it() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("data");
    let sockets = temp.path().to_path_buf();
    let mut first = Pgwide::start(&data, &socket_args(&sockets), &[]);
    let port = first.port;
    let socket = sockets.join(format!(".s.PGSQL.{port}"));
    first.setup(&["CREATE TABLE kept (id bigint, PRIMARY KEY (id))"]);
    first.kill();
    assert!(socket.exists(), "a killed server leaves its socket file");

    let second = Pgwide::start_on(&data, port, &socket_args(&sockets), &[]);
    let listed = second.psql(&via_socket(&sockets), "SELECT count(*) FROM kept", &[]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert_eq!(stdout(&listed), "0");

    // Another server on another address but the same port would take the same socket
    // name: it refuses to start rather than steal it.
    let other_data = temp.path().join("other-data");
    let rival = server_process::command(
        &other_data,
        &format!("127.0.0.2:{port}"),
        &socket_args(&sockets),
        &[],
    )
    .output()
    .unwrap();
    assert!(!rival.status.success());
    assert!(
        stderr(&rival).contains("another server is already listening on"),
        "{}",
        stderr(&rival)
    );
    let still = second.psql(&via_socket(&sockets), "SELECT 'still here'", &[]);
    assert_eq!(stdout(&still), "still here", "{}", stderr(&still));

    second.stop();
    assert!(!socket.exists(), "a clean stop removes the socket file");
}
