//! `DO` blocks, which sqlparser does not read and pgwide cannot run in general (it has
//! no PL/pgSQL). One form is common enough to matter: Sequelize creates every ENUM
//! type as
//!
//! ```sql
//! DO 'BEGIN CREATE TYPE "public"."enum_t_c" AS ENUM(''a'', ''b'');
//!     EXCEPTION WHEN duplicate_object THEN null; END';
//! ```
//!
//! which is a CREATE TYPE whose "already exists" error (42710) is ignored. That form
//! is read as its CREATE TYPE, marked (`mark_ignoring_duplicate`) so the enum types'
//! DDL treats an existing type as done. Any other DO block is refused (0A000).

use crate::sql::sql_error::{SqlError, SqlResult};
use sqlparser::ast::{Ident, ObjectName, ObjectNamePart, Statement};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The first name part that marks a CREATE TYPE as ignoring "already exists". A NUL
/// cannot reach pgwide in a client's SQL (the protocol ends strings with one).
pub const IGNORE_DUPLICATE_MARKER: &str = "\0ignore duplicate_object";

/// `sql` with each `DO` block of the one supported form replaced by its CREATE TYPE,
/// and the positions (among the statements) of those to mark; `None` if `sql` holds
/// no DO block. Another DO block is 0A000.
pub(super) fn respell(sql: &str) -> Option<SqlResult<(String, Vec<usize>)>> {
    // Only text with a statement that may start with DO is tokenized.
    if !may_hold_do(sql) {
        return None;
    }
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let statements = tokens.split(|t| matches!(t, Token::SemiColon));
    let mut respelled = Vec::new();
    let mut marked = Vec::new();
    let mut any = false;
    // Counts the statements the parser will see: not the empty ones.
    let mut index = 0;
    for statement in statements {
        let words: Vec<&Token> = statement
            .iter()
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .collect();
        index += usize::from(!words.is_empty());
        let is_do = matches!(words.first(), Some(Token::Word(w)) if w.keyword == Keyword::DO && w.quote_style.is_none());
        if !is_do {
            respelled.push(super::token_text::sql_text(statement.iter()));
            continue;
        }
        any = true;
        let body = match words.as_slice() {
            [_, Token::SingleQuotedString(body)] => body.clone(),
            [_, Token::DollarQuotedString(body)] => body.value.clone(),
            _ => return Some(Err(unsupported())),
        };
        match create_ignoring_duplicate(&body) {
            Some(create) => {
                respelled.push(create);
                marked.push(index - 1);
            }
            None => return Some(Err(unsupported())),
        }
    }
    any.then(|| Ok((respelled.join(";"), marked)))
}

/// Whether a statement of `sql` may start with `DO` (a `;` inside a string may make
/// this say yes wrongly, which costs only a tokenization).
fn may_hold_do(sql: &str) -> bool {
    sql.split(';').any(|statement| {
        let statement = statement.trim_start().as_bytes();
        statement.len() > 2
            && statement[..2].eq_ignore_ascii_case(b"do")
            && matches!(statement[2], b' ' | b'\t' | b'\n' | b'\r' | b'\'' | b'$')
    })
}

fn unsupported() -> SqlError {
    SqlError::unsupported(
        "DO blocks are not supported (pgwide runs no PL/pgSQL); the one form it runs is \
         BEGIN CREATE TYPE ...; EXCEPTION WHEN duplicate_object THEN NULL; END",
    )
}

/// The CREATE TYPE of `BEGIN CREATE TYPE ...; EXCEPTION WHEN duplicate_object THEN
/// NULL; END`, if `body` is that.
fn create_ignoring_duplicate(body: &str) -> Option<String> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, body)
        .tokenize()
        .ok()?;
    let words: Vec<&Token> = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let keyword = |t: &Token, k: Keyword| matches!(t, Token::Word(w) if w.keyword == k);
    let named =
        |t: &Token, name: &str| matches!(t, Token::Word(w) if w.value.eq_ignore_ascii_case(name));
    let (first, rest) = words.split_first()?;
    if !keyword(first, Keyword::BEGIN) {
        return None;
    }
    let end = rest.iter().position(|t| matches!(t, Token::SemiColon))?;
    let (statement, handler) = rest.split_at(end);
    let handler: Vec<&Token> = handler.iter().skip(1).copied().collect();
    let handler_matches = matches!(
        handler.as_slice(),
        [exception, when, condition, then, null, Token::SemiColon, finish]
            | [exception, when, condition, then, null, Token::SemiColon, finish, Token::SemiColon]
            if keyword(exception, Keyword::EXCEPTION)
                && keyword(when, Keyword::WHEN)
                && named(condition, "duplicate_object")
                && keyword(then, Keyword::THEN)
                && keyword(null, Keyword::NULL)
                && keyword(finish, Keyword::END)
    );
    let creates_type = matches!(statement, [create, ty, ..]
        if keyword(create, Keyword::CREATE) && keyword(ty, Keyword::TYPE));
    (handler_matches && creates_type).then(|| {
        statement
            .iter()
            .map(|token| super::token_text::token_text(token))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// Marks a CREATE TYPE read from a DO block as ignoring "already exists".
pub(super) fn mark_ignoring_duplicate(statement: &mut Statement) {
    if let Statement::CreateType { name, .. } = statement {
        name.0.insert(
            0,
            ObjectNamePart::Identifier(Ident::new(IGNORE_DUPLICATE_MARKER)),
        );
    }
}

/// `name` without the mark, and whether it had it.
pub fn strip_ignore_duplicate(name: &ObjectName) -> (ObjectName, bool) {
    match name.0.split_first() {
        Some((ObjectNamePart::Identifier(first), rest))
            if first.value == IGNORE_DUPLICATE_MARKER =>
        {
            (ObjectName(rest.to_vec()), true)
        }
        _ => (name.clone(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequelizes_enum_block_is_read_as_its_create_type() {
        let sql = "DROP TYPE IF EXISTS \"public\".\"enum_Users_status\"; DO 'BEGIN CREATE TYPE \
                   \"public\".\"enum_Users_status\" AS ENUM(''new'', ''active''); EXCEPTION \
                   WHEN duplicate_object THEN null; END';";
        let (respelled, marked) = respell(sql).expect("a DO block").expect("the known form");
        assert_eq!(marked, vec![1]);
        assert!(
            respelled.contains("CREATE TYPE \"public\" . \"enum_Users_status\" AS ENUM"),
            "{respelled}"
        );
        assert!(respelled.contains("'new'"), "{respelled}");
    }

    #[test]
    fn other_do_blocks_are_refused() {
        for sql in [
            "DO 'BEGIN DROP TABLE t; END'",
            "DO $$BEGIN CREATE TYPE x AS ENUM ('a'); EXCEPTION WHEN others THEN null; END$$",
            "DO LANGUAGE plpgsql 'BEGIN NULL; END'",
        ] {
            let refused = respell(sql).expect("a DO block");
            assert_eq!(refused.map_err(|e| e.code()).err(), Some("0A000"), "{sql}");
        }
        assert!(respell("SELECT 'do it'").is_none());
        assert!(respell("SELECT 1; select 2").is_none());
    }
}
