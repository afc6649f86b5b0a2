//! CHECK constraints as a batch commits: every row the batch leaves in a table with
//! checks (cascaded changes included) is judged by the SQL layer's rules
//! (`engine::check`).

use super::{Working, WorkingSet};
use crate::engine::codec::decode_pk;
use crate::engine::error::EngineResult;
use crate::engine::stored::StoredRow;
use crate::engine::Engine;

impl WorkingSet {
    /// Checks each row the batch leaves in a table with CHECK constraints.
    pub(super) fn enforce_checks(&self, engine: &Engine) -> EngineResult<()> {
        if self.checked.is_empty() {
            return Ok(());
        }
        for (key, working) in &self.rows {
            let Some(id) = key.get(1..5).and_then(|id| <[u8; 4]>::try_from(id).ok()) else {
                continue;
            };
            let Some(table) = self.checked.get(&u32::from_be_bytes(id)) else {
                continue;
            };
            let row = match working {
                Working::Row(working) => working.row.current(&table.options, self.now),
                Working::New(value) => {
                    let prefix = crate::engine::codec::table_prefix(table.id).len();
                    let (pk, _) = decode_pk(&key[prefix..], &table.pk_types())?;
                    StoredRow::decode(pk, key.clone(), value)?.current(&table.options, self.now)
                }
            };
            if let Some(row) = row {
                engine.check_row(table, &row)?;
            }
        }
        Ok(())
    }
}
