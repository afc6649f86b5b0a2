//! The role store: roles with their password verifiers and grants, kept in memory
//! and persisted through the storage [`Backend`] under keys `0x02 "role/" name`
//! (one JSON record per role, so a role and its grants change atomically). Passwords
//! are never stored: only a SCRAM-SHA-256 verifier and, while MD5 is enabled, an MD5
//! hash.

use super::auth_error::{AuthError, AuthResult};
use super::privileges::TableGrant;
use super::scram;
use crate::storage::{Backend, Direction, KeyRange, WriteBatch};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// First key byte of everything the auth layer stores (0x00 is the engine catalog,
/// 0x01 table rows).
pub const AUTH_PREFIX: u8 = 0x02;
const ROLE_KEY: &[u8] = b"role/";

/// One role.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Role {
    pub name: String,
    pub login: bool,
    pub superuser: bool,
    /// `SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>`.
    pub scram: Option<String>,
    /// `md5<hex>`, kept only for passwords set while MD5 authentication is enabled.
    pub md5: Option<String>,
    /// Instances (databases) the role may connect to.
    pub connect: Vec<String>,
    pub tables: Vec<TableGrant>,
}

impl Role {
    pub fn has_password(&self) -> bool {
        self.scram.is_some() || self.md5.is_some()
    }
}

/// A password as given in CREATE/ALTER ROLE: `None` clears it.
pub type NewPassword<'a> = Option<&'a str>;

pub struct Roles {
    backend: Arc<dyn Backend>,
    cache: RwLock<BTreeMap<String, Role>>,
    /// Serializes writers so the cache and the backend change in the same order.
    writes: tokio::sync::Mutex<()>,
    /// Keep an MD5 hash beside the SCRAM verifier when passwords are set.
    md5: AtomicBool,
}

impl std::fmt::Debug for Roles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Roles").finish_non_exhaustive()
    }
}

fn key(name: &str) -> Vec<u8> {
    let mut key = vec![AUTH_PREFIX];
    key.extend_from_slice(ROLE_KEY);
    key.extend_from_slice(name.as_bytes());
    key
}

fn storage_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::Store {
        reason: e.to_string(),
    }
}

impl Roles {
    /// Loads every role from `backend`.
    pub async fn open(backend: Arc<dyn Backend>) -> AuthResult<Arc<Roles>> {
        let mut prefix = vec![AUTH_PREFIX];
        prefix.extend_from_slice(ROLE_KEY);
        let entries = backend
            .scan(&KeyRange::prefix(&prefix), Direction::Forward, usize::MAX)
            .await
            .map_err(storage_error)?;
        let mut roles = BTreeMap::new();
        for (key, value) in entries {
            let role: Role =
                serde_json::from_slice(&value).map_err(|e| AuthError::CorruptRole {
                    key: String::from_utf8_lossy(&key).into_owned(),
                    reason: e.to_string(),
                })?;
            roles.insert(role.name.clone(), role);
        }
        Ok(Arc::new(Roles {
            backend,
            cache: RwLock::new(roles),
            writes: tokio::sync::Mutex::new(()),
            md5: AtomicBool::new(false),
        }))
    }

    /// Whether passwords set from now on also get an MD5 hash (MD5 authentication on).
    pub fn set_md5(&self, on: bool) {
        self.md5.store(on, Ordering::Relaxed);
    }

