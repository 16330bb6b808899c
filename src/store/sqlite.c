/*
 * sqlite.c - the SQLite backend (see backend.h for the contract).
 *
 * One sk_conn wraps one sqlite3 handle used by one thread at a time, with
 * its prepared statements cached per connection (preparing is a measurable
 * share of a small query's cost).
 *
 * Durability: WAL with synchronous=FULL. An acknowledged write must survive
 * not only kill -9 (NORMAL would already do that: the WAL is in the OS page
 * cache) but also power loss, which needs the WAL fsynced at every commit.
 * Group commit in store.c makes that one fsync per batch, not per write,
 * and walbatch.h makes a commit's frames one write call, not two per frame.
 * Checkpoints stay SQLite's autocheckpoint, on the writer's connection: a
 * background checkpointer was measured and cost more CPU per write than it
 * took off the writer (bench/README.md, "Checkpoints off the writer").
 *
 * The writer takes the revision lock with BEGIN IMMEDIATE: SQLite has one
 * writer at a time, so revisions commit in order. Readers use WAL snapshots
 * and never block the writer.
 *
 * Compaction shares that one write lock, and SQLite's waiters poll for it
 * rather than queue. So waiters here poll every millisecond (SQLite's own
 * busy timeout backs off to 100 ms sleeps and can miss every short gap), and
 * compaction pauses after each batch as long as the batch took, at least
 * two polls: the writer gets the lock at every gap, and waits at most about
 * one batch, however long the whole pass.
 */
#include "core/check.h"
#include "core/util.h"
#include "store/backend.h"
#include "store/migrations.h"
#include "store/walbatch.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUSY_POLL_MS 1
#define BUSY_WAIT_MS 10000

enum {
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_READ_REV,
    ST_SET_REV,
    ST_MARK_BATCH,
    ST_LAST_BATCH,
    ST_REVISIONS,
    ST_GET_CURRENT,
    ST_SUPERSEDE,
    ST_INSERT_HISTORY,
    ST_GET_AT,
    ST_LIST_ONE_NS,
    ST_LIST_ALL,
    ST_COUNT_ONE_NS,
    ST_COUNT_ALL,
    ST_HISTORY,
    ST_COMPACT_CANDIDATES,
    ST_COMPACT_DELETE,
    ST_SET_COMPACT,
    ST_CLAIM,
    ST_FREELIST,
    ST_VACUUM,
    ST_SET_EXPIRY,
    ST_CLEAR_EXPIRY,
    ST_MOVE_EXPIRY,
    ST_EXPIRED,
    ST_META_GET,
    ST_SET_COMPACTED,
    ST_CLAIM_TAKEN,
    ST_CLAIMS_RELEASE,
    ST_CLAIM_INSERT,
    ST_CLAIMS_LIST,
    ST_KV_RANGE,
    ST_KV_RANGE_FROM,
    ST_KV_COUNT,
    ST_KV_COUNT_FROM,
    ST_KV_SUPERSEDE,
    ST_KV_APPEND,
    ST_KV_COMPACT_BOUNDS,
    ST_KV_COMPACT,
    ST_KV_COMPACT_MARK,
    ST_DB_SIZE,
    ST_FLAGS_WRONG,
    ST_RESOURCES,
    ST_KV_CHANGES,
    ST_KV_KEPT,
    ST_KV_ROWS_AFTER,
    ST_KV_DOC_PUT,
    ST_KV_DOCS_LAST,
    ST_LEASE_GET,
    ST_LEASE_PUT,
    ST_LEASE_DELETE,
    ST_LEASES,
    ST_KV_LEASE_KEYS,
    ST__COUNT
};

#define ROW_COLS                                                                                   \
    "h.rev, h.create_rev, h.prev_rev, h.deleted, h.resource, h.namespace, h.name, h.uid, h.value"

/* The newest version of h's key at or before snapshot ?4 has no successor
 * in (h.rev, ?4]. A row not superseded (migration 0011's flag, read from
 * the key index the scan walks) has no successor at all, so the probe runs
 * only for versions some later write replaced: after a restart with a
 * million objects, the cache's list at the window's start skipped a
 * million index seeks (bench/README.md, "Ready after a restart"). */
#define LATEST_AT_SNAPSHOT                                                                         \
    "(h.superseded = 0 OR NOT EXISTS (SELECT 1 FROM sk_history n WHERE n.resource = h.resource "   \
    "AND n.namespace = h.namespace AND n.name = h.name AND n.rev > h.rev AND n.rev <= ?4))"

/* The read gate (see backend.h): the statement's own snapshot has not been
 * compacted past revision P. Uncorrelated, so evaluated once, before the scan. */
#define NOT_COMPACTED(P) "(SELECT compact_rev FROM sk_revision WHERE id = 1) <= " P

/* A list's rows at snapshot ?4 after the start key, ?1 the resource: (?2
 * namespace, ?3 name) within one namespace, (?2, ?3) over all of them. */
#define LIST_ONE_NS                                                                                \
    "h.resource = ?1 AND h.namespace = ?2 AND h.name > ?3 AND h.rev <= ?4 AND h.deleted = 0 "     \
    "AND " LATEST_AT_SNAPSHOT " AND " NOT_COMPACTED("?4")
#define LIST_ALL                                                                                   \
    "h.resource = ?1 AND (h.namespace, h.name) > (?2, ?3) AND h.rev <= ?4 AND h.deleted = 0 "     \
    "AND " LATEST_AT_SNAPSHOT " AND " NOT_COMPACTED("?4")

/* The etcd keyspace: the live version of each key in [?1, ?2) (the caller's
 * END adds the upper bound) at revision ?3, values left out when ?5. The
 * (key, rev) index yields key order and the NOT EXISTS probes beside it. */
#define KV_SELECT(END)                                                                             \
    "SELECT k.key, k.create_rev, k.rev, k.version, k.lease, CASE WHEN ?5 THEN x'' ELSE k.value "   \
    "END FROM sk_kv k WHERE k.key >= ?1" END " AND k.rev <= ?3 AND k.deleted = 0 AND NOT EXISTS "  \
    "(SELECT 1 FROM sk_kv n WHERE n.key = k.key AND n.rev > k.rev AND n.rev <= ?3) AND "           \
    NOT_COMPACTED("?3")

/* The database's clock in milliseconds since the Unix epoch ('now' is fixed
 * for the duration of one statement). */
#define NOW_MS "CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"

