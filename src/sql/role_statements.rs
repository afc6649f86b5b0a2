//! Role and privilege statements: CREATE ROLE / CREATE USER, ALTER ROLE, DROP ROLE,
//! GRANT and REVOKE (CONNECT on databases; SELECT, INSERT, UPDATE, DELETE on tables).
//! Only superusers manage roles and grants; a role may change its own password.

use super::ddl::{object_name, table_name};
use super::expr::{fold, Params};
use super::pg_catalog::{DATABASE_OWNER, OWNER};
use super::session_state::SessionState;
use super::sql_types::{Datum, SqlError, SqlResult, StatementResult};
use super::statement_handler::{Claim, StatementHandler};
use crate::auth::{
    missing_role, Access, AuthError, Privilege, PrivilegeSet, Role, Roles, TableGrant,
};
use crate::engine::Engine;
use crate::sqlstate::SqlState;
use sqlparser::ast::{self, Statement};

/// The handler of role and privilege statements.
pub(super) struct RoleStatements;

impl StatementHandler for RoleStatements {
    /// Planned when it runs: what it does depends on the roles then.
    type Plan = Box<Statement>;

    fn writes(_: &Box<Statement>) -> Option<&'static str> {
        Some("a role or privilege change")
    }

    fn plan(_: &SessionState, statement: Box<Statement>, _: &mut Params) -> Claim<Box<Statement>> {
        if handles(&statement) {
            Claim::Planned(Ok(statement))
        } else {
            Claim::NotMine(statement)
        }
    }

    async fn execute(
        state: &mut SessionState,
        plan: &Box<Statement>,
        _: Vec<Datum>,
    ) -> SqlResult<StatementResult> {
        execute(
            &state.access,
            &state.engine,
            &state.instance,
            &state.user,
            plan,
        )
        .await
    }
}

/// Whether `statement` is one this module runs.
fn handles(statement: &Statement) -> bool {
    matches!(
        statement,
        Statement::CreateRole(_)
            | Statement::AlterRole { .. }
            | Statement::Grant(_)
            | Statement::Revoke(_)
            | Statement::Drop {
                object_type: ast::ObjectType::Role | ast::ObjectType::User,
                ..
            }
    )
}

/// CREATE USER means LOGIN unless NOLOGIN is given.
pub fn default_login(statement: &mut Statement) {
    if let Statement::CreateRole(create) = statement {
        create.login.get_or_insert(true);
    }
}

/// Runs a statement [`handles`] accepted, for `user` of `instance`.
async fn execute(
    access: &Access,
    engine: &Engine,
    instance: &str,
    user: &str,
    statement: &Statement,
) -> SqlResult<StatementResult> {
    let roles = access
        .roles()
        .ok_or_else(|| SqlError::unsupported("roles are not enabled on this server"))?;
    match statement {
        Statement::CreateRole(create) => {
            access.require_superuser("create role")?;
            for name in &create.names {
                let name = role_name(name)?;
                let exists = roles.get(&name).is_some() || is_builtin(&name);
                if create.if_not_exists && exists {
                    continue;
                }
                let mut role = Role {
                    name: name.clone(),
                    login: create.login.unwrap_or(false),
                    superuser: create.superuser.unwrap_or(false),
                    ..Role::default()
                };
                // A superuser has CREATEDB, CREATEROLE and BYPASSRLS (pg_roles shows
                // them): saying so is accepted, giving them to another role is not.
                let implied = |flag: Option<bool>| flag.filter(|_| !role.superuser);
                unsupported_flags(&[
                    (implied(create.create_db), "CREATEDB"),
                    (implied(create.create_role), "CREATEROLE"),
                    (create.replication, "REPLICATION"),
                    (implied(create.bypassrls), "BYPASSRLS"),
                ])?;
                if create.connection_limit.is_some() || create.valid_until.is_some() {
                    return Err(SqlError::unsupported(
                        "CONNECTION LIMIT and VALID UNTIL are not supported",
                    ));
                }
                if let Some(password) = &create.password {
                    roles.set_password(&mut role, password_text(password)?.as_deref())?;
                }
                if exists {
                    return Err(SqlError::new(
                        SqlState::DuplicateObject,
                        format!("role \"{name}\" already exists"),
                    ));
                }
                roles.create(role).await?;
            }
            Ok(StatementResult::command("CREATE ROLE"))
        }
        Statement::AlterRole { name, operation } => {
            let name = fold(name);
            alter(access, roles, user, &name, operation).await?;
            Ok(StatementResult::command("ALTER ROLE"))
        }
        Statement::Drop {
            if_exists, names, ..
        } => {
            access.require_superuser("drop role")?;
            for name in names {
                let name = role_name(name)?;
                if name == user {
                    return Err(SqlError::new(
                        SqlState::ObjectInUse,
                        "current user cannot be dropped",
                    ));
                }
                if is_builtin(&name) {
                    return Err(SqlError::new(
                        SqlState::DependentObjectsStillExist,
                        format!(
                            "cannot drop role {name} because it is required by the database system"
                        ),
                    ));
                }
                if !roles.remove(&name).await? && !if_exists {
                    return Err(missing_role(&name).into());
                }
            }
            Ok(StatementResult::command("DROP ROLE"))
        }
        Statement::Grant(grant) => {
            access.require_superuser("grant privileges")?;
            change(
                roles,
                engine,
                instance,
                &grant.privileges,
                grant.objects.as_ref(),
                &grant.grantees,
                false,
            )
            .await?;
            Ok(StatementResult::command("GRANT"))
        }
        Statement::Revoke(revoke) => {
            access.require_superuser("revoke privileges")?;
            change(
                roles,
                engine,
                instance,
                &revoke.privileges,
                revoke.objects.as_ref(),
                &revoke.grantees,
                true,
            )
            .await?;
            Ok(StatementResult::command("REVOKE"))
        }
        _ => Err(SqlError::internal("not a role statement")),
    }
}

