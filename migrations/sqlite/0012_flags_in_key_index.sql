-- 0012: sk_history_key carries deleted and superseded after its columns, so
-- the views people use can be answered from the index: a query of
-- sk_objects that names a resource (and a namespace, a name) reads the
-- index's entries of those keys and checks the flags there, visiting the
-- table for the current rows alone, and one of the key columns only reads
-- the index alone; no sqlite_stat1 is needed for that plan. The order of the
-- index, and so every statement of sqlkube's that reads it, is unchanged.
-- The writer's cost is next to nothing: the flagged row's entry sits beside
-- the entry its successor adds, on a page the commit writes anyway, whereas
-- a partial index of current rows would cost every create an index page;
-- bench/README.md, "The README's SQL at 100,000 objects", has both measured.
DROP INDEX sk_history_key;
CREATE INDEX sk_history_key ON sk_history (resource, namespace, name, rev, deleted, superseded);
