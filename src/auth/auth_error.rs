//! The auth layer's error: what went wrong with a role, a password or a privilege, with
//! the name it concerns. Its SQLSTATEs are chosen in `crate::sqlstate`.

/// An error of roles, passwords or privileges.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AuthError {
    #[error("role \"{name}\" does not exist")]
    RoleNotFound { name: String },
    #[error("role \"{name}\" already exists")]
    RoleExists { name: String },
    #[error("empty password is not allowed")]
    EmptyPassword,
    /// Making a password's SCRAM verifier failed.
    #[error("{reason}")]
    Hashing { reason: String },
    /// Reading or writing the role records failed.
    #[error("cannot store roles: {reason}")]
    Store { reason: String },
    #[error("corrupt role record {key}: {reason}")]
    CorruptRole { key: String, reason: String },
    #[error("permission denied to {action}")]
    NotSuperuser { action: String },
    #[error("permission denied for table {table}")]
    TablePrivilege { table: String },
    /// The role may not connect to the database; the connection ends.
    #[error("permission denied for database \"{database}\"")]
    NoConnectPrivilege { database: String },
}

pub type AuthResult<T> = Result<T, AuthError>;
