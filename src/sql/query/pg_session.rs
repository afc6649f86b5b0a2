//! The session and server functions clients call while connecting: `current_user`,
//! `session_user`, `user` and `current_catalog` (SQL keywords PostgreSQL lets a query
//! write without parentheses), `pg_is_in_recovery`, `pg_is_wal_replay_paused` and
//! `format`; `current_setting` and `set_config` come from `pg_settings`.

use super::udf::{string, text, udf, Body};
use crate::sql::expr::quote_ident;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::execution::session_state::SessionState;
use datafusion::execution::FunctionRegistry;
use std::sync::Arc;

/// An argument as `format`'s `%s` shows it: its text form, `None` for NULL.
fn shown(value: &ScalarValue) -> Option<String> {
    if value.is_null() {
        return None;
    }
    if let Some(s) = string(Some(value)) {
        return Some(s.to_string());
    }
    match value {
        ScalarValue::Boolean(Some(b)) => Some(if *b { "t" } else { "f" }.to_string()),
        other => Some(other.to_string()),
    }
}

/// `quote_literal`: a string literal PostgreSQL reads back as `value`.
fn quote_literal(value: &str) -> String {
    if value.contains('\\') {
        format!("E'{}'", value.replace('\\', "\\\\").replace('\'', "''"))
    } else {
        format!("'{}'", value.replace('\'', "''"))
    }
}

