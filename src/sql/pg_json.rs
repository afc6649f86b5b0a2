//! JSON as PostgreSQL's `json` and `jsonb` read, write and navigate it.
//!
//! Both types are stored as text (a Table Store String). A `json` value is its input,
//! checked and kept byte for byte; a `jsonb` value is stored in jsonb's own text form,
//! which is what PostgreSQL prints for it: object keys sorted shortest first then
//! bytewise, a repeated key keeping its last value, numbers as `numeric` prints them
//! (`1e2` is `100`, `2.50` stays `2.50`), `", "` and `": "` between items.
//!
//! serde_json is not used: it reads numbers as `f64` (or, with a crate-wide feature,
//! changes every user's numbers), and `json`'s operators return their member's exact
//! input text, which needs each value's place in the input.

use super::pg_numeric;
use super::sql_error::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use bigdecimal::BigDecimal;
use std::cmp::Ordering;
use std::ops::Range;

/// How deep arrays and objects may nest before input is refused (54001). PostgreSQL's
/// limit is its stack's; this one keeps the recursive parser and writer well inside a
/// worker thread's.
const MAX_DEPTH: usize = 256;

/// A parsed JSON value, with where it stands in its input.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    /// The value's bytes in the input, without surrounding blanks.
    pub span: Range<usize>,
}

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(BigDecimal),
    String(String),
    Array(Vec<Node>),
    /// Members in input order, repeats included.
    Object(Vec<(String, Node)>),
}

/// The two SQL types: `json` keeps its input, `jsonb` its normal form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonKind {
    Json,
    Jsonb,
}

impl JsonKind {
    pub fn name(self) -> &'static str {
        match self {
            JsonKind::Json => "json",
            JsonKind::Jsonb => "jsonb",
        }
    }
}

/// `text` read as a value of `kind`, in the form it is stored in: a `json` value as
/// given, a `jsonb` value normalized. 22P02 for malformed JSON; for `jsonb`, 22P05 for
/// a `\u0000`, which its strings cannot hold.
pub fn input(text: &str, kind: JsonKind) -> SqlResult<String> {
    let node = parse(text)?;
    match kind {
        JsonKind::Json => Ok(text.to_string()),
        JsonKind::Jsonb => {
            if contains_nul(&node.value) {
                return Err(SqlError::new(
                    SqlState::UntranslatableCharacter,
                    "unsupported Unicode escape sequence",
                ));
            }
            Ok(jsonb_text(&node.value))
        }
    }
}

fn contains_nul(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(|n| contains_nul(&n.value)),
        Value::Object(members) => members
            .iter()
            .any(|(k, n)| k.contains('\0') || contains_nul(&n.value)),
        _ => false,
    }
}

