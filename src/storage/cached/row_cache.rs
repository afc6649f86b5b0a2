//! A cache of single rows for point reads, kept over any backend by `Cached`
//! (`storage/cached.rs`).
//!
//! A point get's lookup in sled (the loose tree, then the pack that may hold the key)
//! took about 1.6 µs, 13.6% of the server's CPU for pgbench's prepared point gets, more
//! than everything else the server does for the query in user space. A hit here is a
//! hash, an uncontended lock and a copy of the value. The cache keeps the stored value
//! under each key a point read found (absent keys are not remembered), up to a byte
//! budget split over `SHARDS` shards, each of which evicts by CLOCK: an entry read since
//! the hand last passed it is passed over once more.
//!
//! Consistency follows the rule `storage/cached.rs` states and argues for both caches.
//! In each shard it touches, a write removes its keys when it begins (`begin_write`) and
//! counts itself under way; when its guard drops, after it has applied, it counts itself
//! done and advances the shard's epoch. A read that missed gets a `FillTicket` (only
//! while no write is under way in the shard) holding the epoch, reads the store, and
//! offers what it found; the offer is kept only if the epoch is unchanged and no write is
//! under way.
//!
//! Rows nobody asked for yet (`read_around`) come in by the same protocol, with a
//! ticket taken per row before the store is read, and only into room a shard has spare:
//! a guess never evicts a row that was asked for.

use hashbrown::{DefaultHashBuilder, HashTable};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Shards, each with its own lock, so the connection threads seldom meet; a write
/// touches each of its shards once, whatever its number of keys (a bit in a `u64`).
const SHARDS: usize = 64;
/// Bytes counted per entry beside its key and value: its bucket (with the table's spare
/// buckets) and the allocation's header.
const ENTRY_OVERHEAD: usize = 64;

/// The cache: rows by their stored key, within a byte budget.
pub(crate) struct RowCache {
    shards: Box<[Mutex<Shard>]>,
    /// Bytes each shard may hold.
    shard_budget: usize,
    hasher: DefaultHashBuilder,
    /// Bytes all shards hold together (their own counts, summed as they change), so a
    /// read-around can tell without locking whether the cache has room to warm.
    held: AtomicUsize,
}

/// What a point read should do.
pub(crate) enum Probe {
    /// The stored value, copied out of the cache.
    Hit(Vec<u8>),
    /// Read the store; offer the value with the ticket (`RowCache::fill`) if there is one.
    Miss(Option<FillTicket>),
}

/// Lets a read that missed offer what it then found in the store.
pub(crate) struct FillTicket {
    hash: u64,
    epoch: u64,
}

/// Held while a write applies; its drop ends the write in every shard it touched.
pub(crate) struct RowWriteGuard<'a> {
    cache: &'a RowCache,
    /// Bit i: the write touches shard i.
    touched: u64,
}

impl Drop for RowWriteGuard<'_> {
    fn drop(&mut self) {
        for index in shard_indexes(self.touched) {
            let mut shard = self.cache.shard(index);
            shard.writing -= 1;
            shard.epoch = shard.epoch.wrapping_add(1);
        }
    }
}

impl RowCache {
    pub(crate) fn new(budget_bytes: usize) -> Self {
        RowCache {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            shard_budget: budget_bytes / SHARDS,
            hasher: DefaultHashBuilder::default(),
            held: AtomicUsize::new(0),
        }
    }

    /// Looks `key` up.
    pub(crate) fn probe(&self, key: &[u8]) -> Probe {
        let hash = self.hasher.hash_one(key);
        let mut shard = self.shard(shard_of(hash));
        if let Some(value) = shard.get(hash, key) {
            return Probe::Hit(value);
        }
        Probe::Miss(shard.ticket(hash))
    }

    /// Offers the value a read found under `key` after `probe` gave it `ticket`; kept
    /// only if no write to the shard began since.
    pub(crate) fn fill(&self, ticket: FillTicket, key: &[u8], value: &[u8]) {
        self.offer(ticket, key, value, Room::Evict);
    }

