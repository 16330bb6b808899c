-- 0012: sk_history_key carries deleted and superseded after its columns, so
-- the views people use can be answered from the index: a query of
-- sk_objects that names a resource (and a namespace, a name) reads the
-- index's entries of those keys and checks the flags there, visiting the
-- table for the current rows alone, and a query of the key columns only is
-- an index-only scan where the visibility map covers the table; the view's
-- filter (NOT deleted AND NOT superseded) needs no statistics to use it.
-- The order of the index, and so every statement of sqlkube's that reads it,
-- is unchanged. Its cost is the writer's: the flag is now an indexed column,
-- so setting it is never a HOT update (the new tuple takes an entry in each
-- index). A partial index of current rows instead would cost SQLite every
-- create an index page; bench/README.md, "The README's SQL at 100,000
-- objects", has both measured.
DROP INDEX sk_history_key;
CREATE INDEX sk_history_key ON sk_history (resource, namespace, name, rev, deleted, superseded);
