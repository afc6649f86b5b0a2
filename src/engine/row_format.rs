//! The stored form of one row: a single backend value under the row's key holding the
//! row marker and every cell version, so a point read is one `get`, a range scan reads
//! one entry per row, and a write replaces one value.
//!
//! ```text
//! row     := FORMAT:u8  revision:u64  last_write_ms:i64  columns:varint  column*
//! column  := name_len:varint  name  versions:varint  (version:i64  value)*
//! value   := tag:u8  ( String | Binary: len:varint bytes
//!                    | Integer | Double: 8 bytes | Boolean: 1 byte )
//! ```
//!
//! Columns ascend by name and versions descend within a column, the order reads use.
//! Fixed-width numbers are big-endian; varints are LEB128 and must be minimal. The
//! encoding is canonical: decoding then encoding gives back the same bytes, so a writer
//! can check "unchanged since read" by comparing against the re-encoded row.
//!
//! Packing trades write amplification for reads: a write rewrites the whole row, so a
//! row with very many versions costs more to update than one with few. Table Store rows
//! are small (at most 1024 columns written at once, values up to 2 MB), and Max Versions
//! and GC bound the versions kept.

use super::error::{EngineError, EngineResult};
use super::stored::StoredCell;
use super::types::{Value, ValueRef};

/// The first byte of every row value; a different layout gets a different byte.
const FORMAT: u8 = 0x01;

const VALUE_STRING: u8 = 1;
const VALUE_INTEGER: u8 = 2;
const VALUE_DOUBLE: u8 = 3;
const VALUE_BOOLEAN: u8 = 4;
const VALUE_BINARY: u8 = 5;

/// The row marker: a revision bumped by every write, and the time of the last write,
/// which keeps a row without attributes alive under a TTL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowMarker {
    pub revision: u64,
    pub last_write_ms: i64,
}

/// Encodes a row's marker and cells. `cells` must be in stored order: column ascending,
/// newest version first.
pub fn encode_row(marker: &RowMarker, cells: &[StoredCell]) -> Vec<u8> {
    let payload: usize = cells
        .iter()
        .map(|c| 8 + 6 + c.value.size() + c.column.len() / 2)
        .sum();
    let groups = column_groups(cells);
    let mut out = start_row(marker, groups.len(), payload);
    for group in groups {
        put_column(&mut out, &group[0].column, group.len());
        for cell in group {
            put_version(&mut out, cell.version, &cell.value);
        }
    }
    out
}

/// Encodes a row whose columns hold one version each, given as (column, version, value)
/// in ascending column order: the bytes `encode_row` writes for those cells, without
/// building them first. A bulk load's new rows are encoded this way.
pub fn encode_single_versions(marker: &RowMarker, cells: &[(&str, i64, &Value)]) -> Vec<u8> {
    let payload: usize = cells
        .iter()
        .map(|(column, _, value)| 8 + 6 + value.size() + column.len())
        .sum();
    let mut out = start_row(marker, cells.len(), payload);
    for (column, version, value) in cells {
        put_column(&mut out, column, 1);
        put_version(&mut out, *version, value);
    }
    out
}

/// A row value's header: format, marker and column count.
fn start_row(marker: &RowMarker, columns: usize, payload: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(24 + payload);
    out.push(FORMAT);
    out.extend_from_slice(&marker.revision.to_be_bytes());
    out.extend_from_slice(&marker.last_write_ms.to_be_bytes());
    put_varint(&mut out, columns as u64);
    out
}

fn put_column(out: &mut Vec<u8>, name: &str, versions: usize) {
    put_varint(out, name.len() as u64);
    out.extend_from_slice(name.as_bytes());
    put_varint(out, versions as u64);
}

fn put_version(out: &mut Vec<u8>, version: i64, value: &Value) {
    out.extend_from_slice(&version.to_be_bytes());
    put_value(out, value);
}

/// What a projected decode (`decode_columns`) left out: the newest and the oldest
/// version among the columns it skipped, which is all a read needs of them to tell
/// whether the row exists (under a TTL, or as of a time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Skipped {
    pub newest: Option<i64>,
    pub oldest: Option<i64>,
    /// The most versions any skipped column has.
    pub most_versions: usize,
}

/// Which versions of a kept column a projected decode returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptVersions {
    All,
    /// Only the newest, for a read of each column's newest visible value. Versions
    /// descend and expiry is monotonic, so an older version is never visible where the
    /// newest is not, and where the newest is, it hides the older ones. Until GC removes
    /// them, every UPDATE leaves such older versions behind.
    Newest,
}