    /// The most bytes of rows the cache holds.
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.shard_budget * SHARDS
    }

    /// Whether the cache has room left for rows nobody asked for yet: while it does, a
    /// read-around warms it ([`fill_spare`](Self::fill_spare)). A shard's budget is kept
    /// back, as rows do not spread over the shards exactly evenly.
    pub(crate) fn has_spare_room(&self) -> bool {
        let held = self.held.load(Ordering::Relaxed);
        held.saturating_add(self.shard_budget) < self.capacity_bytes()
    }

    /// A ticket for a row the reader is about to read without having been asked for it
    /// (a read-around): none if the row is cached already or a write to its shard is
    /// under way. As with `probe`, the store is read after the ticket is taken.
    pub(crate) fn ticket(&self, key: &[u8]) -> Option<FillTicket> {
        let hash = self.hasher.hash_one(key);
        let shard = self.shard(shard_of(hash));
        if shard.table.find(hash, |entry| entry.key() == key).is_some() {
            return None;
        }
        shard.ticket(hash)
    }

    /// [`fill`](Self::fill) for a row read around the one asked for: kept only in room
    /// the shard has spare, so a guess never evicts a row that was asked for.
    pub(crate) fn fill_spare(&self, ticket: FillTicket, key: &[u8], value: &[u8]) {
        self.offer(ticket, key, value, Room::SpareOnly);
    }

    fn offer(&self, ticket: FillTicket, key: &[u8], value: &[u8], room: Room) {
        self.change_shard(shard_of(ticket.hash), |shard, budget| {
            if shard.writing == 0 && shard.epoch == ticket.epoch {
                shard.insert(ticket.hash, key, value, budget, room);
            }
        });
    }

    /// Runs `change` on shard `index` and carries its change in bytes into `held`, under
    /// the shard's lock: a shard's changes then reach `held` in the order they were
    /// made, so a removal is never counted before the insert it undoes and `held` never
    /// drops below zero.
    fn change_shard(&self, index: usize, change: impl FnOnce(&mut Shard, usize)) {
        let mut shard = self.shard(index);
        let before = shard.bytes;
        change(&mut shard, self.shard_budget);
        let after = shard.bytes;
        if after > before {
            self.held.fetch_add(after - before, Ordering::Relaxed);
        } else if before > after {
            self.held.fetch_sub(before - after, Ordering::Relaxed);
        }
    }

    /// Starts a write of `keys`: drops them, and keeps their shards from taking offers
    /// until the guard drops.
    pub(crate) fn begin_write<'k>(
        &self,
        keys: impl Iterator<Item = &'k [u8]>,
    ) -> RowWriteGuard<'_> {
        let mut hashed: Vec<(u64, &[u8])> =
            keys.map(|key| (self.hasher.hash_one(key), key)).collect();
        hashed.sort_unstable_by_key(|(hash, _)| shard_of(*hash));
        let mut touched = 0u64;
        for group in hashed.chunk_by(|(a, _), (b, _)| shard_of(*a) == shard_of(*b)) {
            let index = shard_of(group[0].0);
            touched |= 1 << index;
            self.change_shard(index, |shard, _| {
                shard.writing += 1;
                for (hash, key) in group {
                    shard.remove(*hash, key);
                }
            });
        }
        RowWriteGuard {
            cache: self,
            touched,
        }
    }

    /// How many rows are cached.
    pub(crate) fn len(&self) -> usize {
        (0..SHARDS).map(|index| self.shard(index).table.len()).sum()
    }

    fn shard(&self, index: usize) -> MutexGuard<'_, Shard> {
        // A shard is consistent between calls: a panic cannot leave it torn.
        self.shards[index]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    #[cfg(test)]
    fn cached_bytes(&self) -> usize {
        (0..SHARDS).map(|index| self.shard(index).bytes).sum()
    }
}

/// The shard of a hash. hashbrown places entries by the hash's low bits and tags them
/// with its top seven, so the shard comes from bits in between: otherwise every entry
/// of a shard would share the bits its table uses.
fn shard_of(hash: u64) -> usize {
    (hash >> 32) as usize % SHARDS
}

fn shard_indexes(touched: u64) -> impl Iterator<Item = usize> {
    (0..SHARDS).filter(move |index| touched & (1 << index) != 0)
}

/// Whether an offer may evict rows to make room for itself.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Room {
    Evict,
    SpareOnly,
}

/// One shard: its entries in a hash table, and a CLOCK hand over the table's buckets.
/// The entries live in the table itself, so a hit reads the table's control bytes, the
/// bucket and the entry's allocation: the cost of a point get here is those cache
/// misses, and a slot array between table and entry was one more.
#[derive(Default)]
struct Shard {
    table: HashTable<Entry>,
    /// The next bucket the CLOCK hand looks at.
    hand: usize,
    bytes: usize,
    /// Advanced by every write that ends; a ticket from another epoch is refused.
    epoch: u64,
    /// Writes under way that touch this shard.
    writing: u32,
}

struct Entry {
    hash: u64,
    /// The key, then the value, in one allocation.
    bytes: Box<[u8]>,
    key_len: u32,
    /// Read since the CLOCK hand last passed.
    referenced: bool,
}

impl Entry {
    fn key(&self) -> &[u8] {
        &self.bytes[..self.key_len as usize]
    }

    fn value(&self) -> &[u8] {
        &self.bytes[self.key_len as usize..]
    }

    fn size(&self) -> usize {
        self.bytes.len() + ENTRY_OVERHEAD
    }
}

