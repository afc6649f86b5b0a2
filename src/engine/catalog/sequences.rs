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

/// The integer type of a sequence's values (`CREATE SEQUENCE ... AS type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SequenceType {
    Int2,
    Int4,
    Int8,
}

impl SequenceType {
    /// The smallest and largest values of the type.
    pub fn bounds(self) -> (i64, i64) {
        match self {
            SequenceType::Int2 => (i64::from(i16::MIN), i64::from(i16::MAX)),
            SequenceType::Int4 => (i64::from(i32::MIN), i64::from(i32::MAX)),
            SequenceType::Int8 => (i64::MIN, i64::MAX),
        }
    }
}

/// A sequence's definition: what `create_sequence` needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SequenceSpec {
    pub name: String,
    /// Absent from records written before sequences kept their type: `value_type` tells
    /// it from the bounds then.
    #[serde(default)]
    pub data_type: Option<SequenceType>,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub start: i64,
    pub cycle: bool,
    /// The column whose values it generates (`SERIAL`, identity): dropped with its table.
    pub owner: Option<(String, String)>,
}

impl SequenceSpec {
    /// The type of the sequence's values.
    pub fn value_type(&self) -> SequenceType {
        self.data_type.unwrap_or(match self.max {
            32_767 => SequenceType::Int2,
            2_147_483_647 => SequenceType::Int4,
            _ => SequenceType::Int8,
        })
    }
}

/// What undoes an ALTER SEQUENCE: the definition before it, and its counter as written
/// and as it was.
#[derive(Debug, Clone)]
pub struct SequenceUndo {
    pub before: Arc<SequenceMeta>,
    written: Vec<u8>,
    restored: Vec<u8>,
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

/// A sequence's counter: the next value a new block starts at, and whether a value was
/// handed out since the sequence was created, restarted or set with `is_called` false
/// (PostgreSQL's `is_called`, which ALTER SEQUENCE needs to find the last value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counter {
    next: i128,
    called: bool,
}

impl Counter {
    fn encode(self) -> Vec<u8> {
        let mut raw = self.next.to_be_bytes().to_vec();
        raw.push(u8::from(self.called));
        raw
    }

    /// Reads a counter; one written before the flag was kept is called unless it is
    /// still at the start.
    fn decode(raw: &[u8], spec: &SequenceSpec) -> EngineResult<Counter> {
        let corrupt = || EngineError::Corrupt("sequence counter".into());
        let next = raw
            .get(..16)
            .and_then(|bytes| bytes.try_into().ok())
            .map(i128::from_be_bytes)
            .ok_or_else(corrupt)?;
        let called = match raw.get(16..) {
            Some([]) => next != i128::from(spec.start),
            Some([flag]) => *flag != 0,
            _ => return Err(corrupt()),
        };
        Ok(Counter { next, called })
    }

    /// The value `currval` would have said last (PostgreSQL's `last_value`).
    fn last_value(self, increment: i64) -> i128 {
        match self.called {
            true => self.next - i128::from(increment),
            false => self.next,
        }
    }
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

