//! Runs the cargo-fuzz targets in `fuzz/` for a bounded time each (`PGWIDE_FUZZ_SECS`,
//! default 60): the primary-key codec, SQL text into the SQL layer, and wire-protocol
//! messages after startup. A target that crashes (a panic, a failed assertion, a hang
//! past libFuzzer's timeout) fails the test, which prints the reproducer's path:
//! `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run <target> -s none <artifact>`.
//!
//! Needs `cargo-fuzz` (scripts/test installs it). Stable Rust is enough: cargo-fuzz's
//! nightly flags are allowed with RUSTC_BOOTSTRAP=1, and no sanitizer is used
//! (`-s none`; pgwide has no unsafe code of its own to check).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

fn cargo_fuzz() -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(fuzz_dir())
        .env("RUSTC_BOOTSTRAP", "1")
        // The main build's flags (coverage, target dir) must not leak into this one.
        // cargo fuzz appends these to its own: no debug info. Its default line tables
        // made the three targets 1.7 GB on CI machines whose disk has run out; a crash
        // still names its functions, and its reproducer reruns with line numbers.
        .env("RUSTFLAGS", "-Cdebuginfo=0")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .arg("fuzz");
    command
}

/// Builds all three targets once (the tests run in parallel and share it).
fn build() {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let installed = cargo_fuzz().arg("--version").output();
        if !installed.is_ok_and(|o| o.status.success()) {
            return Err("cargo-fuzz is not installed: run scripts/test, or \
                 `cargo install cargo-fuzz --locked`"
                .into());
        }
        let started = Instant::now();
        let output = cargo_fuzz()
            .args(["build", "-s", "none"])
            .output()
            .map_err(|e| format!("cannot run cargo fuzz build: {e}"))?;
        eprintln!(
            "fuzz targets built in {:.0} s",
            started.elapsed().as_secs_f64()
        );
        if !output.status.success() {
            return Err(format!(
                "cargo fuzz build failed ({}):\n{}",
                output.status,
                build_errors(&String::from_utf8_lossy(&output.stderr))
            ));
        }
        Ok(())
    });
    if let Err(message) = built {
        panic!("{message}");
    }
}

/// The part of a failed build's log worth reading: its last 120 lines once the
/// `Compiling …` progress lines are gone (CI shows only a failure's first screenful,
/// and a cold build prints hundreds of them before the error).
fn build_errors(log: &str) -> String {
    let lines: Vec<&str> = log
        .lines()
        .filter(|line| !line.trim_start().starts_with("Compiling "))
        .collect();
    lines[lines.len().saturating_sub(120)..].join("\n")
}

fn seconds() -> u64 {
    std::env::var("PGWIDE_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60)
}

/// The tests of this file, each fuzzing one target.
const FUZZ_TESTS: usize = 3;

/// Counts this file's tests as they end, passed or failed; the last one to end
/// removes the fuzz build (`fuzz/target`) when `PGWIDE_FUZZ_CLEAN=1`, as scripts/test
/// sets it: the tests that run after these need the disk (CI machines' disks have run
/// out), and a fresh machine has nothing to reuse it for.
struct Ended;

impl Drop for Ended {
    fn drop(&mut self) {
        static ENDED: AtomicUsize = AtomicUsize::new(0);
        let last = ENDED.fetch_add(1, Ordering::SeqCst) + 1 == FUZZ_TESTS;
        if last && std::env::var("PGWIDE_FUZZ_CLEAN").is_ok_and(|v| v == "1") {
            let build = fuzz_dir().join("target");
            if let Err(e) = std::fs::remove_dir_all(&build) {
                eprintln!("could not remove {}: {e}", build.display());
            }
        }
    }
}

/// Fuzzes `target` from `seeds` (written to a fresh corpus directory) and fails on
/// any crash.
fn fuzz(target: &str, seeds: Vec<Vec<u8>>, extra: &[&str]) {
    let _ended = Ended;
    build();
    let corpus = tempfile::tempdir().expect("corpus dir");
    for (i, seed) in seeds.iter().enumerate() {
        std::fs::write(corpus.path().join(format!("seed-{i}")), seed).expect("seed");
    }
    let artifacts = fuzz_dir().join("artifacts").join(target);
    std::fs::create_dir_all(&artifacts).expect("artifacts dir");
    let output = cargo_fuzz()
        .args(["run", target, "-s", "none"])
        .arg(corpus.path())
        .arg("--")
        .arg(format!("-max_total_time={}", seconds()))
        .arg("-timeout=60")
        .arg("-rss_limit_mb=3072")
        .arg("-print_final_stats=1")
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .args(extra)
        .output()
        .expect("cargo fuzz run");
    let log = String::from_utf8_lossy(&output.stderr);
    let runs = log
        .lines()
        .find(|l| l.starts_with("stat::number_of_executed_units"))
        .unwrap_or("stat::number_of_executed_units: ?");
    eprintln!("{target}: {runs}");
    if !output.status.success() {
        let tail: Vec<&str> = log.lines().rev().take(60).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "fuzz target {target} found a crash; reproducer in {}:\n{}",
            artifacts.display(),
            tail.join("\n")
        );
    }
}

