//! Authentication and privileges over the wire against the real binary: SCRAM with
//! tokio-postgres and psql, wrong password and missing user (28P01, one message),
//! MD5 off by default and on when enabled, role statements and their errors, table
//! privileges on the fast paths, DataFusion and COPY (42501) and as the privilege
//! inquiry functions report them, CONNECT per database,
//! roles surviving a restart, and the start-up refusal on a non-loopback address.

mod server_process;

use bytes::{Buf, BufMut, BytesMut};
use server_process::{code_of, connect, Pgwide};
use std::io::{Read, Write};
use std::process::Stdio;

const SUPER_PW: &str = "correct horse battery staple";

fn superuser_env() -> [(&'static str, &'static str); 1] {
    [("PGWIDE_SUPERUSER_PASSWORD", SUPER_PW)]
}

async fn superuser(server: &Pgwide) -> tokio_postgres::Client {
    connect(server.port, "postgres", Some(SUPER_PW), "postgres")
        .await
        .expect("superuser connects")
}

async fn expect_code(client: &tokio_postgres::Client, sql: &str, code: &str) -> String {
    let e = client
        .simple_query(sql)
        .await
        .expect_err(&format!("{sql} must fail"));
    let (got, message) = code_of(&e);
    assert_eq!(got, code, "{sql}: {message}");
    message
}

#[tokio::test]
async fn scram_login_wrong_password_and_missing_user() {
    let dir = tempfile::tempdir().unwrap();
    let server = Pgwide::start(dir.path(), &[], &superuser_env());
    let client = superuser(&server).await;
    let row = client.query_one("SELECT 'in'", &[]).await.unwrap();
    assert_eq!(row.get::<_, String>(0), "in");

    let wrong = connect(server.port, "postgres", Some("nope"), "postgres")
        .await
        .err()
        .expect("wrong password refused");
    assert_eq!(
        code_of(&wrong),
        (
            "28P01".to_string(),
            "password authentication failed for user \"postgres\"".to_string()
        )
    );
    let missing = connect(server.port, "mallory", Some("nope"), "postgres")
        .await
        .err()
        .expect("missing user refused");
    assert_eq!(
        code_of(&missing),
        (
            "28P01".to_string(),
            "password authentication failed for user \"mallory\"".to_string()
        ),
        "a missing user looks exactly like a wrong password"
    );
    assert!(
        connect(server.port, "postgres", None, "postgres")
            .await
            .is_err(),
        "no password, no session"
    );
    // The server still serves after the refusals.
    client.simple_query("SELECT 2").await.unwrap();
}

#[tokio::test]
async fn psql_logs_in_with_scram() {
    let dir = tempfile::tempdir().unwrap();
    let server = Pgwide::start(dir.path(), &[], &superuser_env());
    let ok = server.psql(
        "host=127.0.0.1 user=postgres dbname=postgres",
        "SELECT 40 + 2",
        &[("PGPASSWORD", SUPER_PW)],
    );
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&ok.stdout).trim(), "42");
    let bad = server.psql(
        "host=127.0.0.1 user=postgres dbname=postgres",
        "SELECT 1",
        &[("PGPASSWORD", "wrong")],
    );
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("password authentication failed for user \"postgres\""),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

#[tokio::test]
async fn loopback_trust_ends_when_a_password_exists() {
    let dir = tempfile::tempdir().unwrap();
    let server = Pgwide::start(dir.path(), &[], &[]);
    let anyone = connect(server.port, "anyone", None, "postgres")
        .await
        .expect("trusted on loopback with no roles");
    anyone
        .simple_query("CREATE ROLE admin WITH SUPERUSER LOGIN PASSWORD 'adm1n-pw'")
        .await
        .unwrap();
    let refused = connect(server.port, "anyone", Some("whatever"), "postgres")
        .await
        .err()
        .expect("passwords required from now on");
    assert_eq!(code_of(&refused).0, "28P01");
    let admin = connect(server.port, "admin", Some("adm1n-pw"), "postgres")
        .await
        .expect("admin logs in");
    admin.simple_query("SELECT 1").await.unwrap();
}

