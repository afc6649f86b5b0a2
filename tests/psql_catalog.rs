//! psql's meta-commands (`\l`, `\dt`, `\d`, `\d+`, `\x`) and catalog queries against the
//! real `pgwide serve` binary, compared with `tests/psql/catalog.expected` (rewrite it
//! with `PGWIDE_BLESS=1`). The expected file holds no OIDs or times, so it is stable.

mod server_process;

use server_process::Pgwide;

#[test]
fn psql_meta_commands_describe_tables() {
    let server = Pgwide::fresh();
    let root = env!("CARGO_MANIFEST_DIR");
    let output = server.psql_args(&["-f", &format!("{root}/tests/psql/catalog.sql")]);
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
        let server = Pgwide::start(&data, &[], &[]);
        let created = server.psql_args(&["-c", "CREATE TABLE a (k TEXT PRIMARY KEY)"]);
        assert!(created.status.success());
        server.psql_args(&["-c", "CREATE TABLE b (k BIGINT PRIMARY KEY, v TEXT)"]);
        server.psql_args(&["-c", "DROP TABLE a"]);
        server.psql_args(&["-c", "CREATE TABLE c (k TEXT PRIMARY KEY)"]);
        server.psql_args(&["-A", "-t", "-c", query]).stdout
    };
    let after = Pgwide::start(&data, &[], &[])
        .psql_args(&["-A", "-t", "-c", query])
        .stdout;
    let before = String::from_utf8_lossy(&before).into_owned();
    assert_eq!(before.lines().count(), 4, "b, b_pkey, c, c_pkey: {before}");
    assert_eq!(before, String::from_utf8_lossy(&after));
}

/// Declared SMALLINT, INTEGER and REAL columns keep their types across a restart (the
/// catalog records them), and so does the rounding of REAL values.
#[test]
fn declared_column_types_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let query = "SELECT string_agg(atttypid::text, ' ' ORDER BY attnum) FROM pg_attribute \
                 WHERE attrelid = 't'::regclass AND attnum > 1 \
                 UNION ALL SELECT (r = 0.1::real)::text || ' ' || r::text FROM t";
    let before = {
        let server = Pgwide::start(&data, &[], &[]);
        server.setup(&[
            "CREATE TABLE t (k BIGINT PRIMARY KEY, s SMALLINT, i INTEGER)",
            "ALTER TABLE t ADD COLUMN r REAL",
            "INSERT INTO t VALUES (1, 2, 3, 0.1)",
        ]);
        server.psql_args(&["-A", "-t", "-c", query]).stdout
    };
    let after = Pgwide::start(&data, &[], &[])
        .psql_args(&["-A", "-t", "-c", query])
        .stdout;
    let before = String::from_utf8_lossy(&before).into_owned();
    // int2, int4 and float4; the REAL value is the real nearest 0.1.
    assert_eq!(before.trim(), "21 23 700\ntrue 0.1");
    assert_eq!(before, String::from_utf8_lossy(&after));
}

/// An enum type, its labels' order (one added before another included) and the columns
/// declared with it survive a restart: values still sort in that order, a label the
/// type lacks is still refused.
/// A view keeps its query and its columns across a restart, and reads the tables'
/// rows through them.
#[test]
fn views_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let query = "SELECT * FROM per_group ORDER BY grp";
    let before = {
        let server = Pgwide::start(&data, &[], &[]);
        server.setup(&[
            "CREATE TABLE t (k BIGINT PRIMARY KEY, grp TEXT, n BIGINT)",
            "INSERT INTO t VALUES (1, 'a', 1), (2, 'a', 2), (3, 'b', 5)",
            "CREATE VIEW per_group (grp, total) AS SELECT grp, sum(n) FROM t GROUP BY grp",
        ]);
        server.psql_args(&["-A", "-t", "-c", query]).stdout
    };
    let server = Pgwide::start(&data, &[], &[]);
    let after = server.psql_args(&["-A", "-t", "-c", query]).stdout;
    let before = String::from_utf8_lossy(&before).into_owned();
    assert_eq!(before.trim(), "a|3\nb|5");
    assert_eq!(before, String::from_utf8_lossy(&after));
    let refused = server.psql_args(&["-c", "DROP TABLE t"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("view per_group depends on table t"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

/// An altered sequence keeps its new definition and goes on where it was after a
/// restart: the values it handed out before never come again.
#[test]
fn altered_sequences_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let definition = "SELECT format_type(seqtypid, NULL), seqincrement, seqmax \
                      FROM pg_sequence WHERE seqrelid = 's'::regclass";
    let before = {
        let server = Pgwide::start(&data, &[], &[]);
        server.setup(&[
            "CREATE SEQUENCE s AS integer",
            "ALTER SEQUENCE s AS bigint INCREMENT BY 10 RESTART WITH 100",
        ]);
        let taken = server.psql_args(&["-A", "-t", "-c", "SELECT nextval('s'), nextval('s')"]);
        assert_eq!(String::from_utf8_lossy(&taken.stdout).trim(), "100|110");
        server.psql_args(&["-A", "-t", "-c", definition]).stdout
    };
    let server = Pgwide::start(&data, &[], &[]);
    let after = server.psql_args(&["-A", "-t", "-c", definition]).stdout;
    let before = String::from_utf8_lossy(&before).into_owned();
    assert_eq!(before.trim(), "bigint|10|9223372036854775807");
    assert_eq!(before, String::from_utf8_lossy(&after));
    let next = server.psql_args(&["-A", "-t", "-c", "SELECT nextval('s')"]);
    let next: i64 = String::from_utf8_lossy(&next.stdout)
        .trim()
        .parse()
        .unwrap();
    assert!(next > 110 && (next - 100) % 10 == 0, "{next}");
}

#[test]
fn enum_types_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let query = "SELECT string_agg(m::text, ' ' ORDER BY m) FROM t \
                 UNION ALL SELECT format_type(atttypid, NULL) FROM pg_attribute \
                 WHERE attrelid = 't'::regclass AND attname = 'm'";
    let before = {
        let server = Pgwide::start(&data, &[], &[]);
        server.setup(&[
            "CREATE TYPE mood AS ENUM ('sad', 'happy')",
            "ALTER TYPE mood ADD VALUE 'ok' BEFORE 'happy'",
            "CREATE TABLE t (k BIGINT PRIMARY KEY, m mood)",
            "INSERT INTO t VALUES (1, 'happy'), (2, 'ok'), (3, 'sad')",
        ]);
        server.psql_args(&["-A", "-t", "-c", query]).stdout
    };
    let server = Pgwide::start(&data, &[], &[]);
    let after = server.psql_args(&["-A", "-t", "-c", query]).stdout;
    let before = String::from_utf8_lossy(&before).into_owned();
    assert_eq!(before.trim(), "sad ok happy\nmood");
    assert_eq!(before, String::from_utf8_lossy(&after));
    let refused = server.psql_args(&["-c", "INSERT INTO t VALUES (4, 'glad')"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("invalid input value for enum mood: \"glad\""),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}
