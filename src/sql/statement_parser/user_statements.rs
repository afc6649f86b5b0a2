//! `CREATE USER`, `ALTER USER` and `DROP USER`: PostgreSQL's spellings of the ROLE
//! statements, which sqlparser reads another dialect's way. Each is respelled with ROLE
//! before parsing; a CREATE USER is remembered, as it means LOGIN unless NOLOGIN is
//! given.

use super::token_text::{mentions, mentions_ddl, sql_text};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer, Word};

/// `sql` with its USER statements spelled with ROLE, and the positions (among the
/// statements it holds) of those that were CREATE USER; `None` when it has none (or
/// does not tokenize: the parser reports that).
pub fn respell(sql: &str) -> Option<(String, Vec<usize>)> {
    if !mentions(sql, b"user") || !mentions_ddl(sql) {
        return None;
    }
    let mut tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let mut create_users = Vec::new();
    let mut changed = false;
    let mut statement = 0;
    for segment in tokens.split_mut(|t| *t == Token::SemiColon) {
        let mut words = segment
            .iter_mut()
            .filter(|t| !matches!(t, Token::Whitespace(_)));
        let Some(verb) = words.next().and_then(|t| unquoted_keyword(t)) else {
            continue;
        };
        if let Some(noun) = words.next() {
            let is_user = unquoted_keyword(noun) == Some(Keyword::USER);
            if is_user && matches!(verb, Keyword::CREATE | Keyword::ALTER | Keyword::DROP) {
                *noun = Token::make_keyword("ROLE");
                changed = true;
                if verb == Keyword::CREATE {
                    create_users.push(statement);
                }
            }
        }
        statement += 1;
    }
    changed.then(|| (sql_text(&tokens), create_users))
}

fn unquoted_keyword(token: &Token) -> Option<Keyword> {
    match token {
        Token::Word(Word {
            keyword,
            quote_style: None,
            ..
        }) => Some(*keyword),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_user_statement_is_respelled_and_create_user_remembered() {
        assert_eq!(
            respell("CREATE TABLE t (a INT); create user bob; CREATE ROLE carol; DROP USER x"),
            Some((
                "CREATE TABLE t (a INT); create ROLE bob; CREATE ROLE carol; DROP ROLE x"
                    .to_string(),
                vec![1]
            ))
        );
        assert_eq!(respell("SELECT current_user"), None);
        assert_eq!(respell("SELECT 1 AS \"user\""), None);
    }
}