/// `postgres`, which pg_roles lists before anyone creates it, exists for ALTER ROLE
/// too: setting its password while clients are trusted keeps the owner able to log in
/// once passwords are required. It cannot be created again or dropped, and its
/// verifier, like every role's, is in pg_authid for superusers only.
#[tokio::test]
async fn the_owner_role_exists_before_it_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let server = Pgwide::start(dir.path(), &[], &[]);
    let trusted = connect(server.port, "postgres", None, "postgres")
        .await
        .expect("trusted on loopback with no roles");
    trusted
        .simple_query("ALTER ROLE postgres PASSWORD 'owner-pw'")
        .await
        .expect("the owner's password is set");
    expect_code(&trusted, "CREATE ROLE postgres", "42710").await;
    expect_code(&trusted, "DROP ROLE pg_database_owner", "2BP01").await;
    let owner = connect(server.port, "postgres", Some("owner-pw"), "postgres")
        .await
        .expect("the owner logs in with its new password");
    owner
        .simple_query(
            "CREATE ROLE reader LOGIN PASSWORD 'reader-pw'; \
             GRANT CONNECT ON DATABASE postgres TO reader; \
             CREATE ROLE boss SUPERUSER CREATEDB CREATEROLE BYPASSRLS",
        )
        .await
        .expect("a superuser may be said to have what superusers have");
    expect_code(&owner, "CREATE ROLE clerk CREATEDB", "0A000").await;
    let verifier = owner
        .query_one(
            "SELECT rolpassword FROM pg_authid WHERE rolname = 'reader'",
            &[],
        )
        .await
        .expect("a superuser reads pg_authid");
    assert!(verifier
        .get::<_, String>(0)
        .starts_with("SCRAM-SHA-256$4096:"));
    let reader = connect(server.port, "reader", Some("reader-pw"), "postgres")
        .await
        .expect("reader logs in");
    expect_code(&reader, "SELECT rolpassword FROM pg_authid", "42501").await;
}

