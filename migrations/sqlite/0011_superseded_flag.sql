-- 0011: what is current is data written with it. Each sk_history and sk_kv
-- row gets a flag, superseded, set by the write that appends a newer row of
-- its key, in the same transaction; compaction only ever removes superseded
-- rows and tombstones, so a key's newest row stays unflagged. The views for
-- people (sk_objects, sk_kv_latest) filter on the flag instead of looking for
-- a newer row of each row they read (an anti-join): they cost one pass over
-- the table whatever its size and whatever the planner believes about it.
-- See schema/sqlite.sql for the documented whole; bench/README.md, "Views at
-- 100,000 objects", for the measurements.
ALTER TABLE sk_history ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0 CHECK (superseded IN (0, 1));
ALTER TABLE sk_kv ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0 CHECK (superseded IN (0, 1));
-- Every row but its key's newest, by one sorted pass over each key index.
UPDATE sk_history SET superseded = 1 WHERE rev IN (
    SELECT rev FROM (SELECT rev, lead(rev) OVER (PARTITION BY resource, namespace, name ORDER BY rev) AS next
                     FROM sk_history) WHERE next IS NOT NULL);
UPDATE sk_kv SET superseded = 1 WHERE rowid IN (
    SELECT r FROM (SELECT rowid AS r, lead(rev) OVER (PARTITION BY key ORDER BY rev) AS next
                   FROM sk_kv) WHERE next IS NOT NULL);
-- SQLite has no CREATE OR REPLACE VIEW; a view people built on these ones
-- names them by name and survives the drop.
DROP VIEW sk_objects;
CREATE VIEW sk_objects AS
    SELECT h.resource, h.namespace, h.name, h.rev AS resource_version, h.value AS object
    FROM sk_history h
    WHERE h.deleted = 0 AND h.superseded = 0;
DROP VIEW sk_kv_latest;
DROP VIEW sk_kv_history;
CREATE VIEW sk_kv_history AS
    SELECT k.rev, k.sub, k.key, t.value AS key_text, k.create_rev, k.version, k.lease, k.deleted,
           k.value AS value_bytes,
           CASE WHEN x.value IS NOT NULL AND instr(json_extract(s.value, '$[0]'), '.') > 0
                THEN json_extract(s.value, '$[0]') END AS "group",
           CASE WHEN x.value IS NULL THEN NULL
                WHEN instr(json_extract(s.value, '$[0]'), '.') > 0 THEN json_extract(s.value, '$[1]')
                WHEN x.value = 3 THEN CASE json_extract(s.value, '$[1]') WHEN 'specs' THEN 'services' ELSE 'endpoints' END
                ELSE CASE json_extract(s.value, '$[0]') WHEN 'minions' THEN 'nodes'
                                                        WHEN 'controllers' THEN 'replicationcontrollers'
                                                        WHEN 'ingress' THEN 'ingresses'
                                                        ELSE json_extract(s.value, '$[0]') END END AS resource,
           CASE WHEN json_array_length(s.value) = x.value + 1
                THEN json_extract(s.value, '$[' || (x.value - 1) || ']') END AS namespace,
           CASE WHEN x.value IS NOT NULL THEN json_extract(s.value, '$[#-1]') END AS name,
           CASE WHEN substr(k.value, 1, 4) = x'6b387300' THEN 'protobuf'
                WHEN v.value IS NOT NULL THEN 'json' ELSE 'bytes' END AS encoding,
           v.value AS value_json, k.superseded
    FROM sk_kv k
    JOIN json_each(json_array(CASE WHEN instr(k.key, x'00') = 0
                  AND (CAST(k.key AS TEXT) NOT GLOB '*[^' || char(1) || '-' || char(127) || ']*'
                       OR (WITH RECURSIVE c(i, ok) AS (
                               SELECT 1, 1
                               UNION ALL
                               SELECT i + 1, CAST(char(unicode(substr(CAST(k.key AS TEXT), i, 1))) AS BLOB)
                                             = CAST(substr(CAST(k.key AS TEXT), i, 1) AS BLOB)
                               FROM c WHERE ok AND i <= length(CAST(k.key AS TEXT)))
                           SELECT min(ok) FROM c))
             THEN CAST(k.key AS TEXT) END)) AS t
    JOIN json_each(json_array(CASE WHEN substr(t.value, 1, 10) = '/registry/'
             THEN '[' || replace(json_quote(substr(t.value, 11)), '/', '","') || ']' END)) AS s
    JOIN json_each(json_array(CASE WHEN instr(json_extract(s.value, '$[0]'), '.') > 0 THEN 3
                                   WHEN json_extract(s.value, '$[0]') = 'services'
                                        AND json_extract(s.value, '$[1]') IN ('specs', 'endpoints')
                                        AND json_array_length(s.value) > 2 THEN 3
                                   ELSE 2 END)) AS x0
    JOIN json_each(json_array(CASE WHEN json_array_length(s.value) - x0.value IN (0, 1)
                                        AND substr(t.value, 11, 1) NOT IN ('', '/')
                                        AND substr(t.value, -1) <> '/'
                                        AND instr(substr(t.value, 11), '//') = 0
                                   THEN x0.value END)) AS x
    JOIN json_each(json_array(CASE WHEN substr(k.value, 1, 1) = x'7b' AND instr(k.value, x'00') = 0
                  AND (CAST(k.value AS TEXT) NOT GLOB '*[^' || char(1) || '-' || char(127) || ']*'
                       OR (WITH RECURSIVE c(i, ok) AS (
                               SELECT 1, 1
                               UNION ALL
                               SELECT i + 1, CAST(char(unicode(substr(CAST(k.value AS TEXT), i, 1))) AS BLOB)
                                             = CAST(substr(CAST(k.value AS TEXT), i, 1) AS BLOB)
                               FROM c WHERE ok AND i <= length(CAST(k.value AS TEXT)))
                           SELECT min(ok) FROM c))
             THEN CAST(k.value AS TEXT) END)) AS v;;

CREATE VIEW sk_kv_latest AS
    SELECT key, key_text, rev, create_rev, version, lease, value_bytes,
           "group", resource, namespace, name, encoding, value_json
    FROM sk_kv_history h
    WHERE deleted = 0 AND superseded = 0;
