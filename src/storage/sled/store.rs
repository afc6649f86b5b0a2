//! The sled backend's keyspace: loose keys and packs, read as one ordered map.
//!
//! Most writes store each key as its own sled entry (the default tree, "loose"). A batch
//! that only adds keys to a stretch of the keyspace where nothing is stored yet, which is
//! what a bulk load writes, is stored instead as packs (`pack`) in a second tree, keyed
//! by each pack's last key. Their key ranges never overlap: a new pack is written only
//! where no key and no other pack lies.
//!
//! Reads merge the two; where both hold a key, the loose entry is the newer one (a
//! later write of a packed key is stored loose and shadows the packed copy, so a point
//! update costs what it costs on loose data). A delete removes the key from its pack too,
//! rewriting that pack. Whatever changes packs is written in one sled transaction with
//! the rest of the batch, so readers and crash recovery see the batch whole, as with
//! `apply_batch`. Keys outside the spans of the batches stored packed skip the packs tree
//! (`pack_spans`).

use super::pack::{self, Pack, PACK_BYTES, PACK_ROWS};
use super::pack_hints::PackHints;
use super::pack_spans::{PackSpans, SpanChange};
use super::wal::SEQUENCE_KEY;
use crate::storage::{Mutation, StorageError, StorageResult};
use sled::transaction::{ConflictableTransactionError, TransactionError, Transactional};
use sled::IVec;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::RwLock;

/// A batch is stored packed only from this many new keys: below it the packs would be
/// nearly empty and point reads of them would pay two lookups for nothing.
const PACK_MIN_BATCH: usize = 16;

/// The tree that holds the packs.
const PACKS_TREE: &[u8] = b"packs";

/// The tree that holds the spans packs may lie in (`pack_spans`).
const SPANS_TREE: &[u8] = b"pack_spans";

fn io_err(e: impl std::fmt::Display) -> StorageError {
    StorageError::Io(e.to_string())
}

/// Bytes within a sled value: all of a loose key or value, or one entry of a pack.
#[derive(Clone)]
pub(crate) struct Bytes {
    buffer: IVec,
    start: usize,
    end: usize,
    /// `buffer` is the pack the entry was read from.
    packed: bool,
}

impl Bytes {
    fn whole(buffer: IVec) -> Bytes {
        let end = buffer.len();
        Bytes {
            buffer,
            start: 0,
            end,
            packed: false,
        }
    }

    /// `part`, which must lie within `buffer`.
    fn within(buffer: &IVec, part: &[u8]) -> Bytes {
        let start = (part.as_ptr() as usize).saturating_sub(buffer.as_ptr() as usize);
        Bytes {
            buffer: buffer.clone(),
            start,
            end: start + part.len(),
            packed: true,
        }
    }

    /// The pack this value was read from, as it was then; `None` for a loose value.
    pub(crate) fn pack(&self) -> Option<&IVec> {
        self.packed.then_some(&self.buffer)
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.buffer[self.start..self.end]
    }
}

/// The loose tree and the packs tree.
pub(crate) struct Store {
    loose: sled::Db,
    packs: sled::Tree,
    /// The stored copy of `spans`.
    spans_tree: sled::Tree,
    /// The key spans packs may lie in. A lookup outside all of them skips the packs
    /// tree, so the tables that were never bulk loaded, and new keys between and past the
    /// packed ones (as INSERTs write), keep one lookup per read.
    spans: RwLock<PackSpans>,
    /// Packs that writes stored and point reads found, to find them with a `get`.
    pack_hints: PackHints,
}

