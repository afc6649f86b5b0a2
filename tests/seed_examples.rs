//! The worked examples of the Table Store documentation (docs/table-store.md §14), encoded
//! as they are written: the Book/Music rows, Max Versions, the TTL of one day against
//! version 1468944000000, the Max Version Offset window, and the capacity unit examples.
//!
//! The documentation labels 1468944000 s as "20/07/2016 00:00:00 UTC"; it is that moment
//! in China Standard Time (UTC+8), i.e. 2016-07-19 16:00:00 UTC. The arithmetic is what
//! counts and is what these tests use: "21/07/2016 00:00:00" there is 1468944000 + 86400
//! = 1469030400 s, and "22/07/2016 00:00:00" is 1469116800 s.

use pgwide::engine::{
    Capacity, ColumnOp, Condition, Engine, EngineError, Limits, ManualClock, OptionValue, PkColumn,
    PkType, PkValue, ReadOptions, Row, RowChange, RowWrite, TableMeta, TableOptions, TableSpec,
    Value, DEFAULT_INSTANCE,
};
use pgwide::storage::MemoryBackend;
use std::sync::Arc;

const V1: i64 = 1_466_676_354_000;
const V2: i64 = 1_466_762_754_000;
/// "20/07/2016 00:00:00" in the Table Store documentation (docs/table-store.md §14).
const JULY_20: i64 = 1_468_944_000_000;
/// "21/07/2016 00:00:00" in the Table Store documentation (docs/table-store.md §14).
const JULY_21: i64 = 1_469_030_400_000;
/// "22/07/2016 00:00:00" in the Table Store documentation (docs/table-store.md §14).
const JULY_22: i64 = 1_469_116_800_000;

async fn engine_at(now: i64) -> (Engine, ManualClock) {
    let clock = ManualClock::new(now);
    let engine = Engine::open(
        Arc::new(MemoryBackend::new()),
        Arc::new(clock.clone()),
        Limits::default(),
    )
    .await
    .unwrap();
    (engine, clock)
}

async fn create(engine: &Engine, name: &str, options: &[(&str, i64)]) -> Arc<TableMeta> {
    engine
        .create_table(
            DEFAULT_INSTANCE,
            TableSpec {
                name: name.into(),
                pk: vec![PkColumn {
                    name: "ID".into(),
                    ty: PkType::String,
                }],
                options: options
                    .iter()
                    .map(|(k, v)| (k.to_string(), OptionValue::Integer(*v)))
                    .collect(),
                ..TableSpec::default()
            },
        )
        .await
        .unwrap()
}

fn id(v: &str) -> Vec<PkValue> {
    vec![PkValue::String(v.into())]
}

fn at(column: &str, value: Value, version: i64) -> ColumnOp {
    ColumnOp::Put {
        column: column.into(),
        value,
        version: Some(version),
    }
}

fn update(pk: Vec<PkValue>, ops: Vec<ColumnOp>) -> RowWrite {
    RowWrite {
        pk,
        change: RowChange::Update(ops),
        condition: Condition::IGNORE,
        return_row: false,
    }
}

fn cells(row: &Row) -> Vec<(&str, i64, &Value)> {
    row.cells
        .iter()
        .map(|c| (c.column.as_str(), c.version, &c.value))
        .collect()
}

fn versions(n: i64) -> ReadOptions {
    ReadOptions {
        max_versions: Some(n),
        ..ReadOptions::default()
    }
}

#[tokio::test]
async fn defaults_are_the_seed_defaults() {
    let options = TableOptions::default();
    assert_eq!(options.ttl, -1, "no expiry unless asked");
    assert_eq!(options.max_version_offset, 86400);
    assert_eq!(options.max_versions, 1);
    let limits = Limits::default();
    assert_eq!(
        (
            limits.max_instances,
            limits.max_tables_per_instance,
            limits.max_pk_value_bytes,
            limits.max_value_bytes,
            limits.max_columns_per_write,
            limits.max_columns_to_get,
            limits.max_batch_get_rows,
            limits.max_batch_write_rows,
            limits.max_batch_write_bytes,
            limits.max_range_rows,
            limits.max_range_bytes,
        ),
        (
            10,
            64,
            1024,
            2 << 20,
            1024,
            128,
            100,
            200,
            4 << 20,
            5000,
            4 << 20
        )
    );
}

