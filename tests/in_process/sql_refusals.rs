//! Whatever pgwide accepts it enforces; what it would store and then ignore it refuses
//! with 0A000, and nothing is created or changed. Each statement here was once accepted
//! and then ignored: a NOT NULL column took NULLs, VARCHAR(3) took 'abcdef', a DEFAULT
//! was not applied (all three now enforced, see `differential_cases`), a TEMP table
//! was permanent, FOR UPDATE locked nothing, SERIALIZABLE gave read committed, SET TIME
//! ZONE changed nothing shown.

use crate::common;

use common::{code, simple_rows, TestServer};

#[tokio::test]
async fn unenforced_declarations_are_refused_and_create_nothing() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    for sql in [
        "CREATE TABLE r (id BIGINT PRIMARY KEY, a TEXT UNIQUE DEFERRABLE INITIALLY DEFERRED)",
        "CREATE TABLE r (id BIGINT PRIMARY KEY, a TEXT, UNIQUE NULLS NOT DISTINCT (a))",
        "CREATE TABLE r (id BIGINT PRIMARY KEY, a JSONB UNIQUE)",
        "CREATE TABLE r (id BIGINT PRIMARY KEY, a BIGINT REFERENCES r MATCH FULL)",
        "CREATE TABLE r (id BIGINT PRIMARY KEY, a BIGINT REFERENCES r ON DELETE SET DEFAULT)",
        "CREATE TABLE r (id BIGINT PRIMARY KEY, a BIGINT, FOREIGN KEY (id) REFERENCES r \
         ON UPDATE CASCADE)",
        "CREATE TABLE r (id BIGINT PRIMARY KEY, a BIGINT CHECK (a ~ 'x'))",
        "CREATE TABLE r (id BIGINT PRIMARY KEY, a BIGINT GENERATED ALWAYS AS (id * 2) STORED)",
        "CREATE TABLE r (id BIGINT PRIMARY KEY, a CHAR(3))",
        "CREATE TABLE r (id BIGINT PRIMARY KEY, a NVARCHAR(3))",
        "CREATE TABLE r (id BIGINT PRIMARY KEY, a VARCHAR(3 OCTETS))",
        "CREATE TABLE r (id BIGINT PRIMARY KEY, a TEXT COLLATE \"C\")",
        "CREATE TEMP TABLE r (id BIGINT PRIMARY KEY)",
        "CREATE OR REPLACE TABLE r (id BIGINT PRIMARY KEY)",
        "CREATE TEMPORARY TABLE r (id BIGINT PRIMARY KEY)",
        "CREATE TEMP TABLE r WITH (primary_key = 'id') AS SELECT 1::bigint AS id",
    ] {
        assert_eq!(code(client.batch_execute(sql).await), "0A000", "{sql}");
        assert_eq!(
            code(client.simple_query("SELECT * FROM r").await),
            "42P01",
            "{sql} created the table"
        );
    }
    // What pgwide enforces (or what is no rule at all) is accepted.
    client
        .batch_execute(
            "CREATE TABLE r (id BIGINT PRIMARY KEY, a VARCHAR, b TEXT NULL, c CHARACTER VARYING)",
        )
        .await
        .expect("plain columns");
    client
        .batch_execute("INSERT INTO r (id) VALUES (1)")
        .await
        .expect("a row");
    for sql in [
        // The row already there would need the default written into it.
        "ALTER TABLE r ADD COLUMN d TEXT DEFAULT 'x'",
        // The rows already there would need values from the sequence.
        "ALTER TABLE r ADD COLUMN s SERIAL",
        "ALTER TABLE r ADD COLUMN s INTEGER GENERATED ALWAYS AS IDENTITY",
        // Rounding to a precision is done for columns, not yet for casts.
        "SELECT '2024-01-01 10:00:00.1234'::timestamp(3)",
        "SELECT CAST(now() AS timestamp(0))",
        "ALTER TABLE r ADD COLUMN d CHAR(10)",
        // pgwide's cursors move forward only: a SCROLL one would not scroll.
        "DECLARE s SCROLL CURSOR WITH HOLD FOR SELECT 1",
        // Its rows are read as FETCH asks: it would see later writes.
        "DECLARE s INSENSITIVE CURSOR WITH HOLD FOR SELECT 1",
        // USING would join another table into a DELETE; it was once ignored.
        "DELETE FROM r USING r AS s WHERE r.id = 1",
        // Indexes pgwide would make but not keep as declared.
        "CREATE INDEX ON r (lower(a))",
        "CREATE INDEX ON r (a) WHERE b IS NOT NULL",
        "CREATE INDEX ON r (a) INCLUDE (b)",
        "CREATE INDEX ON r USING gin (a)",
        "CREATE INDEX ON r (a gin_trgm_ops)",
        // Types whose values would have to be rewritten, or computed by USING.
        "ALTER TABLE r ALTER COLUMN b TYPE bigint",
        "ALTER TABLE r ALTER COLUMN b TYPE timestamp",
        "ALTER TABLE r ALTER COLUMN b TYPE varchar(5) USING b::varchar(5)",
    ] {
        assert_eq!(code(client.batch_execute(sql).await), "0A000", "{sql}");
    }
    let columns = simple_rows(
        &client,
        "SELECT count(*) FROM information_schema.columns WHERE table_name = 'r'",
    )
    .await;
    assert_eq!(columns, [["4"]], "no column was added");
}

