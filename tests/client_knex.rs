//! Knex 3 (pinned in tests/clients/knex/package-lock.json) against the real `pgwide
//! serve`, stock settings, as its CLI and query builder are used: `migrate:latest`
//! (increments(), timestamps(), unique(), index(), a foreign key, then an added
//! column), the query builder over the result (`onConflict().merge()` and `.ignore()`,
//! joins, 23505 and 23503, a rolled-back transaction, ON DELETE CASCADE), then
//! `migrate:rollback --all` and `migrate:latest` again. `tests/clients/knex/app.js`
//! holds the checks; scripts/test installs Knex.

mod server_process;

use server_process::{assert_success, clients_dir, Pgwide};

#[test]
fn knex_migrates_and_queries() {
    let dir = clients_dir("knex");
    let knex = dir.join("node_modules/.bin/knex");
    assert!(
        knex.is_file(),
        "Knex is not installed in tests/clients/knex: run scripts/test (it runs npm ci there)"
    );
    let knex = knex.to_string_lossy().into_owned();
    let server = Pgwide::fresh();
    let migrate = |args: &[&str], expect: &str| {
        let mut all = vec!["--knexfile", "knexfile.js"];
        all.extend_from_slice(args);
        let output = server.run(&knex, &all, &dir);
        let stdout = assert_success(&format!("knex {}", args.join(" ")), &output);
        assert!(stdout.contains(expect), "knex {args:?}:\n{stdout}");
    };
    migrate(&["migrate:latest"], "Batch 1 run: 2 migrations");
    let output = server.run("node", &["app.js"], &dir);
    let stdout = assert_success("tests/clients/knex/app.js", &output);
    assert!(stdout.contains("KNEX APP OK"), "{stdout}");
    // The checks the program made, so a silently skipped step shows up here.
    let checks = stdout.lines().filter(|l| l.starts_with("ok ")).count();
    assert_eq!(checks, 11, "a check was skipped:\n{stdout}");
    migrate(&["migrate:rollback", "--all"], "rolled back: 2 migrations");
    // The rollback dropped the tables: `users` can be made again.
    server.setup(&[
        "CREATE TABLE users (id BIGINT PRIMARY KEY)",
        "DROP TABLE users",
    ]);
    migrate(&["migrate:latest"], "Batch 1 run: 2 migrations");
}
