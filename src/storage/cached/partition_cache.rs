//! A cache of whole partitions for range reads, kept over any backend by `Cached`
//! (`storage/cached.rs`).
//!
//! sled 0.34 spends about half a microsecond per entry of a range read: its iterator
//! clones the leaf node it seeks into and an `IVec` per entry. That is a third of a
//! 100-row primary-key range query over the wire, and more than PostgreSQL's whole index
//! scan. A Table Store range read mostly stays inside one partition (equality on the
//! partition key), so the cache keeps recently read partitions here, each copied whole
//! into one sorted buffer. A range read within a cached partition binary-searches that
//! buffer and lends its bytes; nothing is cloned per entry.
//!
//! Admission: a partition is copied in on its `READS_TO_CACHE`th read with no write to
//! it in between. A copy costs about as much as ten 100-row reads from sled, so a
//! partition written about as often as it is read is never copied, and a scan that
//! passes once through many partitions caches none of them. Partitions larger than
//! `MAX_PARTITION_ENTRIES` or `MAX_PARTITION_BYTES` are not cached, and are remembered
//! as such across writes, so they are not copied in vain again. When the cached bytes
//! pass the budget the oldest partitions are dropped first, except that one read since
//! eviction last passed it over is passed over once more (`State::cache`).
//!
//! Consistency follows the rule `storage/cached.rs` states and argues for both caches. A
//! write drops every cached partition it touches when it begins (`begin_write`), and is
//! under way until its guard drops, after it has applied. A copy starts only when no
//! write under way spans a key of the partition (each write is known by its smallest and
//! largest key while it is under way). The partition's slot then says the copy is being
//! made (`Slot::Copying`); a write to the partition that begins meanwhile drops that slot
//! like any other, and the copy, offered later, is kept only if its slot is still there.
//! Writes to other partitions do not hold copies up.

use crate::storage::{prefix_successor, Direction, KeyRange};
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard};

/// Reads of a partition, with no write to it between them, at which it is copied in.
const READS_TO_CACHE: u32 = 4;
/// Most entries a cached partition holds; a larger partition is read from the store each
/// time.
pub(crate) const MAX_PARTITION_ENTRIES: usize = 4096;
/// Most bytes (keys and values) a cached partition holds.
pub(crate) const MAX_PARTITION_BYTES: usize = 4 << 20;
/// Partitions remembered without being cached (read once, or too large); past this many
/// they are all forgotten, so the bookkeeping of a full scan stays bounded.
const MAX_REMEMBERED: usize = 1 << 16;
/// Bytes of bookkeeping per cached entry (`Partition::entries`).
const ENTRY_OVERHEAD: usize = std::mem::size_of::<(u32, u32, u32)>();

/// One partition's entries in key order, in one buffer.
pub(crate) struct Partition {
    bytes: Vec<u8>,
    /// Per entry: where its key starts in `bytes`, the key's length and the value's
    /// length; the value follows the key.
    entries: Vec<(u32, u32, u32)>,
}

impl Partition {
    fn key(&self, index: usize) -> &[u8] {
        let (at, key_len, _) = self.entries[index];
        &self.bytes[at as usize..(at + key_len) as usize]
    }

    fn value(&self, index: usize) -> &[u8] {
        let (at, key_len, value_len) = self.entries[index];
        let start = (at + key_len) as usize;
        &self.bytes[start..start + value_len as usize]
    }

    /// Memory the partition holds, as counted against the budget.
    fn size(&self) -> usize {
        self.bytes.len() + self.entries.len() * ENTRY_OVERHEAD
    }

    /// The index of the first entry whose key is not below `bound` as a start bound.
    fn first_from(&self, bound: &Bound<Vec<u8>>) -> usize {
        match bound {
            Bound::Unbounded => 0,
            Bound::Included(k) => self.count_below(|key| key < k.as_slice()),
            Bound::Excluded(k) => self.count_below(|key| key <= k.as_slice()),
        }
    }

    /// The index one past the last entry whose key is not above `bound` as an end bound,
    /// searched from `first` on: `first` if the end lies before it.
    fn end_at(&self, bound: &Bound<Vec<u8>>, first: usize) -> usize {
        match bound {
            Bound::Unbounded => self.entries.len(),
            Bound::Included(k) => self.count_below_from(first, |key| key <= k.as_slice()),
            Bound::Excluded(k) => self.count_below_from(first, |key| key < k.as_slice()),
        }
    }