#[test]
fn pk_codec_never_panics_and_round_trips_in_order() {
    let seeds = vec![
        // One Integer column: the encoding of 1.
        [
            &[0b1111_1100u8, 0x01][..],
            &(1u64 ^ (1 << 63)).to_be_bytes(),
        ]
        .concat(),
        // String then Binary with an escaped zero byte.
        vec![
            0b1111_1001,
            0x01,
            b'a',
            0x00,
            0x01,
            0x01,
            0x00,
            0xFF,
            0x00,
            0x01,
        ],
        // Truncated.
        vec![0b1111_0101, 0x01, b'x'],
    ];
    fuzz("pk_codec", seeds, &["-max_len=256"]);
}

/// Statements over the fuzz database's tables `t (k, v, n)` and `w (part, id, b)`,
/// plus the golden SQL files (each a whole script).
fn sql_seeds() -> Vec<Vec<u8>> {
    let statements = [
        "SELECT * FROM t WHERE k = 1",
        "SELECT v, n FROM t WHERE k IN (1, 2, 5)",
        "SELECT * FROM w WHERE part = 'a' AND id >= 1 AND id < 3 ORDER BY id DESC LIMIT 2",
        "SELECT count(*), sum(n), max(v) FROM t GROUP BY v HAVING count(*) > 0",
        "SELECT t.k, w.id FROM t JOIN w ON t.k = w.id ORDER BY 1, 2",
        "INSERT INTO t VALUES (4, 'four', 4) RETURNING *",
        "UPDATE t SET n = n + 1 WHERE k = 2",
        "DELETE FROM t WHERE v IS NULL",
        "BEGIN; INSERT INTO t VALUES (7, 'x', 7); SELECT * FROM t; COMMIT",
        "BEGIN; UPDATE w SET b = '\\x01' WHERE part = 'b' AND id = 1; ROLLBACK",
        "CREATE TABLE z (a TEXT PRIMARY KEY, b DOUBLE PRECISION) WITH (max_versions = 2)",
        "SELECT * FROM versions.t WHERE k = 1",
        "EXPLAIN SELECT * FROM t WHERE k > 1",
        "COPY t FROM STDIN",
        "COPY (SELECT * FROM t) TO STDOUT WITH (FORMAT csv, HEADER)",
        "SET statement_timeout = '1s'; SHOW statement_timeout; RESET ALL",
        "SELECT md5(v), lpad(v, 10, '*'), k::text || 'x', CAST(n AS DOUBLE PRECISION) / 0 FROM t",
        "WITH c AS (SELECT k FROM t) SELECT row_number() OVER (ORDER BY k) FROM c",
        "SELECT relname FROM pg_catalog.pg_class WHERE relkind = 'r'",
        "INSERT INTO t SELECT k + 10, v, n FROM t",
        "SELECT * FROM t WHERE k = 9223372036854775807 OR n < -9223372036854775808",
        "CREATE INDEX tv ON t (v, n); SELECT k FROM t WHERE v = 'x' AND n IN (1, 2)",
        "CREATE UNIQUE INDEX ON t (n); UPDATE t SET n = 1; DROP INDEX t_n_idx",
        "ALTER TABLE w ADD CONSTRAINT wb UNIQUE (b); ALTER TABLE w DROP CONSTRAINT wb",
    ];
    let mut seeds: Vec<Vec<u8>> = statements.iter().map(|s| s.as_bytes().to_vec()).collect();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sql");
    for entry in std::fs::read_dir(golden).expect("tests/sql") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "sql") {
            seeds.push(std::fs::read(&path).expect("golden sql"));
        }
    }
    seeds
}

