//! Secondary indexes, as Table Store's global secondary index: a keyspace of entries
//! keyed by the indexed columns' values, then the base row's primary key, each entry
//! holding that key. Entries change in the same backend batch as their base row
//! (`write`), so a crash never leaves the two apart.
//!
//! Key layout: `0x03 index_id:u32 value... [pk]`, each value a type tag and an
//! order-preserving body (`encode_value`). A unique index's entry for values none of
//! which is NULL leaves the primary key out, so two rows claiming the same values claim
//! the same key, and the backend's compare-and-swap on it decides who wins; with a NULL
//! (never equal to anything, as in PostgreSQL) the key ends in the primary key, as in
//! any other index.
//!
//! The invariant reads rely on: every row that exists has the entry of the values it
//! shows now. An entry may outlive what it says (a row whose cells the TTL hid since it
//! was written keeps its entry), so a read through an index fetches each row it names
//! and checks the predicate again; an entry is never missing.

use super::catalog::TableMeta;
use super::codec::{decode_pk, encode_pk, escape_bytes, table_prefix};
use super::error::{EngineError, EngineResult};
use super::scan::{RowScanner, ScanStep};
use super::stored::StoredRow;
use super::types::{PkValue, PrimaryKey, Value, ValueRef};
use super::Engine;
use crate::storage::{Check, Direction, KeyRange, WriteBatch};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

pub(crate) const INDEX_PREFIX: u8 = 0x03;

/// One secondary index of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexMeta {
    /// Unique across instances and never reused; prefixes every entry.
    pub id: u32,
    pub name: String,
    /// The indexed columns, key or attribute, in order.
    pub columns: Vec<String>,
    /// No two rows may show the same values, none of them NULL.
    pub unique: bool,
    /// Made by a `UNIQUE` constraint, which the catalog shows beside it.
    #[serde(default)]
    pub constraint: bool,
    /// Every row has its entry: reads may use it. False while CREATE INDEX builds it
    /// (writes keep it up to date, and a unique one is enforced, meanwhile).
    pub ready: bool,
}

/// What `Engine::create_index` needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSpec {
    pub name: String,
    pub columns: Vec<String>,
    pub unique: bool,
    /// Made by a `UNIQUE` constraint.
    pub constraint: bool,
}

/// `0x03 index_id`: the prefix of every entry of an index (`0x02` is the roles'; see
/// `auth::roles`).
pub(crate) fn index_prefix(id: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(32);
    out.push(INDEX_PREFIX);
    out.extend_from_slice(&id.to_be_bytes());
    out
}

const TAG_NULL: u8 = 0x01;
const TAG_FALSE: u8 = 0x10;
const TAG_TRUE: u8 = 0x11;
const TAG_INTEGER: u8 = 0x20;
const TAG_DOUBLE: u8 = 0x30;
const TAG_STRING: u8 = 0x40;
const TAG_BINARY: u8 = 0x50;

/// Appends one indexed value: a tag for its type, then a body that sorts as the value
/// does and ends where it can be told to (fixed width, or escaped and terminated).
/// Values equal in SQL encode equally: `-0.0` as `0.0`, every NaN as one NaN.
pub(crate) fn encode_value(out: &mut Vec<u8>, value: Option<ValueRef<'_>>) {
    match value {
        None => out.push(TAG_NULL),
        Some(ValueRef::Boolean(b)) => out.push(if b { TAG_TRUE } else { TAG_FALSE }),
        Some(ValueRef::Integer(i)) => {
            out.push(TAG_INTEGER);
            out.extend_from_slice(&((i as u64) ^ (1 << 63)).to_be_bytes());
        }
        Some(ValueRef::Double(d)) => {
            out.push(TAG_DOUBLE);
            let d = if d == 0.0 {
                0.0
            } else if d.is_nan() {
                f64::NAN
            } else {
                d
            };
            let bits = d.to_bits();
            // Positive numbers: flip the sign bit; negative: flip every bit.
            let ordered = if bits >> 63 == 0 {
                bits ^ (1 << 63)
            } else {
                !bits
            };
            out.extend_from_slice(&ordered.to_be_bytes());
        }
        Some(ValueRef::String(s)) => {
            out.push(TAG_STRING);
            escape_bytes(out, s.as_bytes());
        }
        Some(ValueRef::Binary(b)) => {
            out.push(TAG_BINARY);
            escape_bytes(out, b);
        }
    }
}