static const char *const sql_text[ST__COUNT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_READ_REV] = "SELECT rev FROM sk_revision WHERE id = 1",
    [ST_SET_REV] = "UPDATE sk_revision SET rev = ?1 WHERE id = 1",
    [ST_MARK_BATCH] = "INSERT INTO sk_writer (writer, batch) VALUES (?1, ?2)"
                      " ON CONFLICT (writer) DO UPDATE SET batch = excluded.batch",
    [ST_LAST_BATCH] = "SELECT batch FROM sk_writer WHERE writer = ?1",
    [ST_REVISIONS] = "SELECT rev, compact_rev FROM sk_revision WHERE id = 1",
    /* The key's newest row, unless a tombstone: one backward probe of
     * sk_history_key, then the row by its rowid. */
    [ST_GET_CURRENT] = "SELECT " ROW_COLS " FROM sk_history h WHERE h.rev = (SELECT n.rev FROM "
                       "sk_history n WHERE n.resource = ?1 AND n.namespace = ?2 AND n.name = ?3 "
                       "ORDER BY n.rev DESC LIMIT 1) AND h.deleted = 0",
    /* Flags the key's newest row (the version or tombstone the write about
     * to be appended replaces) as superseded: the same backward probe, then
     * the row by its rowid, rewritten in place (0 and 1 are serial types of
     * their own, so the record keeps its size). The views for people read
     * the flag (schema/sqlite.sql). */
    [ST_SUPERSEDE] = "UPDATE sk_history SET superseded = 1 WHERE rev = (SELECT n.rev FROM "
                     "sk_history n WHERE n.resource = ?1 AND n.namespace = ?2 AND n.name = ?3 "
                     "ORDER BY n.rev DESC LIMIT 1) AND superseded = 0",
    [ST_INSERT_HISTORY] =
        "INSERT INTO sk_history (rev, resource, namespace, name, uid, create_rev, "
        "prev_rev, deleted, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [ST_GET_AT] = "SELECT " ROW_COLS " FROM sk_history h WHERE h.resource = ?1 AND h.namespace = "
                  "?2 AND h.name = ?3 AND h.rev <= ?4 AND " NOT_COMPACTED(
                      "?4") " ORDER BY h.rev DESC LIMIT 1",
    [ST_LIST_ONE_NS] = "SELECT " ROW_COLS " FROM sk_history h WHERE " LIST_ONE_NS
                       " ORDER BY h.resource, h.namespace, h.name LIMIT ?5",
    [ST_LIST_ALL] = "SELECT " ROW_COLS " FROM sk_history h WHERE " LIST_ALL
                    " ORDER BY h.resource, h.namespace, h.name LIMIT ?5",
    /* The same rows counted, from the key index alone (remainingItemCount of
     * a page the cache cannot count). */
    [ST_COUNT_ONE_NS] = "SELECT count(*) FROM sk_history h WHERE " LIST_ONE_NS,
    [ST_COUNT_ALL] = "SELECT count(*) FROM sk_history h WHERE " LIST_ALL,
    /* Both tables in revision order (a merge of two rowid/index range scans);
     * an etcd revision is its first row, without an object. */
    [ST_HISTORY] = "SELECT " ROW_COLS " FROM sk_history h WHERE h.rev > ?1 AND " NOT_COMPACTED(
        "?1") " UNION ALL SELECT k.rev, 0, 0, 0, '', '', '', '', '' FROM sk_kv k WHERE k.rev > ?1 "
              "AND k.sub = 0 AND " NOT_COMPACTED("?1") " ORDER BY 1 LIMIT ?2",
    /*
     * The history rows s in (?1, ?2] in revision order, each with what it
     * retires (backend.h): the version it superseded if that is not a
     * tombstone (else 0), and itself if it is one. A rowid range scan from
     * the cursor with one index probe per row, stepped only as far as the
     * batch needs: no batch rescans what earlier batches kept.
     */
    [ST_COMPACT_CANDIDATES] =
        "SELECT n.rev, n.deleted, coalesce((SELECT CASE WHEN p.deleted THEN 0 ELSE p.rev END "
        "FROM sk_history p WHERE p.resource = n.resource AND p.namespace = n.namespace AND "
        "p.name = n.name AND p.rev < n.rev ORDER BY p.rev DESC LIMIT 1), 0) FROM sk_history n "
        "WHERE n.rev > ?1 AND n.rev <= ?2 ORDER BY n.rev",
    [ST_COMPACT_DELETE] = "DELETE FROM sk_history WHERE rev = ?1",
    [ST_SET_COMPACT] = "UPDATE sk_revision SET compact_rev = max(compact_rev, ?1) WHERE id = 1",
    [ST_CLAIM] = "UPDATE sk_revision SET compact_claimed_at = " NOW_MS ", compact_claimed_by = ?2 "
                 "WHERE id = 1 AND (?1 = 0 OR compact_claimed_at <= " NOW_MS " - ?1)",
    [ST_FREELIST] = "PRAGMA freelist_count",
    /* 256 pages (1 MiB at the default page size) per transaction. */
    [ST_VACUUM] = "PRAGMA incremental_vacuum(256)",
    [ST_SET_EXPIRY] = "INSERT INTO sk_ttl (resource, namespace, name, rev, expires_at_ms) "
                      "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (resource, namespace, name) "
                      "DO UPDATE SET rev = excluded.rev, expires_at_ms = excluded.expires_at_ms",
    [ST_CLEAR_EXPIRY] = "DELETE FROM sk_ttl WHERE resource = ?1 AND namespace = ?2 AND name = ?3",
    [ST_MOVE_EXPIRY] = "UPDATE sk_ttl SET rev = ?5 WHERE resource = ?1 AND namespace = ?2 AND "
                       "name = ?3 AND rev = ?4",
    [ST_EXPIRED] = "SELECT " ROW_COLS " FROM sk_ttl t JOIN sk_history h ON h.rev = t.rev "
                   "WHERE t.expires_at_ms <= ?1 ORDER BY t.expires_at_ms LIMIT ?2",
    [ST_META_GET] = "SELECT value FROM sk_meta WHERE key = ?1",
    [ST_SET_COMPACTED] = "UPDATE sk_revision SET compact_rev = ?1, kv_compact_rev = ?2 WHERE id = 1",
    [ST_CLAIM_TAKEN] = "SELECT 1 FROM sk_allocation WHERE kind = ?1 AND value = ?2 AND NOT "
                       "(resource = ?3 AND namespace = ?4 AND name = ?5)",
    [ST_CLAIMS_RELEASE] =
        "DELETE FROM sk_allocation WHERE resource = ?1 AND namespace = ?2 AND name = ?3",
    [ST_CLAIM_INSERT] = "INSERT INTO sk_allocation (kind, value, resource, namespace, name) "
                        "VALUES (?1, ?2, ?3, ?4, ?5)",
    [ST_CLAIMS_LIST] = "SELECT value FROM sk_allocation WHERE kind = ?1",
    [ST_KV_RANGE] = KV_SELECT(" AND k.key < ?2") " ORDER BY k.key LIMIT ?4",
    [ST_KV_RANGE_FROM] = KV_SELECT("") " ORDER BY k.key LIMIT ?4",
    [ST_KV_COUNT] = "SELECT count(*) FROM (" KV_SELECT(" AND k.key < ?2") ")",
    [ST_KV_COUNT_FROM] = "SELECT count(*) FROM (" KV_SELECT("") ")",
    /* As ST_SUPERSEDE, for the key's newest sk_kv row (sk_kv_key holds the
     * rowid). */
    [ST_KV_SUPERSEDE] = "UPDATE sk_kv SET superseded = 1 WHERE rowid = (SELECT n.rowid FROM "
                        "sk_kv n WHERE n.key = ?1 ORDER BY n.rev DESC LIMIT 1) AND "
                        "superseded = 0",
    [ST_KV_APPEND] = "INSERT INTO sk_kv (rev, sub, key, create_rev, version, lease, deleted, value) "
                     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    /* The writes in (?1, ?2] with the version each replaced: the newest
     * older version of its key, unless that is a tombstone (one probe of
     * the (key, rev) index per row). */
    [ST_KV_CHANGES] =
        "SELECT k.rev, k.sub, k.key, k.create_rev, k.version, k.lease, k.deleted, k.value, p.rev, "
        "p.create_rev, p.version, p.lease, p.value FROM sk_kv k LEFT JOIN sk_kv p ON p.key = "
        "k.key AND p.deleted = 0 AND p.rev = (SELECT max(q.rev) FROM sk_kv q WHERE q.key = k.key "
        "AND q.rev < k.rev) WHERE k.rev > ?1 AND k.rev <= ?2 AND " NOT_COMPACTED(
            "?1 + 1") " ORDER BY k.rev, k.sub",
    /* Rows above the compaction ?2, and at or below it each key's newest
     * live row up to ?1: one (key, rev) index probe per old row. */
    [ST_KV_KEPT] =
        "SELECT k.rev, k.sub, k.key, k.create_rev, k.version, k.lease, k.deleted, k.value FROM "
        "sk_kv k WHERE k.rev <= ?1 AND (k.rev > ?2 OR (k.deleted = 0 AND NOT EXISTS (SELECT 1 "
        "FROM sk_kv n WHERE n.key = k.key AND n.rev > k.rev AND n.rev <= ?1))) ORDER BY k.rev, "
        "k.sub",
    /* The same columns as ST_KV_KEPT: rows after (?1, ?2), the primary key's order. */
    [ST_KV_ROWS_AFTER] =
        "SELECT k.rev, k.sub, k.key, k.create_rev, k.version, k.lease, k.deleted, k.value FROM "
        "sk_kv k WHERE (k.rev, k.sub) > (?1, ?2) ORDER BY k.rev, k.sub LIMIT ?3",
    [ST_KV_DOC_PUT] =
        "INSERT INTO sk_kv_doc (rev, sub, key_text, \"group\", resource, namespace, name, "
        "encoding, kind, api_version, doc) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11 "
        "WHERE EXISTS (SELECT 1 FROM sk_kv WHERE rev = ?1 AND sub = ?2) ON CONFLICT DO NOTHING",
    [ST_KV_DOCS_LAST] = "SELECT rev, sub FROM sk_kv_doc ORDER BY rev DESC, sub DESC LIMIT 1",
    [ST_KV_COMPACT_BOUNDS] = "SELECT kv_compact_rev, compact_rev FROM sk_revision WHERE id = 1",
    /* What the rows n in (?1, ?2] retire: every older version of n's key and
     * n itself if it is a tombstone (older ones went in earlier passes). */
    [ST_KV_COMPACT] =
        "DELETE FROM sk_kv WHERE rowid IN (SELECT p.rowid FROM sk_kv n JOIN sk_kv p ON p.key = "
        "n.key AND p.rev < n.rev WHERE n.rev > ?1 AND n.rev <= ?2 UNION ALL SELECT rowid FROM "
        "sk_kv WHERE rev > ?1 AND rev <= ?2 AND deleted = 1)",
    [ST_DB_SIZE] = "SELECT p.page_count * s.page_size FROM pragma_page_count() p, "
                   "pragma_page_size() s",
    /* A flag is right when it is set exactly if a newer row of the key
     * exists (EXISTS is 0 or 1, as the flag). */
    [ST_FLAGS_WRONG] = "SELECT count(*) FROM sk_history h WHERE h.resource = ?1 AND "
                       "h.superseded <> EXISTS (SELECT 1 FROM sk_history n WHERE n.resource = "
                       "h.resource AND n.namespace = h.namespace AND n.name = h.name AND "
                       "n.rev > h.rev)",
    /* The next resource after the last one, by the index, until none. */
    [ST_RESOURCES] = "WITH RECURSIVE r(resource) AS (SELECT min(resource) FROM sk_history "
                     "UNION ALL SELECT (SELECT min(resource) FROM sk_history h WHERE h.resource "
                     "> r.resource) FROM r WHERE r.resource IS NOT NULL) SELECT resource FROM r "
                     "WHERE resource IS NOT NULL",
    [ST_KV_COMPACT_MARK] =
        "UPDATE sk_revision SET kv_compact_rev = max(kv_compact_rev, ?1) WHERE id = 1",
    [ST_LEASE_GET] = "SELECT id, ttl, expires_at_ms FROM sk_lease WHERE id = ?1",
    [ST_LEASE_PUT] = "INSERT OR REPLACE INTO sk_lease (id, ttl, expires_at_ms) VALUES (?1, ?2, ?3)",
    [ST_LEASE_DELETE] = "DELETE FROM sk_lease WHERE id = ?1",
    [ST_LEASES] = "SELECT id, ttl, expires_at_ms FROM sk_lease WHERE expires_at_ms <= ?1 "
                  "ORDER BY expires_at_ms LIMIT ?2",
    /* The rows naming the lease (its partial index), kept if no newer row of
     * the key exists: a key re-put without the lease has one. */
    [ST_KV_LEASE_KEYS] =
        "SELECT k.key, k.create_rev, k.rev, k.version, k.lease FROM sk_kv k WHERE k.lease = ?1 "
        "AND k.lease <> 0 AND k.deleted = 0 AND NOT EXISTS (SELECT 1 FROM sk_kv n WHERE n.key = "
        "k.key AND n.rev > k.rev) ORDER BY k.key",
};

