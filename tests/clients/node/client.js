// node-postgres (`pg`) against pgwide, run by tests/client_node.rs. The Rust test creates
// `things` (id BIGINT PK, every supported type as attributes) and `kv` ((k TEXT, n BIGINT)
// PK, v TEXT) first. A failed check throws, so the process exits non-zero.

const assert = require('node:assert/strict');
const { Client, Pool } = require('pg');

let checks = 0;
function ok(what) {
  checks += 1;
  console.log('ok ' + what);
}

async function roundTrip(client) {
  const blob = Buffer.from([...Array(256).keys()].concat([0, 0, 255]));
  const values = [1, true, -7, 2147483647, '9007199254740993', 1.5, Math.PI, "it's é ünïcode", blob];
  const insert =
    'INSERT INTO things (id, b, i2, i4, i8, f4, f8, t, bin) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)';
  const res = await client.query(insert, values);
  assert.equal(res.rowCount, 1);
  assert.equal(res.command, 'INSERT');
  ok('parameterized insert');

  const { rows, fields } = await client.query('SELECT id, b, i2, i4, i8, f4, f8, t, bin FROM things WHERE id = $1', [1]);
  assert.equal(rows.length, 1);
  const r = rows[0];
  // pg returns int8 as a string so no precision is lost.
  assert.equal(r.id, '1');
  assert.equal(r.b, true);
  // SMALLINT and INTEGER columns are int2 and int4, which pg parses into numbers.
  assert.equal(r.i2, -7);
  assert.equal(r.i4, 2147483647);
  assert.equal(r.i8, '9007199254740993');
  assert.equal(r.f4, 1.5);
  assert.equal(r.f8, Math.PI);
  assert.equal(r.t, "it's é ünïcode");
  assert.ok(Buffer.isBuffer(r.bin) && r.bin.equals(blob), 'bytea round trip');
  ok('types round trip');
  assert.deepEqual(
    fields.map((f) => [f.name, f.dataTypeID]),
    [['id', 20], ['b', 16], ['i2', 21], ['i4', 23], ['i8', 20], ['f4', 700], ['f8', 701], ['t', 25], ['bin', 17]],
  );
  ok('field type OIDs');

  await client.query(insert, [2, null, null, null, null, null, null, null, null]);
  const nulls = await client.query('SELECT b, i2, i4, i8, f4, f8, t, bin FROM things WHERE id = $1', [2]);
  assert.deepEqual(Object.values(nulls.rows[0]), [null, null, null, null, null, null, null, null]);
  ok('NULL parameters');

  // Binary result format through a named, prepared statement reused many times.
  for (let i = 10; i < 20; i++) {
    await client.query({ name: 'ins', text: insert, values: [i, i % 2 === 0, i, i * 1000, String(i) + '000000000000', i / 4, i / 3, 't' + i, Buffer.from([i])] });
  }
  const sum = await client.query({ name: 'sum', text: 'SELECT count(*) AS n, sum(i4) AS s FROM things WHERE id >= $1 AND id < $2', values: [10, 20] });
  assert.equal(sum.rows[0].n, '10');
  assert.equal(Number(sum.rows[0].s), 145000);
  ok('named prepared statement reused');
  // (pg's `binary: true` is not exercised: pg-protocol hands binary cells to the type
  // parsers as strings, which fails for int8/bytea on any server. psycopg and pgjdbc
  // cover binary formats.)
  const byName = await client.query({ name: 'one', text: 'SELECT id, f8, t, bin FROM things WHERE id = $1', values: [13] });
  assert.equal(byName.rows[0].t, 't13');
  assert.ok(byName.rows[0].bin.equals(Buffer.from([13])));
  assert.equal(byName.rows[0].f8, 13 / 3);
  ok('prepared point get');
  const upd = await client.query('UPDATE things SET t = $1 WHERE id = $2 RETURNING id, t', ['changed', 13]);
  assert.equal(upd.rowCount, 1);
  assert.equal(upd.rows[0].t, 'changed');
  ok('UPDATE ... RETURNING with parameters');
  const del = await client.query('DELETE FROM things WHERE id >= $1', [15]);
  assert.equal(del.rowCount, 5);
  ok('DELETE count');
}

