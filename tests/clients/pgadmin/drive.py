#!/usr/bin/env python3
"""Drive a real pgAdmin 4 against a PostgreSQL-wire server over pgAdmin's HTTP API.

It does what the browser UI does: starts pgAdmin (desktop mode, as the desktop
runtime starts it: PGADMIN_INT_KEY + `?key=`), reads the CSRF token the page
gets from /browser/js/utils.js and sends it as X-pgA-CSRFToken on every call
(as pgAdmin's axios instance does), sets a master password (the dialog shown at
start-up), registers the server (the "Register - Server" dialog), connects it,
walks the object-explorer tree (the same /children and /nodes URLs the tree
uses), opens Properties / SQL / Statistics / Dependencies panels of the objects
it walks through, the dashboard, a Query Tool query and View/Edit Data > All
Rows on the table.

The database must hold the objects the walk looks for (names can be changed
with the PGADMIN_SCHEMA/TABLE/... variables below); by default:
  CREATE TABLE book (id BIGINT PRIMARY KEY, title TEXT NOT NULL, price NUMERIC(10,2));
  CREATE INDEX book_title ON book (title);
  CREATE TABLE author (id SERIAL PRIMARY KEY, name VARCHAR(40) UNIQUE);
  CREATE VIEW cheap AS SELECT id, title FROM book WHERE price < 10;
  INSERT INTO book VALUES (1,'Dune',9.5);

Prints `ok <step>` or `FAIL <step>: <status> <body excerpt>` per step, then
`ALL PGADMIN CHECKS PASSED` (exit 0) or `N PGADMIN CHECKS FAILED` (exit 1).
pgAdmin is always stopped at the end.

Environment:
  PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD   the server under test
      (defaults 127.0.0.1, 5432, postgres, postgres, none)
  PGADMIN_PYTHON   python of the venv pgAdmin is installed in
                   (default /tmp/pgadmin-venv/bin/python)
  PGADMIN_DIR      directory holding pgAdmin4.py (default: found from
                   PGADMIN_PYTHON's site-packages/pgadmin4)
  PGADMIN_PORT     port for pgAdmin (default: a free one)
  PGADMIN_WORKDIR  where to put pgAdmin's data dir / logs (default: a fresh
                   temporary dir, removed at the end unless PGADMIN_KEEP=1)
  PGADMIN_KEEP=1   keep the work dir (pgAdmin's log is pgadmin.out and
                   data/pgadmin4.log in it)
  PGADMIN_LOG_SQL=1  also set FILE_LOG_LEVEL=25 (SQL) in config_local.py so
                   pgAdmin logs every query it runs; the queries that failed
                   are then printed under each FAIL line
  PGADMIN_START_TIMEOUT  seconds to wait for pgAdmin to listen (default 120)
  PGADMIN_VERBOSE=1  print every response body excerpt
  PGADMIN_SQL_DUMP=FILE  with PGADMIN_LOG_SQL=1, write every step's URL and
                   the SQL pgAdmin ran for it (with its error, if any) as JSON
  PGADMIN_SCHEMA, PGADMIN_TABLE, PGADMIN_TABLE_COLUMNS, PGADMIN_TABLE_ROWS,
  PGADMIN_TABLE_PKEY, PGADMIN_TABLE_INDEX, PGADMIN_VIEW   the objects looked for
"""
import glob
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import requests