#[tokio::test]
async fn row_locks_and_isolation_levels_pgwide_does_not_give_are_refused() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE r (id BIGINT PRIMARY KEY, a TEXT)")
        .await
        .expect("setup");
    for sql in [
        // Locks pgwide cannot hold as asked (concurrency::rows_locked_for_update...).
        "SELECT * FROM r FOR UPDATE SKIP LOCKED",
        "SELECT count(*) FROM r FOR UPDATE",
        "EXPLAIN SELECT * FROM r FOR UPDATE",
        "BEGIN ISOLATION LEVEL SERIALIZABLE",
        // A snapshot serves reads only (sql_snapshots has READ ONLY ones).
        "BEGIN ISOLATION LEVEL REPEATABLE READ",
        "BEGIN ISOLATION LEVEL REPEATABLE READ, READ WRITE",
        "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
        "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        "SET default_transaction_isolation = 'serializable'",
        "SET default_transaction_isolation = 'repeatable read'",
    ] {
        assert_eq!(code(client.batch_execute(sql).await), "0A000", "{sql}");
    }
    assert_eq!(
        simple_rows(&client, "SHOW default_transaction_isolation").await,
        [["read committed"]]
    );
    // A refused BEGIN opens no block.
    assert_eq!(code(client.batch_execute("SAVEPOINT s").await), "25P01");
    // What pgwide gives is accepted.
    client
        .batch_execute(
            "BEGIN ISOLATION LEVEL READ COMMITTED, READ WRITE; \
             SET TRANSACTION ISOLATION LEVEL READ COMMITTED; COMMIT; \
             SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED",
        )
        .await
        .expect("read committed");
}

/// Subquery shapes pgwide cannot run are 0A000 with a message that says what to write
/// instead (a correlated subquery in a JOIN's ON condition); the NOT IN shapes DataFusion
/// would answer wrongly (its anti join is not NULL-aware) run as subplans, rightly.
#[tokio::test]
async fn subqueries_pgwide_cannot_run_are_refused() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE s (id BIGINT PRIMARY KEY, a BIGINT, c TEXT); \
             CREATE TABLE u (id BIGINT PRIMARY KEY, k BIGINT, name TEXT); \
             INSERT INTO s VALUES (1, 1, 'x'), (2, NULL, 'y'), (3, 5, 'z'); \
             INSERT INTO u VALUES (1, 1, 'x'), (2, NULL, 'z')",
        )
        .await
        .expect("setup");
    for sql in [
        "SELECT s.id FROM s JOIN u ON s.a NOT IN (SELECT k FROM u AS v WHERE v.name <> s.c)",
        "SELECT s.id FROM s JOIN u ON s.a < (SELECT count(*) FROM u AS v WHERE v.name <> s.c)",
        "SELECT ARRAY(SELECT name FROM u ORDER BY name LIMIT 1)",
    ] {
        let error = client.batch_execute(sql).await.expect_err(sql);
        let message = format!("{error:?}");
        assert_eq!(
            error.code().map(|c| c.code()),
            Some("0A000"),
            "{sql}: {message}"
        );
        assert!(!message.contains("Physical plan"), "{sql}: {message}");
    }
    for (sql, ids) in [
        ("SELECT id FROM s WHERE a NOT IN (SELECT k FROM u WHERE k IS NOT NULL) ORDER BY id", vec!["3"]),
        ("SELECT id FROM s WHERE a NOT IN (SELECT k FROM u) ORDER BY id", vec![]),
        ("SELECT id FROM s WHERE a IN (SELECT k FROM u WHERE u.name = s.c) OR id = 2 ORDER BY id", vec!["1", "2"]),
        ("SELECT id FROM s WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.k < s.a) ORDER BY id", vec!["1", "2"]),
        // Correlated NOT IN, NOT IN under OR, IN under NOT: NULLs on either side keep
        // rows out.
        ("SELECT id FROM s WHERE a NOT IN (SELECT k FROM u WHERE u.name <> s.c) ORDER BY id", vec!["3"]),
        ("SELECT id FROM s WHERE id = 1 OR a NOT IN (SELECT k FROM u) ORDER BY id", vec!["1"]),
        ("SELECT id FROM s WHERE NOT (id = 2 OR a IN (SELECT k FROM u WHERE u.name = s.c)) ORDER BY id", vec![]),
    ] {
        let rows: Vec<String> = simple_rows(&client, sql).await.into_iter().map(|r| r[0].clone()).collect();
        assert_eq!(rows, ids, "{sql}");
    }
}

