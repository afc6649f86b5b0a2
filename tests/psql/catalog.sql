CREATE TABLE t (id TEXT, seq BIGINT, name TEXT, score DOUBLE PRECISION, ok BOOLEAN, PRIMARY KEY (id, seq)) WITH (ttl = 86400, max_versions = 3);
CREATE TABLE u (k BIGINT PRIMARY KEY, v TEXT);
\l
\l+
\dt
\dt+ t
\d
\di
\dn
\d t
\d+ t
\d nosuch
\x
\d u
SELECT relname, relkind, relhasindex, array_to_string(reloptions, ',') AS options FROM pg_catalog.pg_class WHERE relname = 'u';
\x
SELECT table_name, column_name, data_type FROM information_schema.columns ORDER BY table_name, ordinal_position;
SELECT constraint_name, column_name, ordinal_position FROM information_schema.key_column_usage ORDER BY 1, 3;
SELECT table_name, constraint_type FROM information_schema.table_constraints ORDER BY 1;
SELECT 't'::regclass = oid AS stable_oid, format_type(atttypid, atttypmod) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid WHERE relname = 't' AND attnum = 2;
SELECT nspname, oid FROM pg_catalog.pg_namespace ORDER BY oid;
SELECT current_schema(), current_database(), pg_catalog.pg_table_is_visible(0), has_table_privilege('t', 'select');
SELECT * FROM pgwide.tables ORDER BY "table";
-- Secondary indexes and UNIQUE constraints, as psql 15 lists them for PostgreSQL.
CREATE TABLE members (id BIGINT PRIMARY KEY, email TEXT UNIQUE, team INTEGER);
CREATE INDEX members_team ON members (team);
CREATE UNIQUE INDEX members_team_email ON members (team, email);
\d members
\di
DROP TABLE members;
-- Foreign keys, on both sides, as psql 15 lists them for PostgreSQL.
CREATE TABLE teams (id BIGINT PRIMARY KEY, code TEXT UNIQUE);
CREATE TABLE players (id BIGINT PRIMARY KEY, team_id BIGINT REFERENCES teams ON DELETE CASCADE, team_code TEXT, FOREIGN KEY (team_code) REFERENCES teams (code) ON UPDATE CASCADE DEFERRABLE INITIALLY DEFERRED);
\d players
\d teams
DROP TABLE players, teams;
-- CHECK constraints.
CREATE TABLE stock (id BIGINT PRIMARY KEY, qty INTEGER CHECK (qty >= 0), lo INTEGER, hi INTEGER, CONSTRAINT stock_range CHECK (lo <= hi AND lo > 0));
\d stock
DROP TABLE stock;
-- Comments on a table and its columns, as psql 15 shows them for PostgreSQL.
CREATE TABLE notes (id BIGINT PRIMARY KEY, body TEXT, tag TEXT);
COMMENT ON TABLE notes IS 'free-form notes';
COMMENT ON COLUMN notes.body IS 'the text';
\d+ notes
\dt+ notes
COMMENT ON COLUMN notes.body IS NULL;
\d+ notes
DROP TABLE notes;
-- psql's other listings: functions, privileges (after GRANT), tablespaces, and the
-- kinds of object pgwide has none of.
CREATE TABLE shared (id BIGINT PRIMARY KEY, note TEXT);
CREATE ROLE reader LOGIN PASSWORD 'secret';
\dp shared
GRANT SELECT, UPDATE ON shared TO reader;
\dp shared
REVOKE UPDATE ON shared FROM reader;
\dp shared
\df
\db
\dy
\des
\dew
\dL
\dc
\dC
\do
\drds
\dF
\deu
\dRs
\dAc
\dO
DROP TABLE shared;
DROP ROLE reader;
-- Sizes follow what a table holds: its rows, then its index entries.
CREATE TABLE sized (k BIGINT PRIMARY KEY, v TEXT);
\dt+ sized
INSERT INTO sized SELECT g, 'value ' || g FROM generate_series(1, 1000) g;
CREATE INDEX sized_v ON sized (v);
\dt+ sized
\di+ sized*
SELECT pg_relation_size('sized') > 0 AS has_rows, pg_total_relation_size('sized') = pg_relation_size('sized') + pg_indexes_size('sized') AS total_adds_up, pg_relation_size('sized_pkey') AS pkey_bytes;
DROP TABLE sized;
-- Enum types: \dT lists them with their labels in order, \d shows a column's type by
-- name.
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok';
CREATE TABLE moods (id BIGINT PRIMARY KEY, m mood NOT NULL);
\dT
\dT+ mood
\d moods
INSERT INTO moods VALUES (1, 'happy'), (2, 'sad'), (3, 'meh');
SELECT id, m FROM moods ORDER BY m;
DROP TYPE mood;
DROP TABLE moods;
DROP TYPE mood;
\dT
-- Views: \dv lists them, \d shows a view's columns, \d+ its definition.
CREATE TABLE orders (id BIGINT PRIMARY KEY, customer VARCHAR(40), amount NUMERIC(10,2));
INSERT INTO orders VALUES (1, 'ada', 12.50), (2, 'ada', 7.25), (3, 'bob', 3.00);
CREATE VIEW customer_totals AS SELECT customer, sum(amount) AS total FROM orders GROUP BY customer;
\dv
\d customer_totals
\d+ customer_totals
SELECT * FROM customer_totals ORDER BY customer;
DROP TABLE orders;
DROP TABLE orders CASCADE;
\dv
SELECT 23::regtype, 25::regtype::text AS named, ARRAY[20, 16]::text[] AS kept;
