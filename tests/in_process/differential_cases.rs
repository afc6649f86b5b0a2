//! Statements that once gave wrong answers, run in order against pgwide and a real
//! PostgreSQL 15 and compared whole: each result's column types (by OID), its rows as
//! text, its row count, or the error's SQLSTATE. Each group starts from fresh tables.

use crate::common::TestServer;
use crate::differential::Postgres;
use tokio_postgres::{Client, SimpleQueryMessage};

/// What a statement gave: column type OIDs, rows, the count in its CommandComplete.
#[derive(Debug, PartialEq)]
enum Outcome {
    Done {
        types: Vec<u32>,
        rows: Vec<Vec<String>>,
        count: Option<u64>,
    },
    Failed(String),
}

fn sqlstate(e: &tokio_postgres::Error) -> String {
    e.code()
        .map(|c| c.code().to_string())
        .unwrap_or_else(|| e.to_string())
}

async fn outcome(client: &Client, sql: &str) -> Outcome {
    // Describing first is harmless: a failed Parse leaves nothing behind.
    let types = match client.prepare(sql).await {
        Ok(statement) => statement
            .columns()
            .iter()
            .map(|c| c.type_().oid())
            .collect(),
        Err(e) => return Outcome::Failed(sqlstate(&e)),
    };
    match client.simple_query(sql).await {
        Ok(messages) => {
            let mut rows = Vec::new();
            let mut count = None;
            for message in messages {
                match message {
                    SimpleQueryMessage::Row(row) => rows.push(
                        (0..row.len())
                            .map(|i| row.get(i).unwrap_or("NULL").to_string())
                            .collect(),
                    ),
                    SimpleQueryMessage::CommandComplete(n) => count = Some(n),
                    _ => {}
                }
            }
            Outcome::Done { types, rows, count }
        }
        Err(e) => Outcome::Failed(sqlstate(&e)),
    }
}

/// Runs each group's statements in order on both servers; returns every difference.
async fn compare(groups: &[&[&str]]) -> Vec<String> {
    let postgres = Postgres::start();
    let pg = postgres.connect().await;
    let server = TestServer::start().await;
    let wide = server.connect().await;
    let mut differences = Vec::new();
    for group in groups {
        for client in [&pg, &wide] {
            client
                .batch_execute(
                    "DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS u; DROP SEQUENCE IF EXISTS s",
                )
                .await
                .expect("drop the group's tables");
        }
        for sql in *group {
            let expected = outcome(&pg, sql).await;
            let actual = outcome(&wide, sql).await;
            if expected != actual {
                differences.push(format!(
                    "{sql}\n  postgres: {expected:?}\n  pgwide:   {actual:?}"
                ));
            }
        }
    }
    differences
}