struct sk_conn {
    sqlite3 *db;
    sqlite3_stmt *stmts[ST__COUNT];
};

static sk_err map_rc(sk_conn *c, int rc, const char *what)
{
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
        return SK_ERR_UNAVAILABLE;
    if (rc == SQLITE_FULL || rc == SQLITE_IOERR || rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB)
        fprintf(stderr, "sqlkube: sqlite %s: %s\n", what, sqlite3_errmsg(c->db));
    return rc == SQLITE_FULL ? SK_ERR_NO_SPACE : SK_ERR_INTERNAL;
}

/* Returns the cached statement, reset and unbound. */
static sqlite3_stmt *stmt(sk_conn *c, int id)
{
    sqlite3_stmt *st = c->stmts[id];
    if (!st) {
        int rc = sqlite3_prepare_v3(c->db, sql_text[id], -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
        if (rc != SQLITE_OK) {
            fprintf(stderr, "sqlkube: sqlite prepare failed (%s): %s\n", sqlite3_errmsg(c->db),
                    sql_text[id]);
            return NULL;
        }
        c->stmts[id] = st;
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

/* Runs a statement that returns no rows. */
static sk_err run_done(sk_conn *c, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sk_err err = rc == SQLITE_DONE ? SK_OK : map_rc(c, rc, what);
    sqlite3_reset(st);
    return err;
}

static char *col_strdup(sqlite3_stmt *st, int i, size_t *len_out)
{
    const unsigned char *p = sqlite3_column_text(st, i);
    size_t n = (size_t)sqlite3_column_bytes(st, i);
    char *s = malloc(n + 1);
    SK_CHECK_ALLOC(s);
    if (n)
        memcpy(s, p, n);
    s[n] = '\0';
    if (len_out)
        *len_out = n;
    return s;
}

/* Fills row from the ROW_COLS columns of the current result row. */
static void read_row(sqlite3_stmt *st, sk_row *row)
{
    row->rev = sqlite3_column_int64(st, 0);
    row->create_rev = sqlite3_column_int64(st, 1);
    row->prev_rev = sqlite3_column_int64(st, 2);
    row->deleted = sqlite3_column_int(st, 3);
    row->resource = col_strdup(st, 4, NULL);
    row->ns = col_strdup(st, 5, NULL);
    row->name = col_strdup(st, 6, NULL);
    row->uid = col_strdup(st, 7, NULL);
    row->value = col_strdup(st, 8, &row->value_len);
}

/* Steps st, visiting every row; stops early when fn returns non-zero. */
static sk_err visit_rows(sk_conn *c, sqlite3_stmt *st, sk_row_fn fn, void *arg, const char *what)
{
    sk_err err = SK_OK;
    for (;;) {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE)
            break;
        if (rc != SQLITE_ROW) {
            err = map_rc(c, rc, what);
            break;
        }
        sk_row row = {0};
        read_row(st, &row);
        int stop = fn(arg, &row);
        sk_row_clear(&row);
        if (stop)
            break;
    }
    sqlite3_reset(st);
    return err;
}

/* Reads the single matching row, SK_ERR_NOT_FOUND if none. */
static sk_err one_row(sk_conn *c, sqlite3_stmt *st, sk_row *out, const char *what)
{
    sk_err err;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        read_row(st, out);
        err = SK_OK;
    } else if (rc == SQLITE_DONE) {
        err = SK_ERR_NOT_FOUND;
    } else {
        err = map_rc(c, rc, what);
    }
    sqlite3_reset(st);
    return err;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Busy handler: polls for the lock every BUSY_POLL_MS, for BUSY_WAIT_MS. */
static int busy_poll(void *arg, int tries)
{
    if ((int64_t)tries * BUSY_POLL_MS >= BUSY_WAIT_MS)
        return 0;
    sleep_ms(BUSY_POLL_MS);
    return 1;
}

/* After holding the write lock for took_ms, leaves it free as long (and at
 * least two polls), so compaction takes at most about half the lock. */
static void yield_write_lock(int64_t took_ms)
{
    sleep_ms(took_ms > 2 * BUSY_POLL_MS ? took_ms : 2 * BUSY_POLL_MS);
}

static sk_err sqlite_connect(const char *url, sk_conn **out, char **errmsg)
{
    sk_err err = SK_OK;
    const char *path = strncmp(url, "sqlite:", 7) == 0 ? url + 7 : url;
    sk_conn *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    int rc = sqlite3_open_v2(
        path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
        sk_walbatch_vfs());
    if (rc != SQLITE_OK) {
        if (asprintf(errmsg, "cannot open SQLite database %s: %s", path,
                     c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc)) < 0)
            *errmsg = NULL;
        err = SK_ERR_UNAVAILABLE;
        goto out;
    }
    sqlite3_busy_handler(c->db, busy_poll, NULL);
    /* auto_vacuum must precede the first table; it is a no-op on an existing file.
     * Switching a new file to WAL takes its lock from a shared one, and
     * SQLite answers SQLITE_BUSY at once, without the busy handler, when
     * another connection does the same (waiting could deadlock): so several
     * processes opening one new file at once retry here, for as long as the
     * busy handler would wait.
     * Reads map the file (mmap_size, up to the library's cap of ~2 GiB): a
     * row of 10 KiB spans overflow pages, and reading them with pread cost
     * a paged etcd Range a quarter of its CPU in the kernel's copy. SQLite
     * maps only what it has read under its locks and remaps when another
     * connection changes the file's size; writes still go through write(). */
    char *msg = NULL;
    for (int64_t waited = 0;; waited += BUSY_POLL_MS) {
        rc = sqlite3_exec(c->db,
                          "PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL; "
                          "PRAGMA synchronous = FULL; PRAGMA foreign_keys = OFF; "
                          "PRAGMA mmap_size = 2147418112;",
                          NULL, NULL, &msg);
        if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || waited >= BUSY_WAIT_MS)
            break;
        sqlite3_free(msg);
        msg = NULL;
        sleep_ms(BUSY_POLL_MS);
    }
    if (rc != SQLITE_OK) {
        if (asprintf(errmsg, "cannot open SQLite database %s: %s", path,
                     msg ? msg : sqlite3_errstr(rc)) < 0)
            *errmsg = NULL;
        sqlite3_free(msg);
        err = SK_ERR_UNAVAILABLE;
        goto out;
    }
    *out = c;
    c = NULL;
out:
    if (c) {
        sqlite3_close(c->db);
        free(c);
    }
    return err;
}

