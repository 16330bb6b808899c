-- 0006: the etcd v3 keyspace (the gRPC face). Keys and values are bytes, so
-- they get their own MVCC table beside sk_history; it shares sk_revision's
-- one global revision. A write of an etcd transaction is one row at the
-- transaction's revision (rev) and its position within it (sub), as etcd's
-- revision.sub. kv_compact_rev is how far this table has been compacted
-- (it follows compact_rev). See schema/sqlite.sql for the documented whole.
CREATE TABLE sk_kv (
    rev        INTEGER NOT NULL,
    sub        INTEGER NOT NULL,
    key        BLOB    NOT NULL,
    create_rev INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    lease      INTEGER NOT NULL,
    deleted    INTEGER NOT NULL CHECK (deleted IN (0, 1)),
    value      BLOB    NOT NULL,
    PRIMARY KEY (rev, sub)
);
CREATE UNIQUE INDEX sk_kv_key ON sk_kv (key, rev);
ALTER TABLE sk_revision ADD COLUMN kv_compact_rev INTEGER NOT NULL DEFAULT 0;
