//! Who may connect and what they may touch. Roles carry SCRAM-SHA-256 verifiers (and,
//! when enabled, MD5 hashes) and their grants, persisted through the storage backend;
//! this module also holds the server's authentication policy: trust on a loopback
//! address until the first password exists, passwords from then on, and refusing to
//! listen elsewhere without authentication.

mod auth_error;
mod privileges;
mod roles;
pub mod scram;

pub use auth_error::{AuthError, AuthResult};
pub use privileges::{Access, Privilege, PrivilegeSet, TableGrant};
pub use roles::{missing as missing_role, Role, Roles, AUTH_PREFIX};

use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::sync::Arc;

/// How clients authenticate (`auth` in the config file).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// Passwords once any role has one; before that, local clients only, trusted.
    #[default]
    Auto,
    /// Never ask for a password, on any address. For isolated networks and tests.
    Trust,
}

/// What the wire server needs to authenticate clients.
#[derive(Debug, Clone, Default)]
pub struct AuthOptions {
    /// The role store; `None` (in-process tests) trusts every client as a superuser.
    pub roles: Option<Arc<Roles>>,
    pub mode: AuthMode,
    /// Ask for MD5 instead of SCRAM from roles that have an MD5 hash.
    pub md5: bool,
}

impl AuthOptions {
    /// Whether a client connecting now must prove a password.
    pub fn password_required(&self) -> bool {
        self.mode == AuthMode::Auto && self.roles.as_ref().is_some_and(|r| r.any_password())
    }
}

/// Decides at start-up whether the server may listen on `addr`: the line to log
/// about how clients are authenticated, or why it must not start.
pub fn startup_policy(addr: &SocketAddr, mode: AuthMode, roles: &Roles) -> Result<String, String> {
    match mode {
        AuthMode::Trust => Ok(format!(
            "authentication: trust (auth = \"trust\"): every client on {addr} connects as any user without a password"
        )),
        AuthMode::Auto if roles.any_password() => Ok(
            "authentication: SCRAM-SHA-256 passwords required for every connection".to_string(),
        ),
        AuthMode::Auto if addr.ip().is_loopback() => Ok(format!(
            "authentication: trusting local connections on {addr}: no role has a password yet (CREATE ROLE ... PASSWORD, or --superuser-password-file, turns passwords on)"
        )),
        AuthMode::Auto => Err(format!(
            "refusing to listen on {addr} without authentication: no role has a password. \
             Set a superuser password with --superuser-password-file FILE (or the \
             PGWIDE_SUPERUSER_PASSWORD environment variable), or set auth = \"trust\" \
             in the config file to accept every client without a password"
        )),
    }
}

/// Creates the bootstrap superuser `name` with `password` if no role of that name
/// exists yet; an existing role is left as it is (its password may have been changed
/// with ALTER ROLE since). Returns whether it was created.
pub async fn bootstrap_superuser(roles: &Roles, name: &str, password: &str) -> AuthResult<bool> {
    if roles.get(name).is_some() {
        return Ok(false);
    }
    let mut role = Role {
        name: name.to_string(),
        login: true,
        superuser: true,
        ..Role::default()
    };
    roles.set_password(&mut role, Some(password))?;
    roles.create(role).await?;
    Ok(true)
}
