//! Where the packs are, as far as writes and reads have seen: the last keys of packs,
//! kept in memory so that a point read of a packed key finds its pack with one sled
//! `get`. A write that stores packs remembers them; a read that had to find a pack the
//! slow way remembers it (packs stored before the server started).
//!
//! The packs tree is keyed by each pack's last key, so the pack that could hold a key is
//! the first at or after it, and sled 0.34 finds that only with a range iterator, which
//! clones the leaf node it seeks into. In a profile of prepared point gets of
//! bulk-loaded rows that lookup took 12.8% of the server's CPU, more than twice the
//! loose lookup before it.
//!
//! The hints are never the truth: packs come and go with writes, and only their coming
//! is followed here. A read takes the first remembered last key at or after its key, gets
//! that pack, and trusts it only if it is there and its range begins at or before the
//! key: pack ranges never overlap, so a pack in sled whose range covers the key is the
//! only one that can hold it. Otherwise the read finds the pack the slow way and
//! remembers it, or forgets a last key that led nowhere (`Store::get`).

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Most last keys remembered (one per pack of up to 32 rows, so 16 million packed rows;
/// about 45 MB with keys of 40 bytes). Past it they are all forgotten and relearned.
const MAX_HINTS: usize = 1 << 19;

#[derive(Default)]
pub(crate) struct PackHints {
    last_keys: RwLock<BTreeSet<Vec<u8>>>,
}

impl PackHints {
    /// The smallest remembered last key at or after `key`.
    pub(crate) fn at_or_after(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.read()
            .range::<[u8], _>((Bound::Included(key), Bound::Unbounded))
            .next()
            .cloned()
    }

    pub(crate) fn remember(&self, last_key: &[u8]) {
        // A get of a key in a gap between packs finds the same pack every time: no need
        // to hold every other read up for a write lock then.
        if self.read().contains(last_key) {
            return;
        }
        let mut last_keys = self.write();
        if last_keys.len() >= MAX_HINTS {
            last_keys.clear();
        }
        last_keys.insert(last_key.to_vec());
    }

    /// Remembers the packs a write has just stored, under one lock.
    pub(crate) fn remember_all(&self, new_last_keys: Vec<Vec<u8>>) {
        if new_last_keys.is_empty() {
            return;
        }
        let mut last_keys = self.write();
        if last_keys.len() + new_last_keys.len() > MAX_HINTS {
            last_keys.clear();
        }
        last_keys.extend(new_last_keys.into_iter().take(MAX_HINTS));
    }

    /// How many packs are remembered.
    pub(crate) fn len(&self) -> usize {
        self.read().len()
    }

    pub(crate) fn forget(&self, last_key: &[u8]) {
        self.write().remove(last_key);
    }

    fn read(&self) -> RwLockReadGuard<'_, BTreeSet<Vec<u8>>> {
        self.last_keys.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, BTreeSet<Vec<u8>>> {
        self.last_keys.write().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_last_key_at_or_after_a_key_is_found_until_forgotten() {
        let hints = PackHints::default();
        assert_eq!(hints.at_or_after(b"k"), None);
        hints.remember(b"m");
        hints.remember(b"t");
        assert_eq!(hints.at_or_after(b"k").as_deref(), Some(&b"m"[..]));
        assert_eq!(hints.at_or_after(b"m").as_deref(), Some(&b"m"[..]));
        assert_eq!(hints.at_or_after(b"n").as_deref(), Some(&b"t"[..]));
        assert_eq!(hints.at_or_after(b"u"), None);
        hints.forget(b"m");
        assert_eq!(hints.at_or_after(b"k").as_deref(), Some(&b"t"[..]));
    }
}
