//! COPY: `COPY t [(cols)] FROM STDIN` loads rows in text or CSV format through the
//! engine in atomic chunks of `CHUNK_ROWS` rows (each row a PutRow EXPECT_NOT_EXIST, so
//! an existing key is 23505). The chunks do not wait for their own sync: COPY completes
//! once the last one is durable. Two chunks are in flight while the next is parsed: the
//! backend applies them on another thread, in order (see `InFlight`). A bad line is
//! reported with its line number and the rows already written by that COPY are deleted
//! again, so nothing of it stays. Inside a transaction block the rows are kept instead,
//! checked against the transaction's writes at CopyDone and staged with them (see
//! [`CopyDestination`]). `COPY ... TO STDOUT` runs a SELECT whose rows the server
//! formats.

use super::ddl::{object_name, table_name, ROWID};
use super::expr::{fold, Params};
use super::read_statements::{plan_query, SelectStatement};
use super::session_state::SessionState;
use super::sql_types::{
    CopyFormat, CopySink, Datum, SqlError, SqlResult, SqlType, StatementResult,
};
use super::statement_aftermath::Aftermath;
use super::statement_handler::{Claim, StatementHandler};
use super::values::{
    cast, column_value, declared_type, key_value, null_in_key, text_into_pk, text_into_value,
};
use crate::auth::Privilege;
use crate::engine::{
    BatchMode, ColumnOp, Condition, ConditionFailure, Engine, EngineResult, PkValue, PrimaryKey,
    RowChange, RowExistence, RowWrite, StagedWrites, SyncTicket, TableMeta, ValueType,
    WriteOutcome, WriteResult,
};
use crate::sqlstate::SqlState;
use async_trait::async_trait;
use futures::future::BoxFuture;
use futures::FutureExt;
use sqlparser::ast::{
    CopyLegacyCsvOption, CopyLegacyOption, CopyOption, CopySource, CopyTarget, Ident, ObjectName,
    Statement,
};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;

/// Rows per chunk a COPY hands to the engine (or fewer, at half the batch byte limit).
/// A COPY is not a BatchWriteRow, so its 200-row limit does not apply: each chunk costs
/// a hand-off to a blocking thread, a write-ahead log record and an exclusive sled
/// batch, and 200-row chunks paid that 5,000 times per million rows.
const CHUNK_ROWS: usize = 1000;

/// Chunks handed to the engine and not yet settled. With one, the connection waited for
/// each chunk's apply before it could prepare the next, and a 300,000-row COPY spent a
/// third of its time in that wait; with two, preparing and applying overlap.
const IN_FLIGHT_CHUNKS: usize = 2;

/// The handler of COPY.
pub(super) struct Copies;

/// A planned COPY.
pub(super) enum CopyCommand {
    /// `COPY table [(columns)] FROM STDIN`; the table is looked up when it runs.
    FromStdin {
        table: ObjectName,
        columns: Vec<Ident>,
        format: CopyFormat,
    },
    /// `COPY table | (query) TO STDOUT`: a SELECT whose rows the server formats.
    ToStdout {
        select: SelectStatement,
        format: CopyFormat,
    },
}

impl StatementHandler for Copies {
    type Plan = CopyCommand;

