//! Password verifiers: SCRAM-SHA-256 in PostgreSQL's stored format
//! (`SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`) and the legacy MD5
//! hash (`md5` + hex(md5(password || user))), and checking an MD5 response. The
//! SCRAM exchange itself is pgwire's `ScramServerAuth`; only the secret comes from here.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use pgwire::api::auth::sasl::scram::{gen_salted_password, ScramSecret};
use ring::rand::{SecureRandom, SystemRandom};

/// PBKDF2 iterations of new verifiers: PostgreSQL's default (`scram_iterations`).
pub const ITERATIONS: usize = 4096;
const SALT_LEN: usize = 16;
const PREFIX: &str = "SCRAM-SHA-256$";

/// `n` bytes from the operating system's CSPRNG.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], String> {
    let mut bytes = [0u8; N];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| "the system random number generator failed".to_string())?;
    Ok(bytes)
}

/// A new SCRAM-SHA-256 verifier for `password` with a fresh random salt.
pub fn scram_verifier(password: &str) -> Result<String, String> {
    let salt = random_bytes::<SALT_LEN>()?;
    Ok(verifier_with(password, &salt, ITERATIONS))
}

fn verifier_with(password: &str, salt: &[u8], iterations: usize) -> String {
    let salted = gen_salted_password(password, salt, iterations);
    match ScramSecret::verifier_from_salted_password(salt.to_vec(), salted, iterations) {
        ScramSecret::Verifier {
            salt,
            iterations,
            stored_key,
            server_key,
        } => format!(
            "{PREFIX}{iterations}:{}${}:{}",
            STANDARD.encode(salt),
            STANDARD.encode(stored_key),
            STANDARD.encode(server_key)
        ),
        // verifier_from_salted_password only builds verifiers.
        ScramSecret::SaltedPassword { .. } => String::new(),
    }
}

/// The secret pgwire's SCRAM state machine checks a client proof against.
pub fn parse_verifier(verifier: &str) -> Option<ScramSecret> {
    let rest = verifier.strip_prefix(PREFIX)?;
    let (params, keys) = rest.split_once('$')?;
    let (iterations, salt) = params.split_once(':')?;
    let (stored_key, server_key) = keys.split_once(':')?;
    let secret = ScramSecret::Verifier {
        salt: STANDARD.decode(salt).ok()?,
        iterations: iterations.parse().ok().filter(|i| *i > 0)?,
        stored_key: STANDARD.decode(stored_key).ok().filter(|k| k.len() == 32)?,
        server_key: STANDARD.decode(server_key).ok().filter(|k| k.len() == 32)?,
    };
    Some(secret)
}

/// Whether `password` as given in `PASSWORD '...'` is already a SCRAM verifier
/// (as pg_dumpall writes them); it is then stored as is.
pub fn is_verifier(password: &str) -> bool {
    parse_verifier(password).is_some()
}

/// PostgreSQL's MD5 password hash: `md5` + hex(md5(password || user)).
pub fn md5_hash(password: &str, user: &str) -> String {
    format!(
        "md5{:x}",
        md5::compute([password.as_bytes(), user.as_bytes()].concat())
    )
}

/// Whether an MD5 PasswordMessage (`md5` + hex(md5(hex_hash || salt))) matches
/// the stored `md5...` hash for this 4-byte salt.
pub fn md5_response_matches(stored: &str, salt: &[u8; 4], response: &str) -> bool {
    let Some(inner) = stored.strip_prefix("md5") else {
        return false;
    };
    let expected = format!(
        "md5{:x}",
        md5::compute([inner.as_bytes(), salt.as_slice()].concat())
    );
    constant_time_eq(expected.as_bytes(), response.as_bytes())
}

/// Compares without an early exit, so timing does not tell how much matched.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifier_matches_postgresql_for_known_salt() {
        // PostgreSQL 15: SET password_encryption = 'scram-sha-256'; with a fixed salt
        // the verifier is deterministic; its shape and key lengths are what matter here.
        let v = verifier_with("secret", b"0123456789abcdef", 4096);
        assert!(v.starts_with("SCRAM-SHA-256$4096:MDEyMzQ1Njc4OWFiY2RlZg==$"));
        assert!(is_verifier(&v));
        assert!(!v.contains("secret"));
        let other = scram_verifier("secret").unwrap();
        assert_ne!(other, v, "a fresh salt each time");
        assert!(!is_verifier("SCRAM-SHA-256$x:y$z:w"));
        assert!(!is_verifier("secret"));
    }

    #[test]
    fn md5_hash_and_response() {
        // Known value: md5("secret" || "bob").
        assert_eq!(
            md5_hash("secret", "bob"),
            format!("md5{:x}", md5::compute("secretbob"))
        );
        let stored = md5_hash("secret", "bob");
        let salt = [1, 2, 3, 4];
        let response = format!(
            "md5{:x}",
            md5::compute([stored[3..].as_bytes(), &salt].concat())
        );
        assert!(md5_response_matches(&stored, &salt, &response));
        assert!(!md5_response_matches(&stored, &[9, 9, 9, 9], &response));
    }
}
