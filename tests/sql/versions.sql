-- Versions as data: joins and aggregates over versions.<table>, and SET pgwide.as_of.
CREATE TABLE prices (sku TEXT, price BIGINT, note TEXT, PRIMARY KEY (sku)) WITH (max_versions = 5, max_version_offset = 4000000000);
INSERT INTO prices (sku, _version, price, note) VALUES ('a', 1000, 10, 'first');
UPDATE prices SET price = 11, _version = 2000 WHERE sku = 'a';
UPDATE prices SET price = 12, note = 'third', _version = 3000 WHERE sku = 'a';
INSERT INTO prices (sku, _version, price) VALUES ('b', 1500, 50);
UPDATE prices SET price = 55, _version = 2500 WHERE sku = 'b';

SELECT sku, column_name, version, value FROM versions.prices ORDER BY sku, column_name, version;
SELECT sku, count(*) AS versions, min(version) AS first, max(version) AS last FROM versions.prices WHERE column_name = 'price' GROUP BY sku ORDER BY sku;
SELECT p.sku, p.price, v.version FROM prices p JOIN versions.prices v ON v.sku = p.sku AND v.column_name = 'price' AND v.value = CAST(p.price AS TEXT) ORDER BY p.sku;
SELECT sku, CAST(value AS BIGINT) - lag(CAST(value AS BIGINT)) OVER (PARTITION BY sku ORDER BY version) AS change FROM versions.prices WHERE column_name = 'price' ORDER BY sku, version;

-- As of a time: the newest version at or before it, on the fast path and in DataFusion.
SET pgwide.as_of = 2200;
SELECT sku, price, note FROM prices ORDER BY sku;
SELECT price FROM prices WHERE sku = 'a';
SELECT sum(price) FROM prices;
SET pgwide.as_of = 1200;
SELECT sku, price, note FROM prices ORDER BY sku;
SELECT count(*) FROM versions.prices;
RESET pgwide.as_of;
SELECT sku, price, note FROM prices ORDER BY sku;
SET pgwide.as_of = 'yesterday';
-- A timestamp with time zone, or an expression computed once when SET runs.
SET pgwide.as_of = '1970-01-01 00:00:02.2+00';
SELECT sku, price FROM prices ORDER BY sku;
SET pgwide.as_of = to_timestamp(1.2);
SELECT sku, price FROM prices ORDER BY sku;
SET pgwide.as_of = 1000 + 1200;
SHOW pgwide.as_of;
SELECT price FROM prices WHERE sku = 'a';
SET TIME ZONE 'Asia/Kolkata';
SET pgwide.as_of = '1970-01-01 05:30:01.2';
SELECT sku, price FROM prices ORDER BY sku;
RESET TIME ZONE;
SET pgwide.as_of = now() - interval '10 minutes';
SELECT sku, price, note FROM prices ORDER BY sku;
SET pgwide.as_of = NULL::timestamptz;
SET pgwide.as_of = 'infinity';
SET pgwide.as_of = to_timestamp(-5);
RESET pgwide.as_of;