static void sqlite_disconnect(sk_conn *c)
{
    if (!c)
        return;
    for (int i = 0; i < ST__COUNT; i++)
        sqlite3_finalize(c->stmts[i]);
    sqlite3_close(c->db);
    free(c);
}

static sk_err exec_sql(sk_conn *c, const char *sql, char **errmsg)
{
    char *msg = NULL;
    int rc = sqlite3_exec(c->db, sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        return SK_OK;
    if (errmsg && asprintf(errmsg, "sqlite: %s", msg ? msg : sqlite3_errstr(rc)) < 0)
        *errmsg = NULL;
    sqlite3_free(msg);
    return rc == SQLITE_BUSY ? SK_ERR_UNAVAILABLE : SK_ERR_INTERNAL;
}

static sk_err sqlite_migrate(sk_conn *c, char **errmsg)
{
    sk_err err;
    sqlite3_stmt *st = NULL;
    if ((err = exec_sql(c, "BEGIN IMMEDIATE", errmsg)) != SK_OK)
        return err;
    err = exec_sql(c,
                   "CREATE TABLE IF NOT EXISTS sk_migrations (version INTEGER PRIMARY KEY, name "
                   "TEXT NOT NULL, applied_at TEXT NOT NULL)",
                   errmsg);
    if (err != SK_OK)
        goto out;
    int64_t applied = 0;
    if (sqlite3_prepare_v2(c->db, "SELECT coalesce(max(version), 0) FROM sk_migrations", -1, &st,
                           NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        err = exec_sql(c, "SELECT 1 FROM sk_migrations", errmsg);
        if (err == SK_OK)
            err = SK_ERR_INTERNAL;
        goto out;
    }
    applied = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    for (const sk_migration *m = sk_migrations_sqlite; m->sql; m++) {
        if (m->version <= applied)
            continue;
        if ((err = exec_sql(c, m->sql, errmsg)) != SK_OK)
            goto out;
        char *rec = sqlite3_mprintf("INSERT INTO sk_migrations (version, name, applied_at) VALUES "
                                    "(%d, %Q, strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ', 'now'))",
                                    m->version, m->name);
        err = exec_sql(c, rec, errmsg);
        sqlite3_free(rec);
        if (err != SK_OK)
            goto out;
    }
    unsigned char secret[32];
    char hex[65];
    sk_random_bytes(secret, sizeof secret);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", secret[i]);
    char *seed = sqlite3_mprintf(
        "INSERT OR IGNORE INTO sk_meta (key, value) VALUES ('token_secret', %Q)", hex);
    err = exec_sql(c, seed, errmsg);
    sqlite3_free(seed);
    if (err != SK_OK)
        goto out;
    err = exec_sql(c, "COMMIT", errmsg);
out:
    sqlite3_finalize(st);
    if (err != SK_OK)
        exec_sql(c, "ROLLBACK", NULL);
    return err;
}

static sk_err sqlite_begin_write(sk_conn *c, int64_t *rev_out)
{
    sqlite3_stmt *st = stmt(c, ST_BEGIN);
    if (!st)
        return SK_ERR_INTERNAL;
    sk_err err = run_done(c, st, "begin");
    if (err != SK_OK)
        return err;
    st = stmt(c, ST_READ_REV);
    if (!st || sqlite3_step(st) != SQLITE_ROW) {
        if (st)
            sqlite3_reset(st);
        return SK_ERR_INTERNAL;
    }
    *rev_out = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return SK_OK;
}

static sk_err sqlite_get_current(sk_conn *c, const char *resource, const char *ns, const char *name,
                                 sk_row *out)
{
    sqlite3_stmt *st = stmt(c, ST_GET_CURRENT);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, resource);
    bind_text(st, 2, ns);
    bind_text(st, 3, name);
    return one_row(c, st, out, "get current");
}

static sk_err sqlite_append(sk_conn *c, const sk_row *row)
{
    sqlite3_stmt *st = stmt(c, ST_SUPERSEDE);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, row->resource);
    bind_text(st, 2, row->ns);
    bind_text(st, 3, row->name);
    sk_err err = run_done(c, st, "supersede");
    if (err != SK_OK)
        return err;
    st = stmt(c, ST_INSERT_HISTORY);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, row->rev);
    bind_text(st, 2, row->resource);
    bind_text(st, 3, row->ns);
    bind_text(st, 4, row->name);
    bind_text(st, 5, row->uid);
    sqlite3_bind_int64(st, 6, row->create_rev);
    sqlite3_bind_int64(st, 7, row->prev_rev);
    sqlite3_bind_int(st, 8, row->deleted ? 1 : 0);
    sqlite3_bind_text(st, 9, row->value, (int)row->value_len, SQLITE_STATIC);
    return run_done(c, st, "insert history");
}

static sk_err sqlite_commit_write(sk_conn *c, int64_t rev, int64_t writer, int64_t batch)
{
    sqlite3_stmt *st = stmt(c, ST_SET_REV);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, rev);
    sk_err err = run_done(c, st, "set revision");
    if (err != SK_OK)
        return err;
    if (!(st = stmt(c, ST_MARK_BATCH)))
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, writer);
    sqlite3_bind_int64(st, 2, batch);
    if ((err = run_done(c, st, "mark batch")) != SK_OK)
        return err;
    st = stmt(c, ST_COMMIT);
    return st ? run_done(c, st, "commit") : SK_ERR_INTERNAL;
}

