//! The limits of the Table Store model and their defaults (docs/table-store.md §10). All
//! are configurable; the config file's `[limits]` table deserializes into [`Limits`].

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    pub max_instances: usize,
    pub max_tables_per_instance: usize,
    pub max_pk_value_bytes: usize,
    pub max_value_bytes: usize,
    pub max_columns_per_write: usize,
    pub max_columns_to_get: usize,
    pub max_batch_get_rows: usize,
    pub max_batch_write_rows: usize,
    pub max_batch_write_bytes: usize,
    pub max_range_rows: usize,
    pub max_range_bytes: usize,
    pub max_stream_expiration_hours: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_instances: 10,
            max_tables_per_instance: 64,
            max_pk_value_bytes: 1024,
            max_value_bytes: 2 * 1024 * 1024,
            max_columns_per_write: 1024,
            max_columns_to_get: 128,
            max_batch_get_rows: 100,
            max_batch_write_rows: 200,
            max_batch_write_bytes: 4 * 1024 * 1024,
            max_range_rows: 5000,
            max_range_bytes: 4 * 1024 * 1024,
            max_stream_expiration_hours: 24,
        }
    }
}
