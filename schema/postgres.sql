-- schema/postgres.sql - the whole current PostgreSQL schema of sqlkube,
-- documented.
--
-- This file is documentation, not the source of truth: the binary creates
-- the schema by applying migrations/postgres/NNNN_*.sql in order, in one
-- transaction under an advisory lock (so concurrent starts migrate once),
-- recording each in sk_migrations. tests/support/schema_check.sh proves that
-- loading this file into an empty database gives exactly the schema that
-- `sqlkube migrate` gives; when a migration is added, update this file to
-- the resulting whole. Documentation lives in -- comments only: COMMENT ON
-- would itself be schema the migrations do not create.
--
-- Model. Every create, update and delete appends one row to sk_history under
-- the next global revision (1, 2, 3, ... without gaps); a delete appends a
-- tombstone. An object's resourceVersion is the revision of the row that
-- wrote it. A key's live version is its newest sk_history row, unless that
-- row is a tombstone (one backward probe of sk_history_key; migration 0009
-- dropped the separate index of live keys, sk_current, that each write used
-- to update as well). That newest row is also the one row of its key whose
-- superseded flag is clear (migration 0011): the write that appends a newer
-- row sets it on the old one, so the views for people read what is current
-- as a column, not by a search. A key is (resource, namespace, name);
-- cluster-scoped objects use namespace ''.
-- resource is the plural for the core group ("pods") and "<plural>.<group>"
-- for other groups ("deployments.apps"), as kube-apiserver keys its storage.
--
-- Key columns are COLLATE "C": byte order, whatever the database locale, and
-- the same order SQLite uses, so keys, pages and continue tokens mean the
-- same thing on both backends (and "C" comparisons are the cheapest).
--
-- Besides tables, sqlkube uses two server features: the advisory lock
-- 8316861436344295796 (held by migrations) and the notification channel
-- sqlkube_commit (one NOTIFY per committed write transaction, payload its
-- last revision).

-- Which migrations have been applied. Created by the migrator itself, before
-- migration 0001, so that it exists to be read.
CREATE TABLE sk_migrations (
    version    integer PRIMARY KEY,                -- NNNN of migrations/postgres/NNNN_name.sql
    name       text NOT NULL,                      -- "NNNN_name", the file name without .sql
    applied_at timestamptz NOT NULL DEFAULT now()  -- when it was applied
);

-- Migration 0001_initial (and 0002_compaction_claim: two columns of
-- sk_revision).

-- Process-wide settings. Holds 'token_secret': 64 hex digits (32 random
-- bytes) created at the first migration, the key that signs list continue
-- tokens; it must survive restarts or outstanding tokens stop verifying.
CREATE TABLE sk_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);

-- The revision counter and the compaction state: exactly one row (id = 1).
--   rev:         the last committed revision (0 in an empty store). A writer
--                takes this row's lock (SELECT ... FOR UPDATE) for its whole
--                transaction, so writers in every process take turns and
--                revisions commit in order, without gaps.
--   compact_rev: history older than this has been compacted away; reads at
--                an older revision fail with Expired (410). Compaction
--                advances it batch by batch, as each prefix is complete, in
--                the statement that deletes the batch, so no reader sees a
--                row gone while its revision still reads as valid.
--   compact_claimed_at, compact_claimed_by (migration 0002): the last claim
--                of a compaction pass, in milliseconds since the Unix epoch
--                by the server's clock (0: never), and who made it
--                ("host:pid"). Each instance's periodic pass claims with a
--                conditional UPDATE that succeeds only if the last claim is
--                at least an interval old, so of several instances one
--                compacts per interval; a manual `sqlkube compact` records
--                its claim unconditionally.
CREATE TABLE sk_revision (
    id          integer PRIMARY KEY CHECK (id = 1),
    rev         bigint NOT NULL,
    compact_rev bigint NOT NULL,
    compact_claimed_at bigint NOT NULL DEFAULT 0,
    compact_claimed_by text NOT NULL DEFAULT '',
    kv_compact_rev bigint NOT NULL DEFAULT 0
);
INSERT INTO sk_revision (id, rev, compact_rev) VALUES (1, 0, 0);