/// RETURNING of every write form gives the written rows' values, every column of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn returning_gives_the_written_rows() {
    let differences = compare(&[&[
        "CREATE TABLE t (k BIGINT, k2 TEXT, a BIGINT, b DOUBLE PRECISION, c TEXT, \
         PRIMARY KEY (k, k2))",
        "INSERT INTO t VALUES (1, 'a', 10, 1.5, 'x'), (2, 'b', 20, NULL, 'y') RETURNING *",
        "INSERT INTO t VALUES (3, 'c', 30, 3.5, NULL) RETURNING c, a + 1, k2",
        "INSERT INTO t VALUES (3, 'c', 31, 0, 'z') ON CONFLICT (k, k2) DO NOTHING RETURNING k",
        "INSERT INTO t VALUES (4, 'd', 40, 4.5, 'w'), (5, 'e', 50, 5.5, 'v')",
        "UPDATE t SET a = a * 2 WHERE k = 1 AND k2 = 'a' RETURNING *",
        "UPDATE t SET c = 'q' WHERE a > 25 RETURNING k, c, a - k",
        "DELETE FROM t WHERE k = 1 AND k2 = 'a' RETURNING *",
        "DELETE FROM t WHERE a = 20 RETURNING c, a, k, k2, b",
        "DELETE FROM t WHERE c IS NULL RETURNING b * 2, c",
        "DELETE FROM t WHERE k = 99 RETURNING *",
        "DELETE FROM t RETURNING k2, a",
        "SELECT count(*) FROM t",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// SMALLINT and INTEGER columns keep their ranges, in keys and attributes, for every
/// write form: a value that does not fit is 22003 and nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn narrow_integer_columns_keep_their_ranges() {
    let differences = compare(&[&[
        "CREATE TABLE t (k SMALLINT PRIMARY KEY, s SMALLINT, i INTEGER, b BIGINT)",
        "INSERT INTO t VALUES (1, 32767, 2147483647, 9223372036854775807)",
        "INSERT INTO t VALUES (2, 32768, 0, 0)",
        "INSERT INTO t VALUES (3, -32769, 0, 0)",
        "INSERT INTO t VALUES (4, 0, 2147483648, 0)",
        "INSERT INTO t VALUES (40000, 0, 0, 0)",
        "INSERT INTO t VALUES (5, 1, 1, 1), (6, 99999, 1, 1)",
        "UPDATE t SET s = s + 1 WHERE k = 1",
        "UPDATE t SET i = i + 1 WHERE k = 1",
        "UPDATE t SET s = 1 + s WHERE k = 1",
        "UPDATE t SET s = -32768, i = -2147483648 WHERE k = 1",
        "UPDATE t SET s = s - 1 WHERE k = 1",
        "INSERT INTO t VALUES (1, 0, 0, 0) ON CONFLICT (k) DO UPDATE SET i = 2147483648",
        "SELECT CAST(k AS bigint), CAST(s AS bigint), CAST(i AS bigint), b FROM t ORDER BY k",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Integer literals at the limits, casts of decimals to integers (numeric literals round
/// half away from zero, doubles half to even), increments that are not Table Store's
/// integer increment, and ON CONFLICT setting the key to itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn literals_casts_and_computed_updates() {
    let differences = compare(&[&[
        "SELECT -9223372036854775808, 9223372036854775807, 3000000000, -2147483648",
        "SELECT -9223372036854775808::bigint",
        "SELECT 9223372036854775808::bigint",
        "SELECT CAST(-316.15 AS integer), CAST(2.5 AS integer), CAST(-2.5 AS bigint)",
        "SELECT CAST(3000000000 AS integer)",
        "SELECT CAST(40000 AS smallint)",
        "CREATE TABLE t (k BIGINT PRIMARY KEY, n BIGINT, d DOUBLE PRECISION, s TEXT)",
        "INSERT INTO t VALUES (1, 2.5, 80.5, 'a'), (2, -2.5, 3.5, 'b'), (3, 7, 90.25, 'c')",
        "SELECT k FROM t WHERE CAST(d AS integer) = 80 ORDER BY k",
        "SELECT k, CAST(d AS bigint) FROM t ORDER BY k",
        "UPDATE t SET d = d + 1.5 WHERE k = 1",
        "UPDATE t SET n = n + 1.5 WHERE k = 2",
        "UPDATE t SET n = n - 1 WHERE k = 3",
        "UPDATE t SET n = d WHERE k = 3",
        "UPDATE t SET n = 0.5 WHERE k = 1",
        "INSERT INTO t VALUES (1, 10, 1, 'z') ON CONFLICT (k) DO UPDATE SET k = EXCLUDED.k, \
         s = EXCLUDED.s",
        "UPDATE t SET k = k WHERE k = 2",
        "SELECT * FROM t ORDER BY k",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Array literals in PostgreSQL's text form: `'{a,b}'::text[]` has two elements (it was
/// one, so `= ANY` and `<> ALL` answered wrongly), quoted elements keep commas and
/// spaces, unquoted NULL is NULL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_literals_have_their_elements() {
    let differences = compare(&[&[
        "SELECT 'a' = ANY('{a,b}'::text[]), 'c' = ANY('{a,b}'::text[])",
        "SELECT 'x' <> ALL('{Tale}'::text[]), 'Tale' <> ALL('{Tale,x}'::text[])",
        // (Compared as booleans: DataFusion's lengths are bigint, PostgreSQL's integer.)
        "SELECT array_length('{Tale,x}'::text[], 1) = 2, cardinality('{}'::text[]) = 0",
        "SELECT '{a,\"b c\",NULL,\"NULL\", d }'::text[]",
        "SELECT CAST('{\"x,y\",z}' AS text[])",
        "SELECT 3 = ANY('{1,2,3}'::bigint[]), 4 = ANY('{1,2,3}'::bigint[])",
        "CREATE TABLE t (k BIGINT PRIMARY KEY, c TEXT)",
        "INSERT INTO t VALUES (1, 'Tale'), (2, 'x'), (3, 'other'), (4, NULL)",
        "SELECT k FROM t WHERE c = ANY('{Tale,x}'::text[]) ORDER BY k",
        "SELECT k FROM t WHERE c <> ALL('{Tale}'::text[]) ORDER BY k",
        "SELECT k FROM t WHERE k <> ALL('{1,2}'::bigint[]) ORDER BY k",
        "SELECT count(*) FROM t WHERE k = ANY('{2,4,9}'::bigint[])",
        "SELECT '{1,x}'::bigint[]",
        "SELECT 'a,b'::text[]",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Integer arithmetic that overflows bigint is 22003, on the fast path and through
/// DataFusion (which wraps by itself: `sum(a * 4611686018427387904)` gave 0).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bigint_overflow_is_an_error() {
    let differences = compare(&[&[
        "CREATE TABLE t (k BIGINT PRIMARY KEY, a BIGINT)",
        "INSERT INTO t VALUES (1, 4), (2, 5), (3, NULL), (4, 9223372036854775807)",
        "SELECT sum(a * 4611686018427387904) FROM t WHERE k < 3",
        "SELECT a * 4611686018427387904 FROM t WHERE k = 2",
        "SELECT k, a * 2 FROM t WHERE k = 4",
        "SELECT k, a + 1 FROM t ORDER BY k",
        "SELECT k, a - (-1) FROM t GROUP BY k, a ORDER BY k",
        "SELECT max(a) + 1 FROM t",
        // (Not `sum(a)` alone: PostgreSQL's is numeric, pgwide's still bigint.)
        "SELECT k, a * 2 FROM t WHERE k < 3 GROUP BY k, a ORDER BY k",
        "SELECT count(*) FROM t WHERE a * 2 > 8",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// COALESCE in VALUES, UPDATE SET and the select list of the fast path (it was 42883
/// outside DataFusion).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coalesce_works_in_writes_and_reads() {
    let differences = compare(&[&[
        "CREATE TABLE t (k BIGINT PRIMARY KEY, a BIGINT, s TEXT, d DOUBLE PRECISION)",
        "INSERT INTO t VALUES (1, NULL, COALESCE(NULL, 'x'), 1.5), (2, 5, NULL, NULL)",
        "UPDATE t SET a = COALESCE(a, 0) + 1",
        "UPDATE t SET d = COALESCE(d, 0) + 0.5, s = COALESCE(s, 'none') WHERE k = 2",
        "SELECT k, a, s, d, COALESCE(s, 'z'), COALESCE(NULL, a), COALESCE(d, a) FROM t ORDER BY k",
        "SELECT k FROM t WHERE COALESCE(d, 0) > 1 ORDER BY k",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Result columns may share a name, as in PostgreSQL (DataFusion wanted unique names).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_columns_may_share_a_name() {
    let differences = compare(&[&[
        "SELECT NULL, NULL",
        "CREATE TABLE t (k BIGINT PRIMARY KEY, c BIGINT)",
        "INSERT INTO t VALUES (1, 10), (2, 20)",
        "SELECT -c AS c2, 53 AS c2 FROM t ORDER BY k",
        // (Text literals: DataFusion types `(SELECT 1)` bigint, PostgreSQL integer.)
        "SELECT (SELECT 'a'), (SELECT 'b') FROM t ORDER BY k",
        "SELECT count(*), count(*), max(c) AS m, min(c) AS m FROM t",
        "SELECT c, c FROM t ORDER BY k",
        "SELECT k AS x, count(*) AS x FROM t GROUP BY k ORDER BY k",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// UPDATE, DELETE and INSERT whose expressions the fast path lacks (functions, scalar
/// subqueries, IN subqueries, arrays) are computed by a query and written as the fast
/// path writes: they were 42883 or 0A000.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_beyond_the_fast_path_are_computed() {
    let differences = compare(&[&[
        "CREATE TABLE t (k BIGINT PRIMARY KEY, s TEXT, n BIGINT, d DOUBLE PRECISION)",
        "INSERT INTO t VALUES (1, 'a', 10, 1.5), (2, 'b', 20, 2.5), (3, 'c', 30, NULL)",
        "INSERT INTO t VALUES (4, repeat('x', 3), length('abcd'), pi()) RETURNING k, s, n",
        "INSERT INTO t (k, s) VALUES (5, upper('y')), (6, lpad('z', 3, '-'))",
        "UPDATE t SET s = repeat(s, 2), n = n * 2 WHERE n > (SELECT min(n) FROM t) RETURNING *",
        "UPDATE t SET d = (SELECT max(n) FROM t) WHERE k = 1 RETURNING k, d",
        "UPDATE t SET s = reverse(s) WHERE k = ANY('{5,6}'::bigint[])",
        "DELETE FROM t WHERE s IN (SELECT s FROM t WHERE n = 60) RETURNING k, upper(s)",
        "DELETE FROM t WHERE k = ANY('{4,9}'::bigint[]) RETURNING *",
        "UPDATE t SET s = nosuchfn(s)",
        "UPDATE t SET n = 9223372036854775807 + n WHERE k = 2",
        "SELECT * FROM t ORDER BY k",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// ON CONFLICT DO UPDATE reads the stored row (`t.n`) beside EXCLUDED, and its WHERE
/// decides whether a conflicting row is updated at all (Prisma's and Knex's upserts).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_conflict_reads_the_stored_row_and_obeys_where() {
    let differences = compare(&[&[
        "CREATE TABLE t (k BIGINT PRIMARY KEY, s TEXT, n BIGINT, v BIGINT)",
        "INSERT INTO t VALUES (1, 'a', 10, 100), (2, 'b', 20, 200)",
        "INSERT INTO t VALUES (1, 'q', 1, 50) ON CONFLICT (k) DO UPDATE SET s = EXCLUDED.s \
         WHERE t.v < EXCLUDED.v",
        "INSERT INTO t VALUES (1, 'q', 1, 150) ON CONFLICT (k) DO UPDATE SET s = EXCLUDED.s, \
         v = EXCLUDED.v WHERE t.v < EXCLUDED.v RETURNING *",
        "INSERT INTO t AS x VALUES (2, 'z', 5, 0), (3, 'new', 3, 3) ON CONFLICT (k) DO UPDATE \
         SET n = x.n + EXCLUDED.n, s = x.s || EXCLUDED.s RETURNING k, s, n",
        "INSERT INTO t VALUES (2, 'z', 5, 0) ON CONFLICT (k) DO UPDATE SET n = n + 1",
        "INSERT INTO t VALUES (2, 'z', 5, 0) ON CONFLICT (k) DO UPDATE SET n = t.nosuch",
        "INSERT INTO t VALUES (2, 'z', 7, 0) ON CONFLICT (k) DO UPDATE SET n = EXCLUDED.n \
         WHERE EXCLUDED.n > 100",
        "SELECT * FROM t ORDER BY k",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Array parameters, sent in binary as drivers send lists (psycopg, pgjdbc's
/// `setArray`), in `= ANY($1)`, `unnest($1::int8[])` (Django's bulk_create) and DML,
/// with the array types PostgreSQL reports for the parameters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_parameters_are_arrays() {
    let postgres = Postgres::start();
    let pg = postgres.connect().await;
    let server = TestServer::start().await;
    let wide = server.connect().await;
    let mut seen = Vec::new();
    for client in [&pg, &wide] {
        client
            .batch_execute(
                "DROP TABLE IF EXISTS t; CREATE TABLE t (k BIGINT PRIMARY KEY, s TEXT); \
                 INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, NULL)",
            )
            .await
            .expect("create t");
        let keys: Vec<i64> = vec![1, 3, 9];
        let names: Vec<Option<&str>> = vec![Some("b"), None, Some("c")];
        let by_key = client
            .prepare("SELECT k, s FROM t WHERE k = ANY($1) ORDER BY k")
            .await
            .expect("prepare ANY($1)");
        let by_name = client
            .prepare("SELECT k FROM t WHERE s = ANY($1) ORDER BY k")
            .await
            .expect("prepare text ANY($1)");
        let unnest = client
            .prepare("SELECT u FROM unnest($1::int8[]) AS u ORDER BY u DESC")
            .await
            .expect("prepare unnest");
        let types: Vec<String> = [&by_key, &by_name, &unnest]
            .iter()
            .map(|s| s.params()[0].name().to_string())
            .collect();
        let rows = |rows: Vec<tokio_postgres::Row>| -> Vec<String> {
            rows.iter()
                .map(|r| {
                    (0..r.len())
                        .map(|i| match r.columns()[i].type_().name() {
                            "int8" => r.get::<_, Option<i64>>(i).map(|v| v.to_string()),
                            _ => r.get::<_, Option<String>>(i),
                        })
                        .map(|v| v.unwrap_or_else(|| "NULL".into()))
                        .collect::<Vec<_>>()
                        .join("|")
                })
                .collect()
        };
        let selected = rows(client.query(&by_key, &[&keys]).await.expect("ANY($1)"));
        let named = rows(
            client
                .query(&by_name, &[&names])
                .await
                .expect("text ANY($1)"),
        );
        let unnested = rows(client.query(&unnest, &[&keys]).await.expect("unnest"));
        let echoed: Vec<i64> = client
            .query_one("SELECT $1::int8[]", &[&vec![5i64, -6]])
            .await
            .expect("echo an array")
            .get(0);
        let deleted = client
            .execute("DELETE FROM t WHERE k = ANY($1)", &[&vec![2i64, 4]])
            .await
            .expect("DELETE ... ANY($1)");
        let updated = client
            .execute(
                "UPDATE t SET s = s || '!' WHERE k = ANY($1)",
                &[&vec![1i64]],
            )
            .await
            .expect("UPDATE ... ANY($1)");
        let left = rows(
            client
                .query("SELECT k, s FROM t ORDER BY k", &[])
                .await
                .expect("rows"),
        );
        seen.push(format!(
            "{types:?} {selected:?} {named:?} {unnested:?} {echoed:?} {deleted} {updated} \
             {left:?}"
        ));
    }
    assert_eq!(seen[0], seen[1], "postgres, then pgwide");
}

/// LIMIT and OFFSET parameters are bigints, as PostgreSQL reports them, so a client that
/// binds what the server describes (Prisma, tokio-postgres) sends integers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_and_offset_parameters_are_bigints() {
    let postgres = Postgres::start();
    let pg = postgres.connect().await;
    let server = TestServer::start().await;
    let wide = server.connect().await;
    let mut seen = Vec::new();
    for client in [&pg, &wide] {
        client
            .batch_execute(
                "DROP TABLE IF EXISTS t; CREATE TABLE t (k BIGINT PRIMARY KEY, s TEXT); \
                 INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
            )
            .await
            .expect("create t");
        let mut one = Vec::new();
        for sql in [
            "SELECT k FROM t ORDER BY k LIMIT $1 OFFSET $2",
            "SELECT k FROM t WHERE s <> $1 ORDER BY k DESC LIMIT $2 OFFSET $3",
            "SELECT s, count(*) FROM t GROUP BY s ORDER BY s LIMIT $1 OFFSET $2",
        ] {
            let statement = client.prepare(sql).await.expect(sql);
            let types: Vec<String> = statement.params().iter().map(|t| t.name().into()).collect();
            let rows = match statement.params().len() {
                2 => client.query(&statement, &[&2i64, &1i64]).await,
                _ => client.query(&statement, &[&"b", &1i64, &1i64]).await,
            }
            .expect(sql);
            let first: Vec<String> = rows
                .iter()
                .map(|r| match r.columns()[0].type_().name() {
                    "int8" => r.get::<_, i64>(0).to_string(),
                    _ => r.get::<_, String>(0),
                })
                .collect();
            one.push(format!("{types:?} {first:?}"));
        }
        seen.push(one);
    }
    assert_eq!(seen[0], seen[1], "postgres, then pgwide");
}

/// SMALLINT and INTEGER columns are `int2` and `int4` wherever they show (results, on
/// the fast path and through DataFusion, RETURNING, the catalog), and arithmetic over
/// them is computed in their type: past its range it is 22003, as in PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn integer_columns_keep_their_declared_types() {
    let differences = compare(&[&[
        "CREATE TABLE t (k INTEGER PRIMARY KEY, s SMALLINT, i INTEGER, b BIGINT)",
        "INSERT INTO t VALUES (1, 1, 2147483647, 5), (2, -32768, -2, NULL), (3, NULL, 7, 9) \
         RETURNING *",
        "SELECT * FROM t ORDER BY k",
        "SELECT k, s, i FROM t WHERE k = 1",
        "SELECT i + 1, s - 1, i * s FROM t WHERE k = 3",
        "SELECT i + i FROM t ORDER BY k",
        "SELECT s * s FROM t ORDER BY k",
        "SELECT i * 2 FROM t WHERE k = 1",
        "SELECT i + b, k * 3000000000 FROM t ORDER BY k",
        "SELECT i / 2, i % 5, coalesce(s, i), coalesce(s, b) FROM t ORDER BY k",
        "SELECT sum(i), sum(s), max(i), min(s), count(*) FROM t",
        "SELECT k, i FROM t WHERE i > 5 ORDER BY i",
        "SELECT k + 1 FROM t GROUP BY k ORDER BY k",
        "SELECT i + i FROM t GROUP BY i ORDER BY i",
        "UPDATE t SET i = i + 1 WHERE k = 1",
        "UPDATE t SET i = i * 2 WHERE k = 3 RETURNING k, i",
        "SELECT 1 + 2, 2000000000 + 2000000000",
        "SELECT pg_typeof(k)::text, pg_typeof(s)::text, pg_typeof(i + 1)::text, \
         pg_typeof(b)::text, pg_typeof(NULL)::text, pg_typeof(array_agg(k))::text \
         FROM t WHERE k = 1 GROUP BY k, s, i, b",
        "SELECT atttypid::int, attname::text FROM pg_attribute \
         WHERE attrelid = 't'::regclass AND attnum > 0 ORDER BY attnum",
        "SELECT data_type::text FROM information_schema.columns WHERE table_name = 't' \
         ORDER BY ordinal_position",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// REAL columns are `float4`: values are rounded to single precision when written (so
/// `r = 0.1::real` finds the row and `r * 2` computes on the rounded value), shown
/// as a float4 is, and a value past its range is 22003.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_columns_are_single_precision() {
    let differences = compare(&[&[
        "CREATE TABLE t (k BIGINT PRIMARY KEY, r REAL, d DOUBLE PRECISION)",
        "INSERT INTO t VALUES (1, 0.1, 0.1), (2, 3.14159265358979, 3.14159265358979), \
         (3, 1e30, 1e30), (4, NULL, 2) RETURNING r",
        "INSERT INTO t VALUES (5, 1e300, 1)",
        "INSERT INTO t VALUES (6, 1e-300, 1)",
        "SELECT * FROM t ORDER BY k",
        "SELECT k, r FROM t WHERE k = 2",
        "SELECT r * 2, r + d FROM t ORDER BY k",
        "SELECT r::text FROM t WHERE k = 1",
        "SELECT k FROM t WHERE r = 0.1",
        "SELECT k FROM t WHERE r = 0.1::real",
        "SELECT 0.1::real, CAST(3.14159265358979 AS real)",
        "UPDATE t SET r = r * 3 WHERE k = 1 RETURNING r",
        "SELECT max(r), min(r) FROM t",
        "SELECT atttypid::int FROM pg_attribute WHERE attrelid = 't'::regclass AND attnum = 2",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// VARCHAR(n) limits are enforced on every write form (22001), blanks past the limit are
/// cut as PostgreSQL cuts them, and the limit counts characters, not bytes. (Values are
/// compared as text: pgwide shows VARCHAR columns as `text`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn varchar_lengths_are_enforced() {
    let differences = compare(&[&[
        "CREATE TABLE t (k VARCHAR(4) PRIMARY KEY, v VARCHAR(3), w CHARACTER VARYING(2))",
        "INSERT INTO t VALUES ('a', 'abc', 'xy')",
        "INSERT INTO t VALUES ('b', 'abcd', 'x')",
        "INSERT INTO t VALUES ('c', 'ab   ', 'x  ')",
        "INSERT INTO t VALUES ('toolong', 'a', 'b')",
        "INSERT INTO t VALUES ('d', 'éèê', 'ñ'), ('e', 'éèêë', 'ñ')",
        "INSERT INTO t VALUES ('d', 'éèê', 'ñ')",
        "UPDATE t SET v = 'wxyz' WHERE k = 'a'",
        "UPDATE t SET v = v || 'q' WHERE k = 'd'",
        "UPDATE t SET v = upper(v) || '  ' WHERE k = 'c' RETURNING v::text, length(v)",
        "INSERT INTO t VALUES ('a', 'z', 'z') ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v || 'zz'",
        "SELECT k::text, v::text, length(v), w::text FROM t ORDER BY k",
        "ALTER TABLE t ADD COLUMN n VARCHAR(2)",
        "INSERT INTO t (k, v, w, n) VALUES ('f', 'a', 'b', 'abc')",
        "SELECT count(*) FROM t WHERE k = 'f'",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// TIMESTAMP, TIMESTAMPTZ and DATE columns keep their types (results, RETURNING, the
/// catalog), read PostgreSQL's input forms (zones, `T`, BC, infinity), print its text,
/// range-scan a `(text, timestamptz)` key, compute with DataFusion's date functions,
/// and refuse what PostgreSQL refuses (22007, 22008, 42804).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dates_and_times_keep_their_types() {
    let differences = compare(&[&[
        "CREATE TABLE t (dev TEXT, ts TIMESTAMPTZ, d DATE, n TIMESTAMP, v INTEGER, \
         PRIMARY KEY (dev, ts))",
        "INSERT INTO t VALUES ('a', '2024-03-01 10:00:00+02', '2024-03-01', \
         '2024-03-01 10:00:00.5', 1), ('a', '2024-03-02T00:00:00Z', '2024-03-02', \
         '2024-03-02 23:59:59', 2), ('b', '1999-12-31 23:59:59.999999', 'infinity', \
         '0001-01-01 BC', 3) RETURNING *",
        "INSERT INTO t VALUES ('c', '2024-07-01 12:00 Europe/Paris', '2024-02-29', \
         '2024-03-01 24:00:00', 4) RETURNING ts, n",
        "INSERT INTO t VALUES ('c', '-infinity', '1969-12-31', 'epoch', 5)",
        "INSERT INTO t (dev, ts) VALUES ('x', 'garbage')",
        "INSERT INTO t (dev, ts) VALUES ('x', '2024-13-01')",
        "INSERT INTO t (dev, ts, d) VALUES ('x', '2024-01-01', '2023-02-29')",
        "INSERT INTO t (dev, ts) VALUES ('x', 5)",
        "INSERT INTO t (dev, ts, d) VALUES ('x', '2024-01-01', 7)",
        "SELECT * FROM t ORDER BY dev, ts",
        "SELECT dev, v FROM t WHERE dev = 'a' AND ts >= '2024-03-01 07:00+00' \
         AND ts < '2024-03-02' ORDER BY ts",
        "SELECT v FROM t WHERE '2024-03-01' < ts AND ts <= '2024-03-02 00:00:00+00' ORDER BY v",
        "SELECT v FROM t WHERE d BETWEEN '2024-01-01' AND '2024-12-31' ORDER BY v",
        "SELECT v FROM t WHERE d IN ('2024-03-01', '2024-02-29') ORDER BY v",
        "SELECT v FROM t WHERE n > '2024-03-01' ORDER BY v",
        "SELECT v FROM t WHERE ts = '-infinity' OR d = 'infinity' ORDER BY v",
        "SELECT dev, date_trunc('day', ts), ts + interval '1 hour', d + 1, ts::date, \
         n::text, ts::text, d::text FROM t WHERE dev = 'a' ORDER BY ts",
        "SELECT min(ts), max(d), min(n) FROM t WHERE dev <> 'c'",
        "SELECT count(*) FROM t WHERE ts > now() - interval '100 years'",
        "SELECT v FROM t WHERE d < now() AND dev = 'a' ORDER BY v",
        "UPDATE t SET d = '2020-02-29', n = '2020-02-29 12:34:56.789' WHERE dev = 'b' \
         RETURNING d, n",
        "UPDATE t SET n = ts WHERE dev = 'a' RETURNING n",
        "UPDATE t SET d = n WHERE dev = 'b' RETURNING d",
        "UPDATE t SET n = n + interval '1 day' WHERE dev = 'b' RETURNING n",
        "UPDATE t SET v = v + 1 WHERE dev = 'a' RETURNING ts::text, d::text, n::text, v",
        "SELECT ts::text, DATE '2024-01-02', n FROM t WHERE dev = 'b'",
        "DELETE FROM t WHERE ts < '2000-01-01' AND dev = 'b' RETURNING dev, ts",
        "SELECT v FROM t WHERE ts > '2024-03-01 10:00' AND length(dev) = 1 ORDER BY v",
        "SELECT count(*) FROM t WHERE ts IN ('-infinity', '2024-03-02') AND v > 0",
        "SELECT '0044-03-15 BC'::date, '0001-01-01 10:00'::timestamp, 'infinity'::timestamptz, now() > '2020-01-01'",
        "SELECT '2024-03-01'::date, '2024-03-01 10:00'::timestamp, \
         '2024-03-01 10:00+01'::timestamptz, DATE '2024-01-31', \
         TIMESTAMP '2024-01-31 01:02:03.456789'",
        "SELECT atttypid::int, attname::text FROM pg_attribute \
         WHERE attrelid = 't'::regclass AND attnum > 0 ORDER BY attnum",
        "SELECT data_type::text FROM information_schema.columns WHERE table_name = 't' \
         ORDER BY ordinal_position",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// NOT NULL is enforced on every write form (23502, nothing written), shown in the
/// catalog, and ADD COLUMN ... NOT NULL is refused on a table with rows; a VALUES row
/// shorter than the table fills its first columns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_null_columns_always_have_a_value() {
    let differences = compare(&[&[
        "CREATE TABLE t (k BIGINT PRIMARY KEY, a TEXT NOT NULL, b INTEGER, \
         d TIMESTAMPTZ NOT NULL)",
        "INSERT INTO t VALUES (1, 'x', 1, '2024-01-01')",
        "INSERT INTO t VALUES (2, NULL, 1, '2024-01-01')",
        "INSERT INTO t (k, b, d) VALUES (3, 1, '2024-01-01')",
        "INSERT INTO t VALUES (4, 'y')",
        "INSERT INTO t VALUES (5, 'a', 1, '2024-01-01'), (6, 'b', 2, NULL)",
        "UPDATE t SET a = NULL WHERE k = 1",
        "UPDATE t SET a = NULLIF(a, 'x') WHERE k = 1",
        "UPDATE t SET b = NULL WHERE k = 1 RETURNING *",
        "INSERT INTO t VALUES (1, 'z', 2, '2024-01-02') ON CONFLICT (k) DO UPDATE SET a = NULL",
        "INSERT INTO t VALUES (1, 'z', 2, '2024-01-02') ON CONFLICT (k) DO UPDATE \
         SET a = EXCLUDED.a RETURNING a",
        "SELECT * FROM t ORDER BY k",
        "ALTER TABLE t ADD COLUMN c TEXT NOT NULL",
        "SELECT attname::text, attnotnull FROM pg_attribute \
         WHERE attrelid = 't'::regclass AND attnum > 0 ORDER BY attnum",
        "SELECT column_name::text, is_nullable::text FROM information_schema.columns \
         WHERE table_name = 't' ORDER BY ordinal_position",
        "CREATE TABLE u (k BIGINT PRIMARY KEY, v TEXT)",
        "ALTER TABLE u ADD COLUMN w TEXT NOT NULL",
        "INSERT INTO u VALUES (1, 'v')",
        "INSERT INTO u VALUES (1, 'v', 'w', 'extra')",
        "INSERT INTO u VALUES (2, 'v', 'w')",
        "SELECT * FROM u",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// SERIAL and identity columns take their sequence's next value when an INSERT names
/// none or says DEFAULT (RETURNING shows it), a BY DEFAULT one takes a given value,
/// an ALWAYS one refuses it (428C9); sequences count, bound and reset as PostgreSQL's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequences_generate_keys() {
    let differences = compare(&[&[
        "CREATE TABLE t (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, \
         name TEXT, n SERIAL)",
        "INSERT INTO t (name) VALUES ('a'), ('b') RETURNING *",
        "INSERT INTO t VALUES (DEFAULT, 'c', DEFAULT) RETURNING id, n",
        "INSERT INTO t (id, name) VALUES (100, 'd') RETURNING *",
        "INSERT INTO t (name) SELECT name || '2' FROM t WHERE id < 3 RETURNING id, name",
        "SELECT * FROM t ORDER BY id",
        "SELECT pg_get_serial_sequence('t', 'id'), pg_get_serial_sequence('t', 'n'), \
         pg_get_serial_sequence('t', 'name')",
        "SELECT setval(pg_get_serial_sequence('t', 'id'), (SELECT max(id) FROM t))",
        "INSERT INTO t (name) VALUES ('e') RETURNING id",
        "SELECT currval('t_id_seq'), lastval()",
        "DROP SEQUENCE t_id_seq",
        "SELECT attname::text, attidentity::text, attnotnull FROM pg_attribute \
         WHERE attrelid = 't'::regclass AND attnum > 0 ORDER BY attnum",
        "SELECT column_name::text, column_default::text, is_identity::text, \
         identity_generation::text FROM information_schema.columns WHERE table_name = 't' \
         ORDER BY ordinal_position",
        "CREATE TABLE u (id INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v TEXT)",
        "INSERT INTO u (id, v) VALUES (1, 'x')",
        "INSERT INTO u (v) VALUES ('x'), ('y') RETURNING *",
        "CREATE SEQUENCE s INCREMENT BY 5 START WITH 10 MAXVALUE 20",
        "SELECT currval('s')",
        "SELECT nextval('s'), nextval('s')",
        "SELECT nextval('s')",
        "SELECT nextval('s')",
        "SELECT setval('s', 12, false), nextval('s'), currval('s')",
        "SELECT setval('s', 99)",
        "SELECT nextval('nope')",
        "CREATE SEQUENCE s",
        "CREATE SEQUENCE IF NOT EXISTS s",
        "CREATE TABLE s (k BIGINT PRIMARY KEY)",
        "DROP SEQUENCE s",
        "SELECT nextval('s')",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// ALTER SEQUENCE changes what comes next as in PostgreSQL: a new increment goes on
/// from the last value, RESTART starts again (at START or a given value), bounds must
/// hold the last value (22023), a new type takes the bounds that were the old type's
/// limits (Django's AutoField to BigAutoField), options are checked (22023, 42601), and
/// in a block that rolls back the definition and the next value come back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alter_sequence_changes_what_comes_next() {
    let catalog = "SELECT seqtypid::regtype::text, seqstart, seqincrement, seqmax, seqmin, \
                   seqcycle FROM pg_sequence WHERE seqrelid = 's'::regclass";
    let differences = compare(&[&[
        "CREATE SEQUENCE s",
        "SELECT nextval('s'), nextval('s')",
        "ALTER SEQUENCE s INCREMENT BY 10",
        "SELECT nextval('s')",
        "ALTER SEQUENCE s RESTART",
        "SELECT nextval('s')",
        "ALTER SEQUENCE s RESTART WITH 100 MAXVALUE 200",
        "SELECT nextval('s'), nextval('s')",
        "ALTER SEQUENCE s MAXVALUE 105",
        "ALTER SEQUENCE s MAXVALUE 115 CYCLE",
        "SELECT nextval('s'), nextval('s')",
        catalog,
        "ALTER SEQUENCE s AS integer",
        catalog,
        "ALTER SEQUENCE s NO MAXVALUE AS smallint",
        catalog,
        "ALTER SEQUENCE s AS bigint",
        catalog,
        "ALTER SEQUENCE s AS text",
        "ALTER SEQUENCE s",
        "ALTER SEQUENCE s INCREMENT 1 INCREMENT 2",
        "ALTER SEQUENCE s INCREMENT 0",
        "ALTER SEQUENCE s START 0",
        "ALTER SEQUENCE s MINVALUE 1000",
        "ALTER SEQUENCE s INCREMENT -1 NO MINVALUE NO MAXVALUE",
        catalog,
        "ALTER SEQUENCE IF EXISTS nope RESTART",
        "ALTER SEQUENCE nope RESTART",
        "CREATE TABLE t (id SERIAL PRIMARY KEY, v INT)",
        "ALTER SEQUENCE t_id_seq AS bigint",
        "ALTER SEQUENCE t_id_seq RESTART WITH 50",
        "INSERT INTO t (v) VALUES (1) RETURNING id",
        "ALTER SEQUENCE t_id_seq START WITH 5 RESTART",
        "INSERT INTO t (v) VALUES (2) RETURNING id",
        "SELECT setval('t_id_seq', 10, false)",
        "ALTER SEQUENCE t_id_seq INCREMENT BY 3",
        "INSERT INTO t (v) VALUES (3), (4) RETURNING id",
        "BEGIN",
        "ALTER SEQUENCE t_id_seq INCREMENT BY 100 MAXVALUE 1000",
        "ROLLBACK",
        "INSERT INTO t (v) VALUES (5) RETURNING id",
        "SELECT seqincrement, seqmax FROM pg_sequence WHERE seqrelid = 't_id_seq'::regclass",
        "ALTER SEQUENCE s OWNED BY t.v",
        "ALTER SEQUENCE s OWNED BY t.nope",
        "ALTER SEQUENCE s OWNED BY t",
        "ALTER TABLE t DROP COLUMN v",
        "SELECT count(*) FROM pg_class WHERE relname = 's'",
        "CREATE SEQUENCE s OWNED BY t.id",
        "DROP SEQUENCE s",
        "CREATE SEQUENCE s OWNED BY t.id",
        "DROP SEQUENCE t_id_seq",
        "DROP TABLE t",
        "SELECT count(*) FROM pg_class WHERE relname = 's'",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A function or operator called with argument types it has no variant for is 42883,
/// as in PostgreSQL (it was 42804, with DataFusion's list of signatures as the message).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_without_a_matching_signature_are_42883() {
    let differences = compare(&[&[
        "CREATE TABLE t (id INT PRIMARY KEY, s TEXT, ts TIMESTAMPTZ)",
        "SELECT date_trunc('day', 5)",
        "SELECT sum(s) FROM t",
        "SELECT avg(ts) FROM t",
        "SELECT now() + 5",
        "SELECT to_char(5)",
        "SELECT nosuchfn(1)",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// UUID columns (key or attribute) read `uuid_in`'s forms, print `uuid_out`'s, compare
/// and sort as PostgreSQL's, cast to and from text, and refuse malformed text (22P02).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uuids_keep_their_type() {
    let differences = compare(&[&[
        "CREATE TABLE t (id UUID PRIMARY KEY, other UUID, n INTEGER)",
        "INSERT INTO t VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', \
         '{A0EEBC99-9C0B4EF8-BB6D6BB9-BD380A12}', 1), \
         ('00000000-0000-0000-0000-000000000001', NULL, 2), \
         ('ffffffff-ffff-ffff-ffff-ffffffffffff', 'a0eebc999c0b4ef8bb6d6bb9bd380a11', 3) \
         RETURNING *",
        "INSERT INTO t VALUES ('bad', NULL, 4)",
        "CREATE TABLE u (k BIGINT PRIMARY KEY, b BYTEA, s TEXT)",
        "INSERT INTO u VALUES (1, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, 'x')",
        "INSERT INTO u VALUES (2, NULL, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid) \
         RETURNING s",
        "INSERT INTO t VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1', NULL, 4)",
        "INSERT INTO t (id, n) VALUES (5, 5)",
        "SELECT * FROM t ORDER BY id",
        "SELECT n FROM t WHERE id = 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'",
        "SELECT n FROM t WHERE id > '00000000-0000-0000-0000-000000000001' ORDER BY id DESC",
        "SELECT n, id::text, other::text FROM t WHERE other IS NOT NULL AND n > 0 ORDER BY n",
        "SELECT count(*) FROM t WHERE id IN ('ffffffff-ffff-ffff-ffff-ffffffffffff', \
         '00000000-0000-0000-0000-000000000001')",
        "SELECT 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid, \
         CAST('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' AS uuid)::text",
        "UPDATE t SET other = 'ffffffff-ffff-ffff-ffff-ffffffffffff' WHERE n = 2 RETURNING other",
        "INSERT INTO t (id, n) VALUES ('00000000-0000-0000-0000-000000000009', 9) \
         RETURNING id::text, id, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
        "SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, n, id::text FROM t \
         WHERE id = '00000000-0000-0000-0000-000000000009'",
        "SELECT max(n), min(n) FROM t GROUP BY other IS NULL ORDER BY 1",
        "SELECT length(gen_random_uuid()::text), \
         substr(gen_random_uuid()::text, 15, 1)",
        "SELECT atttypid::int FROM pg_attribute WHERE attrelid = 't'::regclass AND attnum = 1",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A `TIMESTAMP(p)` column keeps `p` digits of a second: written values are rounded to
/// them (half away from zero), on every write form, as PostgreSQL rounds them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamp_precision_rounds_written_values() {
    let differences = compare(&[&[
        "CREATE TABLE t (k BIGINT PRIMARY KEY, a TIMESTAMP(3), b TIMESTAMPTZ(0), \
         c TIMESTAMP(6))",
        "INSERT INTO t VALUES (1, '2024-03-01 10:00:00.12345', '2024-03-01 10:00:00.5', \
         '2024-03-01 10:00:00.1234567') RETURNING *",
        "INSERT INTO t VALUES (2, '1969-12-31 23:59:59.9995', '1969-12-31 23:59:59.4', \
         'infinity'), (3, 'infinity', '-infinity', NULL)",
        "UPDATE t SET a = '2024-03-01 10:00:00.0004' WHERE k = 3 RETURNING a",
        "INSERT INTO t VALUES (1, '2024-03-01 10:00:00.9999', NULL, NULL) \
         ON CONFLICT (k) DO UPDATE SET a = EXCLUDED.a RETURNING a",
        "SELECT * FROM t ORDER BY k",
        "SELECT k FROM t WHERE a = '2024-03-01 10:00:01'",
        "SELECT attname::text, atttypmod::int, format_type(atttypid, atttypmod) \
         FROM pg_attribute WHERE attrelid = 't'::regclass AND attnum IN (2, 3) ORDER BY attnum",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// NUMERIC(p,s) columns and decimal literals are exact `numeric`s: written values are
/// rounded to the column's scale (half away from zero) and refused past its precision,
/// compared by value, summed exactly; `sum(bigint)` and `avg` of integers are numerics
/// that do not overflow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn numerics_are_exact() {
    let differences = compare(&[
        &[
            "CREATE TABLE t (k BIGINT PRIMARY KEY, price NUMERIC(10,2), qty NUMERIC(5), \
             d DOUBLE PRECISION)",
            "INSERT INTO t VALUES (1, 1.5, 3, 0.5), (2, '2.255', 4.5, 1), \
             (3, 12345678.994, -2, 2), (4, NULL, NULL, NULL) RETURNING *",
            "INSERT INTO t VALUES (5, 123456789.5, 1, 1)",
            "INSERT INTO t VALUES (6, 'abc', 1, 1)",
            "INSERT INTO t VALUES (7, -0.005, 99999, 1) RETURNING price, qty",
            "INSERT INTO t VALUES (8, 1, 100000, 1)",
            "INSERT INTO t VALUES (9, true, 1, 1)",
            "SELECT * FROM t ORDER BY k",
            "SELECT k, price FROM t WHERE price > 2 ORDER BY k",
            "SELECT k FROM t WHERE price = 1.5",
            "SELECT k FROM t WHERE price = '2.26'",
            "SELECT k FROM t WHERE price = 1.505",
            "SELECT k FROM t WHERE price IN (1.5, 2.26) ORDER BY k",
            "SELECT k FROM t WHERE price BETWEEN 1 AND 3 ORDER BY k",
            "SELECT sum(price), max(price), min(qty), count(price) FROM t",
            "SELECT price * 2, price + 0.001, price - 1, -price, price::text, \
             price::float8, price::int FROM t WHERE k = 1",
            "SELECT k, price FROM t ORDER BY price DESC NULLS LAST, k",
            "SELECT ceil(price), floor(price), trunc(price), round(price, 1), abs(price), \
             price::bigint FROM t WHERE k IN (3, 7) ORDER BY k",
            "UPDATE t SET price = price + 1 WHERE k = 1 RETURNING price",
            "UPDATE t SET price = 7.777 WHERE k = 2 RETURNING *",
            "UPDATE t SET price = 99999999.999 WHERE k = 2",
            "INSERT INTO t VALUES (2, 3.333, 1, 1) ON CONFLICT (k) DO UPDATE \
             SET price = EXCLUDED.price RETURNING price",
            "INSERT INTO t VALUES (2, 0.005, 2, 1) ON CONFLICT (k) DO UPDATE \
             SET price = t.price + EXCLUDED.price, qty = t.qty * 2 - 1 RETURNING price, qty",
            "SELECT price, qty FROM t WHERE k IN (1, 2) ORDER BY k",
            "SELECT atttypmod::int, format_type(atttypid, atttypmod) FROM pg_attribute \
             WHERE attrelid = 't'::regclass AND attnum > 0 ORDER BY attnum",
            "SELECT numeric_precision::int, numeric_scale::int FROM information_schema.columns \
             WHERE table_name = 't' ORDER BY ordinal_position",
        ],
        &[
            "SELECT 0.1 + 0.2, 1.50, -1.25, 1e3, 1.5e-3, pg_typeof(1.5)::text",
            "SELECT 2.5::numeric(5,2), 2.567::numeric(3,1), 12.5::int, 13.5::numeric::int, \
             '1.5'::numeric, 5::numeric, 1.005::numeric(4,2)",
            "SELECT 99999::numeric(3,1)",
            "SELECT 'x1'::numeric",
            "SELECT 1.5 > 1, 1.5 = 1.50, 2 * 1.25, 0.1::float8 + 0.2",
            "CREATE TABLE u (k BIGINT PRIMARY KEY, a BIGINT, i INTEGER)",
            "INSERT INTO u VALUES (1, 9223372036854775807, 1), (2, 9223372036854775807, 2), \
             (3, -5, 2)",
            "SELECT sum(a), pg_typeof(sum(a))::text, sum(i), pg_typeof(sum(i))::text FROM u",
            "SELECT avg(i), pg_typeof(avg(i))::text FROM u",
            "SELECT k, sum(a) FROM u GROUP BY k ORDER BY k",
            "SELECT avg(a) FROM u WHERE k = 3",
            "SELECT sum(a) + 1 FROM u",
            "SELECT 123456789012345678901234567890123456789012 + x FROM (VALUES (1)) v(x)",
            "SELECT sum(x) FROM (VALUES (99999999999999999999999999999999999999.0), \
             (99999999999999999999999999999999999999.0)) v(x)",
        ],
    ])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A column's DEFAULT fills it wherever an INSERT leaves it out or says DEFAULT: VALUES
/// with and without a column list, INSERT ... SELECT, DEFAULT VALUES, ON CONFLICT;
/// constants and expressions (`now()`, `gen_random_uuid()`), a default that cannot be
/// stored is refused when declared; SET and DROP DEFAULT change what later INSERTs get.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_fill_what_an_insert_leaves_out() {
    let differences = compare(&[&[
        "CREATE TABLE t (id BIGINT PRIMARY KEY, flag BOOLEAN DEFAULT true, \
         n INTEGER DEFAULT 5, s TEXT DEFAULT 'x' || 'y', at TIMESTAMPTZ DEFAULT now(), \
         u UUID DEFAULT gen_random_uuid(), price NUMERIC(6,2) DEFAULT 1.005)",
        "INSERT INTO t (id) VALUES (1) \
         RETURNING id, flag, n, s, at IS NOT NULL, u IS NOT NULL, price",
        "INSERT INTO t VALUES (2, false, DEFAULT, DEFAULT) \
         RETURNING id, flag, n, s, at IS NOT NULL, price",
        "INSERT INTO t (id, n) VALUES (3, NULL), (4, DEFAULT) RETURNING n, flag",
        "INSERT INTO t (id) SELECT 5 RETURNING id, flag, s",
        "INSERT INTO t (id, s) VALUES (5, 'a') ON CONFLICT (id) DO UPDATE \
         SET s = EXCLUDED.s || EXCLUDED.n::text RETURNING id, s, n",
        "SELECT id, flag, n, s, price FROM t ORDER BY id",
        "SELECT count(DISTINCT u), count(at) FROM t",
        "ALTER TABLE t ALTER COLUMN n SET DEFAULT 7",
        "INSERT INTO t (id) VALUES (6) RETURNING n",
        "ALTER TABLE t ALTER COLUMN n DROP DEFAULT",
        "INSERT INTO t (id) VALUES (7) RETURNING n",
        "ALTER TABLE t ALTER COLUMN nope SET DEFAULT 1",
        "SELECT column_name::text FROM information_schema.columns \
         WHERE table_name = 't' AND column_default IS NOT NULL ORDER BY ordinal_position",
        "SELECT attname::text, atthasdef FROM pg_attribute \
         WHERE attrelid = 't'::regclass AND attnum > 0 ORDER BY attnum",
        "CREATE TABLE u (id INTEGER PRIMARY KEY, a INTEGER DEFAULT 'abc')",
        "CREATE TABLE u (id INTEGER PRIMARY KEY, a INTEGER DEFAULT id)",
        "CREATE TABLE u (id INTEGER PRIMARY KEY, a INTEGER DEFAULT (SELECT 1))",
        "CREATE TABLE u (id SERIAL PRIMARY KEY, name TEXT DEFAULT 'anon', \
         n BIGINT NOT NULL DEFAULT 0)",
        "INSERT INTO u DEFAULT VALUES RETURNING *",
        "INSERT INTO u DEFAULT VALUES RETURNING *",
        "INSERT INTO u (name) VALUES (DEFAULT), ('b') RETURNING *",
        "INSERT INTO u VALUES (10) RETURNING *",
        "SELECT * FROM u ORDER BY id",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// `x [NOT] IN (SELECT ...)` in a select list gives PostgreSQL's three-valued answer:
/// NULL where x is NULL or where no row matches and one is NULL, false over no rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_subqueries_in_a_select_list_are_three_valued() {
    let differences = compare(&[&[
        "CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER)",
        "CREATE TABLE u (id INTEGER PRIMARY KEY, y INTEGER)",
        "INSERT INTO t VALUES (1, 1), (2, 2), (3, NULL), (4, 5)",
        "INSERT INTO u VALUES (1, 1), (2, NULL), (3, 2)",
        "SELECT 1 IN (SELECT y FROM u), 7 IN (SELECT y FROM u), NULL IN (SELECT y FROM u), \
         1 IN (SELECT y FROM u WHERE false)",
        "SELECT id, x IN (SELECT y FROM u) AS i, x NOT IN (SELECT y FROM u) AS n \
         FROM t ORDER BY id",
        "SELECT id, x IN (SELECT y FROM u WHERE u.id = t.id) FROM t ORDER BY id",
        "SELECT id, x IN (SELECT y + 0 FROM u WHERE y IS NOT NULL) FROM t ORDER BY id",
        "SELECT id, CASE WHEN x IN (SELECT y FROM u) THEN 'yes' ELSE 'no' END FROM t \
         ORDER BY id",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Correlated subqueries of any comparison run as PostgreSQL's SubPlans: in the select
/// list, WHERE, an aggregate's argument and ORDER BY; nested two deep; a single value
/// over several rows is 21000, over none is NULL; result types are PostgreSQL's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn correlated_subqueries_of_any_comparison() {
    let differences = compare(&[&[
        "CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER, s TEXT)",
        "CREATE TABLE u (id INTEGER PRIMARY KEY, y INTEGER, n NUMERIC(6,2))",
        "INSERT INTO t VALUES (1, 1, 'a'), (2, 2, 'b'), (3, NULL, 'c'), (4, 5, NULL)",
        "INSERT INTO u VALUES (1, 1, 1.50), (2, NULL, NULL), (3, 2, 2.25), (4, 7, 0.10)",
        "SELECT id, (SELECT count(*) FROM u WHERE u.y < t.x) AS c, \
         (SELECT sum(n) FROM u WHERE u.y <= t.x) AS s, \
         (SELECT max(u.id) FROM u WHERE u.y <> t.x) AS m FROM t ORDER BY id",
        "SELECT id, EXISTS (SELECT 1 FROM u WHERE u.y > t.x) AS e, \
         NOT EXISTS (SELECT 1 FROM u WHERE u.y > t.x) AS ne FROM t ORDER BY id",
        "SELECT id FROM t WHERE x > (SELECT avg(y) FROM u WHERE u.id <> t.id) ORDER BY id",
        "SELECT id, (SELECT u.n FROM u WHERE u.id = t.id + 1) FROM t ORDER BY id",
        "SELECT id, (SELECT u.y FROM u WHERE u.y > t.x ORDER BY u.y LIMIT 1) FROM t ORDER BY id",
        "SELECT id, (SELECT u.y FROM u WHERE u.y < t.x) FROM t ORDER BY id",
        "SELECT sum((SELECT count(*) FROM u WHERE u.y < t.x)) FROM t",
        "SELECT id FROM t ORDER BY (SELECT count(*) FROM u WHERE u.y >= t.x) DESC, id",
        "SELECT id, (SELECT count(*) FROM u WHERE u.y < t.x AND EXISTS \
         (SELECT 1 FROM u AS v WHERE v.id > u.id AND v.y <> t.x)) FROM t ORDER BY id",
        "SELECT count(*), (SELECT count(*) FROM u WHERE y > 1) FROM t",
        "SELECT 1 = 1 = true",
        // NOT IN correlated, under OR, and IN under NOT: three-valued over NULLs.
        "SELECT id FROM t WHERE x NOT IN (SELECT y FROM u WHERE u.id <> t.id) ORDER BY id",
        "SELECT id FROM t WHERE id = 1 OR x NOT IN (SELECT y FROM u) ORDER BY id",
        "SELECT id FROM t WHERE NOT (id = 2 OR x IN (SELECT y FROM u WHERE u.id > t.id)) \
         ORDER BY id",
        "SELECT id FROM t WHERE (x NOT IN (SELECT y FROM u WHERE u.id < t.id)) IS NULL \
         ORDER BY id",
        "SELECT id FROM t WHERE x::bigint NOT IN (SELECT n FROM u WHERE u.id < t.id) ORDER BY id",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// json and jsonb columns: jsonb's normal form, json's kept input, the operators and
/// functions applications use, casts, equality by value, and the errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_and_jsonb_as_postgresql_has_them() {
    let differences = compare(&[&[
        "CREATE TABLE t (id INTEGER PRIMARY KEY, a JSONB, b JSON)",
        "INSERT INTO t VALUES (1, '{\"b\":1, \"a\" : [1, 2.50, 1e2, -0], \"s\": \"x\\u00e9\", \"b\":{}}', \
         ' {\"x\" :  [1,  2], \"x\": 3} '), (2, NULL, NULL), (3, '[1, \"a\", null]', '[]'), \
         (4, '{\"a\": 1.0, \"n\": null}', '{\"a\":1}'), (5, '\"s\"', '\"s\"'), (6, '{\"a\": 1}', 'null')",
        "SELECT * FROM t ORDER BY id",
        "SELECT id, a -> 'a', a ->> 's', b -> 'x', b ->> 'x', a -> 'a' -> 1, a -> 1, a -> -1 \
         FROM t ORDER BY id",
        "SELECT id, a #> '{a,1}', a #>> '{a,0}', a #> '{}', b #>> '{x}' FROM t ORDER BY id",
        "SELECT id FROM t WHERE a @> '{\"s\": \"x\\u00e9\"}' ORDER BY id",
        "SELECT id, a @> '[1]', a <@ '{\"a\": 1, \"b\": 2}', a ? 'a', a ? 's' FROM t ORDER BY id",
        "SELECT id FROM t WHERE a = '{\"a\": 1}' ORDER BY id",
        "SELECT id FROM t WHERE a <> '{\"a\": 1}' ORDER BY id",
        "SELECT t1.id, t2.id FROM t t1 JOIN t t2 ON t1.a = t2.a ORDER BY 1, 2",
        "SELECT '{\"a\":1}'::jsonb || '{\"b\":2}', '[1]'::jsonb || '2', '{\"a\":1}'::jsonb || '[2]', \
         '{\"a\":1, \"b\":2}'::jsonb - 'a', '[1,2,3]'::jsonb - 1, '[\"a\",\"b\"]'::jsonb - 'a'",
        "SELECT jsonb_build_object('a', 1, 'b', 'x'::text, 'c', '{\"z\":1}'::jsonb, 'e', 1.50, 'f', true, \
         'g', NULL, 'h', '2024-01-01 10:00:00.5+00'::timestamptz, 'i', 1.5::float8, \
         'j', '2024-01-01 10:00'::timestamp, 'k', DATE '2024-02-03')",
        "SELECT json_build_object('a', 1, 'b', 'x'), jsonb_build_array(1, 'a', NULL), to_jsonb('x'::text)",
        "SELECT jsonb_agg(id ORDER BY id), json_agg(a ORDER BY id) FROM t",
        "SELECT jsonb_agg(a) FROM t WHERE id > 100",
        "SELECT id, jsonb_typeof(a), json_typeof(b), jsonb_array_length(a -> 'a') FROM t \
         WHERE id IN (1, 2, 4) ORDER BY id",
        "SELECT jsonb_array_length('{}')",
        "SELECT id, coalesce(a, '{}'), a::text, b::text, a::json, b::jsonb FROM t ORDER BY id",
        "SELECT count(*) FROM t WHERE a -> 'a' = '1'",
        "UPDATE t SET a = a || '{\"u\": true}' WHERE id = 6",
        "UPDATE t SET b = '{\"q\": [1]}' WHERE id = 5",
        "SELECT a, b FROM t WHERE id IN (5, 6) ORDER BY id",
        "SELECT '{bad'::jsonb",
        "SELECT '[1,]'::json",
        "SELECT '\"\\u0000\"'::jsonb",
        "INSERT INTO t VALUES (7, '{bad', NULL)",
        "SELECT b FROM t WHERE b = b",
        "SELECT jsonb_build_object('a')",
        "SELECT jsonb_build_object(NULL, 1)",
        "SELECT '{\"a\":1}' -> 'a'",
        "SELECT '{\"a\":1}'::jsonb = '{\"a\":1.0}', '[1, 2]'::jsonb <> '[2, 1]'",
        "SELECT id, a ?| '{a,s}', a ?& '{a,s}', a ?| ARRAY['n'], a #- '{a,0}', a #- '{s}' \
         FROM t WHERE id IN (1, 4) ORDER BY id",
        "SELECT a #- '{a,0}' FROM t WHERE id = 3",
        "SELECT '{}'::json ?| '{a}'",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// time and interval columns and results: PostgreSQL's text forms (`1 day 02:00:00`,
/// `-1 days +02:00:00`, `10:00:01.5`), arithmetic with timestamps, and comparison and
/// ORDER BY by length (`1 mon` equals `30 days`), where Arrow compares field by field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_and_interval_as_postgresql_has_them() {
    let differences = compare(&[&[
        "CREATE TABLE t (id INTEGER PRIMARY KEY, c TIME, d INTERVAL, ts TIMESTAMP)",
        "INSERT INTO t VALUES (1, '10:00:01.5', '1 day 2 hours', '2024-01-01 10:00'), \
         (2, '23:59', '-1 mon', NULL), (3, NULL, NULL, '2024-03-01'), \
         (4, '00:00', '40 days', '2024-02-01'), (5, '24:00:00', '-1 days 2 hours', NULL), \
         (6, '12:00', '30 days', NULL), (7, '12:00', '1 mon', NULL)",
        "SELECT * FROM t ORDER BY id",
        "SELECT * FROM t WHERE id = 1",
        "SELECT id, c, d FROM t WHERE c > '12:00' ORDER BY id",
        "SELECT id FROM t WHERE d = '1 day 02:00:00' ORDER BY id",
        "SELECT id FROM t WHERE d = interval '1 mon' ORDER BY id",
        "SELECT id FROM t WHERE d > interval '1 mon' ORDER BY id",
        "SELECT id, ts + d, c + interval '1 hour', -d, ts - d FROM t ORDER BY id",
        "SELECT id, extract(hour from c), extract(second from c), date_part('minute', c), \
         date_trunc('hour', ts), extract(epoch from ts) FROM t WHERE id <> 5 ORDER BY id",
        "SELECT id FROM t ORDER BY d, id",
        "SELECT id FROM t ORDER BY c DESC, id",
        "SELECT sum(d) FROM t",
        "SELECT c::text, d::text FROM t ORDER BY id",
        "SELECT interval '1 day 2 hours', interval '1 mon' = interval '30 days', \
         interval '1 mon' < interval '40 days', timestamp '2024-01-01' - timestamp '2023-12-01 10:00', \
         time '10:00:01.5', '1 year 2 months'::interval, '1.5 days'::interval",
        "SELECT x FROM (VALUES (interval '1 mon'), (interval '40 days'), (interval '1 day')) v(x) \
         ORDER BY x",
        "UPDATE t SET d = d + interval '1 day' WHERE id = 1",
        "UPDATE t SET c = '25:00' WHERE id = 1",
        "INSERT INTO t VALUES (8, 'xx', NULL, NULL)",
        "INSERT INTO t VALUES (8, NULL, 'fortnight', NULL)",
        "SELECT c, d FROM t WHERE id = 1",
        "SELECT interval '1 day' * 2, 2 * interval '1 mon 1 day', interval '1 day' / 3, \
         interval '1 mon' * 1.5, interval '1 year' / 7, interval '1 mon' / 7, \
         interval '-1 day 3 hours' * 2.5",
        "SELECT id, d * 2, d / 4 FROM t ORDER BY id",
        "SELECT interval '1 day' / 0",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Array columns of the scalar types: PostgreSQL's literal forms in and out, NULL
/// elements, subscripts, ANY, @>, comparison with a quoted literal, updates through
/// array functions, malformed input.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_columns_as_postgresql_has_them() {
    let differences = compare(&[&[
        "CREATE TABLE t (id INTEGER PRIMARY KEY, tags TEXT[], ns INTEGER[], fs FLOAT8[], \
         bs BOOLEAN[], bigs BIGINT[])",
        "INSERT INTO t VALUES (1, '{a,\"b c\",NULL,\"q,r\"}', '{1,2,3}', '{1.5,NaN,-0.25}', \
         '{t,f}', '{9223372036854775807}'), (3, NULL, '{}', '{}', NULL, NULL)",
        "INSERT INTO t VALUES (2, ARRAY['x'], ARRAY[5], NULL, '{}', ARRAY[-1])",
        "SELECT * FROM t ORDER BY id",
        "SELECT * FROM t WHERE id = 1",
        "SELECT id, tags[1], ns[2], array_length(ns, 1), cardinality(ns) FROM t ORDER BY id",
        "SELECT id FROM t WHERE 'a' = ANY(tags) ORDER BY id",
        "SELECT id FROM t WHERE ns @> ARRAY[2] ORDER BY id",
        "UPDATE t SET tags = array_append(tags, 'z') WHERE id = 2",
        "UPDATE t SET ns = '{7,8}' WHERE id = 3",
        "SELECT id, tags, ns FROM t ORDER BY id",
        "SELECT id FROM t WHERE tags = '{x,z}'",
        "SELECT tags::text, ns::text FROM t ORDER BY id",
        "SELECT column_name::text, data_type::text, udt_name::text FROM information_schema.columns \
         WHERE table_name = 't' ORDER BY ordinal_position",
        "INSERT INTO t VALUES (4, '{a', NULL, NULL, NULL, NULL)",
        "INSERT INTO t VALUES (5, NULL, '{x}', NULL, NULL, NULL)",
        "INSERT INTO t VALUES (6, NULL, '{99999999999}', NULL, NULL, NULL)",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Sequences are relations, as psql's `\\ds`, pg_dump and Django's sequence reset find
/// them: a `pg_class` row of kind `S` and a `pg_sequence` row, for CREATE SEQUENCE and
/// for a SERIAL column's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequences_are_relations_in_the_catalog() {
    let differences = compare(&[&[
        "CREATE SEQUENCE s START 5 INCREMENT 2",
        "CREATE TABLE t (id SERIAL PRIMARY KEY, v TEXT)",
        "SELECT relname::text, relkind::text, relnamespace::int8 FROM pg_class \
         WHERE relname IN ('s', 't_id_seq') ORDER BY 1",
        "SELECT seqtypid::regtype::text, seqstart, seqincrement, seqmax, seqmin, seqcache, seqcycle \
         FROM pg_sequence WHERE seqrelid IN ('s'::regclass, 't_id_seq'::regclass) ORDER BY seqstart",
        "SELECT 's'::regclass::oid = (SELECT oid FROM pg_class WHERE relname = 's')",
        "SELECT nextval('s'), nextval('s')",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// VALUES rows holding a subquery, in INSERT and in queries (they failed with an
/// internal error: DataFusion computes VALUES before any subquery runs), and an INSERT
/// without a column list whose rows are shorter than the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_rows_may_hold_subqueries() {
    let differences = compare(&[&[
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER, s TEXT)",
        "INSERT INTO t VALUES (1, 5, 'x')",
        "INSERT INTO t (id, v) VALUES (2, (SELECT v FROM t WHERE id = 1)), (3, NULL) RETURNING *",
        "SELECT * FROM t ORDER BY id",
        "VALUES ((SELECT max(v) FROM t), 'a'), (2, 'b')",
        "SELECT * FROM (VALUES (2::int, (SELECT max(v) FROM t)), (3, 1)) x(a, b) ORDER BY a",
        "INSERT INTO t VALUES (4, (SELECT v FROM t))",
        "INSERT INTO t VALUES (5, EXISTS (SELECT 1 FROM t WHERE v > 4)::int, 'e')",
        // Without a column list, a shorter query fills the first columns.
        "INSERT INTO t SELECT 6, 1",
        "INSERT INTO t VALUES (7, (SELECT min(v) FROM t))",
        "INSERT INTO t SELECT 8, 1, 'a', 'b'",
        "SELECT * FROM t ORDER BY id",
        // A select list's or VALUES list's integer literal is an `integer` where it fits,
        // also below the top and in a UNION (it was a bigint, which node-postgres returns
        // as a string); a wider branch or row makes the column a bigint.
        "SELECT * FROM (SELECT 1 AS a, 3000000000 AS b, 1 + 1 AS c) s",
        "WITH w AS (SELECT 2 AS n) SELECT n, n * 2 FROM w",
        "SELECT 2147483647 + x FROM (SELECT 1 AS x) s",
        "SELECT * FROM (VALUES (1), (2)) v(x)",
        "SELECT 1 UNION ALL SELECT 2",
        "SELECT 1 UNION SELECT 3000000000 ORDER BY 1",
        "SELECT * FROM (VALUES (1), (3000000000), (NULL)) v(x) ORDER BY x",
        "VALUES (1, 'a'), (NULL, 'b')",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// `to_char` of numbers with PostgreSQL's numeric patterns (it was refused): digit
/// positions, leading zeros and blanks, groups, rounding, overflow as `#`, the sign
/// patterns, fill mode, ordinals; of integers and floats too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn number_to_char_as_postgresql_has_it() {
    let differences = compare(&[&[
        "SELECT '[' || to_char(x, f) || ']', f FROM (VALUES (1.5,'9.9'),(-1.5,'9.9'),(-12,'9999'),\
         (12,'FM9999'),(-12,'FM9999'),(123,'99'),(1,'FM9.99'),(1234567.891,'9,999,999.99'),\
         (1234567.891,'FM9,999,999.00'),(5,'0000'),(-5,'0000'),(0.5,'9.9'),(0.5,'0.9'),(0,'9'),\
         (0,'FM9'),(12,'S999'),(-12,'S999'),(12,'999S'),(-12,'999MI'),(12,'999MI'),(12,'PL999'),\
         (-12,'999PR'),(12,'999PR'),(1.25,'9.9'),(-1.25,'9.9'),(12.3,'99D99'),(1234,'9G999'),\
         (12,'99th'),(3,'FM9th'),(2.5,'FM0.00'),(1234.5,'FM999,990.00'),(0.05,'FM990.00'),\
         (-0.05,'FM990.0'),(999.99,'999'),(12345,'9,999'),(12,'SG999'),(-12,'FMS999'),\
         (7,'\"n=\"9'),(-0.4,'9'),(123.456,'999.999'),(0.001,'0.99'),(12,'FMPL999'),(12,'9 9'),\
         (-1234,'9,999'),(-1.5,'FM999.99MI')) v(x, f)",
        "SELECT to_char(1.5::float8, '9.99'), to_char(42::int, '999'), to_char(0.1::float4, '0.999'), \
         to_char(1234::bigint, 'FM9,999'), to_char(NULL::numeric, '9')",
        "SELECT to_char(1e20::float8, '9.99EEEE'), to_char(-0.00012, '9.9EEEE'), \
         to_char(1234::bigint, 'RN'), to_char(4, 'FMrn'), to_char(0, 'RN')",
        "SELECT to_char(1.5, 'FM9.99EEEE')",
        "SELECT to_char(12.34, '99V9'), to_char(-12.34, '99V99'), to_char(12.34, 'FM99V999'), \
         to_char(5, '9V99')",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Arrays of dates, timestamps and uuids as columns, literals and casts, and the text
/// of any array or float (Arrow's cast wrote `ARRAY[1,2]::text` as `[1, 2]` and
/// `2.0::float8::text` as `2.0`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn date_time_and_uuid_arrays_as_postgresql_has_them() {
    let differences = compare(&[&[
        "CREATE TABLE t (id int PRIMARY KEY, d date[], ts timestamp[], u uuid[])",
        "INSERT INTO t VALUES (1, '{2024-03-01,2024-02-29}', \
         '{\"2024-03-01 10:00\",\"2024-03-01 10:00:00.5\"}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}')",
        "INSERT INTO t VALUES (2, ARRAY[date '2024-01-01', NULL], ARRAY[timestamp '2024-01-01 00:00'], \
         ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12'::uuid])",
        "INSERT INTO t VALUES (3, '{}', NULL, '{}')",
        "INSERT INTO t VALUES (4, '{2024-13-01}', NULL, NULL)",
        "INSERT INTO t VALUES (5, NULL, NULL, '{zz}')",
        "SELECT * FROM t ORDER BY id",
        "SELECT * FROM t WHERE id = 1",
        "SELECT id, d[1], ts[2], u[1], array_length(d, 1), cardinality(u) FROM t ORDER BY id",
        "SELECT id FROM t WHERE d[1] = '2024-03-01'",
        "SELECT id, d::text, ts::text, u::text FROM t ORDER BY id",
        "SELECT d::text, ts::text FROM t WHERE id = 1",
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute \
         WHERE attrelid = 't'::regclass AND attnum > 1 ORDER BY attnum",
        "SELECT data_type::text, udt_name::text FROM information_schema.columns \
         WHERE table_name = 't' ORDER BY ordinal_position",
        "UPDATE t SET d = '{2025-01-01}' WHERE id = 3",
        "SELECT d FROM t WHERE id = 3",
        "SELECT '{2024-01-01}'::date[], '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'::uuid[], \
         '{\"2024-01-01 10:00\"}'::timestamp[], '{}'::uuid[]",
        "VALUES (timestamp '2024-01-01 00:00'), (timestamp '2024-01-02 10:00:05.5')",
        "SELECT ARRAY[1,2]::text, ARRAY['a b', NULL, 'c']::text, ARRAY[true,false]::text, \
         ARRAY[1.5::float8, 2]::text, ARRAY[timestamptz '2024-01-01 10:00+00']::text, \
         '{}'::int[]::text, ARRAY[ARRAY[1,2],ARRAY[3,4]]::text",
        "SELECT 2.0::float8::text, 1e20::float8::text, 0.1::float4::text, x::text \
         FROM (VALUES (2.5::float8), (1e-7::float8)) v(x)",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// TRUNCATE (it was refused): emptied at once outside a block, as the block's own
/// deletes inside one (ROLLBACK brings the rows back), `RESTART IDENTITY` restarting the
/// serial column's sequence, a list naming a table twice, a missing table 42P01.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncate_empties_tables_as_postgresql_does() {
    let differences = compare(&[&[
        "CREATE TABLE t (id SERIAL PRIMARY KEY, v TEXT)",
        "CREATE TABLE u (id INTEGER PRIMARY KEY)",
        "INSERT INTO t (v) VALUES ('a'), ('b'), ('c')",
        "INSERT INTO u VALUES (1), (2)",
        "TRUNCATE t",
        "SELECT count(*) FROM t",
        "INSERT INTO t (v) VALUES ('d') RETURNING id",
        "TRUNCATE TABLE ONLY t, u RESTART IDENTITY CASCADE",
        "SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM u)",
        "INSERT INTO t (v) VALUES ('e') RETURNING id",
        "BEGIN",
        "TRUNCATE t",
        "SELECT count(*) FROM t",
        "ROLLBACK",
        "SELECT * FROM t",
        "BEGIN",
        "TRUNCATE t",
        "INSERT INTO t (v) VALUES ('f')",
        "COMMIT",
        "SELECT v FROM t",
        "TRUNCATE nope",
        "TRUNCATE TABLE IF EXISTS t",
        "TRUNCATE t, t CONTINUE IDENTITY RESTRICT",
        "SELECT count(*) FROM t",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// `generate_series` of integer literals is a series of integers named after the
/// function, and `ARRAY[1, 2]` an `integer[]`, as PostgreSQL types them (both were
/// bigints, which node-postgres returns as strings; the series' column was `value`);
/// a multidimensional array prints as `{{1,2}}`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn integer_series_and_arrays_are_integers() {
    let differences = compare(&[&[
        "SELECT * FROM generate_series(1,3)",
        "SELECT pg_typeof(g)::text, g FROM generate_series(1,2) g",
        "SELECT x, pg_typeof(x)::text FROM generate_series(-2,2,2) AS g(x)",
        "SELECT pg_typeof(generate_series)::text FROM generate_series(1, 3000000000, 2000000000)",
        "SELECT sum(g) FROM generate_series(1, 100) g",
        "SELECT t.id, s FROM (VALUES (1)) t(id) CROSS JOIN generate_series(1, 2) s ORDER BY 2",
        "SELECT ARRAY[1,2], pg_typeof(ARRAY[1,2])::text, pg_typeof(ARRAY[1, 3000000000])::text, \
         pg_typeof(ARRAY[1, NULL])::text",
        "SELECT a, pg_typeof(a)::text FROM (SELECT ARRAY[1,2] AS a) s",
        "SELECT ARRAY[ARRAY[1,2],ARRAY[3,4]]::text, ARRAY[ARRAY[true],ARRAY[false]]::text, \
         ARRAY[ARRAY[2.0::float8]]::text",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// `to_char` with PostgreSQL's patterns (DataFusion's read chrono's `%Y` and returned
/// `to_char(ts, 'YYYY')` as `YYYY`), `AT TIME ZONE` both ways (DataFusion relabelled a
/// timestamptz's zone and left the instant), `age` and `make_interval`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn date_and_time_functions_as_postgresql_has_them() {
    let differences = compare(&[&[
        "CREATE TABLE ev (id int PRIMARY KEY, at timestamptz, d date, ts timestamp)",
        "INSERT INTO ev VALUES (1, '2024-03-01 10:00+00', '2024-02-29', '2024-12-31 23:59:59.999'), \
         (2, NULL, NULL, NULL), (3, '1999-01-01 00:00:00+00', '2000-01-01', '2000-01-01 12:00')",
        "SELECT id, to_char(at, 'YYYY-MM-DD HH24:MI:SS TZ OF'), to_char(d, 'FMMonth DDth, FMDay'), \
         to_char(ts, 'HH12:MI:SS.MS PM') FROM ev ORDER BY id",
        "SELECT to_char(d, 'Day Mon dy IYYY-IW WW D ID DDD J Q RM CC \"text\" Y,YYY YY Y'), \
         to_char(ts, 'SSSS FF3 US A.M. p.m. AD W hh mi') FROM ev WHERE id = 3",
        "SELECT id FROM ev WHERE to_char(at, 'YYYY') = '2024'",
        "SELECT to_char(d, 'TMMonth|TMDay|TMMON|tmmonth|TMDD') FROM ev ORDER BY id",
        "SELECT id, at AT TIME ZONE 'America/New_York', at AT TIME ZONE 'europe/berlin', \
         at AT TIME ZONE '+02', at AT TIME ZONE 'EST', ts AT TIME ZONE 'Asia/Tokyo', \
         d AT TIME ZONE 'Asia/Kolkata' FROM ev ORDER BY id",
        "SELECT timestamp '2024-03-31 02:30' AT TIME ZONE 'Europe/Berlin', \
         timestamp '2024-10-27 02:30' AT TIME ZONE 'Europe/Berlin'",
        "SELECT '2024-03-01 10:00' AT TIME ZONE 'Asia/Tokyo', now() AT TIME ZONE NULL",
        "SELECT now() AT TIME ZONE 'Nowhere/Foo'",
        "SELECT id, age(ts, at::timestamp), age(d, date '1999-12-31') FROM ev ORDER BY id",
        "SELECT age(timestamp '2024-03-01', timestamp '2023-01-15'), \
         age(timestamp '2023-01-15', timestamp '2024-03-01 10:00'), \
         age(timestamp '2024-03-31 10:00', timestamp '2024-02-29 12:30:00.5')",
        "SELECT make_interval(days => 3), make_interval(0, 0, 0, 3), \
         make_interval(1, 2, 1, 1, 5, 6, 7.5), make_interval(secs => 1.25), \
         make_interval(hours => -3), make_interval(), make_interval(days => id) FROM ev ORDER BY id",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// `UNION ALL` returns its branches in the order written, as PostgreSQL's Append does,
/// also under a LIMIT, inside an aggregate and when an INSERT hands out serial keys.
/// DataFusion merged a union's branches as they finished: a scan written first came
/// after a constant written second (`SELECT 1 UNION ALL SELECT 2` was once `2, 1`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn union_all_keeps_the_order_of_its_branches() {
    let differences = compare(&[&[
        "CREATE TABLE big (id INTEGER PRIMARY KEY, v TEXT)",
        "INSERT INTO big SELECT g, 'row ' || g FROM generate_series(1, 3000) g",
        "CREATE TABLE log (n SERIAL PRIMARY KEY, v TEXT)",
        "SELECT count(*) FROM (SELECT v FROM big UNION ALL SELECT 'last') u",
        "SELECT v FROM (SELECT v FROM big WHERE id > 2990 UNION ALL SELECT 'last') u",
        "SELECT 'first' UNION ALL SELECT v FROM big WHERE id < 3 UNION ALL SELECT 'last'",
        "SELECT * FROM (SELECT v FROM big UNION ALL SELECT 'last') u LIMIT 3",
        "SELECT string_agg(v, ',') FROM (SELECT v FROM big WHERE id < 4 \
         UNION ALL SELECT 'b' UNION ALL SELECT 'a') u",
        "INSERT INTO log (v) SELECT v FROM big WHERE id > 2997 UNION ALL SELECT 'tail'",
        "SELECT * FROM log ORDER BY n",
        "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// DDL in a transaction block rolls back with it, as every migration tool assumes: a
/// created table is gone, an altered table has its columns, NOT NULL and defaults back,
/// also to a savepoint; an ALTER TABLE whose second operation fails changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ddl_in_a_block_rolls_back() {
    let differences = compare(&[&[
        "CREATE TABLE t (a INTEGER PRIMARY KEY, n INTEGER)",
        "INSERT INTO t VALUES (1, 10)",
        "BEGIN",
        "ALTER TABLE t ADD COLUMN b TEXT",
        "ALTER TABLE t ALTER COLUMN n SET NOT NULL",
        "ALTER TABLE t ALTER COLUMN n SET DEFAULT 5",
        "CREATE TABLE u (k BIGINT PRIMARY KEY)",
        "INSERT INTO t (a, b) VALUES (2, 'x')",
        "SELECT * FROM t ORDER BY a",
        "ROLLBACK",
        "SELECT * FROM t ORDER BY a",
        "SELECT * FROM u",
        "INSERT INTO t (a) VALUES (3)",
        "SELECT * FROM t ORDER BY a",
        "SELECT column_name::text, is_nullable::text, column_default::text \
         FROM information_schema.columns WHERE table_name = 't' ORDER BY ordinal_position",
        "BEGIN",
        "ALTER TABLE t ADD COLUMN c INTEGER",
        "SAVEPOINT s",
        "ALTER TABLE t ADD COLUMN d INTEGER",
        "ALTER TABLE t ALTER COLUMN c SET DEFAULT 7",
        "ROLLBACK TO SAVEPOINT s",
        "INSERT INTO t (a) VALUES (4)",
        "COMMIT",
        "SELECT * FROM t ORDER BY a",
        "ALTER TABLE t ADD COLUMN e INTEGER, ADD COLUMN a INTEGER",
        "SELECT * FROM t ORDER BY a",
        "BEGIN",
        "ALTER TABLE t ALTER COLUMN n DROP NOT NULL",
        "SELECT 1 / 0",
        "COMMIT",
        "INSERT INTO t (a, n) VALUES (5, NULL)",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// ALTER TABLE ... RENAME TO keeps the rows and the SERIAL's sequence, refuses a name
/// taken, and is undone with a rolled back block.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_table_keeps_rows_and_sequences() {
    let differences = compare(&[&[
        "CREATE TABLE t (id SERIAL PRIMARY KEY, v TEXT)",
        "INSERT INTO t (v) VALUES ('x')",
        "ALTER TABLE t RENAME TO u",
        "SELECT * FROM t",
        "INSERT INTO u (v) VALUES ('y')",
        "SELECT * FROM u ORDER BY id",
        "SELECT pg_get_serial_sequence('u', 'id')",
        "CREATE TABLE t (k INTEGER PRIMARY KEY)",
        "ALTER TABLE u RENAME TO t",
        "DROP TABLE t",
        "BEGIN",
        "ALTER TABLE u RENAME TO t",
        "SELECT count(*) FROM t",
        "ROLLBACK",
        "SELECT count(*) FROM u",
        "SELECT count(*) FROM t",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// SQL cursors: DECLARE in a block (or WITH HOLD outside one), FETCH forward by count,
/// NEXT and ALL (also without a direction or FROM: `FETCH c`), CLOSE; a cursor without HOLD ends with its block.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cursors_fetch_forward() {
    let differences = compare(&[&[
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)",
        "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, NULL)",
        "DECLARE c CURSOR FOR SELECT * FROM t",
        "BEGIN",
        "DECLARE c NO SCROLL CURSOR WITHOUT HOLD FOR SELECT id, v FROM t ORDER BY id",
        "FETCH FORWARD 2 FROM c",
        "FETCH NEXT FROM c",
        "FETCH 1 IN c",
        "FETCH ALL FROM c",
        "FETCH FORWARD 3 FROM c",
        "CLOSE c",
        "COMMIT",
        "BEGIN",
        "DECLARE d CURSOR FOR SELECT v || '!' AS w, id * 2 FROM t WHERE id > 2 ORDER BY id DESC",
        "FETCH 2 FROM d",
        "COMMIT",
        "FETCH 1 FROM d",
        // PostgreSQL's spellings without a direction or FROM (a syntax error before).
        "BEGIN",
        "DECLARE e CURSOR FOR SELECT id FROM t ORDER BY id",
        "FETCH e",
        "FETCH FROM e",
        "FETCH 2 e",
        "FETCH FORWARD IN e",
        "FETCH e;",
        "COMMIT",
        "DECLARE h CURSOR WITH HOLD FOR SELECT count(*) FROM t",
        "FETCH ALL FROM h",
        "CLOSE h",
        "CLOSE h",
        "DECLARE h1 CURSOR WITH HOLD FOR SELECT 1",
        "DECLARE h2 CURSOR WITH HOLD FOR SELECT 2",
        "CLOSE ALL",
        "FETCH 1 FROM h2",
        // MOVE passes rows over and counts them; a statement that does not parse
        // aborts the block like any other error.
        "BEGIN",
        "DECLARE m CURSOR FOR SELECT id FROM t ORDER BY id",
        "MOVE 2 IN m",
        "FETCH NEXT FROM m",
        "MOVE m",
        "MOVE FORWARD FROM m",
        "MOVE ALL IN m",
        "FETCH m",
        "MOVE 1 IN nosuch",
        "FETCH m",
        "ROLLBACK",
        "BEGIN",
        "INSERT INTO t VALUES (6, 'f')",
        "SELEC 1",
        "SELECT 1",
        "COMMIT",
        "SELECT count(*) FROM t",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// `ALTER COLUMN ... SET NOT NULL` checks the rows there are (23502 if one has none)
/// and is enforced from then on; `DROP NOT NULL` lifts it; a key column keeps it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alter_column_sets_and_drops_not_null() {
    let differences = compare(&[&[
        "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b INTEGER)",
        "INSERT INTO t VALUES (1, 'x', NULL), (2, 'y', 5)",
        "ALTER TABLE t ALTER COLUMN a SET NOT NULL",
        "INSERT INTO t VALUES (3, NULL, 1)",
        "ALTER TABLE t ALTER COLUMN b SET NOT NULL",
        "SELECT attname::text, attnotnull FROM pg_attribute \
         WHERE attrelid = 't'::regclass AND attnum > 0 ORDER BY attnum",
        "UPDATE t SET b = 0 WHERE b IS NULL",
        "ALTER TABLE t ALTER COLUMN b SET NOT NULL",
        "UPDATE t SET b = NULL WHERE id = 1",
        "ALTER TABLE t ALTER COLUMN a DROP NOT NULL",
        "INSERT INTO t VALUES (4, NULL, 2)",
        "ALTER TABLE t ALTER COLUMN id DROP NOT NULL",
        "ALTER TABLE t ALTER COLUMN zz SET NOT NULL",
        "SELECT column_name::text, is_nullable::text FROM information_schema.columns \
         WHERE table_name = 't' ORDER BY ordinal_position",
        "SELECT * FROM t ORDER BY id",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A session's `TimeZone` is the zone a `timestamptz` is read and shown in, and the
/// one it meets a `timestamp` or a date in: casts both ways, comparisons, `date_trunc`
/// and `extract` on its wall clock, `± interval` across a change of clocks (a day is 23
/// or 25 hours), `to_char`, `age`, JSON, text, series, `timestamptz[]`; a time the
/// clocks skip or repeat is read as PostgreSQL reads it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_time_zones_read_and_show_timestamptz_as_postgresql_does() {
    const QUERIES: [&str; 24] = [
        "SELECT k, ts, tz, d FROM t ORDER BY k",
        "SELECT k, tz::text, tz::date, tz::timestamp, tz::time, ts::timestamptz, \
         d::timestamptz FROM t ORDER BY k",
        "SELECT * FROM t WHERE k = 2",
        "SELECT k, date_trunc('day', tz), date_trunc('hour', tz), date_trunc('month', tz) \
         FROM t ORDER BY k",
        "SELECT k, extract(hour from tz), extract(day from tz), extract(epoch from tz), \
         date_part('dow', tz) FROM t ORDER BY k",
        "SELECT k, tz + interval '1 day', tz - interval '1 month', tz + interval '3 hours' \
         FROM t ORDER BY k",
        "SELECT k FROM t WHERE tz > '2024-07-01 23:30' ORDER BY k",
        "SELECT k FROM t WHERE tz >= date '2024-07-02' ORDER BY k",
        "SELECT k FROM t WHERE tz::date = d ORDER BY k",
        "SELECT k FROM t WHERE tz = ts ORDER BY k",
        "SELECT k, tz - ts, tz - d, ts - tz FROM t ORDER BY k",
        "SELECT k, to_char(tz, 'YYYY-MM-DD HH24:MI TZ OF'), age(tz, timestamptz '2024-01-01') \
         FROM t ORDER BY k",
        "SELECT timestamptz '2024-03-31 02:30', timestamp '2024-03-31 02:30'::timestamptz, \
         '2024-10-27 02:30'::timestamptz, '2024-10-27 02:30+00'::timestamptz",
        "SELECT k, 'at ' || tz, to_jsonb(tz), json_build_object('t', tz)::text FROM t \
         ORDER BY k",
        "SELECT jsonb_agg(tz ORDER BY k), array_agg(tz ORDER BY k)::text, min(tz)::text FROM t",
        "SELECT k, tz AT TIME ZONE 'UTC', ts AT TIME ZONE 'UTC', d AT TIME ZONE 'UTC' FROM t \
         ORDER BY k",
        "SELECT k, timezone('UTC', tz), timezone('Asia/Tokyo', ts), \
         date_bin('15 minutes', tz, timestamptz '2000-01-01') FROM t ORDER BY k",
        "SELECT count(*) FROM t GROUP BY date_trunc('day', tz) ORDER BY 1",
        "SELECT generate_series(timestamptz '2024-03-30', timestamptz '2024-04-01', \
         interval '1 day')",
        "SELECT g::date, count(*) FROM generate_series(timestamptz '2024-10-26', '2024-10-28', \
         '12 hours') g GROUP BY 1 ORDER BY 1",
        "SELECT to_timestamp(1700000000)::text, current_date - now()::date, \
         localtimestamp - now()::timestamp < interval '1 second'",
        "SELECT a.k, b.k FROM t a JOIN t b ON a.tz = b.ts ORDER BY 1, 2",
        "SELECT k, extract(timezone from tz), extract(timezone_hour from tz), \
         extract(timezone_minute from tz), date_part('timezone', tz) FROM t ORDER BY k",
        "SHOW TimeZone",
    ];
    let mut groups: Vec<Vec<String>> = Vec::new();
    for zone in [
        "'Europe/Berlin'",
        "'america/new_york'",
        "'Asia/Kolkata'",
        "'+05:30'",
        "-5",
        "'UTC'",
    ] {
        let mut group = vec![
            format!("SET TIME ZONE {zone}"),
            "CREATE TABLE t (k INTEGER PRIMARY KEY, ts TIMESTAMP, tz TIMESTAMPTZ, d DATE)"
                .to_string(),
            "INSERT INTO t VALUES (1, '2024-03-31 01:30', '2024-03-31 01:30+00', '2024-03-31'), \
             (2, '2024-10-27 02:30', '2024-10-27 00:30+00', '2024-10-27'), \
             (3, '2024-07-01 23:30', '2024-07-01 23:30', '2024-07-01'), \
             (4, '2024-11-03 01:30', '2024-11-03 05:30+00', '2024-11-03')"
                .to_string(),
        ];
        group.extend(QUERIES.iter().map(|q| q.to_string()));
        group.extend(
            [
                "CREATE TABLE u (k INTEGER PRIMARY KEY, a TIMESTAMPTZ[])",
                "INSERT INTO u VALUES (1, '{\"2024-03-31 01:30+00\",\"2024-07-01 12:00\"}'), \
                 (2, ARRAY[timestamptz '2024-01-01 00:00+00', NULL])",
                "SELECT k, a, a::text, a[2], array_length(a, 1) FROM u ORDER BY k",
                "SELECT a FROM u WHERE k = 1",
                "SELECT unnest(a) FROM u ORDER BY 1",
                "SELECT '{\"2024-01-01 10:00\",\"3000-01-01\"}'::timestamptz[] AS a",
            ]
            .map(String::from),
        );
        groups.push(group);
    }
    let groups: Vec<Vec<&str>> = groups
        .iter()
        .map(|g| g.iter().map(String::as_str).collect())
        .collect();
    let groups: Vec<&[&str]> = groups.iter().map(Vec::as_slice).collect();
    let differences = compare(&groups).await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// ON CONFLICT judged by a unique index (its columns, `ON CONSTRAINT` its name), or
/// with DO NOTHING and no target by every one: the conflicting row is updated or the
/// row passed over; a key taken is still a duplicate; a row proposed twice, or an
/// update of a row the statement inserted, is 21000; NULLs never conflict; inside a
/// block the block's own rows conflict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_conflict_on_a_unique_index() {
    let differences = compare(&[&[
        "CREATE TABLE u (id SERIAL PRIMARY KEY, email TEXT UNIQUE, name TEXT, \
         team INTEGER, slot INTEGER, UNIQUE (team, slot))",
        "INSERT INTO u (email, name) VALUES ('a', 'x') ON CONFLICT (email) \
         DO UPDATE SET name = EXCLUDED.name RETURNING *",
        "INSERT INTO u (email, name) VALUES ('a', 'y') ON CONFLICT (email) \
         DO UPDATE SET name = EXCLUDED.name RETURNING *",
        "INSERT INTO u (email, name) VALUES ('a', 'z') ON CONFLICT (email) DO NOTHING RETURNING *",
        "INSERT INTO u (email, name) VALUES ('a', 'z'), ('b', 'w') ON CONFLICT DO NOTHING \
         RETURNING *",
        "INSERT INTO u (email, name) VALUES ('c', 'z'), ('c', 'w') ON CONFLICT DO NOTHING \
         RETURNING *",
        "INSERT INTO u (email, name) VALUES ('d', 'z'), ('d', 'w') ON CONFLICT (email) \
         DO UPDATE SET name = EXCLUDED.name",
        "INSERT INTO u (email, name) VALUES ('a', 'z') ON CONFLICT DO UPDATE SET name = 'q'",
        "INSERT INTO u (id, email, name) VALUES (1, 'e', 'z') ON CONFLICT (email) \
         DO UPDATE SET name = 'q'",
        "INSERT INTO u (id, email, name) VALUES (1, 'e', 'z') ON CONFLICT (email) DO NOTHING",
        "INSERT INTO u (id, email, name) VALUES (1, 'e', 'z') ON CONFLICT DO NOTHING RETURNING *",
        "INSERT INTO u (email, name) VALUES ('a', 'z') ON CONFLICT ON CONSTRAINT u_email_key \
         DO UPDATE SET name = EXCLUDED.name || u.name RETURNING id, name",
        "INSERT INTO u (email, name) VALUES ('a', 'z') ON CONFLICT (email) \
         DO UPDATE SET name = 'nope' WHERE u.name = 'none' RETURNING id, name",
        "INSERT INTO u (email, name) VALUES (NULL, 'n1'), (NULL, 'n2') ON CONFLICT (email) \
         DO UPDATE SET name = 'x' RETURNING email, name",
        "INSERT INTO u (email, name) VALUES ('a', 'z') ON CONFLICT (name) DO NOTHING",
        "INSERT INTO u (email, team, slot) VALUES ('f', 1, 1), ('g', 1, 2)",
        "INSERT INTO u (email, team, slot) VALUES ('h', 1, 2) ON CONFLICT (slot, team) \
         DO UPDATE SET email = u.email || EXCLUDED.email RETURNING email, team, slot",
        "INSERT INTO u (email, team, slot) VALUES ('f', 1, 3) ON CONFLICT (team, slot) \
         DO UPDATE SET slot = 9",
        "INSERT INTO u (email, team, slot) VALUES ('i', 1, 3) ON CONFLICT (team, slot) \
         DO UPDATE SET slot = 9 RETURNING email",
        "BEGIN",
        "INSERT INTO u (email, name) VALUES ('t', '1')",
        "INSERT INTO u (email, name) VALUES ('t', '2') ON CONFLICT (email) \
         DO UPDATE SET name = u.name || EXCLUDED.name RETURNING email, name",
        "INSERT INTO u (email, name) VALUES ('t', '3') ON CONFLICT DO NOTHING RETURNING email",
        "UPDATE u SET email = 't2' WHERE email = 't'",
        "INSERT INTO u (email, name) VALUES ('t', '4') ON CONFLICT (email) \
         DO UPDATE SET name = 'bad' RETURNING email, name",
        "COMMIT",
        "SELECT id, email, name, team, slot FROM u ORDER BY id",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Secondary indexes answer as a scan would: lookups by indexed columns after inserts,
/// updates (of indexed columns and of others), deletes and upserts; a unique index
/// (`UNIQUE` on a column, on the table, `CREATE UNIQUE INDEX`, `ADD UNIQUE`) refuses a
/// duplicate with 23505 and writes nothing, lets NULLs repeat, and cannot be created
/// over rows that share values; the catalog lists them as PostgreSQL does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secondary_indexes_answer_as_a_scan_would() {
    let differences = compare(&[&[
        "CREATE TABLE u (id BIGINT PRIMARY KEY, email TEXT UNIQUE, team INTEGER, \
         name VARCHAR(20), score DOUBLE PRECISION, UNIQUE (name, team))",
        "CREATE INDEX u_team ON u (team, name)",
        "CREATE INDEX ON u (score)",
        "INSERT INTO u VALUES (1, 'a@x', 1, 'ann', 1.5), (2, 'b@x', 1, 'bob', 2.5), \
         (3, NULL, 2, 'cy', -0.0), (4, NULL, 2, 'di', 0)",
        "SELECT id FROM u WHERE email = 'a@x'",
        "SELECT id, name::text FROM u WHERE team = 1 ORDER BY id",
        "SELECT id FROM u WHERE team = 2 AND name = 'di'",
        "SELECT id FROM u WHERE team IN (1, 2) AND name IN ('bob', 'cy') ORDER BY id",
        "SELECT id FROM u WHERE score = 0 ORDER BY id",
        "SELECT id FROM u WHERE team = 1.5",
        "SELECT id FROM u WHERE team = 1 AND score > 2",
        "INSERT INTO u VALUES (5, 'a@x', 3, 'eve', 1)",
        "INSERT INTO u VALUES (5, 'e@x', 1, 'ann', 1)",
        "INSERT INTO u VALUES (5, 'e@x', 3, 'eve', 1), (6, 'e@x', 3, 'fay', 1)",
        "SELECT count(*) FROM u",
        "UPDATE u SET email = 'b@x' WHERE id = 1",
        "UPDATE u SET email = 'z@x' WHERE id = 1",
        "SELECT id FROM u WHERE email = 'a@x'",
        "SELECT id FROM u WHERE email = 'z@x'",
        "INSERT INTO u VALUES (7, 'a@x', 1, 'gus', 3)",
        "UPDATE u SET team = 2 WHERE name = 'ann'",
        "SELECT id FROM u WHERE team = 1 ORDER BY id",
        "SELECT id FROM u WHERE team = 2 ORDER BY id",
        "DELETE FROM u WHERE email = 'b@x'",
        "SELECT id FROM u WHERE team = 1 ORDER BY id",
        "INSERT INTO u VALUES (8, 'b@x', 1, 'hal', 4)",
        "INSERT INTO u VALUES (8, 'q@x', 1, 'hal', 4) ON CONFLICT (id) DO UPDATE SET email = 'a@x'",
        "INSERT INTO u VALUES (8, 'q@x', 1, 'hal', 4) ON CONFLICT (id) \
         DO UPDATE SET email = EXCLUDED.email",
        "SELECT id, email FROM u WHERE email IN ('b@x', 'q@x')",
        "SELECT id FROM u WHERE team = 1 AND name = 'hal'",
        "INSERT INTO u VALUES (1, 'a@x', 1, 'kim', 9) ON CONFLICT DO NOTHING",
        "INSERT INTO u VALUES (1, 'a@x', 1, 'kim', 9) ON CONFLICT (id) DO NOTHING",
        "INSERT INTO u VALUES (1, 'a@x', 1, 'kim', 9)",
        "INSERT INTO u VALUES (1, 'zz@x', 1, 'kim', 9) ON CONFLICT (team) DO NOTHING",
        "INSERT INTO u VALUES (1, 'zz@x', 1, 'kim', 9) ON CONFLICT ON CONSTRAINT u_pkey DO NOTHING",
        "INSERT INTO u VALUES (1, 'zz@x', 1, 'kim', 9) ON CONFLICT ON CONSTRAINT nope DO NOTHING",
        "INSERT INTO u (id, team, name) VALUES (9, 5, 'ivy'), (10, 5, 'jo')",
        "SELECT id FROM u WHERE email IS NULL ORDER BY id",
        "CREATE UNIQUE INDEX u_team_key ON u (team)",
        "SELECT count(*) FROM pg_indexes WHERE indexname = 'u_team_key'",
        "ALTER TABLE u ADD CONSTRAINT u_score_unique UNIQUE (score)",
        "ALTER TABLE u ADD CONSTRAINT u_id_name UNIQUE (id, name)",
        "SELECT indexname::text, indexdef FROM pg_indexes WHERE tablename = 'u' ORDER BY 1",
        "SELECT c.relname::text, i.indisunique, i.indisprimary, i.indnatts::int \
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
         WHERE i.indrelid = 'u'::regclass ORDER BY 1",
        "SELECT pg_get_indexdef('u_team'::regclass)",
        "SELECT conname::text, contype::text, pg_get_constraintdef(oid) FROM pg_constraint \
         WHERE conrelid = 'u'::regclass ORDER BY 1",
        "SELECT constraint_name::text, constraint_type::text \
         FROM information_schema.table_constraints WHERE table_name = 'u' \
         AND constraint_type IN ('PRIMARY KEY', 'UNIQUE') ORDER BY 1",
        "SELECT constraint_name::text, column_name::text, ordinal_position::int \
         FROM information_schema.key_column_usage WHERE table_name = 'u' ORDER BY 1, 3",
        "DROP INDEX u_email_key",
        "ALTER TABLE u DROP CONSTRAINT u_id_name",
        "ALTER TABLE u DROP CONSTRAINT u_id_name",
        "ALTER TABLE u DROP CONSTRAINT IF EXISTS u_id_name",
        "SELECT count(*) FROM pg_indexes WHERE indexname = 'u_id_name'",
        "CREATE INDEX u_team ON u (name)",
        "CREATE INDEX IF NOT EXISTS u_team ON u (name)",
        "CREATE TABLE u_team (k INTEGER PRIMARY KEY)",
        "DROP INDEX u_team",
        "SELECT id FROM u WHERE team = 1 ORDER BY id",
        "DROP INDEX u_team",
        "DROP INDEX IF EXISTS u_team",
        "CREATE INDEX ON u (nosuch)",
        "CREATE TABLE v (k INTEGER PRIMARY KEY, a TEXT)",
        "INSERT INTO v VALUES (1, 'x'), (2, 'x')",
        "CREATE UNIQUE INDEX v_a ON v (a)",
        "SELECT count(*) FROM pg_indexes WHERE tablename = 'v'",
        "UPDATE v SET a = 'y' WHERE k = 2",
        "CREATE UNIQUE INDEX v_a ON v (a)",
        "INSERT INTO v VALUES (3, 'y')",
        "DROP TABLE v",
        "SELECT count(*) FROM pg_indexes WHERE tablename = 'v'",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Foreign keys: a child row must find its parent (23503, nothing written), a parent
/// row still referenced cannot go, and ON DELETE / ON UPDATE actions cascade or set
/// NULL; referencing the primary key or a unique column, self-references, the DDL
/// errors, and the catalog's view of them, as PostgreSQL gives them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_keys_hold_as_postgres_holds_them() {
    let differences = compare(&[&[
        "CREATE TABLE p (id BIGINT PRIMARY KEY, code TEXT UNIQUE, name TEXT)",
        "CREATE TABLE c (id BIGINT PRIMARY KEY, p_id BIGINT REFERENCES p, note TEXT)",
        "CREATE TABLE d (id BIGINT PRIMARY KEY, p_id BIGINT REFERENCES p (id) ON DELETE CASCADE)",
        "CREATE TABLE n (id BIGINT PRIMARY KEY, p_code TEXT, \
         FOREIGN KEY (p_code) REFERENCES p (code) ON DELETE SET NULL ON UPDATE CASCADE)",
        "INSERT INTO p VALUES (1, 'a', 'one'), (2, 'b', 'two'), (3, 'c', 'three')",
        "INSERT INTO c VALUES (1, 1, 'x'), (2, NULL, 'y')",
        "INSERT INTO c VALUES (3, 9, 'z')",
        "INSERT INTO c VALUES (3, 2, 'z'), (4, 8, 'w')",
        "SELECT id, p_id FROM c ORDER BY id",
        "UPDATE c SET p_id = 7 WHERE id = 1",
        "UPDATE c SET p_id = 3 WHERE id = 1",
        "UPDATE c SET note = 'kept' WHERE id = 1",
        "DELETE FROM p WHERE id = 3",
        "SELECT count(*) FROM p",
        "INSERT INTO d VALUES (1, 2), (2, 2), (3, 1)",
        "DELETE FROM p WHERE id = 2",
        "SELECT id, p_id FROM d ORDER BY id",
        "INSERT INTO n VALUES (1, 'a'), (2, 'c'), (3, NULL)",
        "INSERT INTO n VALUES (4, 'zz')",
        "UPDATE p SET code = 'aa' WHERE id = 1",
        "SELECT id, p_code FROM n ORDER BY id",
        "DELETE FROM p WHERE code = 'c'",
        "UPDATE c SET p_id = NULL WHERE id = 1",
        "DELETE FROM p WHERE code = 'c' RETURNING id",
        "SELECT id, p_code FROM n ORDER BY id",
        "INSERT INTO c VALUES (1, 9, 'q') ON CONFLICT (id) DO UPDATE SET p_id = excluded.p_id",
        "INSERT INTO c VALUES (5, 1, 'q') ON CONFLICT (id) DO NOTHING",
        "INSERT INTO c SELECT 6, id, name FROM p WHERE id = 1",
        "INSERT INTO c SELECT 7, id + 100, name FROM p",
        "SELECT id, p_id FROM c ORDER BY id",
        "CREATE TABLE tree (id BIGINT PRIMARY KEY, parent BIGINT REFERENCES tree ON DELETE CASCADE)",
        "INSERT INTO tree VALUES (1, NULL), (2, 1), (3, 2)",
        "INSERT INTO tree VALUES (4, 5), (5, 4)",
        "INSERT INTO tree VALUES (6, 6)",
        "DELETE FROM tree WHERE id = 1",
        "SELECT id, parent FROM tree ORDER BY id",
        "CREATE TABLE bad1 (id BIGINT PRIMARY KEY, x BIGINT REFERENCES missing)",
        "CREATE TABLE bad2 (id BIGINT PRIMARY KEY, x TEXT REFERENCES p (name))",
        "CREATE TABLE bad3 (id BIGINT PRIMARY KEY, x TEXT REFERENCES p)",
        "CREATE TABLE bad4 (id BIGINT PRIMARY KEY, x BIGINT, y BIGINT, \
         FOREIGN KEY (x, y) REFERENCES p (id))",
        "SELECT count(*) FROM pg_class WHERE relname LIKE 'bad%'",
        "ALTER TABLE c ADD CONSTRAINT c_note_fk FOREIGN KEY (note) REFERENCES p (code)",
        "ALTER TABLE c ADD CONSTRAINT c_note_fk FOREIGN KEY (id) REFERENCES p",
        "SELECT id FROM c ORDER BY id",
        "ALTER TABLE c ADD CONSTRAINT c_note_fk FOREIGN KEY (id) REFERENCES p",
        "ALTER TABLE c DROP CONSTRAINT c_note_fk",
        "ALTER TABLE c DROP CONSTRAINT c_note_fk",
        "ALTER TABLE c DROP CONSTRAINT IF EXISTS c_note_fk",
        "ALTER TABLE p DROP CONSTRAINT p_code_key",
        "DROP TABLE p",
        "TRUNCATE p",
        "SELECT conname::text, contype::text, confupdtype::text, confdeltype::text, \
         pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'n'::regclass \
         ORDER BY 1",
        "SELECT a.attname::text FROM pg_constraint c JOIN pg_attribute a \
         ON a.attrelid = c.confrelid AND a.attnum = c.confkey[1] WHERE c.conname = 'd_p_id_fkey'",
        "SELECT constraint_name::text, unique_constraint_name::text, update_rule::text, \
         delete_rule::text FROM information_schema.referential_constraints ORDER BY 1",
        "SELECT constraint_name::text, constraint_type::text FROM \
         information_schema.table_constraints WHERE table_name = 'n' \
         AND constraint_type <> 'CHECK' ORDER BY 1",
        "SET CONSTRAINTS nosuch IMMEDIATE",
        "SET CONSTRAINTS c_p_id_fkey DEFERRED",
        "SET CONSTRAINTS p_pkey, n_p_code_fkey IMMEDIATE",
        "SET CONSTRAINTS ALL DEFERRED",
        "TRUNCATE p, c, d, n",
        "SELECT count(*) FROM p",
        "INSERT INTO c VALUES (9, 99, 'free')",
        "DROP TABLE p CASCADE",
        "INSERT INTO c VALUES (9, 99, 'free')",
        "SELECT count(*) FROM pg_constraint WHERE contype = 'f'",
        // Django's reverse migration: each table dropped with CASCADE in one block,
        // the referencing one first.
        "CREATE TABLE dp (id BIGINT PRIMARY KEY)",
        "CREATE TABLE dk (id BIGINT PRIMARY KEY, dp_id BIGINT REFERENCES dp)",
        "INSERT INTO dp VALUES (1)",
        "INSERT INTO dk VALUES (1, 1)",
        "BEGIN",
        "DROP TABLE dk CASCADE",
        "DROP TABLE dp CASCADE",
        "ROLLBACK",
        "SELECT dk.id, dp.id FROM dk JOIN dp ON dp.id = dk.dp_id",
        "BEGIN",
        "DROP TABLE dk CASCADE",
        "DROP TABLE dp CASCADE",
        "COMMIT",
        "SELECT count(*) FROM pg_class WHERE relname IN ('dk', 'dp')",
        "CREATE TABLE dp (id BIGINT PRIMARY KEY)",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// CHECK constraints: a row a write leaves that a check finds false is 23514 and
/// nothing is written, on every write form; NULL passes; ADD CONSTRAINT checks the rows
/// there; names and definitions as PostgreSQL gives them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_constraints_hold_as_postgres_holds_them() {
    let differences = compare(&[&[
        "CREATE TABLE k (id BIGINT PRIMARY KEY, qty INTEGER CHECK (qty >= 0), lo INTEGER, \
         hi INTEGER, name TEXT, CONSTRAINT k_range CHECK (lo <= hi), CHECK (name <> ''))",
        "INSERT INTO k VALUES (1, 5, 1, 2, 'a')",
        "INSERT INTO k VALUES (2, -1, 1, 2, 'b')",
        "INSERT INTO k VALUES (2, 1, 3, 2, 'b')",
        "INSERT INTO k VALUES (2, 1, 1, 2, 'b'), (3, 1, 3, 2, 'c')",
        "INSERT INTO k VALUES (2, NULL, NULL, 2, NULL)",
        "INSERT INTO k VALUES (3, 1, 1, 1, '')",
        "UPDATE k SET qty = qty - 10 WHERE id = 1",
        "UPDATE k SET hi = 0 WHERE id = 1",
        "UPDATE k SET qty = qty + 1",
        "INSERT INTO k VALUES (1, -5, 1, 2, 'a') ON CONFLICT (id) DO UPDATE SET qty = excluded.qty",
        "INSERT INTO k SELECT 4, -1, 1, 1, 'x'",
        "SELECT id, qty FROM k ORDER BY id",
        "ALTER TABLE k ADD CONSTRAINT k_small CHECK (qty < 3)",
        "ALTER TABLE k ADD CONSTRAINT k_small CHECK (qty < 10)",
        "INSERT INTO k VALUES (5, 11, 1, 1, 'y')",
        "ALTER TABLE k ADD CONSTRAINT k_small CHECK (qty < 20)",
        "ALTER TABLE k DROP CONSTRAINT k_small",
        "INSERT INTO k VALUES (5, 11, 1, 1, 'y')",
        "ALTER TABLE k ADD COLUMN w INTEGER CHECK (w > 0)",
        "INSERT INTO k (id, w) VALUES (6, 0)",
        "INSERT INTO k (id, w) VALUES (6, 1)",
        "SELECT conname::text, contype::text, pg_get_constraintdef(oid), \
         pg_get_constraintdef(oid, true) FROM pg_constraint WHERE conname IN \
         ('k_qty_check', 'k_range', 'k_w_check') ORDER BY 1",
        "SELECT conname::text FROM pg_constraint WHERE contype = 'c' AND conrelid = 'k'::regclass \
         ORDER BY 1",
        "SELECT relchecks::integer FROM pg_class WHERE relname = 'k'",
        "UPDATE k SET w = w + 1, qty = qty + 1 WHERE id = 2",
        "SELECT id, qty, w FROM k ORDER BY id",
        "CREATE TABLE k2 (a INTEGER CHECK (a))",
        "CREATE TABLE k3 (a INTEGER CHECK (a > (SELECT 1)))",
        "CREATE TABLE k4 (a INTEGER CHECK (b > 0))",
        "SELECT count(*) FROM pg_class WHERE relname IN ('k2', 'k3', 'k4')",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// ALTER COLUMN ... TYPE within a column's stored value type (Django's migrations
/// change `varchar` lengths): the rows are checked against a narrower type (22001,
/// 22003, nothing changed), the new type shows in the catalog and holds for writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alter_column_type_holds_as_postgres_does() {
    let differences = compare(&[&[
        "CREATE TABLE ct (id BIGINT PRIMARY KEY, name VARCHAR(10) UNIQUE, n INTEGER, \
         s SMALLINT, r REAL)",
        "INSERT INTO ct VALUES (1, 'abcdefgh', 40000, 5, 1.5)",
        "ALTER TABLE ct ALTER COLUMN name TYPE varchar(5)",
        "INSERT INTO ct VALUES (2, 'abcdefghijklmnop', 1, 1, 1)",
        "ALTER TABLE ct ALTER COLUMN name TYPE varchar(20)",
        "INSERT INTO ct VALUES (2, 'abcdefghijklmnop', 1, 1, 1)",
        "INSERT INTO ct VALUES (3, 'abcdefghijklmnopqrstuvwxyz', 1, 1, 1)",
        "ALTER TABLE ct ALTER COLUMN name TYPE text",
        "INSERT INTO ct VALUES (3, repeat('x', 30), 1, 1, 1)",
        "INSERT INTO ct VALUES (4, repeat('x', 30), 1, 1, 1)",
        "SELECT id, length(name) FROM ct ORDER BY id",
        "ALTER TABLE ct ALTER COLUMN n TYPE smallint",
        "ALTER TABLE ct ALTER COLUMN n SET DATA TYPE bigint",
        "INSERT INTO ct VALUES (4, 'a', 5000000000, 1, 1)",
        "ALTER TABLE ct ALTER COLUMN s TYPE integer",
        "INSERT INTO ct VALUES (5, 'b', 1, 100000, 1)",
        "ALTER TABLE ct ALTER COLUMN s TYPE smallint",
        "ALTER TABLE ct ALTER COLUMN r TYPE double precision",
        "SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute \
         WHERE attrelid = 'ct'::regclass AND attnum > 0 ORDER BY attnum",
        "SELECT id, n, s, r FROM ct ORDER BY id",
        "ALTER TABLE ct ALTER COLUMN nosuch TYPE text",
        "ALTER TABLE ct ALTER COLUMN id TYPE integer",
        "INSERT INTO ct VALUES (5000000000, 'c', 1, 1, 1)",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// DROP COLUMN takes what depends on the column with it (its NOT NULL, unique index,
/// CHECK constraint, foreign keys; another table's key only with CASCADE), and its
/// values: a column added again under the name is empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_column_takes_its_dependents_as_postgres_does() {
    let differences = compare(&[&[
        "CREATE TABLE dc (id BIGINT PRIMARY KEY, a TEXT NOT NULL, b INTEGER UNIQUE, \
         c INTEGER CHECK (c > 0), d INTEGER)",
        "INSERT INTO dc VALUES (1, 'x', 1, 1, 1), (2, 'y', 2, 2, 2)",
        "ALTER TABLE dc DROP COLUMN a",
        "SELECT * FROM dc ORDER BY id",
        "INSERT INTO dc (id, b, c, d) VALUES (3, 3, 3, 3)",
        "ALTER TABLE dc DROP COLUMN nosuch",
        "ALTER TABLE dc DROP COLUMN IF EXISTS nosuch",
        "ALTER TABLE dc DROP COLUMN b",
        "INSERT INTO dc (id, c, d) VALUES (4, 4, 1)",
        "SELECT count(*) FROM pg_indexes WHERE tablename = 'dc'",
        "ALTER TABLE dc DROP c",
        "INSERT INTO dc (id, d) VALUES (5, -1)",
        "ALTER TABLE dc ADD COLUMN a TEXT",
        "SELECT id, a, d FROM dc ORDER BY id",
        "SELECT attname::text FROM pg_attribute WHERE attrelid = 'dc'::regclass AND attnum > 0 \
         AND NOT attisdropped ORDER BY attnum",
        "CREATE TABLE dp (id BIGINT PRIMARY KEY, code TEXT UNIQUE)",
        "CREATE TABLE dch (id BIGINT PRIMARY KEY, code TEXT REFERENCES dp (code))",
        "ALTER TABLE dp DROP COLUMN code",
        "ALTER TABLE dp DROP COLUMN code CASCADE",
        "INSERT INTO dch VALUES (1, 'zz')",
        "SELECT count(*) FROM pg_constraint WHERE conrelid = 'dch'::regclass AND contype = 'f'",
        "ALTER TABLE dch DROP COLUMN code",
        "SELECT * FROM dch",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// RENAME COLUMN renames a key or attribute column everywhere it is named: its values
/// (every row), NOT NULL, type and default, its CHECK, index and unique constraint, the
/// sequence it owns, foreign keys from and to it; inside a block it is undone by
/// ROLLBACK.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_column_renames_it_everywhere() {
    let differences = compare(&[&[
        "CREATE TABLE rp (id INTEGER PRIMARY KEY, code TEXT UNIQUE)",
        "CREATE TABLE rc (id SERIAL PRIMARY KEY, name VARCHAR(10) NOT NULL, \
         price NUMERIC(6,2) DEFAULT 1.5 CHECK (price > 0), pcode TEXT REFERENCES rp (code), \
         tag TEXT, CONSTRAINT rc_tag_len CHECK (length(tag) < 5))",
        "INSERT INTO rp VALUES (1, 'a'), (2, 'b')",
        "INSERT INTO rc (name, price, pcode, tag) VALUES ('n1', 2, 'a', 'ok'), ('n2', 3, NULL, NULL)",
        "CREATE INDEX rc_name_idx ON rc (name, tag)",
        "ALTER TABLE rc RENAME COLUMN name TO title",
        "ALTER TABLE rc RENAME COLUMN price TO amount",
        "ALTER TABLE rc RENAME tag TO label",
        "ALTER TABLE rp RENAME COLUMN code TO pc",
        "ALTER TABLE rc RENAME COLUMN pcode TO parent_code",
        "ALTER TABLE rc RENAME COLUMN id TO rid",
        "SELECT rid, title::text, amount, parent_code, label FROM rc ORDER BY rid",
        "SELECT rid, title::text FROM rc WHERE title = 'n2'",
        "INSERT INTO rc (title, amount, label) VALUES ('n3', -1, 'y')",
        "INSERT INTO rc (title, amount, label) VALUES ('n3', 1, 'xxxxxxx')",
        "INSERT INTO rc (title, label) VALUES (NULL, 'y')",
        "INSERT INTO rc (title, label, parent_code) VALUES ('n3', 'y', 'zz')",
        "INSERT INTO rc (title, label, parent_code) VALUES ('n3', 'y', 'b') RETURNING rid, amount",
        "DELETE FROM rp WHERE pc = 'a'",
        "SELECT conname::text, contype::text FROM pg_constraint \
         WHERE conrelid IN ('rc'::regclass, 'rp'::regclass) ORDER BY 1",
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint \
         WHERE conrelid IN ('rc'::regclass, 'rp'::regclass) AND contype IN ('f', 'u', 'p') \
         ORDER BY 1",
        "SELECT indexname::text, indexdef FROM pg_indexes WHERE tablename IN ('rc', 'rp') \
         ORDER BY 1",
        "SELECT column_name::text, data_type::text, is_nullable::text, column_default::text \
         FROM information_schema.columns WHERE table_name = 'rc' ORDER BY ordinal_position",
        "SELECT pg_get_serial_sequence('rc', 'rid')",
        "ALTER TABLE rc RENAME COLUMN nosuch TO x",
        "ALTER TABLE rc RENAME COLUMN title TO amount",
        "ALTER TABLE nosuch RENAME COLUMN a TO b",
        "BEGIN",
        "ALTER TABLE rc RENAME COLUMN title TO heading",
        "SELECT heading::text FROM rc ORDER BY 1",
        "ROLLBACK",
        "SELECT title::text FROM rc ORDER BY 1",
        "BEGIN",
        "ALTER TABLE rc RENAME COLUMN title TO heading",
        "INSERT INTO rc (heading, label) VALUES ('n5', 'y')",
        "COMMIT",
        "SELECT heading::text, label FROM rc ORDER BY 1",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// SELECT ... FOR UPDATE and its kin read what the SELECT reads, in and out of a
/// block; `OF` a table not read is 42P01, a lock with an aggregate 0A000.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locking_selects_read_as_postgres_reads() {
    let differences = compare(&[&[
        "CREATE TABLE fl (id INTEGER PRIMARY KEY, v TEXT)",
        "INSERT INTO fl VALUES (1, 'a'), (2, 'b'), (3, 'b')",
        "SELECT * FROM fl WHERE id = 1 FOR UPDATE",
        "BEGIN",
        "SELECT id FROM fl WHERE v = 'b' ORDER BY id FOR NO KEY UPDATE",
        "SELECT * FROM fl f ORDER BY id DESC LIMIT 2 FOR SHARE OF f NOWAIT",
        "SELECT id FROM fl WHERE id = 2 FOR KEY SHARE",
        "UPDATE fl SET v = 'c' WHERE id = 2",
        "COMMIT",
        "SELECT * FROM fl ORDER BY id",
        "SELECT * FROM fl FOR UPDATE OF nosuch",
        "SELECT count(*) FROM fl FOR UPDATE",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A bare name in ORDER BY is an output column's before an input column's, as
/// PostgreSQL reads it, on the catalog and through joins alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_by_names_the_output_column_first() {
    let differences = compare(&[&[
        "CREATE TABLE ob_b (id INTEGER PRIMARY KEY, name VARCHAR(10))",
        "CREATE TABLE ob_a (id INTEGER PRIMARY KEY, name TEXT)",
        "INSERT INTO ob_b VALUES (1, 'b'), (2, 'a'), (3, 'C')",
        "INSERT INTO ob_a VALUES (1, 'x'), (2, 'y'), (3, 'z')",
        "SELECT relname::text FROM pg_class WHERE relname IN ('ob_b', 'ob_a') ORDER BY relname",
        "SELECT b.name::text FROM ob_b b JOIN ob_a a ON a.id = b.id ORDER BY name",
        "SELECT upper(b.name) AS name FROM ob_b b JOIN ob_a a USING (id) ORDER BY name DESC",
        "SELECT a.name AS name, count(*) FROM ob_b b JOIN ob_a a USING (id) GROUP BY a.name \
         ORDER BY name",
        "SELECT b.id, a.name FROM ob_b b JOIN ob_a a USING (id) ORDER BY name, id",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A table's other columns may be selected when its primary key is grouped by
/// (functional dependency), as Django's `annotate(Count(...))` writes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grouping_by_the_key_selects_the_other_columns() {
    let differences = compare(&[&[
        "CREATE TABLE cu (id BIGINT PRIMARY KEY, email TEXT, active BOOLEAN)",
        "CREATE TABLE od (id BIGINT PRIMARY KEY, customer_id BIGINT REFERENCES cu, \
         total NUMERIC(10,2))",
        "INSERT INTO cu VALUES (1, 'a', true), (2, 'b', false), (3, 'c', true)",
        "INSERT INTO od VALUES (1, 1, 2.5), (2, 1, 3), (3, 2, 1)",
        "SELECT cu.id, cu.email, cu.active, count(od.id) AS order__count FROM cu \
         LEFT OUTER JOIN od ON (cu.id = od.customer_id) GROUP BY cu.id ORDER BY 1",
        "SELECT cu.email, sum(od.total) FROM cu JOIN od ON cu.id = od.customer_id \
         GROUP BY cu.id ORDER BY cu.email",
        "SELECT email, count(*) FROM cu GROUP BY id ORDER BY email",
        "SELECT od.total, count(*) FROM cu JOIN od ON cu.id = od.customer_id GROUP BY cu.id",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// The catalog's answers migration tools read after a schema like theirs: the column
/// owning a sequence (`pg_depend`, as SQLAlchemy finds a SERIAL's), and the columns a
/// constraint uses (`information_schema.constraint_column_usage`, as Sequelize reads).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalog_answers_migration_tools_as_postgres_does() {
    let differences = compare(&[&[
        "CREATE TABLE book (id SERIAL PRIMARY KEY, title TEXT UNIQUE)",
        "CREATE TABLE page (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, \
         book_id INTEGER REFERENCES book)",
        "SELECT c.relname::text, a.attname::text FROM pg_class AS c JOIN pg_depend d \
         ON d.objid = c.oid AND d.classid = 'pg_class'::regclass \
         AND d.refclassid = 'pg_class'::regclass JOIN pg_class t ON t.oid = d.refobjid \
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid \
         WHERE c.relkind = 'S' AND c.oid = CAST('book_id_seq' AS regclass)",
        "SELECT d.deptype::text FROM pg_depend d JOIN pg_class c ON c.oid = d.objid \
         WHERE c.relname = 'page_id_seq' AND d.refclassid = 'pg_class'::regclass",
        "SELECT table_name::text, column_name::text, constraint_name::text \
         FROM information_schema.constraint_column_usage \
         WHERE constraint_name IN ('page_book_id_fkey', 'book_title_key', 'page_pkey') \
         ORDER BY 3",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Catalog identifiers are PostgreSQL's `name` type (and their arrays `name[]`, which
/// node-postgres leaves a string for Sequelize to split), and comments set with
/// `COMMENT ON` come back through `pg_description`, `obj_description` and
/// `col_description`, in a block and after one rolls back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalog_names_and_comments_read_as_postgres_reads_them() {
    let differences = compare(&[&[
        "CREATE TABLE cm (id INTEGER PRIMARY KEY, email TEXT UNIQUE, note TEXT)",
        "SELECT relname, relkind::text FROM pg_class WHERE relname LIKE 'cm%' ORDER BY 1",
        "SELECT i.relname AS name, ix.indisunique AS unique, array_agg(a.attname ORDER BY a.attnum) AS cols \
         FROM pg_class t, pg_class i, pg_index ix, pg_attribute a \
         WHERE t.oid = ix.indrelid AND i.oid = ix.indexrelid AND a.attrelid = t.oid \
         AND a.attnum > 0 AND t.relname = 'cm' \
         GROUP BY i.relname, ix.indisunique ORDER BY i.relname",
        "SELECT table_name, column_name, upper(column_name) AS up, column_name || '!' AS bang \
         FROM information_schema.columns WHERE table_name = 'cm' ORDER BY ordinal_position",
        "SELECT attname FROM pg_attribute WHERE attrelid = 'cm'::regclass AND attnum > 0 \
         ORDER BY attnum",
        "COMMENT ON TABLE cm IS 'customer mail'",
        "COMMENT ON COLUMN cm.email IS 'where we write'",
        "COMMENT ON COLUMN public.cm.note IS 'it''s free text'",
        "SELECT obj_description('cm'::regclass, 'pg_class'), obj_description('cm'::regclass)",
        "SELECT a.attname, col_description(a.attrelid, a.attnum) FROM pg_attribute a \
         WHERE a.attrelid = 'cm'::regclass AND a.attnum > 0 ORDER BY a.attnum",
        "SELECT d.objsubid::int, d.description FROM pg_description d \
         WHERE d.objoid = 'cm'::regclass AND d.classoid = 'pg_class'::regclass ORDER BY 1",
        "COMMENT ON COLUMN cm.note IS NULL",
        "COMMENT ON TABLE cm IS ''",
        "SELECT obj_description('cm'::regclass, 'pg_class'), col_description('cm'::regclass, 3)",
        "BEGIN",
        "COMMENT ON TABLE cm IS 'in the block'",
        "SELECT obj_description('cm'::regclass, 'pg_class')",
        "ROLLBACK",
        "SELECT obj_description('cm'::regclass, 'pg_class')",
        "ALTER TABLE cm RENAME COLUMN email TO mail",
        "SELECT col_description('cm'::regclass, 2)",
        "COMMENT ON COLUMN cm.nosuch IS 'x'",
        "COMMENT ON TABLE nosuch IS 'x'",
        "COMMENT ON COLUMN nosuch.a IS 'x'",
        // The schemas there are, as migration tools ask about them.
        "CREATE SCHEMA IF NOT EXISTS public",
        "CREATE SCHEMA public",
        "CREATE SCHEMA pg_catalog",
        "DROP SCHEMA IF EXISTS nosuch",
        "DROP SCHEMA IF EXISTS nosuch, other CASCADE",
        "DROP SCHEMA nosuch",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// The privilege inquiry functions as a superuser asks them (every privilege held),
/// with PostgreSQL's errors for an unknown relation, column, role, schema, database or
/// privilege; `pg_size_pretty`'s units and rounding for bigint and numeric; and the size
/// functions' answers for an empty table and their errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn privilege_inquiries_and_pretty_sizes_answer_as_postgres_does() {
    let differences = compare(&[&[
        "CREATE TABLE pv (id BIGINT PRIMARY KEY, note TEXT)",
        "SELECT has_table_privilege('pv', 'SELECT'), has_table_privilege('public.pv', 'insert'), \
         has_table_privilege('pv', 'SELECT, DELETE WITH GRANT OPTION'), \
         has_table_privilege('postgres', 'pv', 'TRUNCATE'), \
         has_table_privilege('pv'::regclass, 'UPDATE'), \
         has_table_privilege('pg_catalog.pg_class', 'SELECT')",
        "SELECT has_table_privilege('nosuch', 'SELECT')",
        "SELECT has_table_privilege('\"public\".\"pv\"', 'SELECT'), \
         has_any_column_privilege(current_user, 'PUBLIC.PV', 'update'), \
         has_table_privilege('information_schema.tables', 'SELECT')",
        "SELECT has_table_privilege('\"PV\"', 'SELECT')",
        "SELECT has_table_privilege('nosuch.pv', 'SELECT')",
        "SELECT has_table_privilege('pv', 'SELEC')",
        "SELECT has_table_privilege('pv', 'SELECT WITH ADMIN OPTION')",
        "SELECT pg_has_role(current_user, 'MEMBER WITH ADMIN OPTION')",
        "SELECT has_table_privilege('nobody_at_all', 'pv', 'SELECT')",
        "SELECT has_table_privilege('pv', NULL)",
        "SELECT has_column_privilege('pv', 'note', 'UPDATE'), has_any_column_privilege('pv', 'SELECT')",
        "SELECT has_column_privilege('pv', 'nosuch', 'SELECT')",
        "SELECT has_column_privilege('pv', 'note', 'DELETE')",
        "SELECT has_schema_privilege('public', 'CREATE'), has_schema_privilege('pg_catalog', 'USAGE')",
        "SELECT has_schema_privilege('nosuch', 'USAGE')",
        "SELECT has_database_privilege(current_database(), 'CONNECT, CREATE')",
        "SELECT has_database_privilege('nosuch', 'CONNECT')",
        "SELECT pg_has_role('postgres', 'MEMBER'), pg_has_role(current_user, 'USAGE')",
        "SELECT c.relname, has_table_privilege(c.oid, 'SELECT') FROM pg_class c \
         WHERE c.relname = 'pv'",
        "SELECT pg_size_pretty(x) FROM (VALUES (0::bigint), (10239), (10240), (-10240), (10752), \
         (20971519), (20971520), (1000000000000), (1000000000000000), (9223372036854775807)) v(x)",
        "SELECT pg_size_pretty(10.5::numeric), pg_size_pretty(-10.5::numeric), \
         pg_size_pretty(123456789.75::numeric), pg_size_pretty(NULL::bigint)",
        // Sizes: an empty table has none, its other forks are empty, and the errors. (An
        // index is not compared: PostgreSQL's btree has a page before any entry, pgwide's
        // primary key is the row keys themselves.)
        "SELECT pg_relation_size('pv'), pg_relation_size('pv', 'fsm'), \
         pg_total_relation_size(0), pg_table_size(NULL)",
        "SELECT pg_relation_size('nosuch')",
        "SELECT pg_relation_size('pv', 'bogus')",
        "SELECT pg_database_size('nosuch')",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Explicit casts to `VARCHAR(n)` cut the value to n characters (never an error) and
/// are described as `character varying`, on the fast path and in DataFusion, in reads,
/// filters and writes; `CHAR` is `CHAR(1)`; a length of 0 is 22023.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn casts_to_varchar_cut_values_as_postgres_does() {
    let differences = compare(&[&[
        "SELECT 'abcdef'::varchar(3), CAST('abcdef' AS character varying(2)), 'abc'::varchar, \
         'éèà'::varchar(2), 'xyz'::char::text, 'ab'::char(2)::text",
        "CREATE TABLE t (id BIGINT PRIMARY KEY, s TEXT)",
        "INSERT INTO t VALUES (1, 'hello'), (2, 'hi'), (3, NULL)",
        "SELECT id, s::varchar(3) AS short, s::varchar FROM t ORDER BY id",
        "SELECT id, upper(s)::varchar(2) FROM t ORDER BY id",
        "SELECT id FROM t WHERE s::varchar(2) = 'he' ORDER BY id",
        "SELECT id, s FROM t WHERE id = 1 AND s::varchar(1) = 'h'",
        "INSERT INTO t VALUES (4, 'abcdef'::varchar(4))",
        "SELECT s FROM t WHERE id = 4",
        "SELECT 'a'::varchar(0)",
        "SELECT 'a'::char(0)",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// SQL-level prepared statements: PREPARE with and without declared types, EXECUTE
/// with literal and computed arguments (each cast to its parameter's type), replanning
/// after DDL, and the errors PostgreSQL gives (42P05, 26000, 42601, 22P02).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_prepared_statements_run_as_postgres_runs_them() {
    let differences = compare(&[&[
        "CREATE TABLE pq (id INTEGER PRIMARY KEY, name TEXT, score NUMERIC(6,2))",
        "PREPARE ins (integer, text, numeric) AS INSERT INTO pq VALUES ($1, $2, $3)",
        "EXECUTE ins(1, 'one', 1.5)",
        "EXECUTE ins (2, 'two', '2.25')",
        "EXECUTE ins(1 + 2, 'thr' || 'ee', 3)",
        "PREPARE get AS SELECT id, name, score FROM pq WHERE id = $1",
        "EXECUTE get(2)",
        "EXECUTE get('3')",
        "PREPARE all_rows AS SELECT id, name FROM pq ORDER BY id",
        "EXECUTE all_rows",
        "PREPARE upd (integer) AS UPDATE pq SET score = score + 1 WHERE id = $1 RETURNING score",
        "EXECUTE upd(1)",
        "ALTER TABLE pq ADD COLUMN note TEXT",
        "EXECUTE get(1)",
        "PREPARE get AS SELECT 1",
        "EXECUTE nosuch(1)",
        "EXECUTE get(1, 2)",
        "EXECUTE get",
        "EXECUTE get('x')",
        "DEALLOCATE get",
        "EXECUTE get(1)",
        "DEALLOCATE get",
        "PREPARE get AS SELECT name FROM pq WHERE id = $1",
        "EXECUTE get(3)",
        "BEGIN",
        "EXECUTE ins(4, 'four', 4)",
        "ROLLBACK",
        "EXECUTE all_rows",
        "DEALLOCATE ALL",
        "EXECUTE all_rows",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A column declared VARCHAR comes back as `character varying` (1043), as PostgreSQL
/// describes it, wherever a result column is the table column itself; computed from
/// it, it is text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn varchar_columns_are_described_as_varchar() {
    let differences = compare(&[&[
        "CREATE TABLE vc (id VARCHAR(8) PRIMARY KEY, name VARCHAR(20), free VARCHAR, t TEXT)",
        "INSERT INTO vc VALUES ('a', 'Ann', 'x', 'y'), ('b', 'Bob', NULL, 'z')",
        "SELECT * FROM vc ORDER BY id",
        "SELECT name FROM vc WHERE id = 'a'",
        "SELECT v.name, v.free, v.t FROM vc v JOIN vc w ON v.id = w.id ORDER BY 1",
        "SELECT name::text, upper(name), name || '!' FROM vc ORDER BY 1",
        "SELECT DISTINCT name FROM vc ORDER BY 1",
        "INSERT INTO vc VALUES ('c', 'Cy', 'q', 'r') RETURNING id, name, t",
        "UPDATE vc SET name = 'Bo' WHERE id = 'b' RETURNING name",
        "SELECT name, count(*) FROM vc GROUP BY name ORDER BY 1",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Enum types: values checked against the labels (22P02), compared and sorted in the
/// labels' declared order (not alphabetically), casts to and from text, labels added
/// before and after others, the catalogs, and the errors of DDL on them (42710, 2BP01,
/// 42704, 22023).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enum_types_compare_and_sort_as_postgres_does() {
    let differences = compare(&[&[
        "DROP TABLE IF EXISTS e",
        "DROP TYPE IF EXISTS mood",
        "DROP TYPE IF EXISTS feeling",
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
        "CREATE TYPE mood AS ENUM ('x')",
        "CREATE TABLE e (id INTEGER PRIMARY KEY, m mood, n mood NOT NULL DEFAULT 'ok')",
        "INSERT INTO e (id, m) VALUES (1, 'happy'), (2, 'sad'), (3, 'ok'), (4, NULL)",
        "INSERT INTO e (id, m) VALUES (5, 'glad')",
        "SELECT id, m::text, n::text FROM e ORDER BY m, id",
        "SELECT id, m::text FROM e ORDER BY m DESC, id",
        "SELECT string_agg(m::text, ',' ORDER BY m), string_agg(id::text, ',' ORDER BY m DESC, id) \
         FROM e",
        "SELECT id, row_number() OVER (ORDER BY m, id) FROM e ORDER BY id",
        "SELECT id FROM e WHERE m > 'sad' ORDER BY id",
        "SELECT id FROM e WHERE m <= 'ok' ORDER BY id",
        "SELECT id FROM e WHERE m BETWEEN 'ok' AND 'happy' ORDER BY id",
        "SELECT id FROM e WHERE m = 'ok'",
        "SELECT id FROM e WHERE m = 'glad'",
        "SELECT id FROM e WHERE m IN ('sad', 'happy') ORDER BY id",
        "SELECT id FROM e WHERE m IN ('sad', 'glad')",
        "SELECT m::text FROM e ORDER BY m::text",
        "SELECT m::text AS label FROM e ORDER BY label",
        "SELECT m::text, c FROM (SELECT m, count(*) AS c FROM e GROUP BY m) g ORDER BY m",
        "SELECT 'ok'::mood < 'happy'::mood, 'happy'::mood::text, 'sad'::mood > 'ok'",
        "SELECT pg_typeof(m)::text, pg_typeof(m::text)::text FROM e WHERE id = 1",
        "SELECT ('glad'::mood)::text",
        "SELECT id FROM e WHERE m > 'glad'",
        "UPDATE e SET m = 'ok' WHERE m < 'ok'",
        "UPDATE e SET m = 'meh' WHERE id = 1",
        "ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok'",
        "ALTER TYPE mood ADD VALUE 'ok'",
        "ALTER TYPE mood ADD VALUE IF NOT EXISTS 'ok'",
        "ALTER TYPE mood ADD VALUE 'x' AFTER 'nope'",
        "ALTER TYPE mood ADD VALUE 'ecstatic' AFTER 'happy'",
        "UPDATE e SET m = 'meh' WHERE id = 1",
        "UPDATE e SET m = 'ecstatic' WHERE id = 3",
        "SELECT id, m::text FROM e ORDER BY m, id",
        "SELECT enumlabel::text FROM pg_enum l JOIN pg_type t ON t.oid = l.enumtypid \
         WHERE t.typname = 'mood' ORDER BY l.enumsortorder",
        "SELECT typname::text, typtype::text, typcategory::text, typlen::int FROM pg_type \
         WHERE typname IN ('mood', '_mood') ORDER BY typname",
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute \
         WHERE attrelid = 'e'::regclass AND attname = 'm'",
        "SELECT data_type::text, udt_name::text FROM information_schema.columns \
         WHERE table_name = 'e' AND column_name = 'm'",
        "DROP TYPE mood",
        "ALTER TYPE mood RENAME TO feeling",
        "SELECT format_type(atttypid, NULL) FROM pg_attribute \
         WHERE attrelid = 'e'::regclass AND attname = 'n'",
        "SELECT id FROM e WHERE m = 'sad'::feeling",
        "DROP TABLE e",
        "DROP TYPE feeling",
        "DROP TYPE feeling",
        "DROP TYPE IF EXISTS feeling",
        "SELECT 1::no_such_type",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A read-only transaction (`BEGIN READ ONLY`, `SET TRANSACTION READ ONLY`,
/// `default_transaction_read_only`, `SET SESSION CHARACTERISTICS`) refuses every write,
/// DDL and `nextval` with 25006, and reads as any other; READ WRITE writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_transactions_refuse_writes_as_postgres_does() {
    let differences = compare(&[&[
        "CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT)",
        "CREATE SEQUENCE s",
        "INSERT INTO t VALUES (1, 'a')",
        "BEGIN READ ONLY",
        "SHOW transaction_read_only",
        "SELECT id, v FROM t",
        "INSERT INTO t VALUES (2, 'b')",
        "ROLLBACK",
        "BEGIN READ ONLY",
        "UPDATE t SET v = 'b' WHERE id = 1",
        "ROLLBACK",
        "BEGIN READ ONLY",
        "UPDATE t SET v = upper(v)",
        "ROLLBACK",
        "BEGIN READ ONLY",
        "DELETE FROM t",
        "ROLLBACK",
        "BEGIN READ ONLY",
        "CREATE TABLE u (id BIGINT PRIMARY KEY)",
        "ROLLBACK",
        "BEGIN READ ONLY",
        "SELECT nextval('s')",
        "ROLLBACK",
        "BEGIN READ ONLY",
        "TRUNCATE t",
        "ROLLBACK",
        "BEGIN",
        "SET TRANSACTION READ ONLY",
        "INSERT INTO t VALUES (2, 'b')",
        "ROLLBACK",
        "SET default_transaction_read_only = on",
        "INSERT INTO t VALUES (2, 'b')",
        "SELECT count(*) FROM t",
        "BEGIN",
        "SHOW transaction_read_only",
        "DELETE FROM t WHERE id = 1",
        "ROLLBACK",
        "BEGIN READ WRITE",
        "INSERT INTO t VALUES (3, 'c')",
        "COMMIT",
        "SET default_transaction_read_only = off",
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
        "INSERT INTO t VALUES (4, 'd')",
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
        "INSERT INTO t VALUES (4, 'd')",
        "SELECT nextval('s')",
        "SELECT id, v FROM t ORDER BY id",
        "SET default_transaction_read_only = maybe",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// `unnest(...) WITH ORDINALITY` in FROM: alone, with column aliases, correlated with
/// an outer row (Django's constraint query) and reading the FROM item before it
/// (Django's index query), each element with its position from 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unnest_with_ordinality_numbers_elements_as_postgres_does() {
    let differences = compare(&[&[
        "SELECT * FROM unnest(ARRAY['a', 'b', 'c']) WITH ORDINALITY",
        "SELECT x, n FROM unnest(ARRAY[10, 20, 30]) WITH ORDINALITY t(x, n) WHERE n > 1 ORDER BY n",
        "SELECT t.x FROM unnest(ARRAY[3, 1, 2]) WITH ORDINALITY AS t(x, n) ORDER BY t.n DESC",
        "SELECT count(*) FROM unnest(ARRAY[]::integer[]) WITH ORDINALITY",
        "CREATE TABLE t (id BIGINT PRIMARY KEY, tags TEXT[])",
        "INSERT INTO t VALUES (1, ARRAY['x', 'y']), (2, ARRAY['z']), (3, ARRAY[]::text[])",
        "SELECT id, (SELECT string_agg(v, ',' ORDER BY n DESC) FROM unnest(t.tags) \
         WITH ORDINALITY u(v, n)) FROM t ORDER BY id",
        "SELECT id, u.v, u.n FROM t, unnest(t.tags) WITH ORDINALITY u(v, n) ORDER BY id, u.n",
        "SELECT * FROM t, unnest(t.tags) WITH ORDINALITY u(v, n) ORDER BY id, n",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Views: read alone, joined, nested, in subqueries and WITH-shadowed; a `SELECT *`
/// view keeps its columns when the table gains one; OR REPLACE keeps the old columns
/// or is 42P16; what depends on a view or a table refuses DROP (2BP01) unless CASCADE;
/// the catalogs list views and their columns; a block's CREATE/DROP VIEW rolls back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_read_and_refuse_as_postgres_does() {
    let differences = compare(&[&[
        "CREATE TABLE t (id BIGINT PRIMARY KEY, grp VARCHAR(10), amount NUMERIC(10,2), n INTEGER)",
        "CREATE TABLE u (grp TEXT PRIMARY KEY, label TEXT)",
        "INSERT INTO t VALUES (1, 'x', 1.50, 10), (2, 'y', 2.25, NULL), (3, 'x', 3.00, 30)",
        "INSERT INTO u VALUES ('x', 'Ex'), ('y', 'Why')",
        "CREATE VIEW totals AS SELECT grp, sum(amount) AS total, count(*) FROM t GROUP BY grp",
        "SELECT * FROM totals ORDER BY grp",
        "SELECT count, grp FROM totals WHERE total > 2 ORDER BY 2",
        "CREATE VIEW labelled (name, sum_total) AS SELECT u.label, totals.total \
         FROM totals JOIN u ON u.grp = totals.grp",
        "SELECT * FROM labelled ORDER BY name",
        "SELECT l.name FROM labelled AS l WHERE l.sum_total < 3",
        "SELECT id FROM t WHERE grp IN (SELECT grp FROM totals WHERE count > 1) ORDER BY id",
        "SELECT (SELECT max(total) FROM totals) AS m",
        "WITH totals AS (SELECT 'shadow' AS grp) SELECT * FROM totals",
        "CREATE VIEW doubled AS SELECT id, n * 2, upper(grp) FROM t WHERE id < 3",
        "SELECT * FROM doubled ORDER BY id",
        "CREATE VIEW both_ AS SELECT id, grp::text FROM t WHERE id = 1 UNION ALL SELECT 9, label FROM u",
        "SELECT * FROM both_ ORDER BY id, grp",
        "CREATE VIEW star AS SELECT * FROM t",
        "ALTER TABLE t ADD COLUMN extra TEXT",
        "SELECT * FROM star ORDER BY id",
        "INSERT INTO u SELECT grp || '2', 'copied' FROM totals",
        "SELECT * FROM u ORDER BY grp",
        "CREATE OR REPLACE VIEW star AS SELECT id, grp FROM t",
        "CREATE OR REPLACE VIEW star AS SELECT id, grp AS g, amount, n FROM t",
        "CREATE OR REPLACE VIEW star AS SELECT id, grp, amount::float8, n FROM t",
        "CREATE OR REPLACE VIEW star AS SELECT id, grp, amount, n, extra FROM t",
        "SELECT * FROM star ORDER BY id",
        "CREATE VIEW star AS SELECT 1",
        "CREATE VIEW t AS SELECT 1",
        "CREATE OR REPLACE VIEW t AS SELECT 1",
        "CREATE VIEW bad AS SELECT nope FROM t",
        "CREATE VIEW bad AS SELECT * FROM nope",
        "CREATE VIEW bad (a, b, c) AS SELECT 1, 2",
        "CREATE VIEW bad AS SELECT 1 AS a, 2 AS a",
        "CREATE VIEW bad (a, a) AS SELECT 1, 2",
        "CREATE VIEW bad AS SELECT $1",
        "TRUNCATE totals",
        "DROP VIEW t",
        "DROP TABLE totals",
        "DROP TABLE IF EXISTS totals",
        "DROP VIEW nope",
        "DROP VIEW IF EXISTS nope",
        "DROP TABLE u",
        "DROP VIEW totals",
        "ALTER TABLE t DROP COLUMN n",
        // The catalogs' own column types are not yet PostgreSQL's (`varchar`, `"char"`,
        // `integer`): their values are compared as text.
        "SELECT table_name, table_type::text FROM information_schema.tables \
         WHERE table_schema = 'public' ORDER BY 1",
        "SELECT table_name, check_option::text FROM information_schema.views \
         WHERE table_schema = 'public' ORDER BY 1",
        "SELECT table_name, column_name, ordinal_position::text, data_type::text, \
         is_nullable::text, character_maximum_length::text, numeric_precision::text, \
         numeric_scale::text FROM information_schema.columns \
         WHERE table_name IN ('star', 'totals') ORDER BY 1, 3",
        "SELECT c.relkind::text, a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_class c \
         JOIN pg_attribute a ON a.attrelid = c.oid WHERE c.relname = 'labelled' ORDER BY a.attnum",
        "SELECT viewname, viewowner FROM pg_views WHERE schemaname = 'public' ORDER BY 1",
        "SELECT pg_get_viewdef('star'::regclass) IS NOT NULL",
        "BEGIN",
        "CREATE VIEW fleeting AS SELECT id FROM t",
        "DROP VIEW doubled",
        "SELECT count(*) FROM fleeting",
        "ROLLBACK",
        "SELECT viewname FROM pg_views WHERE schemaname = 'public' ORDER BY 1",
        "SELECT * FROM doubled ORDER BY id",
        "DROP VIEW totals CASCADE",
        "SELECT viewname FROM pg_views WHERE schemaname = 'public' ORDER BY 1",
        "DROP TABLE t CASCADE",
        "SELECT viewname FROM pg_views WHERE schemaname = 'public' ORDER BY 1",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Two `unnest`s of scalar subqueries in one SELECT list each read their own
/// subquery's array, also when the subqueries' columns would have the same name
/// (pgcli's foreign-key query unnests a key's parent and child columns so).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unnests_of_subqueries_read_each_their_own() {
    let differences = compare(&[&[
        "CREATE TABLE t (k BIGINT PRIMARY KEY, a BIGINT[], b BIGINT[])",
        "INSERT INTO t VALUES (1, ARRAY[1, 2], ARRAY[3]), (2, ARRAY[4], ARRAY[5, 6])",
        "SELECT k, unnest((SELECT array_agg(v ORDER BY v) FROM (SELECT unnest(a) AS v) x)) AS p, \
         unnest((SELECT array_agg(v ORDER BY v) FROM (SELECT unnest(b) AS v) x)) AS c \
         FROM t ORDER BY k, p, c",
        "SELECT unnest((SELECT max(a) FROM t)), unnest((SELECT max(b) FROM t))",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A catalog table pgwide leaves empty still aggregates to one row (`count(*)` is 0),
/// as PostgreSQL's empty tables do; without an aggregate it has no rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_catalog_tables_aggregate_to_one_row() {
    let differences = compare(&[&[
        "SELECT count(*) FROM pg_catalog.pg_trigger",
        "SELECT count(*) FROM pg_replication_slots",
        "SELECT count(*), count(polname) FROM pg_policy",
        "SELECT count(*) FROM pg_policy HAVING count(*) > 0",
        "CREATE TABLE t (k BIGINT PRIMARY KEY)",
        "SELECT (SELECT count(*) FROM pg_trigger WHERE tgrelid = c.oid) FROM pg_class c \
         WHERE c.relname = 't'",
    ]])
    .await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
