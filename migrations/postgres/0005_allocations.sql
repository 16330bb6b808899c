-- 0005: allocations. A row says the live object (resource, namespace, name)
-- owns value of kind (e.g. a Service's cluster IP or node port); the primary
-- key makes a value ownable once. Rows are written by the store's writer in
-- the same transaction as the object, so a crash never leaks or doubles one.
-- See schema/postgres.sql for the documented whole.
CREATE TABLE sk_allocation (
    kind      text COLLATE "C" NOT NULL,
    value     text COLLATE "C" NOT NULL,
    resource  text COLLATE "C" NOT NULL,
    namespace text COLLATE "C" NOT NULL,
    name      text COLLATE "C" NOT NULL,
    PRIMARY KEY (kind, value)
);
CREATE INDEX sk_allocation_owner ON sk_allocation (resource, namespace, name);
