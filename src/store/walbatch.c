/*
 * walbatch.c - see walbatch.h.
 *
 * A shim file is this struct followed by the default VFS's own file, which
 * does all the work. Only a WAL file buffers: its pending bytes are one
 * contiguous run starting at file offset `at`, and every method other than
 * an appending write first writes them out, so the file behind is exactly
 * what SQLite asked for whenever SQLite (or another connection) can see
 * it. A failed flush is reported by the call that flushed, at the latest
 * the write of the commit's last frame: the commit then fails before it
 * is published.
 */
#include "store/walbatch.h"
#include "core/check.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define SHIM_NAME "sk-walbatch"
/* Appends pending beyond this are written out: a commit's frames are a few
 * hundred KiB; a huge transaction only costs one call per MiB. */
#define MAX_PENDING ((size_t)1 << 20)

typedef struct shim_file {
    sqlite3_file base;
    sqlite3_file *real; /* right after this struct */
    int batching;       /* a WAL file */
    unsigned char *buf;
    size_t len, cap;
    sqlite3_int64 at; /* file offset of buf[0] */
    int commit_next;  /* the last append was a commit frame's header */
} shim_file;

/* A WAL frame is appended as two writes, its header then its page; only
 * a frame header is this long (the file's own header is 32 bytes, a page
 * at least 512). A header whose bytes 4..7 (the database size after the
 * commit) are not zero is a commit's last frame's. */
#define FRAME_HEADER 24

static int is_commit_header(const unsigned char *data, int n)
{
    return n == FRAME_HEADER && (data[4] | data[5] | data[6] | data[7]) != 0;
}

static sqlite3_vfs *default_vfs;
static sqlite3_vfs shim_vfs;

#define REAL(p) (((shim_file *)(p))->real)
#define METHODS(p) (REAL(p)->pMethods)

/* The default VFS writes at most 128 KiB - 1 per call (its pwrite masks
 * the length to 17 bits, so a call of exactly 128 KiB writes nothing and
 * fails with SQLITE_FULL): pending bytes go out in pieces of that size. */
#define WRITE_MAX 0x1ffff

static int flush(sqlite3_file *p)
{
    shim_file *f = (shim_file *)p;
    int rc = SQLITE_OK;
    for (size_t done = 0; done < f->len && rc == SQLITE_OK;) {
        size_t n = f->len - done < WRITE_MAX ? f->len - done : WRITE_MAX;
        rc = METHODS(p)->xWrite(f->real, f->buf + done, (int)n, f->at + (sqlite3_int64)done);
        done += n;
    }
    f->len = 0;
    return rc;
}

static int shim_close(sqlite3_file *p)
{
    shim_file *f = (shim_file *)p;
    int rc = flush(p);
    int rc_close = METHODS(p)->xClose(f->real);
    free(f->buf);
    f->buf = NULL;
    return rc != SQLITE_OK ? rc : rc_close;
}

static int shim_read(sqlite3_file *p, void *out, int n, sqlite3_int64 off)
{
    int rc = flush(p);
    return rc != SQLITE_OK ? rc : METHODS(p)->xRead(REAL(p), out, n, off);
}

static int shim_write(sqlite3_file *p, const void *data, int n, sqlite3_int64 off)
{
    shim_file *f = (shim_file *)p;
    if (!f->batching)
        return METHODS(p)->xWrite(f->real, data, n, off);
    int rc = SQLITE_OK;
    if (f->len > 0 && (off != f->at + (sqlite3_int64)f->len || f->len + (size_t)n > MAX_PENDING))
        rc = flush(p);
    if (rc != SQLITE_OK)
        return rc;
    if ((size_t)n > WRITE_MAX)
        return METHODS(p)->xWrite(f->real, data, n, off);
    if (f->len + (size_t)n > f->cap) {
        size_t cap = f->cap ? f->cap : 64 * 1024;
        while (cap < f->len + (size_t)n)
            cap *= 2;
        unsigned char *buf = realloc(f->buf, cap);
        if (!buf)
            return SQLITE_NOMEM;
        f->buf = buf;
        f->cap = cap;
    }
    if (f->len == 0)
        f->at = off;
    memcpy(f->buf + f->len, data, (size_t)n);
    f->len += (size_t)n;
    /* The commit's last page: out now, before SQLite publishes the commit
     * (it does so next, whether or not it syncs first). */
    if (f->commit_next) {
        f->commit_next = 0;
        return flush(p);
    }
    f->commit_next = is_commit_header(data, n);
    return SQLITE_OK;
}

static int shim_truncate(sqlite3_file *p, sqlite3_int64 size)
{
    int rc = flush(p);
    return rc != SQLITE_OK ? rc : METHODS(p)->xTruncate(REAL(p), size);
}

static int shim_sync(sqlite3_file *p, int flags)
{
    int rc = flush(p);
    return rc != SQLITE_OK ? rc : METHODS(p)->xSync(REAL(p), flags);
}

