//! `pg_catalog.pg_proc`: the columns clients join on, and no rows. The system
//! functions pgwide answers are DataFusion functions, not catalog entries.

use super::memory_table::{Col, V};

pub const COLUMNS: &[Col] = &[
    ("oid", 'i'),
    ("proname", 'n'),
    ("pronamespace", 'i'),
    ("proowner", 'i'),
    ("prorettype", 'i'),
    ("prokind", 't'),
    ("proretset", 'b'),
    ("proargtypes", 't'),
    ("proallargtypes", 'a'),
    ("proargmodes", 'a'),
    ("proargnames", 'a'),
    ("proargdefaults", 't'),
    ("prosrc", 't'),
    ("prolang", 'i'),
    ("pronargs", 'i'),
    ("proacl", 'a'),
];

/// No rows: pgwide lists no functions.
pub fn rows() -> Vec<Vec<V>> {
    Vec::new()
}