/// The prefix of the entries whose leading values are `values`.
pub(crate) fn lookup_prefix(index: &IndexMeta, values: &[Value]) -> Vec<u8> {
    let mut key = index_prefix(index.id);
    for value in values {
        encode_value(&mut key, Some(value.as_ref()));
    }
    key
}

pub(crate) fn pk_as_value(value: &PkValue) -> Value {
    match value {
        PkValue::Integer(i) => Value::Integer(*i),
        PkValue::String(s) => Value::String(s.clone()),
        PkValue::Binary(b) => Value::Binary(b.clone()),
    }
}

/// The values `row` shows in the index's columns at `now_ms` (a key column's value,
/// an attribute's newest visible version, `None` for NULL); `None` if the row does not
/// exist for readers.
pub(crate) fn shown_values(
    table: &TableMeta,
    index: &IndexMeta,
    row: &StoredRow,
    now_ms: i64,
) -> Option<Vec<Option<Value>>> {
    shown_columns(table, &index.columns, row, now_ms)
}

/// The values `row` shows in `columns` at `now_ms` (a key column's value, an
/// attribute's newest visible version, `None` for NULL); `None` if the row does not
/// exist for readers.
pub(crate) fn shown_columns(
    table: &TableMeta,
    columns: &[String],
    row: &StoredRow,
    now_ms: i64,
) -> Option<Vec<Option<Value>>> {
    if !row.exists(&table.options, now_ms) {
        return None;
    }
    let mut visible = row.visible_cells(&table.options, now_ms);
    let mut newest: HashMap<&str, &Value> = HashMap::new();
    for cell in visible.by_ref() {
        if columns.contains(&cell.column) {
            // Newest first within a column: the first one seen is the newest.
            newest.entry(cell.column.as_str()).or_insert(&cell.value);
        }
    }
    Some(
        columns
            .iter()
            .map(|column| match table.pk_index(column) {
                Some(k) => row.pk.get(k).map(pk_as_value),
                None => newest.get(column.as_str()).map(|v| (*v).clone()),
            })
            .collect(),
    )
}

/// One entry a row has in an index.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub key: Vec<u8>,
    /// The key holds no primary key: rows with these values compete for it.
    pub claims: bool,
    pub values: Vec<Option<Value>>,
}

/// The entry of a row showing `values` in `index`.
pub(crate) fn entry(index: &IndexMeta, values: Vec<Option<Value>>, encoded_pk: &[u8]) -> Entry {
    let mut key = index_prefix(index.id);
    for value in &values {
        encode_value(&mut key, value.as_ref().map(Value::as_ref));
    }
    let claims = index.unique && values.iter().all(Option::is_some);
    if !claims {
        key.extend_from_slice(encoded_pk);
    }
    Entry {
        key,
        claims,
        values,
    }
}

/// The entries `row` has in each of the table's indexes at `now_ms` (none if it does
/// not exist), in index order.
pub(crate) fn row_entries(table: &TableMeta, row: &StoredRow, now_ms: i64) -> Vec<(usize, Entry)> {
    let encoded_pk = encode_pk(&row.pk);
    table
        .indexes
        .iter()
        .enumerate()
        .filter_map(|(i, index)| {
            shown_values(table, index, row, now_ms)
                .map(|values| (i, entry(index, values, &encoded_pk)))
        })
        .collect()
}

/// A row's change as its indexes see it: the row before and after the write.
pub(crate) struct RowChangeSeen<'a> {
    pub table: &'a Arc<TableMeta>,
    pub before: Option<StoredRow>,
    pub after: &'a StoredRow,
}

/// The entry keys a unique index's values compete for, and who holds them.
#[derive(Default)]
struct Claims {
    /// Key → (the row claiming it, its index and values) for entries a batch adds.
    claimed: HashMap<Vec<u8>, Claim>,
    /// Key → the row letting it go, for entries a batch removes.
    released: HashMap<Vec<u8>, Vec<u8>>,
}

struct Claim {
    pk: Vec<u8>,
    table: Arc<TableMeta>,
    index: usize,
    values: Vec<Option<Value>>,
}