#[tokio::test]
async fn role_statements_and_their_errors() {
    let dir = tempfile::tempdir().unwrap();
    let server = Pgwide::start(dir.path(), &[], &superuser_env());
    let su = superuser(&server).await;
    su.simple_query("CREATE ROLE alice LOGIN PASSWORD 'alice-pw-1'")
        .await
        .unwrap();
    su.simple_query("CREATE USER bob WITH PASSWORD 'bob-pw'")
        .await
        .unwrap();
    expect_code(&su, "CREATE ROLE alice", "42710").await;
    expect_code(&su, "DROP ROLE nobody_here", "42704").await;
    su.simple_query("DROP ROLE IF EXISTS nobody_here")
        .await
        .unwrap();
    expect_code(&su, "ALTER ROLE nobody_here LOGIN", "42704").await;
    expect_code(
        &su,
        "GRANT CONNECT ON DATABASE postgres TO nobody_here",
        "42704",
    )
    .await;

    // CREATE USER logs in by default; a NOLOGIN role cannot.
    let bob = connect(server.port, "bob", Some("bob-pw"), "postgres").await;
    assert_eq!(code_of(&bob.err().unwrap()).0, "42501", "no CONNECT yet");
    su.simple_query("GRANT CONNECT ON DATABASE postgres TO alice, bob")
        .await
        .unwrap();
    connect(server.port, "bob", Some("bob-pw"), "postgres")
        .await
        .expect("bob connects");
    su.simple_query("ALTER ROLE bob NOLOGIN").await.unwrap();
    let e = connect(server.port, "bob", Some("bob-pw"), "postgres")
        .await
        .err()
        .unwrap();
    assert_eq!(
        code_of(&e),
        (
            "28000".to_string(),
            "role \"bob\" is not permitted to log in".to_string()
        )
    );

    // A non-superuser manages no roles but may change its own password.
    let alice = connect(server.port, "alice", Some("alice-pw-1"), "postgres")
        .await
        .unwrap();
    expect_code(&alice, "CREATE ROLE eve LOGIN PASSWORD 'x'", "42501").await;
    expect_code(&alice, "ALTER ROLE bob LOGIN", "42501").await;
    expect_code(&alice, "ALTER ROLE alice SUPERUSER", "42501").await;
    expect_code(&alice, "DROP ROLE bob", "42501").await;
    expect_code(&alice, "GRANT CONNECT ON DATABASE postgres TO bob", "42501").await;
    expect_code(&alice, "CREATE TABLE mine (k bigint PRIMARY KEY)", "42501").await;
    alice
        .simple_query("ALTER ROLE alice PASSWORD 'alice-pw-2'")
        .await
        .unwrap();
    assert!(
        connect(server.port, "alice", Some("alice-pw-1"), "postgres")
            .await
            .is_err()
    );
    connect(server.port, "alice", Some("alice-pw-2"), "postgres")
        .await
        .expect("the new password works");

    // pg_roles and pg_user list the real roles, without their verifiers.
    let listed = su
        .query(
            "SELECT rolname, rolsuper, rolcanlogin, rolpassword FROM pg_catalog.pg_roles ORDER BY rolname",
            &[],
        )
        .await
        .unwrap();
    let listed: Vec<(String, bool, bool, Option<String>)> = listed
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    let star = Some("********".to_string());
    assert_eq!(
        listed,
        vec![
            ("alice".to_string(), false, true, star.clone()),
            ("bob".to_string(), false, false, star.clone()),
            // PostgreSQL 15's built-in role that owns schema public.
            ("pg_database_owner".to_string(), false, false, None),
            ("postgres".to_string(), true, true, star.clone()),
        ]
    );
    let users = su
        .query(
            "SELECT usename FROM pg_catalog.pg_user ORDER BY usename",
            &[],
        )
        .await
        .unwrap();
    let users: Vec<String> = users.iter().map(|r| r.get(0)).collect();
    assert_eq!(users, ["alice", "postgres"], "NOLOGIN roles are no users");

    // SUPERUSER makes alice manage roles; DROP ROLE ends bob.
    su.simple_query("ALTER ROLE alice SUPERUSER").await.unwrap();
    alice.simple_query("DROP ROLE bob").await.unwrap();
    expect_code(&alice, "DROP ROLE alice", "55006").await;

    // Passwords are stored as SCRAM verifiers, never in clear.
    drop((su, alice));
    server.stop();
    let mut found = false;
    for entry in walk(dir.path()) {
        let bytes = std::fs::read(&entry).unwrap();
        for secret in ["alice-pw-2", "alice-pw-1", SUPER_PW, "bob-pw"] {
            assert!(
                !contains(&bytes, secret.as_bytes()),
                "{secret} in clear in {}",
                entry.display()
            );
        }
        found |= contains(&bytes, b"SCRAM-SHA-256$4096:");
    }
    assert!(found, "the verifiers are in the data directory");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test]
