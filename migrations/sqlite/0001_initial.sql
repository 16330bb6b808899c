-- 0001: MVCC object store. See schema/sqlite.sql for the documented whole.
CREATE TABLE sk_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE sk_revision (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    rev         INTEGER NOT NULL,
    compact_rev INTEGER NOT NULL
);
INSERT INTO sk_revision (id, rev, compact_rev) VALUES (1, 0, 0);
CREATE TABLE sk_history (
    rev        INTEGER PRIMARY KEY,
    resource   TEXT    NOT NULL,
    namespace  TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    uid        TEXT    NOT NULL,
    create_rev INTEGER NOT NULL,
    prev_rev   INTEGER NOT NULL,
    deleted    INTEGER NOT NULL CHECK (deleted IN (0, 1)),
    value      TEXT    NOT NULL
);
CREATE INDEX sk_history_key ON sk_history (resource, namespace, name, rev);
CREATE TABLE sk_current (
    resource  TEXT    NOT NULL,
    namespace TEXT    NOT NULL,
    name      TEXT    NOT NULL,
    rev       INTEGER NOT NULL,
    PRIMARY KEY (resource, namespace, name)
) WITHOUT ROWID;
CREATE VIEW sk_objects AS
    SELECT c.resource, c.namespace, c.name, c.rev AS resource_version, h.value AS object
    FROM sk_current c JOIN sk_history h ON h.rev = c.rev;