async function transactions(client) {
  await client.query('BEGIN');
  await client.query('INSERT INTO kv (k, n, v) VALUES ($1, $2, $3)', ['a', 1, 'kept']);
  await client.query('COMMIT');
  await client.query('BEGIN');
  await client.query('INSERT INTO kv (k, n, v) VALUES ($1, $2, $3)', ['a', 2, 'dropped']);
  await client.query('ROLLBACK');
  const r = await client.query('SELECT n, v FROM kv WHERE k = $1 ORDER BY n', ['a']);
  assert.deepEqual(r.rows, [{ n: '1', v: 'kept' }]);
  ok('commit and rollback');
  await assert.rejects(client.query('INSERT INTO kv (k, n, v) VALUES ($1, $2, $3)', ['a', 1, 'dup']), (e) => e.code === '23505');
  ok('duplicate key is 23505');
  await assert.rejects(client.query('SELECT * FROM no_such_table'), (e) => e.code === '42P01');
  ok('missing table is 42P01');
  const multi = await client.query("SELECT 1 AS x; SELECT 'two' AS y");
  assert.equal(multi.length, 2);
  assert.equal(multi[1].rows[0].y, 'two');
  ok('multi-statement simple query');
}

// JavaScript arrays: pg sends them as array literals with no type, which the server types
// from `= ANY($1)` and `$1::int8[]`; array results come back as arrays.
async function arrays(client) {
  const byKey = await client.query('SELECT n FROM kv WHERE k = $1 AND n = ANY($2) ORDER BY n', ['pool', [1, 3, 99]]);
  assert.deepEqual(byKey.rows.map((r) => r.n), ['1', '3']);
  ok('= ANY(array parameter)');
  const byText = await client.query('SELECT n FROM kv WHERE k = $1 AND v = ANY($2) ORDER BY n', ['pool', ['v2', 'v4', 'zz']]);
  assert.deepEqual(byText.rows.map((r) => r.n), ['2', '4']);
  ok('= ANY(text array parameter)');
  const back = await client.query('SELECT $1::int8[] AS a, ARRAY(SELECT n FROM kv WHERE k = $2 AND n < 3 ORDER BY n) AS b', [[5, null, -6], 'pool']);
  assert.deepEqual(back.rows[0].a, ['5', null, '-6']);
  assert.deepEqual(back.rows[0].b, ['0', '1', '2']);
  ok('array results');
  const upd = await client.query("UPDATE kv SET v = concat(v, '!') WHERE k = $1 AND n = ANY($2::int8[])", ['pool', [0, 1]]);
  assert.equal(upd.rowCount, 2);
  ok('UPDATE with a function and an array parameter');
  // Integer literals are integers, as PostgreSQL types them, so pg returns numbers.
  const series = await client.query('SELECT g, ARRAY[1, 2] AS fixed FROM generate_series(1, 3) g');
  assert.deepEqual(series.rows.map((r) => r.g), [1, 2, 3]);
  assert.deepEqual(series.rows[0].fixed, [1, 2]);
  ok('generate_series and ARRAY of integer literals are integers');
}

// Dates, times, uuids and generated keys as an application writes them: a JavaScript
// Date goes out as text with its offset and comes back as the same instant; a
// `GENERATED ... AS IDENTITY` key comes back from RETURNING as a number (int4).
async function datesUuidsAndKeys(client) {
  await client.query(
    'CREATE TABLE events (id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, ' +
      'token UUID NOT NULL, at TIMESTAMPTZ NOT NULL, day DATE)',
  );
  const at = new Date(Date.UTC(2024, 2, 1, 10, 0, 5, 123));
  const token = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
  const first = await client.query(
    'INSERT INTO events (token, at, day) VALUES ($1, $2, $3) RETURNING id, token, at, day::text AS day',
    [token, at, '1969-07-20'],
  );
  assert.equal(first.rows[0].id, 1);
  assert.equal(first.rows[0].token, token);
  assert.equal(first.rows[0].at.getTime(), at.getTime());
  assert.equal(first.rows[0].day, '1969-07-20');
  ok('identity key, uuid, timestamptz and date through INSERT ... RETURNING');
  const second = await client.query(
    'INSERT INTO events (token, at) VALUES (gen_random_uuid(), now()) RETURNING id',
  );
  assert.equal(second.rows[0].id, 2);
  const found = await client.query('SELECT id FROM events WHERE at < $1 AND token = $2', [new Date(), token]);
  assert.deepEqual(found.rows.map((r) => r.id), [1]);
  ok('timestamptz and uuid parameters in WHERE');
  await assert.rejects(client.query('INSERT INTO events (id, at) VALUES (3, now())'), { code: '23502' });
  ok('NOT NULL is enforced');
  await client.query('DROP TABLE events');
}