impl Shard {
    /// A ticket for a read of a key with `hash` about to go to the store: none while a
    /// write to the shard is under way, as what the read finds may predate it.
    fn ticket(&self, hash: u64) -> Option<FillTicket> {
        (self.writing == 0).then_some(FillTicket {
            hash,
            epoch: self.epoch,
        })
    }

    fn get(&mut self, hash: u64, key: &[u8]) -> Option<Vec<u8>> {
        let entry = self.table.find_mut(hash, |entry| entry.key() == key)?;
        entry.referenced = true;
        Some(entry.value().to_vec())
    }

    fn insert(&mut self, hash: u64, key: &[u8], value: &[u8], budget: usize, room: Room) {
        let size = key.len() + value.len() + ENTRY_OVERHEAD;
        let Ok(key_len) = u32::try_from(key.len()) else {
            return;
        };
        // A large row would push out many small ones for one key's sake.
        if size > budget / 16 {
            return;
        }
        if self.table.find(hash, |entry| entry.key() == key).is_some() {
            // Another read offered it first.
            return;
        }
        while self.bytes + size > budget {
            if room == Room::SpareOnly || !self.evict_one() {
                return;
            }
        }
        let mut bytes = Vec::with_capacity(key.len() + value.len());
        bytes.extend_from_slice(key);
        bytes.extend_from_slice(value);
        let entry = Entry {
            hash,
            bytes: bytes.into_boxed_slice(),
            key_len,
            referenced: false,
        };
        self.bytes += size;
        self.table.insert_unique(hash, entry, |entry| entry.hash);
    }

    fn remove(&mut self, hash: u64, key: &[u8]) {
        if let Ok(found) = self.table.find_entry(hash, |entry| entry.key() == key) {
            let (entry, _) = found.remove();
            self.bytes -= entry.size();
        }
    }

