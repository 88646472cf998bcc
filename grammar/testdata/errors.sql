-- Statements that must fail, each followed by `=> <exact message>`.
-- Wording follows the real service (ZetaSQL's parser messages with BigQuery's
-- "at [line:col]" suffix). One case per paragraph.

SELECT * FRO bad
=> Syntax error: Expected end of input but got identifier "FRO" at [1:10]

SELECT 1 +
=> Syntax error: Unexpected end of script at [1:11]

SELECT a FROM
=> Syntax error: Unexpected end of script at [1:14]

SELECT FROM t
=> Syntax error: Unexpected keyword FROM at [1:8]

SELECT 1 2
=> Syntax error: Expected end of input but got integer literal "2" at [1:10]

SELECT foo bar baz
=> Syntax error: Expected end of input but got identifier "baz" at [1:16]

SELECT 'abc
=> Syntax error: Unclosed string literal at [1:8]

SELECT """abc
=> Syntax error: Unclosed triple-quoted string literal at [1:8]

SELECT `abc
=> Syntax error: Unclosed identifier literal at [1:8]

SELECT 1 /* never closed
=> Syntax error: Unclosed comment at [1:10]

SELECT * FROM 'proj.ds.t'
=> Syntax error: Unexpected string literal 'proj.ds.t' at [1:15]

SELECT id % 2 FROM t
=> Syntax error: Expected end of input but got "%" at [1:11]

SELECT MOD(id % 2) FROM t
=> Syntax error: Expected ")" but got "%" at [1:15]

SELECT * FROM (SELECT * EXCLUDE(x) FROM t)
=> Syntax error: Expected ")" but got keyword EXCLUDE at [1:25]

SELECT SUM(x) FILTER (WHERE x > 0) FROM t
=> Syntax error: Expected end of input but got "(" at [1:22]

SELECT (1
=> Syntax error: Expected ")" but got end of script at [1:10]

SELECT CAST(1 AS) FROM t
=> Syntax error: Expected type but got ")" at [1:17]

SELECT 1 UNION SELECT 2
=> Syntax error: Expected keyword ALL or keyword DISTINCT but got keyword SELECT at [1:16]

-- Mixing set operations needs parentheses (recorded from the real service).
SELECT 1
UNION ALL
SELECT 2
UNION DISTINCT
SELECT 3
=> Syntax error: Different set operations cannot be used in the same query without using parentheses for grouping at [5:1]

SELECT 1 AS select
=> Syntax error: Unexpected keyword SELECT at [1:13]

SELECT a FROM t WHERE
=> Syntax error: Unexpected end of script at [1:22]

SELECT 'a\q'
=> Syntax error: Illegal escape sequence: \q at [1:10]

SELECT b'\u0041'
=> Syntax error: Illegal escape sequence: Unicode escape sequence \u cannot be used in bytes literals at [1:10]

SELECT "\x4"
=> Syntax error: Illegal escape sequence: Hex escape must be followed by 2 hex digits but saw: \x4 at [1:9]

SELECT 1 !
=> Syntax error: Expected end of input but got "!" at [1:10]

SELECT 1;
SELECT 2 FROM
=> Syntax error: Unexpected end of script at [2:14]

BEGIN
  SELECT 1
END
=> Syntax error: Expected ";" but got keyword END at [3:1]

IF x THEN SELECT 1; END
=> Syntax error: Expected keyword IF but got end of script at [1:24]

FOO
=> Syntax error: Unexpected identifier "FOO" at [1:1]

CREATE TABLE t (a INT64,, b STRING)
=> Syntax error: Unexpected "," at [1:25]

DROP THING x
=> Syntax error: Unexpected identifier "THING" at [1:6]

INSERT INTO t (a) VALUE (1)
=> Syntax error: Unexpected keyword VALUE at [1:19]

SELECT ARRAY<INT64 [1]
=> Syntax error: Expected ">" but got "[" at [1:20]

SELECT x FROM t ORDER x
=> Syntax error: Expected keyword BY but got identifier "x" at [1:23]

-- Columns are reported with tabs expanded to 8-column stops.
SELECT	1 FROM	WHERE
=> Syntax error: Unexpected keyword WHERE at [2:17]

-- SQL-style doubled quotes are two adjacent literals, which need a separator.
SELECT 'It''s'
=> Syntax error: concatenated string literals must be separated by whitespace or comments at [2:12]

INSERT t VALUES (1, CONCAT(DEFAULT, 'x'))
=> Syntax error: Unexpected keyword DEFAULT at [1:28]

INSERT t (a, b) SELECT 1, DEFAULT
=> Syntax error: Unexpected keyword DEFAULT at [1:27]

SELECT DEFAULT
=> Syntax error: Unexpected keyword DEFAULT at [1:8]

INSERT t VALUES (DEFAULT, (DEFAULT))
=> Syntax error: Unexpected keyword DEFAULT at [1:28]

UPDATE t SET a = 1 WHERE b = DEFAULT
=> Syntax error: Unexpected keyword DEFAULT at [1:30]