-- Every version of every object, one row per revision.
--   rev:        the revision this write got; the primary key, so the watch
--               feed (rev > N) and compaction walk it as a range scan.
--   uid:        metadata.uid of the object.
--   create_rev: revision of the write that created the object.
--   prev_rev:   revision of the version this write replaced, 0 for a create.
--   deleted:    true for a tombstone, whose value is the last version of the
--               object re-stamped with the delete's revision (what a watch
--               DELETED event carries).
--   value:      the object as JSON text, stored as sent (text, not jsonb:
--               sqlkube serves these bytes back verbatim and never queries
--               inside them); metadata.resourceVersion = rev.
--   superseded: (migration 0011) true once a newer row of the key exists:
--               set by the write that appends that row, in its transaction
--               (an UPDATE of an unindexed column). So each key has at most
--               one row with superseded false, its newest.
-- Compaction deletes versions superseded at or before the compact revision
-- and tombstones at or before it.
CREATE TABLE sk_history (
    rev        bigint PRIMARY KEY,
    resource   text COLLATE "C" NOT NULL,
    namespace  text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL,
    uid        text    NOT NULL,
    create_rev bigint  NOT NULL,
    prev_rev   bigint  NOT NULL,
    deleted    boolean NOT NULL,
    value      text    NOT NULL,
    superseded boolean NOT NULL DEFAULT false
);

-- All versions of a key, oldest first. Serves reads at a past revision (the
-- newest version with rev <= R: a backward scan of one key), keyset-paged
-- lists at a snapshot (a range scan in (namespace, name) order, with a probe
-- of the same index per row for a newer version, so a page costs the same at
-- any depth and table size) and the predecessor lookups of compaction.
-- SQLite's copy of this index carries deleted and superseded since its
-- migration 0012; this one does not: here the flag would be an indexed
-- column, and setting it could never be a HOT update (bench/README.md, "The
-- README's SQL at 100,000 objects": +24% WAL per commit of updates, +62% for
-- cold ones), while the README's queries, which name a resource and a
-- namespace, answer in milliseconds through this index as it is.
CREATE INDEX sk_history_key ON sk_history (resource, namespace, name, rev);