    /// How many leading entries satisfy `below` (which holds for a prefix of them).
    fn count_below(&self, below: impl Fn(&[u8]) -> bool) -> usize {
        self.search(0, self.entries.len(), below)
    }

    /// `count_below` for a prefix known to reach `start` (or `start` itself if `below`
    /// fails there), found by galloping forward from it: a range read's end lies a few
    /// entries past its start, and the probes
    /// near the start touch memory the read is about to touch anyway, where a binary
    /// search over the whole partition would miss the cache on most of them.
    fn count_below_from(&self, start: usize, below: impl Fn(&[u8]) -> bool) -> usize {
        let len = self.entries.len();
        let (mut low, mut high, mut step) = (start, len, 1);
        while low < len {
            let probe = (low + step - 1).min(len - 1);
            if !below(self.key(probe)) {
                high = probe;
                break;
            }
            low = probe + 1;
            step *= 2;
        }
        self.search(low, high, below)
    }

    /// The first index in `low..high` whose key is not `below`, or `high`, given that
    /// the entries satisfying `below` form a prefix.
    fn search(&self, mut low: usize, mut high: usize, below: impl Fn(&[u8]) -> bool) -> usize {
        while low < high {
            let mid = low + (high - low) / 2;
            if below(self.key(mid)) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low
    }

    /// Calls `visit` with up to `limit` entries of `range`, in order, until it returns
    /// `false`, as `Backend::visit` does.
    pub(crate) fn visit(
        &self,
        range: &KeyRange,
        direction: Direction,
        limit: usize,
        visit: &mut (dyn for<'k> FnMut(&'k [u8], &'k [u8]) -> bool + Send),
    ) {
        let first = self.first_from(&range.start);
        let end = self.end_at(&range.end, first).max(first);
        let count = (end - first).min(limit);
        let mut each = |index: usize| visit(self.key(index), self.value(index));
        match direction {
            Direction::Forward => {
                for index in first..first + count {
                    if !each(index) {
                        break;
                    }
                }
            }
            Direction::Backward => {
                for index in (end - count..end).rev() {
                    if !each(index) {
                        break;
                    }
                }
            }
        }
    }
}

/// Collects a partition's entries, in key order, up to the size limits.
pub(crate) struct PartitionBuilder {
    partition: Option<Partition>,
}

impl PartitionBuilder {
    pub(crate) fn new() -> Self {
        PartitionBuilder {
            partition: Some(Partition {
                bytes: Vec::new(),
                entries: Vec::new(),
            }),
        }
    }

    /// Adds the next entry (keys must come in ascending order); returns `false` once the
    /// partition is too large to cache, after which the builder holds nothing.
    pub(crate) fn push(&mut self, key: &[u8], value: &[u8]) -> bool {
        let Some(partition) = &mut self.partition else {
            return false;
        };
        let fits = partition.entries.len() < MAX_PARTITION_ENTRIES
            && partition.bytes.len() + key.len() + value.len() <= MAX_PARTITION_BYTES;
        if !fits {
            self.partition = None;
            return false;
        }
        // MAX_PARTITION_BYTES keeps every offset and length within u32.
        let at = partition.bytes.len() as u32;
        partition.bytes.extend_from_slice(key);
        partition.bytes.extend_from_slice(value);
        partition
            .entries
            .push((at, key.len() as u32, value.len() as u32));
        true
    }

    /// The partition, or `None` if it grew too large.
    pub(crate) fn finish(self) -> Option<Partition> {
        self.partition.map(|mut p| {
            p.bytes.shrink_to_fit();
            p.entries.shrink_to_fit();
            p
        })
    }
}

/// What a range read within a partition should do.
pub(crate) enum Lookup {
    /// Read from the cached copy.
    Hit(Arc<Partition>),
    /// Copy the partition in from the store (`PartitionCache::offer`), then read from the
    /// copy.
    Load(LoadTicket),
    /// Read from the store.
    Miss,
}

/// Names the copy a `Load` asked for; checked when it is offered.
pub(crate) struct LoadTicket {
    copy: u64,
}

/// Held while a write applies; its drop marks the write finished.
pub(crate) struct WriteGuard<'a> {
    cache: &'a PartitionCache,
    /// The write's number in `State::writing`; `None` for a write of no keys.
    write: Option<u64>,
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        if let Some(write) = self.write {
            self.cache
                .state()
                .writing
                .retain(|span| span.write != write);
        }
    }
}