/// Parses `text` as one JSON value with blanks around it (22P02 otherwise).
pub fn parse(text: &str) -> SqlResult<Node> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    parser.blanks();
    let node = parser.value(0)?;
    parser.blanks();
    if parser.at < parser.bytes.len() {
        return Err(parser.invalid());
    }
    Ok(node)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn invalid(&self) -> SqlError {
        SqlError::new(
            SqlState::InvalidTextRepresentation,
            "invalid input syntax for type json",
        )
    }

    fn blanks(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> SqlResult<()> {
        self.blanks();
        match self.bytes.get(self.at) {
            Some(&b) if b == byte => {
                self.at += 1;
                Ok(())
            }
            _ => Err(self.invalid()),
        }
    }

    fn value(&mut self, depth: usize) -> SqlResult<Node> {
        if depth > MAX_DEPTH {
            return Err(SqlError::new(
                SqlState::StatementTooComplex,
                "stack depth limit exceeded",
            ));
        }
        self.blanks();
        let start = self.at;
        let value = match self.bytes.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let mut members = Vec::new();
                self.blanks();
                if self.bytes.get(self.at) == Some(&b'}') {
                    self.at += 1;
                } else {
                    loop {
                        self.blanks();
                        if self.bytes.get(self.at) != Some(&b'"') {
                            return Err(self.invalid());
                        }
                        let key = self.string()?;
                        self.expect(b':')?;
                        members.push((key, self.value(depth + 1)?));
                        self.blanks();
                        match self.bytes.get(self.at) {
                            Some(b',') => self.at += 1,
                            Some(b'}') => {
                                self.at += 1;
                                break;
                            }
                            _ => return Err(self.invalid()),
                        }
                    }
                }
                Value::Object(members)
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                self.blanks();
                if self.bytes.get(self.at) == Some(&b']') {
                    self.at += 1;
                } else {
                    loop {
                        items.push(self.value(depth + 1)?);
                        self.blanks();
                        match self.bytes.get(self.at) {
                            Some(b',') => self.at += 1,
                            Some(b']') => {
                                self.at += 1;
                                break;
                            }
                            _ => return Err(self.invalid()),
                        }
                    }
                }
                Value::Array(items)
            }
            Some(b'"') => Value::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => Value::Number(self.number()?),
            Some(_) => self.word()?,
            None => return Err(self.invalid()),
        };
        Ok(Node {
            value,
            span: start..self.at,
        })
    }

    fn word(&mut self) -> SqlResult<Value> {
        let rest = &self.bytes[self.at..];
        let end = rest
            .iter()
            .position(|b| !b.is_ascii_alphanumeric() && *b != b'_')
            .unwrap_or(rest.len());
        let value = match &rest[..end] {
            b"true" => Value::Bool(true),
            b"false" => Value::Bool(false),
            b"null" => Value::Null,
            _ => return Err(self.invalid()),
        };
        self.at += end;
        Ok(value)
    }

    /// A number as JSON writes it: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> SqlResult<BigDecimal> {
        let start = self.at;
        let digits = |p: &mut Self| {
            let from = p.at;
            while p.bytes.get(p.at).is_some_and(u8::is_ascii_digit) {
                p.at += 1;
            }
            p.at - from
        };
        if self.bytes.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        let leading_zero = self.bytes.get(self.at) == Some(&b'0');
        let whole = digits(self);
        if whole == 0 || (leading_zero && whole > 1) {
            return Err(self.invalid());
        }
        if self.bytes.get(self.at) == Some(&b'.') {
            self.at += 1;
            if digits(self) == 0 {
                return Err(self.invalid());
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            if digits(self) == 0 {
                return Err(self.invalid());
            }
        }
        // A letter straight after a number (`1x`) is one bad token, as PostgreSQL reads it.
        if self.bytes.get(self.at).is_some_and(u8::is_ascii_alphabetic) {
            return Err(self.invalid());
        }
        pg_numeric::parse(&self.text[start..self.at]).map_err(|e| match e.sqlstate() {
            SqlState::InvalidTextRepresentation => self.invalid(),
            _ => e,
        })
    }

    /// A string at `"`, with its escapes read.
    fn string(&mut self) -> SqlResult<String> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.at..];
            let plain = rest
                .bytes()
                .position(|b| b == b'"' || b == b'\\' || b < 0x20)
                .ok_or_else(|| self.invalid())?;
            out.push_str(&rest[..plain]);
            self.at += plain;
            match self.bytes[self.at] {
                b'"' => {
                    self.at += 1;
                    return Ok(out);
                }
                b'\\' => {
                    self.at += 1;
                    let escaped = *self.bytes.get(self.at).ok_or_else(|| self.invalid())?;
                    self.at += 1;
                    match escaped {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => out.push(self.unicode_escape()?),
                        _ => return Err(self.invalid()),
                    }
                }
                // A control character must be escaped.
                _ => return Err(self.invalid()),
            }
        }
    }

    /// The character of a `\uXXXX` escape (after `\u`), a surrogate pair's two.
    fn unicode_escape(&mut self) -> SqlResult<char> {
        let high = self.hex4()?;
        let code = match high {
            0xD800..=0xDBFF => {
                if self.bytes.get(self.at..self.at + 2) != Some(b"\\u") {
                    return Err(self.invalid());
                }
                self.at += 2;
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(self.invalid());
                }
                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(self.invalid()),
            code => code,
        };
        char::from_u32(code).ok_or_else(|| self.invalid())
    }

    fn hex4(&mut self) -> SqlResult<u32> {
        let digits = self
            .text
            .get(self.at..self.at + 4)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.invalid())?;
        self.at += 4;
        u32::from_str_radix(digits, 16).map_err(|_| self.invalid())
    }
}

