//! Snapshot reads: what a REPEATABLE READ READ ONLY transaction reads, the rows as they
//! were when it took its snapshot (`storage::Snapshotting` keeps them while writes go
//! on). A read names its snapshot in `ReadOptions::snapshot`.
//!
//! The snapshot holds rows, not the catalog: the catalog the engine keeps is the
//! current one. So a snapshot answers only while the schema is as it was: after any
//! DDL its reads fail with 40001 (`SchemaChangedSinceSnapshot`), and the transaction is
//! to be run again, rather than read old rows through a new schema.

use super::error::{EngineError, EngineResult};
use super::stored::ReadOptions;
use super::Engine;
use crate::storage::{Backend, Snapshot};
use std::sync::Arc;

/// A snapshot of the rows, and the catalog version it was taken at.
#[derive(Clone, Debug)]
pub struct ReadSnapshot {
    rows: Arc<Snapshot>,
    catalog_version: u64,
}

impl PartialEq for ReadSnapshot {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.rows, &other.rows)
    }
}

impl Engine {
    /// Takes a snapshot of every row as it is once the writes under way have applied.
    /// It lasts as long as a clone of it does.
    pub async fn open_snapshot(&self) -> ReadSnapshot {
        // The version first: a DDL that lands while the snapshot opens makes it fail
        // at its first read rather than read rows a new schema does not describe.
        let catalog_version = self.catalog.version();
        ReadSnapshot {
            rows: Arc::new(self.snapshots.open_snapshot().await),
            catalog_version,
        }
    }

    /// 40001 if the schema changed since `snapshot` was taken.
    pub fn check_snapshot(&self, snapshot: &ReadSnapshot) -> EngineResult<()> {
        match self.catalog.version() == snapshot.catalog_version {
            true => Ok(()),
            false => Err(EngineError::SchemaChangedSinceSnapshot),
        }
    }

    /// Where `read` reads rows from: its snapshot if it names one, else the store.
    pub(crate) fn reader<'r>(&'r self, read: &'r ReadOptions) -> EngineResult<&'r dyn Backend> {
        match &read.snapshot {
            None => Ok(self.backend.as_ref()),
            Some(snapshot) => {
                self.check_snapshot(snapshot)?;
                Ok(snapshot.rows.as_ref())
            }
        }
    }
}
