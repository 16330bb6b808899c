-- 0001: MVCC object store. See schema/postgres.sql for the documented whole.
-- Keys use COLLATE "C" so that key order is byte order, as in SQLite: continue
-- tokens then mean the same thing on both backends.
CREATE TABLE sk_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);
CREATE TABLE sk_revision (
    id          integer PRIMARY KEY CHECK (id = 1),
    rev         bigint NOT NULL,
    compact_rev bigint NOT NULL
);
INSERT INTO sk_revision (id, rev, compact_rev) VALUES (1, 0, 0);
CREATE TABLE sk_history (
    rev        bigint PRIMARY KEY,
    resource   text COLLATE "C" NOT NULL,
    namespace  text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL,
    uid        text    NOT NULL,
    create_rev bigint  NOT NULL,
    prev_rev   bigint  NOT NULL,
    deleted    boolean NOT NULL,
    value      text    NOT NULL
);
CREATE INDEX sk_history_key ON sk_history (resource, namespace, name, rev);
CREATE TABLE sk_current (
    resource  text COLLATE "C" NOT NULL,
    namespace text COLLATE "C" NOT NULL,
    name      text COLLATE "C" NOT NULL,
    rev       bigint NOT NULL,
    PRIMARY KEY (resource, namespace, name)
);
CREATE VIEW sk_objects AS
    SELECT c.resource, c.namespace, c.name, c.rev AS resource_version, h.value::jsonb AS object
    FROM sk_current c JOIN sk_history h ON h.rev = c.rev;
