//! The same statements through the simple protocol (text results) and the extended
//! protocol (binary results, as tokio-postgres reads them) must agree: every write form
//! in the writes table of docs/table-store.md §12 and every fast-path read in its reads
//! table.

use crate::common;

use common::{simple_rows, TestServer};
use tokio_postgres::types::Type;
use tokio_postgres::Client;

/// A result as text, from either protocol; binary values are rendered like PostgreSQL's
/// text output so the two can be compared.
async fn extended_rows(client: &Client, sql: &str) -> Vec<Vec<String>> {
    let rows = client
        .query(sql, &[])
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    rows.iter()
        .map(|row| {
            row.columns()
                .iter()
                .enumerate()
                .map(|(i, column)| {
                    let t = column.type_();
                    let text = if *t == Type::INT8 {
                        row.get::<_, Option<i64>>(i).map(|v| v.to_string())
                    } else if *t == Type::INT4 {
                        row.get::<_, Option<i32>>(i).map(|v| v.to_string())
                    } else if *t == Type::FLOAT8 {
                        row.get::<_, Option<f64>>(i).map(|v| v.to_string())
                    } else if *t == Type::BOOL {
                        row.get::<_, Option<bool>>(i)
                            .map(|v| if v { "t" } else { "f" }.to_string())
                    } else if *t == Type::BYTEA {
                        row.get::<_, Option<Vec<u8>>>(i).map(|v| {
                            format!(
                                "\\x{}",
                                v.iter().map(|b| format!("{b:02x}")).collect::<String>()
                            )
                        })
                    } else {
                        row.get::<_, Option<String>>(i)
                    };
                    text.unwrap_or_else(|| "NULL".into())
                })
                .collect()
        })
        .collect()
}

fn normalize(rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    // Floats print the same value in both protocols but may differ in form (1.5 vs 1.5e0).
    rows.into_iter()
        .map(|row| {
            row.into_iter()
                .map(|v| v.parse::<f64>().map(|f| f.to_string()).unwrap_or(v))
                .collect()
        })
        .collect()
}

const SCHEMA: &str = "CREATE TABLE t (pk1 BIGINT, pk2 TEXT, pk3 BYTEA, a BIGINT, d DOUBLE PRECISION, b BOOLEAN, s TEXT, bin BYTEA,
                      PRIMARY KEY (pk1, pk2, pk3)) WITH (max_versions = 3)";

/// Every write form, run against a fresh table in each protocol.
const WRITES: &[&str] = &[
    "INSERT INTO t (pk1, pk2, pk3, a, d, b, s, bin) VALUES (1, 'x', '\\x01', 10, 1.5, true, 'one', '\\xdead')",
    "INSERT INTO t (pk1, pk2, pk3, a, s) VALUES (1, 'x', '\\x02', 20, 'two'), (1, 'y', '\\x01', 30, 'three'), (2, 'x', '\\x01', 40, 'four')",
    "INSERT INTO t (pk1, pk2, pk3, a) VALUES (1, 'x', '\\x01', 99), (9, 'z', '\\x09', 9) ON CONFLICT DO NOTHING",
    "INSERT INTO t (pk1, pk2, pk3, a) VALUES (1, 'x', '\\x02', 21) ON CONFLICT (pk1, pk2, pk3) DO UPDATE SET a = EXCLUDED.a",
    "UPDATE t SET s = 'uno', d = NULL WHERE pk1 = 1 AND pk2 = 'x' AND pk3 = '\\x01'",
    "UPDATE t SET a = a + 5 WHERE pk1 = 1 AND pk2 = 'y' AND pk3 = '\\x01'",
    "UPDATE t SET s = 'big' WHERE pk1 = 2 AND pk2 = 'x' AND pk3 = '\\x01' AND a > 100",
    "UPDATE t SET b = false WHERE a >= 30",
    "INSERT INTO t (pk1, pk2, pk3, extra) VALUES (3, 'w', '\\x03', 'undeclared')",
    "DELETE FROM t WHERE pk1 = 9 AND pk2 = 'z' AND pk3 = '\\x09'",
    "DELETE FROM t WHERE s = 'nothing'",
];

/// Fast-path reads: GetRow, BatchGetRow, GetRange both ways, LIMIT/OFFSET, filters.
const READS: &[&str] = &[
    "SELECT * FROM t",
    "SELECT pk1, pk2, pk3, a, d, b, s, bin FROM t WHERE pk1 = 1 AND pk2 = 'x' AND pk3 = '\\x01'",
    "SELECT a FROM t WHERE pk1 = 1 AND pk2 = 'x' AND pk3 IN ('\\x01', '\\x02', '\\x07')",
    "SELECT pk2, a FROM t WHERE pk1 = 1 AND pk2 >= 'x' AND pk2 <= 'y'",
    "SELECT pk2, a FROM t WHERE pk1 = 1 ORDER BY pk1 DESC, pk2 DESC, pk3 DESC",
    "SELECT pk1, a FROM t WHERE pk1 BETWEEN 1 AND 2 ORDER BY pk1, pk2, pk3 LIMIT 2 OFFSET 1",
    "SELECT pk1, s FROM t WHERE a > 15 AND b = false",
    "SELECT pk1, s FROM t WHERE s LIKE 't%' OR d IS NOT NULL",
    "SELECT pk1, extra FROM t WHERE extra IS NOT NULL",
    "SELECT column_name, value_type, value FROM versions.t WHERE pk1 = 1 AND pk2 = 'y' AND pk3 = '\\x01'",
    "SELECT a + 1 AS next, s || '!' AS loud FROM t WHERE pk1 = 2 AND pk2 = 'x' AND pk3 = '\\x01'",
];