/// JSON values have an order and groups of their own in PostgreSQL (jsonb) or none at
/// all (json); pgwide refuses to order, group or compare them by their text, and
/// refuses a jsonb key column (42804), whose stored text would not sort as jsonb sorts.
#[tokio::test]
async fn json_ordering_and_grouping_are_refused_not_done_on_text() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE docs (id BIGINT PRIMARY KEY, a JSONB, b JSON); \
             INSERT INTO docs VALUES (1, '{\"n\": 1.0}', '[]'), (2, '{\"n\": 1}', '{}'), \
             (3, '[10]', '[2]')",
        )
        .await
        .expect("json columns");
    for sql in [
        "SELECT a FROM docs ORDER BY a",
        "SELECT a FROM docs WHERE id > 0 ORDER BY a DESC",
        "SELECT a, count(*) FROM docs GROUP BY a",
        "SELECT DISTINCT a FROM docs",
        "SELECT max(a) FROM docs",
        "SELECT a FROM docs WHERE a < '[2]'",
        "SELECT a FROM docs WHERE a IN ('[10]', '{}')",
        "SELECT a FROM docs UNION SELECT '{}'::jsonb",
    ] {
        assert_eq!(code(client.simple_query(sql).await), "0A000", "{sql}");
    }
    assert_eq!(
        code(
            client
                .simple_query("SELECT b FROM docs WHERE b = '[]'")
                .await
        ),
        "42883",
        "json has no equality"
    );
    // As a float or boolean key is: no stored form sorts as the values do.
    assert_eq!(
        code(
            client
                .simple_query("CREATE TABLE k (id JSONB PRIMARY KEY)")
                .await
        ),
        "42804"
    );
    // jsonb equality is by value: 1.0 equals 1, which text equality would miss.
    let rows = simple_rows(
        &client,
        "SELECT id FROM docs WHERE a = '{\"n\": 1}' ORDER BY id",
    )
    .await;
    assert_eq!(rows, vec![vec!["1".to_string()], vec!["2".to_string()]]);
}

/// Intervals group as PostgreSQL's by length (`1 mon` and `30 days` are one group);
/// pgwide refuses grouping, DISTINCT and min/max of them rather than group by fields.
#[tokio::test]
async fn interval_grouping_is_refused_not_done_by_fields() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE spans (id BIGINT PRIMARY KEY, d INTERVAL); \
             INSERT INTO spans VALUES (1, '1 mon'), (2, '30 days'), (3, '1 day')",
        )
        .await
        .expect("interval column");
    for sql in [
        "SELECT d, count(*) FROM spans GROUP BY d",
        "SELECT DISTINCT d FROM spans",
        "SELECT max(d) FROM spans",
        "SELECT count(DISTINCT d) FROM spans",
    ] {
        assert_eq!(code(client.simple_query(sql).await), "0A000", "{sql}");
    }
    // Comparison and ORDER BY are by length, as PostgreSQL's.
    let rows = simple_rows(
        &client,
        "SELECT id FROM spans WHERE d = '1 mon' ORDER BY d, id",
    )
    .await;
    assert_eq!(rows, vec![vec!["1".to_string()], vec!["2".to_string()]]);
}