/// The cache: partitions by their key prefix, within a byte budget.
pub(crate) struct PartitionCache {
    budget_bytes: usize,
    state: Mutex<State>,
}

/// The smallest and largest key of a write under way.
struct WriteSpan {
    write: u64,
    low: Vec<u8>,
    high: Vec<u8>,
}

impl WriteSpan {
    /// Whether the write may touch a key starting with `prefix`.
    fn may_touch(&self, prefix: &[u8]) -> bool {
        let below_end = match prefix_successor(prefix) {
            Some(end) => self.low < end,
            None => true,
        };
        self.high.as_slice() >= prefix && below_end
    }
}

enum Slot {
    /// Read this many times (fewer than `READS_TO_CACHE`) since it was last written.
    Read(u32),
    /// Cached.
    Cached(CachedCopy),
    /// Being copied in; the number names the copy (`LoadTicket`).
    Copying(u64),
    /// Read again, but too large to cache.
    TooLarge,
}

/// A cached partition.
struct CachedCopy {
    partition: Arc<Partition>,
    /// Names this copy in `State::age`.
    copy: u64,
    /// Read since eviction last passed it over: it is passed over once more.
    read_lately: bool,
}

#[derive(Default)]
struct State {
    /// Slots by partition prefix. No prefix is a prefix of another, so the only slot
    /// that can hold a key is the one with the greatest prefix not above it.
    slots: BTreeMap<Vec<u8>, Slot>,
    cached_bytes: usize,
    /// Slots that are not `Cached`.
    remembered: usize,
    /// Cached copies in eviction order (oldest first, a copy read since it was last
    /// passed over moved to the back); a copy since dropped is skipped.
    age: VecDeque<(Vec<u8>, u64)>,
    /// Numbers copies (cached and being made) and writes.
    next_number: u64,
    /// Writes under way.
    writing: Vec<WriteSpan>,
}

impl State {
    fn number(&mut self) -> u64 {
        self.next_number += 1;
        self.next_number
    }
}

impl PartitionCache {
    pub(crate) fn new(budget_bytes: usize) -> Self {
        PartitionCache {
            budget_bytes,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state is consistent between statements: a panic cannot leave it torn.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Decides how to serve a range read within the partition `prefix`.
    pub(crate) fn lookup(&self, prefix: &[u8]) -> Lookup {
        let mut guard = self.state();
        // Borrowed once, so the slot and the writes under way are borrowed apart.
        let state = &mut *guard;
        match state.slots.get_mut(prefix) {
            Some(Slot::Cached(cached)) => {
                cached.read_lately = true;
                Lookup::Hit(Arc::clone(&cached.partition))
            }
            // Another read is copying it: this one reads from the store meanwhile.
            Some(Slot::TooLarge | Slot::Copying(_)) => Lookup::Miss,
            Some(Slot::Read(reads))
                if *reads + 1 >= READS_TO_CACHE
                    && !state.writing.iter().any(|span| span.may_touch(prefix)) =>
            {
                let copy = state.number();
                state.remember(prefix, Slot::Copying(copy));
                Lookup::Load(LoadTicket { copy })
            }
            Some(Slot::Read(reads)) => {
                let reads = (*reads + 1).min(READS_TO_CACHE - 1);
                state.remember(prefix, Slot::Read(reads));
                Lookup::Miss
            }
            None => {
                state.remember(prefix, Slot::Read(1));
                Lookup::Miss
            }
        }
    }

    /// Offers the copy of `prefix` a `Load` asked for (`None`: too large to cache). It is
    /// kept if no write to the partition began since the ticket was issued. Returns the
    /// copy to read from, kept or not: it was read from the store during this read, as a
    /// plain read would be. A copy that failed is `abandon`ed instead.
    pub(crate) fn offer(
        &self,
        prefix: &[u8],
        ticket: LoadTicket,
        copy: Option<Partition>,
    ) -> Option<Arc<Partition>> {
        let copy = copy.map(Arc::new);
        let mut state = self.state();
        if !matches!(state.slots.get(prefix), Some(Slot::Copying(c)) if *c == ticket.copy) {
            return copy;
        }
        match &copy {
            Some(partition) if partition.size() <= self.budget_bytes => {
                state.cache(prefix, Arc::clone(partition), self.budget_bytes);
            }
            _ => state.remember(prefix, Slot::TooLarge),
        }
        copy
    }

    /// Gives up the copy a `Load` asked for, which could not be made (the store failed to
    /// read it): the partition's reads count towards a copy again, from nothing. Left
    /// `Copying`, no read would copy it until a write to it came by.
    pub(crate) fn abandon(&self, prefix: &[u8], ticket: LoadTicket) {
        let mut state = self.state();
        if matches!(state.slots.get(prefix), Some(Slot::Copying(c)) if *c == ticket.copy) {
            state.remember(prefix, Slot::Read(0));
        }
    }

    /// Marks a write of `keys` as under way and drops every partition holding one of
    /// them; the write is finished when the guard is dropped, after it has applied.
    pub(crate) fn begin_write<'k>(&self, keys: impl Iterator<Item = &'k [u8]>) -> WriteGuard<'_> {
        let mut state = self.state();
        let mut span: Option<(&[u8], &[u8])> = None;
        for key in keys {
            span = Some(match span {
                None => (key, key),
                Some((low, high)) => (low.min(key), high.max(key)),
            });
            if !state.slots.is_empty() {
                state.forget_holder_of(key);
            }
        }
        let write = span.map(|(low, high)| {
            let write = state.number();
            state.writing.push(WriteSpan {
                write,
                low: low.to_vec(),
                high: high.to_vec(),
            });
            write
        });
        WriteGuard { cache: self, write }
    }

