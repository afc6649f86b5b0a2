//! The extended query protocol: Parse, Bind, Describe, Execute and Close over named and
//! unnamed prepared statements and portals. A statement is planned once by the SQL
//! layer (`SqlSession::prepare`) and executed per Bind; a portal runs at its first
//! Execute and keeps its row stream, so an Execute with a row limit ends with
//! PortalSuspended and the next Execute continues where it stopped.
//!
//! Nothing here flushes: libpq sends Bind/Describe/Execute/Sync per prepared
//! execution, and all their answers leave in the single write done at Sync.

use super::connection::{Connection, Fault};
use super::encode::{put_row_description, Formats};
use super::params::decode_param;
use super::wire::{put_command_complete, put_select_complete, Bind, Target};
use crate::sql::{
    Datum, OutputColumn, PreparedStatement, RowStream, SqlError, SqlSession, SqlType,
    StatementResult,
};
use crate::sqlstate::SqlState;
use bytes::{BufMut, Bytes, BytesMut};
use pgwire::messages::data::{NoData, ParameterDescription};
use pgwire::messages::extendedquery::{
    BindComplete, CloseComplete, ParseComplete, PortalSuspended,
};
use pgwire::messages::response::EmptyQueryResponse;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

/// The `unknown` pseudo-type: a parameter the client leaves for the server to type.
const UNKNOWN_OID: u32 = 705;

/// A prepared statement and its text-format RowDescription, encoded once because
/// libpq asks for it on every execution.
pub(crate) struct Statement<P> {
    prepared: Arc<PreparedStatement<P>>,
    /// Empty when the statement returns no rows (NoData).
    text_row_description: Bytes,
    /// An empty query string: executes to EmptyQueryResponse without the SQL layer.
    empty: bool,
    /// The parameter OIDs the client gave in Parse: ParameterDescription echoes them
    /// where they name the inferred type (`varchar` for TEXT), since pgjdbc refuses a
    /// description that changes a type it declared.
    declared_oids: Vec<u32>,
}

/// A connection's portals. The unnamed one, which libpq and most drivers bind for
/// every execution, has a slot of its own: taking it out for each Execute and putting it
/// back in a `HashMap` hashed and compared its name each time (2.3% of the server's CPU
/// in a profile of prepared point gets).
pub(crate) struct Portals<P> {
    unnamed: Option<Portal<P>>,
    named: HashMap<String, Portal<P>>,
}

impl<P> Default for Portals<P> {
    fn default() -> Self {
        Portals {
            unnamed: None,
            named: HashMap::new(),
        }
    }
}

impl<P> Portals<P> {
    fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    fn get(&self, name: &str) -> Option<&Portal<P>> {
        if name.is_empty() {
            self.unnamed.as_ref()
        } else {
            self.named.get(name)
        }
    }

    /// Binds `name` to `portal`, replacing a portal of that name.
    fn insert(&mut self, name: String, portal: Portal<P>) {
        if name.is_empty() {
            self.unnamed = Some(portal);
        } else {
            self.named.insert(name, portal);
        }
    }

    fn remove(&mut self, name: &str) -> Option<Portal<P>> {
        if name.is_empty() {
            self.unnamed.take()
        } else {
            self.named.remove(name)
        }
    }

    pub(crate) fn clear(&mut self) {
        self.unnamed = None;
        self.named.clear();
    }

    /// The SQL text of the statement portal `name` runs, for the log of a failure.
    pub(crate) fn sql_of(&self, name: &str) -> Option<&str> {
        self.get(name).map(|portal| portal.statement.sql.as_str())
    }
}

impl<P> Statement<P> {
    /// The SQL text, for the log of a failure.
    pub(crate) fn sql(&self) -> &str {
        &self.prepared.sql
    }
}

pub(crate) struct Portal<P> {
    statement: Arc<PreparedStatement<P>>,
    text_row_description: Bytes,
    empty: bool,
    formats: Formats,
    state: PortalState,
}