// Decimals and defaults: node-postgres returns a numeric as its exact text (it has no
// decimal type), and a column's DEFAULT fills what an INSERT leaves out.
async function decimalsAndDefaults(client) {
  await client.query(
    'CREATE TABLE orders (id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, ' +
      "total NUMERIC(12,2) NOT NULL, status TEXT NOT NULL DEFAULT 'new', " +
      'placed TIMESTAMPTZ DEFAULT now())',
  );
  const made = await client.query(
    'INSERT INTO orders (total) VALUES ($1), ($2) RETURNING id, total, status, placed',
    ['19.995', 0.1],
  );
  assert.deepEqual(made.rows.map((r) => [r.id, r.total, r.status]), [[1, '20.00', 'new'], [2, '0.10', 'new']]);
  assert.ok(made.rows[0].placed instanceof Date);
  ok('numeric(12,2) rounds and comes back exact; DEFAULTs fill status and placed');
  const sums = await client.query('SELECT sum(total) AS total, sum(id::int8) AS ids, 0.1 + 0.2 AS exact FROM orders');
  assert.deepEqual(sums.rows[0], { total: '20.10', ids: '3', exact: '0.3' });
  ok('sum of numeric and bigint, and decimal literals, are exact numerics');
  await assert.rejects(client.query('INSERT INTO orders (total) VALUES ($1)', ['1e10']), { code: '22003' });
  ok('a numeric past its precision is 22003');
  await client.query('DROP TABLE orders');
}

// JSON: node-postgres parses json and jsonb results into JavaScript values and sends
// objects as their JSON text.
async function json(client) {
  await client.query('CREATE TABLE docs (id INTEGER PRIMARY KEY, body JSONB, raw JSON)');
  const doc = { name: 'pgwide', tags: ['a', 'b'], n: 1.5, nested: { ok: true } };
  await client.query('INSERT INTO docs VALUES (1, $1, $2)', [doc, JSON.stringify([1, 2])]);
  const read = await client.query(
    "SELECT body, raw, body->>'name' AS name, body->'nested' AS nested, jsonb_build_object('id', id) AS made FROM docs",
  );
  assert.deepEqual(read.rows[0], { body: doc, raw: [1, 2], name: 'pgwide', nested: { ok: true }, made: { id: 1 } });
  ok('json and jsonb arrive as JavaScript values');
  const found = await client.query('SELECT id FROM docs WHERE body @> $1', [{ tags: ['b'] }]);
  assert.deepEqual(found.rows, [{ id: 1 }]);
  ok('jsonb @> with an object parameter');
  await assert.rejects(client.query("INSERT INTO docs VALUES (2, '{bad', NULL)"), { code: '22P02' });
  ok('malformed JSON is 22P02');
  await client.query('DROP TABLE docs');
}

async function pool() {
  const p = new Pool({ max: 4 });
  const results = await Promise.all(
    [...Array(16).keys()].map((i) => p.query('INSERT INTO kv (k, n, v) VALUES ($1, $2, $3) RETURNING n', ['pool', i, 'v' + i])),
  );
  assert.equal(results.length, 16);
  const c = await p.query('SELECT count(*)::int AS c FROM kv WHERE k = $1', ['pool']);
  assert.equal(c.rows[0].c, 16);
  ok('pool of concurrent connections');
  await p.end();
}

async function notifications() {
  const listener = new Client();
  const sender = new Client();
  await listener.connect();
  await sender.connect();
  const heard = [];
  const both = new Promise((resolve) => {
    listener.on('notification', (msg) => {
      heard.push([msg.channel, msg.payload, msg.processId]);
      if (heard.length === 2) resolve();
    });
  });
  await listener.query('LISTEN jobs');
  const pid = (await sender.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  await sender.query("BEGIN; NOTIFY jobs, 'rolled back'; ROLLBACK");
  await sender.query('SELECT pg_notify($1, $2)', ['jobs', 'one']);
  await sender.query("NOTIFY jobs, 'two'");
  await Promise.race([both, new Promise((_, reject) => setTimeout(() => reject(new Error('no notification in 5 s')), 5000))]);
  assert.deepEqual(heard, [['jobs', 'one', pid], ['jobs', 'two', pid]]);
  ok('LISTEN hears committed notifications, pushed while idle');
  await listener.end();
  await sender.end();
}

async function main() {
  await notifications();
  const client = new Client();
  await client.connect();
  const v = await client.query('SHOW server_version');
  assert.ok(/^\d+/.test(v.rows[0].server_version));
  ok('connect and SHOW server_version');
  await roundTrip(client);
  await transactions(client);
  await client.end();
  await pool();
  const again = new Client();
  await again.connect();
  await arrays(again);
  await datesUuidsAndKeys(again);
  await decimalsAndDefaults(again);
  await json(again);
  await again.end();
  console.log('checks ' + checks);
  console.log('ALL NODE CHECKS PASSED');
}

main().catch((e) => {
  console.error('FAILED:', e);
  process.exit(1);
});
