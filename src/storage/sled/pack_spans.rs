//! Where packs may lie: the key spans of the batches stored packed, so that a lookup
//! outside all of them skips the packs tree.
//!
//! One span from the smallest to the largest key ever packed was not enough. Each
//! COMMIT of a block of new rows is stored packed, wherever its keys fall, so after a few
//! such blocks that one span covered the whole table. Then every INSERT proving its key
//! absent looked through the packs too, with a pack hint and a sled range iterator: 7.7%
//! of the server's CPU in a profile of blocks of 100 INSERTs, twice what the loose lookup
//! before it cost.
//!
//! Spans are never the truth about packs, only an upper bound: a pack lies inside some
//! span from before it is written (`cover` runs before the write) for as long as it
//! exists, since rewriting a pack only shrinks it. A span outliving its packs costs a
//! lookup, never a wrong answer. Spans are kept disjoint, a new one that meets others
//! absorbing them, so one span is the only candidate for a key. Past `MAX_SPANS` a new
//! span also absorbs a neighbour, which keeps memory bounded and loses only precision.
//!
//! They are stored in their own sled tree (last key -> first key), written in the same
//! transaction as the packs they cover: after a crash, the stored spans cover every pack
//! sled kept. Every stored removal comes with a wider span in the same transaction, so
//! stored spans may overlap but never cover less than the packs; loading merges them.

use std::collections::BTreeMap;
use std::ops::Bound;

/// Most spans kept. A bulk load adds one per batch (1,000 rows with COPY), and blocks
/// of INSERTs one per COMMIT; 65,536 spans are about 10 MB with 40-byte keys.
const MAX_SPANS: usize = 1 << 16;

/// Disjoint key spans, by last key.
#[derive(Debug, Default)]
pub(crate) struct PackSpans {
    /// Last key -> first key, both inclusive.
    by_last: BTreeMap<Vec<u8>, Vec<u8>>,
}

/// What `cover` changed, for the stored copy: spans to drop (by last key), then the span
/// to add (last key, first key).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SpanChange {
    pub(crate) removed: Vec<Vec<u8>>,
    pub(crate) added: (Vec<u8>, Vec<u8>),
}

impl PackSpans {
    /// The spans stored as (last key, first key) pairs, overlapping ones merged.
    pub(crate) fn load(stored: impl IntoIterator<Item = (Vec<u8>, Vec<u8>)>) -> PackSpans {
        let mut spans = PackSpans::default();
        for (last, first) in stored {
            spans.cover(&first, &last);
        }
        spans
    }

    pub(crate) fn len(&self) -> usize {
        self.by_last.len()
    }

    /// Whether some span meets the key range from `low` to `high`.
    pub(crate) fn meets(&self, low: Bound<&[u8]>, high: Bound<&[u8]>) -> bool {
        // Spans are disjoint, so ordered by first key as by last: the first one ending at
        // or after `low` is the only one that can begin before `high`.
        let Some((_, first)) = self
            .by_last
            .range::<[u8], _>((low, Bound::Unbounded))
            .next()
        else {
            return false;
        };
        match high {
            Bound::Included(high) => first.as_slice() <= high,
            Bound::Excluded(high) => first.as_slice() < high,
            Bound::Unbounded => true,
        }
    }

    /// Makes the spans cover `[first, last]`; `None` when they already did.
    pub(crate) fn cover(&mut self, first: &[u8], last: &[u8]) -> Option<SpanChange> {
        let mut met: Vec<Vec<u8>> = self
            .by_last
            .range::<[u8], _>((Bound::Included(first), Bound::Unbounded))
            .take_while(|(_, span_first)| span_first.as_slice() <= last)
            .map(|(span_last, _)| span_last.clone())
            .collect();
        if let [only] = met.as_slice() {
            let covers = self
                .by_last
                .get(only)
                .is_some_and(|span_first| span_first.as_slice() <= first)
                && only.as_slice() >= last;
            if covers {
                return None;
            }
        }
        if met.is_empty() && self.by_last.len() >= MAX_SPANS {
            if let Some(neighbour) = self.neighbour(first) {
                met.push(neighbour);
            }
        }
        let (mut new_first, mut new_last) = (first.to_vec(), last.to_vec());
        for span_last in &met {
            if let Some(span_first) = self.by_last.remove(span_last) {
                new_first = new_first.min(span_first);
            }
            new_last = new_last.max(span_last.clone());
        }
        self.by_last.insert(new_last.clone(), new_first.clone());
        Some(SpanChange {
            removed: met,
            added: (new_last, new_first),
        })
    }

