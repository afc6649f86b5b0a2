//! Framing of the PostgreSQL v3 protocol on one socket: reading and bounds-checking
//! frontend messages, and buffering backend messages until the connection decides to
//! flush. Only Sync, Flush, the end of a simple query, startup and fatal errors flush
//! (ARCHITECTURE.md §3.1, "Flushing only at Sync"): one `write` per client round trip
//! instead of one per message.
//!
//! Frontend messages are decoded here rather than with pgwire's decoders because those
//! read past the end of a malformed message and can panic on a truncated one; a bad
//! message must only close its own connection, with SQLSTATE 08P01.

use crate::sqlstate::SqlState;
use bytes::{Buf, BufMut, Bytes, BytesMut};
use pgwire::messages::Message;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Default bound on messages that may carry large payloads (SQL text, parameters,
/// COPY data): 5 MiB, the request-body limit of docs/table-store.md §10. Configurable per
/// server (`max_message_bytes`).
pub(crate) const DEFAULT_MAX_MESSAGE_SIZE: usize = 5 * 1024 * 1024;
/// Every other message is small; refusing big ones early bounds memory per connection.
const SMALL_MESSAGE_LIMIT: usize = 10_000;
/// Startup packets (startup, SSL/GSS/cancel requests) are small too.
const STARTUP_PACKET_LIMIT: usize = 10_000;
/// While streaming a large result, write out once this much is buffered.
const OUTPUT_HIGH_WATER: usize = 64 * 1024;

/// What the client sent, decoded and validated.
#[derive(Debug)]
pub(crate) enum Frontend {
    Query(String),
    Parse {
        name: String,
        sql: String,
        param_oids: Vec<u32>,
    },
    Bind(Bind),
    Describe {
        target: Target,
        name: String,
    },
    Execute {
        portal: String,
        max_rows: i32,
    },
    Close {
        target: Target,
        name: String,
    },
    Sync,
    Flush,
    Terminate,
    /// COPY FROM STDIN input. Outside a COPY these are ignored, as PostgreSQL does (a
    /// COPY that failed early leaves the client still sending data).
    CopyData(Bytes),
    CopyDone,
    CopyFail(String),
}

/// A Bind message: parameters stay slices of the received frame (no copy).
#[derive(Debug)]
pub(crate) struct Bind {
    pub portal: String,
    pub statement: String,
    pub param_formats: Vec<i16>,
    pub params: Vec<Option<Bytes>>,
    pub result_formats: Vec<i16>,
}

/// Whether Describe/Close address a prepared statement or a portal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Statement,
    Portal,
    /// A subtype byte other than 'S'/'P'; answered with an error, not a disconnect.
    Invalid(u8),
}

/// The connection cannot continue.
#[derive(Debug)]
pub(crate) enum WireError {
    Io(std::io::Error),
    /// The client broke the protocol; the message goes out as FATAL.
    Protocol(String),
    /// A message longer than the server's maximum; goes out as FATAL. Its body
    /// was never read, so the stream cannot be resynchronised: the connection ends.
    TooLarge(String),
}

impl WireError {
    /// The SQLSTATE and message of the FATAL error the client is told before the
    /// connection closes; `None` when the socket itself failed.
    pub(crate) fn fatal(&self) -> Option<(SqlState, &str)> {
        match self {
            WireError::Io(_) => None,
            WireError::Protocol(message) | WireError::TooLarge(message) => {
                Some((SqlState::from(self), message))
            }
        }
    }
}

impl From<std::io::Error> for WireError {
    fn from(e: std::io::Error) -> Self {
        WireError::Io(e)
    }
}

