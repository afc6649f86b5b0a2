//! `information_schema` (schemata, tables, columns, table_constraints, key_column_usage)
//! and `pgwide.tables`, the SQL-standard and the Table Store views of an instance's
//! tables, built per query from the engine's catalog like `pg_catalog`.

use super::pg_catalog::{
    columns, mem_table, pk_columns, pkey_name, t, CatalogSchema, Col, INFORMATION_SCHEMA, OWNER,
    PG_CATALOG, TYPES, V,
};
use super::pg_stats::count;
use crate::engine::TableSize;
use datafusion::catalog::TableProvider;
use datafusion::error::Result;
use std::collections::HashMap;
use std::sync::Arc;

impl CatalogSchema {
    pub(super) fn info_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let tables = self.tables();
        let db = || V::T(self.instance.clone());
        let (cols, rows): (&[Col], Vec<Vec<V>>) = match name {
            "schemata" => (
                &[
                    ("catalog_name", 't'),
                    ("schema_name", 't'),
                    ("schema_owner", 't'),
                ],
                ["public", PG_CATALOG, INFORMATION_SCHEMA]
                    .iter()
                    .map(|s| vec![db(), t(s), t(OWNER)])
                    .collect(),
            ),
            "tables" => (
                &[
                    ("table_catalog", 't'),
                    ("table_schema", 't'),
                    ("table_name", 't'),
                    ("table_type", 't'),
                    ("is_insertable_into", 't'),
                ],
                tables
                    .iter()
                    .map(|table| {
                        vec![
                            db(),
                            t("public"),
                            V::T(table.name.clone()),
                            t("BASE TABLE"),
                            t("YES"),
                        ]
                    })
                    .collect(),
            ),
            "columns" => (
                &[
                    ("table_catalog", 't'),
                    ("table_schema", 't'),
                    ("table_name", 't'),
                    ("column_name", 't'),
                    ("ordinal_position", 'i'),
                    ("column_default", 't'),
                    ("is_nullable", 't'),
                    ("data_type", 't'),
                    ("udt_name", 't'),
                    ("character_maximum_length", 'i'),
                    ("numeric_precision", 'i'),
                    ("udt_catalog", 't'),
                    ("udt_schema", 't'),
                    ("is_identity", 't'),
                    ("is_generated", 't'),
                    ("is_updatable", 't'),
                ],
                tables
                    .iter()
                    .flat_map(|table| {
                        let db = db();
                        columns(table)
                            .into_iter()
                            .enumerate()
                            .map(move |(i, (name, ty, pk))| {
                                let udt = TYPES
                                    .iter()
                                    .find(|t| t.0 == i64::from(ty.oid()))
                                    .map_or("text", |t| t.1);
                                let database = match &db {
                                    V::T(s) => s.clone(),
                                    _ => String::new(),
                                };
                                vec![
                                    V::T(database.clone()),
                                    t("public"),
                                    V::T(table.name.clone()),
                                    V::T(name),
                                    V::I(i as i64 + 1),
                                    V::N,
                                    t(if pk { "NO" } else { "YES" }),
                                    t(ty.name()),
                                    t(udt),
                                    V::N,
                                    V::N,
                                    V::T(database.clone()),
                                    t(PG_CATALOG),
                                    t("NO"),
                                    t("NEVER"),
                                    t("YES"),
                                ]
                            })
                    })
                    .collect(),
            ),
            "table_constraints" => (
                &[
                    ("constraint_catalog", 't'),
                    ("constraint_schema", 't'),
                    ("constraint_name", 't'),
                    ("table_catalog", 't'),
                    ("table_schema", 't'),
                    ("table_name", 't'),
                    ("constraint_type", 't'),
                    ("is_deferrable", 't'),
                    ("initially_deferred", 't'),
                ],
                tables
                    .iter()
                    .filter(|table| !pk_columns(table).is_empty())
                    .map(|table| {
                        vec![
                            db(),
                            t("public"),
                            V::T(pkey_name(table)),
                            db(),
                            t("public"),
                            V::T(table.name.clone()),
                            t("PRIMARY KEY"),
                            t("NO"),
                            t("NO"),
                        ]
                    })
                    .collect(),
            ),
            "key_column_usage" => (
                &[
                    ("constraint_catalog", 't'),
                    ("constraint_schema", 't'),
                    ("constraint_name", 't'),
                    ("table_catalog", 't'),
                    ("table_schema", 't'),
                    ("table_name", 't'),
                    ("column_name", 't'),
                    ("ordinal_position", 'i'),
                ],
                tables
                    .iter()
                    .flat_map(|table| {
                        pk_columns(table)
                            .into_iter()
                            .enumerate()
                            .map(|(i, column)| {
                                vec![
                                    db(),
                                    t("public"),
                                    V::T(pkey_name(table)),
                                    db(),
                                    t("public"),
                                    V::T(table.name.clone()),
                                    V::T(column),
                                    V::I(i as i64 + 1),
                                ]
                            })
                    })
                    .collect(),
            ),
            _ => return Ok(None),
        };
        mem_table(cols, rows).map(Some)
    }

    /// `pgwide.table_stats`: each table's capacity units and operation counts since the
    /// server started (the engine's per-table totals; not persisted).
    pub(super) fn pgwide_table_stats(&self) -> Result<Arc<dyn TableProvider>> {
        let cols: &[Col] = &[
            ("instance", 't'),
            ("table", 't'),
            ("read_cu", 'i'),
            ("write_cu", 'i'),
            ("reads", 'i'),
            ("writes", 'i'),
            ("rows_scanned", 'i'),
        ];
        let count = |n: u64| V::I(i64::try_from(n).unwrap_or(i64::MAX));
        let rows = self
            .tables()
            .iter()
            .map(|table| {
                let stats = self.engine.table_stats(table);
                vec![
                    V::T(self.instance.clone()),
                    V::T(table.name.clone()),
                    count(stats.read_cu),
                    count(stats.write_cu),
                    count(stats.reads),
                    count(stats.writes),
                    count(stats.rows_scanned),
                ]
            })
            .collect();
        mem_table(cols, rows)
    }

    /// `pgwide.tables`: what the Table Store model knows of each table in one row, with
    /// its counted rows and stored bytes (see `pg_stats`).
    pub(super) fn pgwide_tables(
        &self,
        sizes: &HashMap<u32, TableSize>,
    ) -> Result<Arc<dyn TableProvider>> {
        let mut cols: Vec<Col> = vec![("instance", 't'), ("table", 't'), ("pk_columns", 'a')];
        let option_names: Vec<&'static str> = crate::engine::TableOptions::default()
            .as_pairs()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        cols.extend(option_names.iter().map(|n| (*n, 't')));
        cols.extend([("row_estimate", 'i'), ("bytes", 'i')]);
        let rows = self
            .tables()
            .iter()
            .map(|table| {
                let mut row = vec![
                    V::T(self.instance.clone()),
                    V::T(table.name.clone()),
                    V::A(pk_columns(table)),
                ];
                row.extend(table.options.as_pairs().into_iter().map(|(_, v)| V::T(v)));
                let size = sizes.get(&table.id).copied().unwrap_or_default();
                row.extend([count(size.rows), count(size.bytes)]);
                row
            })
            .collect();
        mem_table(&cols, rows)
    }
}