/// The two rows of the data model example, written at the moment of the second Length
/// version (V1 is exactly one day, the default Max Version Offset, before it).
#[tokio::test]
async fn book_and_music_rows() {
    let (engine, _clock) = engine_at(V2).await;
    let t = create(&engine, "media", &[("max_versions", 2)]).await;
    engine
        .write_rows(
            vec![
                (
                    Arc::clone(&t),
                    update(
                        id("4776"),
                        vec![
                            at("Type", Value::String("Book".into()), V1),
                            at("ISBN", Value::String("123*45678912345".into()), V1),
                            at("PageCount", Value::Integer(666), V1),
                        ],
                    ),
                ),
                (
                    Arc::clone(&t),
                    update(
                        id("6555"),
                        vec![
                            at("Type", Value::String("Music".into()), V1),
                            at("Length", Value::Integer(400), V1),
                            at("Length", Value::Integer(500), V2),
                        ],
                    ),
                ),
            ],
            pgwide::engine::BatchMode::Atomic,
        )
        .await
        .unwrap();

    // Different attribute sets in one table.
    let book = engine.get_row(&t, &id("4776"), &versions(2)).await.unwrap();
    let book = book.row.unwrap();
    assert_eq!(
        cells(&book),
        vec![
            ("ISBN", V1, &Value::String("123*45678912345".into())),
            ("PageCount", V1, &Value::Integer(666)),
            ("Type", V1, &Value::String("Book".into())),
        ]
    );
    assert!(book.latest("Length").is_none());

    // Length has two versions; with Max Versions 2 both are visible, newest first.
    let music = engine.get_row(&t, &id("6555"), &versions(2)).await.unwrap();
    let music = music.row.unwrap();
    assert_eq!(
        cells(&music),
        vec![
            ("Length", V2, &Value::Integer(500)),
            ("Length", V1, &Value::Integer(400)),
            ("Type", V1, &Value::String("Music".into())),
        ]
    );
    // A plain read returns the newest version only.
    let latest = engine
        .get_row(&t, &id("6555"), &ReadOptions::default())
        .await
        .unwrap()
        .row
        .unwrap();
    assert_eq!(latest.latest("Length").unwrap().value, Value::Integer(500));
    assert_eq!(latest.cells.len(), 2);

    // Version ranges are [start, end).
    let range = |start: i64, end: i64| ReadOptions {
        columns: Some(vec!["Length".into()]),
        max_versions: Some(2),
        version_range: Some((start, end)),
        filter: None,
        as_of: None,
        snapshot: None,
    };
    let only_old = engine
        .get_row(&t, &id("6555"), &range(V1, V2))
        .await
        .unwrap();
    assert_eq!(
        cells(&only_old.row.unwrap()),
        vec![("Length", V1, &Value::Integer(400))]
    );
    let only_new = engine
        .get_row(&t, &id("6555"), &range(V2, i64::MAX))
        .await
        .unwrap();
    assert_eq!(
        cells(&only_new.row.unwrap()),
        vec![("Length", V2, &Value::Integer(500))]
    );
    let both = engine
        .get_row(&t, &id("6555"), &range(V1, V2 + 1))
        .await
        .unwrap();
    assert_eq!(both.row.unwrap().cells.len(), 2);
    let neither = engine
        .get_row(&t, &id("6555"), &range(V1 + 1, V2))
        .await
        .unwrap();
    assert!(neither.row.unwrap().cells.is_empty());

    // Max Versions 1 hides the older Length; raising it back shows it again, since it
    // has not been removed.
    let set = |mv: i64| vec![("max_versions".to_string(), OptionValue::Integer(mv))];
    let t = engine
        .alter_table_options(DEFAULT_INSTANCE, "media", &set(1))
        .await
        .unwrap();
    let row = engine.get_row(&t, &id("6555"), &versions(2)).await.unwrap();
    assert_eq!(
        cells(&row.row.unwrap())[0..1],
        [("Length", V2, &Value::Integer(500))]
    );
    let t = engine
        .alter_table_options(DEFAULT_INSTANCE, "media", &set(2))
        .await
        .unwrap();
    let row = engine.get_row(&t, &id("6555"), &versions(2)).await.unwrap();
    assert_eq!(row.row.unwrap().cells.len(), 3);
}

