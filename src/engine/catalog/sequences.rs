//! Sequences: PostgreSQL's `CREATE SEQUENCE` objects, and the generators behind
//! `SERIAL` and `GENERATED ... AS IDENTITY` columns (Table Store's auto-increment key
//! columns are the same mechanism). A sequence's definition is a catalog record; its
//! position is a counter in the backend, advanced by compare-and-swap in blocks of
//! `BLOCK` values that this process then hands out from memory. A block is durable
//! before its first value is handed out, so a value never repeats, even after a crash;
//! a crash (or another gateway's block) leaves a gap of at most one block, as
//! PostgreSQL's own sequences do after a crash.

use super::{from_json, to_json, Catalog, CATALOG_PREFIX};
use crate::engine::error::{EngineError, EngineResult};
use crate::storage::WriteBatch;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub(super) const SEQUENCE_TAG: u8 = b'Q';
const COUNTER_TAG: u8 = b'N';

/// Values reserved per backend write (PostgreSQL logs 32 ahead too).
const BLOCK: i128 = 32;

/// A sequence as the catalog keeps it: its definition, with its id and database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SequenceMeta {
    pub id: u32,
    pub instance: String,
    #[serde(flatten)]
    pub spec: SequenceSpec,
}

/// A sequence's definition: what `create_sequence` needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SequenceSpec {
    pub name: String,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub start: i64,
    pub cycle: bool,
    /// The column whose values it generates (`SERIAL`, identity): dropped with its table.
    pub owner: Option<(String, String)>,
}

/// Values of a sequence this process reserved and has not handed out yet.
#[derive(Debug, Clone, Copy)]
pub(super) struct Block {
    next: i128,
    left: i128,
}

pub(super) fn sequence_key(instance: &str, name: &str) -> Vec<u8> {
    let mut key = vec![CATALOG_PREFIX, SEQUENCE_TAG];
    key.extend_from_slice(instance.as_bytes());
    key.push(0);
    key.extend_from_slice(name.as_bytes());
    key
}

fn counter_key(id: u32) -> Vec<u8> {
    let mut key = vec![CATALOG_PREFIX, COUNTER_TAG];
    key.extend_from_slice(&id.to_be_bytes());
    key
}

/// The counter's value: the next value a new block starts at.
fn decode_counter(raw: &[u8]) -> EngineResult<i128> {
    raw.try_into()
        .map(i128::from_be_bytes)
        .map_err(|_| EngineError::Corrupt("sequence counter".into()))
}

impl SequenceMeta {
    fn exhausted(&self) -> EngineError {
        EngineError::SequenceLimit {
            name: self.spec.name.clone(),
            ascending: self.spec.increment > 0,
            limit: if self.spec.increment > 0 {
                self.spec.max
            } else {
                self.spec.min
            },
        }
    }

    fn holds(&self, value: i128) -> bool {
        (i128::from(self.spec.min)..=i128::from(self.spec.max)).contains(&value)
    }
}

impl Catalog {
    pub fn sequence(&self, instance: &str, name: &str) -> EngineResult<Arc<SequenceMeta>> {
        self.read()
            .sequences
            .get(instance)
            .and_then(|s| s.get(name))
            .cloned()
            .ok_or_else(|| EngineError::TableNotFound { name: name.into() })
    }

