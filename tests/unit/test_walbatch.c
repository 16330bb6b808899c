/*
 * test_walbatch.c - store/walbatch: what a writer commits through the shim
 * is in the files when the commit returns, as a second connection that
 * reads through SQLite's default VFS sees it: values of every size around
 * the default VFS's 128 KiB write limit, commits of many frames, a WAL
 * restarted from its start after a checkpoint, commits without a sync
 * (synchronous=NORMAL), and an integrity check of the files reopened
 * without the shim.
 */
#include "store/walbatch.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h expects the four headers above to be included first. */
#include <cmocka.h>

typedef struct fixture {
    char dir[64], path[96];
    sqlite3 *writer, *reader;
} fixture;

static void exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fail_msg("%s: %s", sql, msg ? msg : sqlite3_errstr(rc));
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sk-walbatch-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/db", f->dir);
    assert_int_equal(sqlite3_open_v2(f->path, &f->writer,
                                     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, sk_walbatch_vfs()),
                     SQLITE_OK);
    exec(f->writer, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
                    "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB NOT NULL)");
    assert_int_equal(sqlite3_open_v2(f->path, &f->reader, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sqlite3_close(f->reader);
    sqlite3_close(f->writer);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static unsigned char *pattern(size_t n, int seed)
{
    unsigned char *b = malloc(n ? n : 1);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 31 + (size_t)seed * 7 + i / 4096);
    return b;
}

/* Commits (k, a value of n bytes) through the writer. */
static void put(fixture *f, int k, size_t n)
{
    unsigned char *v = pattern(n, k);
    sqlite3_stmt *st = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(f->writer, "INSERT OR REPLACE INTO t VALUES (?1, ?2)", -1, &st, NULL),
        SQLITE_OK);
    sqlite3_bind_int(st, 1, k);
    sqlite3_bind_blob(st, 2, v, (int)n, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    free(v);
}

/* The reader (default VFS) sees exactly the value put for k. */
static void check(sqlite3 *db, int k, size_t n)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT v FROM t WHERE k = ?1", -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int(st, 1, k);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal((size_t)sqlite3_column_bytes(st, 0), n);
    unsigned char *want = pattern(n, k);
    assert_memory_equal(sqlite3_column_blob(st, 0), want, n);
    free(want);
    sqlite3_finalize(st);
}

/* Closes the fixture's connections and reopens the files without the
 * shim, which must pass SQLite's integrity check. */
static sqlite3 *reopen_checked(fixture *f)
{
    sqlite3_close(f->reader);
    sqlite3_close(f->writer);
    f->reader = f->writer = NULL;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    return db;
}

static const size_t sizes[] = {10,          4096,           100000, 131071,
                               131072,      131072 + 4096,  300000, 2 * 131072,
                               1536 * 1024, (size_t)3 << 20};

static void test_every_commit_is_in_the_files(void **state)
{
    fixture *f = *state;
    int n = (int)(sizeof sizes / sizeof *sizes);
    for (int i = 0; i < n; i++) {
        put(f, i, sizes[i]);
        for (int j = 0; j <= i; j++)
            check(f->reader, j, sizes[j]);
    }
    /* many frames in one commit */
    exec(f->writer, "BEGIN");
    for (int k = 100; k < 600; k++)
        put(f, k, 3000);
    exec(f->writer, "COMMIT");
    for (int k = 100; k < 600; k++)
        check(f->reader, k, 3000);
}

static void test_restarted_wal(void **state)
{
    fixture *f = *state;
    for (int round = 0; round < 4; round++) {
        for (int k = 0; k < 50; k++)
            put(f, k, 5000 + (size_t)round * 1000);
        /* the next commit writes the WAL from its start again */
        exec(f->writer, "PRAGMA wal_checkpoint(TRUNCATE)");
        put(f, 1000 + round, 200000);
        for (int k = 0; k < 50; k++)
            check(f->reader, k, 5000 + (size_t)round * 1000);
        check(f->reader, 1000 + round, 200000);
    }
    sqlite3 *db = reopen_checked(f);
    for (int round = 0; round < 4; round++)
        check(db, 1000 + round, 200000);
    sqlite3_close(db);
}

/* A connection committing without a sync (synchronous=NORMAL, as the etcd
 * keyspace decoder's docs do) has nothing to flush the buffer at: its
 * frames must still be in the file when the commit returns, for the reader
 * and for a second writer appending after them through the shim. */
static void test_commits_without_sync(void **state)
{
    fixture *f = *state;
    sqlite3 *second = NULL;
    assert_int_equal(sqlite3_open_v2(f->path, &second, SQLITE_OPEN_READWRITE, sk_walbatch_vfs()),
                     SQLITE_OK);
    exec(f->writer, "PRAGMA synchronous = NORMAL");
    for (int i = 0; i < 20; i++) {
        put(f, i, sizes[i % 10]);
        check(f->reader, i, sizes[i % 10]);
        exec(second, "INSERT OR REPLACE INTO t VALUES (5000, zeroblob(3000))");
        check(f->reader, i, sizes[i % 10]);
    }
    sqlite3_close(second);
    sqlite3 *db = reopen_checked(f);
    for (int i = 0; i < 20; i++)
        check(db, i, sizes[i % 10]);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_commit_is_in_the_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restarted_wal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commits_without_sync, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
