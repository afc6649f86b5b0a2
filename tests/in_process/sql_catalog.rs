//! Catalog queries over the extended protocol, as drivers send them (JDBC's
//! DatabaseMetaData, SQLAlchemy's inspector): parameters, binary results, and the
//! catalog following DDL at once.

use crate::common;

use common::{code, simple_rows, TestServer};

#[tokio::test]
async fn catalog_queries_with_parameters_follow_ddl() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute("CREATE TABLE t (id TEXT, n BIGINT, v TEXT, PRIMARY KEY (id, n))")
        .await
        .unwrap();
    let tables = "SELECT c.relname FROM pg_catalog.pg_class c \
                  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                  WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY 1";
    let names = |rows: Vec<tokio_postgres::Row>| -> Vec<String> {
        rows.iter().map(|r| r.get::<_, String>(0)).collect()
    };
    assert_eq!(
        names(client.query(tables, &[&"public"]).await.unwrap()),
        ["t"]
    );

    let columns = client
        .query(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns \
             WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position",
            &[&"public", &"t"],
        )
        .await
        .unwrap();
    let columns: Vec<(String, String, String)> = columns
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    assert_eq!(
        columns,
        [
            ("id".into(), "text".into(), "NO".into()),
            ("n".into(), "bigint".into(), "NO".into()),
            ("v".into(), "text".into(), "YES".into()),
        ]
    );

    let pk = client
        .query(
            "SELECT a.attname FROM pg_catalog.pg_index i \
             JOIN pg_catalog.pg_constraint con ON con.conindid = i.indexrelid \
             JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid \
             WHERE i.indrelid = $1::regclass AND i.indisprimary AND a.attnum <= i.indnatts \
             ORDER BY a.attnum",
            &[&"t"],
        )
        .await
        .unwrap();
    assert_eq!(names(pk), ["id", "n"]);
    let shown = client
        .query_one("SELECT 't'::regclass::text, c.oid::regclass::text FROM pg_catalog.pg_class c WHERE c.relname = 't_pkey'", &[])
        .await
        .unwrap();
    assert_eq!(
        (shown.get::<_, String>(0), shown.get::<_, String>(1)),
        ("t".into(), "t_pkey".into())
    );

    client
        .batch_execute("CREATE TABLE u (k BIGINT PRIMARY KEY); DROP TABLE t")
        .await
        .unwrap();
    assert_eq!(
        names(client.query(tables, &[&"public"]).await.unwrap()),
        ["u"]
    );
}

/// RowDescription names each result column's base table and attribute as pg_class and
/// pg_attribute number them (what pgjdbc's `getTableName` and tokio-postgres's
/// `Column::table_oid` read), on the fast path and through DataFusion; a computed
/// column has none, as in PostgreSQL.
#[tokio::test]
async fn result_columns_carry_their_base_table_and_attribute() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE t (v TEXT, id BIGINT, w BIGINT, PRIMARY KEY (id)); \
             CREATE TABLE u (k BIGINT PRIMARY KEY, t_id BIGINT); \
             INSERT INTO t (id, v, w) VALUES (1, 'a', 10); \
             INSERT INTO u VALUES (7, 1)",
        )
        .await
        .unwrap();
    let mut attributes = std::collections::HashMap::new();
    for row in client
        .query(
            "SELECT c.relname, a.attname, c.oid, a.attnum FROM pg_catalog.pg_class c \
             JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid WHERE c.relkind = 'r'",
            &[],
        )
        .await
        .unwrap()
    {
        let (table, column): (String, String) = (row.get(0), row.get(1));
        // `oid` is an unsigned 32-bit number, as in PostgreSQL.
        let (oid, attnum): (u32, i64) = (row.get(2), row.get(3));
        attributes.insert(
            format!("{table}.{column}"),
            (oid, i16::try_from(attnum).unwrap()),
        );
    }
    assert_eq!(attributes["t.v"].1, 1, "attnum follows the declared order");
    assert_eq!(attributes["t.id"].1, 2);
    let cases: &[(&str, &[Option<&str>])] = &[
        // fast path: point get, PK range, SELECT *
        (
            "SELECT w, id, v FROM t WHERE id = 1",
            &[Some("t.w"), Some("t.id"), Some("t.v")],
        ),
        (
            "SELECT id AS renamed, w * 2 FROM t WHERE id >= 0 ORDER BY id",
            &[Some("t.id"), None],
        ),
        (
            "SELECT * FROM u WHERE k = 7",
            &[Some("u.k"), Some("u.t_id")],
        ),
        // DataFusion: a join, an aggregate, a constant
        (
            "SELECT t.v, u.k, t.id + u.k FROM t JOIN u ON u.t_id = t.id",
            &[Some("t.v"), Some("u.k"), None],
        ),
        ("SELECT v, count(*) FROM t GROUP BY v", &[Some("t.v"), None]),
        ("SELECT 1 AS one", &[None]),
    ];
    for (sql, want) in cases {
        let statement = client.prepare(sql).await.unwrap();
        let got: Vec<Option<(u32, i16)>> = statement
            .columns()
            .iter()
            .map(|c| c.table_oid().zip(c.column_id()))
            .collect();
        let want: Vec<Option<(u32, i16)>> = want
            .iter()
            .map(|w| w.map(|name| attributes[name]))
            .collect();
        assert_eq!(got, want, "{sql}");
    }
}

