//! `pgwide.partitions` and `pgwide.key_advice` over the wire, on the loads Table Store's
//! primary-key advice is about: order numbers as the partition key (and an ORM's
//! `SERIAL` id) get the sequential-key advice with its hash-prefix remedy, a table where
//! one seller takes 90% of the writes gets the hot-spot advice, a partition key over
//! `pgwide.partition_size_advice` gets the size advice, and the seeds' purchase records
//! keyed by card id get none.

use crate::common::{code, simple_rows, TestServer};

/// The advice for `table`: (advice, partition key, evidence, remedy), NULL as "".
async fn advice(client: &tokio_postgres::Client, table: &str) -> Vec<Vec<String>> {
    simple_rows(
        client,
        &format!(
            "SELECT advice, coalesce(partition_key, ''), evidence, remedy \
             FROM pgwide.key_advice WHERE \"table\" = '{table}' ORDER BY advice"
        ),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequential_partition_keys_get_the_hash_prefix_advice() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE orders (order_number BIGINT PRIMARY KEY, device_id BIGINT, \
             amount NUMERIC(10,2)); \
             CREATE TABLE events (id SERIAL PRIMARY KEY, payload TEXT)",
        )
        .await
        .expect("create");
    // An application writing orders as they come, one statement each.
    let insert = client
        .prepare("INSERT INTO orders VALUES ($1, $2, 9.99)")
        .await
        .expect("prepare");
    for order in 200_001..200_301i64 {
        client
            .execute(&insert, &[&order, &(order % 17)])
            .await
            .expect("insert");
    }
    let orders = advice(&client, "orders").await;
    assert_eq!(orders.len(), 1, "{orders:?}");
    assert_eq!(orders[0][0], "sequential partition key");
    assert_eq!(
        orders[0][1], "",
        "the advice is about the key, not one value"
    );
    // The first write has no greatest key before it to be past.
    assert!(
        orders[0][2].contains("299 of 300 row writes (100%)")
            && orders[0][2].contains("(order_number) greater than any before"),
        "{}",
        orders[0][2]
    );
    assert!(
        orders[0][3].contains("hash prefix")
            && orders[0][3].contains("left(md5(order_number::text), 4) || order_number"),
        "{}",
        orders[0][3]
    );

    // An ORM's generated id, in one multi-row statement.
    client
        .batch_execute(
            "INSERT INTO events (payload) SELECT 'e' || g FROM generate_series(1, 200) g",
        )
        .await
        .expect("insert events");
    let events = advice(&client, "events").await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0][0], "sequential partition key");
    assert!(
        events[0][2].contains("199 of 200 row writes"),
        "{}",
        events[0][2]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partition_key_taking_most_writes_is_a_hot_spot() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE sales (seller_id TEXT, order_number BIGINT, amount BIGINT, \
             PRIMARY KEY (seller_id, order_number))",
        )
        .await
        .expect("create");
    // Nine purchases in ten at seller a100, the tenth at one of a hundred others.
    client
        .batch_execute(
            "INSERT INTO sales SELECT CASE WHEN g % 10 = 0 THEN 'b' || lpad((g / 10)::text, 3, '0') \
             ELSE 'a100' END, g, 1 FROM generate_series(0, 999) g",
        )
        .await
        .expect("insert");
    let sales = advice(&client, "sales").await;
    assert_eq!(sales.len(), 1, "{sales:?}");
    assert_eq!(sales[0][0], "hot partition key");
    assert_eq!(sales[0][1], "a100");
    assert!(
        sales[0][2].contains("partition key 'a100' took 900 of the table's 1000 write CU (90%)")
            && sales[0][2].contains("the other 100 partition keys write the rest"),
        "{}",
        sales[0][2]
    );
    assert!(
        sales[0][3].contains("splice seller_id with the next key columns (order_number)"),
        "{}",
        sales[0][3]
    );

    let partitions = simple_rows(
        &client,
        "SELECT partition_key, rows, write_cu, row_writes, load_rank, \
         sized_at <= now(), load_since <= now() \
         FROM pgwide.partitions WHERE \"table\" = 'sales' AND load_rank <= 2 ORDER BY load_rank",
    )
    .await;
    assert_eq!(
        partitions,
        [
            ["a100", "900", "900", "900", "1", "t", "t"],
            ["b000", "1", "1", "1", "2", "t", "t"],
        ]
    );
    assert_eq!(
        simple_rows(
            &client,
            "SELECT size_rank FROM pgwide.partitions \
             WHERE \"table\" = 'sales' AND partition_key = 'a100'",
        )
        .await,
        [["1"]]
    );
    // The ten largest and the ten busiest, each key once.
    let shown = simple_rows(
        &client,
        "SELECT count(*) BETWEEN 10 AND 20, count(*) = count(DISTINCT partition_key) \
         FROM pgwide.partitions WHERE \"table\" = 'sales'",
    )
    .await;
    assert_eq!(shown, [["t", "t"]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seeds_purchase_records_keyed_by_card_get_no_advice() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    client
        .batch_execute(
            "CREATE TABLE purchases (card_id BIGINT, seller_id TEXT, device_id BIGINT, \
             order_number BIGINT, amount BIGINT, \
             PRIMARY KEY (card_id, seller_id, device_id, order_number))",
        )
        .await
        .expect("create");
    // A thousand purchases by two hundred students, in the order they happen.
    let insert = client
        .prepare("INSERT INTO purchases VALUES ($1, $2, $3, $4, 5)")
        .await
        .expect("prepare");
    for order in 0..1000i64 {
        let card = order * 7919 % 200;
        let seller = format!("s{}", order % 7);
        client
            .execute(&insert, &[&card, &seller, &(order % 13), &order])
            .await
            .expect("insert");
    }
    let lookup = client
        .prepare("SELECT count(*) FROM purchases WHERE card_id = $1")
        .await
        .expect("prepare");
    for card in 0..200i64 {
        client.query_one(&lookup, &[&card]).await.expect("read");
    }
    assert_eq!(
        advice(&client, "purchases").await,
        Vec::<Vec<String>>::new()
    );
    let sizes = simple_rows(
        &client,
        "SELECT count(*), min(rows), max(rows), max(read_cu) \
         FROM pgwide.partitions WHERE \"table\" = 'purchases' AND size_rank IS NOT NULL",
    )
    .await;
    assert_eq!(sizes, [["10", "5", "5", "1"]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partition_key_over_the_size_advice_is_named() {
    let server = TestServer::start().await;
    let client = server.connect().await;
    assert_eq!(
        simple_rows(&client, "SHOW pgwide.partition_size_advice").await,
        [["1GB"]]
    );
    assert_eq!(
        code(
            client
                .batch_execute("SET pgwide.partition_size_advice = 'lots'")
                .await
        ),
        "22023"
    );
    client
        .batch_execute(
            "CREATE TABLE logs (device TEXT, seq BIGINT, line TEXT, PRIMARY KEY (device, seq)); \
             INSERT INTO logs SELECT 'big', g, repeat('x', 500) FROM generate_series(1, 100) g; \
             INSERT INTO logs SELECT 'small' || g, 1, 'y' FROM generate_series(1, 9) g",
        )
        .await
        .expect("load");
    // Under the default 1 GB nothing is too large.
    let none: Vec<Vec<String>> = advice(&client, "logs")
        .await
        .into_iter()
        .filter(|a| a[0] == "large partition key")
        .collect();
    assert!(none.is_empty(), "{none:?}");

    client
        .batch_execute("SET pgwide.partition_size_advice = '16kB'")
        .await
        .expect("set");
    let large: Vec<Vec<String>> = advice(&client, "logs")
        .await
        .into_iter()
        .filter(|a| a[0] == "large partition key")
        .collect();
    assert_eq!(large.len(), 1, "{large:?}");
    assert_eq!(large[0][1], "big");
    assert!(
        large[0][2].contains("in 100 rows") && large[0][2].contains("over the advised 16 kB"),
        "{}",
        large[0][2]
    );
    assert!(
        large[0][3].contains("'000054,a100,6777'"),
        "{}",
        large[0][3]
    );
}
