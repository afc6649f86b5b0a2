//! The storage conformance suite: one backend-agnostic set of checks every `Backend`
//! must pass (point reads and writes, ordered scans in both directions with every kind of
//! bound, prefixes, paging, atomic and conditional batches, compare-and-swap, concurrent
//! writers, range reads within a partition as writes land, bulk loads changed afterwards),
//! run against `MemoryBackend`, a durable `SledBackend`, and each behind the row and
//! partition caches (`Cached`), made small so that they also evict.
//! Sled-only checks follow: data survives a drop and reopen, bulk-loaded (packed) data
//! included, and so does a value large enough to be a blob.

use pgwide::storage::{
    Backend, CacheOptions, Cached, Check, Direction, KeyRange, MemoryBackend, OrderedKv,
    SledBackend, SledOptions, Snapshotting, SyncTicket, WriteBatch,
};
use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::sync::Arc;

/// Runs every backend-agnostic check against `backend`, which must start empty.
async fn conformance(backend: Arc<dyn Backend>) {
    point_operations(backend.as_ref()).await;
    scans_match_a_sorted_list(backend.as_ref()).await;
    prefixes(backend.as_ref()).await;
    paging_with_resume_after(backend.as_ref()).await;
    atomic_batches(backend.as_ref()).await;
    conditional_writes(backend.as_ref()).await;
    many_absence_checks(backend.as_ref()).await;
    compare_and_swap(backend.as_ref()).await;
    concurrent_cas_increments(Arc::clone(&backend)).await;
    concurrent_disjoint_writers(Arc::clone(&backend)).await;
    partition_reads_follow_writes(backend.as_ref()).await;
    partition_reads_see_every_acknowledged_write(Arc::clone(&backend)).await;
    point_reads_see_every_acknowledged_write(Arc::clone(&backend)).await;
    large_batch_with_a_repeated_key(backend.as_ref()).await;
    let model = bulk_loads_then_changes(backend.as_ref(), 0x2545_F491_4F6C_DD1D).await;
    let mut cleanup = WriteBatch::default();
    for key in model.keys() {
        cleanup.delete(key.clone());
    }
    backend.write(cleanup).await.unwrap();
    assert!(everything(backend.as_ref(), b"bulk/").await.is_empty());
}

fn put(key: &[u8], value: &[u8]) -> WriteBatch {
    let mut batch = WriteBatch::default();
    batch.put(key.to_vec(), value.to_vec());
    batch
}

fn delete(key: &[u8]) -> WriteBatch {
    let mut batch = WriteBatch::default();
    batch.delete(key.to_vec());
    batch
}

async fn everything(backend: &dyn Backend, prefix: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    backend
        .scan(&KeyRange::prefix(prefix), Direction::Forward, usize::MAX)
        .await
        .unwrap()
}

async fn point_operations(b: &dyn Backend) {
    let key = b"p/alpha".as_slice();
    assert_eq!(b.get(key).await.unwrap(), None, "a fresh backend is empty");
    b.write(put(key, b"one")).await.unwrap();
    assert_eq!(b.get(key).await.unwrap(), Some(b"one".to_vec()));
    b.write(put(key, b"two")).await.unwrap();
    assert_eq!(
        b.get(key).await.unwrap(),
        Some(b"two".to_vec()),
        "a put overwrites"
    );
    // Keys and values are arbitrary bytes, including 0x00, 0xFF and the empty value.
    let odd = [b'p', b'/', 0x00, 0xFF, 0x00];
    b.write(put(&odd, b"")).await.unwrap();
    assert_eq!(b.get(&odd).await.unwrap(), Some(Vec::new()));
    assert_eq!(b.get(&odd[..4]).await.unwrap(), None, "no prefix match");
    b.write(delete(key)).await.unwrap();
    assert_eq!(b.get(key).await.unwrap(), None, "a delete removes");
    b.write(delete(b"p/never-written")).await.unwrap();
    assert_eq!(b.get(b"p/never-written").await.unwrap(), None);
    b.write(delete(&odd)).await.unwrap();
    assert!(everything(b, b"p/").await.is_empty());
}

fn in_range(key: &[u8], start: &Bound<Vec<u8>>, end: &Bound<Vec<u8>>) -> bool {
    let after_start = match start {
        Included(s) => key >= s.as_slice(),
        Excluded(s) => key > s.as_slice(),
        Unbounded => true,
    };
    let before_end = match end {
        Included(e) => key <= e.as_slice(),
        Excluded(e) => key < e.as_slice(),
        Unbounded => true,
    };
    after_start && before_end
}

