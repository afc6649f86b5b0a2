//! Packs: many consecutive key-value entries stored as one sled value.
//!
//! sled spends about 3.5 µs of CPU on every key a batch inserts (its leaves hold at most
//! 16 keys and are cloned on each insert), which capped COPY at a third of PostgreSQL's
//! rate. A bulk load's rows are new and consecutive, so `store` writes them in packs
//! of up to `PACK_ROWS` entries: one sled insert per pack instead of one per row.
//!
//! Layout: entry count `n` (u32 LE), then `n + 1` offsets (u32 LE) into the body that
//! follows, entry `i` spanning `body[offsets[i]..offsets[i + 1]]`; an entry is its key
//! length (u32 LE), the key, then the value. Entries are in strictly increasing key order,
//! so a key is found by binary search without decoding the others.

use crate::storage::{StorageError, StorageResult};

/// The most entries one pack holds.
pub(crate) const PACK_ROWS: usize = 32;

/// A pack is closed once its entries reach this many bytes, whatever their count, so a
/// pack of large rows stays a small sled value (sled moves values past a quarter of its
/// 512 KiB segment into blob files of their own).
pub(crate) const PACK_BYTES: usize = 16 * 1024;

const WORD: usize = 4;

/// Encodes entries given in strictly increasing key order.
pub(crate) fn encode<'a>(entries: impl ExactSizeIterator<Item = (&'a [u8], &'a [u8])>) -> Vec<u8> {
    let count = entries.len();
    let header = WORD * (count + 2);
    let mut out = vec![0u8; header];
    out[..WORD].copy_from_slice(&word(count));
    for (index, (key, value)) in entries.enumerate() {
        let offset = out.len() - header;
        out[WORD * (index + 1)..WORD * (index + 2)].copy_from_slice(&word(offset));
        out.extend_from_slice(&word(key.len()));
        out.extend_from_slice(key);
        out.extend_from_slice(value);
    }
    let end = out.len() - header;
    out[WORD * (count + 1)..header].copy_from_slice(&word(end));
    out
}

/// Lengths and offsets are stored as u32; a pack is bounded far below 4 GiB by
/// `PACK_BYTES` plus the batch size limit.
fn word(n: usize) -> [u8; WORD] {
    u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes()
}

fn read_word(bytes: &[u8], at: usize) -> Option<usize> {
    let raw: [u8; WORD] = bytes.get(at..at + WORD)?.try_into().ok()?;
    usize::try_from(u32::from_le_bytes(raw)).ok()
}

/// A pack read in place.
#[derive(Clone, Copy)]
pub(crate) struct Pack<'a> {
    count: usize,
    offsets: &'a [u8],
    body: &'a [u8],
}

fn corrupt() -> StorageError {
    StorageError::Corrupt("a packed value is malformed".into())
}

impl<'a> Pack<'a> {
    /// Checks the header, so that `entry` only has to check each entry's own bounds.
    pub(crate) fn parse(bytes: &'a [u8]) -> StorageResult<Pack<'a>> {
        let count = read_word(bytes, 0).ok_or_else(corrupt)?;
        let header = count
            .checked_add(2)
            .and_then(|words| words.checked_mul(WORD))
            .filter(|&header| header <= bytes.len())
            .ok_or_else(corrupt)?;
        let pack = Pack {
            count,
            offsets: &bytes[WORD..header],
            body: &bytes[header..],
        };
        if count == 0 || read_word(pack.offsets, WORD * count) != Some(pack.body.len()) {
            return Err(corrupt());
        }
        Ok(pack)
    }

    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Entry `index` (below `len()`) as key and value.
    pub(crate) fn entry(&self, index: usize) -> StorageResult<(&'a [u8], &'a [u8])> {
        let start = read_word(self.offsets, WORD * index).ok_or_else(corrupt)?;
        let end = read_word(self.offsets, WORD * (index + 1)).ok_or_else(corrupt)?;
        let entry = self.body.get(start..end).ok_or_else(corrupt)?;
        let key_len = read_word(entry, 0).ok_or_else(corrupt)?;
        let rest = &entry[WORD..];
        if key_len > rest.len() {
            return Err(corrupt());
        }
        Ok(rest.split_at(key_len))
    }

    pub(crate) fn key(&self, index: usize) -> StorageResult<&'a [u8]> {
        Ok(self.entry(index)?.0)
    }

    /// `Ok(index)` of `key`, or `Err(index)` where it would be inserted.
    pub(crate) fn search(&self, key: &[u8]) -> StorageResult<Result<usize, usize>> {
        let (mut low, mut high) = (0, self.count);
        while low < high {
            let middle = low + (high - low) / 2;
            match self.key(middle)?.cmp(key) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Ok(Ok(middle)),
            }
        }
        Ok(Err(low))
    }

    /// The value stored under `key` in this pack.
    pub(crate) fn get(&self, key: &[u8]) -> StorageResult<Option<&'a [u8]>> {
        match self.search(key)? {
            Ok(index) => Ok(Some(self.entry(index)?.1)),
            Err(_) => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        (0..n)
            .map(|i| (format!("k{i:03}").into_bytes(), vec![i as u8; i % 5]))
            .collect()
    }

    fn packed(entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
        encode(entries.iter().map(|(k, v)| (k.as_slice(), v.as_slice())))
    }

    #[test]
    fn every_entry_reads_back_and_is_found_by_key() {
        for n in [1, 2, 7, PACK_ROWS] {
            let stored = entries(n);
            let bytes = packed(&stored);
            let pack = Pack::parse(&bytes).unwrap();
            assert_eq!(pack.len(), n);
            for (index, (key, value)) in stored.iter().enumerate() {
                assert_eq!(
                    pack.entry(index).unwrap(),
                    (key.as_slice(), value.as_slice())
                );
                assert_eq!(pack.get(key).unwrap(), Some(value.as_slice()));
            }
            assert_eq!(pack.get(b"k").unwrap(), None);
            assert_eq!(pack.search(b"k").unwrap(), Err(0));
            assert_eq!(pack.search(b"k0045").unwrap(), Err(5.min(n)));
            assert_eq!(pack.search(b"l").unwrap(), Err(n));
        }
    }

    #[test]
    fn malformed_packs_are_refused_not_misread() {
        let bytes = packed(&entries(3));
        for cut in 0..bytes.len() {
            assert!(Pack::parse(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        assert!(
            Pack::parse(&packed(&[])).is_err(),
            "an empty pack is never written"
        );
        let mut huge_count = bytes.clone();
        huge_count[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Pack::parse(&huge_count).is_err());
        let mut bad_offset = bytes;
        bad_offset[8..12].copy_from_slice(&1000u32.to_le_bytes());
        let pack = Pack::parse(&bad_offset).unwrap();
        assert!(pack.entry(0).is_err());
        assert!(pack.entry(1).is_err());
        assert!(pack.entry(2).is_ok());
    }
}
