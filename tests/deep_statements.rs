//! Deeply nested statements, against the real binary (whose threads have the stack
//! `server::THREAD_STACK_BYTES` gives them): WHERE clauses nested up to pgwide's limit
//! are planned, through the fast path and DataFusion; past it the answer is 54001, and
//! the server never overflows its stack.

mod server_process;

use server_process::Pgwide;

fn nested(depth: usize, open: &str, inner: &str, close: &str) -> String {
    format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
}

#[tokio::test]
async fn deeply_nested_statements_are_planned_or_refused_never_crash() {
    let server = Pgwide::fresh();
    let client = server_process::connect(server.port, "postgres", None, "postgres")
        .await
        .expect("connect");
    client
        .batch_execute(
            "CREATE TABLE d (k BIGINT PRIMARY KEY, v BIGINT); \
             INSERT INTO d VALUES (1, 10), (2, 20), (3, 30)",
        )
        .await
        .expect("setup");
    let rows = |sql: String| {
        let client = &client;
        async move {
            let messages = client
                .simple_query(&sql)
                .await
                .map_err(|e| e.code().map(|c| c.code().to_string()).unwrap_or_default())?;
            Ok::<_, String>(
                messages
                    .iter()
                    .filter_map(|m| match m {
                        tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(String::from),
                        _ => None,
                    })
                    .collect::<Vec<_>>(),
            )
        }
    };
    // 95 parentheses around a key predicate: the fast path's GetRow.
    let sql = format!("SELECT v FROM d WHERE {}", nested(95, "(", "k = 2", ")"));
    assert_eq!(rows(sql).await, Ok(vec!["20".to_string()]));
    // 45 nested ORs through DataFusion.
    let sql = format!(
        "SELECT count(*) FROM d WHERE {}",
        nested(45, "(k = 1 OR ", "k = 3", ")")
    );
    assert_eq!(rows(sql).await, Ok(vec!["2".to_string()]));
    // Past the limit: 54001, PostgreSQL's "stack depth limit exceeded".
    let sql = format!("SELECT v FROM d WHERE {}", nested(5000, "(", "k = 2", ")"));
    assert_eq!(rows(sql).await, Err("54001".to_string()));
    // Queries nested 16 deep plan (DataFusion's optimizer doubles its time per level
    // past a dozen); 17 deep are refused before planning, with 54001.
    let subqueries = |depth| {
        let inner = nested(depth, "(SELECT ", "(SELECT v FROM d WHERE k = 1)", " + 1)");
        format!("SELECT {inner}")
    };
    assert_eq!(rows(subqueries(14)).await, Ok(vec!["24".to_string()]));
    assert_eq!(rows(subqueries(15)).await, Err("54001".to_string()));
    // The server is still there.
    assert_eq!(
        rows("SELECT v FROM d WHERE k = 3".into()).await,
        Ok(vec!["30".to_string()])
    );
}
