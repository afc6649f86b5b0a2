//! What the SQL and wire fuzz targets share: a fresh in-memory database per input
//! (so every crash reproduces from its input alone) holding one small table, sessions
//! on it, and running a statement with bounded time and output.

#![allow(dead_code)]

use futures::StreamExt;
use pgwide::engine::{Engine, Limits, SystemClock, DEFAULT_INSTANCE};
use pgwide::sql::{
    ParsedSql, ParsedStatement, Session, SessionFactory, SqlResult, SqlSession, StatementResult,
};
use pgwide::storage::MemoryBackend;
use std::sync::Arc;
use std::time::Duration;

/// A statement that runs longer than this is abandoned (not a finding: fuzzed SQL can
/// ask for a huge cross join).
pub const STATEMENT_TIME: Duration = Duration::from_secs(2);
/// At most this many result rows are read.
const MAX_ROWS: usize = 1_000;

/// A single-threaded runtime: a panic anywhere in the session or connection unwinds
/// through `block_on` to libFuzzer instead of being caught by a spawned task.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

const SETUP: &str = "CREATE TABLE t (k INT PRIMARY KEY, v TEXT, n BIGINT); \
    INSERT INTO t VALUES (1, 'one', 10), (2, 'two', NULL), (3, NULL, -3); \
    CREATE TABLE w (part TEXT, id BIGINT, b BYTEA, PRIMARY KEY (part, id)); \
    INSERT INTO w VALUES ('a', 1, '\\x00ff'), ('a', 2, NULL), ('b', 1, '\\x')";

/// A new in-memory engine with tables `t` and `w`.
pub async fn engine() -> Arc<Engine> {
    let engine = Engine::open(
        Arc::new(MemoryBackend::new()),
        Arc::new(SystemClock),
        Limits::default(),
    )
    .await
    .expect("memory engine opens");
    let engine = Arc::new(engine);
    let mut session = open(&engine);
    for statement in session.parse_simple(SETUP).expect("setup parses") {
        drain(session.run_simple(statement).await.expect("setup runs")).await;
    }
    engine
}

fn open(engine: &Arc<Engine>) -> Session {
    Session::new(
        Arc::clone(engine),
        DEFAULT_INSTANCE.to_string(),
        "fuzz".to_string(),
        &[],
    )
    .expect("no startup parameters to refuse")
}

/// Runs one parsed statement with bounded time and output; errors are fine.
pub async fn run(session: &mut Session, statement: ParsedStatement<ParsedSql>) {
    let work = async {
        if let Ok(result) = session.run_simple(statement).await {
            drain(result).await;
        }
    };
    let _ = tokio::time::timeout(STATEMENT_TIME, work).await;
}

/// Reads a result as a client would, up to `MAX_ROWS`.
async fn drain(result: StatementResult) {
    match result {
        StatementResult::Command { .. } => {}
        StatementResult::Query { mut rows, .. }
        | StatementResult::Returning { mut rows, .. }
        | StatementResult::CopyOut { mut rows, .. } => {
            let mut n = 0;
            while let Some(row) = rows.next().await {
                n += 1;
                if row.is_err() || n >= MAX_ROWS {
                    break;
                }
            }
        }
        StatementResult::CopyIn { mut sink, .. } => {
            if sink.data(b"9\tnine\t9\n").await.is_ok() {
                let _ = sink.finish().await;
            } else {
                sink.abort().await;
            }
        }
    }
}

/// Sessions on one in-memory engine, for the wire target's connection.
pub struct Factory(pub Arc<Engine>);

#[async_trait::async_trait]
impl SessionFactory for Factory {
    type Session = Session;

    async fn open(
        &self,
        database: &str,
        user: &str,
        params: &[(String, String)],
    ) -> SqlResult<Session> {
        let session = Session::new(
            Arc::clone(&self.0),
            database.to_string(),
            user.to_string(),
            params,
        )?
        // The server enforces it: a fuzzed slow statement ends with 57014.
        .with_setting_defaults(&[("statement_timeout".into(), "2000".into())])?;
        Ok(session)
    }
}

pub fn session(engine: &Arc<Engine>) -> Session {
    open(engine)
}
