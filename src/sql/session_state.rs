//! What a session's statements run against: its database (instance), role, settings,
//! open transaction block, DataFusion state and what it owes the client (notices,
//! dropped prepared statements). Statement handlers get it by reference; the session
//! around it only routes statements and keeps plans.

use super::activity::SessionBackend;
use super::dml::WriteTarget;
use super::expr::Params;
use super::notices::Notices;
use super::notifications::PendingNotifications;
use super::open_cursors::Cursor;
use super::query::{self, QueryEngine};
use super::row_reader::ReadContext;
use super::sequence_values::SequenceValues;
use super::settings::Settings;
use super::sql_types::{SqlError, SqlResult, SqlType};
use super::statement_aftermath::Aftermath;
use super::transaction_block::{ListenChange, Transaction};
use crate::auth::Access;
use crate::engine::Engine;
use crate::sqlstate::SqlState;
use datafusion::execution::runtime_env::RuntimeEnv;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

pub(super) struct SessionState {
    pub(super) engine: Arc<Engine>,
    pub(super) instance: String,
    pub(super) user: String,
    pub(super) settings: Settings,
    pub(super) transaction: Option<Transaction>,
    /// The memory pool DataFusion queries run in; a default one when not given.
    pub(super) query_runtime: Option<Arc<RuntimeEnv>>,
    /// DataFusion's state, made on the first query that needs it.
    query_engine: OnceLock<QueryEngine>,
    /// NOTICEs the running statement leaves for the client.
    pub(super) notices: Arc<Notices>,
    /// Statements `DEALLOCATE` dropped, until the server takes them (`None` = all).
    pub(super) deallocations: Vec<Option<String>>,
    /// The role's privileges (checked on every statement) and the role store.
    pub(super) access: Access,
    /// What the last statement's result reported after it was returned: a DataFusion
    /// query's rows ending in an error, a COPY's rows to stage in the transaction block.
    pub(super) aftermath: Arc<Aftermath>,
    /// What the session's sequences handed out, for currval and lastval.
    pub(super) sequence_values: Arc<SequenceValues>,
    /// The cursors DECLARE opened, by name.
    pub(super) cursors: HashMap<String, Cursor>,
    /// The server's connection this session serves (`activity`); `None` outside a
    /// server.
    pub(super) backend: Option<SessionBackend>,
    /// Notifications sent and not committed yet (`notifications`).
    pub(super) notifications: PendingNotifications,
    /// How many were pending when the last statement started: its own come after.
    pub(super) statement_notifications: usize,
}

impl SessionState {
    pub(super) fn new(
        engine: Arc<Engine>,
        instance: String,
        user: String,
        settings: Settings,
    ) -> Self {
        SessionState {
            engine,
            instance,
            user,
            settings,
            transaction: None,
            query_runtime: None,
            query_engine: OnceLock::new(),
            notices: Arc::default(),
            deallocations: Vec::new(),
            access: Access::default(),
            aftermath: Arc::default(),
            sequence_values: Arc::default(),
            cursors: HashMap::new(),
            backend: None,
            notifications: PendingNotifications::default(),
            statement_notifications: 0,
        }
    }

    /// Applies committed LISTENs and UNLISTENs to the connection's channels.
    pub(super) fn apply_listens(&self, changes: &[ListenChange]) {
        let Some(backend) = &self.backend else {
            return;
        };
        for change in changes {
            match change {
                ListenChange::Listen(channel) => backend.inbox.listen(channel),
                ListenChange::Unlisten(channel) => backend.inbox.unlisten(Some(channel)),
                ListenChange::UnlistenAll => backend.inbox.unlisten(None),
            }
        }
    }

    /// Sends the committed notifications to their listeners (none are committed while
    /// a transaction block is open).
    pub(super) fn send_notifications(&self) {
        if self.transaction.is_some() || self.notifications.is_empty() {
            return;
        }
        match &self.backend {
            Some(backend) => backend
                .backends
                .notify(&self.notifications.take(backend.pid)),
            // No server, no listeners.
            None => self.notifications.truncate(0),
        }
    }

    /// The session's DataFusion state, made on first use.
    pub(super) fn query_engine(&self) -> SqlResult<&QueryEngine> {
        if let Some(engine) = self.query_engine.get() {
            return Ok(engine);
        }
        let runtime = match &self.query_runtime {
            Some(runtime) => Arc::clone(runtime),
            None => query::runtime(query::DEFAULT_QUERY_MEMORY_MB)?,
        };
        let engine = QueryEngine::new(
            Arc::clone(&self.engine),
            &self.instance,
            &self.user,
            runtime,
            &self.access,
            query::SessionLinks {
                sequence_values: &self.sequence_values,
                backend: self.backend.as_ref(),
                notifications: &self.notifications,
            },
        );
        engine.sync_settings(&self.settings);
        Ok(self.query_engine.get_or_init(|| engine))
    }

    /// What reads of this session see: its staged writes and `pgwide.as_of`.
    pub(super) fn read_context(&self) -> SqlResult<ReadContext> {
        let as_of = match self.settings.value("pgwide.as_of") {
            Some(value) => Some(super::settings::parse_as_of(
                value,
                &self.settings.time_zone(),
            )?),
            None => None,
        };
        Ok(ReadContext {
            engine: Arc::clone(&self.engine),
            staged: self
                .transaction
                .as_ref()
                .filter(|t| !t.staged.is_empty())
                .map(|t| t.staged.view()),
            as_of,
            snapshot: self.transaction.as_ref().and_then(|t| t.snapshot.clone()),
            meter: None,
            notices: Some(Arc::clone(&self.notices)),
            transaction_start: self.transaction.as_ref().map(|t| t.started),
        })
    }