/// A string as JSON text, escaped as PostgreSQL's `escape_json` escapes it.
pub fn quote(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The jsonb text of a value: keys sorted and unique, PostgreSQL's spacing.
pub fn jsonb_text(value: &Value) -> String {
    let mut out = String::new();
    write_jsonb(value, &mut out);
    out
}

fn write_jsonb(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&pg_numeric::format(n)),
        Value::String(s) => quote(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_jsonb(&item.value, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (i, (key, node)) in jsonb_members(members).into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                quote(key, out);
                out.push_str(": ");
                write_jsonb(&node.value, out);
            }
            out.push('}');
        }
    }
}

/// An object's members as jsonb keeps them: sorted shortest key first then bytewise,
/// the last of a repeated key.
pub fn jsonb_members(members: &[(String, Node)]) -> Vec<(&String, &Node)> {
    let mut sorted: Vec<(usize, &String, &Node)> = members
        .iter()
        .enumerate()
        .map(|(i, (k, n))| (i, k, n))
        .collect();
    sorted.sort_by(|a, b| key_order(a.1, b.1).then(b.0.cmp(&a.0)));
    sorted.dedup_by(|later, kept| later.1 == kept.1);
    sorted.into_iter().map(|(_, k, n)| (k, n)).collect()
}

/// jsonb's order of object keys.
fn key_order(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

impl Node {
    /// The member named `key` of an object (the last, if repeated).
    pub fn member(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|m| &m.1),
            _ => None,
        }
    }

    /// The element at `index` of an array, counted from the end if negative.
    pub fn element(&self, index: i64) -> Option<&Node> {
        let Value::Array(items) = &self.value else {
            return None;
        };
        let len = i64::try_from(items.len()).ok()?;
        let index = if index < 0 { len + index } else { index };
        usize::try_from(index).ok().and_then(|i| items.get(i))
    }

    /// The value's text in `source`, the input it was parsed from.
    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        source.get(self.span.clone()).unwrap_or_default()
    }

    /// What `->>` gives: a string's contents, NULL for JSON null, else its text.
    pub fn as_text(&self, source: &str) -> Option<String> {
        match &self.value {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            _ => Some(self.text(source).to_string()),
        }
    }

    /// `jsonb_typeof`'s name of the value's type.
    pub fn type_name(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}

/// jsonb equality: numbers by value (`1.0` equals `1`), objects by their unique keys.
pub fn jsonb_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(x, y)| jsonb_equal(&x.value, &y.value))
        }
        (Value::Object(x), Value::Object(y)) => {
            let (x, y) = (jsonb_members(x), jsonb_members(y));
            x.len() == y.len()
                && x.iter()
                    .zip(&y)
                    .all(|((kx, nx), (ky, ny))| kx == ky && jsonb_equal(&nx.value, &ny.value))
        }
        _ => false,
    }
}

/// jsonb's `@>`: whether `outer` contains `inner`. An object contains the members of
/// another whose values it contains; an array contains another whose every element it
/// contains one of (order and repeats aside); a top-level array contains a scalar it
/// has as an element; scalars contain an equal scalar.
pub fn contains(outer: &Value, inner: &Value) -> bool {
    match (outer, inner) {
        (Value::Array(items), inner) if !matches!(inner, Value::Array(_) | Value::Object(_)) => {
            items.iter().any(|i| contained(&i.value, inner))
        }
        _ => contained(outer, inner),
    }
}

fn contained(outer: &Value, inner: &Value) -> bool {
    match (outer, inner) {
        (Value::Object(outer), Value::Object(inner)) => inner.iter().all(|(key, want)| {
            outer
                .iter()
                .rev()
                .find(|(k, _)| k == key)
                .is_some_and(|(_, have)| contained(&have.value, &want.value))
        }),
        (Value::Array(outer), Value::Array(inner)) => inner.iter().all(|want| {
            outer.iter().any(|have| match (&have.value, &want.value) {
                (Value::Array(_) | Value::Object(_), _)
                | (_, Value::Array(_) | Value::Object(_)) => {
                    std::mem::discriminant(&have.value) == std::mem::discriminant(&want.value)
                        && contained(&have.value, &want.value)
                }
                (have, want) => jsonb_equal(have, want),
            })
        }),
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => false,
        (outer, inner) => jsonb_equal(outer, inner),
    }
}

