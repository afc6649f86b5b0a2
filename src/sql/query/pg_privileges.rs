//! PostgreSQL's access privilege inquiry functions (`has_table_privilege`,
//! `has_column_privilege`, `has_schema_privilege`, `has_database_privilege`,
//! `pg_has_role`, ...), answered from what pgwide enforces: the role store's table
//! grants and CONNECT, superusers holding everything, and schema changes reserved to
//! superusers. A client that asks before acting (pgAdmin greying out a menu, an ORM
//! choosing whether to create a table) gets the answer the statement itself would get.
//!
//! As in PostgreSQL, the user may be omitted (the session's own), given by name or
//! by OID; the object by name or by OID; and the privilege as a comma-separated list
//! (`'SELECT, INSERT'`: true when any is held), each optionally `WITH GRANT OPTION`
//! (which only a superuser holds: pgwide has no grant options). An unknown name is an
//! error, an unknown OID NULL, an unknown privilege 22023.

use super::named_relation::{resolve, resolve_database, sql_error as error, NamedRelation};
use super::udf::{int, row_by_row, string};
use crate::auth::{Access, Privilege};
use crate::engine::Engine;
use crate::sql::pg_catalog::{self, OWNER};
use crate::sql::sql_error::SqlError;
use crate::sqlstate::SqlState;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::session_state::SessionState;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use std::sync::Arc;

/// Registers the functions for a session of `instance` acting as `user` with `access`.
pub(super) fn register(
    state: &mut SessionState,
    engine: &Arc<Engine>,
    instance: &str,
    user: &str,
    access: &Access,
) -> Result<()> {
    let context = Arc::new(Context {
        engine: Arc::clone(engine),
        instance: instance.to_string(),
        user: user.to_string(),
        access: access.clone(),
    });
    for inquiry in Inquiry::ALL {
        let function = PrivilegeFunction {
            inquiry,
            context: Arc::clone(&context),
            signature: Signature::one_of(vec![TypeSignature::VariadicAny], Volatility::Stable),
        };
        state.register_udf(Arc::new(ScalarUDF::new_from_impl(function)))?;
    }
    Ok(())
}

/// One of the inquiry functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Inquiry {
    Table,
    Column,
    AnyColumn,
    Sequence,
    Schema,
    Database,
    Function,
    Role,
}

impl Inquiry {
    const ALL: [Inquiry; 8] = [
        Inquiry::Table,
        Inquiry::Column,
        Inquiry::AnyColumn,
        Inquiry::Sequence,
        Inquiry::Schema,
        Inquiry::Database,
        Inquiry::Function,
        Inquiry::Role,
    ];

    fn name(self) -> &'static str {
        match self {
            Inquiry::Table => "has_table_privilege",
            Inquiry::Column => "has_column_privilege",
            Inquiry::AnyColumn => "has_any_column_privilege",
            Inquiry::Sequence => "has_sequence_privilege",
            Inquiry::Schema => "has_schema_privilege",
            Inquiry::Database => "has_database_privilege",
            Inquiry::Function => "has_function_privilege",
            Inquiry::Role => "pg_has_role",
        }
    }

    /// The arguments after the optional user: the object (and the column) and the
    /// privilege.
    fn object_arguments(self) -> usize {
        match self {
            Inquiry::Column => 3,
            _ => 2,
        }
    }

    /// The privilege names PostgreSQL accepts for this kind of object.
    fn privileges(self) -> &'static [&'static str] {
        match self {
            Inquiry::Table => &[
                "SELECT",
                "INSERT",
                "UPDATE",
                "DELETE",
                "TRUNCATE",
                "REFERENCES",
                "TRIGGER",
                "RULE",
            ],
            Inquiry::Column | Inquiry::AnyColumn => &["SELECT", "INSERT", "UPDATE", "REFERENCES"],
            Inquiry::Sequence => &["USAGE", "SELECT", "UPDATE"],
            Inquiry::Schema => &["CREATE", "USAGE"],
            Inquiry::Database => &["CREATE", "CONNECT", "TEMPORARY", "TEMP"],
            Inquiry::Function => &["EXECUTE"],
            Inquiry::Role => &["MEMBER", "USAGE"],
        }
    }
}

/// What every function of a session answers from.
struct Context {
    engine: Arc<Engine>,
    instance: String,
    user: String,
    access: Access,
}

/// A privilege as asked for: its name and whether the grant option was.
struct Asked {
    name: String,
    grant_option: bool,
}

