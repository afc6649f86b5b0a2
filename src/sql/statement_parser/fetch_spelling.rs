//! `FETCH` as PostgreSQL spells it and sqlparser does not read: without a direction
//! (`FETCH c`, `FETCH FROM c`: the next row), without `FROM`/`IN` (`FETCH 5 c`), and
//! `FORWARD` without a count (one row). Rewritten to the spelling sqlparser reads,
//! `FETCH NEXT FROM c`, before parsing.
//!
//! `MOVE`, which sqlparser does not read at all, is a FETCH that returns no rows: it is
//! read as the FETCH it spells and marked (`mark_move`) for the cursor statements.

use sqlparser::ast::{Ident, ObjectName, Statement};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

/// `sql` respelled when it is one FETCH statement sqlparser would refuse.
pub(super) fn respell(sql: &str) -> Option<String> {
    // Only a FETCH is tokenized: every other statement passes at the cost of a compare.
    let start = sql.trim_start().get(..5)?;
    if !start.eq_ignore_ascii_case("fetch") {
        return None;
    }
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let mut words: Vec<Token> = tokens
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    while matches!(words.last(), Some(Token::SemiColon)) {
        words.pop();
    }
    let (first, rest) = words.split_first()?;
    if !is_keyword(first, Keyword::FETCH) {
        return None;
    }
    let (name, before) = rest.split_last()?;
    if !matches!(name, Token::Word(w) if w.keyword == Keyword::NoKeyword || w.quote_style.is_some())
    {
        return None;
    }
    let mut direction: Vec<String> = before.iter().map(ToString::to_string).collect();
    let has_position = before
        .last()
        .is_some_and(|t| is_keyword(t, Keyword::FROM) || is_keyword(t, Keyword::IN));
    if has_position {
        direction.pop();
    }
    let bare_forward = matches!(before.first(), Some(t) if is_keyword(t, Keyword::FORWARD))
        && direction.len() == 1;
    if has_position && !direction.is_empty() && !bare_forward {
        return None;
    }
    if direction.is_empty() {
        direction.push("NEXT".into());
    } else if bare_forward {
        direction.push("1".into());
    }
    Some(format!("FETCH {} FROM {name}", direction.join(" ")))
}

/// The FETCH a `MOVE` statement spells (`MOVE 3 IN c` is `FETCH 3 IN c`), if `sql` is
/// one.
pub(super) fn move_as_fetch(sql: &str) -> Option<String> {
    let trimmed = sql.trim_start();
    let (word, rest) = trimmed.split_at(trimmed.find(char::is_whitespace)?);
    word.eq_ignore_ascii_case("move")
        .then(|| format!("FETCH{rest}"))
}

/// The `INTO` target that marks a FETCH as a MOVE. A NUL cannot reach pgwide in a
/// client's SQL (the protocol ends strings with one), so no FETCH a client writes
/// carries it.
pub const MOVE_MARKER: &str = "\0move";

/// Marks a FETCH parsed from a MOVE.
pub(super) fn mark_move(statement: &mut Statement) {
    if let Statement::Fetch { into, .. } = statement {
        *into = Some(ObjectName::from(vec![Ident::new(MOVE_MARKER)]));
    }
}

fn is_keyword(token: &Token, keyword: Keyword) -> bool {
    matches!(token, Token::Word(w) if w.keyword == keyword && w.quote_style.is_none())
}

#[cfg(test)]
mod tests {
    use super::{move_as_fetch, respell};

    #[test]
    fn fetch_takes_postgresqls_spellings() {
        assert_eq!(respell("FETCH c").as_deref(), Some("FETCH NEXT FROM c"));
        assert_eq!(
            respell("fetch from c;").as_deref(),
            Some("FETCH NEXT FROM c")
        );
        assert_eq!(
            respell("FETCH 5 \"My c\"").as_deref(),
            Some("FETCH 5 FROM \"My c\"")
        );
        assert_eq!(
            respell("FETCH FORWARD IN c").as_deref(),
            Some("FETCH FORWARD 1 FROM c")
        );
        assert_eq!(respell("FETCH FORWARD 5 FROM c"), None);
        assert_eq!(respell("FETCH ALL IN c"), None);
        assert_eq!(respell("SELECT 1"), None);
    }

    #[test]
    fn move_is_the_fetch_it_spells() {
        assert_eq!(
            move_as_fetch("MOVE 3 IN c").as_deref(),
            Some("FETCH 3 IN c")
        );
        assert_eq!(move_as_fetch("  move\tc").as_deref(), Some("FETCH\tc"));
        assert_eq!(move_as_fetch("MOVEMENT c"), None);
        assert_eq!(move_as_fetch("SELECT 1"), None);
    }
}