/// One client socket with its read and write buffers.
pub(crate) struct Wire<S> {
    io: S,
    input: BytesMut,
    output: BytesMut,
    /// Longest message body accepted (Query, Parse, Bind, CopyData).
    max_message_size: usize,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Wire<S> {
    pub(crate) fn new(io: S) -> Self {
        Wire {
            io,
            input: BytesMut::with_capacity(8 * 1024),
            output: BytesMut::with_capacity(8 * 1024),
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
        }
    }

    /// Bounds the messages this connection accepts; longer ones end it with 54000.
    pub(crate) fn set_max_message_size(&mut self, bytes: usize) {
        self.max_message_size = bytes;
    }

    /// The buffer backend messages are written into; sent at the next flush.
    pub(crate) fn out(&mut self) -> &mut BytesMut {
        &mut self.output
    }

    /// Appends a pgwire-defined backend message. Encoding only fails for a message
    /// over its size limit; the partial bytes are removed so the stream stays valid.
    pub(crate) fn put<M: Message>(&mut self, message: &M) {
        let start = self.output.len();
        if let Err(e) = message.encode(&mut self.output) {
            self.output.truncate(start);
            tracing::error!(error = %e, "backend message could not be encoded");
        }
    }

    /// Writes everything buffered to the socket.
    pub(crate) async fn flush(&mut self) -> std::io::Result<()> {
        if !self.output.is_empty() {
            self.io.write_all(&self.output).await?;
            self.output.clear();
        }
        self.io.flush().await
    }

    /// Writes out a large result as it grows, so memory stays bounded.
    pub(crate) async fn flush_if_full(&mut self) -> std::io::Result<()> {
        if self.output.len() >= OUTPUT_HIGH_WATER {
            self.flush().await?;
        }
        Ok(())
    }

    /// Reads until `n` bytes are buffered; `false` on a clean end of stream.
    async fn fill(&mut self, n: usize) -> std::io::Result<bool> {
        while self.input.len() < n {
            self.input.reserve(n - self.input.len());
            if self.io.read_buf(&mut self.input).await? == 0 {
                if self.input.is_empty() {
                    return Ok(false);
                }
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(true)
    }

    /// Reads one startup-phase packet (length-prefixed, no type byte): its body after
    /// the length, or `None` when the client hung up.
    pub(crate) async fn read_startup_packet(&mut self) -> Result<Option<Bytes>, WireError> {
        if !self.fill(4).await? {
            return Ok(None);
        }
        let len = i32::from_be_bytes([self.input[0], self.input[1], self.input[2], self.input[3]]);
        let len = usize::try_from(len).unwrap_or(0);
        if !(8..=STARTUP_PACKET_LIMIT).contains(&len) {
            return Err(WireError::Protocol(
                "invalid length of startup packet".into(),
            ));
        }
        if !self.fill(len).await? {
            return Ok(None);
        }
        let mut packet = self.input.split_to(len).freeze();
        packet.advance(4);
        Ok(Some(packet))
    }

    /// Reads and decodes one regular message; `None` when the client hung up.
    /// Cancel-safe: partial input stays buffered in `self.input`.
    pub(crate) async fn read_message(&mut self) -> Result<Option<Frontend>, WireError> {
        if !self.fill(5).await? {
            return Ok(None);
        }
        let kind = self.input[0];
        let len = i32::from_be_bytes([self.input[1], self.input[2], self.input[3], self.input[4]]);
        let large = matches!(kind, b'Q' | b'P' | b'B' | b'd');
        let limit = if large {
            self.max_message_size
        } else {
            SMALL_MESSAGE_LIMIT
        };
        // Checked on the header alone, so an oversized body is never buffered.
        let len = match usize::try_from(len) {
            Ok(len) if (4..=limit).contains(&len) => len,
            Ok(len) if len > limit && large => {
                return Err(WireError::TooLarge(format!(
                    "message too large: {len} bytes, maximum is {limit}"
                )))
            }
            _ => return Err(WireError::Protocol(format!("invalid message length {len}"))),
        };
        if !self.fill(1 + len).await? {
            return Err(WireError::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        let mut frame = self.input.split_to(1 + len).freeze();
        frame.advance(5);
        decode(kind, Reader(frame)).map(Some)
    }
}

/// Bounds-checked reading of one message body.
struct Reader(Bytes);

impl Reader {
    fn need(&self, n: usize) -> Result<(), WireError> {
        if self.0.remaining() < n {
            return Err(malformed());
        }
        Ok(())
    }
    fn u8(&mut self) -> Result<u8, WireError> {
        self.need(1)?;
        Ok(self.0.get_u8())
    }
    fn i16(&mut self) -> Result<i16, WireError> {
        self.need(2)?;
        Ok(self.0.get_i16())
    }
    fn i32(&mut self) -> Result<i32, WireError> {
        self.need(4)?;
        Ok(self.0.get_i32())
    }
    /// A count of following items; negative counts are malformed.
    fn count(&mut self) -> Result<usize, WireError> {
        usize::try_from(self.i16()?).map_err(|_| malformed())
    }
    fn cstr(&mut self) -> Result<String, WireError> {
        let end = self.0.iter().position(|b| *b == 0).ok_or_else(malformed)?;
        let bytes = self.0.split_to(end);
        self.0.advance(1);
        String::from_utf8(bytes.to_vec())
            .map_err(|_| WireError::Protocol("invalid UTF-8 in message".into()))
    }
    fn bytes(&mut self, n: usize) -> Result<Bytes, WireError> {
        self.need(n)?;
        Ok(self.0.split_to(n))
    }
    /// PostgreSQL rejects trailing garbage too (`pq_getmsgend`).
    fn end(self) -> Result<(), WireError> {
        if self.0.has_remaining() {
            return Err(malformed());
        }
        Ok(())
    }
}

fn malformed() -> WireError {
    WireError::Protocol("invalid message format".into())
}

fn target(byte: u8) -> Target {
    match byte {
        b'S' => Target::Statement,
        b'P' => Target::Portal,
        other => Target::Invalid(other),
    }
}

fn decode(kind: u8, mut r: Reader) -> Result<Frontend, WireError> {
    let message = match kind {
        b'Q' => Frontend::Query(r.cstr()?),
        b'P' => {
            let name = r.cstr()?;
            let sql = r.cstr()?;
            let n = r.count()?;
            r.need(n * 4)?;
            let param_oids = (0..n).map(|_| r.0.get_u32()).collect();
            Frontend::Parse {
                name,
                sql,
                param_oids,
            }
        }
        b'B' => {
            let portal = r.cstr()?;
            let statement = r.cstr()?;
            let n = r.count()?;
            r.need(n * 2)?;
            let param_formats = (0..n).map(|_| r.0.get_i16()).collect();
            let n = r.count()?;
            let mut params = Vec::with_capacity(n.min(r.0.remaining() / 4));
            for _ in 0..n {
                let len = r.i32()?;
                params.push(match usize::try_from(len) {
                    Ok(len) => Some(r.bytes(len)?),
                    Err(_) if len == -1 => None,
                    Err(_) => return Err(malformed()),
                });
            }
            let n = r.count()?;
            r.need(n * 2)?;
            let result_formats = (0..n).map(|_| r.0.get_i16()).collect();
            Frontend::Bind(Bind {
                portal,
                statement,
                param_formats,
                params,
                result_formats,
            })
        }
        b'D' => Frontend::Describe {
            target: target(r.u8()?),
            name: r.cstr()?,
        },
        b'E' => Frontend::Execute {
            portal: r.cstr()?,
            max_rows: r.i32()?,
        },
        b'C' => Frontend::Close {
            target: target(r.u8()?),
            name: r.cstr()?,
        },
        b'S' => Frontend::Sync,
        b'H' => Frontend::Flush,
        b'X' => Frontend::Terminate,
        b'd' => return Ok(Frontend::CopyData(r.0)),
        b'c' => Frontend::CopyDone,
        b'f' => Frontend::CopyFail(r.cstr()?),
        other => {
            return Err(WireError::Protocol(format!(
                "invalid frontend message type {other}"
            )))
        }
    };
    r.end()?;
    Ok(message)
}

/// Backend messages written by hand because they are on the hot path and pgwire's
/// structs would need an owned `String` per message.
pub(crate) fn put_command_complete(out: &mut BytesMut, tag: &str) {
    out.put_u8(b'C');
    out.put_i32((4 + tag.len() + 1) as i32);
    out.put_slice(tag.as_bytes());
    out.put_u8(0);
}

/// `CommandComplete` for a row set: `SELECT n`.
pub(crate) fn put_select_complete(out: &mut BytesMut, rows: u64) {
    use std::fmt::Write;
    let start = out.len();
    out.put_u8(b'C');
    out.put_i32(0);
    // Writing to a BytesMut cannot fail.
    let _ = write!(out, "SELECT {rows}");
    out.put_u8(0);
    patch_length(out, start);
}

/// Fills in the length of the message that starts at `start` (its type byte).
pub(crate) fn patch_length(out: &mut BytesMut, start: usize) {
    let len = (out.len() - start - 1) as i32;
    out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Wire<S> {
    /// Appends an ErrorResponse with the error's severity, SQLSTATE and message.
    pub(crate) fn put_error(&mut self, error: &crate::sql::SqlError) {
        use pgwire::messages::response::ErrorResponse;
        self.put(&ErrorResponse::new(vec![
            (b'S', error.severity().as_str().to_owned()),
            (b'V', error.severity().as_str().to_owned()),
            (b'C', error.code().to_owned()),
            (b'M', error.message()),
        ]));
    }

    /// Appends a NoticeResponse.
    pub(crate) fn put_notice(&mut self, notice: &crate::sql::Notice) {
        use pgwire::messages::response::NoticeResponse;
        self.put(&NoticeResponse::new(vec![
            (b'S', "NOTICE".to_owned()),
            (b'V', "NOTICE".to_owned()),
            (b'C', notice.sqlstate().code().to_owned()),
            (b'M', notice.message.clone()),
        ]));
    }

    /// Appends a NotificationResponse.
    pub(crate) fn put_notification(
        &mut self,
        notification: &crate::sql::notifications::Notification,
    ) {
        use pgwire::messages::response::NotificationResponse;
        self.put(&NotificationResponse::new(
            notification.sender,
            notification.channel.clone(),
            notification.payload.clone(),
        ));
    }

    /// Appends a ParameterStatus.
    pub(crate) fn put_parameter(&mut self, name: &str, value: &str) {
        use pgwire::messages::startup::ParameterStatus;
        self.put(&ParameterStatus::new(name.to_owned(), value.to_owned()));
    }

    /// Appends ReadyForQuery with the session's transaction state.
    pub(crate) fn put_ready(&mut self, status: crate::sql::TransactionStatus) {
        use crate::sql::TransactionStatus as Sql;
        use pgwire::messages::response::{ReadyForQuery, TransactionStatus as Wire};
        self.put(&ReadyForQuery::new(match status {
            Sql::Idle => Wire::Idle,
            Sql::InTransaction => Wire::Transaction,
            Sql::Failed => Wire::Error,
        }));
    }

    /// Before closing on a message that was not read to its end: ends our side and
    /// reads and drops what the client is still sending, for a bounded time and amount.
    /// Closing a socket with unread input makes the kernel send RST, which can destroy
    /// the FATAL error before the client reads it.
    pub(crate) async fn linger(&mut self) {
        const LINGER: std::time::Duration = std::time::Duration::from_secs(2);
        const LINGER_BYTES: usize = 64 * 1024 * 1024;
        let _ = self.io.shutdown().await;
        let mut scratch = [0u8; 8192];
        let mut dropped = 0usize;
        let _ = tokio::time::timeout(LINGER, async {
            while dropped < LINGER_BYTES {
                match self.io.read(&mut scratch).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => dropped += n,
                }
            }
        })
        .await;
        self.input.clear();
    }

    /// Sends a FATAL error and flushes; the caller then closes the connection.
    pub(crate) async fn fatal(&mut self, state: SqlState, message: impl Into<String>) {
        self.put_error(&crate::sql::SqlError::fatal(state, message));
        // The client may already be gone; there is nobody left to tell.
        let _ = self.flush().await;
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Wire<S> {
    /// Reads one authentication response (a 'p' message: PasswordMessage,
    /// SASLInitialResponse or SASLResponse) and returns its body; `None` when the
    /// client hung up, as psql does after asking the user for a password.
    pub(crate) async fn read_auth_response(&mut self) -> Result<Option<Bytes>, WireError> {
        if !self.fill(5).await? {
            return Ok(None);
        }
        let kind = self.input[0];
        let len = i32::from_be_bytes([self.input[1], self.input[2], self.input[3], self.input[4]]);
        if kind != b'p' {
            return Err(WireError::Protocol(format!(
                "expected an authentication response, got message type {kind}"
            )));
        }
        let len = match usize::try_from(len) {
            Ok(len) if (4..=SMALL_MESSAGE_LIMIT).contains(&len) => len,
            _ => return Err(WireError::Protocol(format!("invalid message length {len}"))),
        };
        if !self.fill(1 + len).await? {
            return Ok(None);
        }
        let mut frame = self.input.split_to(1 + len).freeze();
        frame.advance(5);
        Ok(Some(frame))
    }
}