async fn table_privileges_cover_every_path() {
    let dir = tempfile::tempdir().unwrap();
    let server = Pgwide::start(dir.path(), &[], &superuser_env());
    let su = superuser(&server).await;
    su.batch_execute(
        "CREATE TABLE t (k bigint PRIMARY KEY, v text);
         CREATE TABLE u (k bigint PRIMARY KEY, w text);
         INSERT INTO t VALUES (1, 'one'), (2, 'two');
         INSERT INTO u VALUES (1, 'uno');
         CREATE ROLE reader LOGIN PASSWORD 'reader-pw';
         CREATE ROLE writer LOGIN PASSWORD 'writer-pw';
         CREATE ROLE nobody LOGIN PASSWORD 'nobody-pw';
         GRANT CONNECT ON DATABASE postgres TO reader, writer, nobody;
         GRANT SELECT ON TABLE t TO reader;
         GRANT SELECT ON u TO reader;
         GRANT SELECT, INSERT, UPDATE, DELETE ON t TO writer;",
    )
    .await
    .unwrap();

    let reader = connect(server.port, "reader", Some("reader-pw"), "postgres")
        .await
        .unwrap();
    // Reads: point get (fast path), scan, DataFusion join, COPY TO.
    let row = reader
        .query_one("SELECT v FROM t WHERE k = $1", &[&1i64])
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "one");
    let joined = reader
        .query("SELECT t.v, u.w FROM t JOIN u ON t.k = u.k", &[])
        .await
        .unwrap();
    assert_eq!(joined.len(), 1);
    let copied = server.psql(
        "host=127.0.0.1 user=reader dbname=postgres",
        "COPY t TO STDOUT",
        &[("PGPASSWORD", "reader-pw")],
    );
    assert!(
        copied.status.success(),
        "{}",
        String::from_utf8_lossy(&copied.stderr)
    );
    assert!(String::from_utf8_lossy(&copied.stdout).contains("two"));
    // Writes are denied.
    let m = expect_code(&reader, "INSERT INTO t VALUES (3, 'three')", "42501").await;
    assert_eq!(m, "permission denied for table t");
    expect_code(&reader, "UPDATE t SET v = 'x' WHERE k = 1", "42501").await;
    expect_code(&reader, "DELETE FROM t WHERE k = 1", "42501").await;
    expect_code(&reader, "UPDATE t SET v = 'x'", "42501").await;
    let copy_in = server.psql(
        "host=127.0.0.1 user=reader dbname=postgres",
        "COPY t FROM STDIN",
        &[("PGPASSWORD", "reader-pw")],
    );
    assert!(!copy_in.status.success());
    assert!(
        String::from_utf8_lossy(&copy_in.stderr).contains("permission denied for table t"),
        "{}",
        String::from_utf8_lossy(&copy_in.stderr)
    );

    // No privilege at all: every read path is denied.
    let nobody = connect(server.port, "nobody", Some("nobody-pw"), "postgres")
        .await
        .unwrap();
    let m = expect_code(&nobody, "SELECT v FROM t WHERE k = 1", "42501").await;
    assert_eq!(m, "permission denied for table t");
    expect_code(&nobody, "SELECT count(*) FROM t", "42501").await;
    expect_code(&nobody, "SELECT t.v FROM t JOIN u ON t.k = u.k", "42501").await;
    expect_code(
        &nobody,
        "SELECT * FROM u WHERE k IN (SELECT k FROM t)",
        "42501",
    )
    .await;
    expect_code(&nobody, "SELECT * FROM versions.t", "42501").await;
    expect_code(&nobody, "COPY t TO STDOUT", "42501").await;
    expect_code(&nobody, "EXPLAIN SELECT * FROM t", "42501").await;
    // Catalog queries stay open to every role.
    nobody
        .simple_query("SELECT count(*) FROM pg_catalog.pg_class")
        .await
        .unwrap();

    // The writer writes.
    let writer = connect(server.port, "writer", Some("writer-pw"), "postgres")
        .await
        .unwrap();
    writer
        .batch_execute(
            "INSERT INTO t VALUES (3, 'three');
             UPDATE t SET v = 'uno' WHERE k = 1;
             DELETE FROM t WHERE k = 2;",
        )
        .await
        .unwrap();
    expect_code(&writer, "INSERT INTO u VALUES (9, 'x')", "42501").await;
    expect_code(&writer, "INSERT INTO t SELECT k + 10, w FROM u", "42501").await;

    // REVOKE applies at once, to prepared statements too.
    let prepared = reader
        .prepare("SELECT v FROM t WHERE k = $1")
        .await
        .unwrap();
    reader.query(&prepared, &[&1i64]).await.unwrap();
    su.simple_query("REVOKE SELECT ON t FROM reader")
        .await
        .unwrap();
    let e = reader.query(&prepared, &[&1i64]).await.unwrap_err();
    assert_eq!(code_of(&e).0, "42501");
    expect_code(&reader, "SELECT v FROM t WHERE k = 1", "42501").await;
    reader
        .simple_query("SELECT w FROM u WHERE k = 1")
        .await
        .unwrap();

    // Write-only, as in PostgreSQL: blind writes pass, but a WHERE clause, RETURNING or
    // `n = n + 1` reads the table and needs SELECT too.
    su.batch_execute(
        "CREATE ROLE blind LOGIN PASSWORD 'blind-pw';
         GRANT CONNECT ON DATABASE postgres TO blind;
         GRANT INSERT, UPDATE, DELETE ON t TO blind;",
    )
    .await
    .unwrap();
    let blind = connect(server.port, "blind", Some("blind-pw"), "postgres")
        .await
        .unwrap();
    blind
        .batch_execute("INSERT INTO t VALUES (5, 'five'); UPDATE t SET v = 'all'")
        .await
        .unwrap();
    expect_code(&blind, "UPDATE t SET v = 'x' WHERE k = 5", "42501").await;
    expect_code(&blind, "UPDATE t SET v = v || 'x'", "42501").await;
    expect_code(&blind, "DELETE FROM t WHERE v = 'all'", "42501").await;
    expect_code(
        &blind,
        "INSERT INTO t VALUES (6, 'six') RETURNING v",
        "42501",
    )
    .await;
    expect_code(&blind, "DELETE FROM t RETURNING k", "42501").await;
    let left = su
        .query_one("SELECT count(*) FROM t WHERE v = 'all'", &[])
        .await
        .unwrap();
    assert_eq!(
        left.get::<_, i64>(0),
        3,
        "the denied statements changed nothing"
    );
    blind.batch_execute("DELETE FROM t").await.unwrap();
    let left = su.query_one("SELECT count(*) FROM t", &[]).await.unwrap();
    assert_eq!(left.get::<_, i64>(0), 0);

    su.simple_query("GRANT ALL ON t TO nobody").await.unwrap();
    nobody
        .simple_query("INSERT INTO t VALUES (4, 'four')")
        .await
        .unwrap();
}

