//! Differential test: the same seeded random data goes into pgwide and into a real
//! PostgreSQL 15, then tens of thousands of generated queries (filters, PK ranges, ORDER
//! BY, LIMIT/OFFSET, aggregates, GROUP BY, joins, subqueries) run on both and their
//! results must match: every other query over the simple protocol (text results), the
//! others over the extended protocol, where the result columns' type OIDs must match
//! too, results come in binary, and some queries bind binary parameters. Known, deliberate differences are kept out of the generator; each is listed in
//! docs/postgresql.md §6.
//!
//! Needs Debian's postgresql-15 (`scripts/test` installs it). Without it the test fails:
//! a silently skipped differential test would look like a passing one.

use crate::common;

use common::TestServer;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::process::Command;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type};

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
/// Queries per run; the seed is fixed so a failure reproduces, and can be changed with
/// PGWIDE_DIFF_SEED to explore.
const QUERIES: usize = 20_000;
const T1_ROWS: usize = 300;
const T2_ROWS: usize = 80;
const WORDS: &[&str] = &[
    "alpha", "beta", "gamma", "delta", "eps", "zeta", "Eta", "theta",
];
const K2S: &[&str] = &["a", "b", "bb", "c", "x", "yz"];

/// A PostgreSQL 15 cluster on a temporary directory and a free port, stopped on drop.
pub(crate) struct Postgres {
    data: PathBuf,
    port: u16,
    _dir: tempfile::TempDir,
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Runs a PostgreSQL binary, as the `postgres` user when we are root (PostgreSQL refuses
/// to run as root).
fn pg_command(binary: &str, args: &[&str]) -> std::process::Output {
    let path = format!("{PG_BIN}/{binary}");
    let mut command = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--", &path]);
        c
    } else {
        Command::new(&path)
    };
    command
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {path}: {e}"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

impl Postgres {
    pub(crate) fn start() -> Postgres {
        assert!(
            Path::new(PG_BIN).join("initdb").exists(),
            "PostgreSQL 15 is not installed ({PG_BIN}/initdb missing): run scripts/test, \
             which installs Debian's postgresql-15"
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("data");
        if is_root() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
                .expect("chmod");
        }
        let data_str = data.to_str().expect("utf-8 path");
        // C collation: pgwide orders text by bytes.
        let out = pg_command(
            "initdb",
            &[
                "-D",
                data_str,
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
        );
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off",
            dir.path().display()
        );
        let log = dir.path().join("postgres.log");
        let out = pg_command(
            "pg_ctl",
            &[
                "-D",
                data_str,
                "-o",
                &options,
                "-l",
                log.to_str().expect("utf-8 path"),
                "-w",
                "start",
            ],
        );
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Postgres {
            data,
            port,
            _dir: dir,
        }
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    pub(crate) async fn connect(&self) -> tokio_postgres::Client {
        self.connect_to("postgres").await
    }

    pub(crate) async fn connect_to(&self, database: &str) -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(
            &format!(
                "host=127.0.0.1 port={} user=postgres dbname={database}",
                self.port
            ),
            tokio_postgres::NoTls,
        )
        .await
        .expect("connect to PostgreSQL");
        tokio::spawn(connection);
        client
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(data) = self.data.to_str() {
            let _ = pg_command("pg_ctl", &["-D", data, "-m", "immediate", "-w", "stop"]);
        }
    }
}

/// A result as text rows, or the error's SQLSTATE.
async fn run(client: &tokio_postgres::Client, sql: &str) -> Result<Vec<Vec<String>>, String> {
    let messages = client.simple_query(sql).await.map_err(|e| {
        e.code()
            .map(|c| c.code().to_string())
            .unwrap_or_else(|| e.to_string())
    })?;
    Ok(messages
        .into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(row) => Some(
                (0..row.len())
                    .map(|i| normalize(row.get(i).unwrap_or("NULL")))
                    .collect(),
            ),
            _ => None,
        })
        .collect())
}

