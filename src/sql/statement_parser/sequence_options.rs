//! `CREATE SEQUENCE`'s options in any order, as PostgreSQL takes them: sqlparser reads
//! them only in the order INCREMENT, MINVALUE, MAXVALUE, START, CACHE, CYCLE, while
//! Hibernate writes `START 1 INCREMENT 1` and pg_dump `START WITH 1 INCREMENT BY 1`. The
//! options of each CREATE SEQUENCE are put in sqlparser's order before it parses.

use super::token_text::mentions;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The option clauses in the order sqlparser reads them, by their first keyword.
const ORDER: [Keyword; 7] = [
    Keyword::INCREMENT,
    Keyword::MINVALUE,
    Keyword::MAXVALUE,
    Keyword::START,
    Keyword::CACHE,
    Keyword::CYCLE,
    Keyword::OWNED,
];

fn keyword(token: &Token) -> Option<Keyword> {
    match token {
        Token::Word(word) if word.quote_style.is_none() => Some(word.keyword),
        _ => None,
    }
}

/// `sql` with the options of its CREATE SEQUENCE statements reordered; `None` when it
/// has none to reorder (or does not tokenize: the parser reports that).
pub fn reorder(sql: &str) -> Option<String> {
    if !mentions(sql, b"sequence") {
        return None;
    }
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut changed = false;
    let mut i = 0;
    while i < tokens.len() {
        out.push(tokens[i].clone());
        if keyword(&tokens[i]) == Some(Keyword::SEQUENCE) && is_create_sequence(&out) {
            let end = tokens[i + 1..]
                .iter()
                .position(|t| *t == Token::SemiColon)
                .map_or(tokens.len(), |p| i + 1 + p);
            let (mut head, clauses) = clauses(&tokens[i + 1..end]);
            while matches!(head.last(), Some(Token::Whitespace(_))) {
                head.pop();
            }
            let mut sorted = clauses.clone();
            sorted.sort_by_key(|clause| rank(clause));
            changed |= sorted != clauses;
            out.extend(head);
            for clause in sorted {
                out.push(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space));
                out.extend(clause);
            }
            i = end;
            continue;
        }
        i += 1;
    }
    changed.then(|| super::token_text::sql_text(&out))
}

/// Whether the tokens so far end in `CREATE [TEMP | TEMPORARY] SEQUENCE`.
fn is_create_sequence(tokens: &[Token]) -> bool {
    let words: Vec<Keyword> = tokens
        .iter()
        .rev()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .take(3)
        .map(|t| keyword(t).unwrap_or(Keyword::NoKeyword))
        .collect();
    matches!(
        words.as_slice(),
        [Keyword::SEQUENCE, Keyword::CREATE, ..]
            | [
                Keyword::SEQUENCE,
                Keyword::TEMP | Keyword::TEMPORARY,
                Keyword::CREATE
            ]
    )
}

/// What follows `SEQUENCE`, split into the tokens before the first option (the name,
/// `IF NOT EXISTS`, `AS type`) and one token list per option clause.
fn clauses(tokens: &[Token]) -> (Vec<Token>, Vec<Vec<Token>>) {
    let mut head = Vec::new();
    let mut clauses: Vec<Vec<Token>> = Vec::new();
    let mut previous: Option<Keyword> = None;
    for token in tokens {
        if matches!(token, Token::Whitespace(_)) {
            // Kept as written before the first clause; clauses get single spaces.
            if clauses.is_empty() {
                head.push(token.clone());
            }
            continue;
        }
        let word = keyword(token);
        // A clause starts at its keyword; `NO` starts `NO MINVALUE`, `NO MAXVALUE`,
        // `NO CYCLE`; `BY` and `WITH` continue the clause they follow.
        let starts = match word {
            Some(Keyword::NO) => true,
            Some(k) if ORDER.contains(&k) => previous != Some(Keyword::NO),
            _ => false,
        };
        if starts {
            clauses.push(Vec::new());
        }
        match clauses.last_mut() {
            Some(clause) => {
                if !clause.is_empty() {
                    clause.push(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space));
                }
                clause.push(token.clone());
            }
            None => head.push(token.clone()),
        }
        previous = word;
    }
    (head, clauses)
}

/// A clause's place in sqlparser's order (`NO X` sorts as `X`).
fn rank(clause: &[Token]) -> usize {
    let mut words = clause.iter().filter_map(keyword);
    let first = match words.next() {
        Some(Keyword::NO) => words.next(),
        other => other,
    };
    first
        .and_then(|k| ORDER.iter().position(|o| *o == k))
        .unwrap_or(ORDER.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_take_sqlparsers_order() {
        assert_eq!(
            reorder("create sequence hibernate_sequence start 1 increment 1").as_deref(),
            Some("create sequence hibernate_sequence increment 1 start 1")
        );
        assert_eq!(
            reorder(
                "CREATE SEQUENCE public.t_id_seq AS integer START WITH 1 INCREMENT BY 1 \
                 NO MINVALUE NO MAXVALUE CACHE 1; SELECT 1"
            )
            .as_deref(),
            Some(
                "CREATE SEQUENCE public.t_id_seq AS integer INCREMENT BY 1 NO MINVALUE \
                 NO MAXVALUE START WITH 1 CACHE 1; SELECT 1"
            )
        );
        assert_eq!(reorder("CREATE SEQUENCE s INCREMENT 2 START 5"), None);
        assert_eq!(reorder("SELECT nextval('s')"), None);
        assert_eq!(reorder("SELECT 'sequence'"), None);
    }
}