static sk_err sqlite_last_batch(sk_conn *c, int64_t writer, int64_t *batch_out)
{
    sqlite3_stmt *st = stmt(c, ST_LAST_BATCH);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, writer);
    int rc = sqlite3_step(st);
    sk_err err = rc == SQLITE_ROW || rc == SQLITE_DONE ? SK_OK : map_rc(c, rc, "last batch");
    if (err == SK_OK)
        *batch_out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return err;
}

static void sqlite_rollback(sk_conn *c)
{
    if (sqlite3_get_autocommit(c->db))
        return;
    sqlite3_stmt *st = stmt(c, ST_ROLLBACK);
    if (st)
        run_done(c, st, "rollback");
}

static sk_err sqlite_revisions(sk_conn *c, int64_t *rev_out, int64_t *compact_rev_out)
{
    sqlite3_stmt *st = stmt(c, ST_REVISIONS);
    if (!st)
        return SK_ERR_INTERNAL;
    int rc = sqlite3_step(st);
    sk_err err = SK_OK;
    if (rc == SQLITE_ROW) {
        *rev_out = sqlite3_column_int64(st, 0);
        *compact_rev_out = sqlite3_column_int64(st, 1);
    } else {
        err = map_rc(c, rc, "revisions");
    }
    sqlite3_reset(st);
    return err;
}

static sk_err sqlite_get_at(sk_conn *c, const char *resource, const char *ns, const char *name,
                            int64_t at_rev, sk_row *out)
{
    sqlite3_stmt *st = stmt(c, ST_GET_AT);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, resource);
    bind_text(st, 2, ns);
    bind_text(st, 3, name);
    sqlite3_bind_int64(st, 4, at_rev > 0 ? at_rev : INT64_MAX);
    return one_row(c, st, out, "get");
}

/* Binds a list's range (?1 to ?4) to st, a list or a count statement. */
static void bind_list_range(sqlite3_stmt *st, const sk_list_query *q)
{
    /* The visitor may replace the caller's start key while rows are still
     * being stepped, so the key is bound as a private copy. */
    bind_text(st, 1, q->resource);
    if (q->ns) {
        bind_text(st, 2, q->ns);
        /* after_ns outside this namespace's range was rejected upstream. */
        sqlite3_bind_text(st, 3, q->after_name ? q->after_name : "", -1, SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_text(st, 2, q->after_ns ? q->after_ns : "", -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 3, q->after_name ? q->after_name : "", -1, SQLITE_TRANSIENT);
    }
    sqlite3_bind_int64(st, 4, q->rev);
}

static sk_err sqlite_list(sk_conn *c, const sk_list_query *q, sk_row_fn fn, void *arg)
{
    sqlite3_stmt *st = stmt(c, q->ns ? ST_LIST_ONE_NS : ST_LIST_ALL);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_list_range(st, q);
    sqlite3_bind_int(st, 5, q->limit);
    return visit_rows(c, st, fn, arg, "list");
}

static sk_err sqlite_count(sk_conn *c, const sk_list_query *q, int64_t *out)
{
    sqlite3_stmt *st = stmt(c, q->ns ? ST_COUNT_ONE_NS : ST_COUNT_ALL);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_list_range(st, q);
    int rc = sqlite3_step(st);
    int64_t n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return map_rc(c, rc, "count");
    *out = n;
    return SK_OK;
}

static sk_err sqlite_history(sk_conn *c, int64_t after_rev, int limit, sk_row_fn fn, void *arg)
{
    sqlite3_stmt *st = stmt(c, ST_HISTORY);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, after_rev);
    sqlite3_bind_int(st, 2, limit);
    return visit_rows(c, st, fn, arg, "history");
}

/* Free pages in the file; 0 if that cannot be read (nothing to vacuum). */
static int64_t free_pages(sk_conn *c)
{
    sqlite3_stmt *st = stmt(c, ST_FREELIST);
    int64_t n = st && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    if (st)
        sqlite3_reset(st);
    return n;
}

/*
 * Hands the pages compaction freed back to the file system and truncates the
 * WAL. The vacuum moves pages under the write lock, so it goes a chunk per
 * transaction and yields the lock between chunks; it stops when no page is
 * left or a chunk freed none (a file created before auto_vacuum was set).
 * Best effort: a failure leaves free pages, which later writes reuse anyway.
 */
static void give_back_space(sk_conn *c)
{
    int64_t left = free_pages(c);
    while (left > 0) {
        sqlite3_stmt *st = stmt(c, ST_VACUUM);
        if (!st)
            break;
        int64_t start = sk_now_ms();
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            ; /* a row per page freed; the transaction ends with the statement */
        sqlite3_reset(st);
        int64_t before = left;
        left = free_pages(c);
        if (rc != SQLITE_DONE || left >= before)
            break;
        yield_write_lock(sk_now_ms() - start);
    }
    sqlite3_exec(c->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
}

static sk_err sqlite_reclaim(sk_conn *c)
{
    give_back_space(c);
    return SK_OK;
}

/*
 * One batch in one write transaction: BEGIN IMMEDIATE, so the writer waits
 * for it and the batch is kept short: at most 2 * batch history rows stepped
 * from the cursor (a run of creates retires nothing, yet costs a probe each)
 * and at most batch + 1 single-row deletes. The victims go and compact_rev
 * moves past them in the same commit, so a reader's snapshot either still
 * has the rows or already has the barrier that expires reads of them.
 */
static sk_err sqlite_compact_batch(sk_conn *c, int64_t upto_rev, int batch, int64_t *removed_out,
                                   int *done_out)
{
    int64_t *victims = malloc(((size_t)batch + 1) * sizeof *victims);
    SK_CHECK_ALLOC(victims);
    int n = 0, done = 1;
    int64_t removed = 0, start = sk_now_ms();
    sqlite3_stmt *st = stmt(c, ST_BEGIN);
    sk_err err = st ? run_done(c, st, "begin compaction") : SK_ERR_INTERNAL;
    if (err != SK_OK)
        goto out;
    int64_t rev = 0, lo = 0;
    if ((err = sqlite_revisions(c, &rev, &lo)) != SK_OK)
        goto out;
    int64_t hi = upto_rev < rev ? upto_rev : rev, mark = hi;
    if (!(st = stmt(c, ST_COMPACT_CANDIDATES))) {
        err = SK_ERR_INTERNAL;
        goto out;
    }
    sqlite3_bind_int64(st, 1, lo);
    sqlite3_bind_int64(st, 2, hi);
    int rc, steps = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t s = sqlite3_column_int64(st, 0), pred = sqlite3_column_int64(st, 2);
        int dead = sqlite3_column_int(st, 1);
        if (n >= batch || steps == 2 * batch) { /* s is left to the next batch */
            mark = s - 1;
            done = 0;
            break;
        }
        steps++;
        if (pred > 0)
            victims[n++] = pred;
        if (dead)
            victims[n++] = s;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        err = map_rc(c, rc, "compaction candidates");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        if (!(st = stmt(c, ST_COMPACT_DELETE))) {
            err = SK_ERR_INTERNAL;
            goto out;
        }
        sqlite3_bind_int64(st, 1, victims[i]);
        if ((err = run_done(c, st, "compact")) != SK_OK)
            goto out;
        removed += sqlite3_changes64(c->db);
    }
    if (!(st = stmt(c, ST_SET_COMPACT))) {
        err = SK_ERR_INTERNAL;
        goto out;
    }
    sqlite3_bind_int64(st, 1, mark);
    if ((err = run_done(c, st, "set compact revision")) != SK_OK)
        goto out;
    if (!(st = stmt(c, ST_COMMIT))) {
        err = SK_ERR_INTERNAL;
        goto out;
    }
    if ((err = run_done(c, st, "commit compaction")) != SK_OK)
        goto out;
    if (done)
        give_back_space(c);
    else
        yield_write_lock(sk_now_ms() - start);
    *removed_out = removed;
    *done_out = done;
out:
    if (err != SK_OK)
        sqlite_rollback(c);
    free(victims);
    return err;
}

