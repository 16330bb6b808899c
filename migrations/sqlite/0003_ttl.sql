-- 0003: object expiry. A row says the key's object (at revision rev)
-- expires at expires_at_ms (ms since the Unix epoch); it is written in the
-- same transaction as the object, so a restart neither forgets nor extends
-- an expiry. See schema/sqlite.sql for the documented whole.
CREATE TABLE sk_ttl (
    resource      TEXT    NOT NULL,
    namespace     TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    rev           INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (resource, namespace, name)
) WITHOUT ROWID;
CREATE INDEX sk_ttl_expiry ON sk_ttl (expires_at_ms);
CREATE VIEW sk_expiring AS
    SELECT resource, namespace, name, rev AS resource_version,
           strftime('%Y-%m-%dT%H:%M:%fZ', expires_at_ms / 1000.0, 'unixepoch') AS expires_at
    FROM sk_ttl;
