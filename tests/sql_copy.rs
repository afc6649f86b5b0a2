//! COPY over the wire: FROM STDIN and TO STDOUT in text and CSV, through tokio-postgres
//! (extended protocol) and psql's \copy (simple protocol); a bad line names its line
//! number and leaves nothing of the COPY behind.

mod common;

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

async fn copy_out(client: &tokio_postgres::Client, sql: &str) -> String {
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
    let psql = |command: String| {
        let out = std::process::Command::new("psql")
            .args([
                "-X",
                "-h",
                "127.0.0.1",
                "-p",
                &server.port.to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
            ])
            .arg(command)
            .output()
            .expect("psql runs");
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
}
