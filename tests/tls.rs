//! TLS with real psql against the real binary: certificates made here with rcgen (a
//! test CA and a server certificate for localhost / 127.0.0.1); sslmode=require and
//! verify-full succeed and really encrypt, a wrong CA fails verification, and with
//! require_tls a plain connection is refused with 28000.

mod server_process;

use server_process::Pgwide;
use std::path::Path;

const PW: &str = "tls-superuser-pw";

struct Certs {
    ca: std::path::PathBuf,
    cert: std::path::PathBuf,
    key: std::path::PathBuf,
    other_ca: std::path::PathBuf,
}

fn make_ca(name: &str) -> (rcgen::Certificate, rcgen::KeyPair) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
    ];
    (params.self_signed(&key).unwrap(), key)
}

fn make_certs(dir: &Path) -> Certs {
    let (ca, ca_key) = make_ca("pgwide test CA");
    let (other_ca, _) = make_ca("some other CA");
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params
        .subject_alt_names
        .push(rcgen::SanType::IpAddress("127.0.0.1".parse().unwrap()));
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "localhost");
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    let certs = Certs {
        ca: dir.join("ca.pem"),
        cert: dir.join("server.pem"),
        key: dir.join("server.key"),
        other_ca: dir.join("other-ca.pem"),
    };
    std::fs::write(&certs.ca, ca.pem()).unwrap();
    std::fs::write(&certs.other_ca, other_ca.pem()).unwrap();
    std::fs::write(&certs.cert, cert.pem()).unwrap();
    std::fs::write(&certs.key, key.serialize_pem()).unwrap();
    certs
}

/// A server with TLS (required if `require`) that also listens on a Unix-domain
/// socket in `dir`.
fn start(dir: &Path, certs: &Certs, require: bool) -> Pgwide {
    let mut args = vec![
        "--tls-cert",
        certs.cert.to_str().unwrap(),
        "--tls-key",
        certs.key.to_str().unwrap(),
        "--unix-socket-dir",
        dir.to_str().unwrap(),
    ];
    if require {
        args.push("--require-tls");
    }
    Pgwide::start(
        &dir.join("data"),
        &args,
        &[("PGWIDE_SUPERUSER_PASSWORD", PW)],
    )
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn sslmode_require_and_verify_full_with_psql() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let server = start(dir.path(), &certs, false);
    let env = [("PGPASSWORD", PW)];

    let required = server.psql(
        "host=localhost user=postgres dbname=postgres sslmode=require",
        "\\conninfo",
        &env,
    );
    assert!(required.status.success(), "{}", stderr(&required));
    let info = String::from_utf8_lossy(&required.stdout);
    assert!(info.contains("SSL connection (protocol: TLSv1.3"), "{info}");

    let ca = certs.ca.to_str().unwrap();
    let verified = server.psql(
        "host=localhost user=postgres dbname=postgres sslmode=verify-full",
        "SELECT 'verified'",
        &[("PGPASSWORD", PW), ("PGSSLROOTCERT", ca)],
    );
    assert!(verified.status.success(), "{}", stderr(&verified));
    assert_eq!(String::from_utf8_lossy(&verified.stdout).trim(), "verified");

    // The wrong CA does not verify the server.
    let wrong_ca = server.psql(
        "host=localhost user=postgres dbname=postgres sslmode=verify-full",
        "SELECT 1",
        &[
            ("PGPASSWORD", PW),
            ("PGSSLROOTCERT", certs.other_ca.to_str().unwrap()),
        ],
    );
    assert!(!wrong_ca.status.success());
    assert!(
        stderr(&wrong_ca).contains("certificate verify failed"),
        "{}",
        stderr(&wrong_ca)
    );

    // TLS is optional here: a plain connection still works.
    let plain = server.psql(
        "host=127.0.0.1 user=postgres dbname=postgres sslmode=disable",
        "\\conninfo",
        &env,
    );
    assert!(plain.status.success(), "{}", stderr(&plain));
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("SSL connection"));
}

