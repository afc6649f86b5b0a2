//! Enum types: PostgreSQL's `CREATE TYPE name AS ENUM (labels)`. A type is a catalog
//! record of its labels in their sort order; a column of the type stores its values as
//! Strings (the label itself) and names the type by its catalog id
//! (`SqlKind::Enum`), so renaming the type touches no table. A write of a label the type
//! lacks is refused here, in the engine, whichever statement made it.

use super::{from_json, to_json, Catalog, CATALOG_PREFIX};
use crate::engine::error::{EngineError, EngineResult};
use crate::engine::types::SqlKind;
use crate::storage::WriteBatch;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub(super) const ENUM_TAG: u8 = b'E';

/// PostgreSQL's limit on a label's length (`NAMEDATALEN - 1`), in bytes.
pub const MAX_LABEL_BYTES: usize = 63;

/// An enum type as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumTypeMeta {
    /// Drawn from the counter tables and sequences draw from, so never reused.
    pub id: u32,
    pub instance: String,
    pub name: String,
    /// The labels in their sort order: a value sorts by its label's position here.
    pub labels: Vec<String>,
}

impl EnumTypeMeta {
    /// The position of `label` in the type's sort order.
    pub fn position(&self, label: &str) -> Option<usize> {
        self.labels.iter().position(|l| l == label)
    }
}

/// Where `ALTER TYPE ... ADD VALUE` puts a new label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelPosition {
    Last,
    Before(String),
    After(String),
}

pub(super) fn enum_key(instance: &str, name: &str) -> Vec<u8> {
    let mut key = vec![CATALOG_PREFIX, ENUM_TAG];
    key.extend_from_slice(instance.as_bytes());
    key.push(0);
    key.extend_from_slice(name.as_bytes());
    key
}

pub(super) fn load(raw: &[u8]) -> EngineResult<EnumTypeMeta> {
    from_json(raw)
}

/// A label PostgreSQL would refuse: empty is allowed, longer than 63 bytes is not.
fn check_label(label: &str) -> EngineResult<()> {
    if label.len() > MAX_LABEL_BYTES {
        return Err(EngineError::InvalidEnumLabel {
            label: label.to_string(),
        });
    }
    Ok(())
}

impl Catalog {
    pub fn enum_type(&self, instance: &str, name: &str) -> Option<Arc<EnumTypeMeta>> {
        self.read()
            .enum_types
            .get(instance)
            .and_then(|types| types.get(name))
            .cloned()
    }

    /// The enum type with catalog id `id`, in any database (ids are never reused).
    pub fn enum_type_by_id(&self, id: u32) -> Option<Arc<EnumTypeMeta>> {
        self.read()
            .enum_types
            .values()
            .flat_map(|types| types.values())
            .find(|t| t.id == id)
            .cloned()
    }