/// 22023 for a privilege this kind of object does not have.
fn parse_privileges(inquiry: Inquiry, list: &str) -> Result<Vec<Asked>> {
    // A role's grant option is its ADMIN option; every other object's, GRANT.
    let option_word = match inquiry {
        Inquiry::Role => "ADMIN",
        _ => "GRANT",
    };
    list.split(',')
        .map(|item| {
            let upper = item.trim().to_ascii_uppercase();
            let words: Vec<&str> = upper.split_whitespace().collect();
            let (name, grant_option) = match words.as_slice() {
                [name] => (*name, false),
                [name, "WITH", option, "OPTION"] if *option == option_word => (*name, true),
                _ => ("", false),
            };
            if !inquiry.privileges().contains(&name) {
                return Err(error(
                    SqlState::InvalidParameterValue,
                    format!("unrecognized privilege type: \"{}\"", item.trim()),
                ));
            }
            Ok(Asked {
                name: name.to_string(),
                grant_option,
            })
        })
        .collect()
}

impl Context {
    /// Whose privileges are asked about, and their name: the session's own, or those
    /// of the role named (or with the OID) given; `None` for an OID no role has.
    fn subject(&self, user: Option<&ScalarValue>) -> Result<Option<(Access, String)>> {
        let Some(user) = user else {
            return Ok(Some((self.access.clone(), self.user.clone())));
        };
        let roles = self.access.roles();
        let name = match string(Some(user)) {
            Some(name) => name.to_string(),
            None => {
                let oid = int(Some(user));
                let rows = pg_catalog::role_rows(roles.map(|r| r.as_ref()));
                match rows.into_iter().find(|r| Some(r.oid) == oid) {
                    Some(row) => row.name,
                    None => return Ok(None),
                }
            }
        };
        let access = match roles {
            _ if name == self.user => self.access.clone(),
            Some(roles) if roles.get(&name).is_some() => Access::role(Arc::clone(roles), &name),
            _ if name == OWNER => Access::trusted(roles.cloned()),
            // PUBLIC: the privileges every role has, which is none of the grants.
            Some(roles) if name == "public" => Access::role(Arc::clone(roles), ""),
            _ => {
                return Err(error(
                    SqlState::UndefinedObject,
                    format!("role \"{name}\" does not exist"),
                ))
            }
        };
        Ok(Some((access, name)))
    }

    /// Whether `who` holds `privilege` on `relation`, as pgwide checks it.
    fn holds_on_relation(&self, who: &Access, relation: &NamedRelation, privilege: &str) -> bool {
        if who.is_superuser() {
            return true;
        }
        match relation {
            NamedRelation::Table(table) => {
                let granted = match privilege {
                    "SELECT" => Privilege::Select,
                    "INSERT" => Privilege::Insert,
                    "UPDATE" => Privilege::Update,
                    // TRUNCATE is checked as DELETE: both remove rows.
                    "DELETE" | "TRUNCATE" => Privilege::Delete,
                    // Foreign keys and triggers come with DDL, which superusers alone run.
                    _ => return false,
                };
                who.check_table(table, granted).is_ok()
            }
            // nextval, currval and setval check no privilege.
            NamedRelation::Sequence => matches!(privilege, "SELECT" | "UPDATE" | "USAGE"),
            NamedRelation::Catalog => privilege == "SELECT",
            // pgwide grants nothing on a view: reading one checks the tables it reads.
            NamedRelation::Index(..) | NamedRelation::View => false,
        }
    }