/// Asks `sql`, one boolean per column, and returns them.
async fn answers(client: &tokio_postgres::Client, sql: &str) -> Vec<Option<bool>> {
    let row = client
        .query_one(sql, &[])
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    (0..row.len()).map(|i| row.get(i)).collect()
}

/// `has_table_privilege` and its kin answer what the statements themselves would meet:
/// a reader's SELECT is granted and its INSERT refused, a writer's DELETE granted, a
/// role without grants holds nothing on the table, and only a superuser may create in
/// a schema or hold a grant option.
#[tokio::test]
async fn privilege_inquiries_answer_what_is_enforced() {
    let dir = tempfile::tempdir().unwrap();
    let server = Pgwide::start(dir.path(), &[], &superuser_env());
    let su = superuser(&server).await;
    su.batch_execute(
        "CREATE DATABASE other;
         CREATE TABLE t (k bigint PRIMARY KEY, v text);
         CREATE TABLE u (k bigint PRIMARY KEY, w text);
         CREATE ROLE reader LOGIN PASSWORD 'reader-pw';
         CREATE ROLE writer LOGIN PASSWORD 'writer-pw';
         GRANT CONNECT ON DATABASE postgres TO reader, writer;
         GRANT SELECT ON t TO reader;
         GRANT SELECT, INSERT, UPDATE, DELETE ON t TO writer;",
    )
    .await
    .unwrap();
    let reader = connect(server.port, "reader", Some("reader-pw"), "postgres")
        .await
        .unwrap();
    assert_eq!(
        answers(
            &reader,
            "SELECT has_table_privilege('t', 'SELECT'), has_table_privilege('t', 'INSERT'), \
             has_table_privilege('t', 'insert, select'), has_table_privilege('u', 'SELECT'), \
             has_table_privilege('t', 'SELECT WITH GRANT OPTION'), \
             has_table_privilege('pg_class', 'SELECT'), has_table_privilege('pg_class', 'INSERT')"
        )
        .await,
        [true, false, true, false, false, true, false].map(Some)
    );
    // What the answers promise.
    reader.simple_query("SELECT * FROM t").await.unwrap();
    expect_code(&reader, "INSERT INTO t VALUES (1, 'x')", "42501").await;
    expect_code(&reader, "SELECT * FROM u", "42501").await;

    assert_eq!(
        answers(
            &reader,
            "SELECT has_table_privilege('writer', 't', 'DELETE'), \
             has_table_privilege('writer', 't', 'TRUNCATE'), \
             has_table_privilege('writer', 'u', 'SELECT'), \
             has_table_privilege('writer', 't', 'REFERENCES'), \
             has_table_privilege('postgres', 'u', 'REFERENCES'), \
             has_table_privilege('public', 't', 'SELECT')"
        )
        .await,
        [true, true, false, false, true, false].map(Some)
    );
    assert_eq!(
        answers(
            &reader,
            "SELECT has_column_privilege('t', 'v', 'SELECT'), \
             has_column_privilege('t', 'v', 'UPDATE'), has_any_column_privilege('u', 'SELECT'), \
             has_column_privilege('t', 99::smallint, 'SELECT')"
        )
        .await,
        [Some(true), Some(false), Some(false), None]
    );
    assert_eq!(
        answers(
            &reader,
            "SELECT has_schema_privilege('public', 'USAGE'), \
             has_schema_privilege('public', 'CREATE'), \
             has_database_privilege('postgres', 'CONNECT'), \
             has_database_privilege('other', 'CONNECT'), \
             has_database_privilege('postgres', 'CREATE'), \
             pg_has_role('reader', 'MEMBER'), pg_has_role('writer', 'MEMBER'), \
             pg_has_role('postgres', 'reader', 'MEMBER')"
        )
        .await,
        [true, false, true, false, false, true, false, true].map(Some)
    );
    for (sql, code) in [
        ("CREATE TABLE mine (k bigint PRIMARY KEY)", "42501"),
        (
            "SELECT has_table_privilege('ghost', 't', 'SELECT')",
            "42704",
        ),
        ("SELECT has_table_privilege('nosuch', 'SELECT')", "42P01"),
        ("SELECT has_table_privilege('t', 'USAGE')", "22023"),
        (
            "SELECT has_column_privilege('t', 'nosuch', 'SELECT')",
            "42703",
        ),
        ("SELECT has_sequence_privilege('t', 'USAGE')", "42809"),
    ] {
        expect_code(&reader, sql, code).await;
    }

    // A grant changes the answer at once, as it changes what the statement meets.
    su.simple_query("GRANT INSERT ON t TO reader")
        .await
        .unwrap();
    assert_eq!(
        answers(&reader, "SELECT has_table_privilege('t', 'INSERT')").await,
        [Some(true)]
    );
    reader
        .simple_query("INSERT INTO t VALUES (1, 'x')")
        .await
        .unwrap();
    // The superuser holds everything, grant options included.
    assert_eq!(
        answers(
            &su,
            "SELECT has_table_privilege('u', 'SELECT WITH GRANT OPTION'), \
             has_schema_privilege('public', 'CREATE'), has_table_privilege('reader', 'u', 'SELECT')"
        )
        .await,
        [true, true, false].map(Some)
    );
}

