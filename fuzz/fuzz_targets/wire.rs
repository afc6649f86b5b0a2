//! Fuzzes the wire protocol after startup: a client completes startup, then sends the
//! input as raw frontend messages over an in-memory stream into the real connection
//! loop (simple and extended query, COPY, every framing check). The server must answer
//! or close the connection with an error, never panic or hang.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use pgwide::server::{serve_stream, ServerOptions};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn startup_packet() -> Vec<u8> {
    let mut body = 196_608i32.to_be_bytes().to_vec();
    for s in ["user", "fuzz", "database", "postgres", ""] {
        body.extend_from_slice(s.as_bytes());
        body.push(0);
    }
    let mut packet = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    packet.extend_from_slice(&body);
    packet
}

fuzz_target!(|data: &[u8]| {
    common::runtime().block_on(async {
        let engine = common::engine().await;
        let factory = Arc::new(common::Factory(engine));
        let options = ServerOptions {
            // Small, so the size check is reachable by fuzzed lengths.
            max_message_size: 64 * 1024,
            ..ServerOptions::default()
        };
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (mut from_server, mut to_server) = tokio::io::split(client);
        let send = async move {
            let _ = to_server.write_all(&startup_packet()).await;
            let _ = to_server.write_all(data).await;
            // End of input: the server sees the client hang up.
            let _ = to_server.shutdown().await;
        };
        let receive = async move {
            let mut sink = Vec::new();
            let _ = from_server.read_to_end(&mut sink).await;
        };
        let serve = serve_stream(server, factory, options);
        // Generous: one slow statement (bounded by statement_timeout) per message.
        let all = async {
            tokio::join!(send, receive, serve);
        };
        if tokio::time::timeout(Duration::from_secs(60), all)
            .await
            .is_err()
        {
            panic!("the connection did not end after the client hung up");
        }
    });
});