    /// The answer to one call, `None` being SQL NULL.
    fn answer(&self, inquiry: Inquiry, args: &[ScalarValue]) -> Result<Option<bool>> {
        if args.iter().any(ScalarValue::is_null) {
            return Ok(None);
        }
        let objects = inquiry.object_arguments();
        let (user, rest) = match args.len() {
            n if n == objects => (None, args),
            n if n == objects + 1 => (args.first(), &args[1..]),
            n => {
                return Err(DataFusionError::External(Box::new(
                    SqlError::undefined_function(format!(
                        "function {}() does not take {n} arguments",
                        inquiry.name()
                    )),
                )))
            }
        };
        let Some((who, who_name)) = self.subject(user)? else {
            return Ok(None);
        };
        let (object, privileges) = (&rest[0], &rest[rest.len() - 1]);
        let Some(list) = string(Some(privileges)) else {
            return Ok(None);
        };
        let asked = parse_privileges(inquiry, list)?;
        let superuser = who.is_superuser();
        let holds: Box<dyn Fn(&str) -> bool> = match inquiry {
            Inquiry::Table | Inquiry::AnyColumn | Inquiry::Sequence | Inquiry::Column => {
                let Some(relation) = resolve(&self.engine, &self.instance, object)? else {
                    return Ok(None);
                };
                if inquiry == Inquiry::Sequence && !matches!(relation, NamedRelation::Sequence) {
                    return Err(error(
                        SqlState::WrongObjectType,
                        format!("\"{}\" is not a sequence", display(object)),
                    ));
                }
                if inquiry == Inquiry::Column && !self.column_exists(&relation, object, &rest[1])? {
                    return Ok(None);
                }
                Box::new(move |p| self.holds_on_relation(&who, &relation, p))
            }
            Inquiry::Schema => {
                self.schema(object)?;
                // USAGE of every schema is everyone's; creating in one is DDL.
                Box::new(move |p| superuser || p == "USAGE")
            }
            Inquiry::Database => {
                let Some(database) = resolve_database(&self.engine, object)? else {
                    return Ok(None);
                };
                Box::new(move |p| {
                    superuser || (p == "CONNECT" && who.check_connect(&database).is_ok())
                })
            }
            // Every role may call every function, as PostgreSQL's default grant to PUBLIC.
            Inquiry::Function => Box::new(|_| true),
            Inquiry::Role => {
                let Some((_, role)) = self.subject(Some(object))? else {
                    return Ok(None);
                };
                // pgwide has no role membership: a role is a member of itself alone.
                Box::new(move |_| superuser || role == who_name)
            }
        };
        Ok(Some(
            asked
                .iter()
                .any(|a| (!a.grant_option || superuser) && holds(&a.name)),
        ))
    }

    /// Whether the column (a name or an attribute number) exists: 42703 for an unknown
    /// name, `false` (NULL) for an unknown number, as PostgreSQL answers.
    fn column_exists(
        &self,
        relation: &NamedRelation,
        table: &ScalarValue,
        column: &ScalarValue,
    ) -> Result<bool> {
        let NamedRelation::Table(meta) = relation else {
            return Ok(true);
        };
        if let Some(name) = string(Some(column)) {
            if pg_catalog::attnum(meta, name).is_some() {
                return Ok(true);
            }
            let table = string(Some(table)).map_or_else(|| meta.name.clone(), str::to_string);
            return Err(error(
                SqlState::UndefinedColumn,
                format!("column \"{name}\" of relation \"{table}\" does not exist"),
            ));
        }
        let number = int(Some(column)).unwrap_or(0);
        Ok(number >= 1 && number <= pg_catalog::attribute_count(meta))
    }

    /// 3F000 unless `object` names (or is the OID of) a schema pgwide has.
    fn schema(&self, object: &ScalarValue) -> Result<()> {
        const SCHEMAS: [(&str, i64); 5] = [
            (pg_catalog::PG_CATALOG, pg_catalog::PG_CATALOG_OID),
            ("public", pg_catalog::PUBLIC_OID),
            (
                pg_catalog::INFORMATION_SCHEMA,
                pg_catalog::INFORMATION_SCHEMA_OID,
            ),
            (pg_catalog::PGWIDE, -1),
            ("versions", -1),
        ];
        let known = match string(Some(object)) {
            Some(name) => SCHEMAS.iter().any(|(n, _)| *n == name),
            None => SCHEMAS
                .iter()
                .any(|(_, oid)| Some(*oid) == int(Some(object))),
        };
        if known {
            return Ok(());
        }
        Err(error(
            SqlState::InvalidSchemaName,
            format!("schema \"{}\" does not exist", display(object)),
        ))
    }
}

fn display(value: &ScalarValue) -> String {
    string(Some(value)).map_or_else(|| value.to_string(), str::to_string)
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Context({}, {})", self.instance, self.user)
    }
}

/// One inquiry function of a session.
#[derive(Debug)]
struct PrivilegeFunction {
    inquiry: Inquiry,
    context: Arc<Context>,
    signature: Signature,
}

impl PartialEq for PrivilegeFunction {
    fn eq(&self, other: &Self) -> bool {
        self.inquiry == other.inquiry
    }
}
impl Eq for PrivilegeFunction {}
impl std::hash::Hash for PrivilegeFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inquiry.hash(state)
    }
}

impl ScalarUDFImpl for PrivilegeFunction {
    fn name(&self) -> &str {
        self.inquiry.name()
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        row_by_row(args, &DataType::Boolean, |values| {
            Ok(ScalarValue::Boolean(
                self.context.answer(self.inquiry, values)?,
            ))
        })
    }
}
