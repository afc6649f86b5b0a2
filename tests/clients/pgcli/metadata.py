"""pgcli's own metadata class (pgcli.pgexecute.PGExecute), which feeds its completer,
against pgwide: the schemas, tables, views, columns, foreign keys, functions and data
types it completes with, and the backslash commands it runs through pgspecial. Each
check prints `ok <what>`; the Rust test counts them."""

import os
import sys

from pgcli.pgexecute import PGExecute
from pgspecial.main import PGSpecial

HOST = os.environ["PGHOST"]
PORT = int(os.environ["PGPORT"])


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print(f"ok {what}", flush=True)


def run(ex, sql):
    """The (title, rows, headers, status) of each statement pgcli's `run` gives."""
    out = []
    for title, cur, headers, status, *_ in ex.run(sql, pgspecial=PGSpecial()):
        rows = list(cur) if cur is not None else []
        out.append((title, rows, headers, status))
    return out


def main():
    ex = PGExecute(database="postgres", user="postgres", password=None, host=HOST,
                   port=PORT, dsn=None)
    check(ex.search_path() == ["pg_catalog", "public"], f"search_path {ex.search_path()}")
    check("public" in list(ex.schemata()), "schemata include public")
    # PostgreSQL lists its catalog tables too (pgwide's pg_class has user relations).
    tables = sorted(t for t in ex.tables() if t[0] == "public")
    check(tables == [("public", "child"), ("public", "parent")], f"tables {tables}")
    views = [v for v in ex.views() if v[0] == "public"]
    check(views == [("public", "kids")], f"views {views}")
    columns = sorted((t, c, ty) for s, t, c, ty, *_ in ex.table_columns() if s == "public")
    check(
        columns == [
            ("child", "id", "bigint"),
            ("child", "note", "character varying"),
            ("child", "parent_id", "bigint"),
            ("parent", "id", "bigint"),
            ("parent", "name", "text"),
        ],
        f"table_columns {columns}",
    )
    view_columns = sorted((t, c) for s, t, c, *_ in ex.view_columns() if s == "public")
    check(view_columns == [("kids", "id"), ("kids", "note")], f"view_columns {view_columns}")
    keys = [(k.parenttable, k.parentcolumn, k.childtable, k.childcolumn) for k in ex.foreignkeys()]
    check(keys == [("parent", "id", "child", "parent_id")], f"foreignkeys {keys}")
    # PostgreSQL lists its built-in functions; pgwide lists none (docs/postgresql.md).
    functions = [f for f in ex.functions() if f.schema_name == "public"]
    check(functions == [], "functions: none of the user's")
    types = list(ex.datatypes())
    check(types == [("public", "mood")], f"datatypes {types}")
    check("postgres" in list(ex.databases()), "databases")
    definition = ex.view_definition("kids")
    check("note" in definition, f"view_definition {definition!r}")
    check(ex.get_timezone() in ("UTC", "Etc/UTC"), f"get_timezone {ex.get_timezone()}")
    # Backslash commands, as pgcli runs them (pgspecial's queries).
    listed = run(ex, "\\dt")
    names = sorted(row[1] for row in listed[0][1])
    check(names == ["child", "parent"], f"\\dt {names}")
    described = run(ex, "\\d child")
    check(any("parent_id" in str(row) for row in described[0][1]), "\\d child lists its columns")
    check(run(ex, "\\df")[0][1] == [], "\\df lists no user functions")
    check([r[1] for r in run(ex, "\\dv")[0][1]] == ["kids"], "\\dv")
    check([r[0] for r in run(ex, "\\dn")[0][1]] == ["public"], "\\dn")
    check(run(ex, "SELECT note FROM kids")[0][1] == [], "a query through pgcli's run")
    print("ALL PGCLI CHECKS PASSED")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - report and fail
        import traceback

        traceback.print_exc()
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
