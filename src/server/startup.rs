//! The startup phase of a connection after SSL negotiation (`tls`): cancel requests,
//! the startup packet, authentication (`authenticate`), opening the SQL session, and the ParameterStatus/BackendKeyData/ReadyForQuery that tell the client
//! it is in. A failure here (missing database: 3D000) reaches the client as a FATAL
//! ErrorResponse with the SQL layer's SQLSTATE, and the connection closes.

use super::authenticate::{authenticate, Outcome};
use super::cancel::Registration;
use super::wire::{Wire, WireError};
use super::Shared;
use crate::sql::activity::{Backends, SessionBackend};
use crate::sql::{SessionFactory, SqlSession, TransactionStatus};
use crate::sqlstate::SqlState;
use bytes::{Buf, BufMut, Bytes};
use pgwire::messages::startup::{Authentication, BackendKeyData, SecretKey};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::OwnedSemaphorePermit;

const SSL_REQUEST: i32 = 80_877_103;
const GSSENC_REQUEST: i32 = 80_877_104;
const CANCEL_REQUEST: i32 = 80_877_102;

/// The PostgreSQL version reported to clients; drivers pick catalog queries by it.
pub(crate) use crate::sql::{SERVER_VERSION, SERVER_VERSION_NUM};

/// A client that completed startup.
pub(crate) struct Established<Q> {
    pub session: Q,
    pub registration: Registration,
    /// Holds one of `max_connections` slots for the life of the connection.
    pub _slot: OwnedSemaphorePermit,
}

