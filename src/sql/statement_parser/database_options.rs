//! PostgreSQL's `CREATE DATABASE name [WITH] option [=] value ...` and `ALTER DATABASE
//! name OWNER TO role`, which sqlparser cannot read and which pg_dump and pg_dumpall
//! write. Every pgwide database is UTF8 with the C locale (libc provider), in tablespace
//! `pg_default`, owned by `postgres`, open to connections, not a template, and starts
//! empty (as a copy of `template0` or `template1` would). An option that states one of
//! these facts is accepted and removed before parsing; any other value is refused with
//! 0A000, and an option PostgreSQL does not have is 42601, as there.
//!
//! `ALTER DATABASE name OWNER TO postgres` travels to the schema handler as a marked
//! `CREATE DATABASE` (see [`carried_owner_change`]), which checks that the database
//! exists when it runs. Other ALTER DATABASE forms are refused with 0A000.

use super::token_text::{mentions, mentions_ddl, sql_text};
use crate::sql::sql_error::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use sqlparser::ast::Statement;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

/// Starts the name of the `CREATE DATABASE` that carries an `ALTER DATABASE ... OWNER
/// TO`: no name a user can write starts with a NUL.
const MARKER: &str = "\0alter database owner\0";

/// The one role that owns every database (`pg_database.datdba`).
const OWNER: &str = "postgres";

/// What every pgwide database is, for the refusals' messages.
const WHAT_DATABASES_ARE: &str = "every pgwide database is UTF8 with the C locale (libc), in \
     tablespace pg_default, owned by postgres, allows connections and is not a template";

/// `sql` with the options of its CREATE DATABASE statements checked and removed and
/// its ALTER DATABASE ... OWNER TO statements marked; `None` when it holds neither (or
/// does not tokenize: the parser reports that).
pub fn respell(sql: &str) -> Option<SqlResult<String>> {
    if !mentions(sql, b"database") || !mentions_ddl(sql) {
        return None;
    }
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let mut out = Vec::with_capacity(tokens.len());
    let mut changed = false;
    for (i, statement) in tokens.split(|t| *t == Token::SemiColon).enumerate() {
        if i > 0 {
            out.push(Token::SemiColon);
        }
        let words = Words::of(statement);
        match (words.keyword(0), words.keyword(1)) {
            (Some(Keyword::CREATE), Some(Keyword::DATABASE)) => {
                match create_database(statement, &words) {
                    Ok(Some(respelled)) => {
                        out.extend(respelled);
                        changed = true;
                        continue;
                    }
                    Ok(None) => {}
                    Err(e) => return Some(Err(e)),
                }
            }
            (Some(Keyword::ALTER), Some(Keyword::DATABASE)) => {
                match alter_database(&words) {
                    Ok(marked) => out.push(marked),
                    Err(e) => return Some(Err(e)),
                }
                changed = true;
                continue;
            }
            _ => {}
        }
        out.extend(statement.iter().cloned());
    }
    changed.then(|| Ok(sql_text(&out)))
}

/// The database an `ALTER DATABASE ... OWNER TO` names, if `statement` is the marked
/// `CREATE DATABASE` that [`respell`] made of one.
pub fn carried_owner_change(statement: &Statement) -> Option<String> {
    let Statement::CreateDatabase { db_name, .. } = statement else {
        return None;
    };
    let [part] = db_name.0.as_slice() else {
        return None;
    };
    let name = part.as_ident()?.value.strip_prefix(MARKER)?;
    Some(name.to_string())
}

/// The statement's tokens other than whitespace, with their positions in it.
struct Words<'t> {
    tokens: Vec<(usize, &'t Token)>,
}

impl<'t> Words<'t> {
    fn of(statement: &'t [Token]) -> Self {
        let tokens = statement
            .iter()
            .enumerate()
            .filter(|(_, t)| !matches!(t, Token::Whitespace(_)))
            .collect();
        Words { tokens }
    }

    fn keyword(&self, i: usize) -> Option<Keyword> {
        match self.tokens.get(i)?.1 {
            Token::Word(word) if word.quote_style.is_none() => Some(word.keyword),
            _ => None,
        }
    }