    fn writes(plan: &CopyCommand) -> Option<&'static str> {
        matches!(plan, CopyCommand::FromStdin { .. }).then_some("COPY FROM")
    }

    fn plan(
        state: &SessionState,
        statement: Box<Statement>,
        params: &mut Params,
    ) -> Claim<CopyCommand> {
        match *statement {
            Statement::Copy {
                source,
                to,
                target,
                options,
                legacy_options,
                ..
            } => Claim::Planned(plan_copy(
                state,
                source,
                to,
                target,
                &options,
                &legacy_options,
                params,
            )),
            _ => Claim::NotMine(statement),
        }
    }

    fn authorize(state: &SessionState, plan: &CopyCommand) -> SqlResult<()> {
        match plan {
            CopyCommand::FromStdin { table, .. } => {
                if state.access.unrestricted() {
                    return Ok(());
                }
                let table = state.engine.table(&state.instance, &table_name(table)?)?;
                Ok(state.access.check_table(&table, Privilege::Insert)?)
            }
            CopyCommand::ToStdout { select, .. } => select.authorize(state),
        }
    }

    async fn execute(
        state: &mut SessionState,
        plan: &CopyCommand,
        params: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        match plan {
            CopyCommand::FromStdin {
                table,
                columns,
                format,
            } => {
                let destination = match &state.transaction {
                    None => CopyDestination::Table,
                    Some(t) => CopyDestination::Transaction {
                        before: t.staged.clone(),
                        aftermath: Arc::clone(&state.aftermath),
                    },
                };
                let (columns, sink) = copy_from(
                    &state.engine,
                    &state.instance,
                    table,
                    columns,
                    format.clone(),
                    destination,
                )?;
                Ok(StatementResult::CopyIn { columns, sink })
            }
            CopyCommand::ToStdout { select, format } => match select.run(state, params).await? {
                StatementResult::Query { columns, rows } => Ok(StatementResult::CopyOut {
                    columns,
                    format: format.clone(),
                    rows,
                }),
                _ => Err(SqlError::unsupported(
                    "COPY TO needs a query that returns rows",
                )),
            },
        }
    }
}

/// COPY FROM STDIN or TO STDOUT; files are the client's to read (psql's `\copy`).
fn plan_copy(
    state: &SessionState,
    source: CopySource,
    to: bool,
    target: CopyTarget,
    options: &[CopyOption],
    legacy: &[CopyLegacyOption],
    params: &mut Params,
) -> SqlResult<CopyCommand> {
    let format = format(options, legacy)?;
    match (to, target, source) {
        (false, CopyTarget::Stdin, CopySource::Table { table_name, columns }) => {
            Ok(CopyCommand::FromStdin {
                table: table_name,
                columns,
                format,
            })
        }
        (true, CopyTarget::Stdout, source) => {
            let query = match source {
                CopySource::Table { table_name, columns } => {
                    let sql = select_for(&table_name, &columns)?;
                    match super::statement_parser::parse(&sql)?.pop() {
                        Some(Statement::Query(query)) => query,
                        _ => return Err(SqlError::internal("COPY's query did not parse as a SELECT")),
                    }
                }
                CopySource::Query(query) => query,
            };
            let select = plan_query(state, &query, params)?;
            Ok(CopyCommand::ToStdout { select, format })
        }
        _ => Err(SqlError::unsupported(
            "COPY works with FROM STDIN and TO STDOUT only; files are read by the client (psql \\copy)",
        )),
    }
}

