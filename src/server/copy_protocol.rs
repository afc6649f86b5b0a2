//! The COPY sub-protocol: CopyInResponse then the client's CopyData until CopyDone or
//! CopyFail (fed into the SQL layer's sink), and CopyOutResponse then rows formatted as
//! text or CSV lines in CopyData messages.

use super::cancel::Scope;
use super::connection::{Connection, Fault};
use super::encode::put_text;
use super::wire::{Frontend, WireError};
use crate::sql::{
    CopyFormat, CopySink, Datum, Interruption, OutputColumn, RowStream, SqlError, SqlSession,
};
use bytes::{BufMut, BytesMut};
use futures::StreamExt;
use pgwire::messages::copy::{CopyData, CopyDone, CopyInResponse, CopyOutResponse};
use tokio::io::{AsyncRead, AsyncWrite};

/// CopyData messages carry about this much each.
const COPY_CHUNK: usize = 64 * 1024;

impl<S: AsyncRead + AsyncWrite + Unpin + Send, Q: SqlSession> Connection<S, Q> {
    /// Receives `COPY ... FROM STDIN` data into `sink`; returns the command tag.
    pub(super) async fn copy_in(
        &mut self,
        columns: usize,
        mut sink: Box<dyn CopySink>,
    ) -> Result<String, Fault> {
        let columns16 = i16::try_from(columns).unwrap_or(i16::MAX);
        self.wire
            .put(&CopyInResponse::new(0, columns16, vec![0; columns]));
        self.wire.flush().await?;
        // After an error the rest of the data is read and dropped until CopyDone/CopyFail.
        let mut failed: Option<SqlError> = None;
        loop {
            let message = match self.wire.read_message().await {
                Ok(Some(message)) => message,
                Ok(None) => {
                    sink.abort().await;
                    return Err(Fault::Io(std::io::ErrorKind::UnexpectedEof.into()));
                }
                Err(e @ (WireError::Protocol(_) | WireError::TooLarge(_))) => {
                    sink.abort().await;
                    return Err(Fault::Wire(e));
                }
                Err(WireError::Io(e)) => {
                    sink.abort().await;
                    return Err(Fault::Io(e));
                }
            };
            match message {
                Frontend::CopyData(data) => {
                    if failed.is_none() {
                        if let Err(e) = sink.data(&data).await {
                            failed = Some(e);
                        }
                    }
                }
                Frontend::CopyDone => {
                    return match failed {
                        Some(e) => {
                            sink.abort().await;
                            Err(e.into())
                        }
                        None => Ok(sink.finish().await?),
                    };
                }
                Frontend::CopyFail(reason) => {
                    sink.abort().await;
                    return Err(failed
                        .unwrap_or_else(|| SqlError::Canceled(Interruption::CopyFailed(reason)))
                        .into());
                }
                // PostgreSQL ignores Flush and Sync during COPY IN.
                Frontend::Flush | Frontend::Sync => {}
                other => {
                    sink.abort().await;
                    let message = format!("unexpected message during COPY FROM STDIN: {other:?}");
                    return Err(Fault::Io(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        message,
                    )));
                }
            }
        }
    }

    /// Sends rows as `COPY ... TO STDOUT` data; returns how many.
    pub(super) async fn copy_out(
        &mut self,
        scope: &mut Scope<'_, '_>,
        columns: &[OutputColumn],
        format: &CopyFormat,
        rows: &mut RowStream,
    ) -> Result<u64, Fault> {
        let columns16 = i16::try_from(columns.len()).unwrap_or(i16::MAX);
        self.wire
            .put(&CopyOutResponse::new(0, columns16, vec![0; columns.len()]));
        let mut chunk = BytesMut::new();
        let zone = self.session.time_zone();
        if format.header {
            let names: Vec<Datum> = columns
                .iter()
                .map(|c| Datum::Text(c.name.clone()))
                .collect();
            let text_columns: Vec<OutputColumn> = columns
                .iter()
                .map(|c| OutputColumn {
                    name: c.name.clone(),
                    ty: crate::sql::SqlType::Text,
                    origin: None,
                })
                .collect();
            put_line(&mut chunk, &names, &text_columns, format, &zone)?;
        }
        let mut count = 0u64;
        loop {
            let next = scope.run(async { Ok(rows.next().await) }).await?;
            let Some(row) = next else { break };
            put_line(&mut chunk, &row?, columns, format, &zone)?;
            count += 1;
            if chunk.len() >= COPY_CHUNK {
                self.wire.put(&CopyData::new(chunk.split().freeze()));
                self.wire.flush_if_full().await?;
            }
        }
        if !chunk.is_empty() {
            self.wire.put(&CopyData::new(chunk.freeze()));
        }
        self.wire.put(&CopyDone::new());
        Ok(count)
    }
}

/// One row as a text or CSV line, values in PostgreSQL's text output format.
fn put_line(
    out: &mut BytesMut,
    row: &[Datum],
    columns: &[OutputColumn],
    format: &CopyFormat,
    zone: &crate::sql::datetime::TimeZone,
) -> Result<(), SqlError> {
    let mut field = BytesMut::new();
    for (i, (datum, column)) in row.iter().zip(columns).enumerate() {
        if i > 0 {
            out.put_u8(format.delimiter);
        }
        if *datum == Datum::Null {
            out.put_slice(format.null.as_bytes());
            continue;
        }
        field.clear();
        put_text(&mut field, datum, column.ty, zone)?;
        if format.csv {
            let needs_quotes = field.is_empty() && format.null.is_empty()
                || field.iter().any(|&b| {
                    b == format.delimiter || b == format.quote || b == b'\n' || b == b'\r'
                })
                || field[..] == *format.null.as_bytes();
            if needs_quotes {
                out.put_u8(format.quote);
                for &b in field.iter() {
                    if b == format.quote || b == format.escape {
                        out.put_u8(format.escape);
                    }
                    out.put_u8(b);
                }
                out.put_u8(format.quote);
            } else {
                out.put_slice(&field);
            }
        } else {
            for &b in field.iter() {
                match b {
                    b'\\' => out.put_slice(b"\\\\"),
                    b'\n' => out.put_slice(b"\\n"),
                    b'\r' => out.put_slice(b"\\r"),
                    b'\t' if format.delimiter == b'\t' => out.put_slice(b"\\t"),
                    b if b == format.delimiter => {
                        out.put_u8(b'\\');
                        out.put_u8(b);
                    }
                    b => out.put_u8(b),
                }
            }
        }
    }
    out.put_u8(b'\n');
    Ok(())
}
