//! The tests that talk over the wire to a pgwide server started inside the test
//! process (`common::TestServer`), in one test binary.
//!
//! Each of these links the whole library, DataFusion included: as eleven binaries they
//! took eleven links and about 2.9 GB of debug binaries, on CI machines whose disk has
//! run out before. One binary links once. Run one file's tests with
//! `cargo test --test in_process sql_copy::`.

#[path = "../common/mod.rs"]
mod common;

mod background_gc;
mod concurrency;
mod differential;
mod differential_cases;
mod limits;
mod pg_dump;
mod sql_catalog;
mod sql_copy;
mod sql_datafusion;
mod sql_foreign_keys;
mod sql_golden;
mod sql_indexes;
mod sql_insert_select;
mod sql_notifications;
mod sql_partitions;
mod sql_plan_cache;
mod sql_primary_keys;
mod sql_protocols;
mod sql_reads;
mod sql_refusals;
mod sql_schema_free;
mod sql_snapshots;
mod sql_stream;
mod sql_throughput;
mod sql_writes;
