//! A per-session cache of plans for simple-protocol statements. Clients that do not use
//! prepared statements send the same statement over and over with different literals;
//! parsing and planning each one again costs more than running a point get. A statement
//! is turned into a template (every literal replaced by `$n`) and the template's plan is
//! cached, keyed by the template text and checked against the catalog version.
//!
//! A template is only used where it cannot change the answer: the plan of the template
//! must return the same columns as the plan of the literal statement, each parameter
//! must have a type its literal would have been coerced to anyway, and a literal that
//! does not convert falls back to the uncached path, so errors read the same.

use super::sql_types::{Datum, OutputColumn, SqlType};
use super::values::cast;
use std::collections::HashMap;
use std::sync::Arc;

/// Most templates a session keeps; beyond it the cache starts over (clients that send
/// endless distinct statements get no benefit, and only bounded memory).
const MAX_ENTRIES: usize = 256;

/// A literal taken out of a statement.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Literal {
    Integer(String),
    Decimal(String),
    String(String),
    /// An integer cast to a numeric or text type (`100345::text`): its value is the same
    /// whether the cast starts from the number or from its digits.
    CastInteger(i64),
}

/// Casts after which an integer literal may travel as its digits.
const DIGIT_CASTS: [&str; 13] = [
    "text", "varchar", "bigint", "int8", "int", "integer", "int4", "smallint", "int2", "float8",
    "float4", "real", "numeric",
];

/// The type name of a `::type` cast starting at `at`, if there is one.
fn cast_target(sql: &str, at: usize) -> Option<&str> {
    let rest = sql.get(at..)?.strip_prefix("::")?;
    let end = rest
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// A statement with its literals replaced by `$1..$n`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Template {
    /// The statement text with placeholders: valid SQL, and the cache key.
    pub key: String,
    pub literals: Vec<Literal>,
}

/// Makes a template of one DML statement, or `None` when the text is outside what the
/// cache handles safely: other statements, several statements, comments, existing
/// placeholders or dollar quotes, prefixed strings (`E'..'`, `B'..'`).
pub(crate) fn templatize(sql: &str) -> Option<Template> {
    let trimmed = sql.trim_start();
    let head: String = trimmed
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase();
    if !matches!(head.as_str(), "select" | "insert" | "update" | "delete") {
        return None;
    }
    let bytes = sql.as_bytes();
    let mut key = String::with_capacity(sql.len());
    let mut literals = Vec::new();
    // After ORDER BY / GROUP BY a number may be a column position, not a value: such
    // numbers stay in the key.
    let mut positional = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\'' => {
                let mut value = String::new();
                let mut j = i + 1;
                loop {
                    let rest = sql.get(j..)?;
                    let end = rest.find('\'')?;
                    value.push_str(&rest[..end]);
                    j += end + 1;
                    if bytes.get(j) == Some(&b'\'') {
                        value.push('\'');
                        j += 1;
                    } else {
                        break;
                    }
                }
                literals.push(Literal::String(value));
                key.push('$');
                key.push_str(&literals.len().to_string());
                i = j;
            }
            b'"' => {
                let mut j = i + 1;
                loop {
                    let end = sql.get(j..)?.find('"')?;
                    j += end + 1;
                    if bytes.get(j) != Some(&b'"') {
                        break;
                    }
                    j += 1;
                }
                key.push_str(&sql[i..j]);
                i = j;
            }
            b'$' => return None,
            b'-' if bytes.get(i + 1) == Some(&b'-') => return None,
            b'/' if bytes.get(i + 1) == Some(&b'*') => return None,
            b';' => {
                if !sql[i + 1..].trim().is_empty() {
                    return None;
                }
                key.push(';');
                i += 1;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let mut j = i;
                while j < bytes.len()
                    && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_' || bytes[j] >= 0x80)
                {
                    j += 1;
                }
                if bytes.get(j) == Some(&b'\'') || bytes.get(j) == Some(&b'&') {
                    return None;
                }
                let word = &sql[i..j];
                if word.eq_ignore_ascii_case("order") || word.eq_ignore_ascii_case("group") {
                    positional = true;
                }
                key.push_str(word);
                i = j;
            }
            _ if c.is_ascii_digit()
                || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) =>
            {
                let mut j = i;
                let mut decimal = false;
                while j < bytes.len() && bytes[j].is_ascii_digit() {
                    j += 1;
                }
                if bytes.get(j) == Some(&b'.') {
                    decimal = true;
                    j += 1;
                    while j < bytes.len() && bytes[j].is_ascii_digit() {
                        j += 1;
                    }
                }
                if matches!(bytes.get(j), Some(b'e' | b'E')) {
                    decimal = true;
                    j += 1;
                    if matches!(bytes.get(j), Some(b'+' | b'-')) {
                        j += 1;
                    }
                    while j < bytes.len() && bytes[j].is_ascii_digit() {
                        j += 1;
                    }
                }
                if bytes
                    .get(j)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.')
                {
                    return None;
                }
                let text = &sql[i..j];
                let literal = match cast_target(sql, j) {
                    None if decimal => Some(Literal::Decimal(text.to_string())),
                    None => Some(Literal::Integer(text.to_string())),
                    Some(ty)
                        if !decimal && DIGIT_CASTS.iter().any(|t| ty.eq_ignore_ascii_case(t)) =>
                    {
                        text.parse().ok().map(Literal::CastInteger)
                    }
                    // Other casts of numbers stay in the key.
                    Some(_) => None,
                };
                match literal.filter(|_| !positional) {
                    None => key.push_str(text),
                    Some(literal) => {
                        literals.push(literal);
                        key.push('$');
                        key.push_str(&literals.len().to_string());
                    }
                }
                i = j;
            }
            _ => {
                // ASCII punctuation and whitespace (multi-byte characters start >= 0x80).
                key.push(c as char);
                i += 1;
            }
        }
    }
    Some(Template { key, literals })
}

