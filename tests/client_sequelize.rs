//! Sequelize 6 (pinned in tests/clients/sequelize/package-lock.json) against the real
//! `pgwide serve`, stock settings, as its docs use it: default models (an auto-increment
//! `id`, a unique email, a boolean default, a DECIMAL, timestamps), `hasMany` /
//! `belongsTo` with ON DELETE CASCADE and a model index, `sync({ force: true })` with its
//! catalog queries, then `create`, `bulkCreate`, `findAll` with `include`, `upsert`
//! (ON CONFLICT), SequelizeUniqueConstraintError, a rolled-back transaction,
//! `count({ group })`, a cascading `destroy`, and a second `sync({ force: true })`.
//! `tests/clients/sequelize/app.js` holds the checks; scripts/test installs Sequelize.

mod server_process;

use server_process::{assert_success, clients_dir, Pgwide};

#[test]
fn sequelize_syncs_and_queries() {
    let dir = clients_dir("sequelize");
    assert!(
        dir.join("node_modules/sequelize").is_dir(),
        "Sequelize is not installed in tests/clients/sequelize: run scripts/test (it runs npm ci there)"
    );
    let server = Pgwide::fresh();
    let output = server.run("node", &["app.js"], &dir);
    let stdout = assert_success("tests/clients/sequelize/app.js", &output);
    assert!(stdout.contains("SEQUELIZE APP OK"), "{stdout}");
    // The checks the program made, so a silently skipped step shows up here.
    let checks = stdout.lines().filter(|l| l.starts_with("ok ")).count();
    assert_eq!(checks, 13, "a check was skipped:\n{stdout}");
}