/// TTL 86400 against version 1468944000000: it expires at 1469030400 s.
#[tokio::test]
async fn ttl_one_day() {
    let (engine, clock) = engine_at(JULY_20).await;
    let t = create(&engine, "ttl", &[("ttl", 86400)]).await;
    engine
        .put_row(
            &t,
            update(id("r"), vec![at("col", Value::Integer(1), JULY_20)]),
        )
        .await
        .unwrap();
    let read = |now: i64| {
        clock.set(now);
        let engine = &engine;
        let t = &t;
        async move {
            engine
                .get_row(t, &id("r"), &ReadOptions::default())
                .await
                .unwrap()
                .row
        }
    };
    let visible = read(JULY_21 - 1).await.unwrap();
    assert_eq!(visible.latest("col").unwrap().version, JULY_20);
    assert!(
        read(JULY_21).await.is_none(),
        "expired at 21/07 00:00:00 (and the row's last write is as old)"
    );
    // Raising the TTL makes the expired, not yet removed version visible again.
    let set_ttl = |ttl: i64| {
        let engine = &engine;
        async move {
            let change = [("ttl".to_string(), OptionValue::Integer(ttl))];
            engine
                .alter_table_options(DEFAULT_INSTANCE, "ttl", &change)
                .await
                .unwrap()
        }
    };
    let two_days = set_ttl(172800).await;
    let again = engine
        .get_row(&two_days, &id("r"), &ReadOptions::default())
        .await
        .unwrap()
        .row
        .unwrap();
    assert_eq!(again.latest("col").unwrap().version, JULY_20);
    let t = set_ttl(86400).await;

    // At that moment, writing data that old is refused as already expired.
    clock.set(JULY_21);
    let refused = engine
        .put_row(
            &t,
            update(id("r"), vec![at("col", Value::Integer(2), JULY_20)]),
        )
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        EngineError::ExpiredWrite {
            column: "col".into(),
            version: JULY_20,
            ttl: 86400
        }
    );
    // Earlier still: with the default offset of one day it is outside the version window
    // first; with a wider window it is refused for the TTL.
    let err = engine
        .put_row(
            &t,
            update(id("r"), vec![at("col", Value::Integer(2), JULY_20 - 1000)]),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, EngineError::VersionOutOfRange { .. }),
        "{err:?}"
    );
    let t = engine
        .alter_table_options(
            DEFAULT_INSTANCE,
            "ttl",
            &[("max_version_offset".into(), OptionValue::Integer(172800))],
        )
        .await
        .unwrap();
    let err = engine
        .put_row(
            &t,
            update(id("r"), vec![at("col", Value::Integer(2), JULY_20 - 1000)]),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err,
        EngineError::ExpiredWrite {
            column: "col".into(),
            version: JULY_20 - 1000,
            ttl: 86400
        }
    );
    // One second later than the expired version is still alive for one second.
    engine
        .put_row(
            &t,
            update(id("r"), vec![at("col", Value::Integer(3), JULY_20 + 1000)]),
        )
        .await
        .unwrap();
    let row = engine
        .get_row(&t, &id("r"), &ReadOptions::default())
        .await
        .unwrap()
        .row
        .unwrap();
    assert_eq!(row.latest("col").unwrap().value, Value::Integer(3));

    // That write stored only what reads could see: the expired version went with it,
    // and raising the TTL and Max Versions shows nothing older.
    let t = set_ttl(-1).await;
    let row = engine
        .get_row(&t, &id("r"), &versions(5))
        .await
        .unwrap()
        .row
        .unwrap();
    assert_eq!(
        row.cells.iter().map(|c| c.version).collect::<Vec<_>>(),
        vec![JULY_20 + 1000],
        "max_versions 1 still applies"
    );
    let t = engine
        .alter_table_options(
            DEFAULT_INSTANCE,
            "ttl",
            &[("max_versions".into(), OptionValue::Integer(5))],
        )
        .await
        .unwrap();
    let row = engine
        .get_row(&t, &id("r"), &versions(5))
        .await
        .unwrap()
        .row
        .unwrap();
    assert_eq!(
        row.cells.iter().map(|c| c.version).collect::<Vec<_>>(),
        vec![JULY_20 + 1000]
    );
}