/// The roles every database has (pg_roles lists them) whether or not the role store
/// holds a record of them: the owner `postgres` and `pg_database_owner`.
fn is_builtin(name: &str) -> bool {
    name == OWNER || name == DATABASE_OWNER
}

fn role_name(name: &ast::ObjectName) -> SqlResult<String> {
    match object_name(name)? {
        (None, name) => Ok(name),
        (Some(_), _) => Err(SqlError::syntax(format!("invalid role name {name}"))),
    }
}

fn unsupported_flags(flags: &[(Option<bool>, &str)]) -> SqlResult<()> {
    match flags.iter().find(|(value, _)| *value == Some(true)) {
        Some((_, name)) => Err(SqlError::unsupported(format!(
            "role option {name} is not supported"
        ))),
        None => Ok(()),
    }
}

/// The password of `PASSWORD '...'`; `None` for `PASSWORD NULL`.
fn password_text(password: &ast::Password) -> SqlResult<Option<String>> {
    match password {
        ast::Password::NullPassword => Ok(None),
        ast::Password::Password(ast::Expr::Value(v)) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s) => {
                Ok(Some(s.clone()))
            }
            ast::Value::Null => Ok(None),
            other => Err(SqlError::syntax(format!(
                "password must be a string literal, not {other}"
            ))),
        },
        ast::Password::Password(other) => Err(SqlError::syntax(format!(
            "password must be a string literal, not {other}"
        ))),
    }
}

