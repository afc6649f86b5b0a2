//! `CREATE SCHEMA` and `DROP SCHEMA`. pgwide keeps every table in one schema, `public`
//! (beside the catalogs' `pg_catalog`, `information_schema` and `pgwide`), so these
//! answer as PostgreSQL would about the schemas there are: creating one that exists is
//! 42P06 (nothing, with IF NOT EXISTS, as migration tools send it for `public`),
//! dropping one that does not is 3F000 (nothing, with IF EXISTS). Creating another
//! schema, or dropping an existing one, is refused (0A000).

use super::object_name;
use crate::sql::pg_catalog::{INFORMATION_SCHEMA, PGWIDE, PG_CATALOG};
use crate::sql::sql_types::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use sqlparser::ast::{ObjectName, SchemaName};

/// The schemas there are.
const SCHEMAS: &[&str] = &["public", PG_CATALOG, INFORMATION_SCHEMA, PGWIDE];

fn exists(name: &str) -> bool {
    SCHEMAS.contains(&name)
}

/// `CREATE SCHEMA [IF NOT EXISTS] name`.
pub fn create(schema: &SchemaName, if_not_exists: bool) -> SqlResult<()> {
    let name = match schema {
        SchemaName::Simple(name) | SchemaName::NamedAuthorization(name, _) => schema_name(name)?,
        SchemaName::UnnamedAuthorization(role) => {
            return Err(SqlError::unsupported(format!(
                "CREATE SCHEMA AUTHORIZATION {role}: pgwide keeps its tables in the one \
                 schema public"
            )))
        }
    };
    // Checked first, as PostgreSQL does, so IF NOT EXISTS does not pass it.
    if name.starts_with("pg_") {
        return Err(SqlError::new(
            SqlState::ReservedName,
            format!(
                "unacceptable schema name \"{name}\": The prefix \"pg_\" is reserved for \
                 system schemas."
            ),
        ));
    }
    match (exists(&name), if_not_exists) {
        (true, true) => Ok(()),
        (true, false) => Err(SqlError::new(
            SqlState::DuplicateSchema,
            format!("schema \"{name}\" already exists"),
        )),
        (false, _) => Err(SqlError::unsupported(format!(
            "CREATE SCHEMA {name}: pgwide keeps its tables in the one schema public"
        ))),
    }
}

/// `DROP SCHEMA [IF EXISTS] names`: every name is checked before anything happens.
pub fn drop(names: &[ObjectName], if_exists: bool) -> SqlResult<()> {
    for name in names {
        let name = schema_name(name)?;
        if exists(&name) {
            return Err(SqlError::unsupported(format!(
                "DROP SCHEMA {name}: pgwide keeps its tables in the one schema public, \
                 which stays"
            )));
        }
        if !if_exists {
            return Err(SqlError::new(
                SqlState::InvalidSchemaName,
                format!("schema \"{name}\" does not exist"),
            ));
        }
    }
    Ok(())
}

fn schema_name(name: &ObjectName) -> SqlResult<String> {
    match object_name(name)? {
        (None, name) => Ok(name),
        (Some(_), _) => Err(SqlError::syntax(format!("bad schema name {name}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::ast::Ident;

    fn named(name: &str) -> SchemaName {
        SchemaName::Simple(ObjectName::from(vec![Ident::new(name)]))
    }

    #[test]
    fn only_the_schemas_there_are_exist() {
        assert!(create(&named("public"), true).is_ok());
        let taken = create(&named("public"), false);
        assert!(matches!(&taken, Err(e) if e.code() == "42P06"), "{taken:?}");
        let other = create(&named("app"), true);
        assert!(matches!(&other, Err(e) if e.code() == "0A000"), "{other:?}");
        let names = |n: &[&str]| -> Vec<ObjectName> {
            n.iter()
                .map(|n| ObjectName::from(vec![Ident::new(*n)]))
                .collect()
        };
        assert!(drop(&names(&["nosuch"]), true).is_ok());
        let missing = drop(&names(&["nosuch"]), false);
        assert!(
            matches!(&missing, Err(e) if e.code() == "3F000"),
            "{missing:?}"
        );
        let public = drop(&names(&["nosuch", "public"]), true);
        assert!(
            matches!(&public, Err(e) if e.code() == "0A000"),
            "{public:?}"
        );
    }
}