/// At 21/07/2016 00:00:00 with Max Version Offset 86400, versions in
/// [1468944000000, 1469116800000) are accepted; 1468943999000 and 1469116800000 are not.
#[tokio::test]
async fn max_version_offset_window() {
    let (engine, _clock) = engine_at(JULY_21).await;
    let t = create(&engine, "offset", &[("max_versions", 10)]).await;
    assert_eq!(t.options.max_version_offset, 86400, "the default");
    for ok in [JULY_20, JULY_20 + 1, JULY_21, JULY_22 - 1] {
        engine
            .put_row(&t, update(id("r"), vec![at("col", Value::Integer(ok), ok)]))
            .await
            .unwrap();
    }
    let window = |version: i64| EngineError::VersionOutOfRange {
        column: "col".into(),
        version,
        min: JULY_20,
        max: JULY_22,
    };
    for bad in [1_468_943_999_000, JULY_20 - 1, JULY_22, JULY_22 + 1000] {
        let err = engine
            .put_row(
                &t,
                update(
                    id("r"),
                    vec![
                        at("other", Value::Integer(0), JULY_21),
                        at("col", Value::Integer(bad), bad),
                    ],
                ),
            )
            .await
            .unwrap_err();
        assert_eq!(err, window(bad));
    }
    let row = engine
        .get_row(&t, &id("r"), &versions(10))
        .await
        .unwrap()
        .row
        .unwrap();
    assert_eq!(
        row.cells.iter().map(|c| c.version).collect::<Vec<_>>(),
        vec![JULY_22 - 1, JULY_21, JULY_20 + 1, JULY_20],
        "only accepted versions were stored; the refused rows left nothing"
    );
    // Max Version Offset must be non-zero.
    let err = engine
        .alter_table_options(
            DEFAULT_INSTANCE,
            "offset",
            &[("max_version_offset".into(), OptionValue::Integer(0))],
        )
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::BadOption { option, .. } if option == "max_version_offset"));
}

/// "Writing 7.6 KB data consumes two write CUs, and reading 0.1 KB data consumes one read
/// CU"; reading a row that does not exist costs one read CU.
#[tokio::test]
async fn capacity_unit_examples() {
    let (engine, _clock) = engine_at(JULY_21).await;
    let t = create(&engine, "cu", &[]).await;
    // 4-byte PK + 4-byte column name + 7592-byte value = 7600 bytes.
    let write = engine
        .put_row(
            &t,
            RowWrite {
                pk: id("big1"),
                change: RowChange::Put(vec![ColumnOp::Put {
                    column: "data".into(),
                    value: Value::Binary(vec![0; 7592]),
                    version: None,
                }]),
                condition: Condition::IGNORE,
                return_row: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(write.capacity, Capacity { read: 0, write: 2 });
    engine
        .put_row(
            &t,
            update(
                id("tiny"),
                vec![at("data", Value::Binary(vec![0; 92]), JULY_21)],
            ),
        )
        .await
        .unwrap();
    let read = engine
        .get_row(&t, &id("tiny"), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(read.row.as_ref().map(Row::size), Some(100));
    assert_eq!(read.capacity, Capacity { read: 1, write: 0 });
    let missing = engine
        .get_row(&t, &id("none"), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(missing.capacity, Capacity { read: 1, write: 0 });
    let stats = engine.table_stats(&t);
    assert_eq!((stats.read_cu, stats.write_cu), (2, 3));
}