/// The functions and SQL keywords BI tools call while connecting, with the results
/// PostgreSQL 15 gives for the same statements.
#[tokio::test]
async fn session_and_array_functions_answer_like_postgres() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    let cases: &[(&str, &[&[&str]])] = &[
        (
            "SELECT g FROM generate_series(1, 3) AS g",
            &[&["1"], &["2"], &["3"]],
        ),
        (
            "SELECT x.n FROM generate_series(2, 3) x(n)",
            &[&["2"], &["3"]],
        ),
        (
            "SELECT current_user, session_user, user, current_catalog",
            &[&["tester", "tester", "tester", "postgres"]],
        ),
        (
            "SELECT format('%I.%L %s%%', 'My T', 'it''s', 5), format('%2$s %1$s', 'a', 'b')",
            &[&["\"My T\".'it''s' 5%", "b a"]],
        ),
        (
            "SELECT parse_ident('public.\"Items\"'), array_length(parse_ident('a.b.c'), 1)",
            &[&["{public,Items}", "3"]],
        ),
        (
            "SELECT array_lower(ARRAY[5, 6, 7], 1), array_upper(ARRAY[5, 6, 7], 1), \
             array_upper(ARRAY[5], 2)",
            &[&["1", "3", ""]],
        ),
        (
            "SELECT pg_is_in_recovery(), current_setting('search_path')",
            &[&["f", "\"$user\", public"]],
        ),
        (
            "SELECT (information_schema._pg_expandarray(ARRAY[10, 20])).x, \
             (information_schema._pg_expandarray(ARRAY[10, 20])).n",
            &[&["10", "1"], &["20", "2"]],
        ),
        ("SELECT s[2] FROM string_to_array('a,b', ',') s", &[&["b"]]),
    ];
    for (sql, want) in cases {
        let got: Vec<Vec<String>> = client
            .simple_query(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
            .iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(row) => Some(
                    (0..row.len())
                        .map(|i| row.get(i).unwrap_or("").to_string())
                        .collect(),
                ),
                _ => None,
            })
            .collect();
        let want: Vec<Vec<String>> = want
            .iter()
            .map(|row| row.iter().map(|v| v.to_string()).collect())
            .collect();
        assert_eq!(got, want, "{sql}");
    }
    // current_setting follows the session's SET and RESET, as SHOW does.
    let setting = |sql: &'static str| {
        let client = &client;
        async move {
            let row = client.query_one(sql, &[]).await.unwrap();
            row.get::<_, String>(0)
        }
    };
    client
        .batch_execute("SET search_path = myschema, public; SET application_name = 'bi'")
        .await
        .unwrap();
    assert_eq!(
        setting("SELECT current_setting('search_path')").await,
        "myschema, public"
    );
    assert_eq!(
        setting("SELECT current_setting('application_name')").await,
        "bi"
    );
    client.batch_execute("RESET search_path").await.unwrap();
    assert_eq!(
        setting("SELECT current_setting('search_path')").await,
        "\"$user\", public"
    );
}