/// A result over the extended protocol: a first row of the columns' type OIDs, then
/// the rows, read in binary and shown as text; or the error's SQLSTATE.
async fn run_extended(
    client: &tokio_postgres::Client,
    sql: &str,
    params: &[Param],
) -> Result<Vec<Vec<String>>, String> {
    let code = |e: tokio_postgres::Error| {
        e.code()
            .map(|c| c.code().to_string())
            .unwrap_or_else(|| e.to_string())
    };
    let statement = client.prepare(sql).await.map_err(code)?;
    let types = statement
        .columns()
        .iter()
        .map(|c| c.type_().oid().to_string())
        .collect();
    let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
    let rows = client.query(&statement, &params).await.map_err(code)?;
    let mut result = vec![types];
    for row in rows {
        let cells = (0..row.len())
            .map(|i| match row.try_get::<_, Option<Cell>>(i) {
                Ok(Some(cell)) => normalize(&cell.0),
                Ok(None) => "NULL".to_string(),
                Err(e) => format!("undecodable: {e}"),
            })
            .collect();
        result.push(cells);
    }
    Ok(result)
}

/// A binary result value as PostgreSQL's text shows it, for the types the generator's
/// queries return.
struct Cell(String);

impl<'a> FromSql<'a> for Cell {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        let text = match *ty {
            Type::BOOL => ["f", "t"][usize::from(bool::from_sql(ty, raw)?)].to_string(),
            Type::INT2 => i16::from_sql(ty, raw)?.to_string(),
            Type::INT4 => i32::from_sql(ty, raw)?.to_string(),
            Type::INT8 => i64::from_sql(ty, raw)?.to_string(),
            Type::FLOAT4 => f32::from_sql(ty, raw)?.to_string(),
            Type::FLOAT8 => f64::from_sql(ty, raw)?.to_string(),
            Type::NUMERIC => numeric_text(raw)?,
            _ => String::from_utf8(raw.to_vec())?,
        };
        Ok(Cell(text))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// PostgreSQL's binary numeric (digit count, weight, sign, display scale, then base
/// 10000 digits) as its text.
fn numeric_text(raw: &[u8]) -> Result<String, Box<dyn std::error::Error + Sync + Send>> {
    let word = |i: usize| -> Result<i32, Box<dyn std::error::Error + Sync + Send>> {
        let bytes = raw.get(2 * i..2 * i + 2).ok_or("short numeric")?;
        Ok(i32::from(u16::from_be_bytes([bytes[0], bytes[1]])))
    };
    let (ndigits, weight, sign, dscale) = (word(0)?, word(1)? as i16 as i32, word(2)?, word(3)?);
    if sign == 0xC000 {
        return Ok("NaN".into());
    }
    let digit = |position: i32| -> Result<i32, Box<dyn std::error::Error + Sync + Send>> {
        match (0..ndigits).contains(&position) {
            true => word(4 + position as usize),
            false => Ok(0),
        }
    };
    let mut text = String::new();
    if sign == 0x4000 {
        text.push('-');
    }
    let mut integer = String::new();
    for position in 0..=weight.max(-1) {
        let d = digit(position)?;
        match integer.is_empty() {
            true if d != 0 => integer.push_str(&d.to_string()),
            true => {}
            false => integer.push_str(&format!("{d:04}")),
        }
    }
    text.push_str(if integer.is_empty() { "0" } else { &integer });
    if dscale > 0 {
        let mut fraction = String::new();
        let mut position = weight + 1;
        while (fraction.len() as i32) < dscale {
            fraction.push_str(&format!("{:04}", digit(position)?));
            position += 1;
        }
        fraction.truncate(dscale as usize);
        text.push('.');
        text.push_str(&fraction);
    }
    Ok(text)
}

/// A parameter bound in binary, as the type the server says it has.
#[derive(Debug)]
enum Param {
    Int(i64),
    Float(f64),
    Text(String),
    Bool(bool),
    Ints(Vec<i64>),
}

impl ToSql for Param {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        self.to_sql_checked(ty, out)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    // A type the value cannot be bound as (a server inferring int4 where PostgreSQL
    // infers int8) is an error, and so a difference.
    fn to_sql_checked(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Param::Int(v) => v.to_sql_checked(ty, out),
            Param::Float(v) => v.to_sql_checked(ty, out),
            Param::Text(v) => v.to_sql_checked(ty, out),
            Param::Bool(v) => v.to_sql_checked(ty, out),
            Param::Ints(v) => v.to_sql_checked(ty, out),
        }
    }
}