static sk_err sqlite_compact_claim(sk_conn *c, int64_t interval_ms, const char *claimant,
                                   int *won_out)
{
    sqlite3_stmt *st = stmt(c, ST_CLAIM);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, interval_ms);
    bind_text(st, 2, claimant);
    sk_err err = run_done(c, st, "claim compaction");
    if (err == SK_OK)
        *won_out = sqlite3_changes64(c->db) == 1;
    return err;
}

static sk_err sqlite_set_expiry(sk_conn *c, const char *resource, const char *ns, const char *name,
                                int64_t rev, int64_t expires_at_ms)
{
    sqlite3_stmt *st = stmt(c, expires_at_ms > 0 ? ST_SET_EXPIRY : ST_CLEAR_EXPIRY);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, resource);
    bind_text(st, 2, ns);
    bind_text(st, 3, name);
    if (expires_at_ms > 0) {
        sqlite3_bind_int64(st, 4, rev);
        sqlite3_bind_int64(st, 5, expires_at_ms);
    }
    return run_done(c, st, expires_at_ms > 0 ? "set expiry" : "clear expiry");
}

static sk_err sqlite_move_expiry(sk_conn *c, const char *resource, const char *ns,
                                 const char *name, int64_t from_rev, int64_t to_rev)
{
    sqlite3_stmt *st = stmt(c, ST_MOVE_EXPIRY);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, resource);
    bind_text(st, 2, ns);
    bind_text(st, 3, name);
    sqlite3_bind_int64(st, 4, from_rev);
    sqlite3_bind_int64(st, 5, to_rev);
    return run_done(c, st, "move expiry");
}

static sk_err sqlite_expired(sk_conn *c, int64_t now_ms, int limit, sk_row_fn fn, void *arg)
{
    sqlite3_stmt *st = stmt(c, ST_EXPIRED);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, now_ms);
    sqlite3_bind_int(st, 2, limit);
    return visit_rows(c, st, fn, arg, "expired");
}

static sk_err sqlite_set_compacted(sk_conn *c, int64_t compact_rev, int64_t kv_compact_rev)
{
    sqlite3_stmt *st = stmt(c, ST_SET_COMPACTED);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, compact_rev);
    sqlite3_bind_int64(st, 2, kv_compact_rev);
    return run_done(c, st, "set compacted");
}

static sk_err sqlite_meta_get(sk_conn *c, const char *key, char **value_out)
{
    sqlite3_stmt *st = stmt(c, ST_META_GET);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, key);
    int rc = sqlite3_step(st);
    sk_err err = SK_OK;
    if (rc == SQLITE_ROW)
        *value_out = col_strdup(st, 0, NULL);
    else if (rc == SQLITE_DONE)
        err = SK_ERR_NOT_FOUND;
    else
        err = map_rc(c, rc, "meta");
    sqlite3_reset(st);
    return err;
}

static sk_err sqlite_claim_taken(sk_conn *c, const char *kind, const char *value,
                                 const char *resource, const char *ns, const char *name,
                                 int *taken_out)
{
    sqlite3_stmt *st = stmt(c, ST_CLAIM_TAKEN);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, kind);
    bind_text(st, 2, value);
    bind_text(st, 3, resource);
    bind_text(st, 4, ns);
    bind_text(st, 5, name);
    int rc = sqlite3_step(st);
    sk_err err = SK_OK;
    if (rc == SQLITE_ROW || rc == SQLITE_DONE)
        *taken_out = rc == SQLITE_ROW;
    else
        err = map_rc(c, rc, "claim taken");
    sqlite3_reset(st);
    return err;
}

static sk_err sqlite_claims_release(sk_conn *c, const char *resource, const char *ns,
                                    const char *name)
{
    sqlite3_stmt *st = stmt(c, ST_CLAIMS_RELEASE);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, resource);
    bind_text(st, 2, ns);
    bind_text(st, 3, name);
    return run_done(c, st, "release claims");
}

static sk_err sqlite_claim_insert(sk_conn *c, const char *kind, const char *value,
                                  const char *resource, const char *ns, const char *name)
{
    sqlite3_stmt *st = stmt(c, ST_CLAIM_INSERT);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, kind);
    bind_text(st, 2, value);
    bind_text(st, 3, resource);
    bind_text(st, 4, ns);
    bind_text(st, 5, name);
    return run_done(c, st, "claim");
}

static sk_err sqlite_claims_list(sk_conn *c, const char *kind,
                                 int (*fn)(void *arg, const char *value), void *arg)
{
    sqlite3_stmt *st = stmt(c, ST_CLAIMS_LIST);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, kind);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (fn(arg, (const char *)sqlite3_column_text(st, 0)))
            break;
    sk_err err = rc == SQLITE_ROW || rc == SQLITE_DONE ? SK_OK : map_rc(c, rc, "list claims");
    sqlite3_reset(st);
    return err;
}

/* Binds bytes; a zero-length value stays a blob (a NULL pointer would bind NULL). */
static void bind_bytes(sqlite3_stmt *st, int i, const unsigned char *p, size_t n)
{
    if (n == 0)
        sqlite3_bind_zeroblob(st, i, 0);
    else
        sqlite3_bind_blob64(st, i, p, n, SQLITE_STATIC);
}

/* Binds the parameters shared by the kv range and count statements. */
static void bind_kv_range(sqlite3_stmt *st, const unsigned char *lo, size_t lo_len,
                          const unsigned char *hi, size_t hi_len, int64_t rev, int keys_only)
{
    bind_bytes(st, 1, lo, lo_len);
    if (hi)
        bind_bytes(st, 2, hi, hi_len);
    sqlite3_bind_int64(st, 3, rev);
    sqlite3_bind_int(st, 5, keys_only);
}

static sk_err sqlite_kv_range(sk_conn *c, const unsigned char *lo, size_t lo_len,
                              const unsigned char *hi, size_t hi_len, int64_t rev, int64_t limit,
                              int keys_only, sk_kv_fn fn, void *arg)
{
    sqlite3_stmt *st = stmt(c, hi ? ST_KV_RANGE : ST_KV_RANGE_FROM);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_kv_range(st, lo, lo_len, hi, hi_len, rev, keys_only);
    sqlite3_bind_int64(st, 4, limit > 0 ? limit : -1);
    sk_err err = SK_OK;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sk_kv kv = {
            .key = sqlite3_column_blob(st, 0),
            .key_len = (size_t)sqlite3_column_bytes(st, 0),
            .create_rev = sqlite3_column_int64(st, 1),
            .mod_rev = sqlite3_column_int64(st, 2),
            .version = sqlite3_column_int64(st, 3),
            .lease = sqlite3_column_int64(st, 4),
            .value = sqlite3_column_blob(st, 5),
            .value_len = (size_t)sqlite3_column_bytes(st, 5),
        };
        if (fn(arg, &kv))
            break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        err = map_rc(c, rc, "kv range");
    sqlite3_reset(st);
    return err;
}

static sk_err sqlite_kv_count(sk_conn *c, const unsigned char *lo, size_t lo_len,
                              const unsigned char *hi, size_t hi_len, int64_t rev,
                              int64_t *count_out)
{
    sqlite3_stmt *st = stmt(c, hi ? ST_KV_COUNT : ST_KV_COUNT_FROM);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_kv_range(st, lo, lo_len, hi, hi_len, rev, 1);
    int rc = sqlite3_step(st);
    sk_err err = SK_OK;
    if (rc == SQLITE_ROW)
        *count_out = sqlite3_column_int64(st, 0);
    else
        err = map_rc(c, rc, "kv count");
    sqlite3_reset(st);
    return err;
}

