//! `FOR NO KEY UPDATE` and `FOR KEY SHARE`, the lock strengths sqlparser does not
//! read (Django's `select_for_update(no_key=True)` writes the first). pgwide's row
//! locks are optimistic (`row_locks`): every strength holds the rows to COMMIT
//! alike, so they are read as `FOR UPDATE` and `FOR SHARE`.

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

/// `sql` with the weaker lock strengths respelled, when it has one.
pub(super) fn respell(sql: &str) -> Option<String> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    // Positions of the words, whitespace and comments passed over.
    let words: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i], Token::Whitespace(_)))
        .collect();
    let mut dropped = vec![false; tokens.len()];
    let mut found = false;
    let word = |n: usize, keyword: Keyword| {
        words
            .get(n)
            .is_some_and(|&i| is_keyword(&tokens[i], keyword))
    };
    for n in 0..words.len() {
        if !word(n, Keyword::FOR) {
            continue;
        }
        // The words respelled away: `NO KEY` of FOR NO KEY UPDATE, `KEY` of FOR KEY
        // SHARE, with the whitespace after them.
        let (first, kept) = if word(n + 1, Keyword::NO)
            && word(n + 2, Keyword::KEY)
            && word(n + 3, Keyword::UPDATE)
        {
            (n + 1, n + 3)
        } else if word(n + 1, Keyword::KEY) && word(n + 2, Keyword::SHARE) {
            (n + 1, n + 2)
        } else {
            continue;
        };
        dropped[words[first]..words[kept]]
            .iter_mut()
            .for_each(|d| *d = true);
        found = true;
    }
    found.then(|| {
        tokens
            .iter()
            .zip(&dropped)
            .filter(|(_, dropped)| !**dropped)
            .map(|(token, _)| super::token_text::token_text(token))
            .collect()
    })
}

fn is_keyword(token: &Token, keyword: Keyword) -> bool {
    matches!(token, Token::Word(w) if w.keyword == keyword && w.quote_style.is_none())
}

#[cfg(test)]
mod tests {
    use super::respell;

    #[test]
    fn weaker_strengths_read_as_update_and_share() {
        assert_eq!(
            respell("SELECT * FROM t WHERE k = 1 FOR NO KEY UPDATE").as_deref(),
            Some("SELECT * FROM t WHERE k = 1 FOR UPDATE")
        );
        assert_eq!(
            respell("select 1 from t for key  share of t nowait").as_deref(),
            Some("select 1 from t for share of t nowait")
        );
        assert_eq!(respell("SELECT 'FOR NO KEY UPDATE' FROM t"), None);
        assert_eq!(respell("SELECT * FROM t FOR UPDATE"), None);
        assert_eq!(
            respell("SELECT k FROM t FOR KEY SHARE").as_deref(),
            Some("SELECT k FROM t FOR SHARE")
        );
    }
}
