//! The catalog: instances (databases) and tables with their primary keys, known attribute
//! columns and options. Persisted in the backend under `0x00` keys and cached in memory,
//! so the hot path resolves a table with one read lock and no I/O.

mod checks;
mod enum_types;
mod foreign_keys;
mod indexes;
mod rekeyed_tables;
mod renamed_columns;
mod sequences;
mod views;

pub use enum_types::{EnumTypeMeta, LabelPosition, MAX_LABEL_BYTES};
pub(crate) use renamed_columns::ensure_renamable;
pub use sequences::{SequenceMeta, SequenceSpec, SequenceType, SequenceUndo};
pub use views::{ViewColumn, ViewMeta};

use super::check::CheckMeta;
use super::codec::CATALOG_PREFIX;
use super::error::{EngineError, EngineResult};
use super::foreign_key::ForeignKeyMeta;
use super::index::IndexMeta;
use super::limits::Limits;
use super::options::{OptionValue, TableOptions};
use super::types::{Declared, IntegerWidth, PkType, SqlKind, ValueType};
use super::validate::{check_instance_name, check_name};
use crate::storage::{Backend, KeyRange, WriteBatch};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

const INSTANCE_TAG: u8 = b'I';
const TABLE_TAG: u8 = b'T';
const SEQUENCE_KEY: &[u8] = &[CATALOG_PREFIX, b'S'];
/// Which layout the rows of this data directory use; bumped whenever it changes, so an
/// old directory is refused with an explanation instead of read as corrupt.
const FORMAT_KEY: &[u8] = &[CATALOG_PREFIX, b'F'];
/// 2: one packed value per row (`row_format`). 1 (unrecorded): one key per cell.
const DATA_FORMAT: u8 = 2;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PkColumn {
    pub name: String,
    pub ty: PkType,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttrColumn {
    pub name: String,
    pub ty: ValueType,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceMeta {
    pub name: String,
    pub id: u32,
    pub created_ms: i64,
}

/// Everything the engine knows about one table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableMeta {
    /// Unique across instances and never reused; prefixes every key of the table.
    pub id: u32,
    pub instance: String,
    pub name: String,
    pub pk: Vec<PkColumn>,
    /// Attribute columns declared or seen written, in the order they became known.
    pub columns: Vec<AttrColumn>,
    pub options: TableOptions,
    /// The PK is the hidden server-assigned `_rowid` (a table created without a PK).
    #[serde(default)]
    pub auto_rowid: bool,
    /// The primary key's constraint name when it was declared with one other than
    /// PostgreSQL's default, `<table>_pkey` (see `pk_constraint_name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pk_name: Option<String>,
    pub created_ms: i64,
    /// Every column name (PK and attribute) in the order `SELECT *` lists them: as
    /// declared, then attributes in the order they became known.
    #[serde(default)]
    pub column_order: Vec<String>,
    /// What the columns' declarations say beyond their value types.
    #[serde(flatten)]
    pub declared: ColumnDeclarations,
    /// Integer columns (key or attribute) whose values a sequence generates.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub generated: BTreeMap<String, Generated>,
    /// Columns declared with a `DEFAULT`: its expression's SQL text, which an INSERT
    /// that leaves the column out computes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub defaults: BTreeMap<String, String>,
    /// Secondary indexes, in the order they were created (`index`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexes: Vec<IndexMeta>,
    /// Foreign keys from this table's columns to other tables' (`foreign_key`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_keys: Vec<ForeignKeyMeta>,
    /// CHECK constraints (`check`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckMeta>,
    /// The table's `COMMENT ON TABLE` text (its columns' are in `declared.comments`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// What a table's column declarations say beyond the columns' value types: types
/// narrower than or different from the stored one, length limits, `NOT NULL`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnDeclarations {
    /// Integer columns (key or attribute) declared narrower than 64 bits.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub integer_widths: BTreeMap<String, IntegerWidth>,
    /// Double columns declared single precision (SQL `REAL`): written values are
    /// rounded to the nearest `f32`.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub single_precision: BTreeSet<String>,
    /// String columns declared with a length limit (SQL `VARCHAR(n)`), in characters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub max_chars: BTreeMap<String, u32>,
    /// Text columns (key or attribute) declared `VARCHAR` without a limit, which the
    /// catalog shows as `character varying` (one with a limit is in `max_chars`).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub varchar: BTreeSet<String>,
    /// Columns (key or attribute) declared a date, time or uuid: the SQL type their
    /// stored Integer or Binary values are.
    #[serde(
        default,
        alias = "temporal",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub kinds: BTreeMap<String, SqlKind>,
    /// Attribute columns declared `NOT NULL`: a write leaving a row without a value in
    /// one is refused (key columns always have one).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub not_null: BTreeSet<String>,
    /// Attribute timestamp columns declared with fewer than 6 digits of a second
    /// (`TIMESTAMP(3)`): written values are rounded to them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub time_precision: BTreeMap<String, u8>,
    /// Columns' `COMMENT ON COLUMN` texts.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub comments: BTreeMap<String, String>,
    /// Attribute columns no declaration names, known from a write: schema-free, their
    /// cells keep the value types they were written with (docs/table-store.md §3).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub undeclared: BTreeSet<String>,
    /// Schema-free columns written values of more than one type: typed String, their
    /// other cells shown as text. The engine does not compare those cells with a String,
    /// so no condition on the column is pushed to it, and no index can hold it.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub mixed: BTreeSet<String>,
}

impl ColumnDeclarations {
    /// Forgets everything `column`'s declaration said (DROP COLUMN).
    pub(crate) fn forget(&mut self, column: &str) {
        self.integer_widths.remove(column);
        self.single_precision.remove(column);
        self.max_chars.remove(column);
        self.varchar.remove(column);
        self.kinds.remove(column);
        self.time_precision.remove(column);
        self.not_null.remove(column);
        self.comments.remove(column);
        self.undeclared.remove(column);
        self.mixed.remove(column);
    }

    /// Moves what `old`'s declaration said to `new` (RENAME COLUMN).
    pub(crate) fn rename(&mut self, old: &str, new: &str) {
        fn moved<T>(map: &mut BTreeMap<String, T>, old: &str, new: &str) {
            if let Some(value) = map.remove(old) {
                map.insert(new.to_string(), value);
            }
        }
        fn moved_in(set: &mut BTreeSet<String>, old: &str, new: &str) {
            if set.remove(old) {
                set.insert(new.to_string());
            }
        }
        moved(&mut self.integer_widths, old, new);
        moved_in(&mut self.single_precision, old, new);
        moved(&mut self.max_chars, old, new);
        moved_in(&mut self.varchar, old, new);
        moved(&mut self.kinds, old, new);
        moved(&mut self.time_precision, old, new);
        moved_in(&mut self.not_null, old, new);
        moved(&mut self.comments, old, new);
        moved_in(&mut self.undeclared, old, new);
        moved_in(&mut self.mixed, old, new);
    }

    /// Declares `column` anew (ALTER COLUMN ... TYPE): what its old type said goes,
    /// its `NOT NULL` and its comment stay as they were.
    pub(crate) fn redeclare(&mut self, column: &str, declared: Declared, key: bool) {
        let not_null = self.not_null.contains(column);
        let comment = self.comments.get(column).cloned();
        // Its cells are not rewritten: mixed they stay.
        let mixed = self.mixed.contains(column);
        self.forget(column);
        if mixed {
            self.mixed.insert(column.to_string());
        }
        if let Some(comment) = comment {
            self.comments.insert(column.to_string(), comment);
        }
        self.declare(
            column,
            Declared {
                not_null,
                ..declared
            },
            key,
        );
    }

    /// Records what `column`'s declaration says; `key`: it is a key column, which is
    /// never NULL anyway.
    fn declare(&mut self, column: &str, declared: Declared, key: bool) {
        if declared.not_null && !key {
            self.not_null.insert(column.to_string());
        }
        if let Some(width) = declared.width {
            self.integer_widths.insert(column.to_string(), width);
        }
        if declared.single_precision {
            self.single_precision.insert(column.to_string());
        }
        if let Some(limit) = declared.max_chars {
            self.max_chars.insert(column.to_string(), limit);
        } else if declared.varchar {
            self.varchar.insert(column.to_string());
        }
        if let Some(kind) = declared.kind {
            self.kinds.insert(column.to_string(), kind);
        }
        if let Some(digits) = declared.time_precision {
            self.time_precision.insert(column.to_string(), digits);
        }
    }
}

/// A column whose values a sequence generates when an INSERT gives none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generated {
    pub sequence: String,
    pub kind: GeneratedKind,
}