async fn scans_match_a_sorted_list(b: &dyn Backend) {
    // Twenty keys under "s/" with neighbours on both sides that no scan may leak into
    // when bounded by the prefix.
    let mut batch = WriteBatch::default();
    let mut stored = Vec::new();
    for i in 0..20u8 {
        let key = format!("s/{:02}", i * 5).into_bytes();
        let value = vec![i; (i as usize) + 1];
        batch.put(key.clone(), value.clone());
        stored.push((key, value));
    }
    batch.put(b"r/before".to_vec(), b"x".to_vec());
    batch.put(b"t/after".to_vec(), b"x".to_vec());
    b.write(batch).await.unwrap();

    // Bounds on stored keys, between stored keys, and outside the stored set.
    let points: Vec<Vec<u8>> = ["s/", "s/00", "s/03", "s/05", "s/50", "s/51", "s/95", "s/96"]
        .iter()
        .map(|p| p.as_bytes().to_vec())
        .collect();
    let mut bounds = vec![Unbounded];
    for p in &points {
        bounds.push(Included(p.clone()));
        bounds.push(Excluded(p.clone()));
    }
    let clamp = |bound: &Bound<Vec<u8>>, is_start: bool| match bound {
        Unbounded if is_start => Included(b"s/".to_vec()),
        Unbounded => Excluded(b"s0".to_vec()),
        other => other.clone(),
    };
    let mut checked = 0;
    for start in &bounds {
        for end in &bounds {
            let range = KeyRange {
                start: clamp(start, true),
                end: clamp(end, false),
            };
            let expected: Vec<_> = stored
                .iter()
                .filter(|(k, _)| in_range(k, &range.start, &range.end))
                .cloned()
                .collect();
            for limit in [0usize, 1, 3, 7, usize::MAX] {
                let forward = b.scan(&range, Direction::Forward, limit).await.unwrap();
                let want: Vec<_> = expected.iter().take(limit).cloned().collect();
                assert_eq!(forward, want, "forward {range:?} limit {limit}");
                let backward = b.scan(&range, Direction::Backward, limit).await.unwrap();
                let want: Vec<_> = expected.iter().rev().take(limit).cloned().collect();
                assert_eq!(backward, want, "backward {range:?} limit {limit}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 17 * 17 * 5);

    // Fully unbounded scans see the neighbours too, in order.
    let all = b
        .scan(
            &KeyRange {
                start: Unbounded,
                end: Unbounded,
            },
            Direction::Forward,
            usize::MAX,
        )
        .await
        .unwrap();
    let keys: Vec<&[u8]> = all.iter().map(|(k, _)| k.as_slice()).collect();
    let r = keys.iter().position(|k| *k == b"r/before").unwrap();
    let t = keys.iter().position(|k| *k == b"t/after").unwrap();
    assert_eq!(t - r, 21, "twenty s/ keys between r/before and t/after");
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    let last = b
        .scan(
            &KeyRange {
                start: Unbounded,
                end: Unbounded,
            },
            Direction::Backward,
            1,
        )
        .await
        .unwrap();
    assert_eq!(last[0].0, *keys.last().unwrap());

    // Inverted and empty ranges return nothing rather than failing.
    for range in [
        KeyRange::half_open(b"s/50".to_vec(), b"s/10".to_vec()),
        KeyRange::half_open(b"s/50".to_vec(), b"s/50".to_vec()),
        KeyRange {
            start: Excluded(b"s/50".to_vec()),
            end: Included(b"s/50".to_vec()),
        },
        KeyRange {
            start: Excluded(b"s/50".to_vec()),
            end: Excluded(b"s/50".to_vec()),
        },
    ] {
        assert!(range.is_empty());
        for direction in [Direction::Forward, Direction::Backward] {
            assert!(b.scan(&range, direction, 10).await.unwrap().is_empty());
        }
    }
    let single = KeyRange {
        start: Included(b"s/50".to_vec()),
        end: Included(b"s/50".to_vec()),
    };
    assert_eq!(
        b.scan(&single, Direction::Backward, 10)
            .await
            .unwrap()
            .len(),
        1
    );

    let mut cleanup = WriteBatch::default();
    for (k, _) in &stored {
        cleanup.delete(k.clone());
    }
    cleanup.delete(b"r/before".to_vec());
    cleanup.delete(b"t/after".to_vec());
    b.write(cleanup).await.unwrap();
    assert!(everything(b, b"s/").await.is_empty());
}

async fn prefixes(b: &dyn Backend) {
    let keys: Vec<Vec<u8>> = vec![
        vec![0x7A, 0x01],
        vec![0x7A, 0x01, 0x00],
        vec![0x7A, 0x01, 0xFF, 0xFF],
        vec![0x7A, 0x02],
        vec![0x7A, 0xFF],
        vec![0x7A, 0xFF, 0x00],
        vec![0x7A, 0xFF, 0xFF, 0x07],
        vec![0x7B],
    ];
    let mut batch = WriteBatch::default();
    for k in &keys {
        batch.put(k.clone(), k.clone());
    }
    b.write(batch).await.unwrap();
    let scan_keys = |prefix: Vec<u8>, direction| async move {
        b.scan(&KeyRange::prefix(&prefix), direction, usize::MAX)
            .await
            .unwrap()
            .into_iter()
            .map(|(k, v)| {
                assert_eq!(k, v);
                k
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        scan_keys(vec![0x7A, 0x01], Direction::Forward).await,
        keys[0..3].to_vec()
    );
    // A prefix ending in 0xFF has a successor that carries into the byte before it.
    assert_eq!(
        scan_keys(vec![0x7A, 0xFF], Direction::Forward).await,
        keys[4..7].to_vec()
    );
    assert_eq!(
        scan_keys(vec![0x7A, 0xFF, 0xFF], Direction::Backward).await,
        vec![keys[6].clone()]
    );
    let mut reversed = keys[0..7].to_vec();
    reversed.reverse();
    assert_eq!(scan_keys(vec![0x7A], Direction::Backward).await, reversed);
    assert!(scan_keys(vec![0x7A, 0x03], Direction::Forward)
        .await
        .is_empty());
    let mut cleanup = WriteBatch::default();
    for k in keys {
        cleanup.delete(k);
    }
    b.write(cleanup).await.unwrap();
}

async fn paging_with_resume_after(b: &dyn Backend) {
    let mut batch = WriteBatch::default();
    for i in 0..50u32 {
        batch.put(format!("g/{i:03}").into_bytes(), i.to_be_bytes().to_vec());
    }
    b.write(batch).await.unwrap();
    let full = KeyRange {
        start: Excluded(b"g/004".to_vec()),
        end: Included(b"g/044".to_vec()),
    };
    for direction in [Direction::Forward, Direction::Backward] {
        let whole = b.scan(&full, direction, usize::MAX).await.unwrap();
        assert_eq!(whole.len(), 40);
        for page_size in [1usize, 3, 7, 40] {
            let mut range = full.clone();
            let mut pages = Vec::new();
            loop {
                let page = b.scan(&range, direction, page_size).await.unwrap();
                assert!(page.len() <= page_size);
                let Some((last, _)) = page.last() else { break };
                range = range.resume_after(last, direction);
                pages.extend(page);
            }
            assert_eq!(pages, whole, "{direction:?} pages of {page_size}");
        }
    }
    let mut cleanup = WriteBatch::default();
    for i in 0..50u32 {
        cleanup.delete(format!("g/{i:03}").into_bytes());
    }
    b.write(cleanup).await.unwrap();
}

async fn atomic_batches(b: &dyn Backend) {
    b.write(put(b"a/old", b"1")).await.unwrap();
    let mut batch = WriteBatch::default();
    batch.put(b"a/x".to_vec(), b"x".to_vec());
    batch.put(b"a/y".to_vec(), b"y".to_vec());
    batch.delete(b"a/old".to_vec());
    // Within one batch the last operation on a key wins.
    batch.put(b"a/z".to_vec(), b"first".to_vec());
    batch.delete(b"a/z".to_vec());
    batch.delete(b"a/w".to_vec());
    batch.put(b"a/w".to_vec(), b"last".to_vec());
    assert_eq!(batch.len(), 7);
    b.write(batch).await.unwrap();
    assert_eq!(
        everything(b, b"a/").await,
        vec![
            (b"a/w".to_vec(), b"last".to_vec()),
            (b"a/x".to_vec(), b"x".to_vec()),
            (b"a/y".to_vec(), b"y".to_vec()),
        ]
    );
    // An empty batch is fine and changes nothing.
    b.write(WriteBatch::default()).await.unwrap();
    assert_eq!(everything(b, b"a/").await.len(), 3);
    let mut cleanup = WriteBatch::default();
    for k in ["a/w", "a/x", "a/y"] {
        cleanup.delete(k.as_bytes().to_vec());
    }
    b.write(cleanup).await.unwrap();
}

async fn conditional_writes(b: &dyn Backend) {
    b.write(put(b"c/present", b"v1")).await.unwrap();
    let batch = || {
        let mut batch = WriteBatch::default();
        batch.put(b"c/new1".to_vec(), b"n1".to_vec());
        batch.put(b"c/new2".to_vec(), b"n2".to_vec());
        batch.delete(b"c/present".to_vec());
        batch
    };
    let check = |key: &[u8], expected: Option<&[u8]>| Check {
        key: key.to_vec(),
        expected: expected.map(<[u8]>::to_vec),
    };
    let before = everything(b, b"c/").await;
    // Each failing set of checks leaves everything as it was: all or nothing.
    for checks in [
        vec![check(b"c/present", Some(b"wrong"))],
        vec![check(b"c/present", None)],
        vec![check(b"c/absent", Some(b"v1"))],
        vec![check(b"c/absent", Some(b""))],
        vec![check(b"c/absent", None), check(b"c/present", Some(b"v2"))],
        vec![
            check(b"c/present", Some(b"v1")),
            check(b"c/new1", Some(b"n1")),
        ],
    ] {
        assert!(
            !b.write_if(&checks, batch()).await.unwrap(),
            "{checks:?} must fail"
        );
        assert_eq!(everything(b, b"c/").await, before, "{checks:?} wrote");
    }
    // All checks hold: the whole batch applies.
    let checks = vec![
        check(b"c/present", Some(b"v1")),
        check(b"c/absent", None),
        check(b"c/new1", None),
    ];
    assert!(b.write_if(&checks, batch()).await.unwrap());
    assert_eq!(
        everything(b, b"c/").await,
        vec![
            (b"c/new1".to_vec(), b"n1".to_vec()),
            (b"c/new2".to_vec(), b"n2".to_vec()),
        ]
    );
    // No checks at all: applies unconditionally.
    assert!(b.write_if(&[], delete(b"c/new1")).await.unwrap());
    // A check may cover a key the batch does not touch.
    assert!(b
        .write_if(&[check(b"c/new2", Some(b"n2"))], delete(b"c/new2"))
        .await
        .unwrap());
    assert!(everything(b, b"c/").await.is_empty());
}

/// A bulk load's many "this key is absent" checks: keys present around them do not
/// matter, one present among them fails the whole batch.
async fn many_absence_checks(b: &dyn Backend) {
    let absent = |keys: &[&[u8]]| -> Vec<Check> {
        keys.iter()
            .map(|k| Check {
                key: k.to_vec(),
                expected: None,
            })
            .collect()
    };
    let load = |keys: &[&[u8]]| {
        let mut batch = WriteBatch::default();
        for k in keys {
            batch.put(k.to_vec(), b"new".to_vec());
        }
        batch
    };
    b.write(put(b"m/a", b"old")).await.unwrap();
    b.write(put(b"m/m", b"old")).await.unwrap();
    b.write(put(b"m/z", b"old")).await.unwrap();
    let before = everything(b, b"m/").await;
    // Unsorted, with an existing key between the smallest and the largest.
    for keys in [
        &[&b"m/x"[..], b"m/m", b"m/b"][..],
        &[b"m/n", b"m/c", b"m/z"],
        &[b"m/a", b"m/b"],
    ] {
        assert!(
            !b.write_if(&absent(keys), load(keys)).await.unwrap(),
            "{keys:?} holds a present key"
        );
        assert_eq!(everything(b, b"m/").await, before);
    }
    // Present keys between them, none of them checked: an other check that fails
    // still fails the batch, and without it the batch applies.
    let keys: &[&[u8]] = &[b"m/y", b"m/b", b"m/n"];
    let mut checks = absent(keys);
    checks.push(Check {
        key: b"m/m".to_vec(),
        expected: Some(b"wrong".to_vec()),
    });
    assert!(!b.write_if(&checks, load(keys)).await.unwrap());
    checks.pop();
    assert!(b.write_if(&checks, load(keys)).await.unwrap());
    // No key between them at all.
    let keys: &[&[u8]] = &[b"m/e", b"m/d", b"m/f"];
    assert!(b.write_if(&absent(keys), load(keys)).await.unwrap());
    assert_eq!(everything(b, b"m/").await.len(), 9);
    for (k, _) in everything(b, b"m/").await {
        b.write(delete(&k)).await.unwrap();
    }
}

async fn compare_and_swap(b: &dyn Backend) {
    let key = b"cas/k".as_slice();
    assert!(!b
        .compare_and_swap(key, Some(b"x".to_vec()), Some(b"y".to_vec()))
        .await
        .unwrap());
    assert_eq!(b.get(key).await.unwrap(), None);
    assert!(b
        .compare_and_swap(key, None, Some(b"1".to_vec()))
        .await
        .unwrap());
    assert!(
        !b.compare_and_swap(key, None, Some(b"other".to_vec()))
            .await
            .unwrap(),
        "create-if-absent fails once present"
    );
    assert!(b
        .compare_and_swap(key, Some(b"1".to_vec()), Some(b"2".to_vec()))
        .await
        .unwrap());
    assert!(!b
        .compare_and_swap(key, Some(b"1".to_vec()), Some(b"3".to_vec()))
        .await
        .unwrap());
    assert_eq!(b.get(key).await.unwrap(), Some(b"2".to_vec()));
    assert!(!b
        .compare_and_swap(key, Some(b"1".to_vec()), None)
        .await
        .unwrap());
    assert!(b
        .compare_and_swap(key, Some(b"2".to_vec()), None)
        .await
        .unwrap());
    assert_eq!(b.get(key).await.unwrap(), None);
}

async fn concurrent_cas_increments(b: Arc<dyn Backend>) {
    const TASKS: u64 = 8;
    const EACH: u64 = 200;
    let key = b"cnt/counter".to_vec();
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        let b = Arc::clone(&b);
        let key = key.clone();
        tasks.push(tokio::spawn(async move {
            let mut retries = 0u64;
            for _ in 0..EACH {
                loop {
                    let current = b.get(&key).await.unwrap();
                    let n = current
                        .as_deref()
                        .map_or(0, |v| u64::from_be_bytes(v.try_into().unwrap()));
                    let next = (n + 1).to_be_bytes().to_vec();
                    if b.compare_and_swap(&key, current, Some(next)).await.unwrap() {
                        break;
                    }
                    retries += 1;
                }
            }
            retries
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let value = b.get(&key).await.unwrap().unwrap();
    assert_eq!(
        u64::from_be_bytes(value.as_slice().try_into().unwrap()),
        TASKS * EACH,
        "every successful compare-and-swap counted exactly once"
    );
    b.write(delete(&key)).await.unwrap();
}

async fn concurrent_disjoint_writers(b: Arc<dyn Backend>) {
    let mut tasks = Vec::new();
    for t in 0..4u8 {
        let b = Arc::clone(&b);
        tasks.push(tokio::spawn(async move {
            for i in 0..50u8 {
                let mut batch = WriteBatch::default();
                batch.put(vec![b'w', t, i, 0], vec![t, i]);
                batch.put(vec![b'w', t, i, 1], vec![i, t]);
                b.write(batch).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let all = everything(b.as_ref(), b"w").await;
    assert_eq!(all.len(), 4 * 50 * 2);
    for (k, v) in &all {
        let want = if k[3] == 0 {
            vec![k[1], k[2]]
        } else {
            vec![k[2], k[1]]
        };
        assert_eq!(*v, want);
    }
    let mut cleanup = WriteBatch::default();
    for (k, _) in all {
        cleanup.delete(k);
    }
    b.write(cleanup).await.unwrap();
}

/// What a scan of `range` must return, read from a sorted map.
fn model_range(
    model: &std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
    range: &KeyRange,
    direction: Direction,
    limit: usize,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut expected: Vec<_> = model
        .iter()
        .filter(|(k, _)| in_range(k, &range.start, &range.end))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if direction == Direction::Backward {
        expected.reverse();
    }
    expected.truncate(limit);
    expected
}

/// A small deterministic generator (xorshift), so a failure replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn partition_key(partition: u64, k: u64) -> Vec<u8> {
    format!("part/{partition}/{k:02}").into_bytes()
}

fn partition_bound(rng: &mut Rng, partition: u64) -> Bound<Vec<u8>> {
    // Keys between and beyond the stored ones, and the partition's own edges.
    let key = match rng.below(4) {
        0 => format!("part/{partition}/").into_bytes(),
        1 => format!("part/{partition}/{:02}5", rng.below(30)).into_bytes(),
        _ => partition_key(partition, rng.below(30)),
    };
    match rng.below(5) {
        0 => Unbounded,
        1 | 2 => Included(key),
        _ => Excluded(key),
    }
}

/// Random writes (puts, deletes, several-key batches, conditional writes that hold or
/// fail) over four partitions, with range reads within a partition in between, each
/// compared with a sorted map. Reads come often enough that partitions are read twice
/// without a write between (what a cache would copy in) and then written.
async fn partition_reads_follow_writes(b: &dyn Backend) {
    let mut model = std::collections::BTreeMap::<Vec<u8>, Vec<u8>>::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for step in 0..4000u64 {
        let partition = rng.below(4);
        match rng.below(10) {
            0..=5 => {
                let prefix = format!("part/{partition}/").into_bytes();
                // An unbounded side stays within the partition, as the engine's would.
                let start = match partition_bound(&mut rng, partition) {
                    Unbounded => Included(prefix.clone()),
                    bound => bound,
                };
                let end = match partition_bound(&mut rng, partition) {
                    Unbounded => Excluded(format!("part/{partition}0").into_bytes()),
                    bound => bound,
                };
                let range = KeyRange { start, end };
                let direction = if rng.below(2) == 0 {
                    Direction::Forward
                } else {
                    Direction::Backward
                };
                let limit = [1, 3, 100][rng.below(3) as usize];
                let mut seen = Vec::new();
                b.visit_partition(&prefix, &range, direction, limit, &mut |k, v| {
                    seen.push((k.to_vec(), v.to_vec()));
                    true
                })
                .await
                .unwrap();
                let expected = model_range(&model, &range, direction, limit);
                assert_eq!(
                    seen, expected,
                    "step {step}: {range:?} {direction:?} {limit}"
                );
            }
            6 => {
                let key = partition_key(partition, rng.below(30));
                b.write(delete(&key)).await.unwrap();
                model.remove(&key);
            }
            7 => {
                let mut batch = WriteBatch::default();
                for _ in 0..3 {
                    let key = partition_key(rng.below(4), rng.below(30));
                    let value = format!("batch {step}").into_bytes();
                    batch.put(key.clone(), value.clone());
                    model.insert(key, value);
                }
                b.write(batch).await.unwrap();
            }
            8 => {
                let key = partition_key(partition, rng.below(30));
                let value = format!("if absent {step}").into_bytes();
                let check = Check {
                    key: key.clone(),
                    expected: None,
                };
                let applied = b.write_if(&[check], put(&key, &value)).await.unwrap();
                assert_eq!(applied, !model.contains_key(&key), "step {step}");
                if applied {
                    model.insert(key, value);
                }
            }
            _ => {
                let key = partition_key(partition, rng.below(30));
                let value = format!("put {step}").into_bytes();
                b.write(put(&key, &value)).await.unwrap();
                model.insert(key, value);
            }
        }
    }
    let mut cleanup = WriteBatch::default();
    for key in model.keys() {
        cleanup.delete(key.clone());
    }
    b.write(cleanup).await.unwrap();
}

/// One writer bumps a counter in a partition while readers read the partition's range
/// over and over: every read must show at least the last value acknowledged before the
/// read began. A cached copy that outlived a write would show an older one.
async fn partition_reads_see_every_acknowledged_write(b: Arc<dyn Backend>) {
    const WRITES: u64 = 400;
    let prefix = b"live/".to_vec();
    let counter = b"live/counter".to_vec();
    let acknowledged = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let writer = {
        let (b, counter, acknowledged) =
            (Arc::clone(&b), counter.clone(), Arc::clone(&acknowledged));
        tokio::spawn(async move {
            for n in 1..=WRITES {
                let mut batch = put(&counter, &n.to_be_bytes());
                batch.put(format!("live/row{:03}", n % 50).into_bytes(), vec![1; 40]);
                b.write(batch).await.unwrap();
                acknowledged.store(n, std::sync::atomic::Ordering::SeqCst);
                // Leave readers time to read twice, so copies are made between writes.
                if n % 4 == 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                }
            }
        })
    };
    let mut readers = Vec::new();
    for _ in 0..3 {
        let (b, prefix, counter, acknowledged) = (
            Arc::clone(&b),
            prefix.clone(),
            counter.clone(),
            Arc::clone(&acknowledged),
        );
        readers.push(tokio::spawn(async move {
            let mut reads = 0u64;
            loop {
                let floor = acknowledged.load(std::sync::atomic::Ordering::SeqCst);
                let mut value = None;
                let range = KeyRange::prefix(&prefix);
                b.visit_partition(
                    &prefix,
                    &range,
                    Direction::Forward,
                    usize::MAX,
                    &mut |k, v| {
                        if k == counter.as_slice() {
                            value = Some(u64::from_be_bytes(v.try_into().unwrap()));
                        }
                        true
                    },
                )
                .await
                .unwrap();
                let seen = value.unwrap_or(0);
                assert!(seen >= floor, "read {seen} after {floor} was acknowledged");
                reads += 1;
                if floor == WRITES {
                    return reads;
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    writer.await.unwrap();
    for reader in readers {
        assert!(reader.await.unwrap() > 0);
    }
    let mut cleanup = WriteBatch::default();
    for (key, _) in everything(b.as_ref(), &prefix).await {
        cleanup.delete(key);
    }
    b.write(cleanup).await.unwrap();
}

/// Writers bump counters while readers get them by key over and over: every get must
/// show at least the value acknowledged before it began, and a deleted counter must
/// not come back. A cached row that outlived a write would show an older value.
async fn point_reads_see_every_acknowledged_write(b: Arc<dyn Backend>) {
    const WRITES: u64 = 300;
    const COUNTERS: u64 = 4;
    let counter = |c: u64| format!("point/counter{c}").into_bytes();
    let acknowledged: Arc<Vec<std::sync::atomic::AtomicU64>> =
        Arc::new((0..COUNTERS).map(|_| Default::default()).collect());
    // Set before the first delete: until then no counter may read as absent.
    let deleting = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (b, acknowledged, deleting) = (
            Arc::clone(&b),
            Arc::clone(&acknowledged),
            Arc::clone(&deleting),
        );
        tokio::spawn(async move {
            for n in 1..=WRITES {
                for c in 0..COUNTERS {
                    b.write(put(&counter(c), &n.to_be_bytes())).await.unwrap();
                    acknowledged[c as usize].store(n, std::sync::atomic::Ordering::SeqCst);
                }
                if n % 8 == 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                }
            }
            // The last word: every counter deleted.
            deleting.store(true, std::sync::atomic::Ordering::SeqCst);
            for c in 0..COUNTERS {
                b.write(delete(&counter(c))).await.unwrap();
                acknowledged[c as usize].store(u64::MAX, std::sync::atomic::Ordering::SeqCst);
            }
        })
    };
    let mut readers = Vec::new();
    for reader in 0..3u64 {
        let (b, acknowledged, deleting) = (
            Arc::clone(&b),
            Arc::clone(&acknowledged),
            Arc::clone(&deleting),
        );
        readers.push(tokio::spawn(async move {
            let mut reads = 0u64;
            let mut c = reader % COUNTERS;
            loop {
                let floor = acknowledged[c as usize].load(std::sync::atomic::Ordering::SeqCst);
                let value = b.get(&counter(c)).await.unwrap();
                let seen = value.map(|v| u64::from_be_bytes(v.try_into().unwrap()));
                match floor {
                    u64::MAX => assert_eq!(seen, None, "counter {c} came back after its delete"),
                    // A delete may have applied since the floor was read.
                    _ if seen.is_none() && deleting.load(std::sync::atomic::Ordering::SeqCst) => {}
                    floor => assert!(
                        seen.unwrap_or(0) >= floor,
                        "counter {c}: read {seen:?} after {floor} was acknowledged"
                    ),
                }
                reads += 1;
                if (0..COUNTERS).all(|c| {
                    acknowledged[c as usize].load(std::sync::atomic::Ordering::SeqCst) == u64::MAX
                }) {
                    return reads;
                }
                c = (c + 1) % COUNTERS;
                tokio::task::yield_now().await;
            }
        }));
    }
    writer.await.unwrap();
    for reader in readers {
        assert!(reader.await.unwrap() > 0);
    }
}

/// A batch of many puts in descending key order that puts one key twice: the later put
/// wins, as in any batch, however the backend stores a large batch.
async fn large_batch_with_a_repeated_key(b: &dyn Backend) {
    let mut batch = WriteBatch::default();
    batch.put(b"twice/10".to_vec(), b"first".to_vec());
    for n in (0..40).rev() {
        batch.put(format!("twice/{n:02}").into_bytes(), vec![n; 3]);
    }
    batch.put(b"twice/10".to_vec(), b"last".to_vec());
    b.write(batch).await.unwrap();
    let all = everything(b, b"twice/").await;
    assert_eq!(all.len(), 40);
    for (n, (key, value)) in (0u8..).zip(&all) {
        assert_eq!(key, &format!("twice/{n:02}").into_bytes());
        let want = if n == 10 {
            b"last".to_vec()
        } else {
            vec![n; 3]
        };
        assert_eq!(value, &want, "twice/{n:02}");
    }
    let mut cleanup = WriteBatch::default();
    for (key, _) in all {
        cleanup.delete(key);
    }
    b.write(cleanup).await.unwrap();
}

fn bulk_key(n: u64) -> Vec<u8> {
    format!("bulk/{n:04}").into_bytes()
}

/// A value of 0 to 40 bytes, or now and then 3 KB, so that some bulk batches are cut
/// by bytes rather than by count.
fn bulk_value(rng: &mut Rng, tag: u64) -> Vec<u8> {
    let len = if rng.below(20) == 0 {
        3000
    } else {
        rng.below(41) as usize
    };
    let mut value = tag.to_be_bytes().to_vec();
    value.resize(8 + len, (tag % 251) as u8);
    value
}

fn bulk_bound(rng: &mut Rng) -> Bound<Vec<u8>> {
    let key = match rng.below(6) {
        0 => b"bulk/".to_vec(),
        1 => format!("bulk/{:04}5", rng.below(1300)).into_bytes(),
        _ => bulk_key(rng.below(1300)),
    };
    match rng.below(5) {
        0 => Unbounded,
        1 | 2 => Included(key),
        _ => Excluded(key),
    }
}

/// Bulk batches (many new keys in order, what COPY writes and what a backend may store
/// compactly) over keys `bulk/0000` to `bulk/1299`, then random reads and changes of
/// them compared with a sorted map: single puts and deletes, deletes of several bulk
/// keys at once, conditional writes, more bulk batches into gaps (where keys already lie
/// around them) and into empty stretches, scans in both directions with every kind of
/// bound, and partition reads. Returns the model, which the backend now matches.
async fn bulk_loads_then_changes(
    b: &dyn Backend,
    seed: u64,
) -> std::collections::BTreeMap<Vec<u8>, Vec<u8>> {
    let mut model = std::collections::BTreeMap::<Vec<u8>, Vec<u8>>::new();
    let mut rng = Rng(seed);
    let mut unsynced = None;
    // Even keys of 0..1000 in batches of 100; the odd ones and 1000.. stay free.
    for start in (0..1000).step_by(200) {
        let mut batch = WriteBatch::default();
        let mut checks = Vec::new();
        for n in (start..start + 200).step_by(2) {
            let value = bulk_value(&mut rng, n);
            batch.put(bulk_key(n), value.clone());
            checks.push(Check {
                key: bulk_key(n),
                expected: None,
            });
            model.insert(bulk_key(n), value);
        }
        assert!(write_bulk(b, checks, batch, start % 400 == 0, &mut unsynced).await);
    }
    for step in 0..3000u64 {
        match rng.below(20) {
            0..=5 => {
                let range = KeyRange {
                    start: bulk_bound(&mut rng),
                    end: bulk_bound(&mut rng),
                };
                let range = KeyRange {
                    start: match range.start {
                        Unbounded => Included(b"bulk/".to_vec()),
                        bound => bound,
                    },
                    end: match range.end {
                        Unbounded => Excluded(b"bulk0".to_vec()),
                        bound => bound,
                    },
                };
                let direction = if rng.below(2) == 0 {
                    Direction::Forward
                } else {
                    Direction::Backward
                };
                let limit = [1, 5, 40, usize::MAX][rng.below(4) as usize];
                let expected = model_range(&model, &range, direction, limit);
                let scanned = b.scan(&range, direction, limit).await.unwrap();
                assert_eq!(
                    scanned, expected,
                    "step {step}: scan {range:?} {direction:?}"
                );
                let mut visited = Vec::new();
                b.visit_partition(b"bulk/", &range, direction, limit, &mut |k, v| {
                    visited.push((k.to_vec(), v.to_vec()));
                    true
                })
                .await
                .unwrap();
                assert_eq!(
                    visited, expected,
                    "step {step}: visit {range:?} {direction:?}"
                );
            }
            6..=8 => {
                let key = bulk_key(rng.below(1300));
                let got = b.get(&key).await.unwrap();
                assert_eq!(got.as_ref(), model.get(&key), "step {step}: get");
            }
            9 | 10 => {
                let key = bulk_key(rng.below(1300));
                let value = format!("put {step}").into_bytes();
                b.write(put(&key, &value)).await.unwrap();
                model.insert(key, value);
            }
            11 | 12 => {
                let key = bulk_key(rng.below(1300));
                b.write(delete(&key)).await.unwrap();
                model.remove(&key);
            }
            13 => {
                // Several deletes at once, often in one stretch, with a put among them.
                let from = rng.below(1300);
                let mut batch = WriteBatch::default();
                for n in from..(from + rng.below(70)).min(1300) {
                    if rng.below(3) > 0 {
                        batch.delete(bulk_key(n));
                        model.remove(&bulk_key(n));
                    }
                }
                let key = bulk_key(rng.below(1300));
                let value = format!("among deletes {step}").into_bytes();
                batch.put(key.clone(), value.clone());
                model.insert(key, value);
                b.write(batch).await.unwrap();
            }
            14 | 15 => {
                let key = bulk_key(rng.below(1300));
                let expected = if rng.below(2) == 0 {
                    None
                } else {
                    model.get(&key).cloned()
                };
                let value = format!("if {step}").into_bytes();
                let check = Check {
                    key: key.clone(),
                    expected: expected.clone(),
                };
                let applied = b.write_if(&[check], put(&key, &value)).await.unwrap();
                assert_eq!(applied, model.get(&key) == expected.as_ref(), "step {step}");
                if applied {
                    model.insert(key, value);
                }
            }
            _ => {
                // A bulk batch of new keys with absence checks, into a stretch that may be
                // empty or may hold keys; it applies only if none of its keys exists.
                let from = rng.below(1300);
                let to = (from + 16 + rng.below(60)).min(1300);
                let mut batch = WriteBatch::default();
                let mut checks = Vec::new();
                let mut added = Vec::new();
                for n in from..to {
                    let value = bulk_value(&mut rng, n + step);
                    batch.put(bulk_key(n), value.clone());
                    checks.push(Check {
                        key: bulk_key(n),
                        expected: None,
                    });
                    added.push((bulk_key(n), value));
                }
                let applied = write_bulk(b, checks, batch, rng.below(2) == 0, &mut unsynced).await;
                let free = added.iter().all(|(k, _)| !model.contains_key(k));
                assert_eq!(applied, free, "step {step}: bulk {from}..{to}");
                if applied {
                    model.extend(added);
                }
            }
        }
    }
    // As a bulk load ends: once this returns, every batch written unsynced is durable.
    if let Some(ticket) = unsynced {
        b.wait_durable(ticket).await.unwrap();
    }
    assert_eq!(
        everything(b, b"bulk/").await,
        model
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    );
    model
}

/// Writes a bulk batch as a waited write, or as a bulk load does (`write_if_unsynced`,
/// noting its ticket in `unsynced`); returns whether it applied.
async fn write_bulk(
    b: &dyn Backend,
    checks: Vec<Check>,
    batch: WriteBatch,
    as_bulk_load: bool,
    unsynced: &mut Option<SyncTicket>,
) -> bool {
    if !as_bulk_load {
        return b.write_if(&checks, batch).await.unwrap();
    }
    match b.write_if_unsynced(checks, batch).await.unwrap() {
        Some(ticket) => {
            *unsynced = Some(ticket);
            true
        }
        None => false,
    }
}

fn durable() -> SledOptions {
    SledOptions {
        durable: true,
        cache_capacity: 64 * 1024 * 1024,
        // Small, so the reopen tests cross several checkpoints.
        checkpoint_bytes: 4 * 1024,
    }
}

fn small_caches() -> CacheOptions {
    CacheOptions {
        // Room for about two of the partitions `partition_reads_follow_writes` uses,
        // so copies are also evicted.
        partition_cache_bytes: 2 * 1024,
        // About 4 KiB a shard, so rows are also evicted.
        row_cache_bytes: 256 * 1024,
    }
}

/// The durable sled backend in `dir` behind `small_caches()`, as the sled-only checks
/// below run it.
fn cached_sled(dir: &std::path::Path) -> Cached<SledBackend> {
    Cached::new(SledBackend::open(dir, durable()).unwrap(), small_caches())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_backend_conforms() {
    conformance(Arc::new(MemoryBackend::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cached_memory_backend_conforms() {
    conformance(Arc::new(Cached::new(MemoryBackend::new(), small_caches()))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn snapshotting_backend_conforms() {
    conformance(Arc::new(Snapshotting::new(Arc::new(MemoryBackend::new())))).await;
}

/// With a snapshot open every write takes the careful path, one at a time, keeping
/// what it overwrites: it must still behave as any backend does.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn snapshotting_backend_conforms_while_a_snapshot_is_open() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Snapshotting::new(Arc::new(cached_sled(dir.path()))));
    let snapshot = store.open_snapshot().await;
    conformance(Arc::clone(&store) as Arc<dyn Backend>).await;
    // The snapshot saw none of it.
    let all = KeyRange {
        start: Unbounded,
        end: Unbounded,
    };
    assert!(snapshot
        .scan(&all, Direction::Forward, usize::MAX)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sled_backend_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let backend = SledBackend::open(dir.path(), durable()).unwrap();
    conformance(Arc::new(backend)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cached_sled_backend_conforms() {
    let dir = tempfile::tempdir().unwrap();
    conformance(Arc::new(cached_sled(dir.path()))).await;
}

/// `row_cache_mb = 0`: point reads go straight to sled.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cached_sled_backend_conforms_without_row_cache() {
    let dir = tempfile::tempdir().unwrap();
    let options = CacheOptions {
        row_cache_bytes: 0,
        ..small_caches()
    };
    let sled = SledBackend::open(dir.path(), durable()).unwrap();
    conformance(Arc::new(Cached::new(sled, options))).await;
}

/// Log files in the write-ahead log directory.
fn log_files(data_dir: &std::path::Path) -> usize {
    std::fs::read_dir(data_dir.join("wal")).unwrap().count()
}

/// Checkpoints delete the log files sled no longer needs (off the sync thread), so the
/// log stays a file or two long however much is written, and `close` leaves one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_checkpoints_delete_the_log_files_they_cover() {
    let dir = tempfile::tempdir().unwrap();
    let b = cached_sled(dir.path());
    // About 60 records of over 100 bytes: checkpoints every 4 KiB of log.
    for i in 0..600u32 {
        b.write(put(format!("k{i:05}").as_bytes(), &[7u8; 100]))
            .await
            .unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while log_files(dir.path()) > 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "{} log files left after the checkpoints",
            log_files(dir.path())
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    b.inner().close().unwrap();
    drop(b);
    assert_eq!(
        log_files(dir.path()),
        1,
        "close leaves only the fresh log file"
    );
    let b = cached_sled(dir.path());
    assert_eq!(b.get(b"k00599").await.unwrap(), Some(vec![7u8; 100]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_data_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut expected = std::collections::BTreeMap::new();
    {
        let b = cached_sled(dir.path());
        for chunk in 0..10u32 {
            let mut batch = WriteBatch::default();
            for i in 0..100u32 {
                let key = format!("k{:05}", chunk * 100 + i).into_bytes();
                let value = format!("v{chunk}-{i}").into_bytes();
                batch.put(key.clone(), value.clone());
                expected.insert(key, value);
            }
            b.write(batch).await.unwrap();
        }
        // Deletes and overwrites must survive as well.
        for i in (0..1000u32).step_by(7) {
            let key = format!("k{i:05}").into_bytes();
            b.write(delete(&key)).await.unwrap();
            expected.remove(&key);
        }
        for i in (0..1000u32).step_by(11) {
            let key = format!("k{i:05}").into_bytes();
            b.write(put(&key, b"overwritten")).await.unwrap();
            expected.insert(key, b"overwritten".to_vec());
        }
        assert!(b
            .compare_and_swap(b"k00001", Some(b"v0-1".to_vec()), Some(b"cas".to_vec()))
            .await
            .unwrap());
        expected.insert(b"k00001".to_vec(), b"cas".to_vec());
    }
    for round in 0..2 {
        let b = cached_sled(dir.path());
        let all = b
            .scan(&KeyRange::prefix(b""), Direction::Forward, usize::MAX)
            .await
            .unwrap();
        let got: std::collections::BTreeMap<_, _> = all.into_iter().collect();
        assert_eq!(got, expected, "after reopen #{round}");
        assert!(b.inner().size_on_disk() > 0);
    }
}

/// Bulk-loaded data, changed afterwards, comes back the same after a reopen that
/// replays the log (a drop without close) and after a clean one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_bulk_loads_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let expected = {
        let b = cached_sled(dir.path());
        let model = bulk_loads_then_changes(&b, 0x9E37_79B9_7F4A_7C15).await;
        assert!(b.inner().packs() > 0, "the bulk batches were stored packed");
        model
    };
    for round in 0..2 {
        let b = cached_sled(dir.path());
        let got: std::collections::BTreeMap<_, _> =
            everything(&b, b"bulk/").await.into_iter().collect();
        assert_eq!(got, expected, "after reopen #{round}");
        if round == 1 {
            b.inner().close().unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_large_value_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let big: Vec<u8> = (0..2 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    {
        let b = cached_sled(dir.path());
        b.write(put(b"big", &big)).await.unwrap();
        b.write(put(b"small", b"s")).await.unwrap();
        assert_eq!(
            b.get(b"big").await.unwrap().as_deref(),
            Some(big.as_slice())
        );
    }
    // sled keeps values this large in separate blob files.
    assert!(dir
        .path()
        .join("blobs")
        .read_dir()
        .unwrap()
        .next()
        .is_some());
    let b = cached_sled(dir.path());
    let back = b.get(b"big").await.unwrap().unwrap();
    assert_eq!(back.len(), big.len());
    assert!(back == big, "the 2 MB value came back changed");
    assert_eq!(b.get(b"small").await.unwrap(), Some(b"s".to_vec()));
}

/// Point gets of packed keys stay right while the packs they were found in are
/// rewritten (a delete inside one), re-keyed (a delete of a pack's last key), removed,
/// and replaced by packs with other bounds. The sled backend remembers where the packs
/// it read were (`storage/sled/pack_hints.rs`) and must notice when that no longer
/// holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_point_gets_follow_packs_as_they_change() {
    let dir = tempfile::tempdir().unwrap();
    let b = cached_sled(dir.path());
    let mut model = std::collections::BTreeMap::<Vec<u8>, Vec<u8>>::new();
    async fn all_gets_match(
        b: &Cached<SledBackend>,
        model: &std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
        when: &str,
    ) {
        for n in 0..120 {
            let key = bulk_key(n);
            let got = b.get(&key).await.unwrap();
            assert_eq!(got.as_ref(), model.get(&key), "{when}: get of key {n}");
        }
    }

    // Two packs of 32: keys 0..=31 and 32..=63.
    load_vacant(&b, &mut model, 0..64, round_value(1)).await;
    assert_eq!(b.inner().packs(), 2, "the batch was stored as two packs");
    all_gets_match(&b, &model, "after the load").await;

    b.write(delete(&bulk_key(10))).await.unwrap();
    model.remove(&bulk_key(10));
    all_gets_match(&b, &model, "after a delete inside the first pack").await;

    b.write(delete(&bulk_key(31))).await.unwrap();
    model.remove(&bulk_key(31));
    all_gets_match(&b, &model, "after a delete of the first pack's last key").await;

    delete_all(&b, &mut model, 32..64).await;
    all_gets_match(&b, &model, "after the second pack was deleted").await;

    // New packs over the second one's old stretch and past it, with other bounds.
    load_vacant(&b, &mut model, 40..104, round_value(2)).await;
    all_gets_match(&b, &model, "after a second load with other bounds").await;

    // A new pack in a gap below a pack already found: a key in it must not be looked
    // for in the one above (read first, before any other read finds the new pack).
    delete_all(&b, &mut model, 40..73).await;
    all_gets_match(
        &b,
        &model,
        "after the first pack of the second load was deleted",
    )
    .await;
    load_vacant(&b, &mut model, 44..60, round_value(3)).await;
    assert_eq!(
        b.get(&bulk_key(50)).await.unwrap().as_ref(),
        model.get(&bulk_key(50)),
        "a key of a pack loaded into a gap"
    );
    all_gets_match(&b, &model, "after a load into a gap").await;
}

/// Values of 1 to 5 bytes, each byte `round`: tells the loads over one stretch apart.
fn round_value(round: u8) -> impl Fn(u64) -> Vec<u8> {
    move |n| vec![round; 1 + (n % 5) as usize]
}

/// Deletes `keys` in one batch, and from `model`.
async fn delete_all(
    b: &Cached<SledBackend>,
    model: &mut std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
    keys: std::ops::Range<u64>,
) {
    let mut batch = WriteBatch::default();
    for n in keys {
        batch.delete(bulk_key(n));
        model.remove(&bulk_key(n));
    }
    b.write(batch).await.unwrap();
}

/// A value that names its key's number.
fn described(n: u64) -> Vec<u8> {
    format!("value of {n}").into_bytes()
}

/// Puts `keys` in one checked batch, which the sled backend stores packed when the
/// stretch is vacant, and records them in `model`.
async fn load_vacant(
    b: &Cached<SledBackend>,
    model: &mut std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
    keys: std::ops::Range<u64>,
    value_of: impl Fn(u64) -> Vec<u8>,
) {
    let mut batch = WriteBatch::default();
    let mut checks = Vec::new();
    for n in keys {
        let value = value_of(n);
        batch.put(bulk_key(n), value.clone());
        checks.push(Check {
            key: bulk_key(n),
            expected: None,
        });
        model.insert(bulk_key(n), value);
    }
    assert!(b.write_if(&checks, batch).await.unwrap());
}

/// Packs are looked for only in the key spans of the batches stored packed
/// (`storage/sled/pack_spans.rs`): separate batches keep separate spans, a batch over a
/// span whose packs were deleted merges with it, and the spans come back after a reopen
/// that replays the log and after a clean one. Every key reads as written throughout,
/// also the ones between spans and in the stretch a merged span took over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_packs_are_found_through_the_spans_of_packed_batches() {
    let dir = tempfile::tempdir().unwrap();
    let mut model = std::collections::BTreeMap::<Vec<u8>, Vec<u8>>::new();
    async fn all_gets_match(
        b: &Cached<SledBackend>,
        model: &std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
        when: &str,
    ) {
        for n in (0..1200).step_by(7).chain([63, 64, 999, 1000, 1063, 1064]) {
            let key = bulk_key(n);
            let got = b.get(&key).await.unwrap();
            assert_eq!(got.as_ref(), model.get(&key), "{when}: get of key {n}");
        }
        let all: std::collections::BTreeMap<_, _> =
            everything(b, b"bulk/").await.into_iter().collect();
        assert_eq!(&all, model, "{when}: a scan of every key");
    }
    {
        let b = cached_sled(dir.path());
        load_vacant(&b, &mut model, 0..64, described).await;
        load_vacant(&b, &mut model, 1000..1064, described).await;
        assert_eq!(b.inner().packs(), 4);
        assert_eq!(b.inner().pack_spans(), 2, "one span per packed batch");
        b.write(put(&bulk_key(500), b"loose")).await.unwrap();
        model.insert(bulk_key(500), b"loose".to_vec());
        all_gets_match(&b, &model, "after two loads and a loose key between").await;

        delete_all(&b, &mut model, 1000..1064).await;
        load_vacant(&b, &mut model, 700..1030, described).await;
        assert_eq!(
            b.inner().pack_spans(),
            2,
            "the load over the emptied span's stretch merged with it"
        );
        all_gets_match(&b, &model, "after a load over an emptied span").await;
    }
    for round in 0..2 {
        let b = cached_sled(dir.path());
        assert_eq!(b.inner().pack_spans(), 2, "after reopen #{round}");
        all_gets_match(&b, &model, &format!("after reopen #{round}")).await;
        if round == 0 {
            b.inner().close().unwrap();
        }
    }
}

/// `cached_sled` with a row cache large enough to take the read-around's guesses.
fn cached_sled_with_roomy_row_cache(dir: &std::path::Path) -> Cached<SledBackend> {
    let caches = CacheOptions {
        row_cache_bytes: 64 * 1024 * 1024,
        ..small_caches()
    };
    Cached::new(SledBackend::open(dir, durable()).unwrap(), caches)
}

/// Read-around (`storage/cached/read_around.rs`): a point read served from a pack caches
/// the pack's other rows, except a row whose packed copy a later loose write shadows and
/// a row deleted from the pack; those read as written, as does every other key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_a_packed_read_caches_its_pack_but_no_shadowed_or_deleted_copy() {
    let dir = tempfile::tempdir().unwrap();
    let b = cached_sled_with_roomy_row_cache(dir.path());
    let mut model = std::collections::BTreeMap::<Vec<u8>, Vec<u8>>::new();
    // Two packs of 32: keys 0..=31 and 32..=63.
    load_vacant(&b, &mut model, 0..64, described).await;
    b.write(put(&bulk_key(5), b"newer, loose")).await.unwrap();
    model.insert(bulk_key(5), b"newer, loose".to_vec());
    b.write(delete(&bulk_key(7))).await.unwrap();
    model.remove(&bulk_key(7));
    assert_eq!(b.cached_rows(), 0);

    assert_eq!(b.get(&bulk_key(3)).await.unwrap(), Some(described(3)));
    // Key 3 and its 29 neighbours: not key 5 (shadowed) or key 7 (deleted).
    assert_eq!(b.cached_rows(), 30);
    for n in 0..64 {
        let key = bulk_key(n);
        assert_eq!(
            b.get(&key).await.unwrap().as_ref(),
            model.get(&key),
            "key {n}"
        );
    }
    // The reads of 5 (loose) and of 32..63 (a pack: read-around again) cached the rest.
    assert_eq!(b.cached_rows(), 63);
}

/// Read-arounds racing writes: rounds of a fresh load of 256 keys (8 packs), then every
/// key rewritten (stored loose) or, one in four, deleted (its pack rewritten) once, in
/// random order, while three readers read random keys of the round. A reader never sees
/// a version older than one acknowledged before its read, nor a deleted row.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sled_read_around_never_serves_a_row_older_than_an_acknowledged_write() {
    const ROUNDS: u64 = 30;
    const KEYS: u64 = 256;
    const DELETED: u8 = 2;
    let dir = tempfile::tempdir().unwrap();
    let b = Arc::new(cached_sled_with_roomy_row_cache(dir.path()));
    let version = |v: &[u8]| v[0];
    for round in 0..ROUNDS {
        let base = 2000 + round * KEYS;
        let mut model = std::collections::BTreeMap::new();
        load_vacant(&b, &mut model, base..base + KEYS, |_| vec![0u8]).await;
        let acknowledged: Arc<Vec<std::sync::atomic::AtomicU8>> =
            Arc::new((0..KEYS).map(|_| Default::default()).collect());
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (b, acknowledged, done) =
                (Arc::clone(&b), Arc::clone(&acknowledged), Arc::clone(&done));
            tokio::spawn(async move {
                let mut rng = Rng(round + 1);
                let mut order: Vec<u64> = (0..KEYS).collect();
                for i in (1..order.len()).rev() {
                    order.swap(i, rng.below(i as u64 + 1) as usize);
                }
                for k in order {
                    let (write, written) = if k % 4 == 0 {
                        (delete(&bulk_key(base + k)), DELETED)
                    } else {
                        (put(&bulk_key(base + k), &[1]), 1)
                    };
                    b.write(write).await.unwrap();
                    acknowledged[k as usize].store(written, std::sync::atomic::Ordering::SeqCst);
                }
                done.store(true, std::sync::atomic::Ordering::SeqCst);
            })
        };
        let mut readers = Vec::new();
        for reader in 0..3u64 {
            let (b, acknowledged, done) =
                (Arc::clone(&b), Arc::clone(&acknowledged), Arc::clone(&done));
            readers.push(tokio::spawn(async move {
                let mut rng = Rng(round * 7 + reader + 100);
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    let k = rng.below(KEYS);
                    let floor = acknowledged[k as usize].load(std::sync::atomic::Ordering::SeqCst);
                    let value = b.get(&bulk_key(base + k)).await.unwrap();
                    match value {
                        // Deleted: acknowledged or under way.
                        None => assert_eq!(k % 4, 0, "round {round}, key {k} vanished"),
                        Some(value) => assert!(
                            floor != DELETED && version(&value) >= floor,
                            "round {round}, key {k}: read version {} after {floor} was acknowledged",
                            version(&value)
                        ),
                    }
                    tokio::task::yield_now().await;
                }
            }));
        }
        writer.await.unwrap();
        for reader in readers {
            reader.await.unwrap();
        }
        for k in 0..KEYS {
            let value = b.get(&bulk_key(base + k)).await.unwrap();
            let expected = (k % 4 != 0).then(|| vec![1u8]);
            assert_eq!(value, expected, "round {round}, key {k} after the round");
        }
    }
}