    /// Bytes of partitions cached now.
    #[cfg(test)]
    fn cached_bytes(&self) -> usize {
        self.state().cached_bytes
    }
}

impl State {
    /// Adds a slot that is not `Cached`, unless its prefix would break prefix-freedom.
    fn remember(&mut self, prefix: &[u8], slot: Slot) {
        if !self.may_hold(prefix) {
            return;
        }
        if self.remembered >= MAX_REMEMBERED {
            self.slots
                .retain(|_, slot| matches!(slot, Slot::Cached(..)));
            self.remembered = 0;
        }
        if let Some(old) = self.slots.insert(prefix.to_vec(), slot) {
            self.account_removed(&old);
        }
        self.remembered += 1;
    }

    /// Caches `partition`, then drops copies while over `budget`: the oldest first, but
    /// one read since eviction last came by is passed over once (a second chance), so
    /// partitions read again and again stay while ones read in one burst go. Plain
    /// oldest-first eviction dropped hot partitions as readily as cold ones, only to
    /// copy them in again a few reads later.
    fn cache(&mut self, prefix: &[u8], partition: Arc<Partition>, budget: usize) {
        if !self.may_hold(prefix) {
            return;
        }
        let new_copy = self.number();
        self.cached_bytes += partition.size();
        let cached = CachedCopy {
            partition,
            copy: new_copy,
            read_lately: false,
        };
        if let Some(old) = self.slots.insert(prefix.to_vec(), Slot::Cached(cached)) {
            self.account_removed(&old);
        }
        self.age.push_back((prefix.to_vec(), new_copy));
        // A copy read lately is passed over once, the new one each time it comes round;
        // `turns` bounds the loop even so.
        let mut turns = 2 * self.age.len();
        while self.cached_bytes > budget && turns > 0 {
            turns -= 1;
            let Some((oldest, copy)) = self.age.pop_front() else {
                break;
            };
            let Some(Slot::Cached(cached)) = self.slots.get_mut(&oldest) else {
                continue;
            };
            if cached.copy != copy {
                continue;
            }
            if copy == new_copy || cached.read_lately {
                cached.read_lately = false;
                self.age.push_back((oldest, copy));
                continue;
            }
            if let Some(old) = self.slots.remove(&oldest) {
                self.account_removed(&old);
            }
        }
    }

    /// Whether a slot for `prefix` keeps the slots prefix-free: it may equal an existing
    /// prefix, but neither be a prefix of one nor have one as its prefix.
    fn may_hold(&self, prefix: &[u8]) -> bool {
        if prefix.is_empty() {
            return false;
        }
        let below = self
            .slots
            .range::<[u8], _>((Bound::Unbounded, Bound::Excluded(prefix)))
            .next_back();
        let above = self
            .slots
            .range::<[u8], _>((Bound::Excluded(prefix), Bound::Unbounded))
            .next();
        !below.is_some_and(|(p, _)| prefix.starts_with(p))
            && !above.is_some_and(|(p, _)| p.starts_with(prefix))
    }