/// Reads a COPY's options into a format.
fn format(options: &[CopyOption], legacy: &[CopyLegacyOption]) -> SqlResult<CopyFormat> {
    let mut csv = false;
    let mut header = false;
    let (mut delimiter, mut null, mut quote, mut escape) = (None, None, None, None);
    for option in options {
        match option {
            CopyOption::Format(name) => match fold(name).as_str() {
                "csv" => csv = true,
                "text" => csv = false,
                other => {
                    return Err(SqlError::unsupported(format!(
                        "COPY format \"{other}\" is not supported"
                    )))
                }
            },
            CopyOption::Header(h) => header = *h,
            CopyOption::Delimiter(c) => delimiter = Some(*c),
            CopyOption::Null(n) => null = Some(n.clone()),
            CopyOption::Quote(c) => quote = Some(*c),
            CopyOption::Escape(c) => escape = Some(*c),
            CopyOption::Encoding(e)
                if e.eq_ignore_ascii_case("utf8") || e.eq_ignore_ascii_case("utf-8") => {}
            other => {
                return Err(SqlError::unsupported(format!(
                    "COPY option {other} is not supported"
                )))
            }
        }
    }
    for option in legacy {
        match option {
            CopyLegacyOption::Csv(csv_options) => {
                csv = true;
                for o in csv_options {
                    match o {
                        CopyLegacyCsvOption::Header => header = true,
                        CopyLegacyCsvOption::Quote(c) => quote = Some(*c),
                        CopyLegacyCsvOption::Escape(c) => escape = Some(*c),
                        other => {
                            return Err(SqlError::unsupported(format!(
                                "COPY option {other} is not supported"
                            )))
                        }
                    }
                }
            }
            CopyLegacyOption::Delimiter(c) => delimiter = Some(*c),
            CopyLegacyOption::Null(n) => null = Some(n.clone()),
            CopyLegacyOption::Header => header = true,
            other => {
                return Err(SqlError::unsupported(format!(
                    "COPY option {other} is not supported"
                )))
            }
        }
    }
    let mut format = if csv {
        CopyFormat::csv()
    } else {
        CopyFormat::text()
    };
    format.header = header;
    let byte = |c: char, what: &str| -> SqlResult<u8> {
        u8::try_from(c as u32)
            .ok()
            .filter(|b| b.is_ascii() && *b != b'\n' && *b != b'\r')
            .ok_or_else(|| {
                SqlError::new(
                    SqlState::InvalidParameterValue,
                    format!("COPY {what} must be a single one-byte character"),
                )
            })
    };
    if let Some(d) = delimiter {
        format.delimiter = byte(d, "delimiter")?;
    }
    if let Some(q) = quote {
        format.quote = byte(q, "quote")?;
    }
    format.escape = match escape {
        Some(e) => byte(e, "escape")?,
        None => format.quote,
    };
    if let Some(n) = null {
        format.null = n;
    }
    Ok(format)
}

/// Where each field of a COPY line goes.
#[derive(Debug, Clone)]
enum Field {
    /// Key column `k`, when declared a date or time that type.
    Pk(usize, Option<SqlType>),
    /// An attribute, its value type (`None`: not yet known) and, when declared a date
    /// or time, that type.
    Attr(String, Option<ValueType>, Option<SqlType>),
}

/// A column's declared type when it is a date, time or uuid, whose text COPY reads as
/// one.
fn temporal_type(table: &TableMeta, column: &str) -> Option<SqlType> {
    declared_type(table, column).filter(|ty| ty.is_distinct_kind())
}

/// The column list of a COPY FROM: the given one, or every visible column in order.
fn fields(table: &TableMeta, columns: &[Ident]) -> SqlResult<Vec<Field>> {
    let names: Vec<String> = if columns.is_empty() {
        table
            .ordered_columns()
            .into_iter()
            .filter(|c| !(table.auto_rowid && *c == ROWID))
            .map(String::from)
            .collect()
    } else {
        columns.iter().map(fold).collect()
    };
    // PostgreSQL computes an omitted column's DEFAULT per row; COPY does not yet.
    if let Some(column) = table.defaults.keys().find(|c| !names.contains(c)) {
        return Err(SqlError::unsupported(format!(
            "COPY leaving out column \"{column}\", which has a DEFAULT, is not supported \
             yet: list the column in COPY, or use INSERT"
        )));
    }
    names
        .into_iter()
        .map(|name| match table.pk_index(&name) {
            Some(_) if table.auto_rowid => Err(SqlError::new(
                SqlState::GeneratedAlways,
                format!("cannot copy into the hidden column \"{name}\""),
            )),
            Some(k) => Ok(Field::Pk(k, temporal_type(table, &name))),
            None => {
                crate::engine::check_name(&name)?;
                let ty = table.column(&name).map(|c| c.ty);
                let temporal = temporal_type(table, &name);
                Ok(Field::Attr(name, ty, temporal))
            }
        })
        .collect()
}

/// Where the rows of a `COPY ... FROM STDIN` go.
pub enum CopyDestination {
    /// Into the table, chunk by chunk as they arrive (no transaction block is open).
    Table,
    /// Into the open transaction block, whose writes so far are `before`. The rows are
    /// staged after them at CopyDone, and the result left in `aftermath` for the
    /// session to take, as a COPY finishes after the session handed it to the server.
    Transaction {
        before: StagedWrites,
        aftermath: Arc<Aftermath>,
    },
}

