//! The `pg_catalog.pg_settings` view: every setting pgwide knows, at its default.
//! A session's own values are read with `current_setting` and set with `set_config`,
//! which the query layer implements.

use super::memory_table::{t, Col, V};
use super::oids::OWNER;
use crate::sql::settings::Settings;

pub const COLUMNS: &[Col] = &[
    ("name", 't'),
    ("setting", 't'),
    ("unit", 't'),
    ("category", 't'),
    ("short_desc", 't'),
    ("context", 't'),
    ("vartype", 't'),
    ("source", 't'),
    ("boot_val", 't'),
    ("reset_val", 't'),
];

/// One row per setting, with the value a new session of the owner starts with.
pub fn rows() -> Vec<Vec<V>> {
    Settings::new(OWNER)
        .all()
        .into_iter()
        .map(|(name, value)| {
            vec![
                V::T(name),
                V::T(value.clone()),
                V::N,
                t("pgwide"),
                t(""),
                t("user"),
                t("string"),
                t("default"),
                V::T(value.clone()),
                V::T(value),
            ]
        })
        .collect()
}
