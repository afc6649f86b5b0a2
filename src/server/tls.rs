//! TLS for client connections: loading the PEM certificate chain and key into a
//! rustls acceptor (ring provider), answering the client's SSLRequest before the
//! startup packet, and [`ClientStream`], a socket (TCP or Unix-domain) that is either
//! plain or TLS.
//!
//! The first packet is read byte-exact from the socket (no read-ahead), so nothing a
//! client sends before the TLS handshake is ever treated as part of the encrypted
//! session (the CVE-2021-23214 class of bug).

use bytes::{Buf, Bytes};
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio_rustls::rustls;
use tokio_rustls::TlsAcceptor;

const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
const GSSENC_REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30];

/// A loaded server certificate and key.
#[derive(Clone)]
pub struct Tls {
    acceptor: TlsAcceptor,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls")
    }
}

impl Tls {
    /// Reads a PEM certificate chain and a PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub fn load(cert: &Path, key: &Path) -> Result<Tls, String> {
        use rustls_pki_types::pem::PemObject;
        use rustls_pki_types::{CertificateDer, PrivateKeyDer};
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
            .and_then(|certs| certs.collect())
            .map_err(|e| format!("cannot read TLS certificate {}: {e}", cert.display()))?;
        if certs.is_empty() {
            return Err(format!("no certificate in {}", cert.display()));
        }
        let key = PrivateKeyDer::from_pem_file(key)
            .map_err(|e| format!("cannot read TLS key {}: {e}", key.display()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS configuration failed: {e}"))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| format!("TLS certificate and key do not fit: {e}"))?;
        Ok(Tls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }
}

/// A client socket, encrypted or not.
pub(crate) enum ClientStream<IO> {
    /// Unencrypted; `prefix` holds the bytes read while looking for an SSLRequest.
    Plain {
        prefix: Bytes,
        io: IO,
    },
    Tls(Box<tokio_rustls::server::TlsStream<IO>>),
}

impl<IO> ClientStream<IO> {
    pub(crate) fn is_tls(&self) -> bool {
        matches!(self, ClientStream::Tls(_))
    }
}

/// Reads the client's first packet. An SSLRequest is answered 'S' and the TLS
/// handshake run when TLS is configured, else 'N'; a GSSENCRequest is answered 'N'.
/// `None`: the client hung up or the TLS handshake failed.
pub(crate) async fn negotiate<IO>(
    mut io: IO,
    tls: Option<&Tls>,
) -> io::Result<Option<ClientStream<IO>>>
where
    IO: AsyncRead + AsyncWrite + Unpin,
{
    // A client may try GSS encryption, then TLS, then plain: at most two requests.
    for _ in 0..3 {
        let mut first = [0u8; 8];
        match io.read_exact(&mut first).await {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        if first == SSL_REQUEST {
            let Some(tls) = tls else {
                io.write_all(b"N").await?;
                continue;
            };
            io.write_all(b"S").await?;
            return match tls.acceptor.accept(io).await {
                Ok(stream) => Ok(Some(ClientStream::Tls(Box::new(stream)))),
                Err(e) => {
                    tracing::debug!(error = %e, "TLS handshake failed");
                    Ok(None)
                }
            };
        }
        if first == GSSENC_REQUEST {
            io.write_all(b"N").await?;
            continue;
        }
        return Ok(Some(ClientStream::Plain {
            prefix: Bytes::copy_from_slice(&first),
            io,
        }));
    }
    Ok(None)
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncRead for ClientStream<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Plain { prefix, io } => {
                if prefix.has_remaining() {
                    let n = prefix.len().min(buf.remaining());
                    buf.put_slice(&prefix[..n]);
                    prefix.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Pin::new(io).poll_read(cx, buf)
            }
            ClientStream::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncWrite for ClientStream<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ClientStream::Plain { io, .. } => Pin::new(io).poll_write(cx, buf),
            ClientStream::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Plain { io, .. } => Pin::new(io).poll_flush(cx),
            ClientStream::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Plain { io, .. } => Pin::new(io).poll_shutdown(cx),
            ClientStream::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ClientStream::Plain { io, .. } => Pin::new(io).poll_write_vectored(cx, bufs),
            ClientStream::Tls(stream) => Pin::new(stream.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            ClientStream::Plain { io, .. } => io.is_write_vectored(),
            ClientStream::Tls(stream) => stream.is_write_vectored(),
        }
    }
}