#[test]
fn require_tls_refuses_plain_connections() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let server = start(dir.path(), &certs, true);
    let env = [("PGPASSWORD", PW)];
    let plain = server.psql(
        "host=127.0.0.1 user=postgres dbname=postgres sslmode=disable",
        "SELECT 1",
        &env,
    );
    assert!(!plain.status.success());
    assert!(
        stderr(&plain).contains("SSL connection is required"),
        "{}",
        stderr(&plain)
    );
    let tls = server.psql(
        "host=localhost user=postgres dbname=postgres sslmode=verify-full",
        "SELECT 'over tls'",
        &[
            ("PGPASSWORD", PW),
            ("PGSSLROOTCERT", certs.ca.to_str().unwrap()),
        ],
    );
    assert!(tls.status.success(), "{}", stderr(&tls));
    assert_eq!(String::from_utf8_lossy(&tls.stdout).trim(), "over tls");

    // As in PostgreSQL, the local socket is not encrypted and not refused: nobody
    // between the ends could read it. Passwords are still asked for.
    let socket = format!(
        "host={} user=postgres dbname=postgres",
        dir.path().display()
    );
    let local = server.psql(&socket, "\\conninfo", &env);
    assert!(local.status.success(), "{}", stderr(&local));
    let info = String::from_utf8_lossy(&local.stdout);
    assert!(info.contains("via socket in"), "{info}");
    assert!(!info.contains("SSL connection"), "{info}");
    let no_password = server.psql(&socket, "SELECT 1", &[]);
    assert!(!no_password.status.success());
    assert!(
        stderr(&no_password).contains("password"),
        "{}",
        stderr(&no_password)
    );
}

#[test]
fn bad_certificate_files_stop_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pem");
    let output = server_process::command(
        &dir.path().join("data"),
        "127.0.0.1:0",
        &[
            "--tls-cert",
            missing.to_str().unwrap(),
            "--tls-key",
            missing.to_str().unwrap(),
        ],
        &[],
    )
    .output()
    .unwrap();
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("cannot read TLS certificate"),
        "{}",
        stderr(&output)
    );
}

/// Runs tests/tls/TlsProbe.java with pgjdbc against `url`.
fn pgjdbc(url: &str) -> (bool, String) {
    const JAR: &str = "/usr/share/java/postgresql.jar";
    assert!(
        Path::new(JAR).exists(),
        "{JAR} is missing: run scripts/test (it installs libpostgresql-jdbc-java)"
    );
    let probe = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tls/TlsProbe.java");
    let output = std::process::Command::new("java")
        .args(["-cp", JAR])
        .arg(probe)
        .args([url, "postgres", PW])
        .output()
        .expect("java runs (Java 17 is on the machine)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        stderr(&output)
    );
    (output.status.success(), text)
}

#[test]
fn sslmode_require_and_verify_full_with_pgjdbc() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let server = start(dir.path(), &certs, true);
    let base = format!("jdbc:postgresql://localhost:{}/postgres", server.port);
    let ca = certs.ca.to_str().unwrap();

    let (ok, out) = pgjdbc(&format!("{base}?sslmode=require"));
    assert!(ok, "{out}");
    assert!(out.contains("answer: over jdbc"), "{out}");

    let (ok, out) = pgjdbc(&format!("{base}?sslmode=verify-full&sslrootcert={ca}"));
    assert!(ok, "{out}");
    assert!(out.contains("answer: over jdbc"), "{out}");

    // The wrong CA does not verify the server.
    let other = certs.other_ca.to_str().unwrap();
    let (ok, out) = pgjdbc(&format!("{base}?sslmode=verify-full&sslrootcert={other}"));
    assert!(!ok, "{out}");
    assert!(out.contains("error 08006"), "{out}");

    // require_tls refuses pgjdbc without TLS, with 28000.
    let (ok, out) = pgjdbc(&format!("{base}?sslmode=disable"));
    assert!(!ok, "{out}");
    assert!(out.contains("error 28000"), "{out}");
}
