/*
 * etcdsnap.c - etcd's buckets in a bbolt file (see etcdsnap.h).
 *
 * The layout, as etcd 3.4 and 3.5 write it:
 * - Bucket "key": one entry per version. Its key is the revision: the main
 *   revision and the sub-revision as 8-byte big-endian integers joined by
 *   '_' (17 bytes), with a trailing 't' (18 bytes) for a tombstone; so
 *   bbolt's byte order is revision order. Its value is an mvccpb.KeyValue:
 *   1 key (bytes), 2 create_revision, 3 mod_revision, 4 version, 5 value
 *   (bytes), 6 lease (varints for the numbers). A tombstone's carries only
 *   its key.
 * - Bucket "lease": key the lease id (8 bytes big-endian), value a
 *   leasepb.Lease: 1 ID, 2 TTL, 3 RemainingTTL (varints).
 * - Bucket "meta": "consistent_index" (8 bytes big-endian),
 *   "scheduledCompactRev" and "finishedCompactRev" (revisions, 17 bytes as
 *   above, sub 0).
 * On restore etcd takes finishedCompactRev as the compaction, the newest
 * row's revision (or the compaction, if newer) as the current revision,
 * and resumes a scheduled compaction beyond the finished one.
 *
 * Rows are checked once, at open, against what etcd itself writes (a put's
 * mod_revision is its row's main revision, its create_revision is at or
 * below it, its version is at least 1), so a damaged file is refused before
 * anything is written from it; the visits re-decode the same bytes.
 */
#include "core/etcdsnap.h"

#include "core/bbolt.h"
#include "core/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REV_LEN = 17 };
#define MAX_LEASE_TTL 9000000000LL

struct sk_etcdsnap {
    sk_bbolt *db;
    sk_bbolt_bucket key, lease;
    int has_lease;
    sk_etcdsnap_info info;
};

static sk_err fail(char **errmsg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    SK_CHECK(vasprintf(errmsg, fmt, ap) >= 0);
    va_end(ap);
    return SK_ERR_INVALID;
}

static uint64_t be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* A protobuf reader over [p, end): only what these two messages need. */
typedef struct pb {
    const unsigned char *p, *end;
} pb;

static int pb_varint(pb *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        unsigned char b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 1;
        }
    }
    return 0;
}

/* Next field: its number, and either its varint (wire type 0) or its bytes
 * (wire type 2); other wire types are skipped over. 0 at the end, -1 if
 * malformed. */
static int pb_next(pb *r, uint32_t *field, uint64_t *num, const unsigned char **bytes,
                   size_t *len)
{
    for (;;) {
        uint64_t tag, n;
        if (r->p == r->end)
            return 0;
        if (!pb_varint(r, &tag) || tag >> 3 == 0 || tag >> 3 > UINT32_MAX)
            return -1;
        *field = (uint32_t)(tag >> 3);
        switch (tag & 7) {
        case 0:
            if (!pb_varint(r, num))
                return -1;
            *bytes = NULL;
            return 1;
        case 2:
            if (!pb_varint(r, &n) || n > (uint64_t)(r->end - r->p))
                return -1;
            *bytes = r->p;
            *len = (size_t)n;
            r->p += n;
            return 1;
        case 1:
        case 5:
            n = (tag & 7) == 1 ? 8 : 4;
            if (n > (uint64_t)(r->end - r->p))
                return -1;
            r->p += n; /* a field neither message has */
            break;
        default:
            return -1;
        }
    }
}

