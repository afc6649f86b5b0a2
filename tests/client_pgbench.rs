//! pgbench (PostgreSQL 15's, from the postgresql-15 package) with a custom script of
//! point gets, updates by PK, an increment inside BEGIN/END and a PK range count, in each
//! of its three query modes: `simple`, `extended` and `prepared` (named server-side
//! statements reused for every transaction). Every transaction must complete without
//! error, and `pgwide.table_stats` must have counted the reads, writes and capacity units.

mod server_process;

use server_process::{assert_success, clients_dir, Pgwide};

/// The number after `label` on its line of pgbench's report.
fn number_after(report: &str, label: &str) -> u64 {
    let line = report
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no `{label}` in pgbench's report:\n{report}"));
    line[label.len()..]
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("bad line: {line}"))
}

#[test]
fn pgbench_custom_script_in_every_query_mode() {
    let have = std::process::Command::new("pgbench")
        .arg("--version")
        .output();
    assert!(
        have.is_ok_and(|o| o.status.success()),
        "pgbench is missing: run scripts/test (it installs postgresql-15, which has it)"
    );
    let server = Pgwide::fresh();
    let rows: Vec<String> = (1..=100).map(|id| format!("({id}, 0)")).collect();
    server.setup(&[
        "CREATE TABLE accounts (id BIGINT PRIMARY KEY, balance BIGINT, note TEXT)",
        &format!(
            "INSERT INTO accounts (id, balance) VALUES {}",
            rows.join(", ")
        ),
    ]);
    let dir = clients_dir("pgbench");
    for mode in ["simple", "extended", "prepared"] {
        let output = server.run(
            "pgbench",
            &[
                "-n",
                "-M",
                mode,
                "-c",
                "2",
                "-j",
                "2",
                "-t",
                "25",
                "-f",
                "point.sql",
            ],
            &dir,
        );
        let report = assert_success(&format!("pgbench -M {mode}"), &output);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stderr.contains("ERROR"),
            "pgbench -M {mode} hit errors:\n{stderr}"
        );
        assert!(report.contains(&format!("query mode: {mode}")), "{report}");
        assert_eq!(
            number_after(&report, "number of transactions actually processed:"),
            50,
            "pgbench -M {mode}:\n{report}"
        );
        assert_eq!(
            number_after(&report, "number of failed transactions:"),
            0,
            "pgbench -M {mode}:\n{report}"
        );
    }
    // The writes landed: 150 transactions each touched one random row of 100.
    let touched = server.query("SELECT count(*) FROM accounts WHERE note = 'touched'");
    let touched: u64 = touched[0][0].as_deref().unwrap().parse().unwrap();
    assert!(touched > 0 && touched <= 100, "{touched} rows touched");
    let rows = server.query("SELECT count(*) FROM accounts");
    assert_eq!(rows[0][0].as_deref(), Some("100"));
    // pgwide.table_stats counted the work: 150 transactions of 3 point reads, a range
    // read and 3 writes each, on top of the 100-row load.
    let stats = server.query(
        "SELECT reads, writes, read_cu, write_cu, rows_scanned FROM pgwide.table_stats \
         WHERE \"table\" = 'accounts'",
    );
    let stats: Vec<u64> = stats[0]
        .iter()
        .map(|v| v.as_deref().unwrap().parse().unwrap())
        .collect();
    let [reads, writes, read_cu, write_cu, rows_scanned] = stats[..] else {
        panic!("{stats:?}")
    };
    assert!(reads >= 150 * 3, "reads {reads}");
    assert!(writes >= 150 * 2, "writes {writes}");
    assert!(
        read_cu >= reads && write_cu >= writes,
        "CUs {read_cu}/{write_cu}"
    );
    assert!(rows_scanned >= 150, "rows scanned {rows_scanned}");
}