    /// Drops the slot whose partition holds `key`, if any, unless it is `TooLarge`: a
    /// write rarely shrinks a partition enough to matter.
    fn forget_holder_of(&mut self, key: &[u8]) {
        let holder = self
            .slots
            .range::<[u8], _>((Bound::Unbounded, Bound::Included(key)))
            .next_back()
            .filter(|(prefix, slot)| key.starts_with(prefix) && !matches!(slot, Slot::TooLarge))
            .map(|(prefix, _)| prefix.clone());
        if let Some(prefix) = holder {
            if let Some(old) = self.slots.remove(&prefix) {
                self.account_removed(&old);
            }
        }
    }

    fn account_removed(&mut self, slot: &Slot) {
        match slot {
            Slot::Cached(cached) => self.cached_bytes -= cached.partition.size(),
            Slot::Read(_) | Slot::Copying(_) | Slot::TooLarge => self.remembered -= 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn partition_of(entries: &BTreeMap<Vec<u8>, Vec<u8>>) -> Partition {
        let mut builder = PartitionBuilder::new();
        for (k, v) in entries {
            assert!(builder.push(k, v));
        }
        builder.finish().unwrap()
    }

    fn visited(
        p: &Partition,
        range: &KeyRange,
        direction: Direction,
        limit: usize,
    ) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        p.visit(range, direction, limit, &mut |k, v| {
            assert_eq!(v, [k, b"=v"].concat());
            out.push(k.to_vec());
            true
        });
        out
    }

    fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
        let key = proptest::collection::vec(0u8..4, 0..4);
        prop_oneof![
            Just(Bound::Unbounded),
            key.clone().prop_map(Bound::Included),
            key.prop_map(Bound::Excluded),
        ]
    }

    proptest! {
        #[test]
        fn a_partition_visits_what_a_sorted_map_holds_in_the_range(
            keys in proptest::collection::btree_set(proptest::collection::vec(0u8..4, 0..4), 0..30),
            start in bound(),
            end in bound(),
            backward in any::<bool>(),
            limit in 0usize..40,
        ) {
            let entries: BTreeMap<Vec<u8>, Vec<u8>> =
                keys.into_iter().map(|k| (k.clone(), [k.as_slice(), b"=v"].concat())).collect();
            let range = KeyRange { start: start.clone(), end: end.clone() };
            let direction = if backward { Direction::Backward } else { Direction::Forward };
            let in_range = |k: &Vec<u8>| {
                let after_start = match &start {
                    Bound::Unbounded => true,
                    Bound::Included(s) => k >= s,
                    Bound::Excluded(s) => k > s,
                };
                let before_end = match &end {
                    Bound::Unbounded => true,
                    Bound::Included(e) => k <= e,
                    Bound::Excluded(e) => k < e,
                };
                after_start && before_end
            };
            let mut expected: Vec<Vec<u8>> = entries.keys().filter(|k| in_range(k)).cloned().collect();
            if backward {
                expected.reverse();
            }
            expected.truncate(limit);
            prop_assert_eq!(visited(&partition_of(&entries), &range, direction, limit), expected);
        }
    }

    #[test]
    fn a_visit_stops_when_told() {
        let entries = (0u8..10)
            .map(|i| (vec![i], [&[i][..], b"=v"].concat()))
            .collect();
        let p = partition_of(&entries);
        let mut seen = 0;
        p.visit(
            &KeyRange::prefix(b""),
            Direction::Forward,
            100,
            &mut |_, _| {
                seen += 1;
                seen < 3
            },
        );
        assert_eq!(seen, 3);
    }

    #[test]
    fn a_builder_gives_up_past_the_entry_limit() {
        let mut builder = PartitionBuilder::new();
        for i in 0..MAX_PARTITION_ENTRIES as u32 {
            assert!(builder.push(&i.to_be_bytes(), b""));
        }
        assert!(!builder.push(b"\xff\xff\xff\xff\xff", b""));
        assert!(builder.finish().is_none());
    }

