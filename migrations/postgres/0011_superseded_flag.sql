-- 0011: what is current is data written with it. Each sk_history and sk_kv
-- row gets a flag, superseded, set by the write that appends a newer row of
-- its key, in the same transaction; compaction only ever removes superseded
-- rows and tombstones, so a key's newest row stays unflagged. The views for
-- people (sk_objects, sk_kv_latest) filter on the flag instead of looking for
-- a newer row of each row they read: as an anti-join, that plan depended on
-- the statistics, and with none (after a crash restart) sk_objects became a
-- nested loop that did not finish in 60 s on a few tens of thousands of rows
-- (issue 45). A filter is one pass over the table whatever the planner
-- believes. See schema/postgres.sql for the documented whole; bench/README.md,
-- "Views at 100,000 objects", for the measurements.
-- The views are replaced in place (same columns; sk_kv_history gains one at
-- the end), so views people built on them survive.
ALTER TABLE sk_history ADD COLUMN superseded boolean NOT NULL DEFAULT false;
ALTER TABLE sk_kv ADD COLUMN superseded boolean NOT NULL DEFAULT false;
-- Every row but its key's newest, found by one sorted pass and updated by
-- its tuple id: no join whose plan the statistics choose.
UPDATE sk_history SET superseded = true WHERE ctid = ANY (ARRAY(
    SELECT t FROM (SELECT ctid AS t, lead(rev) OVER (PARTITION BY resource, namespace, name ORDER BY rev) AS next
                   FROM sk_history) s WHERE next IS NOT NULL));
UPDATE sk_kv SET superseded = true WHERE ctid = ANY (ARRAY(
    SELECT t FROM (SELECT ctid AS t, lead(rev) OVER (PARTITION BY key ORDER BY rev) AS next
                   FROM sk_kv) s WHERE next IS NOT NULL));
CREATE OR REPLACE VIEW sk_objects AS
    SELECT h.resource, h.namespace, h.name, h.rev AS resource_version, h.value::jsonb AS object
    FROM sk_history h
    WHERE NOT h.deleted AND NOT h.superseded;
CREATE OR REPLACE VIEW sk_kv_history AS
    SELECT k.rev, k.sub, k.key,
           CASE WHEN ku.ok IS NOT NULL THEN convert_from(k.key, 'UTF8') END AS key_text,
           k.create_rev, k.version, k.lease, k.deleted, k.value AS value_bytes,
           CASE WHEN d.ok AND strpos(s.a[1], '.') > 0 THEN s.a[1] END AS "group",
           CASE WHEN NOT d.ok THEN NULL
                WHEN strpos(s.a[1], '.') > 0 THEN s.a[2]
                WHEN d.x = 3 THEN CASE s.a[2] WHEN 'specs' THEN 'services' ELSE 'endpoints' END
                WHEN s.a[1] = 'minions' THEN 'nodes'
                WHEN s.a[1] = 'controllers' THEN 'replicationcontrollers'
                WHEN s.a[1] = 'ingress' THEN 'ingresses'
                ELSE s.a[1] END AS resource,
           CASE WHEN d.ok AND cardinality(s.a) = d.x + 1 THEN s.a[d.x] END AS namespace,
           CASE WHEN d.ok THEN s.a[cardinality(s.a)] END AS name,
           CASE WHEN substring(k.value FROM 1 FOR 4) = 'k8s\000'::bytea THEN 'protobuf'
                WHEN vu.ok IS NOT NULL THEN 'json' ELSE 'bytes' END AS encoding,
           CASE WHEN vu.ok IS NOT NULL THEN convert_from(k.value, 'UTF8') END AS value_json,
           k.superseded
    FROM sk_kv k
    CROSS JOIN LATERAL (SELECT regexp_match(encode(k.key, 'hex'),
                                            '^(?:0[1-9a-f]|[1-7][0-9a-f]|(?:c[2-9a-f]|d[0-9a-f])[89ab][0-9a-f]|(?:e0[ab][0-9a-f]|e[1-9a-cef][89ab][0-9a-f]|ed[89][0-9a-f])[89ab][0-9a-f]|(?:f0[9ab][0-9a-f]|f[1-3][89ab][0-9a-f]|f48[0-9a-f])[89ab][0-9a-f][89ab][0-9a-f])*$') AS ok OFFSET 0) AS ku
    CROSS JOIN LATERAL (SELECT string_to_array(CASE WHEN ku.ok IS NOT NULL
                                                    AND substring(k.key FROM 1 FOR 10) = '/registry/'::bytea
                                               THEN convert_from(substring(k.key FROM 11), 'UTF8') END,
                                               '/') AS a OFFSET 0) AS s
    CROSS JOIN LATERAL (SELECT CASE WHEN strpos(s.a[1], '.') > 0 THEN 3
                                    WHEN s.a[1] = 'services' AND s.a[2] IN ('specs', 'endpoints') AND cardinality(s.a) > 2 THEN 3
                                    ELSE 2 END AS x) AS dx
    CROSS JOIN LATERAL (SELECT dx.x, coalesce(array_position(s.a, '') IS NULL
                                              AND cardinality(s.a) - dx.x IN (0, 1), false) AS ok) AS d
    CROSS JOIN LATERAL (SELECT regexp_match(CASE WHEN substring(k.value FROM 1 FOR 1) = '{'::bytea
                                                 THEN encode(k.value, 'hex') END,
                                            '^(?:0[1-9a-f]|[1-7][0-9a-f]|(?:c[2-9a-f]|d[0-9a-f])[89ab][0-9a-f]|(?:e0[ab][0-9a-f]|e[1-9a-cef][89ab][0-9a-f]|ed[89][0-9a-f])[89ab][0-9a-f]|(?:f0[9ab][0-9a-f]|f[1-3][89ab][0-9a-f]|f48[0-9a-f])[89ab][0-9a-f][89ab][0-9a-f])*$') AS ok OFFSET 0) AS vu;;

CREATE OR REPLACE VIEW sk_kv_latest AS
    SELECT h.key, h.key_text, h.rev, h.create_rev, h.version, h.lease, h.value_bytes,
           h."group", h.resource, h.namespace, h.name, h.encoding, h.value_json
    FROM sk_kv_history h
    WHERE NOT h.deleted AND NOT h.superseded;