/// Numbers to 9 significant digits, so `12` (bigint), `12.0000` (numeric) and float
/// rounding noise in sums and averages compare equal.
fn normalize(text: &str) -> String {
    match text.parse::<f64>() {
        Ok(v)
            if text
                .chars()
                .all(|c| c.is_ascii_digit() || "+-.eE".contains(c)) =>
        {
            if v == 0.0 {
                "0".into()
            } else {
                format!("{v:.8e}")
            }
        }
        _ => text.to_string(),
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A double that binary floating point holds exactly, so sums do not depend on the
/// order the rows are added in.
fn exact_double(rng: &mut StdRng) -> f64 {
    rng.gen_range(-400..400) as f64 / 4.0
}

/// Some value, or NULL for about one row in eight.
fn maybe<T>(rng: &mut StdRng, value: impl FnOnce(&mut StdRng) -> T) -> Option<T> {
    let value = value(rng);
    (!rng.gen_bool(0.12)).then_some(value)
}

fn literal<T: ToString>(value: Option<T>) -> String {
    value.map_or("NULL".into(), |v| v.to_string())
}

/// The statements that create and fill both tables, identical for both systems.
fn load_statements(rng: &mut StdRng) -> Vec<String> {
    let mut out = vec![
        "CREATE TABLE t1 (k1 BIGINT, k2 TEXT, a BIGINT, b DOUBLE PRECISION, c TEXT, d BOOLEAN, \
         PRIMARY KEY (k1, k2))"
            .to_string(),
        "CREATE TABLE t2 (id BIGINT PRIMARY KEY, k1 BIGINT, name TEXT, w DOUBLE PRECISION)"
            .to_string(),
    ];
    let mut keys = std::collections::BTreeSet::new();
    while keys.len() < T1_ROWS {
        keys.insert((rng.gen_range(-5..70i64), K2S[rng.gen_range(0..K2S.len())]));
    }
    let mut rows = Vec::new();
    for (k1, k2) in keys {
        let a = maybe(rng, |r| r.gen_range(-50..50i64));
        let b = maybe(rng, exact_double);
        let c = maybe(rng, |r| WORDS[r.gen_range(0..WORDS.len())]).map(quote);
        let d = maybe(rng, |r| r.gen_bool(0.5));
        rows.push(format!(
            "({k1}, {}, {}, {}, {}, {})",
            quote(k2),
            literal(a),
            literal(b),
            literal(c),
            literal(d)
        ));
    }
    for chunk in rows.chunks(100) {
        out.push(format!("INSERT INTO t1 VALUES {}", chunk.join(", ")));
    }
    let rows: Vec<String> = (0..T2_ROWS as i64)
        .map(|id| {
            let k1 = maybe(rng, |r| r.gen_range(-5..75i64));
            let name = maybe(rng, |r| WORDS[r.gen_range(0..WORDS.len())]).map(quote);
            let w = maybe(rng, exact_double);
            format!("({id}, {}, {}, {})", literal(k1), literal(name), literal(w))
        })
        .collect();
    out.push(format!("INSERT INTO t2 VALUES {}", rows.join(", ")));
    out
}

/// Builds random queries over t1 and t2.
struct Generator {
    rng: StdRng,
}

impl Generator {
    fn k1(&mut self) -> i64 {
        self.rng.gen_range(-8..75)
    }

    fn word(&mut self) -> String {
        quote(WORDS[self.rng.gen_range(0..WORDS.len())])
    }

    /// One comparison on t1 (columns qualified with `q`).
    fn atom(&mut self, q: &str) -> String {
        let op = ["=", "<>", "<", "<=", ">", ">="][self.rng.gen_range(0..6)];
        match self.rng.gen_range(0..17) {
            0 => format!("{q}k1 = {}", self.k1()),
            1 => {
                let (x, y) = (self.k1(), self.k1());
                format!("{q}k1 BETWEEN {} AND {}", x.min(y), x.max(y))
            }
            2 => format!("{q}k1 {op} {}", self.k1()),
            3 => {
                let list: Vec<String> = (0..self.rng.gen_range(1..6))
                    .map(|_| self.k1().to_string())
                    .collect();
                format!("{q}k1 IN ({})", list.join(", "))
            }
            4 => format!(
                "{q}k2 {op} {}",
                quote(K2S[self.rng.gen_range(0..K2S.len())])
            ),
            5 => format!("{q}a {op} {}", self.rng.gen_range(-60..60)),
            6 => format!("{q}b {op} {}", exact_double(&mut self.rng)),
            7 => format!("{q}c {op} {}", self.word()),
            8 => format!("{q}d = {}", self.rng.gen_bool(0.5)),
            9 => format!("{q}a IS NULL"),
            10 => format!("{q}c IS NOT NULL"),
            11 => format!("{q}d IS NULL"),
            12 => format!(
                "{q}c LIKE '{}%'",
                ["a", "b", "e", "z", "t"][self.rng.gen_range(0..5)]
            ),
            13 => format!("{q}a + {q}k1 {op} {}", self.rng.gen_range(-60..60)),
            14 => format!("NOT ({q}a {op} {})", self.rng.gen_range(-60..60)),
            // A key prefix and a range on the next column: a GetRange whose bounds are
            // exact except, read backward, just below a String.
            15 => format!(
                "{q}k1 = {} AND {q}k2 {op} {}",
                self.k1(),
                quote(K2S[self.rng.gen_range(0..K2S.len())])
            ),
            _ => format!(
                "{q}k1 = {} AND {q}k2 = {}",
                self.k1(),
                quote(K2S[self.rng.gen_range(0..K2S.len())])
            ),
        }
    }

    fn predicate(&mut self, q: &str) -> String {
        match self.rng.gen_range(0..6) {
            0..=2 => self.atom(q),
            3 | 4 => format!("{} AND {}", self.atom(q), self.atom(q)),
            _ => format!("({} OR {})", self.atom(q), self.atom(q)),
        }
    }

    fn where_clause(&mut self, q: &str) -> String {
        if self.rng.gen_bool(0.8) {
            format!(" WHERE {}", self.predicate(q))
        } else {
            String::new()
        }
    }

    fn limit(&mut self) -> String {
        match self.rng.gen_range(0..4) {
            0 => format!(" LIMIT {}", self.rng.gen_range(0..20)),
            1 => format!(
                " LIMIT {} OFFSET {}",
                self.rng.gen_range(1..20),
                self.rng.gen_range(0..30)
            ),
            _ => String::new(),
        }
    }

    /// A comparison operator.
    fn op(&mut self) -> &'static str {
        ["=", "<>", "<", "<=", ">", ">="][self.rng.gen_range(0..6)]
    }

    /// A predicate of nested NOT, AND and OR over atoms, `depth` levels deep.
    fn nested(&mut self, q: &str, depth: u32) -> String {
        if depth == 0 {
            return self.atom(q);
        }
        let (l, r) = (self.nested(q, depth - 1), self.nested(q, depth - 1));
        match self.rng.gen_range(0..4) {
            0 => format!("NOT ({l} AND {r})"),
            1 => format!("({l} OR NOT {r})"),
            2 => format!("(({l}) = ({r}))"),
            _ => format!("({l} AND ({r} OR {q}d IS NULL))"),
        }
    }

    /// A subquery predicate on t1 over t2: correlated by equality or by any comparison
    /// (EXISTS, IN), or not correlated (a scalar, ANY, ALL).
    fn subquery_predicate(&mut self) -> String {
        let op = self.op();
        let not = ["", "NOT "][self.rng.gen_range(0..2)];
        let w = exact_double(&mut self.rng);
        match self.rng.gen_range(0..7) {
            0 => format!("{not}EXISTS (SELECT 1 FROM t2 WHERE t2.k1 = t1.k1 AND t2.w {op} {w})"),
            1 => format!("{not}EXISTS (SELECT 1 FROM t2 WHERE t2.w {op} t1.b)"),
            // (A correlated NOT IN, or one under OR, runs as a subplan: DataFusion's anti
            // join is not NULL-aware.)
            2 => format!("t1.a {not}IN (SELECT t2.k1 FROM t2 WHERE t2.name {op} t1.c)"),
            6 => format!(
                "t1.a {not}IN (SELECT t2.k1 FROM t2 WHERE t2.name {op} {})",
                self.word()
            ),
            3 => format!(
                "t1.b {op} (SELECT avg(w) FROM t2 WHERE t2.k1 {op} {})",
                self.k1()
            ),
            4 => format!(
                "t1.b {op} {} (SELECT w FROM t2 WHERE w IS NOT NULL AND t2.k1 < {})",
                ["ANY", "ALL"][self.rng.gen_range(0..2)],
                self.k1()
            ),
            _ => format!(
                "(SELECT count(*) FROM t2 WHERE t2.k1 = t1.k1 AND t2.w {op} {w}) {op} {}",
                self.rng.gen_range(0..3)
            ),
        }
    }

    /// A cast PostgreSQL and pgwide must agree on, values and errors; the last one
    /// fails on some rows (`'alpha'` as a bigint), so it is only shown, never a
    /// condition: which rows a filter evaluates is not defined, and DataFusion
    /// evaluates a whole batch where PostgreSQL stops at the first false condition.
    fn cast(&mut self, may_fail: bool) -> &'static str {
        [
            "CAST(b AS BIGINT)",
            "CAST(a AS DOUBLE PRECISION) / 4",
            "CAST(k1 AS TEXT) || k2",
            "CAST(b AS INTEGER)",
            "CAST(a AS SMALLINT)",
            "CAST(d AS TEXT)",
            "CAST(a AS BOOLEAN)",
            "a::text",
            "CAST(c AS BIGINT)",
        ][self.rng.gen_range(0..if may_fail { 9 } else { 8 })]
    }

    /// A query with binary parameters, or none: each parameter's type is inferred by
    /// the server from where it stands.
    fn statement(&mut self) -> (String, Vec<Param>) {
        if self.rng.gen_range(0..8) > 0 {
            return (self.query(), Vec::new());
        }
        let k1 = self.k1();
        let w = exact_double(&mut self.rng);
        match self.rng.gen_range(0..4) {
            0 => (
                "SELECT k1, k2, a, b, c, d FROM t1 WHERE k1 = $1 AND k2 >= $2 ORDER BY k1, k2"
                    .into(),
                vec![
                    Param::Int(k1),
                    Param::Text(K2S[self.rng.gen_range(0..K2S.len())].into()),
                ],
            ),
            1 => (
                "SELECT k1, k2, a + $1, b * $2 FROM t1 WHERE c = $3 OR d = $4 ORDER BY k1, k2"
                    .into(),
                vec![
                    Param::Int(self.rng.gen_range(-5..5)),
                    Param::Float(w),
                    Param::Text(WORDS[self.rng.gen_range(0..WORDS.len())].into()),
                    Param::Bool(self.rng.gen_bool(0.5)),
                ],
            ),
            2 => (
                "SELECT count(*), sum(a), avg(b), max(c) FROM t1 WHERE k1 = ANY($1)".into(),
                vec![Param::Ints(
                    (0..self.rng.gen_range(0..6)).map(|_| self.k1()).collect(),
                )],
            ),
            _ => (
                "SELECT k1, k2, b FROM t1 WHERE a BETWEEN $1 AND $2 ORDER BY k1, k2 LIMIT $3"
                    .into(),
                vec![
                    Param::Int(self.rng.gen_range(-50..0)),
                    Param::Int(self.rng.gen_range(0..50)),
                    Param::Int(self.rng.gen_range(0..20)),
                ],
            ),
        }
    }

    fn query(&mut self) -> String {
        match self.rng.gen_range(0..19) {
            // Correlated subqueries by any comparison, as PostgreSQL runs them (a
            // SubPlan per row): aggregates, EXISTS and single values, in the select
            // list and in WHERE; a single value over several rows is 21000.
            18 => {
                let (op, op2) = (self.op(), self.op());
                let w = exact_double(&mut self.rng);
                let not = ["", "NOT "][self.rng.gen_range(0..2)];
                let scalar = match self.rng.gen_range(0..5) {
                    0 => format!("(SELECT count(*) FROM t2 WHERE t2.w {op} t1.b)"),
                    1 => format!(
                        "(SELECT max(t2.name) FROM t2 WHERE t2.k1 {op} t1.a AND t2.w {op2} {w})"
                    ),
                    2 => format!("(SELECT sum(t2.w) FROM t2 WHERE t2.name {op} t1.c)"),
                    3 => format!(
                        "(SELECT t2.w FROM t2 WHERE t2.k1 {op} t1.k1 ORDER BY t2.id LIMIT 1)"
                    ),
                    _ => "(SELECT t2.name FROM t2 WHERE t2.id = t1.a + 70)".to_string(),
                };
                let exists = format!("{not}EXISTS (SELECT 1 FROM t2 WHERE t2.w {op2} t1.b)");
                // A few outer rows: each runs the subquery again.
                let k1 = self.rng.gen_range(-5..75i64);
                let few = format!("t1.k1 BETWEEN {k1} AND {}", k1 + 2);
                match self.rng.gen_range(0..3) {
                    0 => format!(
                        "SELECT k1, k2, {scalar} AS s, {exists} AS e FROM t1 WHERE {few} \
                         ORDER BY k1, k2{}",
                        self.limit()
                    ),
                    1 => format!(
                        "SELECT k1, k2 FROM t1 WHERE {few} AND {scalar} IS NOT NULL AND {} \
                         ORDER BY k1, k2",
                        self.atom("t1.")
                    ),
                    _ => format!(
                        "SELECT k1, k2, (SELECT count(*) FROM t2 WHERE t2.w {op} t1.b AND \
                         EXISTS (SELECT 1 FROM t2 AS x WHERE x.k1 {op2} t2.k1 AND x.w <> t1.b)) \
                         AS n FROM t1 WHERE {few} ORDER BY n, k1, k2{}",
                        self.limit()
                    ),
                }
            }
            // Subqueries, correlated and not, in WHERE.
            12 | 13 => {
                let (first, rest) = match self.rng.gen_range(0..3) {
                    0 => (
                        self.subquery_predicate(),
                        format!(" AND {}", self.atom("t1.")),
                    ),
                    1 => (
                        self.subquery_predicate(),
                        format!(" OR {}", self.subquery_predicate()),
                    ),
                    _ => (self.subquery_predicate(), String::new()),
                };
                format!(
                    "SELECT k1, k2 FROM t1 WHERE {first}{rest} ORDER BY k1, k2{}",
                    self.limit()
                )
            }
            // Correlated subqueries in the select list, of the same name twice.
            14 => format!(
                "SELECT k1, k2, (SELECT count(*) FROM t2 WHERE t2.k1 = t1.k1), \
                 (SELECT max(w) FROM t2 WHERE t2.k1 = t1.k1 AND t2.w {} {}) AS m, \
                 EXISTS (SELECT 1 FROM t2 WHERE t2.k1 = t1.k1) AS m FROM t1{} ORDER BY k1, k2{}",
                self.op(),
                exact_double(&mut self.rng),
                self.where_clause(""),
                self.limit()
            ),
            // IN subqueries in the select list: correlated or not, negated or not,
            // over columns with NULLs on both sides.
            17 => {
                let not = ["", "NOT "][self.rng.gen_range(0..2)];
                let subquery = match self.rng.gen_range(0..3) {
                    0 => format!(
                        "SELECT t2.k1 FROM t2 WHERE t2.name {} {}",
                        self.op(),
                        self.word()
                    ),
                    1 => "SELECT t2.k1 FROM t2 WHERE t2.k1 = t1.k1".to_string(),
                    _ => format!(
                        "SELECT t2.k1 + 0 FROM t2 WHERE t2.w > {}",
                        exact_double(&mut self.rng)
                    ),
                };
                format!(
                    "SELECT k1, k2, a {not}IN ({subquery}) AS i FROM t1{} ORDER BY k1, k2{}",
                    self.where_clause(""),
                    self.limit()
                )
            }
            // Casts, in the select list and in WHERE.
            15 => {
                let (shown, tested) = (self.cast(true), self.cast(false));
                // (No OFFSET: PostgreSQL computes the rows it skips, and fails on them.)
                format!(
                    "SELECT k1, k2, {shown}, {shown} FROM t1 WHERE {} AND {tested} IS NOT NULL \
                     ORDER BY k1, k2",
                    self.atom("")
                )
            }
            // Nested boolean expressions.
            16 => {
                let depth = self.rng.gen_range(1..4);
                format!(
                    "SELECT k1, k2, a FROM t1 WHERE {} ORDER BY k1, k2{}",
                    self.nested("", depth),
                    self.limit()
                )
            }
            // ORDER BY an output position or alias, or an expression, on one table; the
            // PK after it makes the order total.
            10 => {
                let dir = ["", " DESC"][self.rng.gen_range(0..2)];
                let key = ["1", "x", "3", "y", "a - k1", "4", "z"][self.rng.gen_range(0..7)];
                format!(
                    "SELECT k1 AS x, k2, a - k1 AS y, b * 2 AS z FROM t1{} ORDER BY {key}{dir}, \
                     k1, k2{}",
                    self.where_clause(""),
                    self.limit()
                )
            }
            // The same through DataFusion: positions in GROUP BY and ORDER BY.
            11 => {
                let dir = ["", " DESC"][self.rng.gen_range(0..2)];
                format!(
                    "SELECT c AS g, count(*) AS n, max(a) FROM t1{} GROUP BY 1 \
                     ORDER BY {} {dir}, 1",
                    self.where_clause(""),
                    ["2", "n", "3"][self.rng.gen_range(0..3)]
                )
            }
            // Row reads ordered by the whole PK, so every row has one place.
            0..=3 => {
                let columns = [
                    "*",
                    "k1, k2",
                    "k1, k2, a, c",
                    "k2, k1, b, d",
                    "k1, k2, a * 2 AS a2, b + 1 AS b1",
                ][self.rng.gen_range(0..5)];
                // `k1 DESC, k2 DESC` is a backward GetRange: it exercises sled's reverse
                // iterator, which can panic on some tree shapes and is caught and finished
                // forward by the sled backend. `k1 + 0 DESC` sorts after a forward read.
                let order = match self.rng.gen_range(0..10) {
                    0..=2 => "k1 DESC, k2 DESC",
                    3 => "k1 + 0 DESC, k2 DESC",
                    _ => "k1, k2",
                };
                format!(
                    "SELECT {columns} FROM t1{} ORDER BY {order}{}",
                    self.where_clause(""),
                    self.limit()
                )
            }
            4 => {
                // A non-PK order made total by the PK after it.
                let key = ["a", "b", "c", "d"][self.rng.gen_range(0..4)];
                let dir =
                    ["", " DESC", " NULLS FIRST", " DESC NULLS LAST"][self.rng.gen_range(0..4)];
                format!(
                    "SELECT k1, k2, {key} FROM t1{} ORDER BY {key}{dir}, k1, k2{}",
                    self.where_clause(""),
                    self.limit()
                )
            }
            5 => format!(
                "SELECT count(*), count(a), sum(a), min(a), max(a), sum(b), min(b), max(b), \
                 avg(b), min(c), max(c), min(k2), max(k1) FROM t1{}",
                self.where_clause("")
            ),
            6 => {
                let group = ["c", "d", "k2", "k1", "c, d"][self.rng.gen_range(0..5)];
                let having = if self.rng.gen_bool(0.3) {
                    format!(" HAVING count(*) > {}", self.rng.gen_range(0..8))
                } else {
                    String::new()
                };
                format!(
                    "SELECT {group}, count(*), count(b), sum(a), min(b), max(b), avg(a), avg(b) \
                     FROM t1{} GROUP BY {group}{having} ORDER BY {group}{}",
                    self.where_clause(""),
                    self.limit()
                )
            }
            7 => {
                let join = ["JOIN", "LEFT JOIN"][self.rng.gen_range(0..2)];
                format!(
                    "SELECT t1.k1, t1.k2, t1.a, t2.id, t2.name, t2.w FROM t1 {join} t2 \
                     ON t1.k1 = t2.k1{} ORDER BY t1.k1, t1.k2, t2.id{}",
                    self.where_clause("t1."),
                    self.limit()
                )
            }
            8 => format!(
                "SELECT t2.name, count(*), sum(t1.a), max(t1.b), avg(t2.w) FROM t1 JOIN t2 \
                 ON t1.k1 = t2.k1{} GROUP BY t2.name ORDER BY t2.name",
                self.where_clause("t1.")
            ),
            _ => {
                let column = ["c", "d", "k2", "a"][self.rng.gen_range(0..4)];
                format!(
                    "SELECT DISTINCT {column} FROM t1{} ORDER BY {column}{}",
                    self.where_clause(""),
                    self.limit()
                )
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgwide_matches_postgres() {
    let seed: u64 = std::env::var("PGWIDE_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_122);
    let postgres = Postgres::start();
    let pg = postgres.connect().await;
    let server = TestServer::start().await;
    let wide = server.connect().await;

    let mut rng = StdRng::seed_from_u64(seed);
    for statement in load_statements(&mut rng) {
        pg.batch_execute(&statement)
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL: {statement}: {e}"));
        wide.batch_execute(&statement)
            .await
            .unwrap_or_else(|e| panic!("pgwide: {statement}: {e}"));
    }

    // INSERT ... SELECT and CREATE TABLE AS write what a query reads; pgwide's CTAS takes
    // its PK from WITH (PostgreSQL's has none), the rows must be the same.
    for (postgres_sql, pgwide_sql) in [
        (
            "CREATE TABLE t3 AS SELECT k1, k2, a, b + 1 AS b1 FROM t1 WHERE a > 0",
            "CREATE TABLE t3 WITH (primary_key = 'k1,k2') AS \
             SELECT k1, k2, a, b + 1 AS b1 FROM t1 WHERE a > 0",
        ),
        (
            "INSERT INTO t3 SELECT t1.k1 + 1000, t2.name, count(*), max(t2.w) FROM t1 JOIN t2 \
             ON t1.k1 = t2.k1 WHERE t2.name IS NOT NULL GROUP BY t1.k1, t2.name",
            "INSERT INTO t3 SELECT t1.k1 + 1000, t2.name, count(*), max(t2.w) FROM t1 JOIN t2 \
             ON t1.k1 = t2.k1 WHERE t2.name IS NOT NULL GROUP BY t1.k1, t2.name",
        ),
    ] {
        let expected = run(&pg, postgres_sql).await;
        let actual = run(&wide, pgwide_sql).await;
        assert!(
            expected.is_ok() && actual.is_ok(),
            "{pgwide_sql}: {expected:?} / {actual:?}"
        );
    }
    let check = "SELECT k1, k2, a, b1 FROM t3 ORDER BY k1, k2";
    assert_eq!(run(&pg, check).await, run(&wide, check).await, "{check}");

    let mut generator = Generator { rng };
    let mut differences = Vec::new();
    for i in 0..QUERIES {
        let (sql, params) = generator.statement();
        // Both at once: the run time is then about pgwide's alone.
        let (expected, actual) = match i % 2 == 1 || !params.is_empty() {
            true => tokio::join!(
                run_extended(&pg, &sql, &params),
                run_extended(&wide, &sql, &params)
            ),
            false => tokio::join!(run(&pg, &sql), run(&wide, &sql)),
        };
        if expected != actual {
            let short = |r: &Result<Vec<Vec<String>>, String>| {
                format!("{r:?}").chars().take(400).collect::<String>()
            };
            differences.push(format!(
                "{sql} {params:?}\n  postgres: {}\n  pgwide:   {}",
                short(&expected),
                short(&actual)
            ));
        }
    }
    // The whole list, for when the first few in the panic message are not enough.
    let report = std::env::temp_dir().join("pgwide-differential.txt");
    let _ = std::fs::write(&report, differences.join("\n"));
    assert!(
        differences.is_empty(),
        "{} of {QUERIES} queries differ (seed {seed}; all in {}); the first ones:\n{}",
        differences.len(),
        report.display(),
        differences
            .iter()
            .take(15)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The errors users meet most, worded and coded as PostgreSQL 15 words and codes them:
/// a client or a person reading the message should not be able to tell the servers apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn common_errors_match_postgres() {
    let postgres = Postgres::start();
    let pg = postgres.connect().await;
    let server = TestServer::start().await;
    let wide = server.connect().await;
    for client in [&pg, &wide] {
        client
            .batch_execute(
                "CREATE TABLE t (id BIGINT PRIMARY KEY, b BIGINT); \
                 INSERT INTO t (id, b) VALUES (1, 10)",
            )
            .await
            .expect("set-up");
    }
    /// The SQLSTATE and message of the statement's error.
    async fn error(client: &tokio_postgres::Client, sql: &str) -> (String, String) {
        let e = client
            .simple_query(sql)
            .await
            .err()
            .unwrap_or_else(|| panic!("{sql} succeeded"));
        let db = e.as_db_error().unwrap_or_else(|| panic!("{sql}: {e}"));
        (db.code().code().to_string(), db.message().to_string())
    }
    let mut differences = Vec::new();
    for sql in [
        "SELECT missing FROM t",
        "SELECT t.missing FROM t",
        "SELECT missing FROM t GROUP BY b",
        "SELECT * FROM nope",
        "SELECT * FROM public.nope",
        "SELECT count(*) FROM t JOIN nope ON true",
        "SELECT nosuch(1)",
        "SELECT nosuch(1, 'a', 3000000000, 1.5, true, NULL)",
        "SELECT nosuch(b::text) FROM t",
        "SELECT 1 / 0",
        "SELECT b / 0 FROM t",
        "SELECT sum(b / 0) FROM t",
        "SELECT id FROM t ORDER BY 5",
        "SELECT id FROM t ORDER BY -1",
        "SELECT id FROM t ORDER BY 'a'",
        "SELECT id AS x, b AS x FROM t ORDER BY x",
    ] {
        let expected = error(&pg, sql).await;
        let actual = error(&wide, sql).await;
        if actual != expected {
            differences.push(format!(
                "{sql}\n  postgres: {expected:?}\n  pgwide:   {actual:?}"
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
