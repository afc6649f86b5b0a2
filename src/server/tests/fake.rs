//! A fake SQL layer for the wire tests. Statements are recognised by keywords:
//! `fixed`/`SELECT` a two-row table of every type, `echo` the parameters back,
//! `many` five rows, `slow` an endless slow stream, `sleep` a 30 s execute, `nap` a
//! 300 ms one, `bad` SQLSTATE 22023, `mismatch` a value that does not fit its column,
//! `BEGIN`/`COMMIT`/`ROLLBACK` the transaction state, `SET a = b` a parameter change.

use crate::sql::{
    Datum, OutputColumn, ParsedStatement, PreparedStatement, SessionFactory, SqlError, SqlResult,
    SqlSession, SqlType, StatementResult, TransactionStatus,
};
use crate::sqlstate::SqlState;
use async_trait::async_trait;
use futures::stream::{self, StreamExt};
use std::sync::Arc;
use std::time::Duration;

pub(super) struct FakeFactory;

#[async_trait]
impl SessionFactory for FakeFactory {
    type Session = FakeSession;

    async fn open(
        &self,
        database: &str,
        _user: &str,
        _params: &[(String, String)],
    ) -> SqlResult<FakeSession> {
        if database == "missing" {
            return Err(SqlError::new(
                SqlState::InvalidCatalogName,
                format!("database \"{database}\" does not exist"),
            ));
        }
        Ok(FakeSession {
            status: TransactionStatus::Idle,
            changes: Vec::new(),
        })
    }
}

pub(super) struct FakeSession {
    status: TransactionStatus,
    changes: Vec<(String, String)>,
}

fn col(name: &str, ty: SqlType) -> OutputColumn {
    OutputColumn {
        name: name.into(),
        ty,
        origin: None,
    }
}

fn fixed_columns() -> Vec<OutputColumn> {
    vec![
        col("id", SqlType::Int8),
        col("name", SqlType::Text),
        col("score", SqlType::Float8),
        col("ok", SqlType::Bool),
        col("data", SqlType::Bytea),
        col("small", SqlType::Int2),
        col("mid", SqlType::Int4),
        col("ratio", SqlType::Float4),
    ]
}

/// The columns a statement returns, given its parameter types.
fn columns_of(sql: &str, params: &[SqlType]) -> Vec<OutputColumn> {
    if sql.contains("echo") {
        params
            .iter()
            .enumerate()
            .map(|(i, ty)| col(&format!("p{}", i + 1), *ty))
            .collect()
    } else if sql.contains("many") || sql.contains("slow") {
        vec![col("n", SqlType::Int8)]
    } else if sql.contains("mismatch") {
        vec![col("n", SqlType::Int4)]
    } else if sql.contains("fixed") || sql.starts_with("SELECT") {
        fixed_columns()
    } else {
        Vec::new()
    }
}

fn query(columns: Vec<OutputColumn>, rows: Vec<Vec<Datum>>) -> StatementResult {
    StatementResult::Query {
        columns: Arc::new(columns),
        rows: stream::iter(rows.into_iter().map(Ok)).boxed(),
    }
}

fn command(tag: &str) -> SqlResult<StatementResult> {
    Ok(StatementResult::Command { tag: tag.into() })
}