    fn small_partition(key: &[u8]) -> Partition {
        let mut builder = PartitionBuilder::new();
        builder.push(key, b"value");
        builder.finish().unwrap()
    }

    fn is_hit(lookup: &Lookup) -> bool {
        matches!(lookup, Lookup::Hit(_))
    }

    /// Reads `prefix` once fewer than it takes to be copied in.
    fn read_short_of_a_copy(cache: &PartitionCache, prefix: &[u8]) {
        for _ in 1..READS_TO_CACHE {
            cache.lookup(prefix);
        }
    }

    /// Reads `prefix` until the cache asks for a copy, which must be on read
    /// `READS_TO_CACHE` counted from a fresh or just-written partition.
    /// Offers a copy of partition `p1` for `ticket` and checks that reads now hit it.
    fn offer_and_expect_a_hit(cache: &PartitionCache, ticket: LoadTicket) {
        cache.offer(b"p1", ticket, Some(small_partition(b"p1a")));
        assert!(is_hit(&cache.lookup(b"p1")));
    }

    fn read_until_copied(cache: &PartitionCache, prefix: &[u8]) -> LoadTicket {
        for _ in 1..READS_TO_CACHE {
            assert!(matches!(cache.lookup(prefix), Lookup::Miss));
        }
        match cache.lookup(prefix) {
            Lookup::Load(ticket) => ticket,
            _ => panic!("read {READS_TO_CACHE} should copy the partition in"),
        }
    }

    #[test]
    fn a_partition_is_cached_after_reads_with_no_write_and_dropped_by_a_write_to_it() {
        let cache = PartitionCache::new(1 << 20);
        let ticket = read_until_copied(&cache, b"p1");
        assert!(cache
            .offer(b"p1", ticket, Some(small_partition(b"p1a")))
            .is_some());
        assert!(is_hit(&cache.lookup(b"p1")));
        // A write elsewhere leaves it; a write to a key under it drops it.
        drop(cache.begin_write([&b"p2a"[..], b"q"].into_iter()));
        assert!(is_hit(&cache.lookup(b"p1")));
        drop(cache.begin_write([&b"p1zz"[..]].into_iter()));
        assert_eq!(cache.cached_bytes(), 0);
        // The count starts again.
        let ticket = read_until_copied(&cache, b"p1");
        offer_and_expect_a_hit(&cache, ticket);
    }

    #[test]
    fn a_write_between_reads_restarts_the_count() {
        let cache = PartitionCache::new(1 << 20);
        read_short_of_a_copy(&cache, b"p1");
        drop(cache.begin_write([&b"p1a"[..]].into_iter()));
        read_until_copied(&cache, b"p1");
    }

    #[test]
    fn a_copy_is_not_kept_if_a_write_to_it_began_while_it_was_made() {
        let cache = PartitionCache::new(1 << 20);
        let ticket = read_until_copied(&cache, b"p1");
        // A write to the partition begins and ends while the copy is made.
        drop(cache.begin_write([&b"p1b"[..]].into_iter()));
        // The reader still reads from its copy, but it is not kept.
        assert!(cache
            .offer(b"p1", ticket, Some(small_partition(b"p1a")))
            .is_some());
        assert!(!is_hit(&cache.lookup(b"p1")));
    }

    #[test]
    fn writes_to_other_partitions_neither_hold_up_nor_spoil_a_copy() {
        let cache = PartitionCache::new(1 << 20);
        read_short_of_a_copy(&cache, b"p1");
        // Under way: keys on both sides of "p1", so it may touch "p1": no copy yet.
        let around = cache.begin_write([&b"p0z"[..], b"p2a"].into_iter());
        assert!(matches!(cache.lookup(b"p1"), Lookup::Miss));
        drop(around);
        // Under way but wholly above "p1", and another one begun during the copy.
        let elsewhere = cache.begin_write([&b"p2a"[..], b"p3"].into_iter());
        let Lookup::Load(ticket) = cache.lookup(b"p1") else {
            panic!("a write elsewhere should not hold the copy up");
        };
        drop(cache.begin_write([&b"p9"[..]].into_iter()));
        drop(elsewhere);
        offer_and_expect_a_hit(&cache, ticket);
    }

