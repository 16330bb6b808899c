-- 0006: the etcd v3 keyspace (the gRPC face). Keys and values are bytes, so
-- they get their own MVCC table beside sk_history; it shares sk_revision's
-- one global revision. A write of an etcd transaction is one row at the
-- transaction's revision (rev) and its position within it (sub), as etcd's
-- revision.sub. bytea compares bytewise, as etcd orders keys.
-- kv_compact_rev is how far this table has been compacted (it follows
-- compact_rev). See schema/postgres.sql for the documented whole.
CREATE TABLE sk_kv (
    rev        bigint  NOT NULL,
    sub        integer NOT NULL,
    key        bytea   NOT NULL,
    create_rev bigint  NOT NULL,
    version    bigint  NOT NULL,
    lease      bigint  NOT NULL,
    deleted    boolean NOT NULL,
    value      bytea   NOT NULL,
    PRIMARY KEY (rev, sub)
);
CREATE UNIQUE INDEX sk_kv_key ON sk_kv (key, rev);
ALTER TABLE sk_revision ADD COLUMN kv_compact_rev bigint NOT NULL DEFAULT 0;
