//! Read-around: a point read the inner backend served from a block of rows stored
//! together (one of sled's packs, lent through `ReadAround`) offers the block's other
//! rows to the row cache too, while the cache has room to spare — what a buffer pool
//! gets for free by caching the whole page a row was read from.
//!
//! Why: after a bulk load (or a restart) every first read of a row misses the row cache
//! and pays the pack lookup, about 2 µs in a profile of prepared point gets at 1,000,000
//! rows, where the sled lookups of misses took 18% of the server's CPU. Uniform reads
//! of 1,000,000 rows miss on 45% of the first 1,900,000 gets; with the pack's 32 rows
//! cached at the first miss in it, on about one get in 32 of those.
//!
//! Consistency is the row cache's own protocol (`storage/cached.rs`), used for rows
//! nobody asked for: tickets are taken for the neighbours first, the store is read again
//! after (`OpenedBlock::read_again`), and only neighbours whose shard saw no write in
//! between are kept. The second read matters: a write that ended between the first read
//! and the tickets is in the store but not in the pack the first read opened. Packed
//! copies are shadowed by loose entries under the same key (a later write of a packed key
//! is stored loose), so the second read leaves neighbours with a loose entry out. Guesses
//! go only into spare room and never evict a row that was asked for, so a table larger
//! than the cache loses no hits.
//!
//! Nor are guesses made when the packs the server knows of hold far more than the cache
//! (`KNOWN_PACK_BYTES_PER_CACHE_BYTE`). There a guessed row is seldom read while it is
//! cached, and each guess costs an allocation: right after a 10,000,000-row load, with
//! the default 512 MB cache, filling the cache with guesses took a fifth to a quarter
//! of the server's CPU in the first seconds of uniform point gets, for a hit rate no
//! higher than the share of the rows the cache can hold, guessed or not: under a fifth.

use super::row_cache::{FillTicket, RowCache};
use crate::storage::{OpenedBlock, StorageResult};

/// Guesses are made while the packs the server knows of, each taken to be the size of
/// the pack at hand, come to at most this many times the cache's capacity: then the
/// cache can hold about half their rows or more. The benchmark's 1,000,000 rows make
/// about 31,000 packs of at most `PACK_BYTES` (16 KiB, `storage/sled/pack.rs`), at most
/// 0.5 GB against the limit of 1 GB that the default cache has on a machine of 8 GiB or
/// more; its 10,000,000 rows make ten times as many.
const KNOWN_PACK_BYTES_PER_CACHE_BYTE: usize = 2;

/// Offers the rows of `block` (the one a read of `asked` was just served from) to
/// `rows`. Best effort: a failure only leaves the cache colder.
pub(crate) fn offer_block(rows: &RowCache, asked: &[u8], block: &dyn OpenedBlock) {
    if !rows.has_spare_room() || !cache_could_hold_much_of(rows, block) {
        return;
    }
    if let Err(e) = offer_rows(rows, asked, block) {
        tracing::debug!(error = %e, "read-around skipped");
    }
}

/// Whether the blocks the backend knows of, at the size of `block` each, come to at most
/// `KNOWN_PACK_BYTES_PER_CACHE_BYTE` times the capacity of `rows`. After a restart sled's
/// packs become known as reads find them, so read-around works until they add up.
fn cache_could_hold_much_of(rows: &RowCache, block: &dyn OpenedBlock) -> bool {
    block.known_blocks().saturating_mul(block.size())
        <= rows
            .capacity_bytes()
            .saturating_mul(KNOWN_PACK_BYTES_PER_CACHE_BYTE)
}

