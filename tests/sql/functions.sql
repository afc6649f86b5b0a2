-- Scalar functions and casts through DataFusion.
CREATE TABLE words (id BIGINT, w TEXT, n BIGINT, x DOUBLE PRECISION, PRIMARY KEY (id));
INSERT INTO words VALUES (1, 'apple', 3, 2.5), (2, 'Banana', -7, 9), (3, 'cherry', 12, 0.125);

SELECT id, upper(w), lower(w), length(w), substr(w, 2, 3) FROM words GROUP BY id, w ORDER BY id;
SELECT md5(w), lpad(w, 8, '*'), rpad(w, 7, '.') FROM words ORDER BY id LIMIT 2 OFFSET 0;
SELECT concat(w, '-', n) AS c, w || '!' AS bang, replace(w, 'a', 'A') AS r FROM words ORDER BY id;
SELECT abs(n), n % 5 AS m, power(n, 2) AS p, round(x, 1) AS r, sqrt(x) AS s FROM words ORDER BY id;
SELECT CAST(n AS TEXT) AS t, CAST('42' AS BIGINT) + n AS s, CAST(x * 2 AS BIGINT) AS i, n::double precision / 2 AS half FROM words GROUP BY n, x ORDER BY n;
SELECT CAST(w AS BIGINT) FROM words GROUP BY w;
SELECT w FROM words WHERE w LIKE '%an%' OR starts_with(w, 'ch') ORDER BY w;
SELECT coalesce(NULL, w) AS c, nullif(n, 3) AS z, CASE WHEN n > 0 THEN 'pos' ELSE 'neg' END AS sign FROM words ORDER BY id;
SELECT max(length(w)) AS longest, string_agg(w, ',' ORDER BY w) AS all_words FROM words;
