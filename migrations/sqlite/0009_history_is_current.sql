-- 0009: sk_current is gone. The live version of a key is the newest row of
-- its sk_history rows, if that row is not a tombstone: one backward probe of
-- sk_history_key, which every write already updates. Keeping a second index
-- of the same fact cost each commit about 40% of its WAL pages
-- (bench/README.md, "What sk_current costs a write"). Compaction never
-- removes a key's newest row unless it is a tombstone, so nothing is lost.
-- See schema/sqlite.sql for the documented whole.
DROP VIEW sk_objects;
DROP TABLE sk_current;
CREATE VIEW sk_objects AS
    SELECT h.resource, h.namespace, h.name, h.rev AS resource_version, h.value AS object
    FROM sk_history h
    WHERE h.deleted = 0 AND NOT EXISTS (SELECT 1 FROM sk_history n WHERE n.resource = h.resource
        AND n.namespace = h.namespace AND n.name = h.name AND n.rev > h.rev);
