//! Table Store's primary-key advice applied to a table's real data and load: a
//! partition key holding more than the advised size, a partition key taking most of
//! the recent load (a hot spot), and new rows going to the end of the partition-key
//! order (a sequential key), each with the numbers that show it and the remedy Table
//! Store's documents give (docs/table-store.md §9.2).

use super::catalog::TableMeta;
use super::partition_load::{KeyLoad, LoadSnapshot};
use super::partition_sizes::PartitionSizes;

/// Table Store's advised most data under one partition key.
pub const DEFAULT_PARTITION_SIZE_ADVICE: u64 = 1 << 30;

/// The least CUs of one kind (reads or writes) in the window before their spread says
/// anything: a handful of statements is no hot spot.
pub const HOT_MIN_CU: u64 = 100;

/// The share of the window's reads or writes one partition key must take to be hot.
pub const HOT_SHARE: f64 = 0.5;

/// The least row writes in the window before their order says anything.
pub const SEQUENTIAL_MIN_WRITES: u64 = 100;

/// The share of row writes past the greatest partition key that makes a key sequential.
pub const SEQUENTIAL_SHARE: f64 = 0.5;

/// What kind of advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdviceKind {
    LargePartition,
    HotPartition,
    SequentialKey,
}

impl AdviceKind {
    pub fn name(self) -> &'static str {
        match self {
            AdviceKind::LargePartition => "large partition key",
            AdviceKind::HotPartition => "hot partition key",
            AdviceKind::SequentialKey => "sequential partition key",
        }
    }
}

/// One piece of advice for a table.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub kind: AdviceKind,
    /// The partition key it is about (encoded), when it is about one.
    pub partition_key: Option<Vec<u8>>,
    pub evidence: String,
    pub remedy: String,
}

/// What the rules look at for one table.
pub struct TableEvidence<'a> {
    pub table: &'a TableMeta,
    pub sizes: &'a PartitionSizes,
    pub load: &'a LoadSnapshot,
    /// Bytes above which a partition key is too large.
    pub size_advice: u64,
    /// A partition key as users read it (`'a100'`, `200001`).
    pub key_text: &'a dyn Fn(&[u8]) -> String,
    /// An instant (ms since the Unix epoch) as users read it.
    pub time_text: &'a dyn Fn(i64) -> String,
}

/// Every piece of advice the table's data and load call for.
pub fn advise(evidence: &TableEvidence<'_>) -> Vec<Advice> {
    let mut advice = large_partitions(evidence);
    advice.extend(hot_partition(evidence, "write", |l| l.write_cu));
    advice.extend(hot_partition(evidence, "read", |l| l.read_cu));
    advice.extend(sequential_key(evidence));
    advice
}

fn large_partitions(evidence: &TableEvidence<'_>) -> Vec<Advice> {
    let sizes = evidence.sizes;
    sizes
        .largest
        .iter()
        .filter(|p| p.bytes > evidence.size_advice)
        .map(|p| Advice {
            kind: AdviceKind::LargePartition,
            partition_key: Some(p.partition_key.clone()),
            evidence: format!(
                "partition key {} holds {} in {} rows ({:.0}% of the table's {}), over the \
                 advised {} (pgwide.partition_size_advice); data under one partition key \
                 cannot be split over partitions",
                (evidence.key_text)(&p.partition_key),
                bytes_text(p.bytes),
                p.rows,
                percent(p.bytes, sizes.bytes),
                bytes_text(sizes.bytes),
                bytes_text(evidence.size_advice),
            ),
            remedy: splice_remedy(evidence.table),
        })
        .collect()
}

fn hot_partition(
    evidence: &TableEvidence<'_>,
    what: &str,
    of: impl Fn(&KeyLoad) -> u64,
) -> Option<Advice> {
    let load = evidence.load;
    let total = of(&load.total);
    if total < HOT_MIN_CU {
        return None;
    }
    let (key, busiest) = load.keys.iter().max_by_key(|(_, l)| of(l))?;
    let taken = of(busiest);
    if (taken as f64) < HOT_SHARE * total as f64 {
        return None;
    }
    let touched = load.keys.iter().filter(|(_, l)| of(l) > 0).count();
    Some(Advice {
        kind: AdviceKind::HotPartition,
        partition_key: Some(key.clone()),
        evidence: format!(
            "partition key {} took {taken} of the table's {total} {what} CU ({:.0}%) since {}, \
             the other {} partition keys {what} the rest; one partition key is served by one \
             partition, which cannot be split",
            (evidence.key_text)(key),
            percent(taken, total),
            (evidence.time_text)(load.since_ms),
            touched.saturating_sub(1),
        ),
        remedy: format!(
            "Choose a partition key whose values share the load evenly (Table Store's \
             advice: a purchase-records table keyed by card or terminal id rather than by \
             seller), or {}",
            lowercase_first(&splice_remedy(evidence.table)),
        ),
    })
}

fn sequential_key(evidence: &TableEvidence<'_>) -> Option<Advice> {
    let load = evidence.load;
    let writes = load.total.row_writes;
    if writes < SEQUENTIAL_MIN_WRITES
        || (load.writes_past_end as f64) < SEQUENTIAL_SHARE * writes as f64
    {
        return None;
    }
    let table = evidence.table;
    let column = table.pk.first().map_or("", |c| c.name.as_str());
    let remedy = if table.auto_rowid {
        "The table has no primary key, so its rows are keyed by a hidden sequential row \
         id: declare a primary key whose first column spreads new rows (a card or device \
         id, or a short hash prefix spliced before a sequential number)."
            .to_string()
    } else {
        format!(
            "Put a hash prefix in front of the key: a text partition key of the first few \
             hex digits of a hash of {column} followed by {column} itself \
             (left(md5({column}::text), 4) || {column}: 200001 becomes 'ee8f200001'), \
             which spreads new rows over every partition; compute the same prefix to read \
             a row back. Reads of a range of consecutive {column} values become reads of \
             single keys."
        )
    };
    Some(Advice {
        kind: AdviceKind::SequentialKey,
        partition_key: None,
        evidence: format!(
            "{} of {writes} row writes ({:.0}%) since {} stored a partition key ({}) \
             greater than any before: new rows all go to the last partition, while the \
             others take no writes",
            load.writes_past_end,
            percent(load.writes_past_end, writes),
            (evidence.time_text)(load.since_ms),
            if table.auto_rowid { "_rowid" } else { column },
        ),
        remedy,
    })
}

