//! Where clients connect: the TCP listener and, when configured, a Unix-domain socket
//! named the way PostgreSQL names its own, `DIR/.s.PGSQL.PORT`. libpq, psql, pgbench
//! and the drivers built on libpq find it from `host=DIR` (any host starting with `/`)
//! and the port, so local clients reach pgwide without the TCP stack — which is most of
//! what a point get costs the server (ARCHITECTURE.md §3.1, "A Unix-domain socket").
//!
//! A socket file outlives a server killed without warning. At bind, a file nobody
//! answers on is taken over; one a live server answers on is an error, and a file that
//! is not a socket is never touched. The file is removed when the socket is dropped, if
//! it is still the one this socket made.

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};

/// The longest socket path the kernel accepts (`sun_path` holds 108 bytes with the NUL).
const MAX_SOCKET_PATH: usize = 107;

/// The listeners a server accepts clients on.
pub struct Listeners {
    tcp: TcpListener,
    unix: Option<UnixSocket>,
}

impl From<TcpListener> for Listeners {
    fn from(tcp: TcpListener) -> Self {
        Listeners { tcp, unix: None }
    }
}

impl Listeners {
    /// Also accepts clients on `socket`.
    pub fn with_unix_socket(mut self, socket: UnixSocket) -> Self {
        self.unix = Some(socket);
        self
    }

    /// The TCP listener's address.
    pub fn tcp_addr(&self) -> io::Result<std::net::SocketAddr> {
        self.tcp.local_addr()
    }

    /// The next client on any listener. Cancel-safe: nothing is accepted and lost.
    pub(crate) async fn accept(&self) -> io::Result<Client> {
        let Some(unix) = &self.unix else {
            return accept_tcp(&self.tcp).await;
        };
        tokio::select! {
            tcp = accept_tcp(&self.tcp) => tcp,
            unix = unix.listener.accept() => unix.map(|(stream, _)| Client::Unix(stream)),
        }
    }
}

async fn accept_tcp(listener: &TcpListener) -> io::Result<Client> {
    let (stream, peer) = listener.accept().await?;
    tracing::debug!(%peer, "connection accepted");
    Ok(Client::Tcp(stream))
}

/// A listening Unix-domain socket at `DIR/.s.PGSQL.PORT`, removed when dropped.
pub struct UnixSocket {
    listener: UnixListener,
    path: PathBuf,
    /// Device and inode of the file bound, so drop never removes a successor's file.
    identity: Option<(u64, u64)>,
}

impl UnixSocket {
    /// Binds the socket for `port` in `dir`, readable and writable by every local user
    /// (PostgreSQL's default `unix_socket_permissions` 0777: authentication, not file
    /// modes, decides who gets in).
    pub fn bind(dir: &Path, port: u16) -> Result<UnixSocket, String> {
        let path = dir.join(format!(".s.PGSQL.{port}"));
        if path.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(format!(
                "Unix-domain socket path {} is longer than {MAX_SOCKET_PATH} bytes",
                path.display()
            ));
        }
        take_over_stale(&path)?;
        let listener = UnixListener::bind(&path)
            .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
        let metadata = std::fs::metadata(&path);
        let identity = metadata.as_ref().ok().map(|m| (m.dev(), m.ino()));
        let socket = UnixSocket {
            listener,
            path,
            identity,
        };
        std::fs::set_permissions(&socket.path, std::fs::Permissions::from_mode(0o777))
            .map_err(|e| format!("cannot set permissions of {}: {e}", socket.path.display()))?;
        Ok(socket)
    }

    /// The socket file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Removes a socket file left by a server that is gone; errors if a server still
/// answers on it or the path is something else.
fn take_over_stale(path: &Path) -> Result<(), String> {
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot inspect {}: {e}", path.display())),
    };
    if !metadata.file_type().is_socket() {
        return Err(format!(
            "{} exists and is not a socket; not replacing it",
            path.display()
        ));
    }
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        return Err(format!(
            "another server is already listening on {}",
            path.display()
        ));
    }
    std::fs::remove_file(path)
        .map_err(|e| format!("cannot remove the stale socket {}: {e}", path.display()))
}

impl Drop for UnixSocket {
    fn drop(&mut self) {
        let current = std::fs::symlink_metadata(&self.path)
            .ok()
            .map(|m| (m.dev(), m.ino()));
        if current.is_some() && current == self.identity {
            if let Err(e) = std::fs::remove_file(&self.path) {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot remove the socket file");
            }
        }
    }
}

/// An accepted client socket.
pub(crate) enum Client {
    Tcp(TcpStream),
    Unix(UnixStream),
}

/// A client socket detached from its event loop, to move to another runtime.
pub(crate) enum DetachedClient {
    Tcp(std::net::TcpStream),
    Unix(std::os::unix::net::UnixStream),
}

impl Client {
    pub(crate) fn detach(self) -> io::Result<DetachedClient> {
        Ok(match self {
            Client::Tcp(stream) => DetachedClient::Tcp(stream.into_std()?),
            Client::Unix(stream) => DetachedClient::Unix(stream.into_std()?),
        })
    }
}

impl DetachedClient {
    /// Registers the socket with the event loop of the runtime this runs on.
    pub(crate) fn attach(self) -> io::Result<Client> {
        Ok(match self {
            DetachedClient::Tcp(stream) => Client::Tcp(TcpStream::from_std(stream)?),
            DetachedClient::Unix(stream) => Client::Unix(UnixStream::from_std(stream)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stale_socket_file_is_taken_over_and_removed_at_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".s.PGSQL.7");
        // A socket file nobody listens on: bound, then its listener closed.
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        assert!(path.exists());
        let socket = UnixSocket::bind(dir.path(), 7).unwrap();
        assert_eq!(socket.path(), path);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o777);
        drop(socket);
        assert!(!path.exists());
    }

    #[tokio::test]
    async fn a_live_socket_or_another_file_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let first = UnixSocket::bind(dir.path(), 8).unwrap();
        let second = UnixSocket::bind(dir.path(), 8).err().unwrap();
        assert!(second.contains("already listening"), "{second}");
        drop(first);

        let plain = dir.path().join(".s.PGSQL.9");
        std::fs::write(&plain, b"keep me").unwrap();
        let refused = UnixSocket::bind(dir.path(), 9).err().unwrap();
        assert!(refused.contains("not a socket"), "{refused}");
        assert_eq!(std::fs::read(&plain).unwrap(), b"keep me");
    }

    #[tokio::test]
    async fn drop_leaves_a_successors_socket_alone() {
        let dir = tempfile::tempdir().unwrap();
        let first = UnixSocket::bind(dir.path(), 10).unwrap();
        // Another process removed the file and bound its own in its place.
        std::fs::remove_file(first.path()).unwrap();
        let successor = UnixSocket::bind(dir.path(), 10).unwrap();
        drop(first);
        assert!(successor.path().exists());
    }

    #[test]
    fn a_path_too_long_for_the_kernel_is_refused_clearly() {
        let dir = PathBuf::from(format!("/{}", "d".repeat(120)));
        let error = UnixSocket::bind(&dir, 5433).err().unwrap();
        assert!(error.contains("longer than 107 bytes"), "{error}");
    }
}