fn offer_rows(rows: &RowCache, asked: &[u8], block: &dyn OpenedBlock) -> StorageResult<()> {
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut tickets: Vec<Option<FillTicket>> = Vec::new();
    block.keys(&mut |key| {
        if key == asked {
            return;
        }
        if let Some(ticket) = rows.ticket(key) {
            keys.push(key);
            tickets.push(Some(ticket));
        }
    })?;
    if keys.is_empty() {
        return Ok(());
    }
    // Read again with the tickets out: what a write finished before them is seen now.
    block.read_again(&keys, &mut |index, value| {
        if let Some(ticket) = tickets.get_mut(index).and_then(Option::take) {
            rows.fill_spare(ticket, keys[index], value);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::cached::row_cache::Probe;
    use crate::storage::sled::{OpenedPack, Store};
    use crate::storage::Mutation;
    use sled::IVec;

    fn key(n: u32) -> Vec<u8> {
        format!("k{n:05}").into_bytes()
    }

    /// A store holding keys 0..32 in one pack, and that pack as a read of key 3 opened it.
    /// A store of `packs` packs of 32 rows, each written as one batch, with `value(n)`
    /// under key n, and the pack a read of key 3 opened.
    fn packs_read_at_key_3(packs: u32, value: fn(u32) -> Vec<u8>) -> (Store, IVec) {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let store = Store::open(db).unwrap();
        for pack in 0..packs {
            let rows = (pack * 32..pack * 32 + 32).map(|n| Mutation::Put(key(n), value(n)));
            store.apply(u64::from(pack) + 1, rows.collect()).unwrap();
        }
        assert_eq!(store.packs(), packs as usize);
        let read = store.get(&key(3)).unwrap().unwrap();
        let opened = read.pack().expect("key 3 was read from its pack").clone();
        (store, opened)
    }

    fn one_pack_read_at_key_3() -> (Store, IVec) {
        packs_read_at_key_3(1, |n| n.to_be_bytes().to_vec())
    }

    /// Offers `opened` as the sled backend lends it.
    fn offer_pack(store: &Store, rows: &RowCache, asked: &[u8], opened: &IVec) {
        offer_block(rows, asked, &OpenedPack::new(store, opened));
    }

    fn cached(rows: &RowCache, n: u32) -> Option<Vec<u8>> {
        match rows.probe(&key(n)) {
            Probe::Hit(value) => Some(value),
            Probe::Miss(_) => None,
        }
    }

    /// The pack a read opened may be older than the tickets: a delete that rewrote it,
    /// or a loose write that shadows a copy in it, may have ended in between. The
    /// read-around trusts neither copy.
    #[test]
    fn writes_ended_since_the_pack_was_opened_are_never_cached_from_it() {
        let (store, opened) = one_pack_read_at_key_3();
        store.apply(2, vec![Mutation::Delete(key(7))]).unwrap();
        store
            .apply(3, vec![Mutation::Put(key(5), b"loose".to_vec())])
            .unwrap();
        let rows = RowCache::new(1 << 20);
        offer_pack(&store, &rows, &key(3), &opened);

        assert_eq!(cached(&rows, 7), None, "deleted since the pack was opened");
        assert_eq!(cached(&rows, 5), None, "shadowed by a loose write");
        assert_eq!(
            cached(&rows, 3),
            None,
            "the row asked for is the reader's to offer"
        );
        assert_eq!(cached(&rows, 9), Some(9u32.to_be_bytes().to_vec()));
        assert_eq!(rows.len(), 29);
    }

    #[test]
    fn guesses_are_made_only_while_the_cache_could_hold_much_of_the_known_packs() {
        let (store, opened) = packs_read_at_key_3(200, |_| vec![7; 400]);
        let packed = 200 * opened.len();

        let small = RowCache::new(packed / KNOWN_PACK_BYTES_PER_CACHE_BYTE / 2);
        // Each shard could take the few guesses that land in it: rows up to a 16th of
        // its budget are cached.
        assert!(small.capacity_bytes() / 64 / 16 > 500);
        offer_pack(&store, &small, &key(3), &opened);
        assert_eq!(small.len(), 0, "packs four times the cache's size");

        let large = RowCache::new(packed * 4);
        offer_pack(&store, &large, &key(3), &opened);
        assert_eq!(large.len(), 31, "packs a quarter of the cache's size");
    }

    #[test]
    fn a_full_cache_takes_no_guesses() {
        let (store, opened) = one_pack_read_at_key_3();
        // No budget at all: every shard is full.
        let rows = RowCache::new(0);
        offer_pack(&store, &rows, &key(3), &opened);
        assert_eq!(rows.len(), 0);
    }
}