#[tokio::test]
async fn another_database_is_out_of_reach() {
    let dir = tempfile::tempdir().unwrap();
    let server = Pgwide::start(dir.path(), &[], &superuser_env());
    let su = superuser(&server).await;
    su.batch_execute(
        "CREATE DATABASE other;
         CREATE ROLE carol LOGIN PASSWORD 'carol-pw';
         GRANT CONNECT ON DATABASE postgres TO carol;",
    )
    .await
    .unwrap();
    let other = connect(server.port, "postgres", Some(SUPER_PW), "other")
        .await
        .unwrap();
    other
        .batch_execute("CREATE TABLE secrets (k bigint PRIMARY KEY, v text); INSERT INTO secrets VALUES (1, 'x');")
        .await
        .unwrap();
    let e = connect(server.port, "carol", Some("carol-pw"), "other")
        .await
        .err()
        .unwrap();
    assert_eq!(
        code_of(&e),
        (
            "42501".to_string(),
            "permission denied for database \"other\"".to_string()
        )
    );
    // From her own database the other one's tables do not resolve either.
    let carol = connect(server.port, "carol", Some("carol-pw"), "postgres")
        .await
        .unwrap();
    assert!(carol
        .simple_query("SELECT * FROM other.public.secrets")
        .await
        .is_err());
    // CONNECT alone does not open the tables.
    su.simple_query("GRANT CONNECT ON DATABASE other TO carol")
        .await
        .unwrap();
    let carol_other = connect(server.port, "carol", Some("carol-pw"), "other")
        .await
        .unwrap();
    expect_code(&carol_other, "SELECT * FROM secrets", "42501").await;
    su.simple_query("REVOKE CONNECT ON DATABASE other FROM carol")
        .await
        .unwrap();
    assert!(connect(server.port, "carol", Some("carol-pw"), "other")
        .await
        .is_err());
}

