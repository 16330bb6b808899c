-- 0002: the compaction claim, so that of several instances sharing one
-- database only one compacts per interval. See schema/postgres.sql for the
-- documented whole.
ALTER TABLE sk_revision ADD COLUMN compact_claimed_at bigint NOT NULL DEFAULT 0;
ALTER TABLE sk_revision ADD COLUMN compact_claimed_by text NOT NULL DEFAULT '';
