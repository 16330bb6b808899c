-- 0008: views that keep the etcd keyspace (sk_kv) inspectable with plain
-- SQL: sk_kv_history decodes every row's key in kube-apiserver's layout
-- (/registry/[<group>/]<resource>/[<namespace>/]<name>) and classifies its
-- value; sk_kv_latest is the live version of each key. sqlkube itself does
-- not read them. See schema/postgres.sql for what the columns mean and the
-- decoding rules.
CREATE VIEW sk_kv_history AS
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
           CASE WHEN vu.ok IS NOT NULL THEN convert_from(k.value, 'UTF8') END AS value_json
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
                                            '^(?:0[1-9a-f]|[1-7][0-9a-f]|(?:c[2-9a-f]|d[0-9a-f])[89ab][0-9a-f]|(?:e0[ab][0-9a-f]|e[1-9a-cef][89ab][0-9a-f]|ed[89][0-9a-f])[89ab][0-9a-f]|(?:f0[9ab][0-9a-f]|f[1-3][89ab][0-9a-f]|f48[0-9a-f])[89ab][0-9a-f][89ab][0-9a-f])*$') AS ok OFFSET 0) AS vu;

CREATE VIEW sk_kv_latest AS
    SELECT h.key, h.key_text, h.rev, h.create_rev, h.version, h.lease, h.value_bytes,
           h."group", h.resource, h.namespace, h.name, h.encoding, h.value_json
    FROM sk_kv_history h
    WHERE NOT h.deleted
      AND NOT EXISTS (SELECT 1 FROM sk_kv n WHERE n.key = h.key AND n.rev > h.rev OFFSET 0);
