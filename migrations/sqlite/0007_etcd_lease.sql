-- 0007: etcd leases (the gRPC face's Lease service). A lease is its id, the
-- TTL it was granted (seconds) and the absolute time it expires
-- (expires_at_ms, ms since the Unix epoch), written in the writer's
-- transaction like the keys, so a restart keeps the clock running. The keys
-- attached to a lease are the live sk_kv rows naming it (sk_kv_lease finds
-- them). See schema/sqlite.sql for the documented whole.
CREATE TABLE sk_lease (
    id            INTEGER PRIMARY KEY,
    ttl           INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
);
CREATE INDEX sk_lease_expiry ON sk_lease (expires_at_ms);
CREATE INDEX sk_kv_lease ON sk_kv (lease) WHERE lease <> 0;
