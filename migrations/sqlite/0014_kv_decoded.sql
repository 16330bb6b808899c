-- 0014: the etcd keyspace decoded once, not at every read (issue 38, item 1).
-- sk_kv_doc holds, for each row of sk_kv, what its key and value say in
-- kube-apiserver's layout: the decoded key (key_text, "group", resource,
-- namespace, name), the value's encoding ('protobuf', 'json', 'encrypted',
-- 'bytes'; NULL for a tombstone), its kind and apiVersion, and the object as
-- JSON text (a protobuf value decoded by sqlkube's own codec; a JSON value
-- as it is). A follower in the server fills it off the commit path, within
-- moments of each commit (ctl/kvdecode.c), so puts pay nothing for it, and
-- decodes the rows that were there before this migration on its first pass.
-- A compacted row takes its doc with it (the trigger). The views become
-- plain joins over the two tables; their columns stay in place, with kind,
-- api_version and doc added at the end, so views people built on them
-- (SQLite resolves them by name) keep working.
CREATE TABLE sk_kv_doc (
    rev         INTEGER NOT NULL,
    sub         INTEGER NOT NULL,
    key_text    TEXT,
    "group"     TEXT,
    resource    TEXT,
    namespace   TEXT,
    name        TEXT,
    encoding    TEXT,
    kind        TEXT,
    api_version TEXT,
    doc         TEXT,
    PRIMARY KEY (rev, sub)
) WITHOUT ROWID;
CREATE INDEX sk_kv_doc_object ON sk_kv_doc (resource, namespace, name);
CREATE TRIGGER sk_kv_doc_compacted AFTER DELETE ON sk_kv BEGIN
    DELETE FROM sk_kv_doc WHERE rev = old.rev AND sub = old.sub;
END;
DROP VIEW sk_kv_latest;
DROP VIEW sk_kv_history;
CREATE VIEW sk_kv_history AS
    SELECT k.rev, k.sub, k.key, d.key_text, k.create_rev, k.version, k.lease, k.deleted,
           k.value AS value_bytes, d."group", d.resource, d.namespace, d.name, d.encoding,
           d.doc AS value_json, k.superseded, d.kind, d.api_version, d.doc
    FROM sk_kv k LEFT JOIN sk_kv_doc d ON d.rev = k.rev AND d.sub = k.sub;
CREATE VIEW sk_kv_latest AS
    SELECT key, key_text, rev, create_rev, version, lease, value_bytes,
           "group", resource, namespace, name, encoding, value_json, kind, api_version, doc
    FROM sk_kv_history
    WHERE deleted = 0 AND superseded = 0;
