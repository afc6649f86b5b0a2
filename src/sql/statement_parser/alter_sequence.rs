//! `ALTER SEQUENCE`, which sqlparser cannot read. A query string holding one is split
//! into its statements; each ALTER SEQUENCE is read here (so a syntax error is 42601
//! when the string is parsed, as for any statement) and travels to the schema handler
//! as a marked `CREATE SEQUENCE` that carries its text, to be read again into an
//! `AlterSequence` when it runs. The other statements of the string parse as usual.

use super::token_text::mentions;
use crate::sql::sql_error::{SqlError, SqlResult};
use sqlparser::ast::{DataType, Expr, Ident, ObjectName, SequenceOptions, Statement};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, Tokenizer};

/// Starts the name of the `CREATE SEQUENCE` that carries an ALTER SEQUENCE's text: no
/// name a user can write starts with a NUL.
const MARKER: &str = "\0alter sequence\0";

/// An `ALTER SEQUENCE` statement.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterSequence {
    pub if_exists: bool,
    pub name: ObjectName,
    /// `AS type`.
    pub data_type: Option<DataType>,
    /// `INCREMENT`, `[NO] MINVALUE`, `[NO] MAXVALUE`, `START`, `CACHE`, `[NO] CYCLE`.
    pub options: Vec<SequenceOptions>,
    /// `RESTART` (`Some(None)`) or `RESTART WITH n`.
    pub restart: Option<Option<Expr>>,
    /// `OWNED BY table.column` or `OWNED BY NONE` (`Some(None)`).
    pub owned_by: Option<Option<ObjectName>>,
}

/// The statements of `sql` when it holds an ALTER SEQUENCE; `None` when it holds none
/// (or does not tokenize: the parser reports that).
pub fn parse(sql: &str) -> Option<SqlResult<Vec<Statement>>> {
    if !mentions(sql, b"alter") || !mentions(sql, b"sequence") {
        return None;
    }
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let statements: Vec<&[Token]> = tokens.split(|t| *t == Token::SemiColon).collect();
    if !statements.iter().any(|tokens| is_alter_sequence(tokens)) {
        return None;
    }
    let mut parsed = Vec::new();
    for tokens in statements {
        if tokens.iter().all(is_space) {
            continue;
        }
        let text = super::token_text::sql_text(tokens.iter());
        if is_alter_sequence(tokens) {
            if let Err(e) = read(tokens.to_vec()) {
                return Some(Err(e));
            }
            parsed.push(carrier(text));
        } else {
            match super::parse(&text) {
                Ok(statements) => parsed.extend(statements),
                Err(e) => return Some(Err(e)),
            }
        }
    }
    Some(Ok(parsed))
}

/// The ALTER SEQUENCE a statement carries, if it is one `parse` made.
pub fn carried(statement: &Statement) -> Option<SqlResult<AlterSequence>> {
    let Statement::CreateSequence { name, .. } = statement else {
        return None;
    };
    let [part] = name.0.as_slice() else {
        return None;
    };
    let text = part.as_ident()?.value.strip_prefix(MARKER)?;
    let tokens = match Tokenizer::new(&PostgreSqlDialect {}, text).tokenize() {
        Ok(tokens) => tokens,
        Err(e) => return Some(Err(SqlError::syntax(e.to_string()))),
    };
    Some(read(tokens))
}

fn carrier(text: String) -> Statement {
    Statement::CreateSequence {
        temporary: false,
        if_not_exists: false,
        name: ObjectName::from(vec![Ident::new(format!("{MARKER}{text}"))]),
        data_type: None,
        sequence_options: Vec::new(),
        owned_by: None,
    }
}

fn is_space(token: &Token) -> bool {
    matches!(token, Token::Whitespace(_))
}

/// Whether a statement's tokens start with `ALTER SEQUENCE`.
fn is_alter_sequence(tokens: &[Token]) -> bool {
    let mut words = tokens.iter().filter(|t| !is_space(t)).map(|t| match t {
        Token::Word(word) if word.quote_style.is_none() => word.keyword,
        _ => Keyword::NoKeyword,
    });
    words.next() == Some(Keyword::ALTER) && words.next() == Some(Keyword::SEQUENCE)
}