#[test]
fn sql_layer_never_panics_on_any_statement() {
    let dict = fuzz_dir().join("sql.dict");
    fuzz(
        "sql",
        sql_seeds(),
        &["-max_len=4096", &format!("-dict={}", dict.display())],
    );
}

/// One frontend message: type byte, length, body.
fn message(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![kind];
    m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    m.extend_from_slice(body);
    m
}

fn cstr(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    v
}

#[test]
fn wire_protocol_never_panics_after_startup() {
    let query = |sql: &str| message(b'Q', &cstr(sql));
    let parse = |name: &str, sql: &str| {
        let mut body = cstr(name);
        body.extend(cstr(sql));
        body.extend_from_slice(&1i16.to_be_bytes());
        body.extend_from_slice(&20u32.to_be_bytes());
        message(b'P', &body)
    };
    let bind = |portal: &str, statement: &str, value: &[u8]| {
        let mut body = cstr(portal);
        body.extend(cstr(statement));
        body.extend_from_slice(&0i16.to_be_bytes());
        body.extend_from_slice(&1i16.to_be_bytes());
        body.extend_from_slice(&(value.len() as i32).to_be_bytes());
        body.extend_from_slice(value);
        body.extend_from_slice(&1i16.to_be_bytes());
        body.extend_from_slice(&1i16.to_be_bytes());
        message(b'B', &body)
    };
    let execute = |portal: &str, rows: i32| {
        let mut body = cstr(portal);
        body.extend_from_slice(&rows.to_be_bytes());
        message(b'E', &body)
    };
    let describe = |kind: u8, name: &str| {
        let mut body = vec![kind];
        body.extend(cstr(name));
        message(b'D', &body)
    };
    let sync = message(b'S', &[]);
    let seeds = vec![
        query("SELECT * FROM t WHERE k = 1"),
        [
            query("BEGIN"),
            query("INSERT INTO t VALUES (5, 'x', 1)"),
            query("COMMIT"),
        ]
        .concat(),
        [
            parse("s", "SELECT v FROM t WHERE k = $1"),
            describe(b'S', "s"),
            bind("p", "s", b"1"),
            describe(b'P', "p"),
            execute("p", 1),
            execute("p", 0),
            sync.clone(),
        ]
        .concat(),
        [
            parse("", "INSERT INTO t VALUES ($1, 'y', 2)"),
            bind("", "", b"8"),
            execute("", 0),
            message(b'C', &[b'S', 0]),
            sync.clone(),
            message(b'X', &[]),
        ]
        .concat(),
        [
            query("COPY t FROM STDIN"),
            message(b'd', b"10\tten\t10\n11\t\\N\t11\n"),
            message(b'c', &[]),
        ]
        .concat(),
        [query("COPY t FROM STDIN"), message(b'f', &cstr("no"))].concat(),
        [query("SELECT * FROM w"), message(b'H', &[]), sync].concat(),
    ];
    fuzz("wire", seeds, &["-max_len=2048"]);
}