enum PortalState {
    /// Bound, not yet executed.
    Bound(Vec<Datum>),
    /// A row set partly sent; the next Execute continues it.
    Streaming {
        columns: Arc<Vec<OutputColumn>>,
        rows: RowStream,
        /// A RETURNING row set's tag (`None`: a SELECT's, `SELECT n`).
        tag: Option<String>,
    },
    /// Finished; executing again repeats the completion tag, as an empty result.
    Done(Option<String>),
}

fn missing_statement(name: &str) -> SqlError {
    if name.is_empty() {
        SqlError::new(
            SqlState::InvalidSqlStatementName,
            "unnamed prepared statement does not exist",
        )
    } else {
        SqlError::new(
            SqlState::InvalidSqlStatementName,
            format!("prepared statement \"{name}\" does not exist"),
        )
    }
}

fn missing_portal(name: &str) -> SqlError {
    SqlError::new(
        SqlState::InvalidCursorName,
        format!("portal \"{name}\" does not exist"),
    )
}

fn invalid_target(byte: u8) -> SqlError {
    SqlError::new(
        SqlState::ProtocolViolation,
        format!("invalid DESCRIBE/CLOSE message subtype {byte}"),
    )
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send, Q: SqlSession> Connection<S, Q> {
    pub(super) async fn parse(
        &mut self,
        name: String,
        sql: String,
        param_oids: &[u32],
    ) -> Result<(), Fault> {
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Err(SqlError::new(
                SqlState::DuplicatePreparedStatement,
                format!("prepared statement \"{name}\" already exists"),
            )
            .into());
        }
        // Unknown OIDs (and 0) leave the type to the SQL layer to infer.
        let types: Vec<Option<SqlType>> = param_oids
            .iter()
            .map(|oid| SqlType::from_oid(*oid))
            .collect();
        let statement = if sql.trim().is_empty() {
            Statement {
                prepared: Arc::new(PreparedStatement {
                    sql,
                    param_types: Vec::new(),
                    columns: Arc::new(Vec::new()),
                    plan: Q::Plan::default(),
                }),
                text_row_description: Bytes::new(),
                empty: true,
                declared_oids: Vec::new(),
            }
        } else {
            let cancel = Arc::clone(&self.cancel);
            let notified = std::pin::pin!(cancel.notified());
            let mut scope = cancel.scope(notified);
            let prepared = scope.run(self.session.prepare(&sql, &types)).await?;
            let text_row_description = if prepared.columns.is_empty() {
                Bytes::new()
            } else {
                let mut buf = BytesMut::new();
                put_row_description(&mut buf, &prepared.columns, &Formats::Text);
                buf.freeze()
            };
            Statement {
                prepared,
                text_row_description,
                empty: false,
                declared_oids: param_oids.to_vec(),
            }
        };
        self.statements.insert(name, statement);
        self.wire.put(&ParseComplete::new());
        Ok(())
    }

    /// Binds `bind`'s parameters to prepared statement `statement_name` (taken out of
    /// the message, so the caller can still name it when this fails).
    pub(super) fn bind(&mut self, bind: Bind, statement_name: &str) -> Result<(), Fault> {
        let statement = self
            .statements
            .get(statement_name)
            .ok_or_else(|| missing_statement(statement_name))?;
        let prepared = &statement.prepared;
        let types = &prepared.param_types;
        if bind.params.len() != types.len() {
            return Err(SqlError::new(
                SqlState::ProtocolViolation,
                format!(
                    "bind message supplies {} parameters, but prepared statement \"{}\" requires {}",
                    bind.params.len(),
                    statement_name,
                    types.len()
                ),
            )
            .into());
        }
        let binary_param = |i: usize| -> Result<bool, SqlError> {
            let code = match bind.param_formats.as_slice() {
                [] => 0,
                [one] => *one,
                many if many.len() == types.len() => many[i],
                many => {
                    return Err(SqlError::new(
                        SqlState::ProtocolViolation,
                        format!(
                            "bind message has {} parameter formats but {} parameters",
                            many.len(),
                            types.len()
                        ),
                    ))
                }
            };
            match code {
                0 => Ok(false),
                1 => Ok(true),
                other => Err(SqlError::new(
                    SqlState::InvalidParameterValue,
                    format!("unsupported format code: {other}"),
                )),
            }
        };
        let mut params = Vec::with_capacity(types.len());
        let zone = self.session.time_zone();
        for (i, (raw, ty)) in bind.params.iter().zip(types).enumerate() {
            params.push(decode_param(
                raw.as_deref(),
                *ty,
                binary_param(i)?,
                i + 1,
                &zone,
            )?);
        }
        let formats = Formats::from_codes(&bind.result_formats, prepared.columns.len())?;
        if !bind.portal.is_empty() && self.portals.contains(&bind.portal) {
            return Err(SqlError::new(
                SqlState::DuplicateCursor,
                format!("cursor \"{}\" already exists", bind.portal),
            )
            .into());
        }
        let portal = Portal {
            statement: Arc::clone(prepared),
            text_row_description: statement.text_row_description.clone(),
            empty: statement.empty,
            formats,
            state: PortalState::Bound(params),
        };
        self.portals.insert(bind.portal, portal);
        self.wire.put(&BindComplete::new());
        Ok(())
    }

    pub(super) fn describe(&mut self, target: Target, name: &str) -> Result<(), Fault> {
        match target {
            Target::Statement => {
                let statement = self
                    .statements
                    .get(name)
                    .ok_or_else(|| missing_statement(name))?;
                let oids = statement
                    .prepared
                    .param_types
                    .iter()
                    .enumerate()
                    .map(|(i, t)| match statement.declared_oids.get(i) {
                        // A declared type the SQL type stands for (varchar for text) is
                        // echoed, as drivers check it; "unknown" (705) means "infer".
                        Some(&oid)
                            if oid != 0
                                && oid != UNKNOWN_OID
                                && SqlType::from_oid(oid) == Some(*t) =>
                        {
                            oid
                        }
                        _ => t.oid(),
                    })
                    .collect();
                let description = statement.text_row_description.clone();
                self.wire.put(&ParameterDescription::new(oids));
                self.put_description(&description, None);
            }
            // A cursor DECLARE opened is a portal too (psycopg's named cursors describe
            // theirs); FETCH reads it.
            Target::Portal if self.portals.get(name).is_none() => {
                let columns = self
                    .session
                    .cursor_columns(name)
                    .ok_or_else(|| missing_portal(name))?;
                let mut description = BytesMut::new();
                put_row_description(&mut description, &columns, &Formats::Text);
                self.put_description(&description.freeze(), None);
            }
            Target::Portal => {
                let portal = self.portals.get(name).ok_or_else(|| missing_portal(name))?;
                let description = portal.text_row_description.clone();
                let custom = match portal.formats {
                    Formats::Text => None,
                    _ => Some((Arc::clone(&portal.statement), portal.formats.clone())),
                };
                self.put_description(&description, custom);
            }
            Target::Invalid(byte) => return Err(invalid_target(byte).into()),
        }
        Ok(())
    }

    /// RowDescription (the cached text one, or built for other formats) or NoData.
    fn put_description(
        &mut self,
        text: &Bytes,
        custom: Option<(Arc<PreparedStatement<Q::Plan>>, Formats)>,
    ) {
        if text.is_empty() {
            self.wire.put(&NoData::new());
            return;
        }
        match custom {
            None => self.wire.out().put_slice(text),
            Some((statement, formats)) => {
                put_row_description(self.wire.out(), &statement.columns, &formats)
            }
        }
    }

    pub(super) async fn execute(&mut self, name: &str, max_rows: i32) -> Result<(), Fault> {
        // Taken out while it runs (the session and socket are borrowed too).
        let mut portal = self
            .portals
            .remove(name)
            .ok_or_else(|| missing_portal(name))?;
        let result = self.run_portal(&mut portal, max_rows).await;
        self.portals.insert(name.to_owned(), portal);
        self.put_parameter_changes();
        result
    }

    async fn run_portal(
        &mut self,
        portal: &mut Portal<Q::Plan>,
        max_rows: i32,
    ) -> Result<(), Fault> {
        if portal.empty {
            self.wire.put(&EmptyQueryResponse::new());
            return Ok(());
        }
        let cancel = Arc::clone(&self.cancel);
        let notified = std::pin::pin!(cancel.notified());
        let mut scope = cancel.scope(notified);
        let state = std::mem::replace(&mut portal.state, PortalState::Done(None));
        let (columns, mut rows, tag) = match state {
            PortalState::Bound(params) => {
                match scope
                    .run(self.session.execute(&portal.statement, params))
                    .await?
                {
                    StatementResult::Command { tag } => {
                        self.apply_deallocations()?;
                        put_command_complete(self.wire.out(), &tag);
                        portal.state = PortalState::Done(Some(tag));
                        return Ok(());
                    }
                    StatementResult::Query { columns, rows } => (columns, rows, None),
                    StatementResult::Returning { columns, rows, tag } => (columns, rows, Some(tag)),
                    StatementResult::CopyIn { columns, sink } => {
                        let tag = self.copy_in(columns, sink).await?;
                        put_command_complete(self.wire.out(), &tag);
                        portal.state = PortalState::Done(Some(tag));
                        return Ok(());
                    }
                    StatementResult::CopyOut {
                        columns,
                        format,
                        mut rows,
                    } => {
                        let count = self
                            .copy_out(&mut scope, &columns, &format, &mut rows)
                            .await?;
                        let tag = format!("COPY {count}");
                        put_command_complete(self.wire.out(), &tag);
                        portal.state = PortalState::Done(Some(tag));
                        return Ok(());
                    }
                }
            }
            PortalState::Streaming { columns, rows, tag } => (columns, rows, tag),
            PortalState::Done(tag) => {
                match &tag {
                    Some(tag) => put_command_complete(self.wire.out(), tag),
                    None => put_select_complete(self.wire.out(), 0),
                }
                portal.state = PortalState::Done(tag);
                return Ok(());
            }
        };
        let limit = usize::try_from(max_rows).unwrap_or(0);
        let (sent, exhausted) = self
            .stream_rows(&mut scope, &columns, &mut rows, &portal.formats, limit)
            .await?;
        if exhausted {
            match tag {
                None => put_select_complete(self.wire.out(), sent),
                Some(tag) => {
                    put_command_complete(self.wire.out(), &tag);
                    portal.state = PortalState::Done(Some(tag));
                }
            }
        } else {
            self.wire.put(&PortalSuspended::new());
            portal.state = PortalState::Streaming { columns, rows, tag };
        }
        Ok(())
    }

    /// Forgets the prepared statements SQL `DEALLOCATE` dropped. A name that does not
    /// exist is SQLSTATE 26000, as in PostgreSQL.
    pub(super) fn apply_deallocations(&mut self) -> Result<(), SqlError> {
        let mut unknown = None;
        for name in self.session.take_deallocations() {
            match name {
                None => self.statements.clear(),
                Some(name) => {
                    if self.statements.remove(&name).is_none() {
                        unknown = Some(name);
                    }
                }
            }
        }
        match unknown {
            Some(name) => Err(SqlError::new(
                SqlState::InvalidSqlStatementName,
                format!("prepared statement \"{name}\" does not exist"),
            )),
            None => Ok(()),
        }
    }

    pub(super) fn close(&mut self, target: Target, name: &str) -> Result<(), Fault> {
        // Closing something that does not exist is not an error.
        match target {
            Target::Statement => {
                self.statements.remove(name);
            }
            Target::Portal => {
                self.portals.remove(name);
            }
            Target::Invalid(byte) => return Err(invalid_target(byte).into()),
        }
        self.wire.put(&CloseComplete::new());
        Ok(())
    }
}
