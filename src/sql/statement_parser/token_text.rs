//! SQL text from sqlparser's tokens, for the respellings that rewrite a statement's
//! tokens before it is parsed. A token's own `Display` writes a string literal's or a
//! quoted identifier's value between quotes without doubling the quotes inside it, so
//! `'It''s'` came back as `'It's'`: a syntax error, or, where the quote was followed by
//! more SQL, a different statement. Here each token is written as it must be read back.

use sqlparser::tokenizer::{Token, Word};

/// Whether `sql` holds `word` anywhere, in any case: the respellings ask before they
/// tokenize. Compared in place: every statement passes here, and a copy of a long one
/// costs.
pub fn mentions(sql: &str, word: &[u8]) -> bool {
    sql.as_bytes()
        .windows(word.len())
        .any(|w| w.eq_ignore_ascii_case(word))
}

/// Whether `sql` may hold a DDL statement: it holds `create`, `alter` or `drop`. The
/// respellings of DDL ask this before tokenizing, so queries that merely mention their
/// word (a `users` table, `current_database()`) are not tokenized an extra time.
pub fn mentions_ddl(sql: &str) -> bool {
    mentions(sql, b"create") || mentions(sql, b"alter") || mentions(sql, b"drop")
}

/// The SQL text of `tokens`, in order, read back as the same tokens.
pub fn sql_text<'t>(tokens: impl IntoIterator<Item = &'t Token>) -> String {
    tokens.into_iter().map(token_text).collect()
}

/// One token as SQL text.
pub fn token_text(token: &Token) -> String {
    let doubled = |s: &str, quote: char| s.replace(quote, &format!("{quote}{quote}"));
    match token {
        Token::SingleQuotedString(s) => format!("'{}'", doubled(s, '\'')),
        Token::NationalStringLiteral(s) => format!("N'{}'", doubled(s, '\'')),
        // The value is unescaped: backslashes and quotes are escaped again.
        Token::EscapedStringLiteral(s) => {
            format!("E'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
        }
        Token::Word(Word {
            value,
            quote_style: Some('"'),
            ..
        }) => format!("\"{}\"", doubled(value, '"')),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    #[test]
    fn tokens_read_back_as_the_same_tokens() {
        for sql in [
            "SELECT 'It''s', E'a\\nb\\'c\\\\', \"we\"\"ird\", N'x''y', $$a'b$$",
            "INSERT INTO t VALUES ('x'';DROP TABLE t;--')",
        ] {
            let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
                .tokenize()
                .expect("tokenizes");
            let again = Tokenizer::new(&PostgreSqlDialect {}, &sql_text(&tokens))
                .tokenize()
                .expect("tokenizes again");
            assert_eq!(tokens, again, "{sql}");
        }
    }
}
