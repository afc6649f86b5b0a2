//! `RESET TIME ZONE`, PostgreSQL's SQL-standard spelling of `RESET timezone` (as `SET
//! TIME ZONE` is of `SET timezone`), which sqlparser does not read. Asked only after
//! sqlparser refused a text, so other statements are never tokenized an extra time.

use super::token_text::sql_text;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

/// `sql` with each `RESET TIME ZONE` statement respelled `RESET timezone`, if it has one.
pub(super) fn respell(sql: &str) -> Option<String> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let mut respelled = Vec::with_capacity(tokens.len());
    let mut changed = false;
    for statement in tokens.split_inclusive(|t| *t == Token::SemiColon) {
        let words: Vec<Keyword> = statement
            .iter()
            .filter(|t| !matches!(t, Token::Whitespace(_) | Token::SemiColon))
            .map(|t| match t {
                Token::Word(word) => word.keyword,
                _ => Keyword::NoKeyword,
            })
            .collect();
        if words != [Keyword::RESET, Keyword::TIME, Keyword::ZONE] {
            respelled.extend(statement.iter().cloned());
            continue;
        }
        changed = true;
        respelled.extend([
            Token::make_keyword("RESET"),
            Token::Whitespace(Whitespace::Space),
            Token::make_word("timezone", None),
        ]);
        if statement.last() == Some(&Token::SemiColon) {
            respelled.push(Token::SemiColon);
        }
    }
    changed.then(|| sql_text(&respelled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_reset_time_zone_is_respelled() {
        assert_eq!(
            respell("SET x = 1; reset time zone; SELECT 'time zone'").as_deref(),
            Some("SET x = 1;RESET timezone; SELECT 'time zone'")
        );
        assert_eq!(
            respell("RESET TIME ZONE").as_deref(),
            Some("RESET timezone")
        );
        assert_eq!(respell("RESET timezone"), None);
        assert_eq!(respell("SELECT time, zone FROM t"), None);
    }
}
