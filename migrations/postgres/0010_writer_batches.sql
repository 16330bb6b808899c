-- 0010: the last batch each writer committed, so that a writer whose
-- connection broke during COMMIT can ask, on a new one, whether that batch
-- committed before it answers its callers (store.c, "Ambiguous commits").
-- See schema/postgres.sql for the documented whole.
CREATE TABLE sk_writer (
    writer bigint PRIMARY KEY,
    batch  bigint NOT NULL
);