static sk_err sqlite_kv_append(sk_conn *c, const sk_kv_row *row)
{
    sqlite3_stmt *st = stmt(c, ST_KV_SUPERSEDE);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_bytes(st, 1, row->kv.key, row->kv.key_len);
    sk_err err = run_done(c, st, "kv supersede");
    if (err != SK_OK)
        return err;
    st = stmt(c, ST_KV_APPEND);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, row->kv.mod_rev);
    sqlite3_bind_int(st, 2, row->sub);
    bind_bytes(st, 3, row->kv.key, row->kv.key_len);
    sqlite3_bind_int64(st, 4, row->kv.create_rev);
    sqlite3_bind_int64(st, 5, row->kv.version);
    sqlite3_bind_int64(st, 6, row->kv.lease);
    sqlite3_bind_int(st, 7, row->deleted ? 1 : 0);
    bind_bytes(st, 8, row->kv.value, row->kv.value_len);
    return run_done(c, st, "kv append");
}

static sk_err sqlite_kv_changes(sk_conn *c, int64_t after_rev, int64_t upto_rev,
                                sk_kv_change_fn fn, void *arg)
{
    sqlite3_stmt *st = stmt(c, ST_KV_CHANGES);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, after_rev);
    sqlite3_bind_int64(st, 2, upto_rev);
    sk_err err = SK_OK;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sk_kv_row row = {.kv = {.mod_rev = sqlite3_column_int64(st, 0),
                                .key = sqlite3_column_blob(st, 2),
                                .key_len = (size_t)sqlite3_column_bytes(st, 2),
                                .create_rev = sqlite3_column_int64(st, 3),
                                .version = sqlite3_column_int64(st, 4),
                                .lease = sqlite3_column_int64(st, 5),
                                .value = sqlite3_column_blob(st, 7),
                                .value_len = (size_t)sqlite3_column_bytes(st, 7)},
                         .sub = sqlite3_column_int(st, 1),
                         .deleted = sqlite3_column_int(st, 6)};
        sk_kv prev = {.key = row.kv.key,
                      .key_len = row.kv.key_len,
                      .mod_rev = sqlite3_column_int64(st, 8),
                      .create_rev = sqlite3_column_int64(st, 9),
                      .version = sqlite3_column_int64(st, 10),
                      .lease = sqlite3_column_int64(st, 11),
                      .value = sqlite3_column_blob(st, 12),
                      .value_len = (size_t)sqlite3_column_bytes(st, 12)};
        int has_prev = sqlite3_column_type(st, 8) != SQLITE_NULL;
        if (fn(arg, &row, has_prev ? &prev : NULL))
            break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        err = map_rc(c, rc, "kv changes");
    sqlite3_reset(st);
    return err;
}

/* Visits the rows st (bound) selects as (rev, sub, key, create_rev,
 * version, lease, deleted, value); resets it. */
static sk_err visit_kv_rows(sk_conn *c, sqlite3_stmt *st, sk_kv_row_fn fn, void *arg,
                            const char *what)
{
    sk_err err = SK_OK;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sk_kv_row row = {.kv = {.mod_rev = sqlite3_column_int64(st, 0),
                                .key = sqlite3_column_blob(st, 2),
                                .key_len = (size_t)sqlite3_column_bytes(st, 2),
                                .create_rev = sqlite3_column_int64(st, 3),
                                .version = sqlite3_column_int64(st, 4),
                                .lease = sqlite3_column_int64(st, 5),
                                .value = sqlite3_column_blob(st, 7),
                                .value_len = (size_t)sqlite3_column_bytes(st, 7)},
                         .sub = sqlite3_column_int(st, 1),
                         .deleted = sqlite3_column_int(st, 6)};
        if (fn(arg, &row))
            break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        err = map_rc(c, rc, what);
    sqlite3_reset(st);
    return err;
}

static sk_err sqlite_kv_kept(sk_conn *c, int64_t upto_rev, int64_t compact_rev, sk_kv_row_fn fn,
                             void *arg)
{
    sqlite3_stmt *st = stmt(c, ST_KV_KEPT);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, upto_rev);
    sqlite3_bind_int64(st, 2, compact_rev);
    return visit_kv_rows(c, st, fn, arg, "kv kept");
}

static sk_err sqlite_kv_rows_after(sk_conn *c, int64_t rev, int sub, int limit, sk_kv_row_fn fn,
                                   void *arg)
{
    sqlite3_stmt *st = stmt(c, ST_KV_ROWS_AFTER);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, rev);
    sqlite3_bind_int(st, 2, sub);
    sqlite3_bind_int(st, 3, limit);
    return visit_kv_rows(c, st, fn, arg, "kv rows after");
}

/* The docs commit without an fsync of their own (synchronous=NORMAL, for
 * this transaction only): they are derived from sk_kv rows already durable,
 * and a power loss that takes the last ones only has the follower decode
 * those rows again. The writer's next commit fsyncs the WAL, these frames
 * with it, and NORMAL still syncs checkpoints, so the file stays sound
 * (walbatch.h: frames are written before they are published either way).
 * An fsync here cost a sync per batch and held the write lock, which the
 * writer polls for, through it (bench/README.md, "The decoder's docs
 * without an fsync"). */
static sk_err sqlite_kv_docs_put(sk_conn *c, const sk_kv_doc *docs, size_t n)
{
    sk_err err = exec_sql(c, "PRAGMA synchronous = NORMAL", NULL);
    sqlite3_stmt *st = NULL;
    if (err == SK_OK)
        err = (st = stmt(c, ST_BEGIN)) ? run_done(c, st, "begin kv docs") : SK_ERR_INTERNAL;
    for (size_t i = 0; err == SK_OK && i < n; i++) {
        if (!(st = stmt(c, ST_KV_DOC_PUT))) {
            err = SK_ERR_INTERNAL;
            break;
        }
        const sk_kv_doc *d = &docs[i];
        sqlite3_bind_int64(st, 1, d->rev);
        sqlite3_bind_int(st, 2, d->sub);
        const char *text[] = {d->key_text, d->group, d->resource, d->ns, d->name,
                              d->encoding, d->kind, d->api_version, d->doc};
        for (int j = 0; j < 9; j++)
            bind_text(st, 3 + j, text[j]); /* NULL binds NULL */
        err = run_done(c, st, "kv doc");
    }
    if (err == SK_OK)
        err = (st = stmt(c, ST_COMMIT)) ? run_done(c, st, "commit kv docs") : SK_ERR_INTERNAL;
    if (err != SK_OK)
        sqlite_rollback(c);
    /* FULL again whatever happened: what a pooled connection writes next
     * may be acknowledged. */
    SK_CHECK(exec_sql(c, "PRAGMA synchronous = FULL", NULL) == SK_OK);
    return err;
}

static uint64_t sqlite_take_round_trips(sk_conn *c)
{
    (void)c;
    return 0; /* in-process: no server to go to */
}

static sk_err sqlite_kv_docs_last(sk_conn *c, int64_t *rev_out, int *sub_out)
{
    sqlite3_stmt *st = stmt(c, ST_KV_DOCS_LAST);
    if (!st)
        return SK_ERR_INTERNAL;
    sk_err err = SK_OK;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *rev_out = sqlite3_column_int64(st, 0);
        *sub_out = sqlite3_column_int(st, 1);
    } else if (rc == SQLITE_DONE) {
        *rev_out = 0;
        *sub_out = 0;
    } else {
        err = map_rc(c, rc, "kv docs last");
    }
    sqlite3_reset(st);
    return err;
}