impl Store {
    pub(crate) fn open(loose: sled::Db) -> StorageResult<Store> {
        let packs = loose.open_tree(PACKS_TREE).map_err(io_err)?;
        let spans_tree = loose.open_tree(SPANS_TREE).map_err(io_err)?;
        let stored = spans_tree
            .iter()
            .map(|entry| {
                entry
                    .map(|(last, first)| (last.to_vec(), first.to_vec()))
                    .map_err(io_err)
            })
            .collect::<StorageResult<Vec<_>>>()?;
        let mut spans = PackSpans::load(stored);
        if spans.len() == 0 {
            // Packs written before spans were stored: one span over all of them, as
            // those versions kept.
            if let (Some((_, first_pack)), Some((last_key, _))) = (
                packs.first().map_err(io_err)?,
                packs.last().map_err(io_err)?,
            ) {
                let first_key = Pack::parse(&first_pack)?.key(0)?.to_vec();
                if let Some(change) = spans.cover(&first_key, &last_key) {
                    spans_tree
                        .apply_batch(span_writes(&change))
                        .map_err(io_err)?;
                }
            }
        }
        Ok(Store {
            loose,
            packs,
            spans_tree,
            spans: RwLock::new(spans),
            pack_hints: PackHints::default(),
        })
    }

    /// How many packs this server knows of: those written since it started and those
    /// reads have found (`pack_hints`).
    pub(crate) fn known_packs(&self) -> usize {
        self.pack_hints.len()
    }

    /// The loose tree, which also holds the reserved sequence key.
    pub(crate) fn loose(&self) -> &sled::Db {
        &self.loose
    }

    /// How many packs exist.
    pub(crate) fn packs(&self) -> usize {
        self.packs.len()
    }