    fn token(&self, i: usize) -> Option<&'t Token> {
        self.tokens.get(i).map(|(_, t)| *t)
    }

    /// An unquoted word folded to lower case, a quoted one as written, a string
    /// literal's value or a number: how an option's name or value reads.
    fn text(&self, i: usize) -> Option<String> {
        match self.token(i)? {
            Token::Word(word) if word.quote_style.is_none() => Some(word.value.to_lowercase()),
            Token::Word(word) => Some(word.value.clone()),
            Token::SingleQuotedString(s) => Some(s.clone()),
            Token::Number(n, _) => Some(n.clone()),
            _ => None,
        }
    }
}

/// `CREATE DATABASE name` with PostgreSQL's options checked and removed; `None` when it
/// has none (sqlparser reads the statement, and the schema handler refuses other
/// dialects' clauses).
fn create_database(statement: &[Token], words: &Words) -> SqlResult<Option<Vec<Token>>> {
    // CREATE DATABASE name: the options start at the fourth word.
    let Some(&(name_at, _)) = words.tokens.get(2) else {
        return Ok(None);
    };
    let mut i = 3;
    if words.keyword(i) == Some(Keyword::WITH) {
        i += 1;
    }
    let Some(first) = words.text(i) else {
        return Ok(None);
    };
    if !is_option(&first) && words.keyword(i - 1) != Some(Keyword::WITH) {
        return Ok(None);
    }
    while i < words.tokens.len() {
        let mut option = words.text(i).unwrap_or_default();
        i += 1;
        if option == "connection" && words.keyword(i) == Some(Keyword::LIMIT) {
            option = "connection limit".to_string();
            i += 1;
        }
        if words.token(i) == Some(&Token::Eq) {
            i += 1;
        }
        let negative = words.token(i) == Some(&Token::Minus);
        if negative {
            i += 1;
        }
        let Some(value) = words.text(i) else {
            return Err(SqlError::syntax(format!(
                "CREATE DATABASE option {} needs a value",
                option.to_uppercase()
            )));
        };
        i += 1;
        let value = if negative { format!("-{value}") } else { value };
        check_option(&option, &value)?;
    }
    Ok(Some(statement[..=name_at].to_vec()))
}

/// The options of PostgreSQL 15's CREATE DATABASE.
fn is_option(name: &str) -> bool {
    matches!(
        name,
        "owner"
            | "template"
            | "encoding"
            | "strategy"
            | "locale"
            | "lc_collate"
            | "lc_ctype"
            | "icu_locale"
            | "locale_provider"
            | "collation_version"
            | "tablespace"
            | "allow_connections"
            | "connection"
            | "is_template"
            | "oid"
    )
}

/// Accepts an option whose value is what every pgwide database is (`DEFAULT` included).
fn check_option(option: &str, value: &str) -> SqlResult<()> {
    let value = value.to_lowercase();
    let true_ = ["true", "on", "yes", "1", "t", "y"];
    let false_ = ["false", "off", "no", "0", "f", "n"];
    let accepted = value == "default"
        || match option {
            "owner" => value == OWNER,
            "template" => value == "template0" || value == "template1",
            "encoding" => ["utf8", "utf-8", "unicode", "6"].contains(&value.as_str()),
            "locale" | "lc_collate" | "lc_ctype" => value == "c" || value == "posix",
            "locale_provider" => value == "libc",
            "tablespace" => value == "pg_default",
            "allow_connections" => true_.contains(&value.as_str()),
            "connection limit" => value == "-1",
            "is_template" => false_.contains(&value.as_str()),
            "strategy" | "icu_locale" | "collation_version" | "oid" => false,
            other => {
                return Err(SqlError::syntax(format!(
                    "option \"{other}\" not recognized"
                )));
            }
        };
    if accepted {
        return Ok(());
    }
    Err(SqlError::new(
        SqlState::FeatureNotSupported,
        format!(
            "CREATE DATABASE ... {} {value} is not supported: {WHAT_DATABASES_ARE}",
            option.to_uppercase()
        ),
    ))
}

