-- 0008: views that keep the etcd keyspace (sk_kv) inspectable with plain
-- SQL: sk_kv_history decodes every row's key in kube-apiserver's layout
-- (/registry/[<group>/]<resource>/[<namespace>/]<name>) and classifies its
-- value; sk_kv_latest is the live version of each key. sqlkube itself does
-- not read them. See schema/sqlite.sql for what the columns mean and the
-- decoding rules.
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
           v.value AS value_json
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
             THEN CAST(k.value AS TEXT) END)) AS v;

CREATE VIEW sk_kv_latest AS
    SELECT key, key_text, rev, create_rev, version, lease, value_bytes,
           "group", resource, namespace, name, encoding, value_json
    FROM sk_kv_history h
    WHERE deleted = 0
      AND NOT EXISTS (SELECT 1 FROM sk_kv n WHERE n.key = h.key AND n.rev > h.rev);