/// `set_config(name, value, is_local)` changes the setting as SET and SET LOCAL do,
/// with SET's errors, as PostgreSQL 15 does; SET LOCAL lasts as long.
#[tokio::test]
async fn set_config_changes_settings_like_set() {
    use common::{code, simple_rows};
    let server = TestServer::start().await;
    let client = server.connect().await;
    let one = |sql: &'static str| {
        let client = &client;
        async move { simple_rows(client, sql).await }
    };

    // Session-wide: later statements, SHOW and current_setting see it.
    assert_eq!(
        one("SELECT set_config('statement_timeout', '1500', false)").await,
        [["1500ms"]]
    );
    assert_eq!(one("SHOW statement_timeout").await, [["1500ms"]]);
    let row = client
        .query_one(
            "SELECT set_config($1, $2, false), current_setting('application_name')",
            &[&"application_name", &"via_set_config"],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "via_set_config");
    assert_eq!(one("SHOW application_name").await, [["via_set_config"]]);
    // Preparing the statement does not run it.
    client
        .prepare("SELECT set_config('application_name', 'prepared_only', false)")
        .await
        .unwrap();
    assert_eq!(
        one("SELECT current_setting('application_name')").await,
        [["via_set_config"]]
    );

    // Local outside a transaction block: the statement is its own transaction.
    assert_eq!(
        one("SELECT set_config('myapp.scope', 'stmt', true)").await,
        [["stmt"]]
    );
    assert_eq!(one("SHOW myapp.scope").await, [[""]]);
    one("SELECT set_config('search_path', 'elsewhere', true)").await;
    assert_eq!(one("SHOW search_path").await, [["\"$user\", public"]]);

    // Local inside one: until COMMIT or ROLLBACK.
    client.batch_execute("BEGIN").await.unwrap();
    assert_eq!(
        one("SELECT set_config('search_path', 'local_schema', true)").await,
        [["local_schema"]]
    );
    assert_eq!(one("SHOW search_path").await, [["local_schema"]]);
    one("SELECT set_config('statement_timeout', '2s', true)").await;
    assert_eq!(one("SHOW statement_timeout").await, [["2s"]]);
    client.batch_execute("COMMIT").await.unwrap();
    assert_eq!(one("SHOW search_path").await, [["\"$user\", public"]]);
    assert_eq!(one("SHOW statement_timeout").await, [["1500ms"]]);
    client.batch_execute("BEGIN").await.unwrap();
    one("SELECT set_config('statement_timeout', '3s', true)").await;
    client.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(one("SHOW statement_timeout").await, [["1500ms"]]);

    // A NULL value resets to the default.
    assert_eq!(
        one("SELECT set_config('statement_timeout', NULL, false)").await,
        [["0"]]
    );

    // Errors as SET gives them.
    for (sql, want) in [
        ("SELECT set_config('no_such_setting', '1', false)", "42704"),
        (
            "SELECT set_config('statement_timeout', 'abc', false)",
            "22023",
        ),
        ("SELECT set_config('server_version', '1', false)", "55P02"),
        ("SELECT set_config(NULL, '1', false)", "22004"),
    ] {
        assert_eq!(code(client.simple_query(sql).await), want, "{sql}");
        assert_eq!(code(client.query(sql, &[]).await), want, "{sql}");
    }
    assert_eq!(
        code(client.simple_query("SET statement_timeout = 'abc'").await),
        "22023"
    );
    assert_eq!(one("SHOW statement_timeout").await, [["0"]]);

    // SET LOCAL likewise: checked, and gone with its transaction.
    assert_eq!(
        code(
            client
                .simple_query("SET LOCAL statement_timeout = 'abc'")
                .await
        ),
        "22023"
    );
    client
        .batch_execute("SET LOCAL statement_timeout = '5s'")
        .await
        .unwrap();
    assert_eq!(one("SHOW statement_timeout").await, [["0"]]);
    client
        .batch_execute("BEGIN; SET LOCAL search_path = local_schema")
        .await
        .unwrap();
    assert_eq!(one("SHOW search_path").await, [["local_schema"]]);
    client.batch_execute("COMMIT").await.unwrap();
    assert_eq!(one("SHOW search_path").await, [["\"$user\", public"]]);

    // An error aborts the transaction block, as any error does.
    client.batch_execute("BEGIN").await.unwrap();
    assert_eq!(
        code(
            client
                .simple_query("SELECT set_config('no_such_setting', '1', false)")
                .await
        ),
        "42704"
    );
    assert_eq!(code(client.simple_query("SELECT 1").await), "25P02");
    client.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(one("SELECT 1").await, [["1"]]);
}

/// A catalog query answered with no rows without planning still takes the parameters
/// the client binds (Alembic's `pg_depend` lookup sent one and got 08P01).
#[tokio::test]
async fn an_always_empty_catalog_query_takes_its_parameters() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    let rows = client
        .query(
            "SELECT d.objoid FROM pg_catalog.pg_description d WHERE d.description = $1",
            &[&"x"],
        )
        .await
        .expect("bound");
    assert!(rows.is_empty());
    let rows = client
        .query(
            "SELECT r.rngtypid FROM pg_catalog.pg_range r JOIN pg_catalog.pg_type t \
             ON t.oid = r.rngsubtype WHERE t.typname = $1",
            &[&"int4"],
        )
        .await
        .expect("pg_range");
    assert!(rows.is_empty());
}