    #[test]
    fn nothing_is_copied_while_a_write_to_it_is_under_way() {
        let cache = PartitionCache::new(1 << 20);
        read_short_of_a_copy(&cache, b"p1");
        let writing = cache.begin_write([&b"p1a"[..]].into_iter());
        // The write dropped the count; this read is the first again, and no copy starts.
        for _ in 1..READS_TO_CACHE + 2 {
            assert!(matches!(cache.lookup(b"p1"), Lookup::Miss));
        }
        drop(writing);
        assert!(matches!(cache.lookup(b"p1"), Lookup::Load(_)));
    }

    #[test]
    fn a_copy_that_failed_is_tried_again_after_as_many_reads() {
        let cache = PartitionCache::new(1 << 20);
        let ticket = read_until_copied(&cache, b"p1");
        cache.abandon(b"p1", ticket);
        let ticket = read_until_copied(&cache, b"p1");
        offer_and_expect_a_hit(&cache, ticket);
    }

    #[test]
    fn abandoning_a_copy_a_write_already_dropped_changes_nothing() {
        let cache = PartitionCache::new(1 << 20);
        let stale = read_until_copied(&cache, b"p1");
        drop(cache.begin_write([&b"p1a"[..]].into_iter()));
        let ticket = read_until_copied(&cache, b"p1");
        // The first copy's failure must not reset the second one, still being made.
        cache.abandon(b"p1", stale);
        offer_and_expect_a_hit(&cache, ticket);
    }

    #[test]
    fn one_read_copies_a_partition_while_the_others_read_the_store() {
        let cache = PartitionCache::new(1 << 20);
        let ticket = read_until_copied(&cache, b"p1");
        assert!(matches!(cache.lookup(b"p1"), Lookup::Miss));
        offer_and_expect_a_hit(&cache, ticket);
    }

    #[test]
    fn the_oldest_partitions_go_when_the_budget_is_passed() {
        let one = small_partition(b"p0a").size();
        let cache = PartitionCache::new(one * 2);
        for name in [&b"p0"[..], b"p1", b"p2"] {
            let ticket = read_until_copied(&cache, name);
            cache.offer(name, ticket, Some(small_partition(&[name, b"a"].concat())));
        }
        assert_eq!(cache.cached_bytes(), one * 2);
        assert!(!is_hit(&cache.lookup(b"p0")));
        assert!(is_hit(&cache.lookup(b"p1")));
        assert!(is_hit(&cache.lookup(b"p2")));
    }

    #[test]
    fn a_partition_read_again_outlasts_an_older_one_that_was_not() {
        let one = small_partition(b"p0a").size();
        let cache = PartitionCache::new(one * 2);
        for name in [&b"p0"[..], b"p1"] {
            let ticket = read_until_copied(&cache, name);
            cache.offer(name, ticket, Some(small_partition(&[name, b"a"].concat())));
        }
        // p0 is the oldest but read again; p1 goes when p2 comes in.
        assert!(is_hit(&cache.lookup(b"p0")));
        let ticket = read_until_copied(&cache, b"p2");
        cache.offer(b"p2", ticket, Some(small_partition(b"p2a")));
        assert_eq!(cache.cached_bytes(), one * 2);
        assert!(!is_hit(&cache.lookup(b"p1")));
        assert!(is_hit(&cache.lookup(b"p2")));
        assert!(is_hit(&cache.lookup(b"p0")));
    }

    #[test]
    fn a_partition_too_large_is_remembered_across_writes() {
        let cache = PartitionCache::new(1 << 20);
        let ticket = read_until_copied(&cache, b"p1");
        assert!(cache.offer(b"p1", ticket, None).is_none());
        drop(cache.begin_write([&b"p1a"[..]].into_iter()));
        for _ in 0..READS_TO_CACHE * 2 {
            assert!(matches!(cache.lookup(b"p1"), Lookup::Miss));
        }
    }

    #[test]
    fn a_prefix_of_a_known_partition_is_not_cached() {
        let cache = PartitionCache::new(1 << 20);
        cache.lookup(b"p1");
        // "p" would hold keys of "p1", and "p1x" keys "p1" holds: neither is remembered,
        // so neither is ever copied in.
        for _ in 0..READS_TO_CACHE * 2 {
            assert!(matches!(cache.lookup(b"p"), Lookup::Miss));
            assert!(matches!(cache.lookup(b"p1x"), Lookup::Miss));
        }
    }
}