/// Adds to `batch` (and to `checks`, for what it read) the index entries a batch's
/// row changes add and remove. A unique index's values already shown by another row
/// (as the batch leaves it, if the batch writes it) are `UniqueViolation`.
pub(crate) async fn stage_entries(
    engine: &Engine,
    changes: &[RowChangeSeen<'_>],
    now_ms: i64,
    batch: &mut WriteBatch,
    checks: &mut Vec<Check>,
) -> EngineResult<()> {
    let rows_after: HashMap<&[u8], &StoredRow> = changes
        .iter()
        .map(|change| (change.after.key.as_slice(), change.after))
        .collect();
    let mut claims = Claims::default();
    for change in changes {
        let table = change.table;
        let before = change
            .before
            .as_ref()
            .map(|row| row_entries(table, row, now_ms))
            .unwrap_or_default();
        let after = row_entries(table, change.after, now_ms);
        let encoded_pk = encode_pk(&change.after.pk);
        for (i, old) in &before {
            if after.iter().any(|(j, new)| j == i && new.key == old.key) {
                continue;
            }
            match old.claims {
                true => {
                    claims.released.insert(old.key.clone(), encoded_pk.clone());
                }
                false => batch.delete(old.key.clone()),
            }
        }
        for (i, new) in after {
            if before.iter().any(|(j, old)| *j == i && old.key == new.key) {
                continue;
            }
            if !new.claims {
                batch.put(new.key, encoded_pk.clone());
                continue;
            }
            let claim = Claim {
                pk: encoded_pk.clone(),
                table: Arc::clone(table),
                index: i,
                values: new.values,
            };
            if let Some(other) = claims.claimed.get(&new.key) {
                if other.pk != claim.pk {
                    return Err(violation(&claim));
                }
            }
            claims.claimed.insert(new.key, claim);
        }
    }
    for (key, claim) in claims.claimed {
        let holder = engine.backend.get(&key).await?;
        if let Some(holder) = &holder {
            let released = claims.released.get(&key) == Some(holder);
            if *holder != claim.pk
                && !released
                && still_holds(engine, &claim, holder, &rows_after, now_ms).await?
            {
                return Err(violation(&claim));
            }
        }
        checks.push(Check {
            key: key.clone(),
            expected: holder,
        });
        claims.released.remove(&key);
        batch.put(key, claim.pk);
    }
    for (key, pk) in claims.released {
        // Removed only if it is this row's: the key may have been taken over since,
        // by a row that claimed it after this one's values were hidden by the TTL.
        let holder = engine.backend.get(&key).await?;
        if holder.as_ref() == Some(&pk) {
            checks.push(Check {
                key: key.clone(),
                expected: holder,
            });
            batch.delete(key);
        }
    }
    Ok(())
}

/// Whether the row `holder` (an encoded primary key) still shows the values `claim`
/// wants: as the batch leaves it if the batch writes it, else as stored.
async fn still_holds(
    engine: &Engine,
    claim: &Claim,
    holder: &[u8],
    rows_after: &HashMap<&[u8], &StoredRow>,
    now_ms: i64,
) -> EngineResult<bool> {
    let table = &claim.table;
    let index = &table.indexes[claim.index];
    let mut row_key = table_prefix(table.id);
    row_key.extend_from_slice(holder);
    let (pk, _) = decode_pk(holder, &table.pk_types())?;
    let shown = match rows_after.get(row_key.as_slice()) {
        Some(row) => shown_values(table, index, row, now_ms),
        None => match engine.backend.get(&row_key).await? {
            None => None,
            Some(value) => {
                let row = StoredRow::decode(pk, row_key, &value)?;
                shown_values(table, index, &row, now_ms)
            }
        },
    };
    Ok(shown.as_ref() == Some(&claim.values))
}

fn violation(claim: &Claim) -> EngineError {
    let index = &claim.table.indexes[claim.index];
    EngineError::UniqueViolation {
        index: index.name.clone(),
        columns: index.columns.join(", "),
        values: claim
            .values
            .iter()
            .map(|v| v.as_ref().map_or("null".to_string(), shown_value))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// A value as the error about its duplicate shows it.
pub(crate) fn shown_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Integer(i) => i.to_string(),
        Value::Double(d) => d.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::Binary(b) => format!(
            "\\x{}",
            b.iter().map(|x| format!("{x:02x}")).collect::<String>()
        ),
    }
}

impl Engine {
    /// The keys of the rows whose entries in `index` begin with `values`, in index
    /// order; `None` if the index is not (or no longer) one reads may use, as when it
    /// was dropped after the read was planned. Entries may name rows that no longer
    /// show those values (see the module comment): read the rows and check again.
    pub async fn index_keys(
        &self,
        table: &TableMeta,
        index: &IndexMeta,
        values: &[Value],
    ) -> EngineResult<Option<Vec<PrimaryKey>>> {
        // Held while the entries are read: DROP INDEX waits for it.
        let _ids = self.table_ids.read().await;
        let usable = self
            .catalog
            .current(table)
            .is_some_and(|current| current.indexes.iter().any(|i| i.id == index.id && i.ready));
        if !usable {
            return Ok(None);
        }
        self.read_index(table, index, values).await.map(Some)
    }

    pub(super) async fn read_index(
        &self,
        table: &TableMeta,
        index: &IndexMeta,
        values: &[Value],
    ) -> EngineResult<Vec<PrimaryKey>> {
        let prefix = lookup_prefix(index, values);
        let types = table.pk_types();
        let mut keys = Vec::new();
        if index.unique && values.len() == index.columns.len() {
            // The values' one claimed entry, and the entries of rows with a NULL are
            // not among them: one get.
            if let Some(pk) = self.backend.get(&prefix).await? {
                keys.push(decode_pk(&pk, &types)?.0);
            }
            return Ok(keys);
        }
        let entries = self
            .backend
            .scan(&KeyRange::prefix(&prefix), Direction::Forward, usize::MAX)
            .await?;
        for (_, pk) in entries {
            keys.push(decode_pk(&pk, &types)?.0);
        }
        Ok(keys)
    }

    /// Writes the entries of every stored row into a new index, already in the
    /// catalog (so writes from now on keep it up to date). A unique index whose values
    /// two rows share is `UniqueViolation`.
    pub(super) async fn build_index(&self, table: &TableMeta, index: usize) -> EngineResult<()> {
        let mut only_this = table.clone();
        only_this.indexes = vec![table.indexes[index].clone()];
        let only_this = Arc::new(only_this);
        let range = KeyRange::prefix(&table_prefix(table.id));
        let mut scanner = RowScanner::new(self.backend.as_ref(), table, range, Direction::Forward);
        let mut plain = WriteBatch::default();
        loop {
            let row = match scanner.step().await? {
                ScanStep::Row(row) => row,
                ScanStep::PassedOver => continue,
                ScanStep::End => break,
            };
            let now = self.now_ms();
            let Some((_, entry)) = row_entries(&only_this, &row, now).pop() else {
                continue;
            };
            if !entry.claims {
                plain.put(entry.key, encode_pk(&row.pk));
                if plain.len() >= BUILD_BATCH {
                    self.backend.write(std::mem::take(&mut plain)).await?;
                }
                continue;
            }
            // A claimed entry: written only if no other row shows these values, and
            // only if the key is still as read (a concurrent write may claim it too).
            let change = [RowChangeSeen {
                table: &only_this,
                before: None,
                after: &row,
            }];
            loop {
                let mut batch = WriteBatch::default();
                let mut checks = Vec::new();
                stage_entries(self, &change, now, &mut batch, &mut checks).await?;
                if batch.is_empty() || self.backend.write_if(&checks, batch).await? {
                    break;
                }
            }
        }
        if !plain.is_empty() {
            self.backend.write(plain).await?;
        }
        Ok(())
    }
}

/// Entries a build writes per backend batch.
const BUILD_BATCH: usize = 500;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn encoded(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode_value(&mut out, Some(value.as_ref()));
        out
    }

    proptest! {
        #[test]
        fn encoded_values_sort_as_the_values_do(
            a in any::<i64>(), b in any::<i64>(),
            x in any::<f64>().prop_filter("a number", |f| !f.is_nan()),
            y in any::<f64>().prop_filter("a number", |f| !f.is_nan()),
            s in ".{0,5}", t in ".{0,5}",
        ) {
            prop_assert_eq!(encoded(&Value::Integer(a)).cmp(&encoded(&Value::Integer(b))), a.cmp(&b));
            let order = x.partial_cmp(&y).expect("numbers compare");
            prop_assert_eq!(encoded(&Value::Double(x)).cmp(&encoded(&Value::Double(y))), order);
            prop_assert_eq!(
                encoded(&Value::String(s.clone())).cmp(&encoded(&Value::String(t.clone()))),
                s.cmp(&t)
            );
        }
    }

    #[test]
    fn values_equal_in_sql_encode_equally() {
        assert_eq!(encoded(&Value::Double(-0.0)), encoded(&Value::Double(0.0)));
        assert_eq!(
            encoded(&Value::Double(f64::NAN)),
            encoded(&Value::Double(-f64::NAN))
        );
        // A string is never a prefix of a longer one's entry: "a" then the key ends.
        let short = encoded(&Value::String("a".into()));
        let long = encoded(&Value::String("a\0b".into()));
        assert!(!long.starts_with(&short));
    }
}