    /// Where this session's writes go: the open block's staged writes, else the engine.
    pub(super) fn write_target(&mut self) -> WriteTarget<'_> {
        WriteTarget {
            engine: &self.engine,
            staged: self.transaction.as_mut().map(|t| &mut t.staged),
            sequence_values: &self.sequence_values,
        }
    }

    /// Parameter bookkeeping for planning a statement with the `given` types.
    pub(super) fn params(&self, given: &[Option<SqlType>]) -> Params {
        let mut params = Params::new(given);
        params.session = (self.instance.clone(), self.user.clone());
        params
    }

    /// Marks an open transaction block failed: later statements are refused until it ends.
    pub(super) fn fail_transaction(&mut self) {
        if let Some(transaction) = self.transaction.as_mut() {
            transaction.failed = true;
        }
    }

    /// Takes a REPEATABLE READ block's snapshot at its first statement that reads, as
    /// PostgreSQL does, so the block sees the rows as they were then; at later
    /// statements, 40001 if the schema changed since (`engine::read_snapshot`).
    pub(super) async fn ensure_snapshot(&mut self) -> SqlResult<()> {
        let Some(transaction) = self.transaction.as_mut() else {
            return Ok(());
        };
        match &transaction.snapshot {
            Some(snapshot) => Ok(self.engine.check_snapshot(snapshot)?),
            None if self.settings.value("transaction_isolation") == Some("repeatable read") => {
                transaction.snapshot = Some(self.engine.open_snapshot().await);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Refuses a transaction mode pgwide would not give: REPEATABLE READ in a block
    /// that may write (its snapshot serves reads only), and a change of isolation level
    /// or to READ WRITE once the block has its snapshot, which PostgreSQL refuses too.
    pub(super) fn check_transaction_modes(&self, snapshot_before: bool) -> SqlResult<()> {
        if self.transaction.is_none() {
            return Ok(());
        }
        let repeatable = self.settings.value("transaction_isolation") == Some("repeatable read");
        if snapshot_before && !repeatable {
            return Err(SqlError::new(
                SqlState::ActiveSqlTransaction,
                "SET TRANSACTION ISOLATION LEVEL must be called before any query",
            ));
        }
        if repeatable && !self.read_only() {
            let error = match snapshot_before {
                true => SqlError::new(
                    SqlState::ActiveSqlTransaction,
                    "transaction read-write mode must be set before any query",
                ),
                false => SqlError::unsupported(
                    "REPEATABLE READ is supported only in READ ONLY transactions: pgwide \
                     keeps a snapshot for reading, and writes read the latest rows; use \
                     BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                ),
            };
            return Err(error);
        }
        Ok(())
    }

    /// Whether the transaction a statement runs in is read-only: the block's
    /// `transaction_read_only`, or outside a block `default_transaction_read_only`.
    pub(super) fn read_only(&self) -> bool {
        let setting = match self.transaction.is_some() {
            true => "transaction_read_only",
            false => "default_transaction_read_only",
        };
        self.settings.value(setting) == Some("on")
    }

    /// 25006 if a statement running `command` (one that changes what is stored) would
    /// run in a read-only transaction, as PostgreSQL refuses it.
    pub(super) fn allow_write(&self, command: Option<&'static str>) -> SqlResult<()> {
        match command {
            Some(command) if self.read_only() => Err(SqlError::new(
                SqlState::ReadOnlySqlTransaction,
                format!("cannot execute {command} in a read-only transaction"),
            )),
            _ => Ok(()),
        }
    }

    /// Ends the transaction block, if any: SET LOCAL values and cursors without HOLD end
    /// with it.
    pub(super) fn end_transaction(&mut self) -> Option<Transaction> {
        self.settings.end_transaction();
        self.cursors.retain(|_, cursor| cursor.held());
        self.sync_query_settings();
        self.transaction.take()
    }

    /// What the last statement left once the client read its rows or sent its COPY
    /// data: an error aborts an open transaction block, a COPY's rows are staged in
    /// it, and the `set_config` changes a DataFusion query made are applied.
    pub(super) fn finish_query(&mut self) {
        let failed = self.aftermath.take_failed();
        let copied = self.aftermath.take_staged();
        // A query whose rows ended in an error sends none of its notifications.
        if failed {
            self.notifications.truncate(self.statement_notifications);
        }
        if let Some(transaction) = self.transaction.as_mut() {
            transaction.failed |= failed;
            if let Some(staged) = copied {
                transaction.staged = staged;
            }
        }
        let Some(engine) = self.query_engine.get() else {
            return;
        };
        let changes = engine.take_config_changes();
        if changes.is_empty() {
            return;
        }
        let in_transaction = self.transaction.is_some();
        for change in changes {
            // `set_config` checked the change already; only a race with a later SET
            // could make it fail here.
            if let Err(e) = self.settings.set_config(
                &change.name,
                change.value.as_deref(),
                change.local,
                in_transaction,
            ) {
                tracing::warn!(setting = %change.name, error = %e.message(), "set_config change not applied");
            }
        }
        self.sync_query_settings();
    }

    /// Shows the session's settings to `current_setting` after they changed.
    pub(super) fn sync_query_settings(&self) {
        if let Some(engine) = self.query_engine.get() {
            engine.sync_settings(&self.settings);
        }
    }
}