    pub fn has_sequences(&self, instance: &str) -> bool {
        self.read()
            .sequences
            .get(instance)
            .is_some_and(|sequences| !sequences.is_empty())
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
        let counter = Counter {
            next: i128::from(meta.spec.start),
            called: false,
        };
        batch.put(counter_key(meta.id), counter.encode());
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
            let mut next = Counter::decode(raw, &meta.spec)?.next;
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
                .compare_and_swap(
                    &key,
                    current,
                    Some(
                        Counter {
                            next: after,
                            called: true,
                        }
                        .encode(),
                    ),
                )
                .await?
            {
                let mut block = Block { next, left: count };
                let value = take(&mut block).ok_or_else(|| meta.exhausted())?;
                self.blocks_lock().insert(meta.id, block);
                return Ok(value);
            }
        }
    }

    /// What `SELECT last_value, is_called FROM s` shows (pg_dump restores it with
    /// `setval`): whether a value was handed out (`nextval`, or `setval(..., true)`),
    /// and the last one. That is the last value this process handed out while the
    /// newest reservation is its own; else the last value reserved, as PostgreSQL
    /// shows the last value its backends cached.
    pub async fn sequence_state(&self, meta: &SequenceMeta) -> EngineResult<(i64, bool)> {
        let Some(raw) = self.backend.get(&counter_key(meta.id)).await? else {
            return Err(EngineError::TableNotFound {
                name: meta.spec.name.clone(),
            });
        };
        let counter = Counter::decode(&raw, &meta.spec)?;
        let called = counter.called;
        let increment = i128::from(meta.spec.increment);
        let handed_out = self.blocks_lock().get(&meta.id).and_then(|block| {
            let newest = block.next + block.left * increment == counter.next;
            newest.then_some(block.next - increment)
        });
        let last = handed_out.unwrap_or_else(|| counter.last_value(meta.spec.increment));
        // Within the type's range whenever a value was handed out; a sequence run past
        // its end shows its bound.
        let last = last.clamp(i128::from(meta.spec.min), i128::from(meta.spec.max));
        Ok((i64::try_from(last).unwrap_or(meta.spec.max), called))
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
        batch.put(counter_key(meta.id), Counter { next, called }.encode());
        self.backend.write(batch).await?;
        self.blocks_lock().remove(&meta.id);
        Ok(())
    }

    /// `ALTER SEQUENCE`: gives sequence `name` the definition `spec`, and restarts it at
    /// `restart` (`Some(None)`: at its start). As in PostgreSQL, the sequence goes on
    /// from its last value with the new increment, and that value (or the restart) must
    /// lie within the new bounds. Values this process reserved and did not hand out are
    /// given back first, so the next value is the one PostgreSQL would give; another
    /// gateway's reserved values stay its own, as another backend's cached values do in
    /// PostgreSQL. Returns what undoes the change.
    pub async fn alter_sequence(
        &self,
        instance: &str,
        name: &str,
        spec: SequenceSpec,
        restart: Option<Option<i64>>,
    ) -> EngineResult<SequenceUndo> {
        let _ddl = self.ddl.lock().await;
        let before = self.sequence(instance, name)?;
        let meta = Arc::new(SequenceMeta {
            spec,
            ..(*before).clone()
        });
        loop {
            // Taken out so no value of it is handed out meanwhile; put back if the
            // change fails.
            let block = self.blocks_lock().remove(&meta.id);
            let written = self
                .write_altered_counter(&before, &meta, block, restart)
                .await;
            match written {
                Ok(Some((written, restored))) => {
                    self.write()
                        .sequences
                        .entry(instance.into())
                        .or_default()
                        .insert(name.to_string(), Arc::clone(&meta));
                    return Ok(SequenceUndo {
                        before,
                        written,
                        restored,
                    });
                }
                // Another gateway took a block meanwhile: read the counter again.
                Ok(None) => continue,
                Err(e) => {
                    if let Some(block) = block {
                        self.blocks_lock().entry(meta.id).or_insert(block);
                    }
                    return Err(e);
                }
            }
        }
    }

    /// Writes `meta`, the altered definition of `before`, with the counter where the
    /// sequence goes on (see `alter_sequence`), if the counter is still as read; returns
    /// the counter written and the one an undo puts back, if it was.
    async fn write_altered_counter(
        &self,
        before: &SequenceMeta,
        meta: &SequenceMeta,
        block: Option<Block>,
        restart: Option<Option<i64>>,
    ) -> EngineResult<Option<(Vec<u8>, Vec<u8>)>> {
        let key = counter_key(meta.id);
        let raw = self
            .backend
            .get(&key)
            .await?
            .ok_or_else(|| EngineError::TableNotFound {
                name: meta.spec.name.clone(),
            })?;
        let stored = Counter::decode(&raw, &before.spec)?;
        // The block's unused values go back only if no block was taken after it.
        let current = match block {
            Some(block)
                if block.next + block.left * i128::from(before.spec.increment) == stored.next =>
            {
                Counter {
                    next: block.next,
                    called: true,
                }
            }
            _ => stored,
        };
        let (last, counter) = match restart {
            Some(at) => {
                let at = i128::from(at.unwrap_or(meta.spec.start));
                let counter = Counter {
                    next: at,
                    called: false,
                };
                (at, counter)
            }
            None => {
                let last = current.last_value(before.spec.increment);
                let next = match current.called {
                    true => last + i128::from(meta.spec.increment),
                    false => last,
                };
                let counter = Counter {
                    next,
                    called: current.called,
                };
                (last, counter)
            }
        };
        let out_of_bounds = |below: bool, bound: i64| EngineError::RestartOutOfBounds {
            value: i64::try_from(last).unwrap_or(if below { i64::MIN } else { i64::MAX }),
            below,
            bound,
        };
        if last < i128::from(meta.spec.min) {
            return Err(out_of_bounds(true, meta.spec.min));
        }
        if last > i128::from(meta.spec.max) {
            return Err(out_of_bounds(false, meta.spec.max));
        }
        let mut batch = WriteBatch::default();
        batch.put(
            sequence_key(&meta.instance, &meta.spec.name),
            to_json(meta)?,
        );
        let written = counter.encode();
        batch.put(key.clone(), written.clone());
        let check = crate::storage::Check {
            key,
            expected: Some(raw),
        };
        let applied = self.backend.write_if(&[check], batch).await?;
        Ok(applied.then(|| (written, current.encode())))
    }

    /// Undoes an ALTER SEQUENCE of a rolled-back block: puts back the definition, and
    /// the counter as it was if no value was handed out since (one that was is never
    /// handed out again: the sequence goes on past it).
    pub async fn restore_sequence(&self, undo: &SequenceUndo) -> EngineResult<()> {
        let _ddl = self.ddl.lock().await;
        let before = &*undo.before;
        let mut batch = WriteBatch::default();
        batch.put(
            sequence_key(&before.instance, &before.spec.name),
            to_json(before)?,
        );
        self.backend.write(batch).await?;
        self.backend
            .compare_and_swap(
                &counter_key(before.id),
                Some(undo.written.clone()),
                Some(undo.restored.clone()),
            )
            .await?;
        self.blocks_lock().remove(&before.id);
        self.write()
            .sequences
            .entry(before.instance.clone())
            .or_default()
            .insert(before.spec.name.clone(), Arc::new(before.clone()));
        Ok(())
    }
}

/// Reads a sequence record while the catalog loads.
pub(super) fn load(value: &[u8]) -> EngineResult<SequenceMeta> {
    from_json(value)
}
