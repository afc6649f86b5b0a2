//! node-postgres (`pg`, pinned in tests/clients/node/package-lock.json) against the real
//! `pgwide serve`: parameterized queries, every type's round trip, named prepared
//! statements, transactions, SQLSTATEs and a pool (`tests/clients/node/client.js`).

mod server_process;

use server_process::{assert_success, clients_dir, Pgwide};

#[test]
fn node_postgres() {
    let dir = clients_dir("node");
    assert!(
        dir.join("node_modules/pg").is_dir(),
        "node-postgres is not installed in tests/clients/node: run scripts/test (it runs npm ci there)"
    );
    let server = Pgwide::fresh();
    server.setup(&[
        "CREATE TABLE things (id BIGINT PRIMARY KEY, b BOOLEAN, i2 SMALLINT, i4 INTEGER, \
         i8 BIGINT, f4 REAL, f8 DOUBLE PRECISION, t TEXT, bin BYTEA)",
        "CREATE TABLE kv (k TEXT, n BIGINT, v TEXT, PRIMARY KEY (k, n))",
    ]);
    let output = server.run("node", &["client.js"], &dir);
    let stdout = assert_success("tests/clients/node/client.js", &output);
    assert!(stdout.contains("ALL NODE CHECKS PASSED"), "{stdout}");
    let checks = stdout.lines().filter(|l| l.starts_with("ok ")).count();
    assert_eq!(checks, 29, "a check was skipped:\n{stdout}");
}
