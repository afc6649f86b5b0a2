//! Fuzzes SQL text into the SQL layer: any string is parsed, planned and run against an
//! in-memory database (DDL, writes, fast-path reads and DataFusion queries alike), and
//! must end in a result or an `SqlError`, never a panic.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use pgwide::sql::SqlSession;

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    common::runtime().block_on(async {
        let engine = common::engine().await;
        let mut session = common::session(&engine);
        let Ok(statements) = session.parse_simple(sql) else {
            return;
        };
        for statement in statements {
            common::run(&mut session, statement).await;
        }
        // A transaction the input left open is abandoned, as a closed connection does.
        session.abort_transaction();
    });
});
