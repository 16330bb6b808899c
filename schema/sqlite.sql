-- schema/sqlite.sql - the whole current SQLite schema of sqlkube, documented.
--
-- This file is documentation, not the source of truth: the binary creates
-- the schema by applying migrations/sqlite/NNNN_*.sql in order (recording
-- each in sk_migrations). tests/support/schema_check.sh proves that loading
-- this file into an empty database gives exactly the schema that
-- `sqlkube migrate` gives; when a migration is added, update this file to
-- the resulting whole.
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
-- Text compares with SQLite's default BINARY collation (byte order). The
-- PostgreSQL schema declares COLLATE "C" for the same order, so keys, pages
-- and continue tokens mean the same thing on both backends.
--
-- Connection settings (not part of the schema): journal_mode=WAL and
-- synchronous=FULL, so each commit is fsynced; auto_vacuum=INCREMENTAL, so
-- space freed by compaction can be returned to the file system.

-- Which migrations have been applied. Created by the migrator itself, before
-- migration 0001, so that it exists to be read.
CREATE TABLE sk_migrations (
    version    INTEGER PRIMARY KEY, -- NNNN of migrations/sqlite/NNNN_name.sql
    name       TEXT NOT NULL,       -- "NNNN_name", the file name without .sql
    applied_at TEXT NOT NULL        -- when it was applied (RFC 3339, UTC)
);

-- Migration 0001_initial (and 0002_compaction_claim: two columns of
-- sk_revision).

-- Process-wide settings. Holds 'token_secret': 64 hex digits (32 random
-- bytes) created at the first migration, the key that signs list continue
-- tokens; it must survive restarts or outstanding tokens stop verifying.
CREATE TABLE sk_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- The revision counter and the compaction state: exactly one row (id = 1).
--   rev:         the last committed revision (0 in an empty store). The
--                writer reads and advances it inside its write transaction;
--                SQLite admits one writer at a time (BEGIN IMMEDIATE), so
--                revisions commit in order.
--   compact_rev: history older than this has been compacted away; reads at
--                an older revision fail with Expired (410). Compaction
--                advances it batch by batch, in the transaction that deletes
--                the batch, so no reader sees a row gone while its revision
--                still reads as valid.
--   compact_claimed_at, compact_claimed_by (migration 0002): the last claim
--                of a compaction pass, in milliseconds since the Unix epoch
--                (0: never), and who made it ("host:pid"). A periodic pass
--                claims with a conditional UPDATE that succeeds only if the
--                last claim is at least an interval old, so of several
--                processes sharing the file one compacts per interval; a
--                manual `sqlkube compact` records its claim unconditionally.
CREATE TABLE sk_revision (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    rev         INTEGER NOT NULL,
    compact_rev INTEGER NOT NULL,
    compact_claimed_at INTEGER NOT NULL DEFAULT 0,
    compact_claimed_by TEXT NOT NULL DEFAULT '',
    kv_compact_rev INTEGER NOT NULL DEFAULT 0
);
INSERT INTO sk_revision (id, rev, compact_rev) VALUES (1, 0, 0);

-- Every version of every object, one row per revision.
--   rev:        the revision this write got; the rowid, so rows are stored in
--               revision order and the watch feed (rev > N) is a range scan.
--   uid:        metadata.uid of the object.
--   create_rev: revision of the write that created the object.
--   prev_rev:   revision of the version this write replaced, 0 for a create.
--   deleted:    1 for a tombstone, whose value is the last version of the
--               object re-stamped with the delete's revision (what a watch
--               DELETED event carries).
--   value:      the object as JSON text; metadata.resourceVersion = rev.
--   superseded: (migration 0011) 1 once a newer row of the key exists: set
--               by the write that appends that row, in its transaction. So
--               each key has at most one row with superseded = 0, its newest.
-- Compaction deletes versions superseded at or before the compact revision
-- and tombstones at or before it.
CREATE TABLE sk_history (
    rev        INTEGER PRIMARY KEY,
    resource   TEXT    NOT NULL,
    namespace  TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    uid        TEXT    NOT NULL,
    create_rev INTEGER NOT NULL,
    prev_rev   INTEGER NOT NULL,
    deleted    INTEGER NOT NULL CHECK (deleted IN (0, 1)),
    value      TEXT    NOT NULL,
    superseded INTEGER NOT NULL DEFAULT 0 CHECK (superseded IN (0, 1))
);