/// Decodes a row value into its marker and cells (in stored order).
pub fn decode_row(bytes: &[u8]) -> EngineResult<(RowMarker, Vec<StoredCell>)> {
    let (marker, cells, _) = decode_columns(bytes, |_| true, KeptVersions::All)?;
    Ok((marker, cells))
}

/// Decodes the marker and the cells of the columns `keep` accepts (all their versions,
/// or the newest). The rest is stepped over without allocating (still bounds-checked),
/// which is most of the cost of a read that wants a few columns of a wide row.
pub fn decode_columns(
    bytes: &[u8],
    keep: impl FnMut(&[u8]) -> bool,
    kept_versions: KeptVersions,
) -> EngineResult<(RowMarker, Vec<StoredCell>, Skipped)> {
    // Sized by the row's column count (read here and again by `visit_columns`: 17
    // bytes and a varint), so a read of a few columns allocates the vector once.
    let (_, columns) = Reader { bytes, at: 0 }.header()?;
    let mut cells = Vec::with_capacity(columns);
    let (marker, skipped) = visit_columns(bytes, keep, kept_versions, |column, version, value| {
        cells.push(StoredCell {
            column: column.to_owned(),
            version,
            value: value.to_value(),
        })
    })?;
    Ok((marker, cells, skipped))
}

/// [`decode_columns`] lending each kept cell to `cell` (in stored order) as it is
/// decoded, borrowed from `bytes`, instead of collecting owned cells.
pub fn visit_columns<'a>(
    bytes: &'a [u8],
    keep: impl FnMut(&[u8]) -> bool,
    kept_versions: KeptVersions,
    cell: impl FnMut(&'a str, i64, ValueRef<'a>),
) -> EngineResult<(RowMarker, Skipped)> {
    visit_columns_through(bytes, keep, kept_versions, None, cell)
}

/// [`visit_columns`] that, given `through`, stops at the first column whose name sorts
/// after it: the rest of the row is neither read nor checked, and `Skipped` covers only
/// the columns before. Columns ascend by name, so a read that needs nothing of the
/// columns it does not keep (no TTL to check them against) passes `through` = its
/// greatest wanted name and steps over the rest of the row for free.
pub fn visit_columns_through<'a>(
    bytes: &'a [u8],
    mut keep: impl FnMut(&[u8]) -> bool,
    kept_versions: KeptVersions,
    through: Option<&[u8]>,
    mut cell: impl FnMut(&'a str, i64, ValueRef<'a>),
) -> EngineResult<(RowMarker, Skipped)> {
    let mut input = Reader { bytes, at: 0 };
    let (marker, columns) = input.header()?;
    let mut skipped = Skipped::default();
    let mut previous: Option<&[u8]> = None;
    for _ in 0..columns {
        let len = input.count()?;
        let name = input.take(len)?;
        if previous.is_some_and(|p| !ascending(p, name)) {
            return Err(corrupt("columns out of order"));
        }
        if through.is_some_and(|last| ascending(last, name)) {
            return Ok((marker, skipped));
        }
        previous = Some(name);
        let versions = input.count()?;
        if versions == 0 {
            return Err(corrupt("column without versions"));
        }
        // Only a kept name is handed out as a str, so only a kept name needs checking.
        let wanted = match keep(name) {
            true => {
                Some(std::str::from_utf8(name).map_err(|_| corrupt("column name is not UTF-8"))?)
            }
            false => None,
        };
        if wanted.is_none() {
            skipped.most_versions = skipped.most_versions.max(versions);
        }
        let mut newer: Option<i64> = None;
        for _ in 0..versions {
            let version = i64::from_be_bytes(input.fixed()?);
            if newer.is_some_and(|n| n <= version) {
                return Err(corrupt("versions out of order"));
            }
            let newest = newer.is_none();
            newer = Some(version);
            match wanted {
                Some(name) if newest || kept_versions == KeptVersions::All => {
                    cell(name, version, input.value()?)
                }
                // An older version of a kept column, with `KeptVersions::Newest`.
                Some(_) => input.skip_value()?,
                None => {
                    input.skip_value()?;
                    skipped.newest = skipped.newest.max(Some(version));
                    skipped.oldest = Some(skipped.oldest.map_or(version, |o| o.min(version)));
                }
            }
        }
    }
    if input.at != bytes.len() {
        return Err(corrupt("trailing bytes after the row"));
    }
    Ok((marker, skipped))
}

/// Whether column name `next` sorts after `previous`. Names in a row usually differ in
/// their first byte, which decides without a call to memcmp: this runs for every
/// column of every row a scan reads.
fn ascending(previous: &[u8], next: &[u8]) -> bool {
    match (previous.first(), next.first()) {
        (Some(p), Some(n)) if p != n => p < n,
        _ => previous < next,
    }
}