    pub fn md5_enabled(&self) -> bool {
        self.md5.load(Ordering::Relaxed)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Role>> {
        // A panic while holding the lock cannot leave a half-written map: every
        // write replaces one whole entry.
        self.cache.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get(&self, name: &str) -> Option<Role> {
        self.read().get(name).cloned()
    }

    pub fn list(&self) -> Vec<Role> {
        self.read().values().cloned().collect()
    }

    /// Whether any role has a password: from then on every client must authenticate.
    pub fn any_password(&self) -> bool {
        self.read().values().any(Role::has_password)
    }

    /// Sets or clears `role`'s password (a SCRAM verifier given verbatim is kept).
    pub fn set_password(&self, role: &mut Role, password: NewPassword<'_>) -> AuthResult<()> {
        match password {
            None => {
                role.scram = None;
                role.md5 = None;
            }
            Some("") => {
                return Err(AuthError::EmptyPassword);
            }
            Some(p) if scram::is_verifier(p) => {
                role.scram = Some(p.to_string());
                role.md5 = None;
            }
            Some(p) => {
                role.scram =
                    Some(scram::scram_verifier(p).map_err(|reason| AuthError::Hashing { reason })?);
                role.md5 = self.md5_enabled().then(|| scram::md5_hash(p, &role.name));
            }
        }
        Ok(())
    }

    /// Stores `role` and puts it in the cache (callers hold `writes`).
    async fn save(&self, role: Role) -> AuthResult<()> {
        self.persist(&role).await?;
        self.cache
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(role.name.clone(), role);
        Ok(())
    }

    async fn persist(&self, role: &Role) -> AuthResult<()> {
        let value = serde_json::to_vec(role).map_err(storage_error)?;
        let mut batch = WriteBatch::default();
        batch.put(key(&role.name), value);
        self.backend.write(batch).await.map_err(storage_error)
    }

    /// Adds a new role; 42710 if the name is taken.
    pub async fn create(&self, role: Role) -> AuthResult<()> {
        let _writer = self.writes.lock().await;
        if self.read().contains_key(&role.name) {
            return Err(AuthError::RoleExists { name: role.name });
        }
        self.save(role).await
    }

    /// Changes a role with `change`; 42704 if it does not exist.
    pub async fn update<E: From<AuthError>>(
        &self,
        name: &str,
        change: impl FnOnce(&mut Role) -> Result<(), E>,
    ) -> Result<(), E> {
        let _writer = self.writes.lock().await;
        let mut role = self.get(name).ok_or_else(|| missing(name))?;
        change(&mut role)?;
        Ok(self.save(role).await?)
    }

    /// Removes a role and its grants; `Ok(false)` if it did not exist.
    pub async fn remove(&self, name: &str) -> AuthResult<bool> {
        let _writer = self.writes.lock().await;
        if !self.read().contains_key(name) {
            return Ok(false);
        }
        let mut batch = WriteBatch::default();
        batch.delete(key(name));
        self.backend.write(batch).await.map_err(storage_error)?;
        self.cache
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        Ok(true)
    }

    /// Adds (or with `revoke`, removes) table privileges of `role`.
    pub fn change_table_grant(role: &mut Role, grant: TableGrant, revoke: bool) {
        let existing = role
            .tables
            .iter_mut()
            .find(|g| g.table_id == grant.table_id && g.instance == grant.instance);
        match (existing, revoke) {
            (Some(g), false) => g.privileges = g.privileges.union(grant.privileges),
            (Some(g), true) => g.privileges = g.privileges.minus(grant.privileges),
            (None, false) => role.tables.push(grant),
            (None, true) => {}
        }
        role.tables.retain(|g| !g.privileges.is_empty());
    }

    /// Gives (or takes away) CONNECT on `instance`.
    pub fn change_connect(role: &mut Role, instance: &str, revoke: bool) {
        role.connect.retain(|d| d != instance);
        if !revoke {
            role.connect.push(instance.to_string());
        }
    }
}

/// The error for a role that does not exist.
pub fn missing(name: &str) -> AuthError {
    AuthError::RoleNotFound {
        name: name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemoryBackend;

    #[tokio::test]
    async fn roles_persist_and_never_hold_the_password() {
        let backend: Arc<dyn Backend> = Arc::new(MemoryBackend::new());
        let roles = Roles::open(Arc::clone(&backend)).await.unwrap();
        let mut alice = Role {
            name: "alice".into(),
            login: true,
            ..Role::default()
        };
        roles.set_password(&mut alice, Some("s3cret-pw")).unwrap();
        roles.create(alice.clone()).await.unwrap();
        let e = roles.create(alice).await.unwrap_err();
        assert_eq!(crate::sqlstate::SqlState::from(&e).code(), "42710");
        let stored = backend.get(&key("alice")).await.unwrap().unwrap();
        assert!(!String::from_utf8_lossy(&stored).contains("s3cret-pw"));
        let reopened = Roles::open(Arc::clone(&backend)).await.unwrap();
        let alice = reopened.get("alice").unwrap();
        assert!(alice.scram.unwrap().starts_with("SCRAM-SHA-256$4096:"));
        assert!(alice.md5.is_none(), "no MD5 hash unless MD5 is enabled");
        assert!(reopened.any_password());
        assert!(reopened.remove("alice").await.unwrap());
        assert!(!reopened.remove("alice").await.unwrap());
        assert!(Roles::open(backend).await.unwrap().get("alice").is_none());
    }
}
