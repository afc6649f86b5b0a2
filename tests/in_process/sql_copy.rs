//! COPY over the wire: FROM STDIN and TO STDOUT in text and CSV, through tokio-postgres
//! (extended protocol) and psql's \copy (simple protocol); a bad line names its line
//! number and leaves nothing of the COPY behind.

use crate::common;

use bytes::Bytes;
use common::{code, simple_rows, TestServer};
use futures::{pin_mut, SinkExt, TryStreamExt};

async fn copy_in(
    client: &tokio_postgres::Client,
    sql: &str,
    data: &str,
) -> Result<u64, tokio_postgres::Error> {
    let sink = client.copy_in(sql).await?;
    pin_mut!(sink);
    // Split across CopyData messages mid-line: lines may span messages.
    for chunk in data.as_bytes().chunks(7) {
        sink.send(Bytes::copy_from_slice(chunk)).await?;
    }
    sink.as_mut().finish().await
}

/// The rows of a `COPY ... TO STDOUT` as text.
pub(crate) async fn copy_out(client: &tokio_postgres::Client, sql: &str) -> String {
    let stream = client.copy_out(sql).await.expect(sql);
    let chunks: Vec<Bytes> = stream.try_collect().await.expect("copy out");
    String::from_utf8(chunks.concat()).expect("utf8")
}

/// The COPY failed with `code`, naming the line.
fn assert_fails_at_line(err: &tokio_postgres::Error, code: &str, line: u64) {
    assert_eq!(err.code().map(|c| c.code()), Some(code), "{err:?}");
    assert!(
        err.as_db_error()
            .is_some_and(|e| e.message().contains(&format!("line {line}"))),
        "{err:?}"
    );
}

async fn table(client: &tokio_postgres::Client) {
    client
        .batch_execute("CREATE TABLE c (id BIGINT PRIMARY KEY, name TEXT, v DOUBLE PRECISION)")
        .await
        .unwrap();
}

#[tokio::test]
async fn text_and_csv_round_trip() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    table(&client).await;
    let n = copy_in(
        &client,
        "COPY c FROM STDIN",
        "1\tone\t1.5\n2\t\\N\t2.5\n3\ttab\\there\t3\n",
    )
    .await
    .unwrap();
    assert_eq!(n, 3);
    let csv = "id,name,v\n10,\"a,b\",1\n11,,2\n12,\"say \"\"hi\"\"\nthere\",3\n";
    let n = copy_in(
        &client,
        "COPY c (id, name, v) FROM STDIN WITH (FORMAT csv, HEADER)",
        csv,
    )
    .await
    .unwrap();
    assert_eq!(n, 3);
    assert_eq!(
        simple_rows(&client, "SELECT id, name FROM c").await,
        vec![
            vec!["1", "one"],
            vec!["2", "NULL"],
            vec!["3", "tab\there"],
            vec!["10", "a,b"],
            vec!["11", "NULL"],
            vec!["12", "say \"hi\"\nthere"],
        ]
    );
    let text = copy_out(&client, "COPY c TO STDOUT").await;
    assert_eq!(
        text,
        "1\tone\t1.5\n2\t\\N\t2.5\n3\ttab\\there\t3\n10\ta,b\t1\n11\t\\N\t2\n12\tsay \"hi\"\\nthere\t3\n"
    );
    let csv = copy_out(
        &client,
        "COPY (SELECT id, name FROM c WHERE id >= 10) TO STDOUT WITH (FORMAT csv, HEADER)",
    )
    .await;
    assert_eq!(
        csv,
        "id,name\n10,\"a,b\"\n11,\n12,\"say \"\"hi\"\"\nthere\"\n"
    );
}

