/*
 * fuzz_etcdsnap.c - libFuzzer target: the etcd snapshot reader
 * (core/etcdsnap.h over core/bbolt.h) on arbitrary files.
 *
 * Random bytes almost never pass a meta page's checksum, so byte 0 picks
 * how the input becomes a file: even, the rest as it is; odd, a valid
 * etcd file (tests/support/bbolt_image, with a branch page, inline buckets
 * and rows of every kind) with the rest of the input XORed over it from
 * byte 512 on, its meta checksums then recomputed, so the fuzzer explores
 * damaged pages behind valid meta pages.
 *
 * Invariants checked: a refusal is SK_ERR_INVALID with a message and no
 * handle; an accepted file visits exactly the rows and leases open counted,
 * in strictly increasing (rev, sub), each at or below the revision open
 * reported and with the shape etcd writes (a put's mod revision is its
 * row's; a tombstone carries nothing but its key), and the compaction is
 * at or below the revision.
 */
#include "bbolt_image.h"
#include "core/etcdsnap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct check {
    const sk_etcdsnap_info *info;
    int64_t n, last_rev, last_sub, leases;
} check;

static sk_err on_kv(void *arg, const sk_etcdsnap_kv *kv)
{
    check *c = arg;
    if (kv->rev < c->last_rev || (kv->rev == c->last_rev && kv->sub <= c->last_sub) ||
        kv->rev < 1 || kv->rev > c->info->rev || kv->sub < 0 || kv->key_len == 0)
        abort();
    if (kv->tombstone ? kv->value_len || kv->create_rev || kv->version || kv->lease
                      : kv->create_rev < 1 || kv->create_rev > kv->rev || kv->version < 1 ||
                            kv->lease < 0)
        abort();
    c->last_rev = kv->rev;
    c->last_sub = kv->sub;
    c->n++;
    return SK_OK;
}

static sk_err on_lease(void *arg, int64_t id, int64_t ttl)
{
    check *c = arg;
    if (id <= 0 || ttl < 0)
        abort();
    c->leases++;
    return SK_OK;
}

static const bi_row rows[] = {
    {2, 0, 0, "/registry/a", "1", 2, 2, 1, 0},  {3, 0, 0, "/registry/b", "2", 3, 3, 1, 0},
    {3, 1, 0, "/registry/c", "3", 3, 3, 1, 7},  {4, 0, 0, "/registry/a", "4", 2, 4, 2, 0},
    {5, 0, 1, "/registry/b", NULL, 0, 0, 0, 0}, {6, 0, 0, "/registry/d", "", 6, 6, 1, 0},
};
static const int64_t lease_ids[] = {7, 9}, lease_ttls[] = {60, 3600};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned char *file;
    size_t len;
    if (data[0] & 1) {
        bi_spec spec = {rows, 6, 3, lease_ids, lease_ttls, 2, 3, 0};
        file = bi_build(&spec, &len);
        for (size_t i = 1; i < size && BI_PAGE + i - 1 < len; i++)
            file[BI_PAGE + i - 1] ^= data[i];
        bi_fix_meta(file, 0);
        bi_fix_meta(file, BI_PAGE);
    } else {
        len = size - 1;
        file = malloc(len ? len : 1);
        if (!file)
            abort();
        memcpy(file, data + 1, len);
    }
    sk_etcdsnap *snap = (sk_etcdsnap *)0x1;
    char *why = NULL;
    sk_err err = sk_etcdsnap_open(file, len, &snap, &why);
    if (err != SK_OK) {
        if (err != SK_ERR_INVALID || !why || snap != (sk_etcdsnap *)0x1)
            abort();
        free(why);
        free(file);
        return 0;
    }
    if (why)
        abort();
    const sk_etcdsnap_info *info = sk_etcdsnap_info_of(snap);
    check c = {info, 0, 0, -1, 0};
    if (sk_etcdsnap_each_kv(snap, on_kv, &c) != SK_OK || c.n != info->rows ||
        sk_etcdsnap_each_lease(snap, on_lease, &c) != SK_OK || c.leases != info->leases ||
        info->compact_rev > info->rev || info->compact_finished > info->compact_rev)
        abort();
    sk_etcdsnap_free(snap);
    free(file);
    return 0;
}