/// How a generated column was declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GeneratedKind {
    /// `GENERATED ALWAYS AS IDENTITY`: an INSERT may not give a value.
    Always,
    /// `GENERATED BY DEFAULT AS IDENTITY`: an INSERT may give one.
    ByDefault,
    /// `SERIAL`: a default of `nextval(sequence)`.
    Serial,
}

impl TableMeta {
    /// The date, time or uuid type `column` was declared with, if any.
    pub fn kind(&self, column: &str) -> Option<SqlKind> {
        let kinds = &self.declared.kinds;
        if kinds.is_empty() {
            return None;
        }
        kinds.get(column).copied()
    }

    /// Whether `column` is a key column or declared `NOT NULL`.
    pub fn is_not_null(&self, column: &str) -> bool {
        let not_null = &self.declared.not_null;
        self.pk_index(column).is_some() || (!not_null.is_empty() && not_null.contains(column))
    }

    /// Records what `column`'s declared type says beyond its value type.
    pub fn declare(&mut self, column: &str, declared: Declared) {
        let key = self.pk_index(column).is_some();
        self.declared.declare(column, declared, key);
    }

    /// The length limit `column` was declared with, in characters, if any.
    pub fn max_chars(&self, column: &str) -> Option<u32> {
        let max_chars = &self.declared.max_chars;
        if max_chars.is_empty() {
            return None;
        }
        max_chars.get(column).copied()
    }

