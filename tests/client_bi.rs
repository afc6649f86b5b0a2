//! The connect and schema-sync queries of Metabase, Grafana, DBeaver and pgAdmin
//! (written down from each tool's source in `tests/clients/bi/<tool>.sql`) replayed
//! against the real `pgwide serve` through tokio-postgres: every statement must run
//! without error over the extended protocol, as the JDBC-based tools send it, and over
//! the simple protocol, as psycopg (pgAdmin) and Grafana's Go driver send
//! parameterless queries; the table and column listings must name the test's tables
//! and columns.

mod server_process;

use server_process::{clients_dir, Pgwide};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls, Row, SimpleQueryMessage};

/// One statement of a replay file.
#[derive(Debug)]
struct Entry {
    source: String,
    sql: String,
    /// Values that must each be a cell of the statement's result.
    expect: Vec<String>,
}

/// Reads `tests/clients/bi/<tool>.sql`: statements end with `;` at the end of a line;
/// `-- source:` and `-- expect:` comments annotate the statements after them.
fn load(tool: &str) -> Vec<Entry> {
    let path = clients_dir("bi").join(format!("{tool}.sql"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut entries = Vec::new();
    let (mut source, mut expect, mut sql) = (String::new(), Vec::new(), String::new());
    for line in text.lines() {
        let trimmed = line.trim();
        if sql.is_empty() {
            if let Some(s) = trimmed.strip_prefix("-- source:") {
                source = s.trim().to_string();
                continue;
            }
            if let Some(e) = trimmed.strip_prefix("-- expect:") {
                expect = e.split(',').map(|v| v.trim().to_string()).collect();
                continue;
            }
            if trimmed.is_empty() || trimmed.starts_with("--") {
                continue;
            }
        }
        sql.push_str(line);
        sql.push('\n');
        if trimmed.ends_with(';') {
            entries.push(Entry {
                source: source.clone(),
                sql: std::mem::take(&mut sql),
                expect: std::mem::take(&mut expect),
            });
        }
    }
    assert!(sql.trim().is_empty(), "{tool}.sql ends inside a statement");
    entries
}

/// A binary result cell as text, for the types catalog queries return.
fn cell(row: &Row, i: usize) -> Option<String> {
    let ty = row.columns()[i].type_().clone();
    match ty {
        Type::BOOL => row.get::<_, Option<bool>>(i).map(|b| b.to_string()),
        Type::INT2 => row.get::<_, Option<i16>>(i).map(|v| v.to_string()),
        Type::INT4 => row.get::<_, Option<i32>>(i).map(|v| v.to_string()),
        Type::INT8 => row.get::<_, Option<i64>>(i).map(|v| v.to_string()),
        Type::OID => row.get::<_, Option<u32>>(i).map(|v| v.to_string()),
        Type::FLOAT4 => row.get::<_, Option<f32>>(i).map(|v| v.to_string()),
        Type::FLOAT8 => row.get::<_, Option<f64>>(i).map(|v| v.to_string()),
        Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR | Type::CHAR => {
            row.get::<_, Option<String>>(i)
        }
        Type::TEXT_ARRAY => row
            .get::<_, Option<Vec<Option<String>>>>(i)
            .map(|v| format!("{v:?}")),
        Type::BYTEA => row.get::<_, Option<Vec<u8>>>(i).map(|v| format!("{v:?}")),
        other => panic!("column {i} has type {other}, which the replay cannot show"),
    }
}

async fn connect(port: u16) -> Client {
    let (client, connection) = tokio_postgres::connect(
        &format!("host=127.0.0.1 port={port} user=postgres dbname=postgres"),
        NoTls,
    )
    .await
    .expect("connect");
    tokio::spawn(connection);
    client
}

/// Runs every entry on one connection; returns the failures, described.
async fn replay(port: u16, tool: &str, entries: &[Entry], simple: bool, oid: &str) -> Vec<String> {
    let client = connect(port).await;
    let mode = if simple { "simple" } else { "extended" };
    let mut failures = Vec::new();
    for entry in entries {
        let sql = entry.sql.replace(":items_oid", oid);
        let cells: Result<Vec<Option<String>>, tokio_postgres::Error> = if simple {
            client.simple_query(&sql).await.map(|messages| {
                messages
                    .iter()
                    .filter_map(|m| match m {
                        SimpleQueryMessage::Row(row) => Some(row),
                        _ => None,
                    })
                    .flat_map(|row| (0..row.len()).map(|i| row.get(i).map(String::from)))
                    .collect()
            })
        } else {
            client
                .query(sql.trim_end().trim_end_matches(';'), &[])
                .await
                .map(|rows| {
                    rows.iter()
                        .flat_map(|row| (0..row.len()).map(|i| cell(row, i)))
                        .collect()
                })
        };
        match cells {
            Err(e) => failures.push(format!(
                "{tool} ({mode}) from {}: {}\n{}",
                entry.source,
                e.as_db_error().map_or_else(
                    || e.to_string(),
                    |d| format!("{}: {}", d.code().code(), d.message())
                ),
                sql.trim()
            )),
            Ok(cells) => {
                let missing: Vec<&String> = entry
                    .expect
                    .iter()
                    .filter(|want| !cells.iter().any(|c| c.as_deref() == Some(want.as_str())))
                    .collect();
                if !missing.is_empty() {
                    failures.push(format!(
                        "{tool} ({mode}) from {}: result lacks {missing:?} (got {cells:?})\n{}",
                        entry.source,
                        sql.trim()
                    ));
                }
            }
        }
    }
    failures
}

fn start() -> (Pgwide, String) {
    let server = Pgwide::fresh();
    server.setup(&[
        "CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT, price DOUBLE PRECISION, data BYTEA)",
        "CREATE TABLE quad (a TEXT, b BIGINT, c TEXT, d BIGINT, v TEXT, PRIMARY KEY (c, a, d, b))",
        "INSERT INTO items VALUES (1, 'one', 1.5, '\\x01'), (2, 'two', 2.5, NULL), (3, 'three', NULL, NULL)",
        "INSERT INTO quad VALUES ('a', 1, 'c', 2, 'v'), ('a', 2, 'c', 2, 'w')",
    ]);
    let oid = server.query("SELECT oid FROM pg_catalog.pg_class WHERE relname = 'items'")[0][0]
        .clone()
        .expect("items has an OID");
    (server, oid)
}

fn run(tool: &str, protocols: &[bool]) {
    let entries = load(tool);
    assert!(
        entries.len() >= 8,
        "{tool}.sql has only {} statements",
        entries.len()
    );
    let (server, oid) = start();
    let port = server.port;
    let failures: Vec<String> = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut failures = Vec::new();
            for simple in protocols {
                failures.extend(replay(port, tool, &entries, *simple, &oid).await);
            }
            failures
        });
    assert!(
        failures.is_empty(),
        "{} of {} {tool} statements failed:\n\n{}",
        failures.len(),
        entries.len() * protocols.len(),
        failures.join("\n\n")
    );
}