#[tokio::test]
async fn writes_and_reads_agree_across_protocols() {
    let server = TestServer::start().await;
    let simple = server.connect().await;
    simple.batch_execute("CREATE DATABASE other").await.unwrap();
    let extended = server.connect_to("other").await.unwrap();
    simple.batch_execute(SCHEMA).await.unwrap();
    extended.batch_execute(SCHEMA).await.unwrap();
    for sql in WRITES {
        let tags = simple
            .simple_query(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        let simple_count = tags.iter().find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::CommandComplete(n) => Some(*n),
            _ => None,
        });
        let extended_count = extended
            .execute(*sql, &[])
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        assert_eq!(simple_count, Some(extended_count), "row count of {sql}");
    }
    let mut non_empty = 0;
    for sql in READS {
        let text = normalize(simple_rows(&simple, sql).await);
        let binary = normalize(extended_rows(&extended, sql).await);
        assert_eq!(text, binary, "{sql}");
        non_empty += usize::from(!text.is_empty());
    }
    assert_eq!(
        non_empty,
        READS.len(),
        "every read returns rows, so the comparison means something"
    );
    // Spot checks that both agree on the right answer, not just on each other.
    assert_eq!(
        simple_rows(
            &simple,
            "SELECT a, s, d FROM t WHERE pk1 = 1 AND pk2 = 'x' AND pk3 = '\\x01'"
        )
        .await,
        vec![vec!["10", "uno", "NULL"]]
    );
    assert_eq!(
        simple_rows(
            &simple,
            "SELECT a FROM t WHERE pk1 = 1 AND pk2 = 'y' AND pk3 = '\\x01'"
        )
        .await,
        vec![vec!["35"]]
    );
    assert_eq!(
        simple_rows(
            &simple,
            "SELECT a FROM t WHERE pk1 = 1 AND pk2 = 'x' AND pk3 = '\\x02'"
        )
        .await,
        vec![vec!["21"]]
    );
    assert!(simple_rows(
        &simple,
        "SELECT a FROM t WHERE pk1 = 9 AND pk2 = 'z' AND pk3 = '\\x09'"
    )
    .await
    .is_empty());
}

/// SQL DEALLOCATE of a statement that does not exist is SQLSTATE 26000 in both
/// protocols, as in PostgreSQL, and the connection carries on; DEALLOCATE ALL is not.
#[tokio::test]
async fn deallocate_of_an_unknown_statement_is_26000() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    let prepared = client.prepare("SELECT 1").await.unwrap();
    for result in [
        client.batch_execute("DEALLOCATE nosuch").await,
        client.execute("DEALLOCATE nosuch", &[]).await.map(|_| ()),
    ] {
        let error = result.expect_err("DEALLOCATE of an unknown name must fail");
        assert_eq!(
            error.code(),
            Some(&tokio_postgres::error::SqlState::INVALID_SQL_STATEMENT_NAME),
            "{error:?}"
        );
    }
    assert_eq!(
        client
            .query_one(&prepared, &[])
            .await
            .unwrap()
            .get::<_, i32>(0),
        1
    );
    client.batch_execute("DEALLOCATE ALL").await.unwrap();
    assert_eq!(
        simple_rows(&client, "SELECT 2").await,
        vec![vec!["2".to_string()]]
    );
}

/// A parameter number past what a Bind message can carry is 42P02 in both protocols,
/// not a statement that asks for a parameter list that long (the fuzzer's
/// `SELECT * FROM t WHERE k =$9223372036854775807 ...` aborted the server on it).
#[tokio::test]
async fn a_parameter_number_too_large_is_42p02() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE t (k BIGINT PRIMARY KEY, n BIGINT)")
        .await
        .unwrap();
    let sql = "SELECT * FROM t WHERE k = $9223372036854775807 OR n < -9223372036854775808";
    for result in [
        client.batch_execute(sql).await,
        client.prepare(sql).await.map(|_| ()),
        client.prepare("SELECT $65536").await.map(|_| ()),
    ] {
        let error = result.expect_err("a parameter number that large must fail");
        assert_eq!(error.code().map(|c| c.code()), Some("42P02"), "{error:?}");
    }
    // The largest number a Bind can carry is still a parameter.
    let statement = client.prepare("SELECT $65535::bigint").await;
    assert!(statement.is_ok(), "{statement:?}");
    assert_eq!(
        simple_rows(&client, "SELECT 2").await,
        vec![vec!["2".to_string()]]
    );
}