async fn alter(
    access: &Access,
    roles: &Roles,
    user: &str,
    name: &str,
    operation: &ast::AlterRoleOperation,
) -> SqlResult<()> {
    let ast::AlterRoleOperation::WithOptions { options } = operation else {
        return Err(SqlError::unsupported(format!(
            "ALTER ROLE {operation} is not supported"
        )));
    };
    let own_password_only = name == user
        && options
            .iter()
            .all(|o| matches!(o, ast::RoleOption::Password(_)));
    if !own_password_only {
        access.require_superuser("alter role")?;
    }
    let mut password = None;
    for option in options {
        if let ast::RoleOption::Password(p) = option {
            password = Some(password_text(p)?);
        }
    }
    if name == OWNER && roles.get(name).is_none() {
        // The owner exists before anyone records it: the first ALTER (setting its
        // password, typically) gives it the record that keeps the change.
        let owner = Role {
            name: OWNER.to_string(),
            login: true,
            superuser: true,
            ..Role::default()
        };
        match roles.create(owner).await {
            Ok(()) | Err(AuthError::RoleExists { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    // Hashing is slow (PBKDF2): done before taking the store's write lock.
    let mut hashed = Role {
        name: name.to_string(),
        ..Role::default()
    };
    if let Some(password) = &password {
        roles.set_password(&mut hashed, password.as_deref())?;
    }
    roles
        .update(name, |role| {
            let superuser = options.iter().fold(role.superuser, |was, o| match o {
                ast::RoleOption::SuperUser(on) => *on,
                _ => was,
            });
            for option in options {
                match option {
                    ast::RoleOption::Login(on) => role.login = *on,
                    ast::RoleOption::SuperUser(on) => role.superuser = *on,
                    ast::RoleOption::Inherit(_) => {}
                    ast::RoleOption::Password(_) => {
                        role.scram = hashed.scram.take();
                        role.md5 = hashed.md5.take();
                    }
                    ast::RoleOption::CreateDB(false)
                    | ast::RoleOption::CreateRole(false)
                    | ast::RoleOption::Replication(false)
                    | ast::RoleOption::BypassRLS(false) => {}
                    // What a superuser has (pg_roles shows it), so accepted for one.
                    ast::RoleOption::CreateDB(true)
                    | ast::RoleOption::CreateRole(true)
                    | ast::RoleOption::BypassRLS(true)
                        if superuser => {}
                    other => {
                        return Err(SqlError::unsupported(format!(
                            "role option {other} is not supported"
                        )))
                    }
                }
            }
            Ok(())
        })
        .await
}

/// What a GRANT/REVOKE names.
enum Object {
    Databases(Vec<String>),
    Tables(Vec<TableGrant>),
}

fn privileges(privileges: &ast::Privileges, object: &str) -> SqlResult<(PrivilegeSet, bool)> {
    let actions = match privileges {
        ast::Privileges::All { .. } => {
            return Ok((PrivilegeSet::of(&Privilege::ALL), false));
        }
        ast::Privileges::Actions(actions) => actions,
    };
    let mut set = Vec::new();
    let mut connect = false;
    for action in actions {
        match action {
            ast::Action::Select { columns: None } => set.push(Privilege::Select),
            ast::Action::Insert { columns: None } => set.push(Privilege::Insert),
            ast::Action::Update { columns: None } => set.push(Privilege::Update),
            ast::Action::Delete => set.push(Privilege::Delete),
            ast::Action::Connect => connect = true,
            other => {
                return Err(SqlError::unsupported(format!(
                    "privilege {other} on {object} is not supported"
                )))
            }
        }
    }
    Ok((PrivilegeSet::of(&set), connect))
}

async fn change(
    roles: &Roles,
    engine: &Engine,
    instance: &str,
    privilege_list: &ast::Privileges,
    objects: Option<&ast::GrantObjects>,
    grantees: &[ast::Grantee],
    revoke: bool,
) -> SqlResult<()> {
    let object = match objects {
        Some(ast::GrantObjects::Databases(names)) => {
            let connect_only = match privilege_list {
                ast::Privileges::All { .. } => true,
                ast::Privileges::Actions(actions) => {
                    !actions.is_empty() && actions.iter().all(|a| matches!(a, ast::Action::Connect))
                }
            };
            if !connect_only {
                return Err(SqlError::new(
                    SqlState::InvalidGrantOperation,
                    "invalid privilege type for database: only CONNECT is supported",
                ));
            }
            let mut databases = Vec::new();
            for name in names {
                let (_, db) = object_name(name)?;
                if engine.instance(&db).is_err() {
                    return Err(SqlError::new(
                        SqlState::InvalidCatalogName,
                        format!("database \"{db}\" does not exist"),
                    ));
                }
                databases.push(db);
            }
            Object::Databases(databases)
        }
        Some(ast::GrantObjects::Tables(names)) => {
            let (set, connect) = privileges(privilege_list, "a table")?;
            if connect {
                return Err(SqlError::new(
                    SqlState::InvalidGrantOperation,
                    "invalid privilege type CONNECT for table",
                ));
            }
            let mut tables = Vec::new();
            for name in names {
                let name = table_name(name)?;
                if engine.view(instance, &name).is_some() {
                    return Err(SqlError::unsupported(format!(
                        "GRANT and REVOKE on view \"{name}\" are not supported: reading a view \
                         checks the privileges on the tables it reads"
                    )));
                }
                let table = engine.table(instance, &name)?;
                tables.push(TableGrant {
                    instance: table.instance.clone(),
                    table: table.name.clone(),
                    table_id: table.id,
                    privileges: set,
                });
            }
            Object::Tables(tables)
        }
        _ => {
            return Err(SqlError::unsupported(
                "GRANT and REVOKE work ON DATABASE and ON [TABLE] only",
            ))
        }
    };
    let mut names = Vec::new();
    for grantee in grantees {
        match (&grantee.grantee_type, &grantee.name) {
            (
                ast::GranteesType::Role | ast::GranteesType::User | ast::GranteesType::None,
                Some(ast::GranteeName::ObjectName(name)),
            ) => names.push(role_name(name)?),
            _ => {
                return Err(SqlError::unsupported(format!(
                    "grantee {grantee} is not supported: name a role"
                )))
            }
        }
    }
    for name in &names {
        if roles.get(name).is_none() {
            return Err(missing_role(name).into());
        }
    }
    for name in names {
        roles
            .update(&name, |role| {
                match &object {
                    Object::Databases(databases) => {
                        for db in databases {
                            Roles::change_connect(role, db, revoke);
                        }
                    }
                    Object::Tables(tables) => {
                        for grant in tables {
                            Roles::change_table_grant(role, grant.clone(), revoke);
                        }
                    }
                }
                Ok::<(), AuthError>(())
            })
            .await?;
    }
    Ok(())
}