/// jsonb's `?`: whether `key` is a key of a top-level object, a string element of a
/// top-level array, or the string itself.
pub fn has_key(value: &Value, key: &str) -> bool {
    match value {
        Value::Object(members) => members.iter().any(|(k, _)| k == key),
        Value::Array(items) => items
            .iter()
            .any(|i| matches!(&i.value, Value::String(s) if s == key)),
        Value::String(s) => s == key,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jsonb(text: &str) -> String {
        input(text, JsonKind::Jsonb).expect(text)
    }

    #[test]
    fn jsonb_is_stored_in_postgresqls_normal_form() {
        assert_eq!(
            jsonb(r#"{"b":1, "a" : [1, 2.50, 1e2, -0, "x\u00e9\n"], "aa":null, "b":{}}"#),
            r#"{"a": [1, 2.50, 100, 0, "xé\n"], "b": {}, "aa": null}"#
        );
        assert_eq!(jsonb(" [ ] "), "[]");
        assert_eq!(jsonb(r#""\ud83d\ude00/\u0001""#), "\"😀/\\u0001\"");
        assert_eq!(jsonb("1.5e1"), "15");
        assert_eq!(jsonb("1.50e1"), "15.0");
    }

    #[test]
    fn json_keeps_its_input() {
        let text = "  {\"a\":1,  \"a\" :  [1,  2]}  ";
        assert_eq!(input(text, JsonKind::Json).unwrap(), text);
        let node = parse(text).unwrap();
        assert_eq!(node.member("a").unwrap().text(text), "[1,  2]");
    }

    #[test]
    fn malformed_json_is_22p02_and_nul_in_jsonb_22p05() {
        for bad in [
            "{bad",
            "",
            "[1,]",
            "01",
            "1.",
            "-",
            "\"a",
            "{\"a\" 1}",
            "[1] x",
            "tru",
            "1x",
            "\"\t\"",
            "\"\\x\"",
            "\"\\udc00\"",
            "{1:2}",
        ] {
            let e = parse(bad).expect_err(bad);
            assert_eq!(e.code(), "22P02", "{bad}");
        }
        assert_eq!(
            input("\"\\u0000\"", JsonKind::Jsonb).unwrap_err().code(),
            "22P05"
        );
        assert!(input("\"\\u0000\"", JsonKind::Json).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 2);
        assert_eq!(parse(&deep).unwrap_err().code(), "54001");
    }

    #[test]
    fn navigation_containment_and_keys() {
        let text = jsonb(r#"{"a":{"b":[5, "x"]}, "n": null}"#);
        let node = parse(&text).unwrap();
        let b = node.member("a").and_then(|a| a.member("b")).unwrap();
        assert_eq!(b.element(-1).unwrap().as_text(&text).unwrap(), "x");
        assert_eq!(b.element(0).unwrap().as_text(&text).unwrap(), "5");
        assert!(b.element(2).is_none());
        assert_eq!(node.member("n").unwrap().as_text(&text), None);
        let v = |t: &str| parse(t).unwrap().value;
        assert!(contains(&v("[1,[2]]"), &v("[[2]]")));
        assert!(contains(&v("[1,2]"), &v("1")));
        assert!(contains(&v(r#"{"a":[1,2],"b":1}"#), &v(r#"{"a":[2]}"#)));
        assert!(!contains(&v(r#"{"a":[1,2]}"#), &v(r#"{"a":2}"#)));
        assert!(!contains(&v("[[1]]"), &v("[1]")));
        assert!(contains(&v("{}"), &v("{}")));
        assert!(has_key(&v(r#"["a"]"#), "a"));
        assert!(has_key(&v(r#""a""#), "a"));
        assert!(!has_key(&v(r#"{"b":"a"}"#), "a"));
        assert!(jsonb_equal(&v(r#"{"a":1.0}"#), &v(r#"{"a":1}"#)));
        assert!(jsonb_equal(&v(r#"{"a":1,"a":2}"#), &v(r#"{"a":2}"#)));
        assert!(!jsonb_equal(&v("[1,2]"), &v("[2,1]")));
    }
}
