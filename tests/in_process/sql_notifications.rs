//! LISTEN / NOTIFY between two connections, as a driver sees them: a listener waiting
//! idle is sent each committed notification at once, without asking; one in a
//! transaction block gets them when the block ends; a rolled-back NOTIFY or LISTEN
//! never happened.

use crate::common::{code, simple_rows, TestServer};
use futures::StreamExt;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, Client, Notification};

/// A connection whose notifications arrive on the returned channel.
pub(crate) async fn listener(
    server: &TestServer,
) -> (Client, mpsc::UnboundedReceiver<Notification>) {
    let (client, mut connection) = tokio_postgres::connect(
        &format!(
            "host=127.0.0.1 port={} user=tester dbname=postgres",
            server.port
        ),
        tokio_postgres::NoTls,
    )
    .await
    .expect("connect");
    let (sender, received) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(notification) = message {
                let _ = sender.send(notification);
            }
        }
    });
    (client, received)
}

/// The next notification's channel and payload, waiting at most five seconds.
async fn next(received: &mut mpsc::UnboundedReceiver<Notification>) -> (String, String) {
    let notification = tokio::time::timeout(Duration::from_secs(5), received.recv())
        .await
        .expect("a notification within five seconds")
        .expect("the connection is open");
    (
        notification.channel().to_string(),
        notification.payload().to_string(),
    )
}

/// Nothing arrives for a while.
async fn nothing(received: &mut mpsc::UnboundedReceiver<Notification>) {
    let waited = tokio::time::timeout(Duration::from_millis(300), received.recv()).await;
    assert!(waited.is_err(), "unexpected {waited:?}");
}

fn pair(channel: &str, payload: &str) -> (String, String) {
    (channel.to_string(), payload.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_notifications_reach_listeners() {
    let server = TestServer::start().await;
    let (listening, mut received) = listener(&server).await;
    let notifier = server.connect().await;
    listening
        .batch_execute("LISTEN jobs")
        .await
        .expect("LISTEN");

    // Sent to an idle listener without it asking, from the notifier's process.
    notifier
        .batch_execute("NOTIFY jobs, 'first'")
        .await
        .expect("NOTIFY");
    let notification = tokio::time::timeout(Duration::from_secs(5), received.recv())
        .await
        .expect("pushed within five seconds")
        .expect("open");
    let pid = simple_rows(&notifier, "SELECT pg_backend_pid()").await;
    assert_eq!(notification.process_id().to_string(), pid[0][0]);
    assert_eq!(
        (notification.channel(), notification.payload()),
        ("jobs", "first")
    );

    // pg_notify computes them; a block sends each once, at COMMIT; a rollback, a
    // failed statement and a savepoint rolled back send none; other channels are not
    // heard; channel names fold to lower case.
    notifier
        .batch_execute(
            "SELECT pg_notify('jobs', 'n' || n) FROM generate_series(1, 2) AS n; \
             BEGIN; NOTIFY jobs, 'twice'; NOTIFY other, 'x'; NOTIFY jobs, 'twice'; \
             SAVEPOINT s; NOTIFY jobs, 'undone'; ROLLBACK TO SAVEPOINT s; COMMIT; \
             BEGIN; NOTIFY jobs, 'rolled back'; ROLLBACK; NOTIFY JOBS",
        )
        .await
        .expect("notifications");
    // The first rows notify, then a row fails the query.
    assert_eq!(
        code(
            notifier
                .simple_query(
                    "SELECT CASE WHEN n < 2 THEN pg_notify('jobs', 'failed' || n) \
                     ELSE (1 / (n - 2))::text END FROM generate_series(0, 3) AS n",
                )
                .await
        ),
        "22012"
    );
    for expected in [
        pair("jobs", "n1"),
        pair("jobs", "n2"),
        pair("jobs", "twice"),
        pair("jobs", ""),
    ] {
        assert_eq!(next(&mut received).await, expected);
    }
    nothing(&mut received).await;

    // A listener inside a block hears them when it ends.
    listening.batch_execute("BEGIN").await.expect("BEGIN");
    notifier
        .batch_execute("NOTIFY jobs, 'while busy'")
        .await
        .expect("NOTIFY");
    nothing(&mut received).await;
    listening.batch_execute("COMMIT").await.expect("COMMIT");
    assert_eq!(next(&mut received).await, pair("jobs", "while busy"));

    // UNLISTEN in a block that rolls back keeps listening; UNLISTEN * stops.
    listening
        .batch_execute("BEGIN; UNLISTEN jobs; ROLLBACK")
        .await
        .expect("UNLISTEN rolled back");
    notifier
        .batch_execute("NOTIFY jobs, 'still'")
        .await
        .expect("NOTIFY");
    assert_eq!(next(&mut received).await, pair("jobs", "still"));
    listening
        .batch_execute("UNLISTEN *")
        .await
        .expect("UNLISTEN *");
    notifier
        .batch_execute("NOTIFY jobs, 'unheard'")
        .await
        .expect("NOTIFY");
    nothing(&mut received).await;

    // Checked as PostgreSQL checks them.
    let long = "x".repeat(8000);
    assert_eq!(
        code(
            notifier
                .batch_execute(&format!("NOTIFY jobs, '{long}'"))
                .await
        ),
        "22023"
    );
    assert_eq!(
        code(notifier.simple_query("SELECT pg_notify('', 'x')").await),
        "22023"
    );
}
