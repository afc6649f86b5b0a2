//! An in-memory `Backend` over a `BTreeMap`, for tests and as the reference the
//! conformance suite holds other backends to.

use super::{
    Check, Direction, DurabilityTickets, Entry, KeyRange, Mutation, OrderedKv, PartitionReads,
    ReadAround, StorageResult, WriteBatch,
};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::RwLock;

/// A `BTreeMap` behind a lock; nothing survives the process.
#[derive(Default)]
pub struct MemoryBackend {
    map: RwLock<BTreeMap<Vec<u8>, Vec<u8>>>,
}

impl MemoryBackend {
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl OrderedKv for MemoryBackend {
    async fn get(&self, key: &[u8]) -> StorageResult<Option<Vec<u8>>> {
        let map = self
            .map
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Ok(map.get(key).cloned())
    }

    async fn scan(
        &self,
        range: &KeyRange,
        direction: Direction,
        limit: usize,
    ) -> StorageResult<Vec<Entry>> {
        if range.is_empty() {
            return Ok(Vec::new());
        }
        let map = self
            .map
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let iter = map.range::<Vec<u8>, _>((range.start.clone(), range.end.clone()));
        let clone = |(k, v): (&Vec<u8>, &Vec<u8>)| (k.clone(), v.clone());
        Ok(match direction {
            Direction::Forward => iter.take(limit).map(clone).collect(),
            Direction::Backward => iter.rev().take(limit).map(clone).collect(),
        })
    }

    async fn write_if(&self, checks: &[Check], batch: WriteBatch) -> StorageResult<bool> {
        let mut map = self
            .map
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !checks
            .iter()
            .all(|check| map.get(&check.key) == check.expected.as_ref())
        {
            return Ok(false);
        }
        for mutation in batch.mutations {
            match mutation {
                Mutation::Put(k, v) => {
                    map.insert(k, v);
                }
                Mutation::Delete(k) => {
                    map.remove(&k);
                }
            }
        }
        Ok(true)
    }
}

/// Every write is durable when applied, as much as anything in memory is.
impl DurabilityTickets for MemoryBackend {}

/// A partition is read like any other range.
impl PartitionReads for MemoryBackend {}

/// Rows are stored one by one.
impl ReadAround for MemoryBackend {}
