/*
 * import.c - `sqlkube import --etcd-snapshot FILE` (see import.h).
 *
 * The file is read into memory and checked whole before the store is
 * touched: the SHA-256 that `etcdctl snapshot save` appends (present when
 * the size is 32 more than a multiple of 512, the test etcd's own restore
 * applies), then every page and row (core/etcdsnap). A member's db file
 * copied directly has no such hash; it is taken, checked page by page, as
 * `etcdctl snapshot restore --skip-hash-check` would take it.
 *
 * Leases are granted afresh: each one's TTL runs from the import, as an
 * etcd member's leases restart their TTL when it becomes leader (a
 * lease's remaining time is not in the file unless checkpointing was on).
 *
 * Progress goes to stderr only when it is a terminal, at most every 200 ms,
 * so logs and pipes see only the summary.
 */
#include "cmd/import.h"

#include "core/check.h"
#include "core/etcdsnap.h"
#include "core/util.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SHA256_LEN = 32 };

typedef struct importer {
    const sk_etcdsnap *snap;
    const sk_etcdsnap_info *info;
    int tty;
    int64_t done, last_ms, now_ms;
    sk_import_row_fn emit_row;
    sk_import_lease_fn emit_lease;
    void *emit_arg;
} importer;

static sk_err row_fn(void *arg, const sk_etcdsnap_kv *kv)
{
    importer *im = arg;
    sk_kv_row row = {{kv->key, kv->key_len, kv->value, kv->value_len, kv->create_rev, kv->rev,
                      kv->version, kv->lease},
                     kv->sub,
                     kv->tombstone};
    sk_err err = im->emit_row(im->emit_arg, &row);
    im->done++;
    if (im->tty && im->done % 1024 == 0) {
        int64_t now = sk_now_ms();
        if (now - im->last_ms >= 200) {
            fprintf(stderr, "\rimporting: %lld of %lld rows (%d%%)", (long long)im->done,
                    (long long)im->info->rows, (int)(100 * im->done / im->info->rows));
            im->last_ms = now;
        }
    }
    return err;
}

static sk_err rows(void *arg, sk_import_row_fn emit, void *emit_arg)
{
    importer *im = arg;
    im->emit_row = emit;
    im->emit_arg = emit_arg;
    sk_err err = sk_etcdsnap_each_kv(im->snap, row_fn, im);
    if (err == SK_OK && im->tty && im->done >= 1024)
        fprintf(stderr, "\rimporting: %lld of %lld rows (100%%); leases, then commit",
                (long long)im->done, (long long)im->info->rows);
    return err;
}

static sk_err lease_fn(void *arg, int64_t id, int64_t ttl)
{
    importer *im = arg;
    if (ttl < SK_LEASE_MIN_TTL)
        ttl = SK_LEASE_MIN_TTL;
    sk_lease l = {id, ttl, im->now_ms + ttl * 1000};
    return im->emit_lease(im->emit_arg, &l);
}

static sk_err leases(void *arg, sk_import_lease_fn emit, void *emit_arg)
{
    importer *im = arg;
    im->emit_lease = emit;
    im->emit_arg = emit_arg;
    im->now_ms = sk_wall_ms();
    return sk_etcdsnap_each_lease(im->snap, lease_fn, im);
}

/* 0 if the file has etcdctl's hash and it matches, or has none (*hashed
 * says which); else 1 with the reason printed. */
static int check_hash(const char *path, const unsigned char *data, size_t len, int *hashed)
{
    *hashed = len % 512 == SHA256_LEN;
    if (!*hashed)
        return 0;
    unsigned char sum[SHA256_LEN];
    SK_CHECK(gnutls_hash_fast(GNUTLS_DIG_SHA256, data, len - SHA256_LEN, sum) == 0);
    if (memcmp(sum, data + len - SHA256_LEN, SHA256_LEN) == 0)
        return 0;
    fprintf(stderr,
            "sqlkube: %s: the snapshot's SHA-256 does not match its contents: the file is "
            "damaged; nothing was imported\n",
            path);
    return 1;
}

int sk_cmd_import_snapshot(const char *db, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 1, hashed = 0;
    struct stat st;
    unsigned char *data = NULL;
    sk_etcdsnap *snap = NULL;
    char *why = NULL;
    int64_t start = sk_now_ms();
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "sqlkube: %s: %s\n", path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {
        fprintf(stderr, "sqlkube: %s: not a snapshot file (%s)\n", path,
                S_ISREG(st.st_mode) ? "empty" : "not a regular file");
        goto out;
    }
    /* Read into memory, not mapped: the whole file is checked and then
     * walked again for the rows, and a mapping (even MAP_PRIVATE) shows a
     * member's db file changing underneath, which would turn rows that
     * passed the check into a failure halfway through the import. */
    size_t len = 0;
    data = (unsigned char *)sk_read_file(path, (size_t)st.st_size, &len);
    if (!data) {
        fprintf(stderr, "sqlkube: %s: %s\n", path,
                errno == EFBIG ? "the file grew while it was read" : strerror(errno));
        goto out;
    }
    if (check_hash(path, data, len, &hashed) != 0)
        goto out;
    if (sk_etcdsnap_open(data, hashed ? len - SHA256_LEN : len, &snap, &why) != SK_OK) {
        fprintf(stderr, "sqlkube: %s: not a usable etcd snapshot: %s; nothing was imported\n",
                path, why);
        goto out;
    }
    const sk_etcdsnap_info *info = sk_etcdsnap_info_of(snap);
    importer im = {snap, info, isatty(STDERR_FILENO), 0, 0, 0, NULL, NULL, NULL};
    sk_store_import imp = {info->rev,  info->compact_rev, info->compact_finished, &im, rows,
                           leases};
    sk_err err = sk_store_kv_import(db, &imp, &why);
    if (im.tty && im.done >= 1024)
        fputc('\n', stderr);
    if (err != SK_OK) {
        fprintf(stderr, "sqlkube: import of %s failed: %s; the store is unchanged\n", path,
                why ? why : sk_err_name(err));
        goto out;
    }
    int64_t ms = sk_now_ms() - start;
    printf("imported %s%s: %lld rows (%lld deletions), %lld leases; revision %lld, compacted "
           "at %lld; %.1f s, %.0f rows/s\n",
           path, hashed ? "" : " (no SHA-256 appended: checked page by page)",
           (long long)info->rows, (long long)info->tombstones, (long long)info->leases,
           (long long)info->rev, (long long)info->compact_rev, (double)ms / 1000,
           ms > 0 ? (double)info->rows * 1000 / (double)ms : (double)info->rows);
    rc = 0;
out:
    free(why);
    sk_etcdsnap_free(snap);
    free(data);
    if (fd >= 0)
        close(fd);
    return rc;
}