/// Runs the startup phase. `Ok(None)` means the connection is done (a cancel request,
/// a refused client that was told why, or a client that hung up). `private`: the
/// connection is encrypted or local, so `require_tls` lets it in.
pub(crate) async fn handshake<S, F>(
    wire: &mut Wire<S>,
    shared: &Shared<F>,
    private: bool,
    client: Option<std::net::SocketAddr>,
) -> Result<Option<Established<F::Session>>, WireError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
    F: SessionFactory,
{
    let (minor, mut body) = loop {
        let Some(mut packet) = wire.read_startup_packet().await? else {
            return Ok(None);
        };
        let code = packet.get_i32();
        match code {
            SSL_REQUEST | GSSENC_REQUEST => {
                // TLS is negotiated before this loop (`tls::negotiate`); a request
                // here is a second one. 'N': continue as the connection is.
                wire.out().put_u8(b'N');
                wire.flush().await?;
            }
            CANCEL_REQUEST => {
                if packet.remaining() >= 8 {
                    let pid = packet.get_i32();
                    shared.cancels.cancel(pid, &packet);
                }
                return Ok(None);
            }
            _ if code >> 16 == 3 => break ((code & 0xffff) as u16, packet),
            _ => {
                return Err(WireError::Protocol(format!(
                    "unsupported frontend protocol {}.{}: server supports 3.0",
                    code >> 16,
                    code & 0xffff
                )))
            }
        }
    };
    let params = parse_parameters(&mut body)?;
    // Protocol 3.2 and `_pq_.` extensions are not spoken: say so and continue in 3.0.
    let unsupported: Vec<&str> = params
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| k.starts_with("_pq_."))
        .collect();
    if minor > 0 || !unsupported.is_empty() {
        put_negotiate_protocol_version(wire, &unsupported);
    }

    let param = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let Some(user) = param("user").filter(|u| !u.is_empty()) else {
        wire.fatal(
            SqlState::InvalidAuthorizationSpecification,
            "no PostgreSQL user name specified in startup packet",
        )
        .await;
        return Ok(None);
    };
    let database = param("database").filter(|d| !d.is_empty()).unwrap_or(user);

    let Ok(slot) = shared.slots.clone().try_acquire_owned() else {
        wire.fatal(
            SqlState::TooManyConnections,
            "sorry, too many clients already",
        )
        .await;
        return Ok(None);
    };
    if shared.require_tls && !private {
        wire.fatal(
            SqlState::InvalidAuthorizationSpecification,
            format!("SSL connection is required: connection for user \"{user}\" without encryption refused"),
        )
        .await;
        return Ok(None);
    }
    match authenticate(wire, &shared.auth, user).await? {
        Outcome::Accepted => {}
        Outcome::Refused(e) => {
            tracing::info!(user, database, code = e.code(), "authentication failed");
            wire.fatal(e.sqlstate(), e.message()).await;
            return Ok(None);
        }
        Outcome::Gone => return Ok(None),
    }
    let mut session = match shared.factory.open(database, user, &params).await {
        Ok(session) => session,
        Err(e) => {
            tracing::debug!(database, user, error = %e, "session refused");
            wire.fatal(e.sqlstate(), e.message()).await;
            return Ok(None);
        }
    };

    let registration = shared.cancels.register();
    wire.put(&Authentication::Ok);
    let application_name = param("application_name").unwrap_or("");
    registration
        .handle
        .activity
        .identify(database, user, application_name, client);
    session.attach_backend(SessionBackend {
        pid: registration.handle.pid,
        inbox: Arc::clone(&registration.handle.inbox),
        backends: Arc::clone(&shared.cancels) as Arc<dyn Backends>,
    });
    let is_superuser = match shared.auth.roles.as_ref().and_then(|r| r.get(user)) {
        Some(role) if !role.superuser => "off",
        _ => "on",
    };
    for (name, value) in [
        ("server_version", SERVER_VERSION),
        ("server_version_num", SERVER_VERSION_NUM),
        ("server_encoding", "UTF8"),
        ("client_encoding", "UTF8"),
        ("DateStyle", "ISO, MDY"),
        ("IntervalStyle", "postgres"),
        ("TimeZone", "UTC"),
        ("integer_datetimes", "on"),
        ("standard_conforming_strings", "on"),
        ("is_superuser", is_superuser),
        ("in_hot_standby", "off"),
        ("default_transaction_read_only", "off"),
        ("session_authorization", user),
        ("application_name", application_name),
    ] {
        wire.put_parameter(name, value);
    }
    // The session may already differ from the defaults (settings of the database).
    for (name, value) in session.take_parameter_changes() {
        wire.put_parameter(&name, &value);
    }
    let handle = &registration.handle;
    wire.put(&BackendKeyData::new(
        handle.pid,
        SecretKey::I32(handle.secret),
    ));
    wire.put_ready(TransactionStatus::Idle);
    wire.flush().await?;
    tracing::debug!(database, user, pid = handle.pid, "session started");
    Ok(Some(Established {
        session,
        registration,
        _slot: slot,
    }))
}

/// The startup packet's `name\0value\0 ... \0` list.
fn parse_parameters(body: &mut Bytes) -> Result<Vec<(String, String)>, WireError> {
    let bad = || WireError::Protocol("invalid startup packet layout".into());
    let next = |body: &mut Bytes| -> Result<String, WireError> {
        let end = body.iter().position(|b| *b == 0).ok_or_else(bad)?;
        let s = body.split_to(end);
        body.advance(1);
        String::from_utf8(s.to_vec()).map_err(|_| bad())
    };
    let mut params = Vec::new();
    loop {
        let name = next(body)?;
        if name.is_empty() {
            break;
        }
        let value = next(body)?;
        params.push((name, value));
    }
    Ok(params)
}

/// NegotiateProtocolVersion: newest minor version we speak (0) and the options we
/// do not understand.
fn put_negotiate_protocol_version<S>(wire: &mut Wire<S>, unsupported: &[&str])
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let out = wire.out();
    let start = out.len();
    out.put_u8(b'v');
    out.put_i32(0);
    out.put_i32(0);
    out.put_i32(unsupported.len() as i32);
    for option in unsupported {
        out.put_slice(option.as_bytes());
        out.put_u8(0);
    }
    super::wire::patch_length(out, start);
}