    /// Whether `column` was declared `VARCHAR` or `VARCHAR(n)`.
    pub fn is_varchar(&self, column: &str) -> bool {
        self.max_chars(column).is_some() || self.declared.varchar.contains(column)
    }

    /// The digits of a second a `TIMESTAMP(p)` column keeps, if fewer than 6.
    pub fn time_precision(&self, column: &str) -> Option<u8> {
        let precisions = &self.declared.time_precision;
        if precisions.is_empty() {
            return None;
        }
        precisions.get(column).copied()
    }

    /// Whether `column` was declared single precision.
    pub fn is_single_precision(&self, column: &str) -> bool {
        let single = &self.declared.single_precision;
        !single.is_empty() && single.contains(column)
    }

    /// The narrower integer type `column` was declared with, if any.
    pub fn integer_width(&self, column: &str) -> Option<IntegerWidth> {
        let widths = &self.declared.integer_widths;
        if widths.is_empty() {
            return None;
        }
        widths.get(column).copied()
    }

    /// The name of the primary key's constraint and index: as declared, else
    /// PostgreSQL's default `<table>_pkey`.
    pub fn pk_constraint_name(&self) -> String {
        match &self.pk_name {
            Some(name) => name.clone(),
            None => format!("{}_pkey", self.name),
        }
    }

    pub fn pk_types(&self) -> Vec<PkType> {
        self.pk.iter().map(|c| c.ty).collect()
    }

    pub fn pk_index(&self, name: &str) -> Option<usize> {
        self.pk.iter().position(|c| c.name == name)
    }

    pub fn column(&self, name: &str) -> Option<&AttrColumn> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// Whether attribute `column` is schema-free: known from a write rather than
    /// declared, and not in an index or a foreign key (whose entries need one type).
    /// Its cells keep their own value types; a column that holds more than one is
    /// typed String, and shown as text (docs/table-store.md §3).
    pub fn is_schema_free(&self, column: &str) -> bool {
        !self.declared.undeclared.is_empty()
            && self.declared.undeclared.contains(column)
            && !self
                .indexes
                .iter()
                .any(|index| index.columns.iter().any(|c| c == column))
            && !self
                .foreign_keys
                .iter()
                .any(|fk| fk.columns.iter().any(|c| c == column))
    }

