//! RENAME COLUMN in the catalog: every place metadata names a column (the key or
//! attribute list, `SELECT *`'s order, declarations, the default, the generator and the
//! sequence that owns it, indexes, foreign keys from and to the table, CHECKs), changed
//! in one backend batch with the rows whose cells move (`Engine::rename_column`).

use super::{sequences, table_key, to_json, Catalog, TableMeta};
use crate::engine::check::CheckMeta;
use crate::engine::error::{EngineError, EngineResult};
use crate::storage::WriteBatch;
use std::sync::Arc;

impl Catalog {
    /// Renames column `old` of table `table` to `new`, with `checks` as the table's
    /// CHECK constraints (their SQL rewritten by the caller), writing `rows` (the rows
    /// re-keyed under the new name) in the same batch.
    pub async fn rename_column(
        &self,
        instance: &str,
        table: &str,
        old: &str,
        new: &str,
        checks: Vec<CheckMeta>,
        mut rows: WriteBatch,
    ) -> EngineResult<Arc<TableMeta>> {
        let _ddl = self.ddl.lock().await;
        let mut meta = (*self.table(instance, table)?).clone();
        ensure_renamable(&meta, old, new)?;
        renamed_in_table(&mut meta, old, new);
        meta.checks = checks;
        let mut children = Vec::new();
        for (child, _) in self.referencing(instance, table) {
            if child.name == meta.name || children.iter().any(|c: &TableMeta| c.name == child.name)
            {
                continue;
            }
            let mut child = (*child).clone();
            renamed_as_parent(&mut child, table, old, new);
            rows.put(table_key(instance, &child.name), to_json(&child)?);
            children.push(child);
        }
        let owned: Vec<_> = self
            .sequences(instance)
            .into_iter()
            .filter(|s| s.spec.owner.as_ref() == Some(&(table.to_string(), old.to_string())))
            .map(|s| {
                let mut s = (*s).clone();
                s.spec.owner = Some((table.to_string(), new.to_string()));
                s
            })
            .collect();
        for sequence in &owned {
            rows.put(
                sequences::sequence_key(instance, &sequence.spec.name),
                to_json(sequence)?,
            );
        }
        rows.put(table_key(instance, &meta.name), to_json(&meta)?);
        self.backend.write(rows).await?;
        let meta = Arc::new(meta);
        self.cache_stored(instance, None, &meta, children, owned);
        Ok(meta)
    }
}

/// `old` is a column of `meta` and `new` is not.
pub(crate) fn ensure_renamable(meta: &TableMeta, old: &str, new: &str) -> EngineResult<()> {
    if meta.pk_index(old).is_none() && meta.column(old).is_none() {
        return Err(EngineError::NoSuchColumn {
            table: meta.name.clone(),
            column: old.into(),
        });
    }
    if meta.pk_index(new).is_some() || meta.column(new).is_some() {
        return Err(EngineError::ColumnExists { name: new.into() });
    }
    Ok(())
}

/// `meta` with column `old` called `new` wherever it names it (but its CHECKs).
fn renamed_in_table(meta: &mut TableMeta, old: &str, new: &str) {
    let rename = |name: &mut String| {
        if name == old {
            *name = new.to_string();
        }
    };
    meta.pk.iter_mut().for_each(|c| rename(&mut c.name));
    meta.columns.iter_mut().for_each(|c| rename(&mut c.name));
    meta.column_order.iter_mut().for_each(rename);
    meta.declared.rename(old, new);
    if let Some(generated) = meta.generated.remove(old) {
        meta.generated.insert(new.to_string(), generated);
    }
    if let Some(default) = meta.defaults.remove(old) {
        meta.defaults.insert(new.to_string(), default);
    }
    for index in &mut meta.indexes {
        index.columns.iter_mut().for_each(rename);
    }
    for fk in &mut meta.foreign_keys {
        fk.columns.iter_mut().for_each(rename);
    }
    let name = meta.name.clone();
    renamed_as_parent(meta, &name, old, new);
}

/// `child`'s foreign keys to `parent` with the parent's column `old` called `new`.
fn renamed_as_parent(child: &mut TableMeta, parent: &str, old: &str, new: &str) {
    for fk in child
        .foreign_keys
        .iter_mut()
        .filter(|fk| fk.parent == parent)
    {
        for column in &mut fk.parent_columns {
            if column == old {
                *column = new.to_string();
            }
        }
    }
}