/* Decodes the entry (k, v) of bucket "key" into *kv; on failure, why. */
static const char *decode_kv(const unsigned char *k, size_t klen, const unsigned char *v,
                             size_t vlen, sk_etcdsnap_kv *kv)
{
    if (!(klen == REV_LEN || (klen == REV_LEN + 1 && k[REV_LEN] == 't')) || k[8] != '_')
        return "its key is not a revision";
    uint64_t main = be64(k), sub = be64(k + 9);
    if (main == 0 || main > INT64_MAX || sub > INT32_MAX)
        return "its revision is out of range";
    sk_etcdsnap_kv r = {.rev = (int64_t)main, .sub = (int32_t)sub, .tombstone = klen > REV_LEN};
    int64_t mod = 0;
    pb in = {v, v + vlen};
    uint32_t field;
    uint64_t num = 0;
    const unsigned char *bytes;
    size_t len = 0;
    int got;
    while ((got = pb_next(&in, &field, &num, &bytes, &len)) > 0) {
        int is_bytes = bytes != NULL;
        if ((field == 1 || field == 5) != is_bytes && field <= 6)
            return "its value is not an mvccpb.KeyValue (a field of the wrong type)";
        switch (field) {
        case 1:
            r.key = bytes;
            r.key_len = len;
            break;
        case 5:
            r.value = bytes;
            r.value_len = len;
            break;
        case 2:
            r.create_rev = (int64_t)num;
            break;
        case 3:
            mod = (int64_t)num;
            break;
        case 4:
            r.version = (int64_t)num;
            break;
        case 6:
            r.lease = (int64_t)num;
            break;
        default:
            break;
        }
    }
    if (got < 0)
        return "its value is not an mvccpb.KeyValue (malformed protobuf)";
    if (!r.key_len)
        return "its key-value has no key";
    if (r.tombstone) {
        r.value = NULL;
        r.value_len = 0;
        r.create_rev = r.version = r.lease = 0;
    } else if (mod != r.rev || r.create_rev < 1 || r.create_rev > r.rev || r.version < 1 ||
               r.lease < 0) {
        return "its key-value's revisions, version or lease are not etcd's";
    }
    *kv = r;
    return NULL;
}

/* Visitors of the buckets; the same walk checks (at open) and visits. */
typedef struct kv_walk {
    sk_etcdsnap_kv_fn fn;
    void *arg;
    char **errmsg;
    int64_t last_rev, last_sub;
} kv_walk;

static sk_err kv_entry(void *arg, const unsigned char *k, size_t klen, const unsigned char *v,
                       size_t vlen, int is_bucket)
{
    kv_walk *w = arg;
    sk_etcdsnap_kv kv;
    const char *why = is_bucket ? "it is a bucket" : decode_kv(k, klen, v, vlen, &kv);
    if (!why && (kv.rev < w->last_rev || (kv.rev == w->last_rev && kv.sub <= w->last_sub)))
        why = "its revision repeats one before it";
    if (why)
        return fail(w->errmsg, "bucket \"key\": entry after revision %lld.%lld: %s",
                    (long long)w->last_rev, (long long)w->last_sub, why);
    w->last_rev = kv.rev;
    w->last_sub = kv.sub;
    return w->fn(w->arg, &kv);
}

typedef struct lease_walk {
    sk_etcdsnap_lease_fn fn;
    void *arg;
    char **errmsg;
} lease_walk;

static sk_err lease_entry(void *arg, const unsigned char *k, size_t klen, const unsigned char *v,
                          size_t vlen, int is_bucket)
{
    lease_walk *w = arg;
    int64_t id = 0, ttl = 0;
    pb in = {v, v + vlen};
    uint32_t field;
    uint64_t num = 0;
    const unsigned char *bytes;
    size_t len = 0;
    int got = 0;
    const char *why = is_bucket || klen != 8 ? "its key is not a lease id" : NULL;
    while (!why && (got = pb_next(&in, &field, &num, &bytes, &len)) > 0) {
        if (field <= 3 && bytes)
            why = "its value is not a leasepb.Lease (a field of the wrong type)";
        else if (field == 1)
            id = (int64_t)num;
        else if (field == 2)
            ttl = (int64_t)num;
    }
    if (!why && got < 0)
        why = "its value is not a leasepb.Lease (malformed protobuf)";
    if (!why && (id <= 0 || (uint64_t)id != be64(k)))
        why = "its id is not the one it is filed under";
    if (!why && (ttl < 0 || ttl > MAX_LEASE_TTL))
        why = "its TTL is out of range";
    if (why)
        return fail(w->errmsg, "bucket \"lease\": an entry: %s", why);
    return w->fn(w->arg, id, ttl);
}

/* Visitors that only count, for the check at open. */
static sk_err count_kv(void *arg, const sk_etcdsnap_kv *kv)
{
    sk_etcdsnap_info *info = arg;
    info->rows++;
    info->tombstones += kv->tombstone;
    if (kv->rev > info->rev)
        info->rev = kv->rev;
    return SK_OK;
}

static sk_err count_lease(void *arg, int64_t id, int64_t ttl)
{
    (void)id;
    (void)ttl;
    ((sk_etcdsnap_info *)arg)->leases++;
    return SK_OK;
}

