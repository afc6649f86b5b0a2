-- pgbench custom script (tests/client_pgbench.rs): point gets, updates by PK, an
-- increment and a PK range count on a pgwide table `accounts` (id BIGINT PK, balance
-- BIGINT, note TEXT) holding ids 1..100, partly inside a transaction block as in
-- pgbench's built-in TPC-B-like script.
\set id random(1, 100)
\set delta random(-500, 500)
SELECT balance, note FROM accounts WHERE id = :id;
BEGIN;
UPDATE accounts SET balance = balance + :delta WHERE id = :id;
SELECT balance FROM accounts WHERE id = :id;
END;
UPDATE accounts SET note = 'touched' WHERE id = :id;
SELECT count(*) FROM accounts WHERE id >= :id AND id < :id + 10;
