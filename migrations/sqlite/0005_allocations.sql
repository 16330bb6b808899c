-- 0005: allocations. A row says the live object (resource, namespace, name)
-- owns value of kind (e.g. a Service's cluster IP or node port); the primary
-- key makes a value ownable once. Rows are written by the store's writer in
-- the same transaction as the object, so a crash never leaks or doubles one.
-- See schema/sqlite.sql for the documented whole.
CREATE TABLE sk_allocation (
    kind      TEXT NOT NULL,
    value     TEXT NOT NULL,
    resource  TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name      TEXT NOT NULL,
    PRIMARY KEY (kind, value)
) WITHOUT ROWID;
CREATE INDEX sk_allocation_owner ON sk_allocation (resource, namespace, name);
