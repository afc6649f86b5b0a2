//! How a table's stored rows and bytes spread over its partition keys: the largest
//! partition keys, from a walk of the table's stored keys. A table's rows sort by
//! primary key, so each partition key's rows lie together and one pass in key order
//! sizes them all, keeping only the [`LARGEST_KEPT`] largest. A walk is reused for
//! [`WALK_REUSE_MS`], and for as long after as the table takes no write, so reading
//! the sizes often walks a busy table at most once a minute and an idle one once
//! (docs/table-store.md §9.2).

use super::catalog::TableMeta;
use super::codec::{decode_pk_ref, table_prefix};
use super::error::{EngineError, EngineResult};
use super::Engine;
use crate::storage::{Direction, KeyRange};
use std::sync::{Arc, Mutex};

/// The largest partition keys a walk keeps.
pub const LARGEST_KEPT: usize = 20;

/// How long a walk's sizes are shown before a table written since is walked again.
pub const WALK_REUSE_MS: i64 = 60_000;

/// One partition key's stored rows and the bytes of their keys and values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionSize {
    /// As the key codec encodes it.
    pub partition_key: Vec<u8>,
    pub rows: u64,
    pub bytes: u64,
}

/// What one walk of a table found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionSizes {
    /// When the walk ran (ms since the Unix epoch, engine clock).
    pub walked_ms: i64,
    pub partition_keys: u64,
    pub rows: u64,
    pub bytes: u64,
    /// The largest partition keys by bytes, largest first, at most [`LARGEST_KEPT`].
    pub largest: Vec<PartitionSize>,
}

/// A table's last walk, with the table's write count when it ran.
#[derive(Debug, Default)]
pub struct SizeCache {
    last: Mutex<Option<(u64, Arc<PartitionSizes>)>>,
}

impl Engine {
    /// `table`'s partition sizes: the last walk if it is recent or nothing was written
    /// since, else a new walk.
    pub async fn partition_sizes(&self, table: &TableMeta) -> EngineResult<Arc<PartitionSizes>> {
        let stats = self.stats.table(table.id);
        let writes = stats.snapshot().writes;
        let now = self.now_ms();
        let cached = stats
            .sizes
            .last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some((written, sizes)) = cached {
            if written == writes || now - sizes.walked_ms < WALK_REUSE_MS {
                return Ok(sizes);
            }
        }
        let sizes = Arc::new(self.walk_partitions(table, now).await?);
        *stats.sizes.last.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((writes, Arc::clone(&sizes)));
        Ok(sizes)
    }

    /// The stored rows and bytes of one partition key of `table`, counted now.
    pub async fn partition_size(
        &self,
        table: &TableMeta,
        partition_key: &[u8],
    ) -> EngineResult<PartitionSize> {
        let mut prefix = table_prefix(table.id);
        prefix.extend_from_slice(partition_key);
        let size = self.prefix_size(&prefix, usize::MAX).await?;
        Ok(PartitionSize {
            partition_key: partition_key.to_vec(),
            rows: size.rows,
            bytes: size.bytes,
        })
    }

    /// One pass over `table`'s stored rows in key order.
    async fn walk_partitions(&self, table: &TableMeta, now: i64) -> EngineResult<PartitionSizes> {
        let prefix = table_prefix(table.id);
        let partition_type = table
            .pk
            .first()
            .map(|c| c.ty)
            .ok_or_else(|| EngineError::Corrupt(format!("table {} has no key", table.name)))?;
        let mut walk = Walk::default();
        let mut failure = None;
        let mut visit = |key: &[u8], value: &[u8]| {
            let pk = &key[prefix.len().min(key.len())..];
            match decode_pk_ref(pk, partition_type) {
                Ok((_, used)) => {
                    walk.add(&pk[..used], (key.len() + value.len()) as u64);
                    true
                }
                Err(e) => {
                    failure = Some(e);
                    false
                }
            }
        };
        self.backend
            .visit(
                &KeyRange::prefix(&prefix),
                Direction::Forward,
                usize::MAX,
                &mut visit,
            )
            .await?;
        if let Some(e) = failure {
            return Err(e);
        }
        Ok(walk.finish(now))
    }
}

/// A walk in progress: the partition key being counted and the largest ones so far.
#[derive(Default)]
struct Walk {
    sizes: PartitionSizes,
    current: Option<PartitionSize>,
}

impl Walk {
    fn add(&mut self, partition_key: &[u8], bytes: u64) {
        self.sizes.rows += 1;
        self.sizes.bytes += bytes;
        match &mut self.current {
            Some(current) if current.partition_key == partition_key => {
                current.rows += 1;
                current.bytes += bytes;
            }
            _ => {
                self.close_current();
                self.sizes.partition_keys += 1;
                self.current = Some(PartitionSize {
                    partition_key: partition_key.to_vec(),
                    rows: 1,
                    bytes,
                });
            }
        }
    }

    /// Ranks the finished partition key among the largest.
    fn close_current(&mut self) {
        let Some(done) = self.current.take() else {
            return;
        };
        let largest = &mut self.sizes.largest;
        if largest.len() == LARGEST_KEPT && largest.last().is_some_and(|l| l.bytes >= done.bytes) {
            return;
        }
        let at = largest.partition_point(|l| l.bytes >= done.bytes);
        largest.insert(at, done);
        largest.truncate(LARGEST_KEPT);
    }

    fn finish(mut self, now: i64) -> PartitionSizes {
        self.close_current();
        self.sizes.walked_ms = now;
        self.sizes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_largest_partition_keys_in_order() {
        let mut walk = Walk::default();
        for key in 0..100u8 {
            for _ in 0..=(key % 7) {
                walk.add(&[key], 10);
            }
        }
        let sizes = walk.finish(5);
        assert_eq!(sizes.partition_keys, 100);
        assert_eq!(sizes.largest.len(), LARGEST_KEPT);
        // Fourteen keys hold 7 rows, then come the first six of those holding 6.
        let rows: Vec<u64> = sizes.largest.iter().map(|p| p.rows).collect();
        assert_eq!(rows, [[7; 14].as_slice(), &[6; 6]].concat());
        assert!(sizes.largest.iter().all(|p| p.bytes == p.rows * 10));
        // Of equal sizes, the first walked ranks first.
        assert_eq!(sizes.largest[0].partition_key, vec![6]);
        assert_eq!(sizes.largest[14].partition_key, vec![5]);
        assert_eq!(sizes.rows, (0..100u64).map(|k| k % 7 + 1).sum::<u64>());
        assert_eq!(sizes.walked_ms, 5);
    }
}