/// `CHAR(n)` pads a shorter value with blanks that PostgreSQL's comparisons ignore;
/// pgwide has no blank-padded type, so a cast that would pad is refused (on the fast
/// path and in DataFusion alike) rather than answered unpadded, and nothing is written.
#[tokio::test]
async fn char_casts_that_would_pad_are_refused() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE words (id BIGINT PRIMARY KEY, w TEXT); \
             INSERT INTO words VALUES (1, 'abc'), (2, 'a')",
        )
        .await
        .expect("words");
    for sql in [
        "SELECT 'ab'::char(4)",
        "SELECT w::char(3) FROM words ORDER BY id",
        "SELECT count(*) FROM words WHERE w::char(2) = 'ab'",
        "INSERT INTO words VALUES (3, 'x'::char(2))",
        // Another dialect's lengths are not taken as unlimited or as characters.
        "SELECT 'abc'::varchar(MAX)",
        "SELECT w::varchar(MAX) FROM words",
    ] {
        assert_eq!(code(client.simple_query(sql).await), "0A000", "{sql}");
    }
    // What needs no padding is cut as PostgreSQL cuts it.
    let rows = simple_rows(
        &client,
        "SELECT w::char(1), 'xyz'::char FROM words ORDER BY id",
    )
    .await;
    assert_eq!(
        rows,
        vec![
            vec!["a".to_string(), "x".to_string()],
            vec!["a".to_string(), "x".to_string()]
        ]
    );
    let count = simple_rows(&client, "SELECT count(*) FROM words").await;
    assert_eq!(count, vec![vec!["2".to_string()]]);
}

/// What pgwide cannot do with enum types is refused, never half done: a key column of
/// one (its stored text would not sort in the labels' order), `min`/`max` (they would
/// compare text), DROP TYPE ... CASCADE over a column, renaming a label a column may
/// hold, other kinds of CREATE TYPE, and ALTER/DROP TYPE in a block that did not create
/// the type. A type a block created goes when it rolls back.
#[tokio::test]
async fn enum_type_operations_pgwide_cannot_do_are_refused() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy'); \
             CREATE TABLE feelings (id BIGINT PRIMARY KEY, m mood); \
             CREATE TABLE plain (id BIGINT PRIMARY KEY, s TEXT); \
             INSERT INTO feelings VALUES (1, 'ok'), (2, 'happy')",
        )
        .await
        .expect("an enum and a table of it");
    for (sql, expected) in [
        ("CREATE TABLE keyed (m mood PRIMARY KEY)", "42804"),
        ("CREATE TABLE listed (id BIGINT PRIMARY KEY, ms mood[])", "0A000"),
        ("ALTER TABLE feelings ADD COLUMN ms mood[]", "0A000"),
        ("ALTER TABLE feelings ALTER COLUMN m TYPE text", "0A000"),
        ("ALTER TABLE plain ALTER COLUMN s TYPE mood", "0A000"),
        ("SELECT max(m) FROM feelings", "0A000"),
        ("SELECT min(m) FROM feelings WHERE id > 0", "0A000"),
        ("DROP TYPE mood CASCADE", "0A000"),
        ("DROP TYPE mood", "2BP01"),
        ("ALTER TYPE mood RENAME VALUE 'ok' TO 'fine'", "0A000"),
        ("CREATE TYPE pair AS (a INTEGER, b TEXT)", "0A000"),
        ("CREATE TYPE text AS ENUM ('a')", "42710"),
        ("CREATE TYPE feelings AS ENUM ('a')", "42710"),
        ("CREATE TABLE mood (id BIGINT PRIMARY KEY)", "42710"),
        ("CREATE TYPE long AS ENUM ('a', 'a')", "42710"),
        (
            "CREATE TYPE long AS ENUM ('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')",
            "22023",
        ),
        ("INSERT INTO feelings VALUES (3, 'glad')", "22P02"),
        ("UPDATE feelings SET m = 'glad' WHERE id = 1", "22P02"),
    ] {
        assert_eq!(code(client.simple_query(sql).await), expected, "{sql}");
    }
    // Nothing above changed the table or the type.
    let rows = simple_rows(&client, "SELECT id, m FROM feelings ORDER BY m DESC").await;
    assert_eq!(
        rows,
        vec![
            vec!["2".to_string(), "happy".to_string()],
            vec!["1".to_string(), "ok".to_string()],
        ]
    );
    // In a block: a type the block created is dropped by ROLLBACK; one it did not
    // create cannot be altered or dropped there.
    client
        .batch_execute(
            "BEGIN; CREATE TYPE colour AS ENUM ('red'); \
             ALTER TYPE colour ADD VALUE 'green'; \
             CREATE TABLE paint (id BIGINT PRIMARY KEY, c colour); ROLLBACK",
        )
        .await
        .expect("a block that creates a type");
    let left = simple_rows(
        &client,
        "SELECT count(*) FROM pg_type WHERE typname IN ('colour', '_colour')",
    )
    .await;
    assert_eq!(left, vec![vec!["0".to_string()]]);
    client.batch_execute("BEGIN").await.expect("begin");
    assert_eq!(
        code(client.simple_query("ALTER TYPE mood ADD VALUE 'meh'").await),
        "0A000"
    );
    client.batch_execute("ROLLBACK").await.expect("rollback");
}

