//! A minimal protocol-level client for what tokio-postgres hides: it builds frontend
//! messages by hand, batches them, and returns backend messages as (type, body).

use bytes::{Buf, BufMut, BytesMut};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub(super) struct Raw {
    stream: TcpStream,
    input: BytesMut,
    batch: BytesMut,
    pub parameters: HashMap<String, String>,
}

fn message(out: &mut BytesMut, kind: u8, body: impl FnOnce(&mut BytesMut)) {
    out.put_u8(kind);
    let at = out.len();
    out.put_i32(0);
    body(out);
    let len = (out.len() - at) as i32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

fn cstr(out: &mut BytesMut, s: &str) {
    out.put_slice(s.as_bytes());
    out.put_u8(0);
}

impl Raw {
    /// Connects as user `raw` with application_name `rawtest`, through ReadyForQuery.
    pub async fn connect(addr: SocketAddr, database: &str) -> Raw {
        let stream = TcpStream::connect(addr).await.unwrap();
        let mut raw = Raw {
            stream,
            input: BytesMut::new(),
            batch: BytesMut::new(),
            parameters: HashMap::new(),
        };
        let mut body = BytesMut::new();
        body.put_i32(196_608);
        for (k, v) in [
            ("user", "raw"),
            ("database", database),
            ("application_name", "rawtest"),
        ] {
            cstr(&mut body, k);
            cstr(&mut body, v);
        }
        body.put_u8(0);
        let mut packet = BytesMut::new();
        packet.put_i32(body.len() as i32 + 4);
        packet.put_slice(&body);
        raw.send_bytes(&packet).await;
        for (kind, body) in raw.until_ready().await {
            if kind == b'S' {
                let mut parts = body.split(|b| *b == 0);
                let name = String::from_utf8(parts.next().unwrap().to_vec()).unwrap();
                let value = String::from_utf8(parts.next().unwrap().to_vec()).unwrap();
                raw.parameters.insert(name, value);
            }
        }
        raw
    }

    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.unwrap();
    }

    /// Sends a simple Query.
    pub async fn query(&mut self, sql: &str) {
        message(&mut self.batch, b'Q', |o| cstr(o, sql));
        self.send().await;
    }

    pub fn parse(&mut self, name: &str, sql: &str, oids: &[u32]) -> &mut Self {
        message(&mut self.batch, b'P', |o| {
            cstr(o, name);
            cstr(o, sql);
            o.put_i16(oids.len() as i16);
            oids.iter().for_each(|oid| o.put_u32(*oid));
        });
        self
    }

    /// Bind of the unnamed portal with text parameters and the given result formats.
    pub fn bind(&mut self, statement: &str, params: &[Option<&str>], results: &[i16]) -> &mut Self {
        let params: Vec<Option<Vec<u8>>> = params
            .iter()
            .map(|p| p.map(|s| s.as_bytes().to_vec()))
            .collect();
        self.bind_raw(statement, &[0], &params, results)
    }

    pub fn bind_binary(&mut self, statement: &str, params: &[Option<Vec<u8>>]) -> &mut Self {
        self.bind_raw(statement, &[1], params, &[])
    }

    fn bind_raw(
        &mut self,
        statement: &str,
        formats: &[i16],
        params: &[Option<Vec<u8>>],
        results: &[i16],
    ) -> &mut Self {
        message(&mut self.batch, b'B', |o| {
            cstr(o, "");
            cstr(o, statement);
            o.put_i16(formats.len() as i16);
            formats.iter().for_each(|f| o.put_i16(*f));
            o.put_i16(params.len() as i16);
            for p in params {
                match p {
                    Some(v) => {
                        o.put_i32(v.len() as i32);
                        o.put_slice(v);
                    }
                    None => o.put_i32(-1),
                }
            }
            o.put_i16(results.len() as i16);
            results.iter().for_each(|f| o.put_i16(*f));
        });
        self
    }

    pub fn describe_portal(&mut self) -> &mut Self {
        message(&mut self.batch, b'D', |o| {
            o.put_u8(b'P');
            cstr(o, "");
        });
        self
    }

    pub fn execute(&mut self, max_rows: i32) -> &mut Self {
        message(&mut self.batch, b'E', |o| {
            cstr(o, "");
            o.put_i32(max_rows);
        });
        self
    }

    pub fn sync(&mut self) -> &mut Self {
        message(&mut self.batch, b'S', |_| {});
        self
    }

    pub fn flush_msg(&mut self) -> &mut Self {
        message(&mut self.batch, b'H', |_| {});
        self
    }

    /// Sends the batched messages in one write.
    pub async fn send(&mut self) {
        let batch = self.batch.split();
        self.send_bytes(&batch).await;
    }

    /// The next backend message, or `None` once the server closed the connection.
    pub async fn recv(&mut self) -> Option<(u8, Vec<u8>)> {
        tokio::time::timeout(Duration::from_secs(10), self.recv_inner())
            .await
            .expect("server answered within 10 s")
    }

    /// The next message if one arrives within `wait`.
    pub async fn try_recv(&mut self, wait: Duration) -> Option<(u8, Vec<u8>)> {
        tokio::time::timeout(wait, self.recv_inner())
            .await
            .ok()
            .flatten()
    }

    async fn recv_inner(&mut self) -> Option<(u8, Vec<u8>)> {
        loop {
            if self.input.len() >= 5 {
                let len = (&self.input[1..5]).get_i32() as usize;
                if self.input.len() > len {
                    let frame = self.input.split_to(1 + len);
                    return Some((frame[0], frame[5..].to_vec()));
                }
            }
            match self.stream.read_buf(&mut self.input).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    /// Every message up to and including ReadyForQuery.
    pub async fn until_ready(&mut self) -> Vec<(u8, Vec<u8>)> {
        let mut messages = Vec::new();
        loop {
            let message = self
                .recv()
                .await
                .expect("connection open until ReadyForQuery");
            let done = message.0 == b'Z';
            messages.push(message);
            if done {
                return messages;
            }
        }
    }

    pub async fn kinds_until_ready(&mut self) -> Vec<u8> {
        self.until_ready().await.into_iter().map(|m| m.0).collect()
    }

    /// The types of the next `n` messages.
    pub async fn kinds(&mut self, n: usize) -> Vec<u8> {
        let mut kinds = Vec::new();
        for _ in 0..n {
            kinds.push(self.recv().await.expect("a message").0);
        }
        kinds
    }
}

/// The SQLSTATE of an ErrorResponse body.
pub(super) fn error_code(body: &[u8]) -> String {
    let mut rest = body;
    while let Some((&field, tail)) = rest.split_first() {
        let end = tail.iter().position(|b| *b == 0).unwrap_or(tail.len());
        if field == b'C' {
            return String::from_utf8_lossy(&tail[..end]).into_owned();
        }
        rest = tail.get(end + 1..).unwrap_or(&[]);
    }
    String::new()
}

/// The fields of a DataRow body.
pub(super) fn data_row_fields(body: &[u8]) -> Vec<Option<Vec<u8>>> {
    let mut b = body;
    let n = b.get_i16();
    (0..n)
        .map(|_| {
            let len = b.get_i32();
            (len >= 0).then(|| {
                let v = b[..len as usize].to_vec();
                b.advance(len as usize);
                v
            })
        })
        .collect()
}