PGHOST = os.environ.get("PGHOST", "127.0.0.1")
PGPORT = int(os.environ.get("PGPORT", "5432"))
PGUSER = os.environ.get("PGUSER", "postgres")
PGDATABASE = os.environ.get("PGDATABASE", "postgres")
PGPASSWORD = os.environ.get("PGPASSWORD", "")
PGADMIN_PYTHON = os.environ.get("PGADMIN_PYTHON", "/tmp/pgadmin-venv/bin/python")
VERBOSE = os.environ.get("PGADMIN_VERBOSE") == "1"
LOG_SQL = os.environ.get("PGADMIN_LOG_SQL") == "1"
KEEP = os.environ.get("PGADMIN_KEEP") == "1"
START_TIMEOUT = float(os.environ.get("PGADMIN_START_TIMEOUT", "120"))
# Objects the walk looks for (the schema the test creates).
SCHEMA = os.environ.get("PGADMIN_SCHEMA", "public")
TABLE = os.environ.get("PGADMIN_TABLE", "book")
TABLE_COLUMNS = os.environ.get("PGADMIN_TABLE_COLUMNS", "id,title,price").split(",")
VIEW = os.environ.get("PGADMIN_VIEW", "cheap")
EXPECT_ROWS = int(os.environ.get("PGADMIN_TABLE_ROWS", "1"))  # rows in TABLE
TABLE_PKEY = os.environ.get("PGADMIN_TABLE_PKEY", "book_pkey")
TABLE_INDEX = os.environ.get("PGADMIN_TABLE_INDEX", "book_title")  # a plain (non-constraint) index
HTTP_TIMEOUT = 60

failures = []
log_pos = 0  # how far pgAdmin's log was read