/// Table Store's remedy for too much under one partition key: splice more key columns
/// into it.
fn splice_remedy(table: &TableMeta) -> String {
    let names: Vec<&str> = table.pk.iter().map(|c| c.name.as_str()).collect();
    let spliced = match names.as_slice() {
        [first, rest @ ..] if !rest.is_empty() && !table.auto_rowid => format!(
            "Splice {first} with the next key columns ({}) into one text partition key",
            rest.join(", ")
        ),
        _ => "Splice the partition key with a column that tells its rows apart into one \
              text partition key"
            .to_string(),
    };
    format!(
        "{spliced}, so its rows spread over many partition keys: pad integers with zeros \
         to a fixed width and join with a connector that sorts below every character the \
         values use (',' below letters and digits), so rows keep their order: \
         (54, 'a100', 6777) becomes '000054,a100,6777'."
    )
}

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    part as f64 * 100.0 / whole as f64
}

/// Bytes as PostgreSQL's `pg_size_pretty` shows them.
pub fn bytes_text(bytes: u64) -> String {
    let mut size = bytes as f64;
    for unit in ["bytes", "kB", "MB", "GB"] {
        if size < 10.0 * 1024.0 - 0.5 {
            return format!("{} {unit}", size.round());
        }
        size /= 1024.0;
    }
    format!("{} TB", size.round())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::partition_sizes::PartitionSize;
    use crate::engine::{PkColumn, PkType, TableMeta};

    fn table(pk: &[&str]) -> TableMeta {
        TableMeta {
            id: 7,
            instance: "i".into(),
            name: "purchases".into(),
            pk: pk
                .iter()
                .map(|name| PkColumn {
                    name: name.to_string(),
                    ty: PkType::Integer,
                })
                .collect(),
            columns: Vec::new(),
            options: Default::default(),
            auto_rowid: false,
            pk_name: None,
            created_ms: 0,
            column_order: Vec::new(),
            declared: Default::default(),
            generated: Default::default(),
            defaults: Default::default(),
            indexes: Vec::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            comment: None,
        }
    }

    fn advice_for(table: &TableMeta, sizes: &PartitionSizes, load: &LoadSnapshot) -> Vec<Advice> {
        let key_text = |key: &[u8]| format!("{key:?}");
        let time_text = |ms: i64| ms.to_string();
        advise(&TableEvidence {
            table,
            sizes,
            load,
            size_advice: 1000,
            key_text: &key_text,
            time_text: &time_text,
        })
    }

    fn write_load(cu: u64) -> KeyLoad {
        KeyLoad {
            read_cu: 0,
            write_cu: cu,
            row_writes: cu,
        }
    }

    #[test]
    fn an_even_table_gets_no_advice() {
        let load = LoadSnapshot {
            total: write_load(1000),
            writes_past_end: 10,
            keys: (0..100u8).map(|k| (vec![k], write_load(10))).collect(),
            ..LoadSnapshot::default()
        };
        let sizes = PartitionSizes {
            largest: vec![PartitionSize {
                partition_key: vec![1],
                rows: 10,
                bytes: 1000,
            }],
            ..PartitionSizes::default()
        };
        assert_eq!(advice_for(&table(&["card_id"]), &sizes, &load), vec![]);
    }

    #[test]
    fn names_a_hot_key_a_sequential_key_and_a_large_one() {
        let mut keys = vec![(vec![7], write_load(900))];
        keys.extend((0..100u8).map(|k| (vec![k, 0], write_load(1))));
        let load = LoadSnapshot {
            total: write_load(1000),
            writes_past_end: 800,
            keys,
            ..LoadSnapshot::default()
        };
        let sizes = PartitionSizes {
            bytes: 5000,
            largest: vec![PartitionSize {
                partition_key: vec![7],
                rows: 30,
                bytes: 2048,
            }],
            ..PartitionSizes::default()
        };
        let advice = advice_for(&table(&["seller_id", "order_no"]), &sizes, &load);
        let kinds: Vec<_> = advice.iter().map(|a| a.kind).collect();
        assert_eq!(
            kinds,
            [
                AdviceKind::LargePartition,
                AdviceKind::HotPartition,
                AdviceKind::SequentialKey
            ]
        );
        assert!(advice[0].evidence.contains("2048 bytes in 30 rows (41%"));
        assert!(advice[0]
            .remedy
            .contains("Splice seller_id with the next key columns (order_no)"));
        assert!(advice[1]
            .evidence
            .contains("took 900 of the table's 1000 write CU (90%)"));
        assert!(advice[2].evidence.contains("800 of 1000 row writes (80%)"));
        assert!(advice[2].remedy.contains("hash prefix"));
    }

    #[test]
    fn sizes_read_like_pg_size_pretty() {
        assert_eq!(bytes_text(0), "0 bytes");
        assert_eq!(bytes_text(10239), "10239 bytes");
        assert_eq!(bytes_text(10240), "10 kB");
        assert_eq!(bytes_text(1 << 30), "1024 MB");
        assert_eq!(bytes_text(20 << 30), "20 GB");
    }
}