/// PostgreSQL's `format(fmt, args...)` with `%s`, `%I`, `%L` and `%%`, including
/// explicit positions (`%2$s`). `None` when the format string is malformed or refers
/// to a missing argument (PostgreSQL raises 22023 there).
pub fn format(fmt: &str, args: &[ScalarValue]) -> Option<String> {
    let mut out = String::new();
    let mut next = 0usize;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut position = String::new();
        while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
            position.push(d);
            chars.next();
        }
        let index = if position.is_empty() {
            next
        } else {
            if chars.next() != Some('$') {
                return None;
            }
            position.parse::<usize>().ok()?.checked_sub(1)?
        };
        match chars.next()? {
            '%' if position.is_empty() => out.push('%'),
            kind @ ('s' | 'I' | 'L') => {
                let value = shown(args.get(index)?);
                next = index + 1;
                match (kind, value) {
                    ('s', Some(v)) => out.push_str(&v),
                    ('s', None) => {}
                    ('I', Some(v)) => out.push_str(&quote_ident(&v)),
                    ('I', None) => return None,
                    ('L', Some(v)) => out.push_str(&quote_literal(&v)),
                    _ => out.push_str("NULL"),
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Registers the session functions on `state`, for the session of `user` on
/// database `instance`.
pub fn register(
    state: &mut SessionState,
    instance: &str,
    user: &str,
    settings: super::pg_settings::SharedSettings,
) -> Result<()> {
    let name = user.to_string();
    let who: Arc<Body> = Arc::new(move |_| text(Some(name.clone())));
    let database = instance.to_string();
    let mut functions: Vec<(&str, DataType, Arc<Body>)> = vec![
        (
            "current_catalog",
            DataType::Utf8,
            Arc::new(move |_| text(Some(database.clone()))),
        ),
        (
            "pg_is_in_recovery",
            DataType::Boolean,
            Arc::new(|_| ScalarValue::Boolean(Some(false))),
        ),
        (
            "pg_is_wal_replay_paused",
            DataType::Boolean,
            Arc::new(|_| ScalarValue::Boolean(Some(false))),
        ),
        (
            "format",
            DataType::Utf8,
            Arc::new(|a| match string(a.first()) {
                Some(fmt) => text(format(fmt, &a[1..])),
                None => text(None),
            }),
        ),
    ];
    for keyword in ["current_user", "session_user", "user", "current_role"] {
        functions.push((keyword, DataType::Utf8, Arc::clone(&who)));
    }
    for (name, returns, body) in functions {
        state.register_udf(Arc::new(udf(name, returns, body)))?;
    }
    register_schema_path(state, user, &settings)?;
    for function in super::pg_settings::functions(settings) {
        state.register_udf(Arc::new(function))?;
    }
    Ok(())
}

/// The schemas a query names tables in without a schema.
const SCHEMAS: &[&str] = &[
    crate::sql::pg_catalog::PG_CATALOG,
    "public",
    crate::sql::pg_catalog::INFORMATION_SCHEMA,
    crate::sql::pg_catalog::PGWIDE,
    crate::sql::relation::VERSIONS_SCHEMA,
];

/// The existing schemas of `search_path`, in its order (`"$user"` is the user's
/// schema, which pgwide never has unless it is one of these), as PostgreSQL computes
/// `current_schemas(false)`; with `implicit`, `pg_catalog` first unless listed.
pub(super) fn schema_path(search_path: &str, user: &str, implicit: bool) -> Vec<String> {
    let mut path: Vec<String> = search_path
        .split(',')
        .map(|part| {
            let part = part.trim();
            match part.strip_prefix('"').and_then(|p| p.strip_suffix('"')) {
                Some(quoted) => quoted.replace("\"\"", "\""),
                None => part.to_lowercase(),
            }
        })
        .map(|name| {
            if name == "$user" {
                user.to_string()
            } else {
                name
            }
        })
        .filter(|name| SCHEMAS.contains(&name.as_str()))
        .collect();
    path.dedup();
    let catalog = crate::sql::pg_catalog::PG_CATALOG;
    if implicit && !path.iter().any(|n| n == catalog) {
        path.insert(0, catalog.to_string());
    }
    path
}

/// `current_schemas(implicit)` and `current_schema()` from the session's `search_path`:
/// pg_dump empties it and then reads them to learn what its output should set.
fn register_schema_path(
    state: &mut SessionState,
    user: &str,
    settings: &super::pg_settings::SharedSettings,
) -> Result<()> {
    let path = {
        let (settings, user) = (settings.clone(), user.to_string());
        move |implicit: bool| {
            let search_path = settings.get("search_path").unwrap_or_default();
            schema_path(&search_path, &user, implicit)
        }
    };
    let first = path.clone();
    state.register_udf(Arc::new(udf(
        "current_schema",
        DataType::Utf8,
        Arc::new(move |_| text(first(false).into_iter().next())),
    )))?;
    // A real text[], so clients can index it (pgjdbc: `current_schemas(true)[1]`).
    state.register_udf(Arc::new(udf(
        "current_schemas",
        DataType::new_list(DataType::Utf8, true),
        Arc::new(move |args| {
            let implicit = !matches!(args.first(), Some(ScalarValue::Boolean(Some(false))));
            let names: Vec<ScalarValue> =
                path(implicit).into_iter().map(|n| text(Some(n))).collect();
            ScalarValue::List(ScalarValue::new_list_nullable(&names, &DataType::Utf8))
        }),
    )))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> ScalarValue {
        ScalarValue::Utf8(Some(v.to_string()))
    }

    #[test]
    fn current_schemas_follow_the_search_path() {
        assert_eq!(
            schema_path("\"$user\", public", "tester", false),
            ["public"]
        );
        assert_eq!(
            schema_path("\"$user\", public", "tester", true),
            ["pg_catalog", "public"]
        );
        // pg_dump's: nothing but the implicit catalog.
        assert!(schema_path("", "tester", false).is_empty());
        assert_eq!(schema_path("", "tester", true), ["pg_catalog"]);
        assert_eq!(
            schema_path("Public, pg_catalog, nowhere", "tester", true),
            ["public", "pg_catalog"]
        );
    }

    #[test]
    fn format_quotes_identifiers_and_literals_like_postgres() {
        assert_eq!(
            format(
                "%I.%I = %L (%s%%)",
                &[
                    s("public"),
                    s("My T"),
                    s("it's"),
                    ScalarValue::Int64(Some(5))
                ]
            ),
            Some("public.\"My T\" = 'it''s' (5%)".to_string())
        );
        assert_eq!(
            format("%2$s %1$s", &[s("a"), s("b")]),
            Some("b a".to_string())
        );
        assert_eq!(
            format("%L", &[ScalarValue::Utf8(None)]),
            Some("NULL".into())
        );
        assert_eq!(format("%s %s", &[s("a")]), None);
        assert_eq!(format("%x", &[s("a")]), None);
    }
}
