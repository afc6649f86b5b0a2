//! Runs `sql/seed_examples.sql` with the real psql against the real `pgwide serve`
//! binary (the README's run command) and compares the output with
//! `sql/seed_examples.expected`.

mod server_process;

use server_process::Pgwide;

/// The allowed-version window in messages depends on the current time.
fn normalize(output: &str) -> String {
    output
        .lines()
        .map(
            |line| match (line.find("window ["), line.find(") set by")) {
                (Some(start), Some(end)) => format!(
                    "{}window [NOW-OFFSET, NOW+OFFSET{}",
                    &line[..start],
                    &line[end..]
                ),
                _ => line.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn seed_examples_run_with_psql() {
    let server = Pgwide::fresh();
    let root = env!("CARGO_MANIFEST_DIR");
    let output = server.psql_args(&["-f", &format!("{root}/sql/seed_examples.sql")]);
    drop(server);
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    let got = normalize(&text.replace(&format!("{root}/"), ""));
    let expected = std::fs::read_to_string(format!("{root}/sql/seed_examples.expected")).unwrap();
    assert_eq!(
        got.trim_end(),
        expected.trim_end(),
        "psql output differs from sql/seed_examples.expected"
    );
}