static sk_err sqlite_kv_compact(sk_conn *c, int64_t span, int64_t *removed_out, int *done_out)
{
    int64_t lo = 0, hi = 0, removed = 0, start = sk_now_ms();
    sqlite3_stmt *st = stmt(c, ST_BEGIN);
    sk_err err = st ? run_done(c, st, "begin kv compaction") : SK_ERR_INTERNAL;
    if (err != SK_OK)
        goto out;
    if (!(st = stmt(c, ST_KV_COMPACT_BOUNDS)) || sqlite3_step(st) != SQLITE_ROW) {
        err = SK_ERR_INTERNAL;
        goto out;
    }
    lo = sqlite3_column_int64(st, 0);
    hi = sqlite3_column_int64(st, 1);
    sqlite3_reset(st);
    int done = hi - lo <= span;
    if (!done)
        hi = lo + span;
    if (hi > lo) {
        if (!(st = stmt(c, ST_KV_COMPACT))) {
            err = SK_ERR_INTERNAL;
            goto out;
        }
        sqlite3_bind_int64(st, 1, lo);
        sqlite3_bind_int64(st, 2, hi);
        if ((err = run_done(c, st, "kv compact")) != SK_OK)
            goto out;
        removed = sqlite3_changes64(c->db);
        if (!(st = stmt(c, ST_KV_COMPACT_MARK))) {
            err = SK_ERR_INTERNAL;
            goto out;
        }
        sqlite3_bind_int64(st, 1, hi);
        if ((err = run_done(c, st, "kv compact mark")) != SK_OK)
            goto out;
    }
    if (!(st = stmt(c, ST_COMMIT))) {
        err = SK_ERR_INTERNAL;
        goto out;
    }
    if ((err = run_done(c, st, "commit kv compaction")) != SK_OK)
        goto out;
    if (!done)
        yield_write_lock(sk_now_ms() - start);
    *removed_out = removed;
    *done_out = done;
out:
    if (st)
        sqlite3_reset(st);
    if (err != SK_OK)
        sqlite_rollback(c);
    return err;
}

static sk_err sqlite_db_size(sk_conn *c, int64_t *bytes_out)
{
    sqlite3_stmt *st = stmt(c, ST_DB_SIZE);
    if (!st)
        return SK_ERR_INTERNAL;
    int rc = sqlite3_step(st);
    sk_err err = SK_OK;
    if (rc == SQLITE_ROW)
        *bytes_out = sqlite3_column_int64(st, 0);
    else
        err = map_rc(c, rc, "database size");
    sqlite3_reset(st);
    return err;
}

static sk_err sqlite_flags_wrong(sk_conn *c, const char *resource, int64_t *count_out)
{
    sqlite3_stmt *st = stmt(c, ST_FLAGS_WRONG);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, resource);
    int rc = sqlite3_step(st);
    sk_err err = SK_OK;
    if (rc == SQLITE_ROW)
        *count_out = sqlite3_column_int64(st, 0);
    else
        err = map_rc(c, rc, "superseded flags");
    sqlite3_reset(st);
    return err;
}

static sk_err sqlite_resources(sk_conn *c, int (*fn)(void *arg, const char *resource), void *arg)
{
    sqlite3_stmt *st = stmt(c, ST_RESOURCES);
    if (!st)
        return SK_ERR_INTERNAL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (fn(arg, (const char *)sqlite3_column_text(st, 0)))
            break;
    sk_err err = rc == SQLITE_ROW || rc == SQLITE_DONE ? SK_OK : map_rc(c, rc, "list resources");
    sqlite3_reset(st);
    return err;
}

static sk_err sqlite_lease_get(sk_conn *c, int64_t id, sk_lease *out)
{
    sqlite3_stmt *st = stmt(c, ST_LEASE_GET);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    sk_err err = SK_OK;
    if (rc == SQLITE_ROW)
        *out = (sk_lease){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                          sqlite3_column_int64(st, 2)};
    else if (rc == SQLITE_DONE)
        err = SK_ERR_NOT_FOUND;
    else
        err = map_rc(c, rc, "lease get");
    sqlite3_reset(st);
    return err;
}

static sk_err sqlite_lease_put(sk_conn *c, const sk_lease *l)
{
    sqlite3_stmt *st = stmt(c, ST_LEASE_PUT);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, l->id);
    sqlite3_bind_int64(st, 2, l->ttl);
    sqlite3_bind_int64(st, 3, l->expires_at_ms);
    return run_done(c, st, "lease put");
}

static sk_err sqlite_lease_delete(sk_conn *c, int64_t id)
{
    sqlite3_stmt *st = stmt(c, ST_LEASE_DELETE);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, id);
    return run_done(c, st, "lease delete");
}

static sk_err sqlite_leases(sk_conn *c, int64_t before_ms, int limit, sk_lease_fn fn, void *arg)
{
    sqlite3_stmt *st = stmt(c, ST_LEASES);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, before_ms);
    sqlite3_bind_int(st, 2, limit > 0 ? limit : -1);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sk_lease l = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                      sqlite3_column_int64(st, 2)};
        if (fn(arg, &l))
            break;
    }
    sk_err err = rc == SQLITE_ROW || rc == SQLITE_DONE ? SK_OK : map_rc(c, rc, "leases");
    sqlite3_reset(st);
    return err;
}

static sk_err sqlite_kv_lease_keys(sk_conn *c, int64_t lease, sk_kv_fn fn, void *arg)
{
    sqlite3_stmt *st = stmt(c, ST_KV_LEASE_KEYS);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, lease);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sk_kv kv = {
            .key = sqlite3_column_blob(st, 0),
            .key_len = (size_t)sqlite3_column_bytes(st, 0),
            .create_rev = sqlite3_column_int64(st, 1),
            .mod_rev = sqlite3_column_int64(st, 2),
            .version = sqlite3_column_int64(st, 3),
            .lease = sqlite3_column_int64(st, 4),
        };
        if (fn(arg, &kv))
            break;
    }
    sk_err err = rc == SQLITE_ROW || rc == SQLITE_DONE ? SK_OK : map_rc(c, rc, "lease keys");
    sqlite3_reset(st);
    return err;
}

const sk_backend_ops sk_backend_sqlite = {
    .name = "sqlite",
    .connect = sqlite_connect,
    .disconnect = sqlite_disconnect,
    .migrate = sqlite_migrate,
    .begin_write = sqlite_begin_write,
    .get_current = sqlite_get_current,
    .append = sqlite_append,
    .commit_write = sqlite_commit_write,
    .rollback = sqlite_rollback,
    .last_batch = sqlite_last_batch,
    .revisions = sqlite_revisions,
    .get_at = sqlite_get_at,
    .list = sqlite_list,
    .count = sqlite_count,
    .history = sqlite_history,
    .compact_batch = sqlite_compact_batch,
    .compact_claim = sqlite_compact_claim,
    .set_expiry = sqlite_set_expiry,
    .move_expiry = sqlite_move_expiry,
    .expired = sqlite_expired,
    .meta_get = sqlite_meta_get,
    .set_compacted = sqlite_set_compacted,
    .claim_taken = sqlite_claim_taken,
    .claims_release = sqlite_claims_release,
    .claim_insert = sqlite_claim_insert,
    .claims_list = sqlite_claims_list,
    .kv_range = sqlite_kv_range,
    .kv_changes = sqlite_kv_changes,
    .kv_kept = sqlite_kv_kept,
    .kv_rows_after = sqlite_kv_rows_after,
    .kv_docs_put = sqlite_kv_docs_put,
    .kv_docs_last = sqlite_kv_docs_last,
    .take_round_trips = sqlite_take_round_trips,
    .reclaim = sqlite_reclaim,
    .kv_count = sqlite_kv_count,
    .kv_append = sqlite_kv_append,
    .kv_compact = sqlite_kv_compact,
    .db_size = sqlite_db_size,
    .flags_wrong = sqlite_flags_wrong,
    .resources = sqlite_resources,
    .lease_get = sqlite_lease_get,
    .lease_put = sqlite_lease_put,
    .lease_delete = sqlite_lease_delete,
    .leases = sqlite_leases,
    .kv_lease_keys = sqlite_kv_lease_keys,
};