    /// The span just before `key`, or else the first one after it.
    fn neighbour(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.by_last
            .range::<[u8], _>((Bound::Unbounded, Bound::Excluded(key)))
            .next_back()
            .or_else(|| {
                self.by_last
                    .range::<[u8], _>((Bound::Included(key), Bound::Unbounded))
                    .next()
            })
            .map(|(span_last, _)| span_last.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(spans: &PackSpans, key: &[u8]) -> bool {
        spans.meets(Bound::Included(key), Bound::Included(key))
    }

    #[test]
    fn keys_between_spans_meet_none() {
        let mut spans = PackSpans::default();
        assert!(spans.cover(b"b", b"d").is_some());
        assert!(spans.cover(b"m", b"p").is_some());
        for key in [&b"b"[..], b"c", b"d", b"m", b"n", b"p"] {
            assert!(point(&spans, key), "{key:?} lies in a span");
        }
        for key in [&b"a"[..], b"da", b"e", b"l", b"pa", b"z"] {
            assert!(!point(&spans, key), "{key:?} lies between spans");
        }
        let range = |low: &'static [u8], high: &'static [u8]| {
            spans.meets(Bound::Excluded(low), Bound::Excluded(high))
        };
        assert!(!range(b"d", b"m"), "open ends exclude both spans' edges");
        assert!(range(b"c", b"m"));
        assert!(range(b"d", b"ma"));
        assert!(spans.meets(Bound::Unbounded, Bound::Excluded(b"ba")));
        assert!(!spans.meets(Bound::Excluded(b"p"), Bound::Unbounded));
    }

    #[test]
    fn a_span_that_meets_others_absorbs_them() {
        let mut spans = PackSpans::default();
        spans.cover(b"b", b"d");
        spans.cover(b"f", b"h");
        spans.cover(b"x", b"y");
        let change = spans.cover(b"c", b"g").unwrap();
        assert_eq!(change.removed, vec![b"d".to_vec(), b"h".to_vec()]);
        assert_eq!(change.added, (b"h".to_vec(), b"b".to_vec()));
        assert_eq!(spans.len(), 2);
        assert!(
            point(&spans, b"e"),
            "the gap between the absorbed spans is covered"
        );
        assert_eq!(
            spans.cover(b"c", b"e"),
            None,
            "a covered span changes nothing"
        );
    }

    #[test]
    fn past_the_limit_a_new_span_absorbs_a_neighbour() {
        let mut spans = PackSpans::default();
        for n in 0..MAX_SPANS as u32 {
            let key = (n * 4).to_be_bytes();
            spans.cover(&key, &key);
        }
        let key = (4 * 1000 + 2u32).to_be_bytes();
        let change = spans.cover(&key, &key).unwrap();
        assert_eq!(spans.len(), MAX_SPANS);
        assert_eq!(change.removed, vec![4000u32.to_be_bytes().to_vec()]);
        assert!(point(&spans, &4001u32.to_be_bytes()));
        let below_all = spans.cover(b"\0", b"\0").map(|c| c.removed);
        assert_eq!(below_all, Some(vec![0u32.to_be_bytes().to_vec()]));
        assert_eq!(spans.len(), MAX_SPANS);
    }

    #[test]
    fn loading_merges_overlapping_stored_spans() {
        let stored = vec![
            (b"d".to_vec(), b"b".to_vec()),
            (b"e".to_vec(), b"a".to_vec()),
            (b"k".to_vec(), b"j".to_vec()),
        ];
        let spans = PackSpans::load(stored);
        assert_eq!(spans.len(), 2);
        assert!(point(&spans, b"a") && point(&spans, b"e") && point(&spans, b"j"));
        assert!(!point(&spans, b"f"));
    }
}
