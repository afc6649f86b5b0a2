//! `SET CONSTRAINTS { ALL | name [, ...] } { DEFERRED | IMMEDIATE }`, which sqlparser
//! does not read (Django sends it before dropping a foreign key, in the same query
//! string). Each one is respelled as the setting `pgwide.set_constraints` with the names
//! and the mode as its value, which `session_commands` checks.

use super::token_text::mentions;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, Tokenizer};

/// The setting a `SET CONSTRAINTS` becomes.
pub const SETTING: &str = "pgwide.set_constraints";

/// `sql` with each `SET CONSTRAINTS` statement respelled, if it has one. The rest of
/// the text is kept byte for byte.
pub(super) fn respell(sql: &str) -> Option<String> {
    if !mentions(sql, b"constraints") {
        return None;
    }
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
        .tokenize_with_location()
        .ok()?;
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(sql.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    // A token's start as a byte offset (locations count lines and characters from 1).
    let offset = |location: Location| -> Option<usize> {
        let line = *line_starts.get(usize::try_from(location.line).ok()?.checked_sub(1)?)?;
        let column = usize::try_from(location.column).ok()?.checked_sub(1)?;
        Some(
            sql[line..]
                .char_indices()
                .nth(column)
                .map_or(sql.len(), |(i, _)| line + i),
        )
    };
    let mut replacements = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        let mut end = at;
        while end < tokens.len() && tokens[end].token != Token::SemiColon {
            end += 1;
        }
        let statement: Vec<&Token> = tokens[at..end].iter().map(|t| &t.token).collect();
        if let Some(value) = set_constraints(&statement) {
            let first = tokens[at..end]
                .iter()
                .find(|t| !matches!(t.token, Token::Whitespace(_)))?;
            let from = offset(first.span.start)?;
            let to = match tokens.get(end) {
                Some(semicolon) => offset(semicolon.span.start)?,
                None => sql.len(),
            };
            let setting = format!("SET {SETTING} TO '{}'", value.replace('\'', "''"));
            replacements.push((from, to, setting));
        }
        at = end + 1;
    }
    if replacements.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len());
    let mut kept = 0;
    for (from, to, setting) in replacements {
        out.push_str(sql.get(kept..from)?);
        out.push_str(&setting);
        kept = to;
    }
    out.push_str(sql.get(kept..)?);
    Some(out)
}

/// The setting's value for one statement's tokens if it is a `SET CONSTRAINTS`: the
/// mode, a colon, then `ALL` or the names (each folded as an identifier) joined by
/// commas.
fn set_constraints(tokens: &[&Token]) -> Option<String> {
    let words: Vec<&Token> = tokens
        .iter()
        .copied()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let [set, constraints, names @ .., mode] = words.as_slice() else {
        return None;
    };
    if !is_keyword(set, Keyword::SET) || !is_word(constraints, "constraints") {
        return None;
    }
    let mode = match mode {
        t if is_word(t, "immediate") => "IMMEDIATE",
        t if is_word(t, "deferred") => "DEFERRED",
        _ => return None,
    };
    if let [all] = names {
        if is_keyword(all, Keyword::ALL) {
            return Some(format!("{mode}:ALL"));
        }
    }
    let mut folded = Vec::new();
    for (i, token) in names.iter().enumerate() {
        match (i % 2, token) {
            (0, Token::Word(w)) => folded.push(match w.quote_style {
                Some(_) => w.value.clone(),
                None => w.value.to_lowercase(),
            }),
            (1, Token::Comma) => {}
            // A qualified name keeps its last part (pgwide has the one schema).
            (1, Token::Period) => {
                folded.pop();
            }
            _ => return None,
        }
    }
    if folded.is_empty() {
        return None;
    }
    Some(format!("{mode}:{}", folded.join(",")))
}

fn is_keyword(token: &Token, keyword: Keyword) -> bool {
    matches!(token, Token::Word(w) if w.keyword == keyword && w.quote_style.is_none())
}

fn is_word(token: &Token, word: &str) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

#[cfg(test)]
mod tests {
    use super::respell;

    #[test]
    fn set_constraints_becomes_the_setting() {
        assert_eq!(
            respell("SET CONSTRAINTS ALL IMMEDIATE").as_deref(),
            Some("SET pgwide.set_constraints TO 'IMMEDIATE:ALL'")
        );
        assert_eq!(
            respell(
                "SET CONSTRAINTS \"Book_fk\", public.b DEFERRED; ALTER TABLE t DROP \
                 CONSTRAINT \"Book_fk\""
            )
            .as_deref(),
            Some(
                "SET pgwide.set_constraints TO 'DEFERRED:Book_fk,b'; ALTER TABLE t DROP \
                 CONSTRAINT \"Book_fk\""
            )
        );
        assert_eq!(respell("SELECT 'constraints'"), None);
        assert_eq!(
            respell("SELECT 'it''s';\nset constraints all deferred ;").as_deref(),
            Some("SELECT 'it''s';\nSET pgwide.set_constraints TO 'DEFERRED:ALL';")
        );
        assert_eq!(respell("SET CONSTRAINTS ALL"), None);
    }
}
