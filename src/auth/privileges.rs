//! What a session's role may do: CONNECT on an instance (database) and SELECT /
//! INSERT / UPDATE / DELETE on a table. Checked live against the role store, so a
//! REVOKE or DROP ROLE takes effect on the next statement of every open session.

use super::auth_error::{AuthError, AuthResult};
use super::roles::Roles;
use crate::engine::TableMeta;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One table privilege.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Privilege {
    Select,
    Insert,
    Update,
    Delete,
}

impl Privilege {
    pub const ALL: [Privilege; 4] = [
        Privilege::Select,
        Privilege::Insert,
        Privilege::Update,
        Privilege::Delete,
    ];

    fn bit(self) -> u8 {
        match self {
            Privilege::Select => 1,
            Privilege::Insert => 2,
            Privilege::Update => 4,
            Privilege::Delete => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Privilege::Select => "SELECT",
            Privilege::Insert => "INSERT",
            Privilege::Update => "UPDATE",
            Privilege::Delete => "DELETE",
        }
    }
}

/// A set of table privileges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrivilegeSet(u8);

impl PrivilegeSet {
    pub fn of(privileges: &[Privilege]) -> Self {
        PrivilegeSet(privileges.iter().fold(0, |bits, p| bits | p.bit()))
    }
    pub fn contains(self, p: Privilege) -> bool {
        self.0 & p.bit() != 0
    }
    pub fn union(self, other: PrivilegeSet) -> Self {
        PrivilegeSet(self.0 | other.0)
    }
    pub fn minus(self, other: PrivilegeSet) -> Self {
        PrivilegeSet(self.0 & !other.0)
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// Privileges granted on one table. The table id (never reused) ties the grant to
/// this table: a table dropped and created again under the same name starts with none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableGrant {
    pub instance: String,
    pub table: String,
    pub table_id: u32,
    pub privileges: PrivilegeSet,
}

/// Who a session acts as.
#[derive(Debug, Clone)]
enum Who {
    /// Trust authentication with a name that is no role, or a server without a role
    /// store: everything is allowed, as for a superuser.
    Trusted,
    /// A role of the store; checked live, so a dropped role can do nothing.
    Role(String),
}

/// A session's access rights, and the role store its role statements change.
#[derive(Debug, Clone)]
pub struct Access {
    roles: Option<Arc<Roles>>,
    who: Who,
}

impl Default for Access {
    fn default() -> Self {
        Access::trusted(None)
    }
}

impl Access {
    /// Everything allowed (trust, or no role store).
    pub fn trusted(roles: Option<Arc<Roles>>) -> Access {
        Access {
            roles,
            who: Who::Trusted,
        }
    }

    /// The rights of `role`, looked up in `roles` at every check.
    pub fn role(roles: Arc<Roles>, role: &str) -> Access {
        Access {
            roles: Some(roles),
            who: Who::Role(role.to_string()),
        }
    }

    /// The role store, if roles are enabled.
    pub fn roles(&self) -> Option<&Arc<Roles>> {
        self.roles.as_ref()
    }

    /// Whether every check passes without looking (trusted sessions): lets the hot
    /// path skip working out what a statement touches.
    pub fn unrestricted(&self) -> bool {
        matches!(self.who, Who::Trusted)
    }

    /// The role's current record; `None` for trusted sessions and dropped roles.
    fn current(&self) -> Option<Option<super::Role>> {
        match (&self.who, &self.roles) {
            (Who::Trusted, _) => None,
            (Who::Role(name), Some(roles)) => Some(roles.get(name)),
            (Who::Role(_), None) => Some(None),
        }
    }

    pub fn is_superuser(&self) -> bool {
        match self.current() {
            None => true,
            Some(role) => role.is_some_and(|r| r.superuser),
        }
    }

    /// 42501 unless the session is a superuser.
    pub fn require_superuser(&self, action: &str) -> AuthResult<()> {
        if self.is_superuser() {
            return Ok(());
        }
        Err(AuthError::NotSuperuser {
            action: action.to_string(),
        })
    }

    /// 42501 FATAL unless the role may connect to `instance`.
    pub fn check_connect(&self, instance: &str) -> AuthResult<()> {
        let Some(role) = self.current() else {
            return Ok(());
        };
        let allowed = role.is_some_and(|r| r.superuser || r.connect.iter().any(|d| d == instance));
        if allowed {
            return Ok(());
        }
        Err(AuthError::NoConnectPrivilege {
            database: instance.to_string(),
        })
    }

    /// 42501 unless the role holds `privilege` on `table`.
    pub fn check_table(&self, table: &TableMeta, privilege: Privilege) -> AuthResult<()> {
        let Some(role) = self.current() else {
            return Ok(());
        };
        let allowed = role.is_some_and(|r| {
            r.superuser
                || r.tables.iter().any(|g| {
                    g.table_id == table.id
                        && g.instance == table.instance
                        && g.privileges.contains(privilege)
                })
        });
        if allowed {
            return Ok(());
        }
        Err(AuthError::TablePrivilege {
            table: table.name.clone(),
        })
    }
}
