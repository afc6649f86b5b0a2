"""psycopg 3, SQLAlchemy 2 and pandas against pgwide (run by tests/client_python.rs).

The Rust test creates the tables `users` (id BIGINT PK, name, score, active, avatar,
small, big, ratio) and `events` ((device, seq) PK, payload) with pgwide's CREATE TABLE
before this runs. Every check asserts what a user would see; any failure exits non-zero.
"""

import datetime
import math
import os
import sys
import uuid

import pandas as pd
import psycopg
from sqlalchemy import (
    BigInteger,
    Boolean,
    Double,
    Float,
    Integer,
    LargeBinary,
    SmallInteger,
    Text,
    create_engine,
    delete,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

HOST = os.environ["PGHOST"]
PORT = os.environ["PGPORT"]
DSN = f"host={HOST} port={PORT} user=postgres dbname=postgres"
URL = f"postgresql+psycopg://postgres@{HOST}:{PORT}/postgres"


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok", what)


def psycopg_binds():
    """Server-side parameters: psycopg 3 sends every query with parameters through the
    extended protocol, in text and (with binary=True) binary format."""
    blob = bytes(range(256)) + b"\x00end"
    with psycopg.connect(DSN, autocommit=True) as conn:
        with conn.cursor() as cur:
            cur.execute(
                "INSERT INTO users (id, name, score, active, avatar, small, big, ratio)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (1, "Ada 'quoted' \u00e9", 2.5, True, blob, 7, 2**62, 0.25),
            )
            cur.execute(
                "SELECT name, score, active, avatar, small, big, ratio FROM users WHERE id = %s",
                (1,),
            )
            row = cur.fetchone()
            check(row[0] == "Ada 'quoted' \u00e9", "psycopg text round trip")
            check(row[1] == 2.5 and isinstance(row[1], float), "psycopg float8")
            check(row[2] is True, "psycopg bool")
            check(bytes(row[3]) == blob, "psycopg bytea round trip (text format)")
            check(row[4] == 7 and row[5] == 2**62, "psycopg int2/int8")
            check(row[6] == 0.25, "psycopg float4")
            # Binary results and binary parameters.
            with conn.cursor(binary=True) as bcur:
                bcur.execute(
                    "SELECT avatar, big, active, score FROM users WHERE id = %b", (1,)
                )
                row = bcur.fetchone()
                check(bytes(row[0]) == blob, "psycopg bytea round trip (binary format)")
                check(row[1] == 2**62 and row[2] is True and row[3] == 2.5, "binary scalars")
            # NULL parameters.
            cur.execute(
                "INSERT INTO users (id, name, score, active, avatar) VALUES (%s, %s, %s, %s, %s)",
                (2, None, None, None, None),
            )
            cur.execute("SELECT name, score, active, avatar FROM users WHERE id = %s", (2,))
            check(cur.fetchone() == (None, None, None, None), "psycopg NULL parameters")
            # A prepared statement: psycopg prepares after prepare_threshold (5) runs.
            for i in range(10):
                cur.execute(
                    "INSERT INTO events (device, seq, payload) VALUES (%s, %s, %s)",
                    ("dev-a", i, f"p{i}"),
                    prepare=i >= 2,
                )
            cur.execute("SELECT count(*) FROM events WHERE device = %s", ("dev-a",))
            check(cur.fetchone()[0] == 10, "prepared inserts all landed")
            cur.executemany(
                "INSERT INTO events (device, seq, payload) VALUES (%s, %s, %s)",
                [("dev-b", i, None) for i in range(5)],
            )
            cur.execute(
                "SELECT seq FROM events WHERE device = %s AND seq >= %s ORDER BY seq",
                ("dev-b", 3),
            )
            check([r[0] for r in cur.fetchall()] == [3, 4], "executemany + range query")
            # A transaction rolled back leaves nothing.
        with psycopg.connect(DSN) as conn:
            conn.execute("INSERT INTO users (id, name) VALUES (%s, %s)", (3, "gone"))
            conn.rollback()
            got = conn.execute("SELECT count(*) FROM users WHERE id = 3").fetchone()[0]
            check(got == 0, "psycopg rollback")
            conn.execute("DELETE FROM users WHERE id = %s", (2,))
            conn.commit()


def psycopg_copy():
    """psycopg's cursor.copy() on a default connection, which opens a transaction block
    first: the rows are seen by that transaction, by others only after COMMIT; an
    exception inside the copy block (CopyFail) leaves nothing."""
    rows = [("dev-copy", i, f"c{i}") for i in range(1500)]
    with psycopg.connect(DSN) as conn, psycopg.connect(DSN, autocommit=True) as other:
        with conn.cursor() as cur:
            with cur.copy("COPY events (device, seq, payload) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            check(cur.rowcount == 1500, f"psycopg COPY in a transaction: rowcount {cur.rowcount}")
            mine = cur.execute("SELECT count(*) FROM events WHERE device = 'dev-copy'").fetchone()[0]
            check(mine == 1500, f"the COPY's transaction sees its rows ({mine})")
            theirs = other.execute("SELECT count(*) FROM events WHERE device = 'dev-copy'").fetchone()[0]
            check(theirs == 0, f"other sessions do not see them before COMMIT ({theirs})")
        conn.commit()
        got = other.execute(
            "SELECT count(*), min(payload), max(seq) FROM events WHERE device = 'dev-copy'"
        ).fetchone()
        check(got == (1500, "c0", 1499), f"COPY rows after COMMIT {got}")
        try:
            with conn.cursor() as cur:
                with cur.copy("COPY events (device, seq, payload) FROM STDIN") as copy:
                    copy.write_row(("dev-copy2", 1, "x"))
                    raise RuntimeError("client gives up")
        except RuntimeError:
            pass
        check(conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR, "CopyFail aborts the block")
        conn.rollback()
        left = other.execute("SELECT count(*) FROM events WHERE device = 'dev-copy2'").fetchone()[0]
        check(left == 0, "nothing of a failed COPY stays")
        other.execute("DELETE FROM events WHERE device = 'dev-copy'")


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    name: Mapped[str | None] = mapped_column(Text)
    score: Mapped[float | None] = mapped_column(Double)
    active: Mapped[bool | None] = mapped_column(Boolean)
    avatar: Mapped[bytes | None] = mapped_column(LargeBinary)
    small: Mapped[int | None] = mapped_column(SmallInteger)
    big: Mapped[int | None] = mapped_column(BigInteger)
    ratio: Mapped[float | None] = mapped_column(Float(precision=24))


class Event(Base):
    __tablename__ = "events"
    device: Mapped[str] = mapped_column(Text, primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    payload: Mapped[str | None] = mapped_column(Text)


def sqlalchemy_inspect(engine):
    insp = inspect(engine)
    tables = sorted(insp.get_table_names())
    check(tables == ["events", "users"], f"get_table_names {tables}")
    check(insp.has_table("users") and not insp.has_table("nope"), "has_table")
    cols = insp.get_columns("users")
    got = [(c["name"], type(c["type"]).__name__, c["nullable"]) for c in cols]
    want = [
        ("id", "BIGINT", False),
        ("name", "TEXT", True),
        ("score", "DOUBLE_PRECISION", True),
        ("active", "BOOLEAN", True),
        ("avatar", "BYTEA", True),
        ("small", "SMALLINT", True),
        ("big", "BIGINT", True),
        ("ratio", "REAL", True),
    ]
    check(got == want, f"get_columns users {got}")
    pk = insp.get_pk_constraint("users")
    check(pk["constrained_columns"] == ["id"], f"get_pk_constraint users {pk}")
    check(pk["name"] == "users_pkey", "pk constraint name")
    pk = insp.get_pk_constraint("events")
    check(pk["constrained_columns"] == ["device", "seq"], f"composite pk {pk}")
    check(insp.get_foreign_keys("users") == [], "no foreign keys")
    check(insp.get_schema_names().count("public") == 1, "schema names include public")
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE defaulted (id BIGINT PRIMARY KEY, "
                          "state TEXT NOT NULL DEFAULT 'new', price NUMERIC(10,2))"))
    cols = {c["name"]: c for c in inspect(engine).get_columns("defaulted")}
    check(cols["state"]["default"] == "'new'" and cols["id"]["default"] is None,
          f"get_columns sees a DEFAULT {cols['state']['default']!r}")
    price = cols["price"]["type"]
    check((type(price).__name__, price.precision, price.scale) == ("NUMERIC", 10, 2),
          f"get_columns sees NUMERIC(10,2) {price!r}")
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute("DROP TABLE defaulted")
    sqlalchemy_views(engine)


def sqlalchemy_views(engine):
    """SQLAlchemy's inspector lists a view apart from the tables, with its columns and
    definition, and the ORM's Core reads through it."""
    with engine.begin() as conn:
        conn.execute(text("CREATE VIEW named_users AS SELECT id, upper(name) AS shout "
                          "FROM users WHERE name IS NOT NULL"))
    insp = inspect(engine)
    check(insp.get_view_names() == ["named_users"], f"get_view_names {insp.get_view_names()}")
    check("named_users" not in insp.get_table_names(), "a view is not a table")
    cols = [(c["name"], type(c["type"]).__name__) for c in insp.get_columns("named_users")]
    check(cols == [("id", "BIGINT"), ("shout", "TEXT")], f"get_columns of a view {cols}")
    definition = insp.get_view_definition("named_users")
    check("upper(name)" in definition, f"get_view_definition {definition!r}")
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT shout FROM named_users WHERE id = :id"), {"id": 1}).all()
    check(len(rows) == 1 and rows[0][0] == rows[0][0].upper(), f"read through a view {rows}")
    with engine.begin() as conn:
        conn.execute(text("DROP VIEW named_users"))


def sqlalchemy_orm(engine):
    with Session(engine) as s:
        s.add_all(
            [
                User(id=10, name="Grace", score=9.5, active=False, avatar=b"\x00\xff", small=-3, big=-(2**40), ratio=1.5),
                User(id=11, name="Linus", score=None, active=True, avatar=None),
                Event(device="dev-c", seq=1, payload="boot"),
            ]
        )
        s.commit()
    with Session(engine) as s:
        u = s.get(User, 10)
        check(u is not None and u.name == "Grace" and u.avatar == b"\x00\xff", "ORM get by PK")
        check(u.small == -3 and u.big == -(2**40) and u.ratio == 1.5 and u.active is False, "ORM types")
        names = s.scalars(select(User.name).where(User.id >= 10).order_by(User.id)).all()
        check(names == ["Grace", "Linus"], f"ORM select {names}")
        u.score = 10.0
        u.name = "Grace Hopper"
        s.commit()
    with Session(engine) as s:
        u = s.get(User, 10)
        check(u.name == "Grace Hopper" and u.score == 10.0, "ORM update via unit of work")
        s.execute(update(User).where(User.id == 11).values(active=False))
        s.commit()
        check(s.get(User, 11).active is False, "ORM bulk update")
        s.delete(u)
        s.commit()
        check(s.get(User, 10) is None, "ORM delete")
        s.execute(delete(Event).where(Event.device == "dev-c"))
        s.commit()
        check(s.get(Event, ("dev-c", 1)) is None, "ORM bulk delete on composite PK")
        ev = s.get(Event, ("dev-a", 3))
        check(ev is not None and ev.payload == "p3", "ORM get by composite PK")
    with engine.connect() as conn:
        n = conn.execute(text("SELECT count(*) FROM users WHERE id = :id"), {"id": 11}).scalar()
        check(n == 1, "text() with bound parameter")
        conn.commit()
        conn.execute(text("UPDATE users SET name = :n WHERE id = 11"), {"n": "nobody"})
        conn.rollback()
        name = conn.execute(text("SELECT name FROM users WHERE id = 11")).scalar()
        check(name == "Linus", "SQLAlchemy transaction rollback")


def pandas_read_sql(engine):
    df = pd.read_sql(
        text("SELECT device, seq, payload FROM events WHERE device = :d ORDER BY seq"),
        engine,
        params={"d": "dev-a"},
    )
    check(list(df.columns) == ["device", "seq", "payload"], "read_sql columns")
    check(len(df) == 10 and list(df["seq"]) == list(range(10)), "read_sql rows")
    check(str(df["seq"].dtype) == "int64", f"read_sql int64 dtype {df['seq'].dtype}")
    agg = pd.read_sql("SELECT device, count(*) AS n FROM events GROUP BY device ORDER BY device", engine)
    check(agg.to_dict("records") == [{"device": "dev-a", "n": 10}, {"device": "dev-b", "n": 5}], "read_sql aggregate")
    users = pd.read_sql_table("users", engine)
    check(sorted(users["id"].tolist()) == [1, 11], f"read_sql_table {users['id'].tolist()}")
    check(math.isclose(users.set_index("id").loc[1, "score"], 2.5), "read_sql_table value")


def psycopg_arrays_and_computed_writes():
    """Lists as array parameters (`= ANY(%s)`, `%s::int8[]`), functions and subqueries in
    UPDATE, and an upsert's WHERE, as psycopg users write them. Runs last: it changes
    the events rows the checks before it count."""
    with psycopg.connect(DSN, autocommit=True) as conn:
        for binary in (False, True):
            with conn.cursor(binary=binary) as cur:
                cur.execute(
                    "SELECT seq FROM events WHERE device = %s AND seq = ANY(%s) ORDER BY seq",
                    ("dev-a", [1, 3, 99]),
                )
                check([r[0] for r in cur.fetchall()] == [1, 3], f"= ANY(list) binary={binary}")
                cur.execute(
                    "SELECT seq FROM events WHERE payload = ANY(%s) ORDER BY seq",
                    (["p2", "p4", "nope"],),
                )
                check([r[0] for r in cur.fetchall()] == [2, 4], f"= ANY(text list) binary={binary}")
                cur.execute("SELECT %s::int8[]", ([5, -6, None],))
                check(cur.fetchone()[0] == [5, -6, None], f"int8[] round trip binary={binary}")
                cur.execute("SELECT u FROM unnest(%s::int8[]) AS u ORDER BY u", ([3, 1, 2],))
                check([r[0] for r in cur.fetchall()] == [1, 2, 3], f"unnest(%s::int8[]) binary={binary}")
        conn.execute("DROP TABLE IF EXISTS tagged")
        conn.execute("CREATE TABLE tagged (id BIGINT PRIMARY KEY, tags TEXT[], scores INTEGER[])")
        for binary in (False, True):
            with conn.cursor(binary=binary) as cur:
                tags, scores = ["a", "b c", None, 'q"'], [3, None, -1]
                cur.execute("INSERT INTO tagged VALUES (%s, %s, %s)", (int(binary), tags, scores))
                cur.execute("SELECT tags, scores FROM tagged WHERE id = %s", (int(binary),))
                check(cur.fetchone() == (tags, scores), f"array columns round trip binary={binary}")
        conn.execute("DROP TABLE tagged")
        conn.execute("DROP TABLE IF EXISTS dated")
        conn.execute("CREATE TABLE dated (id BIGINT PRIMARY KEY, days DATE[], ats TIMESTAMP[], ids UUID[])")
        for binary in (False, True):
            with conn.cursor(binary=binary) as cur:
                days = [datetime.date(2024, 2, 29), None]
                ats = [datetime.datetime(2024, 3, 1, 10, 0, 0, 500000)]
                ids = [uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), None]
                cur.execute("INSERT INTO dated VALUES (%s, %s, %s, %s)", (int(binary), days, ats, ids))
                cur.execute("SELECT days, ats, ids FROM dated WHERE id = %s", (int(binary),))
                check(cur.fetchone() == (days, ats, ids), f"date, timestamp and uuid arrays round trip binary={binary}")
        conn.execute("DROP TABLE dated")
        cur = conn.cursor()
        cur.execute(
            "UPDATE events SET payload = upper(payload) || repeat('!', 2)"
            " WHERE device = %s AND seq = ANY(%s)",
            ("dev-a", [1, 2]),
        )
        check(cur.rowcount == 2, f"UPDATE with functions and = ANY: {cur.rowcount}")
        cur.execute(
            "SELECT payload FROM events WHERE device = 'dev-a' AND seq IN (1, 2, 3) ORDER BY seq"
        )
        check([r[0] for r in cur.fetchall()] == ["P1!!", "P2!!", "p3"], "computed UPDATE values")
        cur.execute(
            "UPDATE events SET payload = (SELECT max(payload) FROM events WHERE device = 'dev-a')"
            " WHERE device = 'dev-b' AND seq = 0"
        )
        cur.execute("SELECT payload FROM events WHERE device = 'dev-b' AND seq = 0")
        check(cur.fetchone()[0] == "p9", "UPDATE ... SET = (SELECT max(...))")
        cur.execute(
            "INSERT INTO events AS e (device, seq, payload) VALUES (%s, %s, %s), (%s, %s, %s)"
            " ON CONFLICT (device, seq) DO UPDATE SET payload = EXCLUDED.payload"
            " WHERE e.payload IS NULL RETURNING seq, payload",
            ("dev-b", 0, "new0", "dev-b", 1, "new1"),
        )
        check(cur.fetchall() == [(1, "new1")], "upsert WHERE updates only the NULL payload")
        cur.execute(
            "SELECT ARRAY(SELECT seq FROM events WHERE device = %s AND seq < 3 ORDER BY seq DESC)",
            ("dev-a",),
        )
        check(cur.fetchone()[0] == [2, 1, 0], "ARRAY(SELECT ...) as a list")


def psycopg_dates_and_times():
    """datetime, date and aware datetimes as parameters and results, in text and binary
    format, on a `(text, timestamptz)` key: psycopg types them from the column and gets
    them back as the same Python objects, dates before 1970 and BC-safe ones included."""
    from datetime import date, datetime, time, timedelta, timezone

    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE readings (device TEXT, at TIMESTAMPTZ, day DATE, local TIMESTAMP,"
            " PRIMARY KEY (device, at))"
        )
        at = datetime(2024, 3, 1, 10, 0, 5, 123456, tzinfo=timezone(timedelta(hours=2)))
        for binary in (False, True):
            device = f"dev-{binary}"
            with conn.cursor(binary=binary) as cur:
                for i in range(3):
                    cur.execute(
                        "INSERT INTO readings VALUES (%s, %s, %s, %s)",
                        (device, at + timedelta(minutes=i), date(1969, 7, 20 + i),
                         datetime(1, 1, 1, 0, 0, i)),
                    )
                cur.execute(
                    "SELECT at, day, local FROM readings WHERE device = %s AND at >= %s"
                    " ORDER BY at",
                    (device, at + timedelta(minutes=1)),
                )
                rows = cur.fetchall()
                check(len(rows) == 2, f"timestamptz range with a datetime bound binary={binary}")
                check(rows[0][0] == at + timedelta(minutes=1) and rows[0][0].utcoffset() == timedelta(0),
                      f"timestamptz round trip as an aware UTC datetime binary={binary}: {rows[0][0]!r}")
                check(rows[0][1] == date(1969, 7, 21), f"date before 1970 binary={binary}")
                check(rows[1][2] == datetime(1, 1, 1, 0, 0, 2), f"timestamp in year 1 binary={binary}")
                cur.execute("SELECT %s::date + 1, now() > %s", (date(2024, 2, 28), at))
                check(cur.fetchone() == (date(2024, 2, 29), True), f"date arithmetic binary={binary}")
        conn.execute("DROP TABLE readings")
        import uuid

        conn.execute("CREATE TABLE tokens (id UUID PRIMARY KEY, owner UUID)")
        for binary in (False, True):
            with conn.cursor(binary=binary) as cur:
                key, owner = uuid.uuid4(), uuid.uuid4()
                cur.execute("INSERT INTO tokens VALUES (%s, %s)", (key, owner))
                cur.execute("SELECT id, owner FROM tokens WHERE id = %s", (key,))
                check(cur.fetchone() == (key, owner), f"uuid round trip binary={binary}")
        conn.execute("DROP TABLE tokens")
        conn.execute("CREATE TABLE shifts (id BIGINT PRIMARY KEY, starts TIME, length INTERVAL)")
        for binary in (False, True):
            with conn.cursor(binary=binary) as cur:
                starts, length = time(9, 30, 0, 250000), timedelta(days=1, hours=2, microseconds=5)
                cur.execute("INSERT INTO shifts VALUES (%s, %s, %s)", (int(binary), starts, length))
                cur.execute("SELECT starts, length, length > %s FROM shifts WHERE id = %s",
                            (timedelta(hours=25), int(binary)))
                check(cur.fetchone() == (starts, length, True),
                      f"time and interval round trip binary={binary}")
        conn.execute("DROP TABLE shifts")


def psycopg_json():
    """json and jsonb columns: psycopg sends dicts through Jsonb/Json and reads them back
    as Python values, in text and binary format; jsonb keeps its normal form."""
    from psycopg.types.json import Json, Jsonb

    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS docs")
        conn.execute("CREATE TABLE docs (id BIGINT PRIMARY KEY, body JSONB, raw JSON)")
        for binary in (False, True):
            with conn.cursor(binary=binary) as cur:
                doc = {"name": "pgwide", "tags": ["a", "b"], "n": 1.5, "ok": True, "none": None}
                cur.execute("INSERT INTO docs VALUES (%s, %s, %s)", (int(binary), Jsonb(doc), Json([1, {"x": 2}])))
                cur.execute("SELECT body, raw, body->>'name', body->'tags'->1 FROM docs WHERE id = %s", (int(binary),))
                body, raw, name, tag = cur.fetchone()
                check(body == doc and raw == [1, {"x": 2}], f"json round trip binary={binary}: {body!r} {raw!r}")
                check(name == "pgwide" and tag == "b", f"->> and -> binary={binary}: {name!r} {tag!r}")
                cur.execute("SELECT id FROM docs WHERE body @> %s ORDER BY id", (Jsonb({"tags": ["b"]}),))
                check([r[0] for r in cur.fetchall()] == list(range(int(binary) + 1)), f"@> binary={binary}")
        cur = conn.execute("SELECT body::text FROM docs WHERE id = 0")
        check(cur.fetchone()[0] == '{"n": 1.5, "ok": true, "name": "pgwide", "none": null, "tags": ["a", "b"]}',
              "jsonb is stored in its normal form")
        try:
            conn.execute("INSERT INTO docs VALUES (9, '{bad', NULL)")
            check(False, "malformed JSON is refused")
        except psycopg.errors.InvalidTextRepresentation:
            pass
        conn.execute("DROP TABLE docs")


def psycopg_decimals():
    """NUMERIC(p,s) columns and sum/avg of integers arrive as Decimal, exact."""
    from decimal import Decimal

    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS prices")
        conn.execute("CREATE TABLE prices (id BIGINT PRIMARY KEY, amount NUMERIC(12,2), n BIGINT)")
        for binary in (False, True):
            with conn.cursor(binary=binary) as cur:
                cur.execute("DELETE FROM prices")
                cur.execute(
                    "INSERT INTO prices VALUES (%s, %s, %s), (%s, %s, %s)",
                    (1, Decimal("19.995"), 9223372036854775807, 2, Decimal("-0.10"), 9223372036854775807),
                )
                cur.execute("SELECT amount FROM prices WHERE id = %s", (1,))
                check(cur.fetchone()[0] == Decimal("20.00"),
                      f"a numeric(12,2) rounds half away from zero binary={binary}")
                cur.execute("SELECT amount FROM prices WHERE amount = %s", (Decimal("-0.1"),))
                row = cur.fetchone()
                check(row is not None and str(row[0]) == "-0.10",
                      f"a numeric keeps its column's scale binary={binary}: {row!r}")
                cur.execute("SELECT sum(amount), sum(n), avg(id) FROM prices")
                total, big, mean = cur.fetchone()
                check(total == Decimal("19.90") and big == Decimal(2 * 9223372036854775807)
                      and mean == Decimal("1.5"),
                      f"sum and avg are exact Decimals binary={binary}: {(total, big, mean)!r}")
                cur.execute("SELECT 0.1 + 0.2")
                check(cur.fetchone()[0] == Decimal("0.3"), f"decimal literals are numeric binary={binary}")
                try:
                    cur.execute("INSERT INTO prices VALUES (3, %s, 0)", (Decimal("1e10"),))
                    check(False, "a numeric past its precision is refused")
                except psycopg.errors.NumericValueOutOfRange:
                    pass
        conn.execute("DROP TABLE prices")


def psycopg_server_cursors():
    """psycopg's named cursors: DECLARE, a described portal, FETCH in batches, CLOSE."""
    with psycopg.connect(DSN) as conn:
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE walk (id BIGINT PRIMARY KEY, v TEXT)")
            cur.executemany("INSERT INTO walk VALUES (%s, %s)", [(i, f"v{i}") for i in range(10)])
        conn.commit()
        with conn.cursor(name="walker") as cur:
            cur.itersize = 3
            cur.execute("SELECT id, v FROM walk WHERE id >= %s ORDER BY id", (2,))
            check([d.name for d in cur.description] == ["id", "v"], "named cursor is described")
            rows = list(cur)
            check(rows == [(i, f"v{i}") for i in range(2, 10)],
                  f"named cursor fetches every row in batches {rows!r}")
        conn.commit()
        with conn.cursor(name="kept", withhold=True) as cur:
            cur.execute("SELECT id FROM walk ORDER BY id DESC")
            first = cur.fetchmany(2)
            conn.commit()
            rest = cur.fetchall()
            check(first == [(9,), (8,)] and len(rest) == 8,
                  f"a WITH HOLD cursor outlives its COMMIT {first!r} {len(rest)}")
        conn.commit()
        conn.autocommit = True
        conn.execute("DROP TABLE walk")


def psycopg_notifications():
    """LISTEN / NOTIFY: psycopg's notifies() generator hears another connection's
    committed notifications while it waits, and not a rolled-back one."""
    import threading

    with psycopg.connect(DSN, autocommit=True) as listener, \
            psycopg.connect(DSN, autocommit=True) as sender:
        listener.execute("LISTEN jobs")

        def send():
            sender.execute("BEGIN")
            sender.execute("NOTIFY jobs, 'rolled back'")
            sender.execute("ROLLBACK")
            sender.execute("SELECT pg_notify('jobs', %s)", ("job 1",))
            sender.execute("NOTIFY jobs, 'job 2'")

        timer = threading.Timer(0.3, send)
        timer.start()
        heard = list(listener.notifies(timeout=5, stop_after=2))
        timer.join()
        check([(n.channel, n.payload) for n in heard] == [("jobs", "job 1"), ("jobs", "job 2")],
              f"notifies() hears the committed notifications in order {heard!r}")
        check(all(n.pid == sender.info.backend_pid for n in heard),
              "each notification names the sender's backend pid")


def main():
    psycopg_notifications()
    psycopg_binds()
    psycopg_dates_and_times()
    psycopg_decimals()
    psycopg_json()
    psycopg_server_cursors()
    psycopg_copy()
    engine = create_engine(URL)
    with engine.connect() as conn:
        v = conn.execute(text("SELECT 1")).scalar()
        check(v == 1, "engine connect")
        check(engine.dialect.server_version_info >= (14,), f"server version {engine.dialect.server_version_info}")
    sqlalchemy_inspect(engine)
    sqlalchemy_orm(engine)
    pandas_read_sql(engine)
    engine.dispose()
    psycopg_arrays_and_computed_writes()
    print("ALL PYTHON CHECKS PASSED")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - report and fail
        import traceback

        traceback.print_exc()
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