    /// Column names in table order.
    pub fn ordered_columns(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.column_order.iter().map(String::as_str).collect();
        for name in self
            .pk
            .iter()
            .map(|c| &c.name)
            .chain(self.columns.iter().map(|c| &c.name))
        {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
        names
    }
}

/// What `create_table` needs.
#[derive(Debug, Clone, Default)]
pub struct TableSpec {
    pub name: String,
    pub pk: Vec<PkColumn>,
    pub columns: Vec<AttrColumn>,
    pub options: Vec<(String, OptionValue)>,
    pub auto_rowid: bool,
    /// The primary key's constraint name, if declared other than `<table>_pkey`.
    pub pk_name: Option<String>,
    /// Column names in declared order; empty = PK columns, then attributes.
    pub column_order: Vec<String>,
    /// What the columns' declarations say beyond their value types.
    pub declared: ColumnDeclarations,
    /// Columns whose values a sequence generates.
    pub generated: BTreeMap<String, Generated>,
    /// Columns' `DEFAULT` expressions, as SQL text.
    pub defaults: BTreeMap<String, String>,
}

impl TableSpec {
    /// Records what `column`'s declared type says beyond its value type (`NOT NULL`
    /// of an attribute: call it after the key columns are in `pk`).
    pub fn declare(&mut self, column: &str, declared: Declared) {
        let key = self.pk.iter().any(|k| k.name == column);
        self.declared.declare(column, declared, key);
    }
}

#[derive(Default)]
struct CatalogState {
    instances: BTreeMap<String, InstanceMeta>,
    tables: HashMap<String, BTreeMap<String, Arc<TableMeta>>>,
    sequences: HashMap<String, BTreeMap<String, Arc<SequenceMeta>>>,
    enum_types: HashMap<String, BTreeMap<String, Arc<enum_types::EnumTypeMeta>>>,
    views: HashMap<String, BTreeMap<String, Arc<views::ViewMeta>>>,
    next_id: u32,
}

/// The persisted, cached catalog.
pub struct Catalog {
    backend: Arc<dyn Backend>,
    state: RwLock<CatalogState>,
    /// Serializes DDL so check-then-write sequences do not interleave.
    ddl: tokio::sync::Mutex<()>,
    /// Bumped on every change to the cached catalog, so plans cached by the SQL layer
    /// can tell they were made against an older schema or older options.
    version: AtomicU64,
    /// Each sequence's values this process reserved and has not handed out.
    blocks: std::sync::Mutex<HashMap<u32, sequences::Block>>,
}

fn instance_key(name: &str) -> Vec<u8> {
    let mut key = vec![CATALOG_PREFIX, INSTANCE_TAG];
    key.extend_from_slice(name.as_bytes());
    key
}

fn table_key(instance: &str, name: &str) -> Vec<u8> {
    let mut key = vec![CATALOG_PREFIX, TABLE_TAG];
    key.extend_from_slice(instance.as_bytes());
    key.push(0);
    key.extend_from_slice(name.as_bytes());
    key
}

fn to_json<T: Serialize>(value: &T) -> EngineResult<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| EngineError::Corrupt(e.to_string()))
}

fn from_json<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> EngineResult<T> {
    serde_json::from_slice(bytes).map_err(|e| EngineError::Corrupt(format!("catalog record: {e}")))
}