static int shim_file_size(sqlite3_file *p, sqlite3_int64 *size)
{
    int rc = flush(p);
    return rc != SQLITE_OK ? rc : METHODS(p)->xFileSize(REAL(p), size);
}

static int shim_lock(sqlite3_file *p, int level)
{
    return METHODS(p)->xLock(REAL(p), level);
}

static int shim_unlock(sqlite3_file *p, int level)
{
    int rc = flush(p);
    return rc != SQLITE_OK ? rc : METHODS(p)->xUnlock(REAL(p), level);
}

static int shim_check_reserved(sqlite3_file *p, int *out)
{
    return METHODS(p)->xCheckReservedLock(REAL(p), out);
}

static int shim_file_control(sqlite3_file *p, int op, void *arg)
{
    int rc = flush(p);
    return rc != SQLITE_OK ? rc : METHODS(p)->xFileControl(REAL(p), op, arg);
}

static int shim_sector_size(sqlite3_file *p)
{
    return METHODS(p)->xSectorSize(REAL(p));
}

static int shim_device_characteristics(sqlite3_file *p)
{
    return METHODS(p)->xDeviceCharacteristics(REAL(p));
}

static int shim_shm_map(sqlite3_file *p, int region, int size, int extend, void volatile **out)
{
    return METHODS(p)->xShmMap(REAL(p), region, size, extend, out);
}

static int shim_shm_lock(sqlite3_file *p, int offset, int n, int flags)
{
    return METHODS(p)->xShmLock(REAL(p), offset, n, flags);
}

static void shim_shm_barrier(sqlite3_file *p)
{
    METHODS(p)->xShmBarrier(REAL(p));
}

static int shim_shm_unmap(sqlite3_file *p, int delete_flag)
{
    return METHODS(p)->xShmUnmap(REAL(p), delete_flag);
}

/* Memory-mapped reads exist from version 3 of the methods; without them
 * SQLite reads with xRead, as it does when a fetch gives no page. */
static int shim_fetch(sqlite3_file *p, sqlite3_int64 off, int n, void **out)
{
    int rc = flush(p);
    if (rc == SQLITE_OK && METHODS(p)->iVersion < 3)
        *out = NULL;
    else if (rc == SQLITE_OK)
        rc = METHODS(p)->xFetch(REAL(p), off, n, out);
    return rc;
}

static int shim_unfetch(sqlite3_file *p, sqlite3_int64 off, void *page)
{
    return METHODS(p)->iVersion < 3 ? SQLITE_OK : METHODS(p)->xUnfetch(REAL(p), off, page);
}

static const sqlite3_io_methods shim_methods = {
    .iVersion = 3,
    .xClose = shim_close,
    .xRead = shim_read,
    .xWrite = shim_write,
    .xTruncate = shim_truncate,
    .xSync = shim_sync,
    .xFileSize = shim_file_size,
    .xLock = shim_lock,
    .xUnlock = shim_unlock,
    .xCheckReservedLock = shim_check_reserved,
    .xFileControl = shim_file_control,
    .xSectorSize = shim_sector_size,
    .xDeviceCharacteristics = shim_device_characteristics,
    .xShmMap = shim_shm_map,
    .xShmLock = shim_shm_lock,
    .xShmBarrier = shim_shm_barrier,
    .xShmUnmap = shim_shm_unmap,
    .xFetch = shim_fetch,
    .xUnfetch = shim_unfetch,
};

static int shim_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *p, int flags, int *out_flags)
{
    (void)vfs;
    shim_file *f = (shim_file *)p;
    memset(f, 0, sizeof *f);
    f->real = (sqlite3_file *)(f + 1);
    int rc = default_vfs->xOpen(default_vfs, name, f->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        /* SQLite closes only what reports methods: the shim reports none */
        if (f->real->pMethods)
            f->real->pMethods->xClose(f->real);
        return rc;
    }
    /* WAL needs the shared-memory methods (version 2), which every file
     * of the default VFS has */
    SK_CHECK(f->real->pMethods->iVersion >= 2);
    f->batching = (flags & SQLITE_OPEN_WAL) != 0;
    f->base.pMethods = &shim_methods;
    return SQLITE_OK;
}

static void register_shim(void)
{
    default_vfs = sqlite3_vfs_find(NULL);
    SK_CHECK(default_vfs && default_vfs->iVersion >= 2);
    shim_vfs = *default_vfs;
    shim_vfs.zName = SHIM_NAME;
    shim_vfs.pNext = NULL;
    /* the default file right after the shim's, 8-aligned */
    SK_CHECK(sizeof(shim_file) % 8 == 0);
    shim_vfs.szOsFile = (int)sizeof(shim_file) + default_vfs->szOsFile;
    shim_vfs.xOpen = shim_open;
    SK_CHECK(sqlite3_vfs_register(&shim_vfs, 0) == SQLITE_OK);
}

const char *sk_walbatch_vfs(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_shim);
    return SHIM_NAME;
}
