//! A pack a point read was served from, lent to read-around
//! (`storage/cached/read_around.rs`) as an `OpenedBlock`: its keys as the read found
//! them, and, read again, the rows it holds now that no loose entry shadows.

use super::pack::Pack;
use super::store::Store;
use super::wal::SEQUENCE_KEY;
use crate::storage::{OpenedBlock, StorageResult};
use sled::IVec;

/// The pack `buffer`, as a read from `store` found it.
pub(crate) struct OpenedPack<'a> {
    store: &'a Store,
    buffer: &'a IVec,
}

impl<'a> OpenedPack<'a> {
    pub(crate) fn new(store: &'a Store, buffer: &'a IVec) -> Self {
        OpenedPack { store, buffer }
    }
}

impl OpenedBlock for OpenedPack<'_> {
    fn size(&self) -> usize {
        self.buffer.len()
    }

    /// The packs written since the server started and those reads have found
    /// (`Store::known_packs`): after a restart they become known as reads find them.
    fn known_blocks(&self) -> usize {
        self.store.known_packs()
    }

    fn keys<'b>(&'b self, each: &mut dyn FnMut(&'b [u8])) -> StorageResult<()> {
        let pack = Pack::parse(self.buffer)?;
        for index in 0..pack.len() {
            let key = pack.key(index)?;
            if key != SEQUENCE_KEY {
                each(key);
            }
        }
        Ok(())
    }

    /// The pack stored now under the opened one's last key, leaving out its keys a loose
    /// entry shadows (a later write of a packed key is stored loose). A delete since the
    /// read rewrote the pack without its key; a pack since mostly rewritten loose, or
    /// gone, vouches for nothing (`Store::pack_and_shadows`).
    fn read_again(&self, keys: &[&[u8]], each: &mut dyn FnMut(usize, &[u8])) -> StorageResult<()> {
        let earlier = Pack::parse(self.buffer)?;
        let Some(last) = earlier.len().checked_sub(1) else {
            return Ok(());
        };
        let Some((current, shadows)) = self.store.pack_and_shadows(earlier.key(last)?)? else {
            return Ok(());
        };
        let current = Pack::parse(&current)?;
        for (index, key) in keys.iter().enumerate() {
            if shadows
                .binary_search_by(|shadow| shadow[..].cmp(key))
                .is_ok()
            {
                continue;
            }
            if let Some(value) = current.get(key)? {
                each(index, value);
            }
        }
        Ok(())
    }
}
