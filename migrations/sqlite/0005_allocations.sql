-- 0005: allocations. A row says the live object (resource, namespace, name)
-- owns value of kind (e.g. a Service's cluster IP or node port); the primary
-- key makes a value ownable once. Rows are written by the store's writer in
-- the same transaction as the object, so a crash never leaks or doubles one.
-- See schema/sqlite.sql for the documented whole.
CREATE TABLE sk_allocation (
    kind      TEXT NOT NULL,
    value     TEXT NOT NULL,
    resource  TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name      TEXT NOT NULL,
    PRIMARY KEY (kind, value)
) WITHOUT ROWID;
CREATE INDEX sk_allocation_owner ON sk_allocation (resource, namespace, name);

-- Services written before this migration own what they hold: their cluster
-- IPs and node ports are recorded now, so nothing is handed out twice.
-- (Stored values that do not parse are skipped: read as '{}'.)
WITH s AS (
    SELECT c.resource, c.namespace, c.name,
           CASE WHEN json_valid(h.value) THEN h.value ELSE '{}' END AS v
    FROM sk_current c JOIN sk_history h ON h.rev = c.rev
    WHERE c.resource = 'services')
INSERT OR IGNORE INTO sk_allocation (kind, value, resource, namespace, name)
SELECT 'clusterip', json_extract(v, '$.spec.clusterIP'), resource, namespace, name FROM s
WHERE coalesce(json_extract(v, '$.spec.type'), 'ClusterIP') <> 'ExternalName'
  AND json_type(v, '$.spec.clusterIP') = 'text'
  AND json_extract(v, '$.spec.clusterIP') NOT IN ('', 'None');
WITH s AS (
    SELECT c.resource, c.namespace, c.name,
           CASE WHEN json_valid(h.value) THEN h.value ELSE '{}' END AS v
    FROM sk_current c JOIN sk_history h ON h.rev = c.rev
    WHERE c.resource = 'services'),
np AS (
    SELECT s.resource, s.namespace, s.name,
           CASE WHEN p.type = 'object' AND json_type(p.value, '$.nodePort') = 'integer'
                THEN json_extract(p.value, '$.nodePort') END AS port
    FROM s, json_each(s.v, '$.spec.ports') p
    WHERE json_extract(s.v, '$.spec.type') IN ('NodePort', 'LoadBalancer')
    UNION ALL
    SELECT resource, namespace, name,
           CASE WHEN json_type(v, '$.spec.healthCheckNodePort') = 'integer'
                THEN json_extract(v, '$.spec.healthCheckNodePort') END
    FROM s WHERE json_extract(v, '$.spec.type') = 'LoadBalancer')
INSERT OR IGNORE INTO sk_allocation (kind, value, resource, namespace, name)
SELECT 'nodeport', CAST(port AS TEXT), resource, namespace, name FROM np WHERE port > 0;