/// What pgwide does not do with views is refused and changes nothing: writing through
/// one (PostgreSQL writes through a simple view), COPY, TRUNCATE, ALTER or an index of
/// one, materialized and temporary views, and ALTER TABLE that would change a table
/// under a view's query text.
#[tokio::test]
async fn view_operations_pgwide_cannot_do_are_refused() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE base (id BIGINT PRIMARY KEY, s TEXT, n BIGINT); \
             INSERT INTO base VALUES (1, 'a', 10), (2, 'b', 20); \
             CREATE VIEW simple AS SELECT id, s FROM base; CREATE ROLE viewer",
        )
        .await
        .expect("a table and a view of it");
    for (sql, expected) in [
        ("INSERT INTO simple VALUES (3, 'c')", "0A000"),
        ("UPDATE simple SET s = 'z' WHERE id = 1", "0A000"),
        ("DELETE FROM simple WHERE id = 1", "0A000"),
        ("TRUNCATE simple", "42809"),
        ("COPY simple TO STDOUT", "42809"),
        ("COPY simple FROM STDIN", "42809"),
        ("CREATE INDEX simple_s ON simple (s)", "42809"),
        ("ALTER TABLE simple RENAME TO other", "0A000"),
        ("ALTER TABLE base RENAME TO other", "0A000"),
        ("ALTER TABLE base RENAME COLUMN s TO t", "0A000"),
        ("ALTER TABLE base ALTER COLUMN n TYPE TEXT", "0A000"),
        ("ALTER TABLE base DROP COLUMN n", "2BP01"),
        ("CREATE MATERIALIZED VIEW m AS SELECT 1", "0A000"),
        ("CREATE TEMPORARY VIEW tv AS SELECT 1", "0A000"),
        (
            "CREATE VIEW opts WITH (security_barrier = true) AS SELECT 1",
            "0A000",
        ),
        ("CREATE VIEW IF NOT EXISTS simple AS SELECT 1", "42601"),
        (
            "CREATE OR REPLACE VIEW simple AS SELECT id, s FROM simple",
            "42P17",
        ),
        ("GRANT SELECT ON simple TO viewer", "0A000"),
    ] {
        assert_eq!(code(client.simple_query(sql).await), expected, "{sql}");
    }
    // Nothing above changed the table or the view.
    let rows = simple_rows(&client, "SELECT * FROM simple ORDER BY id").await;
    assert_eq!(
        rows,
        vec![
            vec!["1".to_string(), "a".to_string()],
            vec!["2".to_string(), "b".to_string()],
        ]
    );
    // A column added to the table can be dropped again: no view reads it by name, but
    // pgwide cannot tell, so the view must go first.
    client
        .batch_execute("DROP VIEW simple; ALTER TABLE base DROP COLUMN n")
        .await
        .expect("the drop once the view is gone");
}

/// ALTER SEQUENCE forms pgwide does not have are 0A000, and so is a RESTART inside a
/// transaction block of a sequence the block did not create (values handed out after
/// it would come again if the block rolled back); nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequence_changes_pgwide_cannot_do_are_refused() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE t (id SERIAL PRIMARY KEY, v BIGINT); CREATE SEQUENCE s")
        .await
        .expect("a table with a SERIAL and a sequence");
    for (sql, expected) in [
        ("ALTER SEQUENCE s RENAME TO s2", "0A000"),
        ("ALTER SEQUENCE s OWNER TO postgres", "0A000"),
        ("ALTER SEQUENCE s SET SCHEMA public", "0A000"),
        ("ALTER SEQUENCE t_id_seq OWNED BY NONE", "0A000"),
        ("ALTER SEQUENCE t_id_seq OWNED BY t.v", "0A000"),
    ] {
        assert_eq!(code(client.simple_query(sql).await), expected, "{sql}");
    }
    client.batch_execute("BEGIN").await.expect("BEGIN");
    assert_eq!(
        code(client.simple_query("ALTER SEQUENCE s RESTART WITH 7").await),
        "0A000"
    );
    client.batch_execute("ROLLBACK").await.expect("ROLLBACK");
    let rows = simple_rows(&client, "SELECT nextval('s'), nextval('t_id_seq')").await;
    assert_eq!(rows, vec![vec!["1".to_string(), "1".to_string()]]);
    // A block that made the sequence may restart it: rolling back drops it.
    client
        .batch_execute("BEGIN; CREATE SEQUENCE s2; ALTER SEQUENCE s2 RESTART WITH 7; ROLLBACK")
        .await
        .expect("a restart of a sequence the block created");
    assert_eq!(
        code(client.simple_query("SELECT nextval('s2')").await),
        "42P01"
    );
}
