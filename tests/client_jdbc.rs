//! pgjdbc (Debian's libpostgresql-jdbc-java, compiled against with javac) against the
//! real `pgwide serve`: DatabaseMetaData (tables, columns, primary keys, indexes, type
//! info), every type through PreparedStatement with setNull and setBytes, past the
//! driver's prepareThreshold into named server-side statements and in
//! preferQueryMode=simple, executeBatch, commit/rollback, SQLSTATEs and
//! ResultSetMetaData with base tables (`tests/clients/java/Client.java` holds the checks),
//! from a JVM in UTC and from one in New York.

mod server_process;

use server_process::{assert_success, clients_dir, Pgwide};
use std::process::Command;

const JAR: &str = "/usr/share/java/postgresql.jar";

#[test]
fn pgjdbc() {
    run_client(&[]);
}

/// The same checks from a JVM in New York: the driver sends that zone at startup, and
/// every timestamp it binds or reads goes through it.
#[test]
fn pgjdbc_in_another_time_zone() {
    run_client(&["-Duser.timezone=America/New_York"]);
}

/// Compiles and runs `Client.java` against a fresh server, the JVM started with
/// `jvm_options`.
fn run_client(jvm_options: &[&str]) {
    assert!(
        std::path::Path::new(JAR).exists(),
        "{JAR} is missing: run scripts/test (it installs libpostgresql-jdbc-java)"
    );
    let classes = tempfile::tempdir().unwrap();
    let javac = Command::new("javac")
        .args(["-d"])
        .arg(classes.path())
        .args(["-cp", JAR])
        .arg(clients_dir("java").join("Client.java"))
        .output()
        .expect("javac runs (Java 17 is on the machine)");
    assert_success("javac Client.java", &javac);
    let server = Pgwide::fresh();
    server.setup(&[
        "CREATE TABLE items (id BIGINT PRIMARY KEY, b BOOLEAN, i2 SMALLINT, i4 INTEGER, \
         i8 BIGINT, f4 REAL, f8 DOUBLE PRECISION, t TEXT, bin BYTEA)",
        "CREATE TABLE pairs (a TEXT, b BIGINT, v TEXT, PRIMARY KEY (a, b))",
        "CREATE TABLE quad (a TEXT, b BIGINT, c TEXT, d BIGINT, v TEXT, PRIMARY KEY (c, a, d, b))",
    ]);
    let classpath = format!("{}:{JAR}", classes.path().display());
    let mut args: Vec<&str> = jvm_options.to_vec();
    args.extend(["-cp", &classpath, "Client"]);
    let output = server.run("java", &args, &clients_dir("java"));
    let stdout = assert_success("tests/clients/java/Client.java", &output);
    assert!(stdout.contains("ALL JDBC CHECKS PASSED"), "{stdout}");
    let checks = stdout.lines().filter(|l| l.starts_with("ok ")).count();
    assert!(checks >= 380, "only {checks} checks ran:\n{stdout}");
}