impl Catalog {
    /// Loads the catalog from the backend.
    pub async fn load(backend: Arc<dyn Backend>) -> EngineResult<Self> {
        let mut state = CatalogState::default();
        let entries = backend
            .scan(
                &KeyRange::prefix(&[CATALOG_PREFIX]),
                crate::storage::Direction::Forward,
                usize::MAX,
            )
            .await?;
        let mut format = None;
        let empty = entries.is_empty();
        for (key, value) in entries {
            match key.get(1) {
                Some(b'F') => format = value.first().copied(),
                Some(&INSTANCE_TAG) => {
                    let meta: InstanceMeta = from_json(&value)?;
                    state.next_id = state.next_id.max(meta.id + 1);
                    state.tables.entry(meta.name.clone()).or_default();
                    state.instances.insert(meta.name.clone(), meta);
                }
                Some(&TABLE_TAG) => {
                    let meta: TableMeta = from_json(&value)?;
                    state.next_id = state.next_id.max(meta.id + 1);
                    state
                        .tables
                        .entry(meta.instance.clone())
                        .or_default()
                        .insert(meta.name.clone(), Arc::new(meta));
                }
                Some(&sequences::SEQUENCE_TAG) => {
                    let meta = sequences::load(&value)?;
                    state.next_id = state.next_id.max(meta.id + 1);
                    state
                        .sequences
                        .entry(meta.instance.clone())
                        .or_default()
                        .insert(meta.spec.name.clone(), Arc::new(meta));
                }
                Some(&enum_types::ENUM_TAG) => {
                    let meta = enum_types::load(&value)?;
                    state.next_id = state.next_id.max(meta.id + 1);
                    state
                        .enum_types
                        .entry(meta.instance.clone())
                        .or_default()
                        .insert(meta.name.clone(), Arc::new(meta));
                }
                Some(&views::VIEW_TAG) => {
                    let meta = views::load(&value)?;
                    state.next_id = state.next_id.max(meta.id + 1);
                    state
                        .views
                        .entry(meta.instance.clone())
                        .or_default()
                        .insert(meta.name.clone(), Arc::new(meta));
                }
                Some(b'S') => {
                    let raw: [u8; 4] = value
                        .as_slice()
                        .try_into()
                        .map_err(|_| EngineError::Corrupt("catalog sequence".into()))?;
                    state.next_id = state.next_id.max(u32::from_be_bytes(raw));
                }
                _ => {}
            }
        }
        state.next_id = state.next_id.max(1);
        match format {
            Some(DATA_FORMAT) => {}
            None if empty => {
                let mut batch = WriteBatch::default();
                batch.put(FORMAT_KEY.to_vec(), vec![DATA_FORMAT]);
                backend.write(batch).await?;
            }
            found => {
                return Err(EngineError::Corrupt(format!(
                    "the data directory uses row format {} but this pgwide reads format \
                     {DATA_FORMAT}; dump it with the pgwide that wrote it and load it again",
                    found.unwrap_or(1)
                )))
            }
        }
        Ok(Catalog {
            backend,
            state: RwLock::new(state),
            ddl: tokio::sync::Mutex::new(()),
            version: AtomicU64::new(0),
            blocks: Default::default(),
        })
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, CatalogState> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, CatalogState> {
        let guard = self.state.write().unwrap_or_else(|p| p.into_inner());
        // Bumped while the lock is held: whoever reads the new version and then the
        // state sees the change.
        self.version.fetch_add(1, Ordering::AcqRel);
        guard
    }

    /// Changes with every catalog write (see `version`).
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// Takes the next id and adds its persistence to `batch`.
    fn allocate_id(&self, batch: &mut WriteBatch) -> u32 {
        let mut state = self.write();
        let id = state.next_id;
        state.next_id += 1;
        batch.put(SEQUENCE_KEY.to_vec(), state.next_id.to_be_bytes().to_vec());
        id
    }

    pub fn instances(&self) -> Vec<InstanceMeta> {
        self.read().instances.values().cloned().collect()
    }

    pub fn instance(&self, name: &str) -> EngineResult<InstanceMeta> {
        self.read()
            .instances
            .get(name)
            .cloned()
            .ok_or_else(|| EngineError::InstanceNotFound { name: name.into() })
    }

    pub async fn create_instance(
        &self,
        name: &str,
        now_ms: i64,
        limits: &Limits,
    ) -> EngineResult<InstanceMeta> {
        check_instance_name(name)?;
        let _ddl = self.ddl.lock().await;
        {
            let state = self.read();
            if state.instances.contains_key(name) {
                return Err(EngineError::InstanceExists { name: name.into() });
            }
            if state.instances.len() >= limits.max_instances {
                return Err(EngineError::TooManyInstances {
                    count: state.instances.len(),
                    limit: limits.max_instances,
                });
            }
        }
        let mut batch = WriteBatch::default();
        let meta = InstanceMeta {
            name: name.into(),
            id: self.allocate_id(&mut batch),
            created_ms: now_ms,
        };
        batch.put(instance_key(name), to_json(&meta)?);
        self.backend.write(batch).await?;
        let mut state = self.write();
        state.tables.entry(name.into()).or_default();
        state.instances.insert(name.into(), meta.clone());
        Ok(meta)
    }

    /// Removes an instance record; the caller has dropped its tables first.
    pub async fn drop_instance(&self, name: &str) -> EngineResult<()> {
        let _ddl = self.ddl.lock().await;
        let tables = self.tables(name)?.len();
        if tables > 0 {
            return Err(EngineError::InstanceNotEmpty {
                name: name.into(),
                tables,
            });
        }
        let mut batch = WriteBatch::default();
        batch.delete(instance_key(name));
        // Its sequences go with it (those of its tables went with the tables).
        let sequences = self.sequences(name);
        for sequence in &sequences {
            self.drop_sequence_into(sequence, &mut batch);
        }
        // And its enum types, which only its tables could use.
        for enum_type in self.enum_types(name) {
            batch.delete(enum_types::enum_key(name, &enum_type.name));
        }
        // And its views, which only its tables could feed.
        for view in self.views(name) {
            batch.delete(views::view_key(name, &view.name));
        }
        self.backend.write(batch).await?;
        for sequence in &sequences {
            self.forget_sequence(sequence);
        }
        let mut state = self.write();
        state.instances.remove(name);
        state.tables.remove(name);
        state.sequences.remove(name);
        state.enum_types.remove(name);
        state.views.remove(name);
        Ok(())
    }

    pub fn table(&self, instance: &str, name: &str) -> EngineResult<Arc<TableMeta>> {
        let state = self.read();
        let Some(tables) = state.tables.get(instance) else {
            return Err(EngineError::InstanceNotFound {
                name: instance.into(),
            });
        };
        tables
            .get(name)
            .cloned()
            .ok_or_else(|| EngineError::TableNotFound { name: name.into() })
    }

    pub fn tables(&self, instance: &str) -> EngineResult<Vec<Arc<TableMeta>>> {
        let state = self.read();
        let tables = state
            .tables
            .get(instance)
            .ok_or_else(|| EngineError::InstanceNotFound {
                name: instance.into(),
            })?;
        Ok(tables.values().cloned().collect())
    }

    pub async fn create_table(
        &self,
        instance: &str,
        spec: TableSpec,
        now_ms: i64,
        limits: &Limits,
    ) -> EngineResult<Arc<TableMeta>> {
        check_name(&spec.name)?;
        if spec.pk.is_empty() || spec.pk.len() > 4 {
            return Err(EngineError::PkColumnCount {
                count: spec.pk.len(),
            });
        }
        let mut seen = std::collections::HashSet::new();
        for name in spec
            .pk
            .iter()
            .map(|c| &c.name)
            .chain(spec.columns.iter().map(|c| &c.name))
        {
            if name != ROWID_COLUMN || !spec.auto_rowid {
                check_name(name)?;
            }
            if !seen.insert(name.as_str()) {
                return Err(EngineError::ColumnExists { name: name.clone() });
            }
        }
        let mut options = TableOptions::default();
        for (name, value) in &spec.options {
            options.set(name, value, limits)?;
        }
        let _ddl = self.ddl.lock().await;
        let count = {
            let state = self.read();
            let tables =
                state
                    .tables
                    .get(instance)
                    .ok_or_else(|| EngineError::InstanceNotFound {
                        name: instance.into(),
                    })?;
            tables.len()
        };
        if self.relation_exists(instance, &spec.name) {
            return Err(EngineError::TableExists { name: spec.name });
        }
        // The key's index is a relation of that name too.
        if let Some(name) = spec
            .pk_name
            .as_ref()
            .filter(|n| self.relation_exists(instance, n))
        {
            return Err(EngineError::TableExists { name: name.clone() });
        }
        // A table's name is also its row type's in PostgreSQL.
        if self.enum_type(instance, &spec.name).is_some() {
            return Err(EngineError::TypeExists { name: spec.name });
        }
        self.check_enum_kinds(&spec.declared)?;
        if count >= limits.max_tables_per_instance {
            return Err(EngineError::TooManyTables {
                instance: instance.into(),
                count,
                limit: limits.max_tables_per_instance,
            });
        }
        let column_order = if spec.column_order.is_empty() {
            spec.pk
                .iter()
                .map(|c| c.name.clone())
                .chain(spec.columns.iter().map(|c| c.name.clone()))
                .collect()
        } else {
            spec.column_order
        };
        let mut batch = WriteBatch::default();
        let meta = TableMeta {
            id: self.allocate_id(&mut batch),
            instance: instance.into(),
            name: spec.name,
            pk: spec.pk,
            columns: spec.columns,
            options,
            auto_rowid: spec.auto_rowid,
            pk_name: spec.pk_name,
            created_ms: now_ms,
            column_order,
            declared: spec.declared,
            generated: spec.generated,
            defaults: spec.defaults,
            indexes: Vec::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            comment: None,
        };
        self.store_table(meta, batch).await
    }

    async fn store_table(
        &self,
        meta: TableMeta,
        mut batch: WriteBatch,
    ) -> EngineResult<Arc<TableMeta>> {
        batch.put(table_key(&meta.instance, &meta.name), to_json(&meta)?);
        self.backend.write(batch).await?;
        let meta = Arc::new(meta);
        self.write()
            .tables
            .entry(meta.instance.clone())
            .or_default()
            .insert(meta.name.clone(), Arc::clone(&meta));
        Ok(meta)
    }

    /// Applies a change to a table's metadata under the DDL lock and persists it.
    pub async fn alter_table(
        &self,
        instance: &str,
        name: &str,
        change: impl FnOnce(&mut TableMeta) -> EngineResult<()>,
    ) -> EngineResult<Arc<TableMeta>> {
        let _ddl = self.ddl.lock().await;
        let mut meta = (*self.table(instance, name)?).clone();
        change(&mut meta)?;
        self.check_enum_kinds(&meta.declared)?;
        self.store_table(meta, WriteBatch::default()).await
    }

    /// The sequences whose values columns of table `name` take (SERIAL, identity).
    fn owned_sequences(&self, instance: &str, name: &str) -> Vec<Arc<SequenceMeta>> {
        self.sequences(instance)
            .into_iter()
            .filter(|s| {
                s.spec
                    .owner
                    .as_ref()
                    .is_some_and(|(table, _)| table == name)
            })
            .collect()
    }

    /// Renames a table (metadata only: its rows are keyed by its id). The sequences its
    /// columns own follow it; their names stay, as in PostgreSQL.
    pub async fn rename_table(
        &self,
        instance: &str,
        name: &str,
        new_name: &str,
    ) -> EngineResult<Arc<TableMeta>> {
        crate::engine::check_name(new_name)?;
        let _ddl = self.ddl.lock().await;
        let mut meta = (*self.table(instance, name)?).clone();
        if self.relation_exists(instance, new_name) {
            return Err(EngineError::TableExists {
                name: new_name.into(),
            });
        }
        meta.name = new_name.into();
        for fk in &mut meta.foreign_keys {
            if fk.parent == name {
                fk.parent = new_name.into();
            }
        }
        let mut batch = WriteBatch::default();
        let children = self.renamed_parent(instance, name, new_name, &mut batch)?;
        batch.delete(table_key(instance, name));
        batch.put(table_key(instance, new_name), to_json(&meta)?);
        let owned: Vec<SequenceMeta> = self
            .owned_sequences(instance, name)
            .into_iter()
            .map(|s| {
                let mut s = (*s).clone();
                if let Some((table, _)) = &mut s.spec.owner {
                    *table = new_name.into();
                }
                s
            })
            .collect();
        for sequence in &owned {
            batch.put(
                sequences::sequence_key(instance, &sequence.spec.name),
                to_json(sequence)?,
            );
        }
        self.backend.write(batch).await?;
        let meta = Arc::new(meta);
        self.cache_stored(instance, Some(name), &meta, children, owned);
        Ok(meta)
    }

    /// Caches what a change stored: `meta` (in place of table `replaced`, when it
    /// was renamed), the other tables it changed (the children of a renamed parent),
    /// the sequences it changed.
    fn cache_stored(
        &self,
        instance: &str,
        replaced: Option<&str>,
        meta: &Arc<TableMeta>,
        others: Vec<TableMeta>,
        sequences: Vec<SequenceMeta>,
    ) {
        let mut state = self.write();
        if let Some(tables) = state.tables.get_mut(instance) {
            if let Some(replaced) = replaced {
                tables.remove(replaced);
            }
            tables.insert(meta.name.clone(), Arc::clone(meta));
            for other in others {
                tables.insert(other.name.clone(), Arc::new(other));
            }
        }
        if let Some(cached) = state.sequences.get_mut(instance) {
            for sequence in sequences {
                cached.insert(sequence.spec.name.clone(), Arc::new(sequence));
            }
        }
    }

    /// Records attribute columns first seen in a write, unless already known.
    pub async fn learn_columns(&self, table: &TableMeta, seen: &[AttrColumn]) -> EngineResult<()> {
        let unknown: Vec<&AttrColumn> = seen
            .iter()
            .filter(|c| table.column(&c.name).is_none())
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        let unknown: Vec<AttrColumn> = unknown.into_iter().cloned().collect();
        self.alter_table(&table.instance, &table.name, |meta| {
            for column in unknown {
                if meta.column(&column.name).is_none() {
                    meta.column_order.push(column.name.clone());
                    meta.declared.undeclared.insert(column.name.clone());
                    meta.columns.push(column);
                }
            }
            Ok(())
        })
        .await
        .map(|_| ())
    }

    /// Marks schema-free `columns` mixed and types them String: each was written a
    /// value of another type than its own (docs/table-store.md §3).
    pub async fn mix_columns(&self, table: &TableMeta, columns: &[String]) -> EngineResult<()> {
        let mixes = |meta: &TableMeta, column: &String| {
            meta.is_schema_free(column) && !meta.declared.mixed.contains(column)
        };
        if !columns.iter().any(|c| mixes(table, c)) {
            return Ok(());
        }
        self.alter_table(&table.instance, &table.name, |meta| {
            for column in columns {
                if mixes(meta, column) {
                    meta.declared.mixed.insert(column.clone());
                    if let Some(c) = meta.columns.iter_mut().find(|c| &c.name == column) {
                        c.ty = ValueType::String;
                    }
                }
            }
            Ok(())
        })
        .await
        .map(|_| ())
    }

    /// Gives tables new ids in one catalog write, keeping everything else, and returns
    /// them as they were; the caller deletes the data under the old ids.
    pub async fn renumber_tables(
        &self,
        instance: &str,
        names: &[&str],
    ) -> EngineResult<Vec<Arc<TableMeta>>> {
        let _ddl = self.ddl.lock().await;
        let old = names
            .iter()
            .map(|name| self.table(instance, name))
            .collect::<EngineResult<Vec<_>>>()?;
        let mut batch = WriteBatch::default();
        let mut renumbered = Vec::with_capacity(old.len());
        for table in &old {
            let mut meta = (**table).clone();
            meta.id = self.allocate_id(&mut batch);
            // Its indexes are emptied with it: new ids, under which nothing is stored.
            for index in &mut meta.indexes {
                index.id = self.allocate_id(&mut batch);
            }
            batch.put(table_key(&meta.instance, &meta.name), to_json(&meta)?);
            renumbered.push(Arc::new(meta));
        }
        self.backend.write(batch).await?;
        let mut state = self.write();
        let tables = state.tables.entry(instance.into()).or_default();
        for meta in renumbered {
            tables.insert(meta.name.clone(), meta);
        }
        Ok(old)
    }

    /// Removes a table record and the sequences its columns own; the caller deletes
    /// its data.
    pub async fn drop_table(&self, instance: &str, name: &str) -> EngineResult<Arc<TableMeta>> {
        let _ddl = self.ddl.lock().await;
        let meta = self.table(instance, name)?;
        let mut batch = WriteBatch::default();
        batch.delete(table_key(instance, name));
        let owned = self.owned_sequences(instance, name);
        for sequence in &owned {
            self.drop_sequence_into(sequence, &mut batch);
        }
        self.backend.write(batch).await?;
        if let Some(tables) = self.write().tables.get_mut(instance) {
            tables.remove(name);
        }
        for sequence in &owned {
            self.forget_sequence(sequence);
        }
        Ok(meta)
    }
}

const ROWID_TAG: u8 = b'R';

/// The hidden key column of a table created without a primary key.
pub(super) const ROWID_COLUMN: &str = "_rowid";

/// Where table `table_id`'s next hidden `_rowid` value is kept.
fn rowid_counter_key(table_id: u32) -> Vec<u8> {
    let mut key = vec![CATALOG_PREFIX, ROWID_TAG];
    key.extend_from_slice(&table_id.to_be_bytes());
    key
}

impl Catalog {
    /// Reserves `count` consecutive hidden `_rowid` values for a table; returns the first.
    pub async fn allocate_rowids(&self, table: &TableMeta, count: i64) -> EngineResult<i64> {
        let key = rowid_counter_key(table.id);
        loop {
            let current = self.backend.get(&key).await?;
            let next = match &current {
                None => 1,
                Some(raw) => i64::from_be_bytes(
                    raw.as_slice()
                        .try_into()
                        .map_err(|_| EngineError::Corrupt("rowid counter".into()))?,
                ),
            };
            let after = next.saturating_add(count);
            if self
                .backend
                .compare_and_swap(&key, current, Some(after.to_be_bytes().to_vec()))
                .await?
            {
                return Ok(next);
            }
        }
    }
}