typedef struct meta_walk {
    sk_etcdsnap_info *info;
    char **errmsg;
} meta_walk;

static sk_err meta_entry(void *arg, const unsigned char *k, size_t klen, const unsigned char *v,
                         size_t vlen, int is_bucket)
{
    meta_walk *w = arg;
    int64_t *rev = NULL;
    if (klen == 19 && memcmp(k, "scheduledCompactRev", 19) == 0)
        rev = &w->info->compact_rev;
    else if (klen == 18 && memcmp(k, "finishedCompactRev", 18) == 0)
        rev = &w->info->compact_finished;
    if (rev && (is_bucket || vlen != REV_LEN || v[8] != '_' || be64(v) > INT64_MAX))
        return fail(w->errmsg, "bucket \"meta\": %.*s is not a revision", (int)klen, k);
    if (rev)
        *rev = (int64_t)be64(v);
    if (klen == 16 && memcmp(k, "consistent_index", 16) == 0) {
        if (is_bucket || vlen != 8 || be64(v) > INT64_MAX)
            return fail(w->errmsg, "bucket \"meta\": consistent_index is not an index");
        w->info->consistent_index = (int64_t)be64(v);
    }
    return SK_OK;
}

sk_err sk_etcdsnap_open(const unsigned char *data, size_t len, sk_etcdsnap **out, char **errmsg)
{
    sk_etcdsnap *s = calloc(1, sizeof *s);
    SK_CHECK_ALLOC(s);
    sk_bbolt_bucket meta;
    sk_err err = sk_bbolt_open(data, len, &s->db, errmsg);
    if (err != SK_OK)
        goto out;
    err = sk_bbolt_bucket_get(s->db, NULL, "key", 3, &s->key, errmsg);
    if (err == SK_OK)
        err = sk_bbolt_bucket_get(s->db, NULL, "meta", 4, &meta, errmsg);
    if (err == SK_ERR_NOT_FOUND)
        err = fail(errmsg, "not an etcd data file: it has no bucket \"key\" or \"meta\"");
    if (err != SK_OK)
        goto out;
    err = sk_bbolt_bucket_get(s->db, NULL, "lease", 5, &s->lease, errmsg);
    s->has_lease = err == SK_OK;
    if (err == SK_ERR_NOT_FOUND)
        err = SK_OK;
    meta_walk mw = {&s->info, errmsg};
    if (err == SK_OK)
        err = sk_bbolt_each(s->db, &meta, meta_entry, &mw, errmsg);
    kv_walk kw = {count_kv, &s->info, errmsg, 0, -1};
    if (err == SK_OK)
        err = sk_bbolt_each(s->db, &s->key, kv_entry, &kw, errmsg);
    lease_walk lw = {count_lease, &s->info, errmsg};
    if (err == SK_OK && s->has_lease)
        err = sk_bbolt_each(s->db, &s->lease, lease_entry, &lw, errmsg);
    if (err != SK_OK)
        goto out;
    sk_etcdsnap_info *i = &s->info;
    if (i->compact_finished > i->compact_rev)
        i->compact_rev = i->compact_finished;
    if (i->compact_rev > i->rev)
        i->rev = i->compact_rev;
    *out = s;
    s = NULL;
out:
    sk_etcdsnap_free(s);
    return err;
}

void sk_etcdsnap_free(sk_etcdsnap *s)
{
    if (!s)
        return;
    sk_bbolt_free(s->db);
    free(s);
}

const sk_etcdsnap_info *sk_etcdsnap_info_of(const sk_etcdsnap *s)
{
    return &s->info;
}

sk_err sk_etcdsnap_each_kv(const sk_etcdsnap *s, sk_etcdsnap_kv_fn fn, void *arg)
{
    char *why = NULL;
    kv_walk kw = {fn, arg, &why, 0, -1};
    sk_err err = sk_bbolt_each(s->db, &s->key, kv_entry, &kw, &why);
    /* open checked every row: only the visitor can fail now */
    SK_CHECK(why == NULL);
    return err;
}

sk_err sk_etcdsnap_each_lease(const sk_etcdsnap *s, sk_etcdsnap_lease_fn fn, void *arg)
{
    char *why = NULL;
    lease_walk lw = {fn, arg, &why};
    sk_err err = s->has_lease ? sk_bbolt_each(s->db, &s->lease, lease_entry, &lw, &why) : SK_OK;
    SK_CHECK(why == NULL);
    return err;
}