-- The live objects (each key's newest row, if not a tombstone) with their
-- JSON as jsonb, for people inspecting a database by hand (e.g. SELECT
-- object->'data' FROM sk_objects WHERE ...); sqlkube itself does not read
-- it. Migration 0011: a filter on the superseded flag, so one pass over the
-- table (or over sk_history_key's rows of a resource) whatever the
-- statistics; the anti-join it replaced was planned from them (issue 45 saw
-- it pass 60 s after a crash restart had discarded them). Migration 0013: a
-- row encrypted at rest has no object (its value is not JSON), and
-- encrypted_with names the provider and key that wrote it (kube's
-- "k8s:enc:..." prefix without its last colon); plain rows have it NULL.
CREATE VIEW sk_objects AS
    SELECT h.resource, h.namespace, h.name, h.rev AS resource_version,
           CASE WHEN left(h.value, 8) = 'k8s:enc:' THEN NULL ELSE h.value::jsonb END AS object,
           substring(h.value FROM '^(k8s:enc:[^:]+:v1:.*):[A-Za-z0-9+/=]*$') AS encrypted_with
    FROM sk_history h
    WHERE NOT h.deleted AND NOT h.superseded;

-- Object expiry (TTL): the key's object, at revision rev, expires at
-- expires_at_ms (ms since the Unix epoch). Written in the same transaction as
-- the object, so a restart neither forgets nor extends an expiry. Core v1
-- Events expire --event-ttl after their last write; apiserver identity Leases
-- at renewTime + leaseDurationSeconds. The collector deletes expired objects
-- through the normal write path, with rev as precondition. sk_expiring shows
-- the table with readable times.
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

-- Allocations: values that at most one live object may hold at a time, such
-- as a Service's cluster IP (kind 'clusterip', value the dotted address) or a
-- node port (kind 'nodeport', value the decimal port). The API picks values
-- (at random, or as the client asked); the store's writer records the claim
-- in the same transaction as the object, refusing a value another object
-- owns, and drops an object's rows when a later write of it lists other
-- values or when it is deleted (also by a namespace's cascade). Writers hold
-- the revision lock, so claims by several processes sharing the database are
-- serialised too.
CREATE TABLE sk_allocation (
    kind      text COLLATE "C" NOT NULL,
    value     text COLLATE "C" NOT NULL,
    resource  text COLLATE "C" NOT NULL,
    namespace text COLLATE "C" NOT NULL,
    name      text COLLATE "C" NOT NULL,
    PRIMARY KEY (kind, value)
);
CREATE INDEX sk_allocation_owner ON sk_allocation (resource, namespace, name);

-- The etcd v3 keyspace served by the gRPC face (--etcd-listen). Keys and
-- values are bytes (kube-apiserver stores protobuf values), ordered bytewise
-- as etcd orders them. Every etcd write takes a revision from sk_revision, the
-- same counter as sk_history, so the two faces share one history; an etcd
-- transaction with several writes takes ONE revision, its rows told apart by
-- sub (etcd's sub-revision). The watch feed sees such a revision as one row
-- without an object (sk_store_history), so the feed stays gap-free.
--   create_rev: revision that created the key (since its last delete).
--   version:    writes since creation (1 for a create), 0 for a tombstone.
--   lease:      the lease the key is attached to, 0 for none.
--   deleted:    1 for a tombstone (value empty).
--   superseded: (migration 0011) set once a newer row of the key exists, by
--               the write that appends it, as in sk_history.
-- Compaction removes versions superseded at or below compact_rev and
-- tombstones at or below it, then records kv_compact_rev = compact_rev.
CREATE TABLE sk_kv (
    rev        bigint NOT NULL,
    sub        integer NOT NULL,
    key        bytea NOT NULL,
    create_rev bigint NOT NULL,
    version    bigint NOT NULL,
    lease      bigint NOT NULL,
    deleted    boolean NOT NULL,
    value      bytea NOT NULL,
    PRIMARY KEY (rev, sub),
    superseded boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX sk_kv_key ON sk_kv (key, rev);
CREATE INDEX sk_kv_lease ON sk_kv (lease) WHERE lease <> 0;

-- etcd leases (the gRPC face's Lease service). A lease is its id, the TTL it
-- was granted (seconds, raised to etcd's minimum) and the absolute time it
-- expires (ms since the Unix epoch). Grants, keep-alives and revocations go
-- through the store's writer, in the same transactions as the keys, so a
-- restart neither forgets nor restarts a lease's clock. A key's lease is its
-- live sk_kv row's `lease` (sk_kv_lease finds a lease's keys): re-putting a
-- key without a lease detaches it. When expires_at_ms passes, an expiry
-- collector deletes the lease's keys at ONE revision and the lease row in
-- the same transaction, which checks the row is still expired first: with
-- several processes on one database exactly one of them does it.
CREATE TABLE sk_lease (
    id            bigint PRIMARY KEY,
    ttl           bigint NOT NULL,
    expires_at_ms bigint NOT NULL
);
CREATE INDEX sk_lease_expiry ON sk_lease (expires_at_ms);

-- Migrations 0008_etcd_kv_views, 0011_superseded_flag and 0014_kv_decoded.
-- The etcd keyspace decoded for people inspecting a database by hand (e.g.
-- SELECT namespace, name FROM sk_kv_latest WHERE resource = 'pods'); sqlkube
-- itself reads none of it. sk_kv_doc holds each sk_kv row decoded once, by
-- a follower in the server within moments of the row's commit
-- (ctl/kvdecode.c; rows written before 0014 on its first passes; instances
-- sharing a database skip what another decoded); a compaction's deleted
-- rows take their docs with them (the trigger). Columns:
--   key_text:  the key as text; NULL when it is not valid UTF-8 or holds a
--              NUL byte (sk_kv.key, the bytes, is always there).
--   "group", resource, namespace, name: the key read the way kube-apiserver
--              lays out etcd under its default prefix /registry:
--              /registry/<resource>/[<namespace>/]<name>, or
--              /registry/<group>/<resource>/[<namespace>/]<name> when the
--              first segment holds a '.' (CRDs, custom resources,
--              APIServices). group is NULL when the key names none: built-in
--              resources are keyed by resource alone. The prefixes kube
--              renames are mapped back: services/specs -> services,
--              services/endpoints -> endpoints, minions -> nodes, controllers
--              -> replicationcontrollers, ingress -> ingresses; other
--              segments show as they are (masterleases, ranges). namespace
--              is NULL for a cluster-scoped key. Any other key
--              (compact_rev_key, empty or extra segments) decodes to NULLs.
--   encoding:  'protobuf' (kube's envelope, k8s\0), 'json' (a JSON object:
--              custom resources, or --storage-media-type=application/json),
--              'encrypted' (kube-apiserver's k8s:enc: values), else 'bytes';
--              NULL for a tombstone.
--   kind, api_version: the object's; a protobuf value's from its envelope
--              even when the object cannot be decoded (an unknown kind).
--   doc:       the object as jsonb: a protobuf value decoded by sqlkube's own
--              codec as Go's encoding/json prints it, a JSON value as it is;
--              NULL when it cannot be read.
-- sk_kv_history is every row of sk_kv joined with its doc, tombstones
-- included; sk_kv_latest the live version of each key (its newest row, if
-- not a tombstone: sk_kv's superseded flag, migration 0011). value_json is
-- the doc as text, in the place the views of 0008 had it.
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

CREATE VIEW sk_kv_history AS
    SELECT k.rev, k.sub, k.key, d.key_text, k.create_rev, k.version, k.lease, k.deleted,
           k.value AS value_bytes, d."group", d.resource, d.namespace, d.name, d.encoding,
           d.doc::text COLLATE "C" AS value_json, k.superseded, d.kind, d.api_version, d.doc
    FROM sk_kv k LEFT JOIN sk_kv_doc d ON d.rev = k.rev AND d.sub = k.sub;

CREATE VIEW sk_kv_latest AS
    SELECT h.key, h.key_text, h.rev, h.create_rev, h.version, h.lease, h.value_bytes,
           h."group", h.resource, h.namespace, h.name, h.encoding, h.value_json,
           h.kind, h.api_version, h.doc
    FROM sk_kv_history h
    WHERE NOT h.deleted AND NOT h.superseded;

-- Migration 0010_writer_batches.
-- The last batch each writer committed: one row per store opened (a process
-- run), written in the same transaction as the batch, by the statement that
-- stores the revision counter. A row outlives its process (a few bytes for
-- each start).
--   writer: a random id the store draws when it opens (63 bits: processes
--           sharing the database do not collide).
--   batch:  the writer's sequence number of its last committed batch; it
--           only grows.
-- When a connection breaks while COMMIT is in flight, the writer cannot
-- tell from the error whether the batch committed. It takes the revision
-- lock on a new connection (so the old transaction has ended either way)
-- and reads its row: batch equal to the lost one means committed, and the
-- batch's results are its callers' answers; lower means not, and the batch
-- is run again. The revision alone would not do: with several processes on
-- one database, the row at the expected revision may be another's.
CREATE TABLE sk_writer (
    writer bigint PRIMARY KEY,
    batch  bigint NOT NULL
);