    /// Evicts one entry the hand finds unread since it last passed; false if empty.
    fn evict_one(&mut self) -> bool {
        let buckets = self.table.num_buckets();
        if buckets == 0 {
            return false;
        }
        // Two rounds: the first may only clear the marks.
        for _ in 0..2 * buckets {
            let index = self.hand % buckets;
            self.hand = index + 1;
            match self.table.get_bucket_mut(index) {
                None => continue,
                Some(entry) if entry.referenced => {
                    entry.referenced = false;
                    continue;
                }
                Some(_) => {}
            }
            if let Ok(found) = self.table.get_bucket_entry(index) {
                let (entry, _) = found.remove();
                self.bytes -= entry.size();
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(cache: &RowCache, key: &[u8]) -> Option<Vec<u8>> {
        match cache.probe(key) {
            Probe::Hit(value) => Some(value),
            Probe::Miss(_) => None,
        }
    }

    /// A read that misses and then offers `value`, as the backend does.
    fn read_through(cache: &RowCache, key: &[u8], value: &[u8]) {
        if let Probe::Miss(Some(ticket)) = cache.probe(key) {
            cache.fill(ticket, key, value);
        }
    }

    fn ticket(cache: &RowCache, key: &[u8]) -> Option<FillTicket> {
        match cache.probe(key) {
            Probe::Miss(ticket) => ticket,
            Probe::Hit(_) => panic!("expected a miss"),
        }
    }

    #[test]
    fn a_value_read_through_is_served_until_a_write_to_its_key_begins() {
        let cache = RowCache::new(1 << 20);
        read_through(&cache, b"k", b"v1");
        assert_eq!(hit(&cache, b"k").as_deref(), Some(&b"v1"[..]));
        let writing = cache.begin_write([&b"k"[..]].into_iter());
        assert_eq!(hit(&cache, b"k"), None);
        // Nothing read while the write applies is kept: it may predate the write.
        read_through(&cache, b"k", b"v1");
        assert_eq!(hit(&cache, b"k"), None);
        drop(writing);
        read_through(&cache, b"k", b"v2");
        assert_eq!(hit(&cache, b"k").as_deref(), Some(&b"v2"[..]));
    }

    #[test]
    fn an_offer_made_after_a_write_began_and_ended_is_refused() {
        let cache = RowCache::new(1 << 20);
        let ticket = ticket(&cache, b"k").expect("no write under way");
        drop(cache.begin_write([&b"k"[..]].into_iter()));
        // The read may have seen the store before the write applied.
        cache.fill(ticket, b"k", b"old");
        assert_eq!(hit(&cache, b"k"), None);
    }

    #[test]
    fn an_offer_made_while_a_write_applies_is_refused() {
        let cache = RowCache::new(1 << 20);
        let ticket = ticket(&cache, b"k").expect("no write under way");
        let writing = cache.begin_write([&b"k"[..]].into_iter());
        cache.fill(ticket, b"k", b"old");
        drop(writing);
        assert_eq!(hit(&cache, b"k"), None);
    }

    #[test]
    fn a_read_during_a_write_to_its_shard_gets_no_ticket() {
        let cache = RowCache::new(1 << 20);
        let writing = cache.begin_write([&b"k"[..]].into_iter());
        assert!(ticket(&cache, b"k").is_none());
        drop(writing);
        assert!(ticket(&cache, b"k").is_some());
    }

    #[test]
    fn a_write_to_other_shards_leaves_offers_alone() {
        let cache = RowCache::new(1 << 20);
        let shard_of_key = |key: &[u8]| shard_of(cache.hasher.hash_one(key));
        let other = (0u32..)
            .map(|i| i.to_be_bytes().to_vec())
            .find(|key| shard_of_key(key) != shard_of_key(b"k"))
            .unwrap();
        let ticket = ticket(&cache, b"k").unwrap();
        drop(cache.begin_write([other.as_slice()].into_iter()));
        cache.fill(ticket, b"k", b"v");
        assert_eq!(hit(&cache, b"k").as_deref(), Some(&b"v"[..]));
    }

    #[test]
    fn the_budget_holds_and_rows_read_again_outlast_the_others() {
        // One shard's worth of budget per shard: 16 entries of 64 + 8 + 56 bytes.
        let cache = RowCache::new(SHARDS * 16 * 128);
        let keys: Vec<Vec<u8>> = (0u64..20_000).map(|i| i.to_be_bytes().to_vec()).collect();
        let value = [7u8; 56];
        let hot = &keys[0];
        read_through(&cache, hot, &value);
        for key in &keys[1..] {
            read_through(&cache, key, &value);
            // The hot row is read between every other read.
            assert!(hit(&cache, hot).is_some(), "the hot row was evicted");
        }
        assert!(cache.cached_bytes() <= SHARDS * 16 * 128);
        assert_eq!(cache.held.load(Ordering::Relaxed), cache.cached_bytes());
        let cached = keys.iter().filter(|key| hit(&cache, key).is_some()).count();
        assert!(cached > SHARDS * 8, "only {cached} rows cached");
    }

    #[test]
    fn a_row_larger_than_a_sixteenth_of_a_shard_is_not_cached() {
        let cache = RowCache::new(SHARDS * 4096);
        read_through(&cache, b"big", &[1u8; 256]);
        assert_eq!(hit(&cache, b"big"), None);
        read_through(&cache, b"small", &[1u8; 8]);
        assert!(hit(&cache, b"small").is_some());
    }

    #[test]
    fn rows_read_around_fill_only_spare_room_and_never_evict() {
        // 16 entries of 128 bytes a shard.
        let cache = RowCache::new(SHARDS * 16 * 128);
        let value = [7u8; 56];
        let keys: Vec<Vec<u8>> = (0u64..20_000).map(|i| i.to_be_bytes().to_vec()).collect();
        assert!(cache.has_spare_room());
        for key in &keys {
            if let Some(ticket) = cache.ticket(key) {
                cache.fill_spare(ticket, key, &value);
            }
        }
        assert!(!cache.has_spare_room(), "the cache filled up");
        let held = cache.cached_bytes();
        assert_eq!(cache.held.load(Ordering::Relaxed), held);
        let guessed: Vec<&Vec<u8>> = keys
            .iter()
            .filter(|key| hit(&cache, key).is_some())
            .collect();
        assert!(
            guessed.len() > SHARDS * 12,
            "only {} rows cached",
            guessed.len()
        );
        // A cached row gets no second ticket; a full shard takes no more guesses, and
        // the guesses already in it stay.
        assert!(cache.ticket(guessed[0]).is_none());
        let extra = b"one more".to_vec();
        if let Some(ticket) = cache.ticket(&extra) {
            cache.fill_spare(ticket, &extra, &value);
        }
        assert_eq!(hit(&cache, &extra), None);
        assert!(guessed.iter().all(|key| hit(&cache, key).is_some()));
        // A row asked for still evicts to get in.
        read_through(&cache, &extra, &value);
        assert!(hit(&cache, &extra).is_some());
    }

    #[test]
    fn a_guess_made_while_or_after_a_write_to_its_shard_is_refused() {
        let cache = RowCache::new(1 << 20);
        let writing = cache.begin_write([&b"k"[..]].into_iter());
        assert!(
            cache.ticket(b"k").is_none(),
            "no ticket while a write applies"
        );
        drop(writing);
        let ticket = cache.ticket(b"k").unwrap();
        drop(cache.begin_write([&b"k"[..]].into_iter()));
        cache.fill_spare(ticket, b"k", b"old");
        assert_eq!(hit(&cache, b"k"), None);
        assert_eq!(cache.held.load(Ordering::Relaxed), 0);
    }
}