/// Opens the sink of `COPY table [(columns)] FROM STDIN`.
/// Returns the number of columns each line holds and the sink.
fn copy_from(
    engine: &Arc<Engine>,
    instance: &str,
    name: &ObjectName,
    columns: &[Ident],
    format: CopyFormat,
    destination: CopyDestination,
) -> SqlResult<(usize, Box<dyn CopySink>)> {
    let table = engine.table(instance, &table_name(name)?)?;
    let fields = fields(&table, columns)?;
    Ok((
        fields.len(),
        Box::new(CopyFrom {
            engine: Arc::clone(engine),
            table,
            fields,
            format,
            buffer: Vec::new(),
            line: 0,
            pending: Vec::new(),
            pending_bytes: 0,
            written: Vec::new(),
            in_flight: VecDeque::new(),
            written_up_to: SyncTicket::default(),
            rows: 0,
            destination,
            kept: Vec::new(),
            ended: false,
        }),
    ))
}

/// The SELECT a `COPY table [(columns)] TO STDOUT` runs.
fn select_for(name: &ObjectName, columns: &[Ident]) -> SqlResult<String> {
    let (schema, table) = object_name(name)?;
    let list = if columns.is_empty() {
        "*".to_string()
    } else {
        columns
            .iter()
            .map(|c| format!("\"{}\"", fold(c)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Ok(match schema {
        Some(schema) => format!("SELECT {list} FROM \"{schema}\".\"{table}\""),
        None => format!("SELECT {list} FROM \"{table}\""),
    })
}

struct CopyFrom {
    engine: Arc<Engine>,
    table: Arc<TableMeta>,
    fields: Vec<Field>,
    format: CopyFormat,
    /// Bytes received but not yet a complete line.
    buffer: Vec<u8>,
    /// Number of the last line taken from the buffer (1-based, counting a header).
    line: u64,
    /// Parsed rows not yet written, with their line numbers.
    pending: Vec<(u64, RowWrite)>,
    pending_bytes: usize,
    /// Keys this COPY wrote, chunk by chunk, to delete again if it fails. Kept as the
    /// chunks' own lists: one list of a million keys would be copied whole each time it
    /// grew.
    written: Vec<Vec<PrimaryKey>>,
    /// Chunks handed to the engine whose outcome is not known yet, oldest first.
    in_flight: VecDeque<InFlight>,
    /// The newest batch written: COPY waits for it to be durable once, at the end,
    /// instead of once per batch.
    written_up_to: SyncTicket,
    rows: u64,
    destination: CopyDestination,
    /// In a transaction block: every parsed row, with its line number, until CopyDone.
    kept: Vec<(u64, RowWrite)>,
    /// The end-of-data line `\.` was read: the rest of the data is not.
    ended: bool,
}

/// A chunk being written. The engine prepares it on the connection's thread as soon as
/// it is started, then the backend applies it on its apply thread (bulk loads write
/// unsynced), so the connection parses and prepares the next chunk meanwhile. Up to
/// `IN_FLIGHT_CHUNKS` are in flight: the backend applies them in the order they were
/// started, and their outcomes are taken (`CopyFrom::settle`) in that order too, so a
/// failure names the first line that failed and every chunk written before it counts.
struct InFlight {
    lines: Vec<u64>,
    keys: Vec<PrimaryKey>,
    write: BoxFuture<'static, EngineResult<(WriteResult, SyncTicket)>>,
}

fn at_line(line: u64, e: SqlError) -> SqlError {
    e.with_context(&format!("COPY line {line}"))
}

impl CopyFrom {
    /// The end of the first complete record in the buffer, honouring CSV quotes.
    fn record_end(&self, from: usize) -> Option<usize> {
        if !self.format.csv {
            return self.buffer[from..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|at| from + at);
        }
        let mut quoted = false;
        let mut i = from;
        while i < self.buffer.len() {
            let b = self.buffer[i];
            if quoted
                && b == self.format.escape
                && self.format.escape != self.format.quote
                && self.buffer.get(i + 1) == Some(&self.format.quote)
            {
                i += 2;
                continue;
            }
            if b == self.format.quote {
                quoted = !quoted;
            } else if b == b'\n' && !quoted {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    async fn take_records(&mut self, at_end: bool) -> SqlResult<()> {
        // Records are read from a cursor and the buffer shifted once at the end, so a
        // large CopyData message costs linear time.
        let mut start = 0;
        let result = async {
            loop {
                let end = match self.record_end(start) {
                    Some(end) => end,
                    None if at_end && start < self.buffer.len() => self.buffer.len(),
                    None => return Ok(()),
                };
                let mut record = &self.buffer[start..end];
                start = (end + 1).min(self.buffer.len());
                if record.last() == Some(&b'\r') {
                    record = &record[..record.len() - 1];
                }
                self.line += 1;
                // `\.` alone on a line ends the data, in CSV too (PostgreSQL 15; psql's
                // `\copy ... FROM stdin` sends it): what follows is not read.
                if record == b"\\." {
                    self.ended = true;
                }
                if self.ended || (self.line == 1 && self.format.header) {
                    continue;
                }
                let line = self.line;
                let values = if self.format.csv {
                    split_csv(record, &self.format)
                } else {
                    split_text(record, &self.format)
                }
                .map_err(|e| at_line(line, e))?;
                let bytes = record.len();
                let write = self.row(values).map_err(|e| at_line(line, e))?;
                self.pending_bytes += bytes;
                self.pending.push((line, write));
                let limits = self.engine.limits();
                if self.pending.len() >= CHUNK_ROWS
                    || self.pending_bytes >= limits.max_batch_write_bytes / 2
                {
                    self.write_pending().await?;
                }
            }
        }
        .await;
        self.buffer.drain(..start);
        result
    }

    fn row(&self, values: Vec<Option<Cow<'_, str>>>) -> SqlResult<RowWrite> {
        if values.len() < self.fields.len() {
            return Err(SqlError::new(
                SqlState::BadCopyFileFormat,
                format!(
                    "missing data: {} columns expected, {} given",
                    self.fields.len(),
                    values.len()
                ),
            ));
        }
        if values.len() > self.fields.len() {
            return Err(SqlError::new(
                SqlState::BadCopyFileFormat,
                "extra data after last expected column",
            ));
        }
        let table = &self.table;
        let mut pk: Vec<Option<PkValue>> = vec![None; table.pk.len()];
        let mut ops = Vec::with_capacity(self.fields.len());
        for (field, value) in self.fields.iter().zip(values) {
            match (field, value) {
                (Field::Pk(k, None), Some(text)) => {
                    pk[*k] = Some(text_into_pk(text, table.pk[*k].ty)?)
                }
                (Field::Pk(k, Some(temporal)), Some(text)) => {
                    let datum = cast(Datum::Text(text.into_owned()), *temporal)?;
                    pk[*k] = Some(key_value(&datum, *temporal, table, *k)?)
                }
                (Field::Pk(k, _), None) => return Err(null_in_key(&table.pk[*k].name)),
                (Field::Attr(..), None) => continue,
                (Field::Attr(column, ty, temporal), Some(text)) => ops.push(ColumnOp::Put {
                    column: column.clone(),
                    value: match temporal {
                        // Text a schema-free column's type cannot read stays a String
                        // (docs/table-store.md §3).
                        None if table.is_schema_free(column) => {
                            let text = text.into_owned();
                            text_into_value(Cow::Borrowed(&text), *ty)
                                .unwrap_or(crate::engine::Value::String(text))
                        }
                        None => text_into_value(text, *ty)?,
                        Some(temporal) => column_value(
                            cast(Datum::Text(text.into_owned()), *temporal)?,
                            Some(*temporal),
                        )?,
                    },
                    version: None,
                }),
            }
        }
        let pk = if table.auto_rowid {
            // Filled in when the chunk is written (ids are reserved per chunk).
            vec![PkValue::Integer(0)]
        } else {
            pk.into_iter()
                .enumerate()
                .map(|(k, v)| v.ok_or_else(|| null_in_key(&table.pk[k].name)))
                .collect::<SqlResult<_>>()?
        };
        Ok(RowWrite {
            pk,
            change: RowChange::Put(ops),
            condition: Condition::row(RowExistence::ExpectNotExist),
            return_row: false,
        })
    }

    /// Starts writing the parsed rows, once the chunk before them has been written.
    async fn write_pending(&mut self) -> SqlResult<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        // The next chunk's rows go into a buffer of a chunk's size: grown row by row, it
        // was reallocated ten times a chunk.
        let mut pending = std::mem::replace(&mut self.pending, Vec::with_capacity(CHUNK_ROWS));
        self.pending_bytes = 0;
        if self.table.auto_rowid {
            let first = self
                .engine
                .allocate_rowids(&self.table, pending.len() as i64)
                .await?;
            for (i, (_, write)) in pending.iter_mut().enumerate() {
                write.pk = vec![PkValue::Integer(first + i as i64)];
            }
        }
        if let CopyDestination::Transaction { .. } = self.destination {
            self.kept.append(&mut pending);
            return Ok(());
        }
        let lines: Vec<u64> = pending.iter().map(|(line, _)| *line).collect();
        let writes: Vec<(Arc<TableMeta>, RowWrite)> = pending
            .into_iter()
            .map(|(_, w)| (Arc::clone(&self.table), w))
            .collect();
        let keys: Vec<PrimaryKey> = writes.iter().map(|(_, w)| w.pk.clone()).collect();
        while self.in_flight.len() >= IN_FLIGHT_CHUNKS {
            self.settle().await?;
        }
        let engine = Arc::clone(&self.engine);
        let mut write =
            async move { engine.write_rows_unsynced(writes, BatchMode::Atomic).await }.boxed();
        // Polled once now, so the engine prepares the chunk and hands it to the backend
        // before the next one is parsed; a chunk done at once keeps its result.
        if let Some(done) = (&mut write).now_or_never() {
            write = futures::future::ready(done).boxed();
        }
        self.in_flight.push_back(InFlight { lines, keys, write });
        Ok(())
    }

    /// Waits for the oldest chunk in flight and takes its outcome: its rows count as
    /// written, or its failure becomes the COPY's error.
    async fn settle(&mut self) -> SqlResult<()> {
        let Some(InFlight { lines, keys, write }) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let (result, ticket) = write.await?;
        self.written_up_to = self.written_up_to.max(ticket);
        if let Some((index, failure)) = result.first_failure() {
            return Err(self.refused(failure, &keys[index], lines[index]));
        }
        debug_assert!(result
            .outcomes
            .iter()
            .all(|o| matches!(o, WriteOutcome::Applied(_))));
        self.rows += keys.len() as u64;
        self.written.push(keys);
        Ok(())
    }

    /// The error for the row at `line` whose condition failed.
    fn refused(&self, failure: ConditionFailure, key: &PrimaryKey, line: u64) -> SqlError {
        let what =
            match failure {
                ConditionFailure::RowExists => format!(
                "duplicate key value violates unique constraint \"{}\": key ({}) already exists",
                self.table.pk_constraint_name(),
                key.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
            ),
                other => format!("row not written: {other:?}"),
            };
        SqlError::new(
            SqlState::UniqueViolation,
            format!("{what} (COPY line {line})"),
        )
    }

    /// In a transaction block: stages every kept row after the transaction's earlier
    /// writes, as one statement, and leaves the result for the session.
    async fn stage(&mut self) -> SqlResult<()> {
        let CopyDestination::Transaction { before, aftermath } = &mut self.destination else {
            return Ok(());
        };
        let (lines, writes): (Vec<u64>, Vec<_>) = std::mem::take(&mut self.kept)
            .into_iter()
            .map(|(line, write)| (line, (Arc::clone(&self.table), write)))
            .unzip();
        let keys: Vec<PrimaryKey> = writes.iter().map(|(_, w)| w.pk.clone()).collect();
        let result = self
            .engine
            .stage_writes(before, writes, BatchMode::Atomic)
            .await?;
        if let Some((index, failure)) = result.first_failure() {
            return Err(self.refused(failure, &keys[index], lines[index]));
        }
        self.rows = keys.len() as u64;
        aftermath.stage(std::mem::take(before));
        Ok(())
    }

    /// Deletes every row this COPY wrote; in a transaction block, which this COPY
    /// did not change, aborts the block as any failed statement does.
    async fn undo(&mut self) {
        if let CopyDestination::Transaction { aftermath, .. } = &self.destination {
            aftermath.fail();
            return;
        }
        // The chunks in flight may have been written; their failures are not this error.
        while !self.in_flight.is_empty() {
            if let Err(e) = self.settle().await {
                tracing::debug!("a chunk in flight of a failed COPY was not written: {e}");
            }
        }
        let chunk = self.engine.limits().max_batch_write_rows.max(1);
        for keys in self.written.iter().flat_map(|keys| keys.chunks(chunk)) {
            let deletes = keys
                .iter()
                .map(|pk| {
                    (
                        Arc::clone(&self.table),
                        RowWrite {
                            pk: pk.clone(),
                            change: RowChange::Delete,
                            condition: Condition::IGNORE,
                            return_row: false,
                        },
                    )
                })
                .collect();
            // Unmetered: a COPY refused for its table's reserved write throughput
            // must still take back what it wrote.
            if let Err(e) = self.engine.write_rows_unmetered(deletes).await {
                tracing::error!(
                    "undoing a failed COPY into {} left rows behind: {e}",
                    self.table.name
                );
                return;
            }
        }
        self.written.clear();
    }
}

#[async_trait]
impl CopySink for CopyFrom {
    async fn data(&mut self, chunk: &[u8]) -> SqlResult<()> {
        self.buffer.extend_from_slice(chunk);
        self.take_records(false).await
    }

    async fn finish(mut self: Box<Self>) -> SqlResult<String> {
        let result = async {
            self.take_records(true).await?;
            self.write_pending().await?;
            if let CopyDestination::Transaction { .. } = self.destination {
                return self.stage().await;
            }
            while !self.in_flight.is_empty() {
                self.settle().await?;
            }
            // Acknowledged only once every written row is durable.
            Ok(self.engine.wait_durable(self.written_up_to).await?)
        }
        .await;
        match result {
            Ok(()) => Ok(format!("COPY {}", self.rows)),
            Err(e) => {
                self.undo().await;
                Err(e)
            }
        }
    }

    async fn abort(mut self: Box<Self>) {
        self.undo().await;
    }
}

fn utf8(bytes: Vec<u8>) -> SqlResult<String> {
    String::from_utf8(bytes).map_err(|_| invalid_utf8())
}

fn utf8_str(bytes: &[u8]) -> SqlResult<&str> {
    std::str::from_utf8(bytes).map_err(|_| invalid_utf8())
}

fn invalid_utf8() -> SqlError {
    SqlError::new(
        SqlState::CharacterNotInRepertoire,
        "invalid byte sequence for encoding \"UTF8\"",
    )
}

/// Splits a text-format line: delimiter-separated, backslash escapes, `\N` for NULL.
fn split_text<'a>(record: &'a [u8], format: &CopyFormat) -> SqlResult<Vec<Option<Cow<'a, str>>>> {
    let mut out = Vec::new();
    for raw in record.split(|&b| b == format.delimiter) {
        if raw == format.null.as_bytes() {
            out.push(None);
            continue;
        }
        if !raw.contains(&b'\\') {
            // Most fields have no escapes: they are read where they lie, and only a text
            // value is copied out (see `text_into_value`).
            out.push(Some(Cow::Borrowed(utf8_str(raw)?)));
            continue;
        }
        let mut value = Vec::with_capacity(raw.len());
        let mut i = 0;
        while i < raw.len() {
            if raw[i] != b'\\' || i + 1 == raw.len() {
                value.push(raw[i]);
                i += 1;
                continue;
            }
            let next = raw[i + 1];
            i += 2;
            match next {
                b't' => value.push(b'\t'),
                b'n' => value.push(b'\n'),
                b'r' => value.push(b'\r'),
                b'b' => value.push(8),
                b'f' => value.push(12),
                b'v' => value.push(11),
                b'x' => {
                    let digits: Vec<u8> = raw[i..]
                        .iter()
                        .take(2)
                        .take_while(|b| b.is_ascii_hexdigit())
                        .copied()
                        .collect();
                    let text = String::from_utf8_lossy(&digits).into_owned();
                    if let Ok(byte) = u8::from_str_radix(&text, 16) {
                        value.push(byte);
                        i += digits.len();
                    } else {
                        value.push(b'x');
                    }
                }
                b'0'..=b'7' => {
                    let mut n = u32::from(next - b'0');
                    let mut taken = 0;
                    while taken < 2 && i < raw.len() && (b'0'..=b'7').contains(&raw[i]) {
                        n = n * 8 + u32::from(raw[i] - b'0');
                        i += 1;
                        taken += 1;
                    }
                    value.push((n & 0xFF) as u8);
                }
                other => value.push(other),
            }
        }
        out.push(Some(Cow::Owned(utf8(value)?)));
    }
    Ok(out)
}

/// Splits a CSV record: quoted fields may hold delimiters, quotes (doubled or escaped)
/// and newlines; an unquoted field equal to the NULL string is NULL.
fn split_csv<'a>(record: &[u8], format: &CopyFormat) -> SqlResult<Vec<Option<Cow<'a, str>>>> {
    let mut out = Vec::new();
    let mut value = Vec::new();
    let mut quoted_field = false;
    let mut in_quotes = false;
    let mut i = 0;
    let finish =
        |value: &mut Vec<u8>, quoted: bool, out: &mut Vec<Option<Cow<'a, str>>>| -> SqlResult<()> {
            let bytes = std::mem::take(value);
            if !quoted && bytes == format.null.as_bytes() {
                out.push(None);
            } else {
                out.push(Some(Cow::Owned(utf8(bytes)?)));
            }
            Ok(())
        };
    while i < record.len() {
        let b = record[i];
        if in_quotes {
            if b == format.escape && record.get(i + 1) == Some(&format.quote) {
                value.push(format.quote);
                i += 2;
                continue;
            }
            if b == format.quote {
                in_quotes = false;
            } else {
                value.push(b);
            }
        } else if b == format.quote {
            in_quotes = true;
            quoted_field = true;
        } else if b == format.delimiter {
            finish(&mut value, quoted_field, &mut out)?;
            quoted_field = false;
        } else {
            value.push(b);
        }
        i += 1;
    }
    if in_quotes {
        return Err(SqlError::new(
            SqlState::BadCopyFileFormat,
            "unterminated CSV quoted field",
        ));
    }
    finish(&mut value, quoted_field, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_lines_unescape_and_null() {
        let f = CopyFormat::text();
        let got = split_text(b"a\\tb\t\\N\t\\\\x\t\\101", &f).unwrap();
        assert_eq!(
            got,
            vec![
                Some("a\tb".into()),
                None,
                Some("\\x".into()),
                Some("A".into())
            ]
        );
        // A field without escapes is read in place; its bytes must still be UTF-8.
        let got = split_text(b"plain\t42", &f).unwrap();
        assert!(matches!(got[0], Some(Cow::Borrowed("plain"))));
        assert_eq!(
            split_text(b"ok\t\xff", &f).map_err(|e| e.code()),
            Err("22021")
        );
    }

    #[test]
    fn csv_quotes_delimiters_and_nulls() {
        let f = CopyFormat::csv();
        let got = split_csv(b"1,\"a,b\",,\"\",\"say \"\"hi\"\"\"", &f).unwrap();
        assert_eq!(
            got,
            vec![
                Some("1".into()),
                Some("a,b".into()),
                None,
                Some("".into()),
                Some("say \"hi\"".into())
            ]
        );
        assert!(split_csv(b"\"open", &f).is_err());
    }
}
