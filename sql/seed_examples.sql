-- The Table Store seed examples, runnable with: psql -h 127.0.0.1 -p 5433 -f sql/seed_examples.sql
-- (against a fresh `pgwide serve`). tests/psql_seed.rs checks its output against
-- sql/seed_examples.expected.

-- 1. Two rows with different attribute sets; Length with two versions (seed "Wide Column").
--    The seed's versions are from 2016, so max_version_offset is widened to accept them.
CREATE TABLE book (id TEXT PRIMARY KEY, type TEXT, name TEXT, length BIGINT)
  WITH (max_versions = 2, max_version_offset = 400000000);
INSERT INTO book (id, _version, type, name, length) VALUES ('4776', 1466676354000, 'Book', 'Tale of Two Cities', 400);
UPDATE book SET length = 500, _version = 1466762754000 WHERE id = '4776';
INSERT INTO book (id, type, name) VALUES ('6555', 'Music', 'Wild Honey');
SELECT id, type, name, length FROM book ORDER BY id;
SELECT id, column_name, version, value FROM versions.book WHERE id = '4776' AND column_name = 'length';

-- max_versions lowered hides the older version; raised again, it is visible (not yet collected).
ALTER TABLE book SET (max_versions = 1);
SELECT column_name, version, value FROM versions.book WHERE id = '4776' AND column_name = 'length';
ALTER TABLE book SET (max_versions = 2);
SELECT column_name, version, value FROM versions.book WHERE id = '4776' AND column_name = 'length';

-- 2. TTL 86400 against version 1468944000000 (2016-07-20): long expired, so refused.
CREATE TABLE ttl_demo (id TEXT PRIMARY KEY, v BIGINT) WITH (ttl = 86400, max_version_offset = 400000000);
INSERT INTO ttl_demo (id, _version, v) VALUES ('a', 1468944000000, 1);
SELECT id FROM ttl_demo;

-- 3. Max Version Offset 86400: a version two days away is refused, whole row.
CREATE TABLE offset_demo (id TEXT PRIMARY KEY, v BIGINT);
INSERT INTO offset_demo (id, _version, v) VALUES ('a', 1468943999000, 1);
SELECT id FROM offset_demo;

-- 4. Purchase records: the spliced partition key with zero padding and the ',' connector
--    (seed "Table operations"), so rows sort like the original (DeviceID, SellerID, CardID).
CREATE TABLE purchases (pkey TEXT, order_number BIGINT, amount DOUBLE PRECISION,
                        PRIMARY KEY (pkey, order_number));
INSERT INTO purchases (pkey, order_number, amount) VALUES
  (lpad('16', 6, '0') || ',' || 'a100' || ',' || '66661', 200001, 1.5),
  (lpad('54', 6, '0') || ',' || 'a100' || ',' || '6777', 200003, 2.5),
  (lpad('54', 6, '0') || ',' || 'a1001' || ',' || '6777', 200004, 3.5),
  (lpad('167', 6, '0') || ',' || 'a101' || ',' || '283408', 200002, 4.5);
SELECT pkey, order_number FROM purchases;
-- DeviceID range [15, 100) is one PK range.
SELECT pkey FROM purchases WHERE pkey >= '000015' AND pkey < '000100';

-- 5. The md5 hash prefix on a sequential OrderNumber spreads writes across partitions.
CREATE TABLE orders (hash_order_number TEXT PRIMARY KEY, device_id BIGINT, seller_id TEXT, card_id BIGINT);
INSERT INTO orders VALUES
  (substr(md5('200001'), 1, 4) || '200001', 16, 'a100', 66661),
  (substr(md5('200002'), 1, 4) || '200002', 167, 'a101', 283408),
  (substr(md5('200003'), 1, 4) || '200003', 54, 'a100', 6777),
  (substr(md5('200004'), 1, 4) || '200004', 54, 'a1001', 6777),
  (substr(md5('200005'), 1, 4) || '200005', 66, 'b304', 178994);
SELECT hash_order_number, device_id, seller_id, card_id FROM orders;
-- A point read recomputes the prefix.
SELECT device_id FROM orders WHERE hash_order_number = substr(md5('200003'), 1, 4) || '200003';
