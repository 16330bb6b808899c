-- 0005: allocations. A row says the live object (resource, namespace, name)
-- owns value of kind (e.g. a Service's cluster IP or node port); the primary
-- key makes a value ownable once. Rows are written by the store's writer in
-- the same transaction as the object, so a crash never leaks or doubles one.
-- See schema/postgres.sql for the documented whole.
CREATE TABLE sk_allocation (
    kind      text COLLATE "C" NOT NULL,
    value     text COLLATE "C" NOT NULL,
    resource  text COLLATE "C" NOT NULL,
    namespace text COLLATE "C" NOT NULL,
    name      text COLLATE "C" NOT NULL,
    PRIMARY KEY (kind, value)
);
CREATE INDEX sk_allocation_owner ON sk_allocation (resource, namespace, name);

-- Services written before this migration own what they hold: their cluster
-- IPs and node ports are recorded now, so nothing is handed out twice.
-- (Stored values that do not parse are skipped.)
DO $$
DECLARE
    r record;
    j jsonb;
    t text;
BEGIN
    FOR r IN SELECT c.resource, c.namespace, c.name, h.value
             FROM sk_current c JOIN sk_history h ON h.rev = c.rev
             WHERE c.resource = 'services' LOOP
        BEGIN
            j := r.value::jsonb;
        EXCEPTION WHEN others THEN
            CONTINUE;
        END;
        IF jsonb_typeof(j -> 'spec') IS DISTINCT FROM 'object' THEN
            CONTINUE;
        END IF;
        t := coalesce(j #>> '{spec,type}', 'ClusterIP');
        IF t <> 'ExternalName' AND jsonb_typeof(j #> '{spec,clusterIP}') = 'string'
           AND j #>> '{spec,clusterIP}' NOT IN ('', 'None') THEN
            INSERT INTO sk_allocation (kind, value, resource, namespace, name)
            VALUES ('clusterip', j #>> '{spec,clusterIP}', r.resource, r.namespace, r.name)
            ON CONFLICT DO NOTHING;
        END IF;
        IF t IN ('NodePort', 'LoadBalancer') AND jsonb_typeof(j #> '{spec,ports}') = 'array' THEN
            INSERT INTO sk_allocation (kind, value, resource, namespace, name)
            SELECT 'nodeport', p ->> 'nodePort', r.resource, r.namespace, r.name
            FROM jsonb_array_elements(j #> '{spec,ports}') p
            WHERE jsonb_typeof(p) = 'object' AND jsonb_typeof(p -> 'nodePort') = 'number'
              AND (p ->> 'nodePort')::numeric > 0
            ON CONFLICT DO NOTHING;
        END IF;
        IF t = 'LoadBalancer' AND jsonb_typeof(j #> '{spec,healthCheckNodePort}') = 'number'
           AND (j #>> '{spec,healthCheckNodePort}')::numeric > 0 THEN
            INSERT INTO sk_allocation (kind, value, resource, namespace, name)
            VALUES ('nodeport', j #>> '{spec,healthCheckNodePort}', r.resource, r.namespace,
                    r.name)
            ON CONFLICT DO NOTHING;
        END IF;
    END LOOP;
END
$$;