    /// How many spans packs may lie in.
    pub(crate) fn pack_spans(&self) -> usize {
        self.spans.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether some pack may hold a key in `[low, high]`.
    fn may_pack(&self, low: Bound<&[u8]>, high: Bound<&[u8]>) -> bool {
        self.spans
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .meets(low, high)
    }

    fn may_pack_key(&self, key: &[u8]) -> bool {
        self.may_pack(Bound::Included(key), Bound::Included(key))
    }

    /// Makes the spans cover `[low, high]`, before packs there appear; returns the
    /// writes that store the change, if there is one.
    fn widen_spans(&self, low: &[u8], high: &[u8]) -> Option<sled::Batch> {
        let change = self
            .spans
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .cover(low, high);
        change.as_ref().map(span_writes)
    }

    /// The value under `key`, loose or packed.
    pub(crate) fn get(&self, key: &[u8]) -> StorageResult<Option<Bytes>> {
        if let Some(value) = self.loose.get(key).map_err(io_err)? {
            return Ok(Some(Bytes::whole(value)));
        }
        if !self.may_pack_key(key) {
            return Ok(None);
        }
        if let Some(answer) = self.get_packed_by_hint(key)? {
            return Ok(answer);
        }
        let Some((last_key, buffer)) = self.pack_holding(key)? else {
            return Ok(None);
        };
        self.pack_hints.remember(&last_key);
        let pack = Pack::parse(&buffer)?;
        Ok(pack.get(key)?.map(|value| Bytes::within(&buffer, value)))
    }

    /// The packed value under `key` as the pack hints find it: `Some` of the answer when
    /// the remembered pack they lead to covers `key`, `None` when they cannot tell (no
    /// hint, a pack since gone, or a range that begins after `key`).
    fn get_packed_by_hint(&self, key: &[u8]) -> StorageResult<Option<Option<Bytes>>> {
        let Some(last_key) = self.pack_hints.at_or_after(key) else {
            return Ok(None);
        };
        let Some(buffer) = self.packs.get(&last_key).map_err(io_err)? else {
            self.pack_hints.forget(&last_key);
            return Ok(None);
        };
        let pack = Pack::parse(&buffer)?;
        if pack.key(0)? > key {
            return Ok(None);
        }
        Ok(Some(
            pack.get(key)?.map(|value| Bytes::within(&buffer, value)),
        ))
    }

    /// The pack stored under `last_key` now, and the loose keys within its range, which
    /// shadow its copies: `None` when there is no such pack, or when more than
    /// `PACK_ROWS` loose keys lie in its range (a pack mostly rewritten loose).
    pub(crate) fn pack_and_shadows(
        &self,
        last_key: &[u8],
    ) -> StorageResult<Option<(IVec, Vec<IVec>)>> {
        let Some(buffer) = self.packs.get(last_key).map_err(io_err)? else {
            return Ok(None);
        };
        let first_key = Pack::parse(&buffer)?.key(0)?;
        let mut shadows = Vec::new();
        for entry in self.loose.range::<&[u8], _>(first_key..=last_key) {
            let (key, _) = entry.map_err(io_err)?;
            if shadows.len() == PACK_ROWS {
                return Ok(None);
            }
            shadows.push(key);
        }
        Ok(Some((buffer, shadows)))
    }

    /// The pack whose range could hold `key` (the first whose last key is not below
    /// it), with its key.
    fn pack_holding(&self, key: &[u8]) -> StorageResult<Option<(IVec, IVec)>> {
        self.packs
            .range::<&[u8], _>(key..)
            .next()
            .transpose()
            .map_err(io_err)
    }

    /// Whether no key is stored in `[low, high]` and no pack's range meets it.
    pub(crate) fn is_vacant(&self, low: &[u8], high: &[u8]) -> StorageResult<bool> {
        let mut loose = self.loose.range::<&[u8], _>(low..=high);
        if loose.next().transpose().map_err(io_err)?.is_some() {
            return Ok(false);
        }
        if !self.may_pack(Bound::Included(low), Bound::Included(high)) {
            return Ok(true);
        }
        match self.pack_holding(low)? {
            Some((_, buffer)) => Ok(Pack::parse(&buffer)?.key(0)? > high),
            None => Ok(true),
        }
    }

    /// Every entry in `(start, end)`, in key order.
    pub(crate) fn range(&self, start: Bound<&[u8]>, end: Bound<&[u8]>) -> Entries {
        let loose = self.loose.range::<&[u8], _>((start, end)).fuse();
        let packed = self.may_pack(start, end).then(|| PackedEntries {
            packs: self.packs.range::<&[u8], _>((start, Bound::Unbounded)),
            current: None,
            start: Some(to_owned(start)),
            end: to_owned(end),
        });
        Entries {
            loose,
            packed,
            loose_head: None,
            packed_head: None,
        }
    }

    /// Applies one log record's mutations.
    ///
    /// A batch of several keys is applied atomically (`apply_batch`, or a transaction
    /// when it changes packs), together with its sequence number: after a crash sled is
    /// a prefix of its writes, so that number tells recovery which records to replay, and
    /// a batch sled kept but the log lost (never acknowledged) is not torn apart by
    /// replaying older records over part of it. A single loose key is a plain insert or
    /// remove: sled's `apply_batch` rolls its IO buffer twice (an IO thread's `pwrite`
    /// and `sync_file_range` every time), which cost more than the log's own sync. Such a
    /// write leaves the sequence number behind; replay then repeats some single-key
    /// records sled already has, which is harmless in order, and checkpoints move the
    /// number forward.
    pub(crate) fn apply(&self, sequence: u64, mut mutations: Vec<Mutation>) -> StorageResult<()> {
        let mut pack_writes = sled::Batch::default();
        let mut spans_writes = None;
        let mut new_packs = Vec::new();
        let (mut loose, packs_change) = if self.packable(&mut mutations)? {
            if let (Some(first), Some(last)) = (mutations.first(), mutations.last()) {
                // Before the packs appear, so no reader that could see them skips them.
                spans_writes = self.widen_spans(first.key(), last.key());
            }
            new_packs = self.pack(mutations, &mut pack_writes);
            (Vec::new(), true)
        } else {
            let changed = self.unpack_deleted(&mutations, &mut pack_writes)?;
            (mutations, changed)
        };
        if !packs_change && loose.len() == 1 {
            // A single key is a plain insert or remove (see above).
            match loose.pop() {
                Some(Mutation::Put(k, v)) => self.loose.insert(k, v).map(drop),
                Some(Mutation::Delete(k)) => self.loose.remove(k).map(drop),
                None => Ok(()),
            }
            .map_err(io_err)?;
            return Ok(());
        }
        let mut loose_writes = sled::Batch::default();
        for mutation in loose {
            match mutation {
                Mutation::Put(k, v) => loose_writes.insert(k, v),
                Mutation::Delete(k) => loose_writes.remove(k),
            }
        }
        loose_writes.insert(SEQUENCE_KEY, &sequence.to_be_bytes());
        if !packs_change {
            return self.loose.apply_batch(loose_writes).map_err(io_err);
        }
        let loose_tree: &sled::Tree = &self.loose;
        (loose_tree, &self.packs, &self.spans_tree)
            .transaction(|(loose, packs, spans)| {
                packs.apply_batch(&pack_writes)?;
                loose.apply_batch(&loose_writes)?;
                if let Some(spans_writes) = &spans_writes {
                    spans.apply_batch(spans_writes)?;
                }
                Ok::<_, ConflictableTransactionError<()>>(())
            })
            .map_err(|e| match e {
                TransactionError::Storage(e) => io_err(e),
                TransactionError::Abort(()) => StorageError::Io("a write was aborted".into()),
            })?;
        // Reads of bulk-loaded rows would otherwise learn these packs one at a time, each
        // with a range iterator that clones the leaf it seeks into, often after a hint to
        // a neighbouring pack has fetched another leaf for nothing. In point gets right
        // after a 10^7-row load, where most leaves are not in sled's cache, the iterator
        // took 23% of the server's CPU.
        self.pack_hints.remember_all(new_packs);
        Ok(())
    }

    /// Whether the batch only puts distinct keys into a stretch of the keyspace where
    /// nothing is stored, and is large enough to be worth packing. A batch of puts is left
    /// sorted by key, which changes nothing it does: the sort is stable, so puts of one
    /// key keep their order.
    fn packable(&self, mutations: &mut [Mutation]) -> StorageResult<bool> {
        if mutations.len() < PACK_MIN_BATCH
            || !mutations.iter().all(|m| matches!(m, Mutation::Put(..)))
        {
            return Ok(false);
        }
        mutations.sort_by(|a, b| a.key().cmp(b.key()));
        if mutations
            .windows(2)
            .any(|pair| pair[0].key() == pair[1].key())
        {
            return Ok(false);
        }
        match (mutations.first(), mutations.last()) {
            (Some(first), Some(last)) => self.is_vacant(first.key(), last.key()),
            _ => Ok(false),
        }
    }

    /// Writes a packable batch's puts as packs of up to `PACK_ROWS` entries and
    /// `PACK_BYTES` bytes; returns the packs' keys (their last keys).
    fn pack(&self, mutations: Vec<Mutation>, pack_writes: &mut sled::Batch) -> Vec<Vec<u8>> {
        let mut group: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(PACK_ROWS);
        let mut bytes = 0;
        let mut last_keys = Vec::new();
        let mut close = |group: &mut Vec<(Vec<u8>, Vec<u8>)>| {
            if let Some((last, _)) = group.last() {
                let packed = pack::encode(group.iter().map(|(k, v)| (k.as_slice(), v.as_slice())));
                pack_writes.insert(last.as_slice(), packed);
                last_keys.push(last.clone());
            }
            group.clear();
        };
        for mutation in mutations {
            if let Mutation::Put(key, value) = mutation {
                bytes += key.len() + value.len();
                group.push((key, value));
                if group.len() == PACK_ROWS || bytes >= PACK_BYTES {
                    close(&mut group);
                    bytes = 0;
                }
            }
        }
        close(&mut group);
        last_keys
    }

    /// Rewrites the packs that hold keys this batch deletes, without those keys; returns
    /// whether there were any.
    fn unpack_deleted(
        &self,
        mutations: &[Mutation],
        pack_writes: &mut sled::Batch,
    ) -> StorageResult<bool> {
        // Pack key -> (pack, its keys to drop); several deletes can hit one pack.
        let mut touched: BTreeMap<IVec, (IVec, Vec<usize>)> = BTreeMap::new();
        // The pack the previous delete looked up: deletes of a whole range (DROP TABLE)
        // come in key order, many to a pack, and need one lookup per pack.
        let mut previous: Option<(IVec, IVec)> = None;
        for mutation in mutations {
            let Mutation::Delete(key) = mutation else {
                continue;
            };
            if !self.may_pack_key(key) {
                continue;
            }
            let reusable = match &previous {
                Some((pack_key, buffer)) => {
                    key.as_slice() <= pack_key.as_ref()
                        && Pack::parse(buffer)?.key(0)? <= key.as_slice()
                }
                None => false,
            };
            if !reusable {
                previous = self.pack_holding(key)?;
            }
            let Some((pack_key, buffer)) = &previous else {
                continue;
            };
            if let Ok(index) = Pack::parse(buffer)?.search(key)? {
                let (pack_key, buffer) = (pack_key.clone(), buffer.clone());
                let (_, dropped) = touched
                    .entry(pack_key)
                    .or_insert_with(|| (buffer, Vec::new()));
                dropped.push(index);
            }
        }
        for (pack_key, (buffer, dropped)) in &touched {
            let pack = Pack::parse(buffer)?;
            let kept = (0..pack.len())
                .filter(|index| !dropped.contains(index))
                .map(|index| pack.entry(index))
                .collect::<StorageResult<Vec<_>>>()?;
            // The pack is keyed by its last key, which may be among the dropped ones.
            pack_writes.remove(pack_key.clone());
            if let Some((last, _)) = kept.last() {
                pack_writes.insert(*last, pack::encode(kept.iter().copied()));
            }
        }
        Ok(!touched.is_empty())
    }
}

/// The writes that store a change of the spans: removals first, so a span re-added under
/// the same last key stays.
fn span_writes(change: &SpanChange) -> sled::Batch {
    let mut writes = sled::Batch::default();
    for last in &change.removed {
        writes.remove(last.as_slice());
    }
    let (last, first) = &change.added;
    writes.insert(last.as_slice(), first.as_slice());
    writes
}

fn to_owned(bound: Bound<&[u8]>) -> Bound<Vec<u8>> {
    match bound {
        Bound::Included(k) => Bound::Included(k.to_vec()),
        Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// A range's entries in key order: loose and packed merged, a loose entry shadowing a
/// packed one with the same key.
pub(crate) struct Entries {
    loose: std::iter::Fuse<sled::Iter>,
    packed: Option<PackedEntries>,
    loose_head: Option<(IVec, IVec)>,
    packed_head: Option<(Bytes, Bytes)>,
}

impl Iterator for Entries {
    type Item = StorageResult<(Bytes, Bytes)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.loose_head.is_none() {
            match self.loose.next() {
                Some(Ok(entry)) => self.loose_head = Some(entry),
                Some(Err(e)) => return Some(Err(io_err(e))),
                None => {}
            }
        }
        if self.packed_head.is_none() {
            if let Some(packed) = &mut self.packed {
                match packed.next() {
                    Some(Ok(entry)) => self.packed_head = Some(entry),
                    Some(Err(e)) => return Some(Err(e)),
                    None => self.packed = None,
                }
            }
        }
        let mut shadowed = false;
        let take_loose = match (&self.loose_head, &self.packed_head) {
            (None, None) => return None,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((loose, _)), Some((packed, _))) => match loose.as_ref().cmp(&packed[..]) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Greater => false,
                std::cmp::Ordering::Equal => {
                    // The loose entry is the newer write of this key.
                    shadowed = true;
                    true
                }
            },
        };
        if shadowed {
            self.packed_head = None;
        }
        if take_loose {
            let (key, value) = self.loose_head.take()?;
            Some(Ok((Bytes::whole(key), Bytes::whole(value))))
        } else {
            self.packed_head.take().map(Ok)
        }
    }
}

