//! The gateway: opens the storage backend and the engine from the configuration, starts
//! background GC, and opens one SQL session per client connection.

use crate::auth::{Access, Roles};
use crate::config::Config;
use crate::engine::{Engine, SystemClock};
use crate::sql::notifications::Notification;
use crate::sql::{Session, SessionFactory, SqlError, SqlResult};
use crate::sqlstate::SqlState;
use crate::storage::{CacheOptions, Cached, SledBackend, SledOptions};
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc::UnboundedReceiver;

pub struct Gateway {
    engine: Arc<Engine>,
    backend: Arc<Cached<SledBackend>>,
    gc: tokio::task::JoinHandle<()>,
    /// The DataFusion memory pool shared by every session.
    query_runtime: Arc<datafusion::execution::runtime_env::RuntimeEnv>,
    /// Setting defaults from the configuration (the timeouts), applied to each session.
    setting_defaults: Vec<(String, String)>,
    /// Roles and grants, stored in the same backend under their own key prefix.
    roles: Arc<Roles>,
}

impl Gateway {
    /// Opens the data directory (sled, behind the row and partition caches) and the
    /// engine.
    pub async fn open(config: &Config) -> SqlResult<Arc<Gateway>> {
        let caches = config.cache_sizes();
        tracing::info!(
            sled_cache_mb = caches.sled_cache_mb,
            row_cache_mb = caches.row_cache_mb,
            partition_cache_mb = caches.partition_cache_mb,
            "cache sizes"
        );
        let sled = SledBackend::open(
            &config.data_dir,
            SledOptions {
                durable: config.durable,
                cache_capacity: caches.sled_cache_mb.saturating_mul(1024 * 1024),
                ..SledOptions::default()
            },
        )
        .map_err(|e| {
            SqlError::fatal(
                SqlState::IoError,
                format!(
                    "cannot open data directory {}: {e}",
                    config.data_dir.display()
                ),
            )
        })?;
        let backend = Arc::new(Cached::new(
            sled,
            CacheOptions {
                partition_cache_bytes: caches.partition_cache_mb.saturating_mul(1024 * 1024),
                row_cache_bytes: caches.row_cache_mb.saturating_mul(1024 * 1024),
            },
        ));
        let engine = Engine::open(
            backend.clone(),
            Arc::new(SystemClock),
            config.limits.clone(),
        )
        .await?;
        // The engine asks the SQL layer to judge rows against CHECK constraints.
        engine.set_row_rules(Arc::new(crate::sql::CheckRules::default()));
        let engine = Arc::new(engine);
        let roles = Roles::open(backend.clone()).await?;
        roles.set_md5(config.md5_auth);
        let gc = engine.spawn_gc(Duration::from_secs(config.gc_interval_secs.max(1)));
        tracing::info!(data_dir = %config.data_dir.display(), durable = config.durable, "engine open");
        Ok(Arc::new(Gateway {
            engine,
            backend,
            gc,
            query_runtime: crate::sql::query_runtime(config.query_memory_mb)?,
            setting_defaults: config.session_defaults(),
            roles,
        }))
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The role store the server authenticates against.
    pub fn roles(&self) -> &Arc<Roles> {
        &self.roles
    }

    /// Stops GC and makes everything written durable.
    pub async fn shutdown(&self) {
        self.gc.abort();
        if let Err(e) = self.backend.inner().close() {
            tracing::error!("closing the data directory failed: {e}");
        }
    }
}

#[async_trait]
impl SessionFactory for Gateway {
    type Session = Session;

    async fn open(
        &self,
        database: &str,
        user: &str,
        params: &[(String, String)],
    ) -> SqlResult<Session> {
        if self.engine.instance(database).is_err() {
            return Err(SqlError::fatal(
                SqlState::InvalidCatalogName,
                format!("database \"{database}\" does not exist"),
            ));
        }
        // A name that is no role only gets this far under trust: it acts as superuser.
        let access = match self.roles.get(user) {
            Some(_) => Access::role(Arc::clone(&self.roles), user),
            None => Access::trusted(Some(Arc::clone(&self.roles))),
        };
        access.check_connect(database)?;
        Ok(Session::new(
            Arc::clone(&self.engine),
            database.to_string(),
            user.to_string(),
            params,
        )?
        .with_query_runtime(Arc::clone(&self.query_runtime))
        .with_setting_defaults(&self.setting_defaults)?
        .with_access(access))
    }

    /// A notification on channel `stream.<table>` whenever a table's stream has new
    /// committed records, its payload the last new position.
    fn server_notifications(&self) -> Option<UnboundedReceiver<Notification>> {
        let mut appended = self.engine.subscribe_stream();
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                let appended = match appended.recv().await {
                    Ok(appended) => appended,
                    // Only wake-ups were missed: the records are all in the stream.
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => return,
                };
                let notification = Notification {
                    sender: 0,
                    channel: format!("stream.{}", appended.table),
                    payload: appended.position.to_string(),
                };
                if sender.send(notification).is_err() {
                    return;
                }
            }
        });
        Some(receiver)
    }
}