/// `pg_stat_activity` lists every connection with its database, role, application,
/// client and state; `pg_backend_pid()` is the session's own row; `pg_cancel_backend`
/// interrupts another connection's statement (57014 for it) and `pg_terminate_backend`
/// ends the connection; a pid that is no connection's gives false.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_stat_activity_lists_connections_and_signals_reach_them() {
    let server = TestServer::start().await;
    let watcher = server.connect().await;
    let worker = server.connect().await;
    worker
        .batch_execute("SET application_name = 'worker'; BEGIN; SELECT 1")
        .await
        .expect("a block left open");
    let rows = simple_rows(
        &watcher,
        "SELECT usename, datname, state, query, client_addr, client_port > 0, \
         xact_start IS NOT NULL, backend_type FROM pg_stat_activity \
         WHERE application_name = 'worker'",
    )
    .await;
    assert_eq!(
        rows,
        [[
            "tester",
            "postgres",
            "idle in transaction",
            // The whole query string, as PostgreSQL shows it.
            "SET application_name = 'worker'; BEGIN; SELECT 1",
            "127.0.0.1",
            "t",
            "t",
            "client backend"
        ]]
    );
    let own = simple_rows(
        &watcher,
        "SELECT count(*), max(state) FROM pg_stat_activity WHERE pid = pg_backend_pid()",
    )
    .await;
    assert_eq!(own, [["1", "active"]]);
    let worker_pid = simple_rows(
        &watcher,
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'worker'",
    )
    .await[0][0]
        .clone();
    assert_eq!(
        simple_rows(&worker, "SELECT pg_backend_pid()::text").await,
        [[worker_pid.clone()]]
    );
    worker.batch_execute("ROLLBACK").await.expect("rollback");
    // A long statement shows its first 1023 bytes, as PostgreSQL's default
    // track_activity_query_size keeps.
    let long = format!("SELECT '{}'", "x".repeat(2000));
    worker.batch_execute(&long).await.expect("a long statement");
    let shown = simple_rows(
        &watcher,
        &format!("SELECT length(query) FROM pg_stat_activity WHERE pid = {worker_pid}"),
    )
    .await;
    assert_eq!(shown, [["1023"]]);

    // A cancel interrupts the statement the other connection runs, and only that.
    let sleeping = tokio::spawn(async move {
        let outcome = code(worker.simple_query("SELECT pg_sleep(30)").await);
        (worker, outcome)
    });
    let cancel = format!("SELECT pg_cancel_backend({worker_pid})");
    let mut canceled = false;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let state = simple_rows(
            &watcher,
            &format!("SELECT state FROM pg_stat_activity WHERE pid = {worker_pid}"),
        )
        .await;
        if state == [["active"]] {
            assert_eq!(simple_rows(&watcher, &cancel).await, [["t"]]);
            canceled = true;
            break;
        }
    }
    assert!(canceled, "the worker's statement never showed as active");
    let (worker, outcome) = sleeping.await.expect("the worker's task");
    assert_eq!(outcome, "57014");
    assert_eq!(simple_rows(&worker, "SELECT 1").await, [["1"]]);

    // A terminate ends the connection.
    let terminate = format!("SELECT pg_terminate_backend({worker_pid})");
    assert_eq!(simple_rows(&watcher, &terminate).await, [["t"]]);
    let mut ended = false;
    for _ in 0..100 {
        if worker.simple_query("SELECT 1").await.is_err() {
            ended = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(ended, "the terminated connection still answers");
    let gone = format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {worker_pid}");
    let mut left = Vec::new();
    for _ in 0..100 {
        left = simple_rows(&watcher, &gone).await;
        if left == [["0"]] {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(left, [["0"]]);
    assert_eq!(
        simple_rows(
            &watcher,
            "SELECT pg_cancel_backend(1), pg_terminate_backend(1)"
        )
        .await,
        [["f", "f"]]
    );
    // A timeout pgwide would not wait out is refused, not ignored; 0 is no wait.
    let waiting = "SELECT pg_terminate_backend(pg_backend_pid(), 1000)";
    assert_eq!(code(watcher.simple_query(waiting).await), "0A000");
    assert_eq!(
        simple_rows(&watcher, "SELECT pg_terminate_backend(1, 0)").await,
        [["f"]]
    );
    // pg_cancel_backend takes no second argument (refused, here 42601 where
    // PostgreSQL says 42883).
    assert!(watcher
        .simple_query("SELECT pg_cancel_backend(1, 0)")
        .await
        .is_err());
}
