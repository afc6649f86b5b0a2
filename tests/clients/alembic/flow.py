"""Alembic with SQLAlchemy 2 against pgwide, as a user sets it up: `alembic init`, the
two lines the tutorial edits (the database URL, the models as `target_metadata`), then
Alembic's own commands: revision --autogenerate, upgrade head, check, downgrade base.
Between them the migrated schema is read back through SQLAlchemy's inspector and used
through the ORM (tests/client_alembic.rs runs this; scripts/test installs Alembic).

Prints "ok <check>" per check and ALEMBIC FLOW OK at the end."""

import os
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

from sqlalchemy import create_engine, inspect, select, func
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

HERE = os.path.dirname(os.path.abspath(__file__))
URL = "postgresql+psycopg://postgres@{}:{}/postgres".format(
    os.environ["PGHOST"], os.environ["PGPORT"]
)


def ok(what):
    print("ok " + what, flush=True)


def alembic(work, *args):
    command = shutil.which("alembic")
    argv = [command] if command else [sys.executable, "-m", "alembic"]
    done = subprocess.run(argv + list(args), cwd=work, capture_output=True, text=True)
    print(done.stdout + done.stderr, flush=True)
    if done.returncode != 0:
        sys.exit("alembic {} failed with {}".format(" ".join(args), done.returncode))
    return done.stdout + done.stderr


def edit(path, old, new):
    with open(path) as f:
        text = f.read()
    assert old in text, "{} lacks {!r}: another Alembic template?".format(path, old)
    with open(path, "w") as f:
        f.write(text.replace(old, new))


def main():
    with tempfile.TemporaryDirectory() as work:
        shutil.copy(os.path.join(HERE, "models.py"), work)
        alembic(work, "init", "migrations")
        edit(os.path.join(work, "alembic.ini"), "driver://user:pass@localhost/dbname", URL)
        edit(
            os.path.join(work, "migrations", "env.py"),
            "target_metadata = None",
            "from models import Base\ntarget_metadata = Base.metadata",
        )

        alembic(work, "revision", "--autogenerate", "-m", "initial")
        versions = os.path.join(work, "migrations", "versions")
        (revision,) = os.listdir(versions)
        with open(os.path.join(versions, revision)) as f:
            script = f.read()
        for expected in [
            "op.create_table('author'",
            "op.create_table('book'",
            "sa.ForeignKeyConstraint(['author_id'], ['author.id']",
            "sa.UniqueConstraint('email', name='uq_author_email')",
            "op.create_index('ix_book_title'",
            "sa.Enum('draft', 'review', 'out', name='book_status')",
        ]:
            assert expected in script, "{} not in the revision:\n{}".format(expected, script)
        ok("autogenerate wrote both tables, the key, the unique constraint and the index")

        alembic(work, "upgrade", "head")
        engine = create_engine(URL)
        inspector = inspect(engine)
        tables = inspector.get_table_names()
        assert {"alembic_version", "author", "book"} <= set(tables), tables
        (fk,) = inspector.get_foreign_keys("book")
        assert fk["referred_table"] == "author" and fk["constrained_columns"] == ["author_id"], fk
        uniques = {u["name"]: u["column_names"] for u in inspector.get_unique_constraints("book")}
        assert uniques == {"uq_book_author_title": ["author_id", "title"]}, uniques
        indexes = {i["name"]: i["column_names"] for i in inspector.get_indexes("book")}
        assert indexes.get("ix_book_title") == ["title"], indexes
        enums = {e["name"]: e["labels"] for e in inspector.get_enums()}
        assert enums == {"book_status": ["draft", "review", "out"]}, enums
        status = next(c for c in inspector.get_columns("book") if c["name"] == "status")
        assert getattr(status["type"], "enums", None) == ["draft", "review", "out"], status
        ok("upgrade head made the schema the inspector reads back")

        out = alembic(work, "check")
        assert "No new upgrade operations detected" in out, out
        ok("check finds the database as the models say")

        from models import Author, Book  # noqa: E402 (the copy in this directory)

        with Session(engine) as s:
            author = Author(name="Ann", email="ann@example.com")
            s.add(author)
            s.flush()
            s.add_all(
                [
                    Book(author_id=author.id, title="One", price=Decimal("9.99")),
                    Book(author_id=author.id, title="Two", price=Decimal("12.50")),
                ]
            )
            s.commit()
            rows = s.execute(
                select(Author.name, func.count(Book.id), func.sum(Book.price))
                .join(Book)
                .group_by(Author.name)
            ).all()
            assert rows == [("Ann", 2, Decimal("22.49"))], rows
            ok("the ORM writes through the autoincrement key and reads across the key")
            s.execute(Book.__table__.update().where(Book.title == "Two").values(status="out"))
            s.commit()
            statuses = s.execute(select(Book.title, Book.status).order_by(Book.status.desc())).all()
            assert statuses == [("Two", "out"), ("One", "draft")], statuses
            ok("the enum column defaults, updates and sorts in its declared order")
            s.add(Book(author_id=author.id + 1000, title="Orphan", price=Decimal("1")))
            try:
                s.commit()
                raise AssertionError("a book without its author was accepted")
            except IntegrityError as e:
                assert "foreign key" in str(e), e
                s.rollback()
            s.add(Author(name="Dup", email="ann@example.com"))
            try:
                s.commit()
                raise AssertionError("a second author with the same email was accepted")
            except IntegrityError as e:
                assert "uq_author_email" in str(e), e
                s.rollback()
            ok("the foreign key and the unique constraint refuse what breaks them")
            s.execute(Book.__table__.delete())
            s.execute(Author.__table__.delete())
            s.commit()
        engine.dispose()

        alembic(work, "downgrade", "base")
        engine = create_engine(URL)
        tables = inspect(engine).get_table_names()
        assert "alembic_version" in tables and not {"author", "book"} & set(tables), tables
        engine.dispose()
        ok("downgrade base dropped what upgrade made")
    print("ALEMBIC FLOW OK")


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