impl FakeSession {
    async fn run(
        &mut self,
        sql: &str,
        params: Vec<Datum>,
        types: &[SqlType],
    ) -> SqlResult<StatementResult> {
        match sql {
            "BEGIN" | "START TRANSACTION" => {
                self.status = TransactionStatus::InTransaction;
                return command("BEGIN");
            }
            "COMMIT" | "ROLLBACK" => {
                self.status = TransactionStatus::Idle;
                return command(sql);
            }
            _ => {}
        }
        if self.status == TransactionStatus::Failed {
            return Err(SqlError::new(
                SqlState::InFailedSqlTransaction,
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        if sql.contains("bad") {
            if self.status == TransactionStatus::InTransaction {
                self.status = TransactionStatus::Failed;
            }
            return Err(SqlError::new(
                SqlState::InvalidParameterValue,
                format!("bad value in \"{sql}\""),
            ));
        }
        if let Some(assignment) = sql.strip_prefix("SET ") {
            let (name, value) = assignment.split_once('=').unwrap_or((assignment, ""));
            self.changes.push((name.trim().into(), value.trim().into()));
            return command("SET");
        }
        if sql.starts_with("INSERT") {
            return command("INSERT 0 1");
        }
        if sql == "sleep" {
            tokio::time::sleep(Duration::from_secs(30)).await;
            return command("SLEEP");
        }
        if sql == "nap" {
            tokio::time::sleep(Duration::from_millis(300)).await;
            return command("INSERT 0 1");
        }
        let columns = columns_of(sql, types);
        if sql.contains("echo") {
            return Ok(query(columns, vec![params]));
        }
        if sql.contains("many") {
            return Ok(query(
                columns,
                (1..=5).map(|n| vec![Datum::Int(n)]).collect(),
            ));
        }
        if sql.contains("mismatch") {
            return Ok(query(columns, vec![vec![Datum::Text("x".into())]]));
        }
        if sql.contains("slow") {
            let rows = stream::unfold(0i64, |n| async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Some((Ok(vec![Datum::Int(n)]), n + 1))
            });
            return Ok(StatementResult::Query {
                columns: Arc::new(columns),
                rows: rows.boxed(),
            });
        }
        if !columns.is_empty() {
            return Ok(query(
                columns,
                vec![
                    vec![
                        Datum::Int(1),
                        Datum::Text("alice".into()),
                        Datum::Float(1.5),
                        Datum::Bool(true),
                        Datum::Bytes(vec![1, 255]),
                        Datum::Int(-32768),
                        Datum::Int(i64::from(i32::MAX)),
                        Datum::Float(f64::from(0.1f32)),
                    ],
                    vec![
                        Datum::Int(i64::MIN),
                        Datum::Null,
                        Datum::Float(f64::NEG_INFINITY),
                        Datum::Bool(false),
                        Datum::Null,
                        Datum::Null,
                        Datum::Null,
                        Datum::Float(f64::NAN),
                    ],
                ],
            ));
        }
        Err(SqlError::syntax(format!("fake cannot run \"{sql}\"")))
    }
}

#[async_trait]
impl SqlSession for FakeSession {
    /// The fake runs statements from their text alone.
    type Plan = ();
    type Parsed = ();

    fn parse_simple(&mut self, sql: &str) -> SqlResult<Vec<ParsedStatement<()>>> {
        Ok(sql
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| ParsedStatement {
                sql: s.to_owned(),
                parsed: (),
            })
            .collect())
    }

    async fn run_simple(&mut self, statement: ParsedStatement<()>) -> SqlResult<StatementResult> {
        self.run(&statement.sql, Vec::new(), &[]).await
    }

    async fn prepare(
        &mut self,
        sql: &str,
        param_types: &[Option<SqlType>],
    ) -> SqlResult<Arc<PreparedStatement<()>>> {
        if sql.contains("prepare_bad") {
            return Err(SqlError::syntax("syntax error at or near \"prepare_bad\""));
        }
        let count = sql.matches('$').count();
        let types: Vec<SqlType> = (0..count)
            .map(|i| {
                param_types
                    .get(i)
                    .copied()
                    .flatten()
                    .unwrap_or(SqlType::Text)
            })
            .collect();
        Ok(Arc::new(PreparedStatement {
            sql: sql.to_owned(),
            columns: Arc::new(columns_of(sql, &types)),
            param_types: types,
            plan: (),
        }))
    }

    async fn execute(
        &mut self,
        statement: &PreparedStatement<()>,
        params: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        self.run(&statement.sql, params, &statement.param_types)
            .await
    }

    fn transaction_status(&self) -> TransactionStatus {
        self.status
    }

    fn take_parameter_changes(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.changes)
    }
}