/// The packed entries of a range, pack after pack.
struct PackedEntries {
    packs: sled::Iter,
    /// The pack being read and the index of its next entry.
    current: Option<(IVec, usize)>,
    /// The range's start, until the first pack has been positioned on it.
    start: Option<Bound<Vec<u8>>>,
    end: Bound<Vec<u8>>,
}

impl PackedEntries {
    fn next(&mut self) -> Option<StorageResult<(Bytes, Bytes)>> {
        self.advance().transpose()
    }

    fn advance(&mut self) -> StorageResult<Option<(Bytes, Bytes)>> {
        loop {
            if let Some((buffer, index)) = &mut self.current {
                let pack = Pack::parse(buffer)?;
                if *index < pack.len() {
                    let (key, value) = pack.entry(*index)?;
                    *index += 1;
                    let before_end = match &self.end {
                        Bound::Included(end) => key <= end.as_slice(),
                        Bound::Excluded(end) => key < end.as_slice(),
                        Bound::Unbounded => true,
                    };
                    if !before_end {
                        return Ok(None);
                    }
                    return Ok(Some((
                        Bytes::within(buffer, key),
                        Bytes::within(buffer, value),
                    )));
                }
            }
            let Some((_, buffer)) = self.packs.next().transpose().map_err(io_err)? else {
                return Ok(None);
            };
            // Only the first pack can hold keys before the start; later packs begin past
            // the end of the one before.
            let first = match self.start.take() {
                Some(Bound::Included(start)) => {
                    let pack = Pack::parse(&buffer)?;
                    pack.search(&start)?.unwrap_or_else(|at| at)
                }
                Some(Bound::Excluded(start)) => {
                    let pack = Pack::parse(&buffer)?;
                    match pack.search(&start)? {
                        Ok(at) => at + 1,
                        Err(at) => at,
                    }
                }
                Some(Bound::Unbounded) | None => 0,
            };
            self.current = Some((buffer, first));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u32) -> Vec<u8> {
        format!("k{n:05}").into_bytes()
    }

    fn puts(keys: std::ops::Range<u32>) -> Vec<Mutation> {
        keys.map(|n| Mutation::Put(key(n), n.to_be_bytes().to_vec()))
            .collect()
    }

    /// A database whose packs were written before spans were stored gets one span over
    /// all its packs when opened, so none of them is skipped, and keeps it stored.
    #[test]
    fn packs_without_stored_spans_get_one_span_over_them_all() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        {
            let store = Store::open(db.clone()).unwrap();
            store.apply(1, puts(0..40)).unwrap();
            store.apply(2, puts(100..140)).unwrap();
            assert_eq!((store.packs(), store.pack_spans()), (4, 2));
        }
        db.open_tree(SPANS_TREE).unwrap().clear().unwrap();
        for reopen in 0..2 {
            let store = Store::open(db.clone()).unwrap();
            assert_eq!(store.pack_spans(), 1, "reopen #{reopen}");
            for n in (0..40).chain(100..140) {
                let value = store.get(&key(n)).unwrap();
                assert_eq!(value.as_deref(), Some(&n.to_be_bytes()[..]), "key {n}");
            }
            assert_eq!(store.get(&key(50)).unwrap().as_deref(), None);
        }
    }

