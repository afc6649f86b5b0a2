-- EXPLAIN names the access path of every relation, on the fast path and in DataFusion.
CREATE TABLE t (k BIGINT, s TEXT, v BIGINT, label TEXT, PRIMARY KEY (k, s));
INSERT INTO t VALUES (1, 'a', 10, 'x'), (1, 'b', 20, 'y'), (2, 'a', 30, 'x'), (3, 'c', 40, 'z');

EXPLAIN SELECT v FROM t WHERE k = 1 AND s = 'a';
EXPLAIN SELECT v FROM t WHERE k IN (1, 2) AND s = 'a';
EXPLAIN SELECT v FROM t WHERE k = 1 AND s >= 'a' AND s < 'c' LIMIT 5;
EXPLAIN SELECT v FROM t WHERE k = 1 ORDER BY k DESC, s DESC LIMIT 1;
-- The range enforces its bounds, so they leave the filter and LIMIT reaches the engine,
-- except a backward read's bound that needs a String's predecessor (none exists).
EXPLAIN SELECT v FROM t WHERE k = 1 AND s > 'a' ORDER BY k DESC, s DESC LIMIT 1;
EXPLAIN SELECT v FROM t WHERE k = 1 AND s < 'c' ORDER BY k DESC, s DESC LIMIT 1;
EXPLAIN SELECT v FROM t WHERE k >= 2 AND k < 3 AND v > 0;
-- A comparison with NULL matches no row, on any key column.
SELECT v FROM t WHERE k = 1 AND s > NULL;
SELECT v FROM t WHERE k = NULL;
SELECT v FROM t WHERE k = 1 AND s = 'a' AND v = NULL;
-- Backward from just below a String, which has no predecessor: from the value itself,
-- which the filter then drops.
SELECT v FROM t WHERE k = 1 AND s <= 'b' ORDER BY k DESC, s DESC;
SELECT v FROM t WHERE k = 1 AND s < 'b' ORDER BY k DESC, s DESC;
SELECT v FROM t WHERE k = 1 AND s >= 'b' ORDER BY k DESC, s DESC;
EXPLAIN SELECT k, s FROM t WHERE v > 15;
EXPLAIN SELECT k FROM t ORDER BY v;

-- DataFusion: the scan node shows the path its pushed-down predicates chose.
EXPLAIN SELECT count(*) FROM t WHERE k = 1 AND s = 'b';
EXPLAIN SELECT k, count(*) FROM t WHERE k IN (1, 3) AND s = 'a' GROUP BY k;
EXPLAIN SELECT sum(v) FROM t WHERE k >= 2;
EXPLAIN SELECT label, sum(v) FROM t WHERE label = 'x' GROUP BY label;
EXPLAIN SELECT a.k FROM t a JOIN t b ON a.k = b.k WHERE b.s = 'c';
EXPLAIN SELECT * FROM versions.t WHERE k = 2;

-- ANALYZE runs the query and adds rows, pages and capacity units.
EXPLAIN ANALYZE SELECT v FROM t WHERE k = 1 AND s = 'a';
EXPLAIN ANALYZE SELECT v FROM t WHERE k = 1;
-- A range over partition keys counts the ones it read (1, 2 and 3: rows of k = 1 twice).
EXPLAIN ANALYZE SELECT v FROM t WHERE k >= 1 AND v > 0;
-- A DataFusion plan's scans count the partition keys they read too.
EXPLAIN ANALYZE SELECT count(*) FROM t;
EXPLAIN ANALYZE SELECT label, max(v) FROM t WHERE v > 15 GROUP BY label;

-- A key compared with an expression over constants is compared with its value: the
-- access path is a GetRow, not a scan (the Table Store documents' hash-prefix lookup).
EXPLAIN SELECT v FROM t WHERE k = 2 - 1 AND s = 'a';
EXPLAIN SELECT v FROM t WHERE k = length('x') AND s = lower('A') || '';
EXPLAIN SELECT v FROM t WHERE k = 1 AND s = substr(md5('200003'), 1, 4) || '200003';

-- A secondary index serves equality and IN on its leading columns; the predicate is
-- checked again on each row it names.
CREATE INDEX t_label ON t (label, v);
EXPLAIN SELECT k, s FROM t WHERE label = 'x';
SELECT k, s FROM t WHERE label = 'x' ORDER BY k;
EXPLAIN SELECT k FROM t WHERE label IN ('x', 'z') AND v = 40;
SELECT k FROM t WHERE label IN ('x', 'z') AND v = 40;
EXPLAIN SELECT count(*) FROM t WHERE label = 'y';
-- The key still wins where it fixes the read.
EXPLAIN SELECT v FROM t WHERE k = 1 AND label = 'x';
