//! Password authentication of a client during startup: the SCRAM-SHA-256 exchange
//! (pgwire's `ScramServerAuth` does the proof arithmetic against the stored
//! verifier) or, for roles with an MD5 hash while MD5 is enabled, the MD5 challenge.
//!
//! A missing role, a role without a password and a wrong password all fail the same
//! way (28P01, `password authentication failed for user "x"`), after a complete
//! exchange against a random verifier, so clients cannot probe which roles exist.

use super::wire::{Wire, WireError};
use crate::auth::{scram, AuthOptions, Role};
use crate::sql::SqlError;
use crate::sqlstate::SqlState;
use bytes::{Buf, Bytes};
use pgwire::api::auth::sasl::scram::{ScramSecret, ScramServerAuth};
use pgwire::messages::startup::Authentication;
use tokio::io::{AsyncRead, AsyncWrite};

const SCRAM_SHA_256: &str = "SCRAM-SHA-256";

/// How the startup phase ended.
pub(crate) enum Outcome {
    /// The client proved its password (or none was needed).
    Accepted,
    /// Refused: the FATAL error to send.
    Refused(SqlError),
    /// The client hung up mid-exchange (psql does, to prompt for a password).
    Gone,
}

fn failed(user: &str) -> SqlError {
    SqlError::fatal(
        SqlState::InvalidPassword,
        format!("password authentication failed for user \"{user}\""),
    )
}

/// Authenticates `user` as `options` demand.
pub(crate) async fn authenticate<S>(
    wire: &mut Wire<S>,
    options: &AuthOptions,
    user: &str,
) -> Result<Outcome, WireError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let Some(roles) = &options.roles else {
        return Ok(Outcome::Accepted);
    };
    let role = roles.get(user);
    if !options.password_required() {
        // Trust: a role of that name still needs LOGIN; other names act as superuser.
        return Ok(match role {
            Some(role) if !role.login => Outcome::Refused(no_login(user)),
            _ => Outcome::Accepted,
        });
    }
    let proven = match role.as_ref() {
        Some(Role {
            md5: Some(hash), ..
        }) if options.md5 => md5(wire, hash).await?,
        _ => {
            let secret = role
                .as_ref()
                .and_then(|r| r.scram.as_deref())
                .and_then(scram::parse_verifier);
            sasl(wire, secret).await?
        }
    };
    Ok(match (proven, role) {
        (None, _) => Outcome::Gone,
        (Some(false), _) | (Some(true), None) => Outcome::Refused(failed(user)),
        (Some(true), Some(role)) if !role.login => Outcome::Refused(no_login(user)),
        (Some(true), Some(_)) => Outcome::Accepted,
    })
}

fn no_login(user: &str) -> SqlError {
    SqlError::fatal(
        SqlState::InvalidAuthorizationSpecification,
        format!("role \"{user}\" is not permitted to log in"),
    )
}

/// A verifier no password matches, for roles that do not exist or have no password.
fn decoy() -> Result<ScramSecret, WireError> {
    let random = scram::random_bytes::<32>().map_err(WireError::Protocol)?;
    let salt = scram::random_bytes::<16>().map_err(WireError::Protocol)?;
    Ok(ScramSecret::Verifier {
        salt: salt.to_vec(),
        iterations: scram::ITERATIONS,
        stored_key: random.to_vec(),
        server_key: random.to_vec(),
    })
}

/// The SCRAM-SHA-256 exchange; `Some(proven)` or `None` if the client left.
async fn sasl<S>(wire: &mut Wire<S>, secret: Option<ScramSecret>) -> Result<Option<bool>, WireError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let secret = match secret {
        Some(secret) => secret,
        None => decoy()?,
    };
    wire.put(&Authentication::SASL(vec![SCRAM_SHA_256.to_string()]));
    wire.flush().await?;
    let Some(mut initial) = wire.read_auth_response().await? else {
        return Ok(None);
    };
    let mechanism = cstr(&mut initial)?;
    if mechanism != SCRAM_SHA_256 {
        return Err(WireError::Protocol(format!(
            "SASL authentication mechanism {mechanism} is not supported"
        )));
    }
    if initial.remaining() < 4 {
        return Err(malformed());
    }
    let len = initial.get_i32();
    let data = match usize::try_from(len) {
        Ok(len) if len == initial.remaining() => initial,
        _ => return Err(malformed()),
    };
    let server = ScramServerAuth::new();
    let (server_first, waiting) = match server.on_client_first_message_with_secret(&data, secret) {
        Ok(step) => step,
        Err(e) => return Err(WireError::Protocol(format!("invalid SCRAM message: {e}"))),
    };
    wire.put(&Authentication::SASLContinue(Bytes::from(server_first)));
    wire.flush().await?;
    let Some(response) = wire.read_auth_response().await? else {
        return Ok(None);
    };
    match waiting.on_client_final_message(&response) {
        Ok(server_final) => {
            wire.put(&Authentication::SASLFinal(Bytes::from(server_final)));
            Ok(Some(true))
        }
        Err(pgwire::error::PgWireError::InvalidPassword(_)) => Ok(Some(false)),
        Err(e) => {
            tracing::debug!(error = %e, "SCRAM exchange failed");
            Ok(Some(false))
        }
    }
}

/// The MD5 challenge against the stored `md5...` hash.
async fn md5<S>(wire: &mut Wire<S>, stored: &str) -> Result<Option<bool>, WireError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let salt = scram::random_bytes::<4>().map_err(WireError::Protocol)?;
    wire.put(&Authentication::MD5Password(salt.to_vec()));
    wire.flush().await?;
    let Some(mut body) = wire.read_auth_response().await? else {
        return Ok(None);
    };
    let response = cstr(&mut body)?;
    Ok(Some(scram::md5_response_matches(stored, &salt, &response)))
}

fn malformed() -> WireError {
    WireError::Protocol("invalid authentication response".into())
}

fn cstr(body: &mut Bytes) -> Result<String, WireError> {
    let end = body.iter().position(|b| *b == 0).ok_or_else(malformed)?;
    let s = body.split_to(end);
    body.advance(1);
    String::from_utf8(s.to_vec()).map_err(|_| malformed())
}