    /// A packed write remembers its packs, so the first read of each finds it through
    /// its hint, without the range iterator.
    #[test]
    fn a_packed_write_leaves_a_hint_to_each_of_its_packs() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let store = Store::open(db).unwrap();
        store.apply(1, puts(0..100)).unwrap();
        assert_eq!(store.packs(), 4);
        for n in 0..100 {
            let found = store.get_packed_by_hint(&key(n)).unwrap();
            let value = found.unwrap_or_else(|| panic!("no hint leads to key {n}"));
            assert_eq!(value.as_deref(), Some(&n.to_be_bytes()[..]), "key {n}");
        }
    }

    /// A key between two packed batches is found absent without the packs tree, and a
    /// packed batch written there later is found.
    #[test]
    fn a_batch_packed_between_spans_is_found() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let store = Store::open(db).unwrap();
        store.apply(1, puts(0..40)).unwrap();
        store.apply(2, puts(100..140)).unwrap();
        assert!(!store.may_pack_key(&key(50)));
        assert_eq!(store.get(&key(50)).unwrap().as_deref(), None);
        store.apply(3, puts(45..70)).unwrap();
        assert_eq!(store.pack_spans(), 3);
        assert!(store.may_pack_key(&key(50)));
        assert_eq!(
            store.get(&key(50)).unwrap().as_deref(),
            Some(&50u32.to_be_bytes()[..])
        );
    }
}