def find_pgadmin_dir():
    d = os.environ.get("PGADMIN_DIR")
    if d:
        return d
    out = subprocess.run(
        [PGADMIN_PYTHON, "-c",
         "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip()
    cand = os.path.join(out, "pgadmin4")
    if os.path.isfile(os.path.join(cand, "pgAdmin4.py")):
        return cand
    hits = glob.glob(os.path.join(os.path.dirname(os.path.dirname(PGADMIN_PYTHON)),
                                  "lib", "python*", "site-packages", "pgadmin4"))
    if hits:
        return hits[0]
    sys.exit("cannot find pgAdmin4.py; set PGADMIN_DIR")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def excerpt(text, n=600):
    text = (text or "").replace("\n", "\\n")
    return text[:n] + ("..." if len(text) > n else "")


class Pgadmin:
    def __init__(self):
        self.dir = find_pgadmin_dir()
        self.port = int(os.environ.get("PGADMIN_PORT") or free_port())
        self.work = os.environ.get("PGADMIN_WORKDIR") or tempfile.mkdtemp(prefix="pgadmin-drive-")
        os.makedirs(self.work, exist_ok=True)
        self.data = os.path.join(self.work, "data")
        self.key = secrets.token_hex(16)
        self.base = "http://127.0.0.1:%d" % self.port
        self.proc = None
        self.log = os.path.join(self.data, "pgadmin4.log")

    def start(self):
        # config_local.py is what a pip user writes; it is put on PYTHONPATH
        # (pgAdmin does `import config_local`), so the install is untouched.
        cfg = os.path.join(self.work, "config_local.py")
        with open(cfg, "w") as f:
            f.write("SERVER_MODE = False\n")
            f.write("DATA_DIR = %r\n" % self.data)
            f.write("DEFAULT_SERVER_PORT = %d\n" % self.port)
            if LOG_SQL:
                f.write("FILE_LOG_LEVEL = 25\n")
        env = dict(os.environ)
        for k in ("PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGPASSWORD"):
            env.pop(k, None)  # pgAdmin must use only what is registered
        env["PYTHONPATH"] = self.work + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env["PGADMIN_INT_KEY"] = self.key  # the desktop runtime's key
        self.out = open(os.path.join(self.work, "pgadmin.out"), "w")
        t0 = time.time()
        self.proc = subprocess.Popen(
            [PGADMIN_PYTHON, os.path.join(self.dir, "pgAdmin4.py")],
            cwd=self.work, env=env, stdout=self.out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
        while time.time() - t0 < START_TIMEOUT:
            if self.proc.poll() is not None:
                raise RuntimeError("pgAdmin exited with %s; see %s" % (
                    self.proc.returncode, os.path.join(self.work, "pgadmin.out")))
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=2).close()
                print("pgAdmin up on port %d after %.1fs (work dir %s)" % (
                    self.port, time.time() - t0, self.work))
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError("pgAdmin did not listen within %ss" % START_TIMEOUT)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except Exception:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(timeout=5)
                except Exception:
                    pass
        if getattr(self, "out", None):
            self.out.close()
        if not KEEP and not os.environ.get("PGADMIN_WORKDIR"):
            shutil.rmtree(self.work, ignore_errors=True)


def new_log_text(pga):
    """pgAdmin log text written since the last call."""
    global log_pos
    try:
        with open(pga.log, errors="replace") as f:
            f.seek(log_pos)
            t = f.read()
            log_pos = f.tell()
            return t
    except OSError:
        return ""


_TS = r"\n\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+: "


def parse_sql_log(logtext):
    """With FILE_LOG_LEVEL=25 pgAdmin logs each query with a Query-id, and
    each failure with the same id: return [(kind, query, error or None)]."""
    logtext = "\n" + logtext
    out, by_id = [], {}
    for m in re.finditer(r"Execute \(([\w ]+)\) by .*?\(Query-id: (\d+)\):\n(.*?)(?=" + _TS + r"|\Z)",
                         logtext, re.S):
        by_id[m.group(2)] = len(out)
        out.append([m.group(1), m.group(3).rstrip("\n"), None])
    for m in re.finditer(r"Failed to execute query \((\w+)\).*?\(Query-id: (\d+)\):\nError Message:(.*?)(?=" + _TS + r"|\Z)",
                         logtext, re.S):
        i = by_id.get(m.group(2))
        if i is None:
            out.append([m.group(1), "<query not logged>", m.group(3).strip()])
        else:
            out[i][2] = m.group(3).strip()
    return [tuple(x) for x in out]


def failed_queries(logtext):
    return [(q, e) for _, q, e in parse_sql_log(logtext) if e is not None]


class Driver:
    def __init__(self, pga):
        self.pga = pga
        self.s = requests.Session()
        self.token = None
        self.steps = []  # [{name, url, status, ok, sql: [(kind, query, error)]}]

    def headers(self):
        h = {"Content-Type": "application/json"}
        if self.token:
            h["X-pgA-CSRFToken"] = self.token
        return h

    def call(self, method, url, body=None):
        return self.s.request(method, self.pga.base + url, headers=self.headers(),
                              data=None if body is None else json.dumps(body),
                              timeout=HTTP_TIMEOUT)

    def step(self, name, method, url, body=None, check=None, ok_status=(200,)):
        """Run one request; check(resp_json, resp) returns an error string or None."""
        new_log_text(self.pga)
        try:
            r = self.call(method, url, body)
        except requests.RequestException as e:
            return self.fail(name, "EXC", "%s %s: %s" % (method, url, e))
        if VERBOSE:
            print("   %s %s -> %s %s" % (method, url, r.status_code, excerpt(r.text, 400)))
        j = None
        try:
            j = r.json()
        except ValueError:
            pass
        err = None
        if r.status_code not in ok_status:
            err = "%s %s %s" % (r.status_code, method + " " + url, excerpt(r.text))
        elif isinstance(j, dict) and j.get("success") == 0 and r.status_code == 200:
            err = "%s %s success=0 %s" % (r.status_code, method + " " + url, excerpt(r.text))
        elif check:
            try:
                msg = check(j, r)
            except Exception as e:  # a malformed answer
                msg = "unexpected answer (%s: %s)" % (type(e).__name__, e)
            if msg:
                err = "%s %s %s; body: %s" % (r.status_code, method + " " + url, msg, excerpt(r.text))
        sql = parse_sql_log(new_log_text(self.pga)) if LOG_SQL else []
        self.steps.append({"name": name, "method": method, "url": url, "status": r.status_code,
                           "ok": not err, "error": err, "sql": sql})
        if err:
            self.fail(name, None, err, sql)
            return None
        print("ok %s" % name)
        return j if j is not None else r

    def check(self, name, j, fn):
        """A check on an answer already received (no request of its own)."""
        if j is None:
            return None
        msg = fn(j, None)
        if msg:
            return self.fail(name, None, msg, [])
        print("ok %s" % name)
        return j

    def fail(self, name, status, msg, sql=None):
        line = "FAIL %s: %s" % (name, msg if status is None else "%s %s" % (status, msg))
        print(line)
        if sql is None and LOG_SQL:
            sql = parse_sql_log(new_log_text(self.pga))
        for _, q, e in sql or []:
            if e is not None:
                print("     failed SQL: %s" % excerpt(q, 2000))
                print("     error: %s" % excerpt(e, 600))
        failures.append(line)
        return None


def data_of(j):
    return j.get("data") if isinstance(j, dict) else None


def node_by_label(nodes, label):
    for n in nodes or []:
        if n.get("label") == label:
            return n
    return None


def need_labels(*labels):
    def check(j, r):
        d = data_of(j)
        if not isinstance(d, list):
            return "data is not a list"
        have = [n.get("label") for n in d]
        miss = [x for x in labels if x not in have]
        if miss:
            return "missing %s among %s" % (miss, have)
        return None
    return check


def need_keys(*keys):
    def check(j, r):
        if not isinstance(j, dict):
            return "not a JSON object"
        miss = [k for k in keys if k not in j]
        return "missing keys %s" % miss if miss else None
    return check


def need_data_list(j, r):
    return None if isinstance(data_of(j), list) else "data is not a list"


def need_text(*parts):
    def check(j, r):
        text = j.get("data") if isinstance(j, dict) and "data" in j else (j if isinstance(j, str) else r.text)
        if not isinstance(text, str):
            text = json.dumps(text)
        miss = [p for p in parts if p not in text]
        return "SQL lacks %s" % miss if miss else None
    return check


def lookup_oid(sql):
    """Fallback for ids pgAdmin could not give us: ask the server directly."""
    try:
        import psycopg  # installed with pgAdmin
        with psycopg.connect(host=PGHOST, port=PGPORT, user=PGUSER, dbname=PGDATABASE,
                             password=PGPASSWORD or None, connect_timeout=10) as c:
            return int(c.execute(sql).fetchone()[0])
    except Exception as e:
        print("   (direct lookup failed: %s: %s)" % (type(e).__name__, e))
        return None


def ids_are_ints(j, r):
    """Tree node ids are oids: PostgreSQL's oid columns reach pgAdmin as int
    (psycopg's oid loader), while int8 columns are loaded as str by pgAdmin
    (typecast.py TO_STRING_NUMERIC_DATATYPES), so a str here means the
    server typed the column int8 instead of oid."""
    bad = [(n.get("label"), n.get("_id")) for n in data_of(j) or [] if not isinstance(n.get("_id"), int)]
    return "node _id not an int (oid) for %s" % bad if bad else None


def all_of(*checks):
    def check(j, r):
        for c in checks:
            m = c(j, r)
            if m:
                return m
        return None
    return check


def run_query(d, name, trans_id, sql, expect_rows=None):
    """Query Tool: start the query, then poll as ResultSet.jsx does."""
    j = d.step("%s: start" % name, "POST", "/sqleditor/query_tool/start/%d" % trans_id,
               {"sql": sql, "explain_plan": None})
    if not j:
        return None
    return poll(d, name, trans_id, expect_rows)


def poll(d, name, trans_id, expect_rows=None):
    deadline = time.time() + 60
    while time.time() < deadline:
        r = d.call("GET", "/sqleditor/poll/%d" % trans_id)
        try:
            j = r.json()
        except ValueError:
            j = None
        st = (data_of(j) or {}).get("status") if isinstance(j, dict) else None
        if r.status_code == 200 and st == "Busy":
            time.sleep(0.2)
            continue
        err = None
        if r.status_code != 200 or st != "Success":
            err = "%s poll status %r %s" % (r.status_code, st, excerpt(r.text))
        elif expect_rows is not None:
            rows = data_of(j).get("result") or []
            if len(rows) != expect_rows:
                err = "%d rows instead of %d: %s" % (len(rows), expect_rows, excerpt(r.text))
        sql = parse_sql_log(new_log_text(d.pga)) if LOG_SQL else []
        d.steps.append({"name": name + ": poll", "method": "GET", "url": "/sqleditor/poll/%d" % trans_id,
                        "status": r.status_code, "ok": not err, "error": err, "sql": sql})
        if err:
            d.fail(name + ": poll", None, err, sql)
            return None
        print("ok %s: poll" % name)
        return j
    d.fail(name + ": poll", None, "still Busy after 60s")
    return None


def walk(d):
    # --- what the page does on load -------------------------------------
    r = d.s.get(d.pga.base + "/?key=" + d.pga.key, timeout=HTTP_TIMEOUT)
    if r.status_code != 200:
        d.fail("open page with desktop key", r.status_code, excerpt(r.text))
        return
    print("ok open page with desktop key")
    r = d.s.get(d.pga.base + "/browser/js/utils.js", timeout=HTTP_TIMEOUT)
    m = re.search(r"pgAdmin\['csrf_token'\]\s*=\s*'([^']+)'", r.text)
    if r.status_code != 200 or not m:
        d.fail("read CSRF token from /browser/js/utils.js", r.status_code, excerpt(r.text))
        return
    d.token = m.group(1)
    print("ok read CSRF token from /browser/js/utils.js")

    # master password dialog: the page first posts an empty one, then the
    # user types one ("Set Master Password") and submits it.
    j = d.step("master password check", "POST", "/browser/master_password", {"password": ""})
    if j and not (data_of(j) or {}).get("present"):
        d.step("set master password", "POST", "/browser/master_password",
               {"password": "drive-master-" + d.pga.key[:8], "submit_password": True},
               check=lambda j, r: None if data_of(j).get("present") else "master password not accepted")

    j = d.step("server groups (/browser/nodes/)", "GET", "/browser/nodes/", check=need_data_list)
    gid = 1
    if j and data_of(j):
        gid = data_of(j)[0]["_id"]

    # --- Register - Server dialog (Save) ---------------------------------
    name = "drive-%s-%d" % (PGHOST, PGPORT)
    reg = {
        "gid": gid, "name": name, "bgcolor": "", "fgcolor": "", "host": PGHOST,
        "port": PGPORT, "db": PGDATABASE, "username": PGUSER, "role": None,
        "connect_now": True, "save_password": False, "db_res_type": "databases",
        "shared": False, "shared_username": "", "kerberos_conn": False,
        "use_ssh_tunnel": False, "tunnel_port": 22, "tunnel_prompt_password": False,
        "tunnel_authentication": False, "tunnel_keep_alive": 0,
        "save_tunnel_password": False, "comment": None,
        "connection_params": [
            {"name": "sslmode", "value": "prefer", "keyword": "sslmode"},
            {"name": "connect_timeout", "value": 10, "keyword": "connect_timeout"}],
        "tags": [],
    }
    if PGPASSWORD:
        reg["password"] = PGPASSWORD
    j = d.step("register server (POST /browser/server/obj/%s/, connect now)" % gid,
               "POST", "/browser/server/obj/%s/" % gid, reg,
               check=lambda j, r: None if j.get("node", {}).get("connected") else "not connected")
    if j:
        sid = j["node"]["_id"]
        print("   server: version %s, type %s" % (j["node"].get("version"), j["node"].get("server_type")))
    else:
        # the dialog deletes the server when connecting fails; register it
        # without connecting so the rest of the walk can still be tried
        reg2 = dict(reg, connect_now=False, name=name + "-noconnect")
        r = d.call("POST", "/browser/server/obj/%s/" % gid, reg2)
        try:
            sid = r.json()["node"]["_id"]
        except Exception:
            d.fail("register server without connecting", r.status_code, excerpt(r.text))
            return
    S = "%s/%s" % (gid, sid)

    # --- Disconnect, then Connect Server from the tree: with no saved
    # password pgAdmin first answers 428 (password dialog); the user then
    # submits the dialog (an empty password when the server trusts us).
    d.step("disconnect server (DELETE /browser/server/connect/%s)" % S, "DELETE",
           "/browser/server/connect/%s" % S)
    d.step("connect server without password -> 428 password dialog", "POST",
           "/browser/server/connect/%s" % S, ok_status=(428,),
           check=lambda j, r: None if (j.get("result") or {}).get("prompt_password") else "no password prompt")
    d.step("connect server (POST /browser/server/connect/%s, password dialog)" % S, "POST",
           "/browser/server/connect/%s" % S, {"password": PGPASSWORD, "save_password": False},
           check=lambda j, r: None if data_of(j).get("connected") else "not connected")
    d.step("server connection status (GET /browser/server/connect/%s)" % S, "GET",
           "/browser/server/connect/%s" % S,
           check=lambda j, r: None if data_of(j).get("connected") else "not connected")
    d.step("server group children (servers)", "GET", "/browser/server_group/children/%s" % gid,
           check=need_data_list)
    d.step("server properties", "GET", "/browser/server/obj/%s" % S, check=need_keys("name", "host"))
    d.step("server children (collections)", "GET", "/browser/server/children/%s" % S,
           check=need_labels("Databases", "Login/Group Roles", "Tablespaces"))
    d.step("server statistics", "GET", "/browser/server/stats/%s" % S)

    # --- dashboard of the server (default tab + activity tab) -------------
    charts = "session_stats,tps_stats,ti_stats,to_stats,bio_stats"
    d.step("dashboard graphs (server)", "GET", "/dashboard/dashboard_stats/%s?chart_names=%s" % (sid, charts),
           check=lambda j, r: None if isinstance(j, dict) and "session_stats" in j else "no session_stats")
    d.step("dashboard system_stats extension check", "GET", "/dashboard/check_extension/system_statistics/%s" % sid)
    d.step("dashboard server activity (sessions, locks, prepared xacts)", "GET", "/dashboard/activity/%s" % sid,
           check=lambda j, r: None if isinstance(j, list) and "activity" in j[0] else "no activity")
    d.step("dashboard configuration", "GET", "/dashboard/config/%s" % sid,
           check=lambda j, r: None if isinstance(j, list) and j else "empty")

    # --- Databases ----------------------------------------------------------
    j = d.step("databases nodes", "GET", "/browser/database/nodes/%s/" % S, check=need_labels(PGDATABASE))
    d.check("databases nodes: ids are oids (int)", j, ids_are_ints)
    did = None
    if j:
        n = node_by_label(data_of(j), PGDATABASE)
        did = n["_id"]
        if not n.get("connected"):
            d.step("connect database", "POST", "/browser/database/connect/%s/%s" % (S, did), {})
    if did is None:
        did = lookup_oid("SELECT oid FROM pg_database WHERE datname = current_database()")
        print("   (database id %s looked up directly)" % did)
    if did is None:
        return
    D = "%s/%s" % (S, did)
    d.step("database properties", "GET", "/browser/database/obj/%s" % D,
           check=lambda j, r: None if j.get("name") == PGDATABASE else "name is %r" % j.get("name"))
    d.step("database children (collections)", "GET", "/browser/database/children/%s" % D,
           check=need_labels("Schemas"))
    d.step("database SQL tab", "GET", "/browser/database/sql/%s" % D, check=need_text("CREATE DATABASE"))
    d.step("database statistics", "GET", "/browser/database/stats/%s" % D)
    d.step("dashboard graphs (database)", "GET", "/dashboard/dashboard_stats/%s/%s?chart_names=%s" % (sid, did, charts),
           check=lambda j, r: None if isinstance(j, dict) and "session_stats" in j else "no session_stats")
    d.step("dashboard database activity", "GET", "/dashboard/activity/%s/%s" % (sid, did),
           check=lambda j, r: None if isinstance(j, list) and "activity" in j[0] else "no activity")

    # --- Schemas ------------------------------------------------------------
    j = d.step("schemas nodes", "GET", "/browser/schema/nodes/%s/" % D, check=need_labels(SCHEMA))
    d.check("schemas nodes: ids are oids (int)", j, ids_are_ints)
    d.check("schemas nodes: no catalog schema listed (they belong under Catalogs)", j,
            lambda j, r: (lambda bad: "catalog schemas listed as user schemas: %s" % bad if bad else None)(
                [n["label"] for n in data_of(j) if n["label"] in ("information_schema", "pg_catalog")]))
    scid = node_by_label(data_of(j), SCHEMA)["_id"] if j else None
    if scid is None:
        scid = lookup_oid("SELECT oid FROM pg_namespace WHERE nspname = '%s'" % SCHEMA)
        print("   (schema id %s looked up directly)" % scid)
    if scid is None:
        return
    SC = "%s/%s" % (D, scid)
    d.step("catalogs nodes", "GET", "/browser/catalog/nodes/%s/" % D,
           check=need_labels("ANSI (information_schema)", "PostgreSQL Catalog (pg_catalog)"))
    d.step("schema properties", "GET", "/browser/schema/obj/%s" % SC,
           check=lambda j, r: None if j.get("name") == SCHEMA else "name is %r" % j.get("name"))
    d.step("schema children (collections)", "GET", "/browser/schema/children/%s" % SC,
           check=need_labels("Tables", "Views"))
    d.step("schema SQL tab", "GET", "/browser/schema/sql/%s" % SC, check=need_text("CREATE SCHEMA"))

    # --- Tables -------------------------------------------------------------
    j = d.step("tables nodes", "GET", "/browser/table/nodes/%s/" % SC, check=need_labels(TABLE))
    d.check("tables nodes: ids are oids (int)", j, ids_are_ints)
    tid = node_by_label(data_of(j), TABLE)["_id"] if j else None
    if tid is None:
        tid = lookup_oid("SELECT '%s.%s'::regclass::oid" % (SCHEMA, TABLE))
        print("   (table id %s looked up directly)" % tid)
    if tid is not None:
        T = "%s/%s" % (SC, tid)
        d.step("table properties", "GET", "/browser/table/obj/%s" % T,
               check=lambda j, r: None if j.get("name") == TABLE else "name is %r" % j.get("name"))
        d.step("table children (collections)", "GET", "/browser/table/children/%s" % T,
               check=need_labels("Columns"))
        j = d.step("columns nodes", "GET", "/browser/column/nodes/%s/" % T, check=need_labels(*TABLE_COLUMNS))
        if j:
            clid = node_by_label(data_of(j), TABLE_COLUMNS[0])["_id"]
            d.step("column properties", "GET", "/browser/column/obj/%s/%s" % (T, clid),
                   check=lambda j, r: None if j.get("name") == TABLE_COLUMNS[0] else "name is %r" % j.get("name"))
        d.step("table SQL tab (reverse-engineered CREATE TABLE)", "GET", "/browser/table/sql/%s" % T,
               check=need_text("CREATE TABLE IF NOT EXISTS %s.%s" % (SCHEMA, TABLE), "PRIMARY KEY"))
        d.step("table statistics", "GET", "/browser/table/stats/%s" % T)
        d.step("table dependencies", "GET", "/browser/table/dependency/%s" % T,
               check=lambda j, r: None if any(x.get("type") == "schema" and x.get("name") == SCHEMA for x in j)
               else "no dependency on schema %s" % SCHEMA)
        d.step("table dependents", "GET", "/browser/table/dependent/%s" % T,
               check=lambda j, r: None if any(x.get("type") == "index" and x.get("name", "").endswith("." + TABLE_INDEX)
                                             for x in j) else "index %s not among dependents" % TABLE_INDEX)
        d.step("indexes nodes", "GET", "/browser/index/nodes/%s/" % T,
               check=all_of(need_labels(TABLE_INDEX),
                            lambda j, r: "%s (a primary-key constraint's index) listed as a plain index" % TABLE_PKEY
                            if node_by_label(data_of(j), TABLE_PKEY) else None))
        d.step("constraints nodes", "GET", "/browser/constraints/nodes/%s/" % T, check=need_labels(TABLE_PKEY))

    # --- Views --------------------------------------------------------------
    j = d.step("views nodes", "GET", "/browser/view/nodes/%s/" % SC, check=need_labels(VIEW))
    d.check("views nodes: ids are oids (int)", j, ids_are_ints)
    vid = node_by_label(data_of(j), VIEW)["_id"] if j else None
    if vid is not None:
        d.step("view properties", "GET", "/browser/view/obj/%s/%s" % (SC, vid),
               check=lambda j, r: None if j.get("name") == VIEW else "name is %r" % j.get("name"))
        d.step("view SQL tab", "GET", "/browser/view/sql/%s/%s" % (SC, vid), check=need_text("CREATE"))

    # --- other collections a user expands -----------------------------------
    d.step("sequences nodes", "GET", "/browser/sequence/nodes/%s/" % SC, check=need_data_list)
    d.step("functions nodes", "GET", "/browser/function/nodes/%s/" % SC, check=need_data_list)
    j = d.step("login/group roles nodes", "GET", "/browser/role/nodes/%s/" % S, check=need_labels(PGUSER))
    if j:
        rid = node_by_label(data_of(j), PGUSER)["_id"]
        d.step("role properties (%s)" % PGUSER, "GET", "/browser/role/obj/%s/%s" % (S, rid),
               check=lambda j, r: None if j.get("rolname") == PGUSER else "rolname is %r" % j.get("rolname"))
    j = d.step("tablespaces nodes", "GET", "/browser/tablespace/nodes/%s/" % S, check=need_labels("pg_default"))
    if j:
        spcid = node_by_label(data_of(j), "pg_default")["_id"]
        d.step("tablespace properties (pg_default)", "GET", "/browser/tablespace/obj/%s/%s" % (S, spcid),
               check=lambda j, r: None if j.get("name") == "pg_default" else "name is %r" % j.get("name"))

    # --- Query Tool on the database ------------------------------------------
    trans = secrets.randbelow(9999998) + 1
    j = d.step("query tool: initialize", "POST", "/sqleditor/initialize/sqleditor/%d/%s/%s/%s" % (trans, gid, sid, did),
               {"user": PGUSER, "role": None, "password": None, "dbname": PGDATABASE})
    if j:
        run_query(d, "query tool: SELECT * FROM %s.%s" % (SCHEMA, TABLE), trans,
                  "SELECT * FROM %s.%s ORDER BY 1" % (SCHEMA, TABLE), expect_rows=EXPECT_ROWS)
        d.step("query tool: close", "DELETE", "/sqleditor/close/%d" % trans)

    # --- View/Edit Data > All Rows on the table ------------------------------
    if tid is not None:
        trans = secrets.randbelow(9999998) + 1
        j = d.step("view data: initialize (All Rows)", "POST",
                   "/sqleditor/initialize/viewdata/%d/3/table/%s/%s/%s/%s" % (trans, gid, sid, did, tid),
                   {"sql_filter": None, "server_cursor": False, "user": PGUSER, "role": None,
                    "password": None, "dbname": PGDATABASE})
        if j:
            if d.step("view data: start", "GET", "/sqleditor/view_data/start/%d" % trans):
                j = poll(d, "view data", trans, expect_rows=EXPECT_ROWS)
                if j and not data_of(j).get("primary_keys"):
                    d.fail("view data: primary key found (grid editable)", None,
                           "primary_keys is %r" % data_of(j).get("primary_keys"))
                elif j:
                    print("ok view data: primary key found (grid editable)")
            d.step("view data: close", "DELETE", "/sqleditor/close/%d" % trans)


def main():
    pga = Pgadmin()
    print("pgAdmin from %s; testing %s@%s:%d/%s" % (pga.dir, PGUSER, PGHOST, PGPORT, PGDATABASE))
    d = None
    try:
        pga.start()
        d = Driver(pga)
        walk(d)
    except Exception as e:
        failures.append("FAIL driver: %s: %s" % (type(e).__name__, e))
        print(failures[-1])
    finally:
        pga.stop()
        dump = os.environ.get("PGADMIN_SQL_DUMP")
        if dump and d is not None:
            with open(dump, "w") as f:
                json.dump(d.steps, f, indent=1)
    if failures:
        print("%d PGADMIN CHECKS FAILED" % len(failures))
        return 1
    print("ALL PGADMIN CHECKS PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
