-- 0014: the etcd keyspace decoded once, not at every read (issue 38, item 1).
-- sk_kv_doc holds, for each row of sk_kv, what its key and value say in
-- kube-apiserver's layout: the decoded key (key_text, "group", resource,
-- namespace, name), the value's encoding ('protobuf', 'json', 'encrypted',
-- 'bytes'; NULL for a tombstone), its kind and apiVersion, and the object as
-- jsonb (a protobuf value decoded by sqlkube's own codec; a JSON value as it
-- is). A follower in each server fills it off the commit path, within
-- moments of each commit (ctl/kvdecode.c), so puts pay nothing for it, and
-- decodes the rows that were there before this migration on its first pass;
-- instances sharing the database skip what another decoded already. A
-- compaction's deleted rows take their docs with them (the statement
-- trigger). The views become plain joins over the two tables, replaced in
-- place: their columns keep their places, types and collations (byte
-- order, "C", for the decoded names; value_json stays text,
-- now for decoded protobuf values too), and kind, api_version and doc
-- (jsonb, for doc->'spec'->>'replicas') come last, so views people built
-- on them survive.
CREATE TABLE sk_kv_doc (
    rev         bigint  NOT NULL,
    sub         integer NOT NULL,
    key_text    text COLLATE "C",
    "group"     text COLLATE "C",
    resource    text COLLATE "C",
    namespace   text COLLATE "C",
    name        text COLLATE "C",
    encoding    text,
    kind        text COLLATE "C",
    api_version text COLLATE "C",
    doc         jsonb,
    PRIMARY KEY (rev, sub)
);
CREATE INDEX sk_kv_doc_object ON sk_kv_doc (resource, namespace, name);
CREATE FUNCTION sk_kv_doc_compacted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM sk_kv_doc d USING gone g WHERE d.rev = g.rev AND d.sub = g.sub;
    RETURN NULL;
END
$$;
CREATE TRIGGER sk_kv_doc_compacted AFTER DELETE ON sk_kv REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION sk_kv_doc_compacted();
CREATE OR REPLACE VIEW sk_kv_history AS
    SELECT k.rev, k.sub, k.key, d.key_text, k.create_rev, k.version, k.lease, k.deleted,
           k.value AS value_bytes, d."group", d.resource, d.namespace, d.name, d.encoding,
           d.doc::text COLLATE "C" AS value_json, k.superseded, d.kind, d.api_version, d.doc
    FROM sk_kv k LEFT JOIN sk_kv_doc d ON d.rev = k.rev AND d.sub = k.sub;
CREATE OR REPLACE VIEW sk_kv_latest AS
    SELECT h.key, h.key_text, h.rev, h.create_rev, h.version, h.lease, h.value_bytes,
           h."group", h.resource, h.namespace, h.name, h.encoding, h.value_json,
           h.kind, h.api_version, h.doc
    FROM sk_kv_history h
    WHERE NOT h.deleted AND NOT h.superseded;