    pub fn enum_types(&self, instance: &str) -> Vec<Arc<EnumTypeMeta>> {
        self.read()
            .enum_types
            .get(instance)
            .map(|types| types.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Creates an enum type; each label at most once and at most 63 bytes.
    pub async fn create_enum_type(
        &self,
        instance: &str,
        name: &str,
        labels: Vec<String>,
    ) -> EngineResult<Arc<EnumTypeMeta>> {
        crate::engine::check_name(name)?;
        for (i, label) in labels.iter().enumerate() {
            check_label(label)?;
            if labels[..i].contains(label) {
                return Err(EngineError::EnumLabelExists {
                    label: label.clone(),
                });
            }
        }
        let _ddl = self.ddl.lock().await;
        self.instance(instance)?;
        // A table's name is also its row type's in PostgreSQL.
        let row_type = self.table(instance, name).is_ok() || self.view(instance, name).is_some();
        if self.enum_type(instance, name).is_some() || row_type {
            return Err(EngineError::TypeExists { name: name.into() });
        }
        let mut batch = WriteBatch::default();
        let meta = EnumTypeMeta {
            id: self.allocate_id(&mut batch),
            instance: instance.into(),
            name: name.into(),
            labels,
        };
        self.store_enum_type(meta, batch).await
    }

    /// Drops an enum type no column is declared with.
    pub async fn drop_enum_type(&self, instance: &str, name: &str) -> EngineResult<()> {
        let _ddl = self.ddl.lock().await;
        let meta = self.existing_enum_type(instance, name)?;
        if let Some((table, column)) = self.enum_type_user(&meta) {
            return Err(EngineError::TypeInUse {
                name: name.into(),
                table,
                column,
            });
        }
        let mut batch = WriteBatch::default();
        batch.delete(enum_key(instance, name));
        self.backend.write(batch).await?;
        if let Some(types) = self.write().enum_types.get_mut(instance) {
            types.remove(name);
        }
        Ok(())
    }

    /// Adds `label` to an enum type at `position`; `Ok(false)` if the type has it already
    /// and `if_not_exists` says that is fine.
    pub async fn add_enum_label(
        &self,
        instance: &str,
        name: &str,
        label: &str,
        position: LabelPosition,
        if_not_exists: bool,
    ) -> EngineResult<bool> {
        check_label(label)?;
        let _ddl = self.ddl.lock().await;
        let mut meta = (*self.existing_enum_type(instance, name)?).clone();
        if meta.position(label).is_some() {
            return match if_not_exists {
                true => Ok(false),
                false => Err(EngineError::EnumLabelExists {
                    label: label.into(),
                }),
            };
        }
        let at = match &position {
            LabelPosition::Last => meta.labels.len(),
            LabelPosition::Before(neighbour) | LabelPosition::After(neighbour) => {
                let found =
                    meta.position(neighbour)
                        .ok_or_else(|| EngineError::EnumLabelNotFound {
                            label: neighbour.clone(),
                        })?;
                found + usize::from(matches!(position, LabelPosition::After(_)))
            }
        };
        meta.labels.insert(at, label.to_string());
        self.store_enum_type(meta, WriteBatch::default()).await?;
        Ok(true)
    }

    /// Renames a label no stored value can hold: the values are the labels' text, so
    /// renaming one that a column is declared with would need every row rewritten.
    pub async fn rename_enum_label(
        &self,
        instance: &str,
        name: &str,
        from: &str,
        to: &str,
    ) -> EngineResult<()> {
        check_label(to)?;
        let _ddl = self.ddl.lock().await;
        let mut meta = (*self.existing_enum_type(instance, name)?).clone();
        let at = meta
            .position(from)
            .ok_or_else(|| EngineError::EnumLabelNotFound { label: from.into() })?;
        if meta.position(to).is_some() {
            return Err(EngineError::EnumLabelExists { label: to.into() });
        }
        if let Some((table, column)) = self.enum_type_user(&meta) {
            return Err(EngineError::EnumLabelInUse {
                name: name.into(),
                table,
                column,
            });
        }
        meta.labels[at] = to.to_string();
        self.store_enum_type(meta, WriteBatch::default()).await?;
        Ok(())
    }

    /// Renames an enum type; the columns declared with it name it by id and follow.
    pub async fn rename_enum_type(&self, instance: &str, name: &str, to: &str) -> EngineResult<()> {
        crate::engine::check_name(to)?;
        let _ddl = self.ddl.lock().await;
        let mut meta = (*self.existing_enum_type(instance, name)?).clone();
        let row_type = self.table(instance, to).is_ok() || self.view(instance, to).is_some();
        if self.enum_type(instance, to).is_some() || row_type {
            return Err(EngineError::TypeExists { name: to.into() });
        }
        let mut batch = WriteBatch::default();
        batch.delete(enum_key(instance, name));
        meta.name = to.to_string();
        self.store_enum_type(meta, batch).await?;
        if let Some(types) = self.write().enum_types.get_mut(instance) {
            types.remove(name);
        }
        Ok(())
    }

    /// `EnumValue` unless `value` is one of the labels of enum type `type_id`.
    pub fn check_enum_value(&self, type_id: u32, value: &str) -> EngineResult<()> {
        let Some(meta) = self.enum_type_by_id(type_id) else {
            return Err(EngineError::Corrupt(format!(
                "a column names enum type {type_id}, which does not exist"
            )));
        };
        match meta.position(value) {
            Some(_) => Ok(()),
            None => Err(EngineError::InvalidEnumValue {
                type_name: meta.name.clone(),
                value: value.to_string(),
            }),
        }
    }

    /// `TypeNotFound` if a column is declared with an enum type that no longer exists
    /// (dropped between the statement's lookup and its catalog change). Called under
    /// the DDL lock, which DROP TYPE takes too.
    pub(super) fn check_enum_kinds(
        &self,
        declared: &super::ColumnDeclarations,
    ) -> EngineResult<()> {
        for kind in declared.kinds.values() {
            if let SqlKind::Enum { type_id } = kind {
                if self.enum_type_by_id(*type_id).is_none() {
                    return Err(EngineError::TypeNotFound {
                        name: format!("with id {type_id}"),
                    });
                }
            }
        }
        Ok(())
    }

    fn existing_enum_type(&self, instance: &str, name: &str) -> EngineResult<Arc<EnumTypeMeta>> {
        self.enum_type(instance, name)
            .ok_or_else(|| EngineError::TypeNotFound { name: name.into() })
    }

    /// A table column declared with `meta`'s type, if there is one.
    fn enum_type_user(&self, meta: &EnumTypeMeta) -> Option<(String, String)> {
        let state = self.read();
        let tables = state.tables.get(&meta.instance)?;
        tables.values().find_map(|table| {
            table.declared.kinds.iter().find_map(|(column, kind)| {
                matches!(kind, SqlKind::Enum { type_id } if *type_id == meta.id)
                    .then(|| (table.name.clone(), column.clone()))
            })
        })
    }

    /// Writes `meta` (with whatever `batch` holds) and caches it.
    async fn store_enum_type(
        &self,
        meta: EnumTypeMeta,
        mut batch: WriteBatch,
    ) -> EngineResult<Arc<EnumTypeMeta>> {
        batch.put(enum_key(&meta.instance, &meta.name), to_json(&meta)?);
        self.backend.write(batch).await?;
        let meta = Arc::new(meta);
        self.write()
            .enum_types
            .entry(meta.instance.clone())
            .or_default()
            .insert(meta.name.clone(), Arc::clone(&meta));
        Ok(meta)
    }
}
