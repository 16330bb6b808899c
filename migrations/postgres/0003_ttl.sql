-- 0003: object expiry. A row says the key's object (at revision rev)
-- expires at expires_at_ms (ms since the Unix epoch); it is written in the
-- same transaction as the object, so a restart neither forgets nor extends
-- an expiry. See schema/postgres.sql for the documented whole.
CREATE TABLE sk_ttl (
    resource      text COLLATE "C" NOT NULL,
    namespace     text COLLATE "C" NOT NULL,
    name          text COLLATE "C" NOT NULL,
    rev           bigint NOT NULL,
    expires_at_ms bigint NOT NULL,
    PRIMARY KEY (resource, namespace, name)
);
CREATE INDEX sk_ttl_expiry ON sk_ttl (expires_at_ms);
CREATE VIEW sk_expiring AS
    SELECT resource, namespace, name, rev AS resource_version,
           to_timestamp(expires_at_ms / 1000.0) AS expires_at
    FROM sk_ttl;
