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
 * Group commit in store.c makes that one fsync per batch, not per write.
 *
 * The writer takes the revision lock with BEGIN IMMEDIATE: SQLite has one
 * writer at a time, so revisions commit in order. Readers use WAL snapshots
 * and never block the writer.
 */
#include "core/check.h"
#include "core/util.h"
#include "store/backend.h"
#include "store/migrations.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_READ_REV,
    ST_SET_REV,
    ST_REVISIONS,
    ST_GET_CURRENT,
    ST_LIST_NS_KEYS,
    ST_INSERT_HISTORY,
    ST_UPSERT_CURRENT,
    ST_DELETE_CURRENT,
    ST_GET_AT,
    ST_LIST_ONE_NS,
    ST_LIST_ALL,
    ST_HISTORY,
    ST_COMPACT,
    ST_SET_COMPACT,
    ST_META_GET,
    ST__COUNT
};

#define ROW_COLS "h.rev, h.create_rev, h.prev_rev, h.deleted, h.resource, h.namespace, h.name, h.uid, h.value"

/* The newest version of h's key at or before snapshot ?4 has no successor
 * in (h.rev, ?4]. */
#define LATEST_AT_SNAPSHOT                                                                         \
    "NOT EXISTS (SELECT 1 FROM sk_history n WHERE n.resource = h.resource AND n.namespace = "     \
    "h.namespace AND n.name = h.name AND n.rev > h.rev AND n.rev <= ?4)"

static const char *const sql_text[ST__COUNT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_READ_REV] = "SELECT rev FROM sk_revision WHERE id = 1",
    [ST_SET_REV] = "UPDATE sk_revision SET rev = ?1 WHERE id = 1",
    [ST_REVISIONS] = "SELECT rev, compact_rev FROM sk_revision WHERE id = 1",
    [ST_GET_CURRENT] = "SELECT " ROW_COLS " FROM sk_current c JOIN sk_history h ON h.rev = c.rev "
                       "WHERE c.resource = ?1 AND c.namespace = ?2 AND c.name = ?3",
    [ST_LIST_NS_KEYS] = "SELECT " ROW_COLS " FROM sk_current c JOIN sk_history h ON h.rev = c.rev "
                        "WHERE c.namespace = ?1 ORDER BY c.resource, c.name",
    [ST_INSERT_HISTORY] = "INSERT INTO sk_history (rev, resource, namespace, name, uid, create_rev, "
                          "prev_rev, deleted, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [ST_UPSERT_CURRENT] = "INSERT INTO sk_current (resource, namespace, name, rev) VALUES (?1, ?2, "
                          "?3, ?4) ON CONFLICT (resource, namespace, name) DO UPDATE SET rev = "
                          "excluded.rev",
    [ST_DELETE_CURRENT] =
        "DELETE FROM sk_current WHERE resource = ?1 AND namespace = ?2 AND name = ?3",
    [ST_GET_AT] = "SELECT " ROW_COLS " FROM sk_history h WHERE h.resource = ?1 AND h.namespace = "
                  "?2 AND h.name = ?3 AND h.rev <= ?4 ORDER BY h.rev DESC LIMIT 1",
    [ST_LIST_ONE_NS] = "SELECT " ROW_COLS " FROM sk_history h WHERE h.resource = ?1 AND "
                       "h.namespace = ?2 AND h.name > ?3 AND h.rev <= ?4 AND h.deleted = 0 "
                       "AND " LATEST_AT_SNAPSHOT " ORDER BY h.resource, h.namespace, h.name "
                       "LIMIT ?5",
    [ST_LIST_ALL] = "SELECT " ROW_COLS " FROM sk_history h WHERE h.resource = ?1 AND "
                    "(h.namespace, h.name) > (?2, ?3) AND h.rev <= ?4 AND h.deleted = 0 "
                    "AND " LATEST_AT_SNAPSHOT " ORDER BY h.resource, h.namespace, h.name "
                    "LIMIT ?5",
    [ST_HISTORY] = "SELECT " ROW_COLS " FROM sk_history h WHERE h.rev > ?1 ORDER BY h.rev LIMIT ?2",
    /* A version goes when a newer version of its key exists at or before the
     * compact revision. A tombstone goes only once nothing older is left, so
     * a batch boundary can never resurrect a deleted object. */
    [ST_COMPACT] =
        "DELETE FROM sk_history WHERE rev IN (SELECT h.rev FROM sk_history h WHERE h.rev <= ?1 "
        "AND (EXISTS (SELECT 1 FROM sk_history n WHERE n.resource = h.resource AND n.namespace = "
        "h.namespace AND n.name = h.name AND n.rev > h.rev AND n.rev <= ?1) OR (h.deleted = 1 "
        "AND NOT EXISTS (SELECT 1 FROM sk_history o WHERE o.resource = h.resource AND "
        "o.namespace = h.namespace AND o.name = h.name AND o.rev < h.rev))) LIMIT ?2)",
    [ST_SET_COMPACT] = "UPDATE sk_revision SET compact_rev = max(compact_rev, ?1) WHERE id = 1",
    [ST_META_GET] = "SELECT value FROM sk_meta WHERE key = ?1",
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
    return SK_ERR_INTERNAL;
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

static sk_err sqlite_connect(const char *url, sk_conn **out, char **errmsg)
{
    sk_err err = SK_OK;
    const char *path = strncmp(url, "sqlite:", 7) == 0 ? url + 7 : url;
    sk_conn *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    int rc = sqlite3_open_v2(path, &c->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        if (asprintf(errmsg, "cannot open SQLite database %s: %s", path,
                     c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc)) < 0)
            *errmsg = NULL;
        err = SK_ERR_UNAVAILABLE;
        goto out;
    }
    sqlite3_busy_timeout(c->db, 10000);
    /* auto_vacuum must precede the first table; it is a no-op on an existing file. */
    char *msg = NULL;
    rc = sqlite3_exec(c->db,
                      "PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL; "
                      "PRAGMA synchronous = FULL; PRAGMA foreign_keys = OFF;",
                      NULL, NULL, &msg);
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
    char *seed =
        sqlite3_mprintf("INSERT OR IGNORE INTO sk_meta (key, value) VALUES ('token_secret', %Q)", hex);
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

static sk_err sqlite_get_current(sk_conn *c, const char *resource, const char *ns,
                                 const char *name, sk_row *out)
{
    sqlite3_stmt *st = stmt(c, ST_GET_CURRENT);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, resource);
    bind_text(st, 2, ns);
    bind_text(st, 3, name);
    return one_row(c, st, out, "get current");
}