/// Whether a literal may stand for a parameter of this (inferred) type without changing
/// what the statement means: a quoted string is coerced to whatever its context wants,
/// as PostgreSQL does with `unknown` literals; numbers only to numeric types, so a number
/// is never written as text into a schema-free column.
pub(crate) fn compatible(literal: &Literal, ty: Option<SqlType>) -> bool {
    match (literal, ty) {
        // Untyped, it stays text, as an `unknown` literal becomes.
        (Literal::String(_), _) => true,
        (
            Literal::CastInteger(_),
            None
            | Some(
                SqlType::Int2
                | SqlType::Int4
                | SqlType::Int8
                | SqlType::Float4
                | SqlType::Float8
                | SqlType::Text,
            ),
        ) => true,
        (
            Literal::Integer(_),
            Some(SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Float4 | SqlType::Float8),
        ) => true,
        (Literal::Decimal(_), Some(SqlType::Float4 | SqlType::Float8)) => true,
        _ => false,
    }
}

/// The literals as parameter values, or `None` when one does not convert or is not
/// `compatible` with its parameter's type (the caller then takes the uncached path,
/// which reports the error as it always has, or converts the literal as its own
/// statement would: `4.5` into a template cached from `42` must round as a numeric
/// to an integer column does, not as the float parameter would).
pub(crate) fn bind(literals: &[Literal], types: &[SqlType]) -> Option<Vec<Datum>> {
    if literals.len() != types.len() {
        return None;
    }
    literals
        .iter()
        .zip(types)
        .map(|(literal, ty)| {
            if !compatible(literal, Some(*ty)) {
                return None;
            }
            let datum = match literal {
                Literal::Integer(text) => {
                    let n: i64 = text.parse().ok()?;
                    // Out of range for the parameter: the uncached path says so.
                    let fits = match ty {
                        SqlType::Int2 => i16::try_from(n).is_ok(),
                        SqlType::Int4 => i32::try_from(n).is_ok(),
                        _ => true,
                    };
                    if !fits {
                        return None;
                    }
                    Datum::Int(n)
                }
                Literal::Decimal(text) => Datum::Float(text.parse().ok()?),
                Literal::String(text) => Datum::Text(text.clone()),
                Literal::CastInteger(n) => match ty {
                    SqlType::Text => Datum::Text(n.to_string()),
                    _ => Datum::Int(*n),
                },
            };
            cast(datum, *ty).ok()
        })
        .collect()
}

/// A cached template plan.
pub(crate) struct CachedPlan<P> {
    pub plan: Arc<P>,
    pub param_types: Vec<SqlType>,
}

enum Entry<P> {
    Plan(CachedPlan<P>),
    /// The template plans differently from its statements (or not at all): plan each
    /// statement as it comes.
    Uncacheable,
}

/// What a lookup found.
pub(crate) enum Lookup<'a, P> {
    Hit(&'a CachedPlan<P>),
    Uncacheable,
    Miss,
}

/// One session's template plans, valid for one catalog version.
pub(crate) struct PlanCache<P> {
    entries: HashMap<String, Entry<P>>,
    catalog_version: u64,
}

impl<P> Default for PlanCache<P> {
    fn default() -> Self {
        PlanCache {
            entries: HashMap::new(),
            catalog_version: 0,
        }
    }
}