#[test]
fn metabase_sync_replays() {
    run("metabase", &[false]);
}

#[test]
fn grafana_schema_lookups_replay() {
    run("grafana", &[false, true]);
}

#[test]
fn dbeaver_connect_and_navigator_replay() {
    run("dbeaver", &[false]);
}

#[test]
fn pgadmin_connect_and_browser_tree_replay() {
    run("pgadmin", &[true, false]);
}

/// The row estimate BI tools show (`pg_stat_user_tables.n_live_tup`) and
/// `pgwide.tables`' row estimate and bytes count the stored rows.
#[test]
fn table_statistics_count_the_stored_rows() {
    let (server, _) = start();
    let live = server.query(
        "SELECT relname, n_live_tup, seq_scan >= 0 FROM pg_stat_user_tables ORDER BY relname",
    );
    assert_eq!(
        live,
        vec![
            vec![Some("items".into()), Some("3".into()), Some("t".into())],
            vec![Some("quad".into()), Some("2".into()), Some("t".into())],
        ]
    );
    let sizes = server
        .query("SELECT \"table\", row_estimate, bytes > 0 FROM pgwide.tables ORDER BY \"table\"");
    assert_eq!(
        sizes,
        vec![
            vec![Some("items".into()), Some("3".into()), Some("t".into())],
            vec![Some("quad".into()), Some("2".into()), Some("t".into())],
        ]
    );
    server.setup(&["DELETE FROM items WHERE id = 3"]);
    let after = server.query("SELECT row_estimate FROM pgwide.tables WHERE \"table\" = 'items'");
    assert_eq!(after, vec![vec![Some("2".into())]]);
}