static sk_err sqlite_list_namespace(sk_conn *c, const char *ns, sk_row_fn fn, void *arg)
{
    sqlite3_stmt *st = stmt(c, ST_LIST_NS_KEYS);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, ns);
    return visit_rows(c, st, fn, arg, "list namespace");
}

static sk_err sqlite_append(sk_conn *c, const sk_row *row)
{
    sqlite3_stmt *st = stmt(c, ST_INSERT_HISTORY);
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
    sk_err err = run_done(c, st, "insert history");
    if (err != SK_OK)
        return err;
    st = stmt(c, row->deleted ? ST_DELETE_CURRENT : ST_UPSERT_CURRENT);
    if (!st)
        return SK_ERR_INTERNAL;
    bind_text(st, 1, row->resource);
    bind_text(st, 2, row->ns);
    bind_text(st, 3, row->name);
    if (!row->deleted)
        sqlite3_bind_int64(st, 4, row->rev);
    return run_done(c, st, "update current");
}

static sk_err sqlite_commit_write(sk_conn *c, int64_t rev)
{
    sqlite3_stmt *st = stmt(c, ST_SET_REV);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, rev);
    sk_err err = run_done(c, st, "set revision");
    if (err != SK_OK)
        return err;
    st = stmt(c, ST_COMMIT);
    return st ? run_done(c, st, "commit") : SK_ERR_INTERNAL;
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

static sk_err sqlite_list(sk_conn *c, const sk_list_query *q, sk_row_fn fn, void *arg)
{
    sqlite3_stmt *st = stmt(c, q->ns ? ST_LIST_ONE_NS : ST_LIST_ALL);
    if (!st)
        return SK_ERR_INTERNAL;
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
    sqlite3_bind_int(st, 5, q->limit);
    return visit_rows(c, st, fn, arg, "list");
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

static sk_err sqlite_compact_batch(sk_conn *c, int64_t upto_rev, int batch, int64_t *removed_out)
{
    sqlite3_stmt *st = stmt(c, ST_COMPACT);
    if (!st)
        return SK_ERR_INTERNAL;
    sqlite3_bind_int64(st, 1, upto_rev);
    sqlite3_bind_int(st, 2, batch);
    sk_err err = run_done(c, st, "compact");
    if (err != SK_OK)
        return err;
    int64_t removed = sqlite3_changes64(c->db);
    if (removed == 0) {
        st = stmt(c, ST_SET_COMPACT);
        if (!st)
            return SK_ERR_INTERNAL;
        sqlite3_bind_int64(st, 1, upto_rev);
        if ((err = run_done(c, st, "set compact revision")) != SK_OK)
            return err;
        /* Hand freed pages back to the file system and keep the WAL short. */
        sqlite3_exec(c->db, "PRAGMA incremental_vacuum; PRAGMA wal_checkpoint(TRUNCATE);", NULL,
                     NULL, NULL);
    }
    *removed_out = removed;
    return SK_OK;
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

const sk_backend_ops sk_backend_sqlite = {
    .name = "sqlite",
    .connect = sqlite_connect,
    .disconnect = sqlite_disconnect,
    .migrate = sqlite_migrate,
    .begin_write = sqlite_begin_write,
    .get_current = sqlite_get_current,
    .list_namespace = sqlite_list_namespace,
    .append = sqlite_append,
    .commit_write = sqlite_commit_write,
    .rollback = sqlite_rollback,
    .revisions = sqlite_revisions,
    .get_at = sqlite_get_at,
    .list = sqlite_list,
    .history = sqlite_history,
    .compact_batch = sqlite_compact_batch,
    .meta_get = sqlite_meta_get,
};