impl<P> PlanCache<P> {
    /// The entry for `key`; everything is dropped first if the catalog changed.
    pub fn lookup(&mut self, key: &str, catalog_version: u64) -> Lookup<'_, P> {
        if self.catalog_version != catalog_version {
            self.entries.clear();
            self.catalog_version = catalog_version;
        }
        match self.entries.get(key) {
            Some(Entry::Plan(plan)) => Lookup::Hit(plan),
            Some(Entry::Uncacheable) => Lookup::Uncacheable,
            None => Lookup::Miss,
        }
    }

    /// Records the template's plan if it is interchangeable with the statement's:
    /// same output columns, and every parameter typed so its literal fits.
    pub fn insert(
        &mut self,
        template: &Template,
        catalog_version: u64,
        planned: Option<(Arc<P>, &[Option<SqlType>], &[OutputColumn])>,
        statement_columns: &[OutputColumn],
    ) {
        if catalog_version != self.catalog_version {
            return;
        }
        if self.entries.len() >= MAX_ENTRIES {
            self.entries.clear();
        }
        let entry = match planned {
            Some((plan, types, columns))
                if columns == statement_columns
                    && types.len() == template.literals.len()
                    && template
                        .literals
                        .iter()
                        .zip(types)
                        .all(|(literal, ty)| compatible(literal, *ty)) =>
            {
                Entry::Plan(CachedPlan {
                    plan,
                    // Untyped parameters are text, as at Bind (`Params::finish`).
                    param_types: types.iter().map(|t| t.unwrap_or(SqlType::Text)).collect(),
                })
            }
            _ => Entry::Uncacheable,
        };
        self.entries.insert(template.key.clone(), entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(sql: &str) -> Option<String> {
        templatize(sql).map(|t| t.key)
    }

    #[test]
    fn literals_become_placeholders() {
        let t = templatize("SELECT a FROM t WHERE id = 42 AND s = 'it''s' AND f = 1.5e3;").unwrap();
        assert_eq!(
            t.key,
            "SELECT a FROM t WHERE id = $1 AND s = $2 AND f = $3;"
        );
        assert_eq!(
            t.literals,
            vec![
                Literal::Integer("42".into()),
                Literal::String("it's".into()),
                Literal::Decimal("1.5e3".into()),
            ]
        );
    }

    #[test]
    fn identifiers_and_casts_stay() {
        assert_eq!(
            key(r#"update "T1" set c2 = 7 where k = 100::text"#).unwrap(),
            r#"update "T1" set c2 = $1 where k = $2::text"#
        );
    }

    #[test]
    fn integers_cast_to_text_are_parameters() {
        let t = templatize("select a from t where s = 100345::text and f = 1.5::text").unwrap();
        assert_eq!(
            t.key,
            "select a from t where s = $1::text and f = 1.5::text"
        );
        assert_eq!(t.literals, vec![Literal::CastInteger(100345)]);
        assert_eq!(
            bind(&t.literals, &[SqlType::Text]),
            Some(vec![Datum::Text("100345".into())])
        );
        assert_eq!(key("select 7::bytea").unwrap(), "select 7::bytea");
    }

    #[test]
    fn positions_after_order_by_stay() {
        assert_eq!(
            key("select a, b from t where a = 1 order by 2 limit 5").unwrap(),
            "select a, b from t where a = $1 order by 2 limit 5"
        );
    }

    #[test]
    fn unsafe_texts_are_left_alone() {
        for sql in [
            "CREATE TABLE t (a INT)",
            "SELECT 1; SELECT 2",
            "SELECT $1",
            "SELECT $$x$$",
            "SELECT 1 -- comment",
            "SELECT /* c */ 1",
            "SELECT E'\\n'",
            "SELECT 'unterminated",
            "SELECT 1abc",
        ] {
            assert_eq!(key(sql), None, "{sql}");
        }
    }

    #[test]
    fn numbers_only_stand_for_numbers() {
        let int = Literal::Integer("1".into());
        assert!(compatible(&int, Some(SqlType::Int8)));
        assert!(!compatible(&int, Some(SqlType::Text)));
        assert!(!compatible(&int, None));
        assert!(compatible(
            &Literal::String("x".into()),
            Some(SqlType::Int8)
        ));
        assert!(!compatible(
            &Literal::Decimal("1.5".into()),
            Some(SqlType::Int8)
        ));
    }

    #[test]
    fn unconvertible_literals_do_not_bind() {
        let literals = [Literal::String("abc".into())];
        assert_eq!(bind(&literals, &[SqlType::Int8]), None);
        // A fraction for an integer parameter: the statement itself rounds it.
        let literals = [Literal::Decimal("4.5".into())];
        assert_eq!(bind(&literals, &[SqlType::Int8]), None);
        let literals = [Literal::Integer("7".into()), Literal::String("x".into())];
        assert_eq!(
            bind(&literals, &[SqlType::Int8, SqlType::Text]),
            Some(vec![Datum::Int(7), Datum::Text("x".into())])
        );
    }
}
