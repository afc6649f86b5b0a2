//! Catalog queries over the extended protocol, as drivers send them (JDBC's
//! DatabaseMetaData, SQLAlchemy's inspector): parameters, binary results, and the
//! catalog following DDL at once.

mod common;

use common::TestServer;

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