#[tokio::test]
async fn roles_and_grants_survive_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = Pgwide::start(dir.path(), &[], &superuser_env());
    let port = server.port;
    {
        let su = superuser(&server).await;
        su.batch_execute(
            "CREATE TABLE t (k bigint PRIMARY KEY, v text);
             INSERT INTO t VALUES (1, 'kept');
             CREATE ROLE dave LOGIN PASSWORD 'dave-pw';
             GRANT CONNECT ON DATABASE postgres TO dave;
             GRANT SELECT ON t TO dave;",
        )
        .await
        .unwrap();
    }
    server.stop();
    // No bootstrap password this time: the stored roles are what protect it.
    let server = Pgwide::start_on(dir.path(), port, &[], &[]);
    assert!(connect(server.port, "dave", Some("wrong"), "postgres")
        .await
        .is_err());
    let dave = connect(server.port, "dave", Some("dave-pw"), "postgres")
        .await
        .unwrap();
    let row = dave
        .query_one("SELECT v FROM t WHERE k = 1", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "kept");
    expect_code(&dave, "DELETE FROM t WHERE k = 1", "42501").await;
    superuser(&server).await;
}

#[test]
fn non_loopback_listen_needs_authentication() {
    let dir = tempfile::tempdir().unwrap();
    let port = server_process::free_port();
    let listen = format!("0.0.0.0:{port}");
    let output = server_process::command(dir.path(), &listen, &[], &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(!output.status.success(), "must refuse to start");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0")
            && stderr.contains("--superuser-password-file"),
        "{stderr}"
    );

    // With a superuser password it starts (and then needs the password).
    let pw_file = dir.path().join("pw");
    std::fs::write(&pw_file, format!("{SUPER_PW}\n")).unwrap();
    let mut child = server_process::command(
        dir.path(),
        &listen,
        &["--superuser-password-file", pw_file.to_str().unwrap()],
        &[],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let started = (0..400).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let _ = child.kill();
    let _ = child.wait();
    assert!(started, "starts once a password is configured");
}

/// A raw startup packet for `user`, then the server's first authentication request
/// code (10 = SASL, 5 = MD5) and, for MD5, its salt.
fn first_auth_request(port: u16, user: &str) -> (std::net::TcpStream, i32, Vec<u8>) {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut body = BytesMut::new();
    body.put_i32(196_608);
    for (k, v) in [("user", user), ("database", "postgres")] {
        body.put_slice(k.as_bytes());
        body.put_u8(0);
        body.put_slice(v.as_bytes());
        body.put_u8(0);
    }
    body.put_u8(0);
    let mut packet = BytesMut::new();
    packet.put_i32(body.len() as i32 + 4);
    packet.put_slice(&body);
    stream.write_all(&packet).unwrap();
    let (kind, mut payload) = read_message(&mut stream);
    assert_eq!(kind, b'R', "an authentication request");
    let code = payload.get_i32();
    (stream, code, payload.to_vec())
}

fn read_message(stream: &mut std::net::TcpStream) -> (u8, bytes::Bytes) {
    let mut header = [0u8; 5];
    stream.read_exact(&mut header).unwrap();
    let len = i32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
    let mut body = vec![0u8; len - 4];
    stream.read_exact(&mut body).unwrap();
    (header[0], bytes::Bytes::from(body))
}

fn md5_response(password: &str, user: &str, salt: &[u8]) -> String {
    let inner = format!("{:x}", md5::compute(format!("{password}{user}")));
    format!("md5{:x}", md5::compute([inner.as_bytes(), salt].concat()))
}

fn send_password(stream: &mut std::net::TcpStream, response: &str) -> (u8, bytes::Bytes) {
    let mut packet = BytesMut::new();
    packet.put_u8(b'p');
    packet.put_i32(4 + response.len() as i32 + 1);
    packet.put_slice(response.as_bytes());
    packet.put_u8(0);
    stream.write_all(&packet).unwrap();
    read_message(stream)
}

#[tokio::test]
async fn md5_is_off_by_default_and_works_when_enabled() {
    let dir = tempfile::tempdir().unwrap();
    let server = Pgwide::start(dir.path(), &[], &superuser_env());
    superuser(&server)
        .await
        .batch_execute(
            "CREATE ROLE old LOGIN PASSWORD 'old-pw'; GRANT CONNECT ON DATABASE postgres TO old;",
        )
        .await
        .unwrap();
    // Default: SCRAM is asked for, and an MD5 answer is refused.
    let (mut stream, code, _) = first_auth_request(server.port, "old");
    assert_eq!(code, 10, "SASL, not MD5");
    let (kind, body) = send_password(&mut stream, &md5_response("old-pw", "old", &[0; 4]));
    assert_eq!(kind, b'E', "an MD5 answer to a SASL request is an error");
    assert!(String::from_utf8_lossy(&body).contains("08P01"));
    let port = server.port;
    server.stop();

    let server = Pgwide::start_on(dir.path(), port, &["--md5-auth"], &[]);
    // The MD5 hash is made when the password is next set.
    superuser(&server)
        .await
        .simple_query("ALTER ROLE old PASSWORD 'old-pw'")
        .await
        .unwrap();
    let (mut stream, code, salt) = first_auth_request(server.port, "old");
    assert_eq!(code, 5, "MD5 for a role with an MD5 hash");
    let (kind, body) = send_password(&mut stream, &md5_response("old-pw", "old", &salt));
    assert_eq!(kind, b'R');
    assert_eq!(&body[..4], &[0, 0, 0, 0], "AuthenticationOk");
    let (mut stream, _, salt) = first_auth_request(server.port, "old");
    let (kind, body) = send_password(&mut stream, &md5_response("bad", "old", &salt));
    assert_eq!(kind, b'E');
    assert!(String::from_utf8_lossy(&body).contains("28P01"));
    // tokio-postgres answers MD5 too; the superuser (no MD5 hash) still uses SCRAM.
    connect(server.port, "old", Some("old-pw"), "postgres")
        .await
        .expect("md5 login");
    let (_stream, code, _) = first_auth_request(server.port, "postgres");
    assert_eq!(code, 10);
}