#[tokio::test]
async fn a_bad_line_is_reported_and_nothing_stays() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    table(&client).await;
    client
        .batch_execute("INSERT INTO c (id) VALUES (1000)")
        .await
        .unwrap();
    let err = copy_in(
        &client,
        "COPY c FROM STDIN",
        "1\ta\t1\n2\tb\tnot-a-number\n",
    )
    .await
    .unwrap_err();
    assert_fails_at_line(&err, "22P02", 2);
    // 2,250 good rows (keys 2000 and up) are written in several chunks before line 2251
    // collides with 1000: the COPY fails with 23505 and the rows it wrote are gone again.
    let good: String = (2000..4250).map(|i| format!("{i}\tr{i}\t{i}\n")).collect();
    let data = format!("{good}1000\tdup\t0\n");
    let err = copy_in(&client, "COPY c FROM STDIN", &data)
        .await
        .unwrap_err();
    assert_fails_at_line(&err, "23505", 2251);
    assert_eq!(
        simple_rows(&client, "SELECT id FROM c").await,
        vec![vec!["1000"]]
    );
    // Chunks of 1,000 rows go to the engine while later lines are parsed: a bad line or
    // a duplicate key after chunks have been handed over still leaves nothing behind.
    let bad_late = good.replacen("4100\tr4100\t4100", "4100\tr4100\tx", 1);
    let err = copy_in(&client, "COPY c FROM STDIN", &bad_late)
        .await
        .unwrap_err();
    assert_fails_at_line(&err, "22P02", 2101);
    let duplicate_early = good.replacen("2010\tr2010\t2010", "1000\tr2010\t2010", 1);
    let err = copy_in(&client, "COPY c FROM STDIN", &duplicate_early)
        .await
        .unwrap_err();
    assert_fails_at_line(&err, "23505", 11);
    // Two chunks are in flight at once, and they apply in order: a key repeated in the
    // same chunk, the next one or the one after is refused on its second line.
    for (first, again) in [(3, 9), (700, 1500), (5, 2200)] {
        let key = 2000 + first - 1;
        let repeated = good.replacen(
            &format!("{}\tr{}\t", 2000 + again - 1, 2000 + again - 1),
            &format!("{key}\tagain\t"),
            1,
        );
        let err = copy_in(&client, "COPY c FROM STDIN", &repeated)
            .await
            .unwrap_err();
        assert_fails_at_line(&err, "23505", again);
    }
    assert_eq!(
        simple_rows(&client, "SELECT id FROM c").await,
        vec![vec!["1000"]]
    );
    // The connection is fine afterwards, and a good load of the same rows works.
    assert_eq!(
        copy_in(&client, "COPY c FROM STDIN", &good).await.unwrap(),
        2250
    );
    assert_eq!(
        client.query("SELECT id FROM c", &[]).await.unwrap().len(),
        2251
    );
    assert_eq!(
        code(client.batch_execute("COPY c FROM '/etc/passwd'").await),
        "0A000"
    );
}

// psql runs as a blocking child process; the server needs its own worker thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn psql_copy_in_and_out() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    table(&client).await;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.csv");
    let output = dir.path().join("out.csv");
    std::fs::write(&input, "7,seven,7.5\n8,eight,8.5\n").unwrap();
    // psql on the test server running one command, stopping at its first error.
    let psql_command = |command: &str| {
        let mut psql = std::process::Command::new("psql");
        psql.args(["-X", "-h", "127.0.0.1", "-p", &server.port.to_string()])
            .args([
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
            ])
            .arg(command);
        psql
    };
    let psql = |command: String| {
        let out = psql_command(&command).output().expect("psql runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(
        psql(format!(
            "\\copy c FROM '{}' WITH (FORMAT csv)",
            input.display()
        ))
        .trim(),
        "COPY 2"
    );
    assert_eq!(
        psql(format!(
            "\\copy c TO '{}' WITH (FORMAT csv)",
            output.display()
        ))
        .trim(),
        "COPY 2"
    );
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "7,seven,7.5\n8,eight,8.5\n"
    );
    // From psql's own stdin, ended by `\.` as a user types it (it failed with 22P04).
    let mut typed = psql_command("\\copy c FROM stdin WITH (FORMAT csv)")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("psql runs");
    {
        use std::io::Write;
        let mut stdin = typed.stdin.take().expect("stdin");
        stdin.write_all(b"9,nine,9.5\n\\.\n").expect("typed rows");
    }
    let out = typed.wait_with_output().expect("psql ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "COPY 1");
}

