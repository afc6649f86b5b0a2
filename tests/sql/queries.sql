-- Queries the fast path does not plan run on DataFusion over engine scans.
CREATE TABLE customers (id BIGINT, name TEXT, city TEXT, vip BOOLEAN, PRIMARY KEY (id));
CREATE TABLE orders (customer_id BIGINT, order_no BIGINT, amount DOUBLE PRECISION, status TEXT, PRIMARY KEY (customer_id, order_no));
INSERT INTO customers VALUES (1, 'Ada', 'London', true), (2, 'Brian', 'Paris', false), (3, 'Chen', 'London', false), (4, 'Dana', NULL, true);
INSERT INTO orders VALUES (1, 1, 10.5, 'paid'), (1, 2, 20, 'paid'), (1, 3, 5, 'open'), (2, 1, 100, 'paid'), (3, 1, 7.25, 'open'), (5, 1, 1, 'paid');

-- Joins: inner, left, with filters on both sides.
SELECT c.name, o.order_no, o.amount FROM customers c JOIN orders o ON o.customer_id = c.id ORDER BY c.name, o.order_no;
SELECT c.name, count(o.order_no) AS orders FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.name ORDER BY c.name;
SELECT o.customer_id, o.order_no FROM orders o LEFT JOIN customers c ON c.id = o.customer_id WHERE c.id IS NULL;
SELECT c.name, o.amount FROM customers c, orders o WHERE c.id = o.customer_id AND c.city = 'London' AND o.amount > 6 ORDER BY o.amount;

-- Aggregates: count(*) is bigint, as in PostgreSQL.
SELECT count(*) FROM orders;
SELECT count(*), sum(amount), min(amount), max(amount) FROM orders WHERE customer_id = 1;
SELECT count(*) FROM orders WHERE customer_id = 42;
SELECT status, count(*) AS n, sum(amount) AS total FROM orders GROUP BY status ORDER BY status;
SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id HAVING sum(amount) > 10 ORDER BY total DESC;
SELECT count(DISTINCT status) FROM orders;

-- DISTINCT, ORDER BY expressions, LIMIT/OFFSET.
SELECT DISTINCT city FROM customers ORDER BY city NULLS FIRST;
SELECT name FROM customers ORDER BY length(name) DESC, name LIMIT 2;
SELECT order_no, amount FROM orders ORDER BY amount * -1 LIMIT 3 OFFSET 1;

-- Subqueries and CTEs.
SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE status = 'open') ORDER BY name;
SELECT name FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id AND o.amount >= 100);
SELECT name, (SELECT count(*) FROM orders o WHERE o.customer_id = c.id) AS n FROM customers c ORDER BY id;
WITH totals AS (SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id)
SELECT c.name, t.total FROM totals t JOIN customers c ON c.id = t.customer_id WHERE t.total > 7 ORDER BY t.total;
SELECT * FROM (SELECT id, name FROM customers WHERE vip) AS v ORDER BY id;

-- Window functions.
SELECT customer_id, order_no, row_number() OVER (PARTITION BY customer_id ORDER BY amount DESC) AS rank_in_customer FROM orders ORDER BY customer_id, order_no;
SELECT order_no, amount, sum(amount) OVER (ORDER BY customer_id, order_no) AS running FROM orders ORDER BY customer_id, order_no;

-- UNION.
SELECT city AS place FROM customers WHERE city IS NOT NULL UNION SELECT status FROM orders ORDER BY place;
SELECT id FROM customers WHERE id < 3 UNION ALL SELECT customer_id FROM orders WHERE order_no = 1 ORDER BY 1;

-- A point get stays on the fast path; DataFusion takes the rest with the same results.
SELECT name FROM customers WHERE id = 2;
SELECT upper(name) FROM customers WHERE id = 2;

-- Errors keep PostgreSQL's SQLSTATEs.
SELECT count(*) FROM nope;
SELECT missing FROM customers GROUP BY missing;
SELECT name FROM customers c JOIN orders o ON o.nothing = c.id;
SELECT 1 / 0 FROM customers GROUP BY city;
SELECT count(*) FROM customers GROUP BY;

-- Extended types come back as text: dates, decimals.
SELECT CAST('2024-05-06' AS DATE) AS day, count(*) FROM customers GROUP BY 1;