    pub fn sequences(&self, instance: &str) -> Vec<Arc<SequenceMeta>> {
        self.read()
            .sequences
            .get(instance)
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Creates a sequence; its name is a relation's, so no table may have it.
    pub async fn create_sequence(
        &self,
        instance: &str,
        spec: SequenceSpec,
    ) -> EngineResult<Arc<SequenceMeta>> {
        crate::engine::check_name(&spec.name)?;
        let _ddl = self.ddl.lock().await;
        self.instance(instance)?;
        if self.relation_exists(instance, &spec.name) {
            return Err(EngineError::TableExists { name: spec.name });
        }
        let mut batch = WriteBatch::default();
        let meta = SequenceMeta {
            id: self.allocate_id(&mut batch),
            instance: instance.into(),
            spec,
        };
        batch.put(sequence_key(instance, &meta.spec.name), to_json(&meta)?);
        batch.put(
            counter_key(meta.id),
            i128::from(meta.spec.start).to_be_bytes().to_vec(),
        );
        self.backend.write(batch).await?;
        let meta = Arc::new(meta);
        self.write()
            .sequences
            .entry(instance.into())
            .or_default()
            .insert(meta.spec.name.clone(), Arc::clone(&meta));
        Ok(meta)
    }

    /// Drops a sequence and its counter.
    pub async fn drop_sequence(&self, instance: &str, name: &str) -> EngineResult<()> {
        let _ddl = self.ddl.lock().await;
        let meta = self.sequence(instance, name)?;
        let mut batch = WriteBatch::default();
        self.drop_sequence_into(&meta, &mut batch);
        self.backend.write(batch).await?;
        self.forget_sequence(&meta);
        Ok(())
    }

    /// Adds the deletion of `meta`'s records to `batch` (under the DDL lock).
    pub(super) fn drop_sequence_into(&self, meta: &SequenceMeta, batch: &mut WriteBatch) {
        batch.delete(sequence_key(&meta.instance, &meta.spec.name));
        batch.delete(counter_key(meta.id));
    }

    /// Removes a dropped sequence from the cached catalog.
    pub(super) fn forget_sequence(&self, meta: &SequenceMeta) {
        if let Some(sequences) = self.write().sequences.get_mut(&meta.instance) {
            sequences.remove(&meta.spec.name);
        }
        self.blocks_lock().remove(&meta.id);
    }

    fn blocks_lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<u32, Block>> {
        self.blocks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The sequence's next value: from this process's block, or from a new block
    /// reserved durably first.
    pub async fn nextval(&self, meta: &SequenceMeta) -> EngineResult<i64> {
        let take = |block: &mut Block| -> Option<i64> {
            if block.left == 0 {
                return None;
            }
            let value = i64::try_from(block.next).ok()?;
            block.next += i128::from(meta.spec.increment);
            block.left -= 1;
            Some(value)
        };
        if let Some(value) = self.blocks_lock().get_mut(&meta.id).and_then(take) {
            return Ok(value);
        }
        let key = counter_key(meta.id);
        loop {
            let current = self.backend.get(&key).await?;
            let Some(raw) = &current else {
                // Dropped meanwhile.
                return Err(EngineError::TableNotFound {
                    name: meta.spec.name.clone(),
                });
            };
            let mut next = decode_counter(raw)?;
            if !meta.holds(next) {
                if !meta.spec.cycle {
                    return Err(meta.exhausted());
                }
                next = i128::from(if meta.spec.increment > 0 {
                    meta.spec.min
                } else {
                    meta.spec.max
                });
            }
            // As many values as fit before the bound, at most a block.
            let increment = i128::from(meta.spec.increment);
            let room = if increment > 0 {
                (i128::from(meta.spec.max) - next) / increment + 1
            } else {
                (i128::from(meta.spec.min) - next) / increment + 1
            };
            let count = room.clamp(1, BLOCK);
            let after = next + count * increment;
            if self
                .backend
                .compare_and_swap(&key, current, Some(after.to_be_bytes().to_vec()))
                .await?
            {
                let mut block = Block { next, left: count };
                let value = take(&mut block).ok_or_else(|| meta.exhausted())?;
                self.blocks_lock().insert(meta.id, block);
                return Ok(value);
            }
        }
    }

    /// `setval`: the next value is `value` + increment (`called`) or `value`.
    pub async fn setval(&self, meta: &SequenceMeta, value: i64, called: bool) -> EngineResult<()> {
        if !meta.holds(i128::from(value)) {
            return Err(EngineError::SetvalOutOfBounds {
                name: meta.spec.name.clone(),
                value,
                min: meta.spec.min,
                max: meta.spec.max,
            });
        }
        let next = match called {
            true => i128::from(value) + i128::from(meta.spec.increment),
            false => i128::from(value),
        };
        let mut batch = WriteBatch::default();
        batch.put(counter_key(meta.id), next.to_be_bytes().to_vec());
        self.backend.write(batch).await?;
        self.blocks_lock().remove(&meta.id);
        Ok(())
    }
}

/// Reads a sequence record while the catalog loads.
pub(super) fn load(value: &[u8]) -> EngineResult<SequenceMeta> {
    from_json(value)
}