/// The ids in `c`, as `client` sees them.
async fn ids(client: &tokio_postgres::Client) -> Vec<i64> {
    client
        .query("SELECT id FROM c ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[tokio::test]
async fn copy_inside_a_transaction_block_is_staged_until_commit() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    let other = server.connect().await;
    table(&client).await;
    let rows = |range: std::ops::Range<i64>| -> String {
        range.map(|i| format!("{i}\tr{i}\t{i}\n")).collect()
    };

    // 2,500 rows, more than one chunk, after an INSERT of the same block: the block
    // sees all of them, another session none until COMMIT.
    client
        .batch_execute("BEGIN; INSERT INTO c (id) VALUES (0)")
        .await
        .unwrap();
    assert_eq!(
        copy_in(&client, "COPY c FROM STDIN", &rows(1..2501))
            .await
            .unwrap(),
        2500
    );
    assert_eq!(ids(&client).await, (0..2501).collect::<Vec<_>>());
    assert_eq!(
        simple_rows(&client, "SELECT name, v FROM c WHERE id = 2500").await,
        vec![vec!["r2500", "2500"]]
    );
    assert!(ids(&other).await.is_empty());
    client.batch_execute("COMMIT").await.unwrap();
    assert_eq!(ids(&other).await.len(), 2501);

    // A key the block itself staged, a stored key, a key twice in the COPY: 23505 at
    // its line, the block is aborted, and ROLLBACK leaves the table as it was.
    let failing = [
        (
            "BEGIN; INSERT INTO c (id) VALUES (9000)",
            format!("{}9000\tx\t0\n", rows(5000..5010)),
            11,
        ),
        ("BEGIN", format!("{}7\tx\t0\n", rows(5000..5100)), 101),
        ("BEGIN", format!("{}5003\tx\t0\n", rows(5000..5005)), 6),
    ];
    for (begin, data, line) in failing {
        client.batch_execute(begin).await.unwrap();
        let err = copy_in(&client, "COPY c FROM STDIN", &data)
            .await
            .unwrap_err();
        assert_fails_at_line(&err, "23505", line);
        assert_eq!(code(client.batch_execute("SELECT 1").await), "25P02");
        client.batch_execute("ROLLBACK").await.unwrap();
        assert_eq!(ids(&client).await.len(), 2501);
    }
    // A bad value aborts the block too; nothing of the block is committed.
    client
        .batch_execute("BEGIN; DELETE FROM c WHERE id = 0")
        .await
        .unwrap();
    let err = copy_in(
        &client,
        "COPY c FROM STDIN",
        "6000\ta\t1\n6001\tb\tnan-ish\n",
    )
    .await
    .unwrap_err();
    assert_fails_at_line(&err, "22P02", 2);
    client.batch_execute("COMMIT").await.unwrap();
    assert_eq!(ids(&other).await.first(), Some(&0));

    // ROLLBACK and ROLLBACK TO SAVEPOINT drop what the COPY staged; a COPY after a
    // savepoint that stays is committed with the rest of the block.
    client.batch_execute("BEGIN").await.unwrap();
    copy_in(&client, "COPY c FROM STDIN", &rows(7000..7010))
        .await
        .unwrap();
    client.batch_execute("SAVEPOINT s").await.unwrap();
    copy_in(&client, "COPY c FROM STDIN", &rows(8000..8010))
        .await
        .unwrap();
    client
        .batch_execute("ROLLBACK TO SAVEPOINT s")
        .await
        .unwrap();
    assert_eq!(ids(&client).await.len(), 2511);
    client.batch_execute("COMMIT").await.unwrap();
    assert_eq!(ids(&other).await.len(), 2511);
    client.batch_execute("BEGIN").await.unwrap();
    copy_in(&client, "COPY c FROM STDIN", &rows(8000..8010))
        .await
        .unwrap();
    client.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(ids(&other).await.len(), 2511);

    // A row another session writes meanwhile makes COMMIT fail, as for INSERT.
    client.batch_execute("BEGIN").await.unwrap();
    copy_in(&client, "COPY c FROM STDIN", &rows(9100..9102))
        .await
        .unwrap();
    other
        .batch_execute("INSERT INTO c (id) VALUES (9101)")
        .await
        .unwrap();
    assert_eq!(code(client.batch_execute("COMMIT").await), "40001");
    assert_eq!(ids(&other).await.len(), 2512);
}

/// COPY keeps a SMALLINT or INTEGER column's range like any other write: a line whose
/// value does not fit is 22003 and nothing of the COPY stays.
#[tokio::test]
async fn copy_keeps_narrow_integer_ranges() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE n (k BIGINT PRIMARY KEY, s SMALLINT, i INTEGER)")
        .await
        .expect("setup");
    let copy = "COPY n (k, s, i) FROM STDIN";
    assert_eq!(
        copy_in(&client, copy, "1\t5\t5\n2\t-32768\t2147483647\n")
            .await
            .ok(),
        Some(2)
    );
    assert_eq!(
        code(copy_in(&client, copy, "3\t1\t1\n4\t32768\t1\n").await),
        "22003"
    );
    assert_eq!(
        code(copy_in(&client, copy, "5\t1\t-2147483649\n").await),
        "22003"
    );
    assert_eq!(
        simple_rows(&client, "SELECT k FROM n ORDER BY k").await,
        [["1"], ["2"]]
    );
}

/// `\.` alone on a line ends the data in CSV as in text (psql's `\copy t FROM stdin
/// WITH (FORMAT csv)` sends it); it failed with 22P04 and undid the COPY. A quoted
/// `"\."` is a value.
#[tokio::test]
async fn end_of_data_marker_ends_csv_and_text() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE m (k BIGINT PRIMARY KEY, v TEXT)")
        .await
        .expect("setup");
    let csv = "COPY m FROM STDIN WITH (FORMAT csv)";
    assert_eq!(
        copy_in(&client, csv, "1,a\n2,\"\\.\"\n\\.\n").await.ok(),
        Some(2)
    );
    let text = "COPY m FROM STDIN";
    assert_eq!(copy_in(&client, text, "3\tc\n\\.\n").await.ok(), Some(1));
    assert_eq!(
        simple_rows(&client, "SELECT k, v FROM m ORDER BY k").await,
        [["1", "a"], ["2", "\\."], ["3", "c"]]
    );
}