/// Reads one ALTER SEQUENCE statement, in PostgreSQL's grammar: one or more options in
/// any order, each at most once.
fn read(tokens: Vec<Token>) -> SqlResult<AlterSequence> {
    let mut parser = Parser::new(&PostgreSqlDialect {}).with_tokens(tokens);
    read_with(&mut parser).map_err(|e| match e {
        Read::Syntax(e) => SqlError::syntax(e.to_string().replace("sql parser error: ", "")),
        Read::Refused(e) => e,
    })
}

enum Read {
    Syntax(ParserError),
    Refused(SqlError),
}

impl From<ParserError> for Read {
    fn from(e: ParserError) -> Self {
        Read::Syntax(e)
    }
}

fn read_with(parser: &mut Parser) -> Result<AlterSequence, Read> {
    parser.expect_keywords(&[Keyword::ALTER, Keyword::SEQUENCE])?;
    let if_exists = parser.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let name = parser.parse_object_name(false)?;
    for (words, form) in [
        (&[Keyword::RENAME][..], "RENAME"),
        (&[Keyword::OWNER, Keyword::TO][..], "OWNER TO"),
        (&[Keyword::SET][..], "SET"),
    ] {
        if parser.parse_keywords(words) {
            return Err(Read::Refused(SqlError::unsupported(format!(
                "ALTER SEQUENCE ... {form} is not supported yet"
            ))));
        }
    }
    let mut alter = AlterSequence {
        if_exists,
        name,
        data_type: None,
        options: Vec::new(),
        restart: None,
        owned_by: None,
    };
    // Which options were given, by their first keyword, to refuse one given twice.
    let mut given: Vec<Keyword> = Vec::new();
    loop {
        let next = parser.peek_token().token;
        if next == Token::EOF {
            break;
        }
        let option = match parser.parse_one_of_keywords(&[
            Keyword::AS,
            Keyword::INCREMENT,
            Keyword::MINVALUE,
            Keyword::MAXVALUE,
            Keyword::NO,
            Keyword::START,
            Keyword::RESTART,
            Keyword::CACHE,
            Keyword::CYCLE,
            Keyword::OWNED,
        ]) {
            Some(option) => option,
            None => return Ok(parser.expected("a sequence option", parser.peek_token())?),
        };
        let (option, negated) = match option {
            Keyword::NO => (
                parser.expect_one_of_keywords(&[
                    Keyword::MINVALUE,
                    Keyword::MAXVALUE,
                    Keyword::CYCLE,
                ])?,
                true,
            ),
            other => (other, false),
        };
        if given.contains(&option) {
            return Err(Read::Refused(SqlError::syntax(
                "conflicting or redundant options",
            )));
        }
        given.push(option);
        match option {
            Keyword::AS => alter.data_type = Some(parser.parse_data_type()?),
            Keyword::INCREMENT => {
                let by = parser.parse_keyword(Keyword::BY);
                alter
                    .options
                    .push(SequenceOptions::IncrementBy(parser.parse_number()?, by));
            }
            Keyword::MINVALUE => alter.options.push(SequenceOptions::MinValue(
                (!negated).then(|| parser.parse_number()).transpose()?,
            )),
            Keyword::MAXVALUE => alter.options.push(SequenceOptions::MaxValue(
                (!negated).then(|| parser.parse_number()).transpose()?,
            )),
            Keyword::CYCLE => alter.options.push(SequenceOptions::Cycle(negated)),
            Keyword::START => {
                let with = parser.parse_keyword(Keyword::WITH);
                alter
                    .options
                    .push(SequenceOptions::StartWith(parser.parse_number()?, with));
            }
            Keyword::CACHE => alter
                .options
                .push(SequenceOptions::Cache(parser.parse_number()?)),
            Keyword::RESTART => {
                let with = parser.parse_keyword(Keyword::WITH);
                let number_follows = matches!(
                    parser.peek_token().token,
                    Token::Number(..) | Token::Minus | Token::Plus
                );
                alter.restart = Some(match with || number_follows {
                    true => Some(parser.parse_number()?),
                    false => None,
                });
            }
            _ => {
                parser.expect_keyword_is(Keyword::BY)?;
                alter.owned_by = Some(match parser.parse_keyword(Keyword::NONE) {
                    true => None,
                    false => Some(parser.parse_object_name(false)?),
                });
            }
        }
    }
    if given.is_empty() {
        return Ok(parser.expected("a sequence option", parser.peek_token())?);
    }
    Ok(alter)
}