-- All versions of a key, oldest first. Serves reads at a past revision (the
-- newest version with rev <= R) and keyset-paged lists at a snapshot (a range
-- scan in (namespace, name) order, so a page costs the same at any depth).
-- Migration 0012 appended deleted and superseded, which sqlkube's statements
-- do not read, for the views people use: their filter is checked in the
-- index, so a query of sk_objects by resource (and namespace, name) reads the
-- table for current rows alone, or not at all (a covering index), with no
-- sqlite_stat1 needed.
CREATE INDEX sk_history_key ON sk_history (resource, namespace, name, rev, deleted, superseded);

-- The live objects (each key's newest row, if not a tombstone), for people
-- inspecting a database by hand; sqlkube itself does not read it. Migration
-- 0011: a filter on the superseded flag (a constant in the record header,
-- read without the value's overflow pages), not a probe for a newer row;
-- 0012: checked in sk_history_key's entries. Migration 0013: a row
-- encrypted at rest has no object, and encrypted_with names the provider and
-- key that wrote it (kube's "k8s:enc:..." prefix without its last colon);
-- plain rows have encrypted_with NULL.
CREATE VIEW sk_objects AS
    SELECT h.resource, h.namespace, h.name, h.rev AS resource_version,
           CASE WHEN substr(h.value, 1, 8) = 'k8s:enc:' THEN NULL ELSE h.value END AS object,
           CASE WHEN substr(h.value, 1, 8) = 'k8s:enc:'
                THEN rtrim(rtrim(h.value, replace(h.value, ':', '')), ':') END AS encrypted_with
    FROM sk_history h
    WHERE h.deleted = 0 AND h.superseded = 0;

-- Object expiry (TTL): the key's object, at revision rev, expires at
-- expires_at_ms (ms since the Unix epoch). Written in the same transaction as
-- the object, so a restart neither forgets nor extends an expiry. Core v1
-- Events expire --event-ttl after their last write; apiserver identity Leases
-- at renewTime + leaseDurationSeconds. The collector deletes expired objects
-- through the normal write path, with rev as precondition. sk_expiring shows
-- the table with readable times.
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
    kind      TEXT NOT NULL,
    value     TEXT NOT NULL,
    resource  TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name      TEXT NOT NULL,
    PRIMARY KEY (kind, value)
) WITHOUT ROWID;
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
    rev        INTEGER NOT NULL,
    sub        INTEGER NOT NULL,
    key        BLOB NOT NULL,
    create_rev INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    lease      INTEGER NOT NULL,
    deleted    INTEGER NOT NULL CHECK (deleted IN (0, 1)),
    value      BLOB NOT NULL,
    superseded INTEGER NOT NULL DEFAULT 0 CHECK (superseded IN (0, 1)),
    PRIMARY KEY (rev, sub)
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
    id            INTEGER PRIMARY KEY,
    ttl           INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
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
--   doc:       the object as JSON: a protobuf value decoded by sqlkube's own
--              codec as Go's encoding/json prints it, a JSON value as it is;
--              NULL when it cannot be read.
-- sk_kv_history is every row of sk_kv joined with its doc, tombstones
-- included; sk_kv_latest the live version of each key (its newest row, if
-- not a tombstone: sk_kv's superseded flag, migration 0011). value_json is
-- the doc as text, in the place the views of 0008 had it.
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

-- Migration 0010_writer_batches.
-- The last batch each writer committed: one row per store opened (a process
-- run), written in the same transaction as the batch, next to the statement
-- that stores the revision counter. A row outlives its process (a few bytes
-- for each start).
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
    writer INTEGER PRIMARY KEY,
    batch  INTEGER NOT NULL
);
