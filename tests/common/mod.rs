//! Starts a pgwide server in-process on a free loopback port over a temporary data
//! directory, for tests that talk to it over the wire.

#![allow(dead_code)]

use pgwide::config::Config;
use pgwide::gateway::Gateway;
use std::sync::Arc;
use tokio::sync::oneshot;

pub struct TestServer {
    pub port: u16,
    pub gateway: Arc<Gateway>,
    stop: Option<oneshot::Sender<()>>,
    _dir: tempfile::TempDir,
}

impl TestServer {
    pub async fn start() -> TestServer {
        Self::start_with(|_| {}).await
    }

    /// A server whose configuration `adjust` changes first.
    pub async fn start_with(adjust: impl FnOnce(&mut Config)) -> TestServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = Config {
            data_dir: dir.path().join("data"),
            ..Config::default()
        };
        adjust(&mut config);
        let gateway = Gateway::open(&config).await.expect("gateway opens");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (stop, stopped) = oneshot::channel::<()>();
        let factory = gateway.clone();
        // The config's server options too (limits such as max_message_bytes).
        let options = config.server_options();
        tokio::spawn(async move {
            let _ = pgwide::server::serve_with(listener, factory, options, async {
                let _ = stopped.await;
            })
            .await;
        });
        TestServer {
            port,
            gateway,
            stop: Some(stop),
            _dir: dir,
        }
    }

    pub async fn connect_to(
        &self,
        database: &str,
    ) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
        let (client, connection) = tokio_postgres::connect(
            &format!(
                "host=127.0.0.1 port={} user=tester dbname={database}",
                self.port
            ),
            tokio_postgres::NoTls,
        )
        .await?;
        tokio::spawn(connection);
        Ok(client)
    }

    pub async fn connect(&self) -> tokio_postgres::Client {
        self.connect_to("postgres").await.expect("connect")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The SQLSTATE of a failed statement.
pub fn code(result: Result<impl std::fmt::Debug, tokio_postgres::Error>) -> String {
    match result {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e
            .code()
            .map(|c| c.code().to_string())
            .unwrap_or_else(|| format!("no SQLSTATE: {e}")),
    }
}

/// Rows of a simple (text-protocol) query as strings, NULL as "NULL".
pub async fn simple_rows(client: &tokio_postgres::Client, sql: &str) -> Vec<Vec<String>> {
    let messages = client.simple_query(sql).await.expect(sql);
    messages
        .into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(row) => Some(
                (0..row.len())
                    .map(|i| row.get(i).unwrap_or("NULL").to_string())
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}
