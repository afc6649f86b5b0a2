-- Inside a transaction, DataFusion queries see the session's own staged writes.
CREATE TABLE acct (id BIGINT, owner TEXT, balance BIGINT, PRIMARY KEY (id));
INSERT INTO acct VALUES (1, 'ann', 100), (2, 'bob', 50);

BEGIN;
INSERT INTO acct VALUES (3, 'cid', 25);
UPDATE acct SET balance = 0 WHERE id = 1;
SELECT count(*), sum(balance) FROM acct;
SELECT owner, balance FROM acct WHERE balance > 10 ORDER BY balance DESC;
SELECT a.owner, b.owner FROM acct a JOIN acct b ON a.id + 1 = b.id ORDER BY a.id;
SELECT count(*) FROM acct WHERE id = 3;
ROLLBACK;
SELECT count(*), sum(balance) FROM acct;

BEGIN;
DELETE FROM acct WHERE id = 2;
SELECT owner FROM acct GROUP BY owner ORDER BY owner;
COMMIT;
SELECT owner FROM acct GROUP BY owner ORDER BY owner;

-- A failed query aborts the transaction like any other error.
BEGIN;
SELECT count(*) FROM no_such_table;
SELECT count(*) FROM acct;
ROLLBACK;