/// `ALTER DATABASE name OWNER TO postgres` as its marked carrier; every other form is
/// refused.
fn alter_database(words: &Words) -> SqlResult<Token> {
    let name = match words.token(2) {
        Some(Token::Word(word)) => word.clone(),
        _ => return Err(SqlError::syntax("ALTER DATABASE needs a database name")),
    };
    let owner_to =
        words.keyword(3) == Some(Keyword::OWNER) && words.keyword(4) == Some(Keyword::TO);
    if !owner_to {
        return Err(SqlError::new(
            SqlState::FeatureNotSupported,
            "ALTER DATABASE is supported only as ALTER DATABASE name OWNER TO postgres: \
             databases have no settings of their own and cannot be renamed",
        ));
    }
    let role = words.text(5);
    if words.tokens.len() != 6 || role.is_none() {
        return Err(SqlError::syntax(
            "ALTER DATABASE ... OWNER TO takes one role name",
        ));
    }
    if role.as_deref() != Some(OWNER) {
        return Err(SqlError::new(
            SqlState::FeatureNotSupported,
            format!("ALTER DATABASE ... OWNER TO a role other than {OWNER} is not supported: {WHAT_DATABASES_ARE}"),
        ));
    }
    let database = match name.quote_style {
        Some(_) => name.value,
        None => name.value.to_lowercase(),
    }
    .replace('"', "\"\"");
    Ok(Token::Word(sqlparser::tokenizer::Word {
        value: format!("CREATE DATABASE \"{MARKER}{database}\""),
        quote_style: None,
        keyword: Keyword::NoKeyword,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn respelled(sql: &str) -> Option<Result<String, String>> {
        respell(sql).map(|r| r.map_err(|e| e.to_string()))
    }

    #[test]
    fn pg_dump_options_that_hold_are_removed() {
        let sql = "CREATE DATABASE db2 WITH TEMPLATE = template0 ENCODING = 'UTF8' \
                   LOCALE_PROVIDER = libc LOCALE = 'C'";
        assert_eq!(respelled(sql), Some(Ok("CREATE DATABASE db2".to_string())));
        let sql = "create database x owner postgres connection limit = -1; select 1";
        assert_eq!(
            respelled(sql),
            Some(Ok("create database x; select 1".to_string()))
        );
    }

    #[test]
    fn options_that_do_not_hold_are_refused() {
        for sql in [
            "CREATE DATABASE d ENCODING 'LATIN1'",
            "CREATE DATABASE d WITH LOCALE 'en_US.UTF-8'",
            "CREATE DATABASE d TEMPLATE other",
            "CREATE DATABASE d IS_TEMPLATE true",
            "CREATE DATABASE d OWNER alice",
            "CREATE DATABASE d STRATEGY file_copy",
        ] {
            let Some(Err(message)) = respelled(sql) else {
                panic!("{sql} was not refused");
            };
            assert!(message.contains("not supported"), "{sql}: {message}");
        }
        assert!(matches!(
            respelled("CREATE DATABASE d WITH colour = 'red'"),
            Some(Err(m)) if m.contains("not recognized")
        ));
    }

    #[test]
    fn statements_without_options_are_left_to_the_parser() {
        assert_eq!(respelled("CREATE DATABASE d"), None);
        assert_eq!(respelled("SELECT datname FROM pg_database"), None);
        assert_eq!(respelled("CREATE DATABASE d LOCATION '/x'"), None);
    }

    #[test]
    fn owner_changes_are_carried_and_other_alters_refused() {
        let Some(Ok(sql)) = respelled("ALTER DATABASE \"Db\" OWNER TO postgres") else {
            panic!("not respelled");
        };
        let statements = sqlparser::parser::Parser::parse_sql(&PostgreSqlDialect {}, &sql)
            .expect("the carrier parses");
        assert_eq!(carried_owner_change(&statements[0]), Some("Db".to_string()));
        assert!(matches!(
            respelled("ALTER DATABASE d OWNER TO alice"),
            Some(Err(m)) if m.contains("not supported")
        ));
        assert!(matches!(
            respelled("ALTER DATABASE d RENAME TO e"),
            Some(Err(m)) if m.contains("supported only as")
        ));
    }
}