/// The cells split into runs of one column each.
fn column_groups(cells: &[StoredCell]) -> Vec<&[StoredCell]> {
    let mut groups = Vec::new();
    let mut start = 0;
    for i in 1..=cells.len() {
        if i == cells.len() || cells[i].column != cells[start].column {
            if i > start {
                groups.push(&cells[start..i]);
            }
            start = i;
        }
    }
    groups
}

fn put_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::String(s) => {
            out.push(VALUE_STRING);
            put_varint(out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        Value::Integer(i) => {
            out.push(VALUE_INTEGER);
            out.extend_from_slice(&i.to_be_bytes());
        }
        Value::Double(d) => {
            out.push(VALUE_DOUBLE);
            out.extend_from_slice(&d.to_bits().to_be_bytes());
        }
        Value::Boolean(b) => {
            out.push(VALUE_BOOLEAN);
            out.push(u8::from(*b));
        }
        Value::Binary(b) => {
            out.push(VALUE_BINARY);
            put_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
    }
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn corrupt(what: &str) -> EngineError {
    EngineError::Corrupt(format!("bad row value: {what}"))
}

/// A cursor over a row value; every read is bounds-checked.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// The row's format byte, marker and column count.
    fn header(&mut self) -> EngineResult<(RowMarker, usize)> {
        if self.byte()? != FORMAT {
            return Err(corrupt("unknown row format"));
        }
        let marker = RowMarker {
            revision: u64::from_be_bytes(self.fixed()?),
            last_write_ms: i64::from_be_bytes(self.fixed()?),
        };
        Ok((marker, self.count()?))
    }

    fn take(&mut self, len: usize) -> EngineResult<&'a [u8]> {
        let end = self
            .at
            .checked_add(len)
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| corrupt("truncated"))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn byte(&mut self) -> EngineResult<u8> {
        Ok(self.take(1)?[0])
    }

    fn fixed(&mut self) -> EngineResult<[u8; 8]> {
        self.take(8)?
            .try_into()
            .map_err(|_| corrupt("truncated number"))
    }

    fn varint(&mut self) -> EngineResult<u64> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            // A zero final byte after the first would make the encoding non-minimal.
            if shift > 0 && b == 0 {
                return Err(corrupt("overlong varint"));
            }
            n |= u64::from(b & 0x7F)
                .checked_shl(shift)
                .filter(|v| v >> shift == u64::from(b & 0x7F))
                .ok_or_else(|| corrupt("varint overflow"))?;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(corrupt("varint too long"))
    }

    /// A length or count, which can never exceed the bytes left.
    fn count(&mut self) -> EngineResult<usize> {
        let n = self.varint()?;
        if n > (self.bytes.len() - self.at) as u64 {
            return Err(corrupt("count past the end"));
        }
        Ok(n as usize)
    }

    /// Steps over a value, checking its tag and length but not its contents.
    fn skip_value(&mut self) -> EngineResult<()> {
        match self.byte()? {
            VALUE_STRING | VALUE_BINARY => {
                let len = self.count()?;
                self.take(len)?;
            }
            VALUE_INTEGER | VALUE_DOUBLE => {
                self.fixed()?;
            }
            VALUE_BOOLEAN => {
                if self.byte()? > 1 {
                    return Err(corrupt("boolean is neither 0 nor 1"));
                }
            }
            _ => return Err(corrupt("unknown value tag")),
        }
        Ok(())
    }

    fn value(&mut self) -> EngineResult<ValueRef<'a>> {
        Ok(match self.byte()? {
            VALUE_STRING => {
                let len = self.count()?;
                let text = std::str::from_utf8(self.take(len)?)
                    .map_err(|_| corrupt("string is not UTF-8"))?;
                ValueRef::String(text)
            }
            VALUE_INTEGER => ValueRef::Integer(i64::from_be_bytes(self.fixed()?)),
            VALUE_DOUBLE => ValueRef::Double(f64::from_bits(u64::from_be_bytes(self.fixed()?))),
            VALUE_BOOLEAN => match self.byte()? {
                0 => ValueRef::Boolean(false),
                1 => ValueRef::Boolean(true),
                _ => return Err(corrupt("boolean is neither 0 nor 1")),
            },
            VALUE_BINARY => {
                let len = self.count()?;
                ValueRef::Binary(self.take(len)?)
            }
            _ => return Err(corrupt("unknown value tag")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            ".{0,20}".prop_map(Value::String),
            any::<i64>().prop_map(Value::Integer),
            any::<f64>().prop_map(Value::Double),
            any::<bool>().prop_map(Value::Boolean),
            proptest::collection::vec(any::<u8>(), 0..300).prop_map(Value::Binary),
        ]
    }

    /// Cells in stored order: distinct columns ascending, distinct versions descending.
    fn cells() -> impl Strategy<Value = Vec<StoredCell>> {
        proptest::collection::btree_map(
            "[a-z_]{1,8}",
            proptest::collection::btree_map(any::<i64>(), value(), 1..4),
            0..6,
        )
        .prop_map(|columns| {
            columns
                .into_iter()
                .flat_map(|(column, versions)| {
                    versions
                        .into_iter()
                        .rev()
                        .map(move |(version, value)| StoredCell {
                            column: column.clone(),
                            version,
                            value,
                        })
                })
                .collect()
        })
    }

    fn same(a: &[StoredCell], b: &[StoredCell]) -> bool {
        a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| {
                x.column == y.column
                    && x.version == y.version
                    && match (&x.value, &y.value) {
                        (Value::Double(p), Value::Double(q)) => p.to_bits() == q.to_bits(),
                        (p, q) => p == q,
                    }
            })
    }

    proptest! {
        #[test]
        fn rows_round_trip_canonically(cells in cells(), revision in any::<u64>(), last in any::<i64>()) {
            let marker = RowMarker { revision, last_write_ms: last };
            let bytes = encode_row(&marker, &cells);
            let (decoded_marker, decoded) = decode_row(&bytes).expect("decodes");
            prop_assert_eq!(decoded_marker, marker);
            prop_assert!(same(&decoded, &cells));
            prop_assert_eq!(encode_row(&decoded_marker, &decoded), bytes);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok((marker, cells)) = decode_row(&bytes) {
                // Whatever decodes is canonical.
                prop_assert_eq!(encode_row(&marker, &cells), bytes);
            }
        }

        #[test]
        fn a_projected_decode_keeps_the_wanted_columns_and_summarises_the_rest(
            cells in cells(),
            mask in any::<u8>(),
            absent in "[a-z_]{1,8}",
        ) {
            // The columns picked by `mask`, and a name that is probably not in the row.
            let mut columns: Vec<&str> = cells.iter().map(|c| c.column.as_str()).collect();
            columns.dedup();
            let mut wanted: std::collections::BTreeSet<String> = columns
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, c)| c.to_string())
                .collect();
            wanted.insert(absent);
            let marker = RowMarker { revision: 3, last_write_ms: 4 };
            let bytes = encode_row(&marker, &cells);
            let decode = |versions| {
                decode_columns(
                    &bytes,
                    |name| std::str::from_utf8(name).is_ok_and(|name| wanted.contains(name)),
                    versions,
                )
                .expect("decodes")
            };
            let (decoded_marker, kept, skipped) = decode(KeptVersions::All);
            prop_assert_eq!(decoded_marker, marker);
            let expected: Vec<StoredCell> =
                cells.iter().filter(|c| wanted.contains(&c.column)).cloned().collect();
            prop_assert!(same(&kept, &expected));
            let rest = cells.iter().filter(|c| !wanted.contains(&c.column)).map(|c| c.version);
            prop_assert_eq!(skipped.newest, rest.clone().max());
            prop_assert_eq!(skipped.oldest, rest.min());
            // Newest only: the first (newest) cell of each kept column, the same summary.
            let (_, newest, newest_skipped) = decode(KeptVersions::Newest);
            let mut expected_newest = expected.clone();
            expected_newest.dedup_by(|later, first| later.column == first.column);
            prop_assert!(same(&newest, &expected_newest));
            prop_assert_eq!(newest_skipped, skipped);
            // Stopping past the greatest wanted name keeps the same cells.
            let mut through_kept = Vec::new();
            let (through_marker, _) = visit_columns_through(
                &bytes,
                |name| std::str::from_utf8(name).is_ok_and(|name| wanted.contains(name)),
                KeptVersions::All,
                wanted.iter().max().map(|name| name.as_bytes()),
                |column, version, value| through_kept.push(StoredCell {
                    column: column.to_owned(),
                    version,
                    value: value.to_value(),
                }),
            )
            .expect("decodes");
            prop_assert_eq!(through_marker, marker);
            prop_assert!(same(&through_kept, &expected));
        }

        #[test]
        fn truncation_is_detected(cells in cells(), cut in any::<prop::sample::Index>()) {
            let marker = RowMarker { revision: 1, last_write_ms: 2 };
            let bytes = encode_row(&marker, &cells);
            let cut = cut.index(bytes.len());
            prop_assert!(decode_row(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn varints_are_minimal() {
        for n in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, n);
            let mut reader = Reader { bytes: &out, at: 0 };
            assert_eq!(reader.varint().expect("reads"), n);
        }
        let mut overlong = Reader {
            bytes: &[0x81, 0x00],
            at: 0,
        };
        assert!(overlong.varint().is_err());
    }
}
