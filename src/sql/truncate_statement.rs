//! `TRUNCATE [TABLE] [ONLY] t [, ...] [RESTART IDENTITY | CONTINUE IDENTITY] [CASCADE |
//! RESTRICT]`.
//!
//! Outside a transaction block the tables are emptied at once: the engine gives them new
//! ids in one catalog write, so a crash leaves them all whole or all empty, never half,
//! and deletes the old rows after (`Engine::truncate_tables`); sequences restart after
//! that. Inside a block the rows are deleted as
//! the block's own writes, so ROLLBACK brings them back and COMMIT applies them with
//! the block, as PostgreSQL's TRUNCATE is transactional. `RESTART IDENTITY` restarts the
//! sequences the tables' columns own (`SERIAL`, identity); a block cannot undo that, so
//! there it is refused. A table other tables' foreign keys reference is truncated only
//! with them: named beside it, or added by `CASCADE`.

use super::ddl;
use super::dml;
use super::session_state::SessionState;
use super::sql_types::{SqlError, SqlResult, StatementResult};
use crate::engine::TableMeta;
use sqlparser::ast::{self, Statement};
use std::sync::Arc;

/// A planned TRUNCATE: the tables, each once, and whether their sequences restart.
pub(super) struct TruncatePlan {
    tables: Vec<Arc<TableMeta>>,
    restart_identity: bool,
}

impl TruncatePlan {
    pub(super) fn plan(state: &SessionState, truncate: &ast::Truncate) -> SqlResult<TruncatePlan> {
        // sqlparser reads other dialects' IF EXISTS, partitions and ON CLUSTER here;
        // PostgreSQL's grammar has none of them.
        if truncate.if_exists || truncate.partitions.is_some() || truncate.on_cluster.is_some() {
            return Err(SqlError::syntax(
                "TRUNCATE takes table names only in PostgreSQL's grammar",
            ));
        }
        let mut tables: Vec<Arc<TableMeta>> = Vec::new();
        for target in &truncate.table_names {
            let name = ddl::table_name(&target.name)?;
            let table = state.engine.table(&state.instance, &name)?;
            if !tables.iter().any(|t| t.id == table.id) {
                tables.push(table);
            }
        }
        let cascade = matches!(truncate.cascade, Some(ast::CascadeOption::Cascade));
        // CASCADE: the referencing tables too, and theirs, to the end of the chain.
        let mut next = 0;
        while cascade && next < tables.len() {
            let parent = tables[next].name.clone();
            for (child, _) in state.engine.referencing(&state.instance, &parent) {
                if !tables.iter().any(|t| t.id == child.id) {
                    tables.push(child);
                }
            }
            next += 1;
        }
        let names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
        ddl::foreign_keys::refuse_referenced(&state.engine, &state.instance, &names, true)?;
        Ok(TruncatePlan {
            tables,
            restart_identity: matches!(
                truncate.identity,
                Some(ast::TruncateIdentityOption::Restart)
            ),
        })
    }

    pub(super) fn tables(&self) -> &[Arc<TableMeta>] {
        &self.tables
    }

    pub(super) async fn execute(&self, state: &mut SessionState) -> SqlResult<StatementResult> {
        if state.transaction.is_some() {
            return self.delete_in_block(state).await;
        }
        let names: Vec<&str> = self.tables.iter().map(|t| t.name.as_str()).collect();
        state
            .engine
            .truncate_tables(&state.instance, &names)
            .await?;
        if self.restart_identity {
            for table in &self.tables {
                for sequence in state.engine.sequences(&state.instance) {
                    let owned = sequence
                        .spec
                        .owner
                        .as_ref()
                        .is_some_and(|(owner, _)| *owner == table.name);
                    if owned {
                        state
                            .engine
                            .setval(&sequence, sequence.spec.start, false)
                            .await?;
                    }
                }
            }
        }
        Ok(StatementResult::command("TRUNCATE TABLE"))
    }

    /// In a block: every row deleted as the block's writes, which a ROLLBACK undoes.
    async fn delete_in_block(&self, state: &mut SessionState) -> SqlResult<StatementResult> {
        if self.restart_identity {
            return Err(SqlError::unsupported(
                "TRUNCATE ... RESTART IDENTITY inside a transaction block: pgwide could not \
                 undo the restarted sequences if the block rolled back (run it outside \
                 the block, or use setval)",
            ));
        }
        for table in &self.tables {
            let sql = format!("DELETE FROM {}", ast::Ident::with_quote('"', &table.name));
            let Some(Statement::Delete(delete)) = super::statement_parser::parse(&sql)?.pop()
            else {
                return Err(SqlError::internal("TRUNCATE's DELETE did not parse"));
            };
            let mut params = state.params(&[]);
            let plan = dml::plan_delete(&state.engine, &state.instance, &delete, &mut params)?;
            dml::execute_delete(&mut state.write_target(), &plan, &[]).await?;
        }
        Ok(StatementResult::command("TRUNCATE TABLE"))
    }
}
