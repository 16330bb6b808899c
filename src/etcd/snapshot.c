/*
 * snapshot.c - see snapshot.h.
 *
 * The file holds what an etcd member's backend holds for the keyspace:
 * bucket "key" with the version rows etcd's compaction leaves (at or below
 * the compaction, each key's newest row there if it is live:
 * sk_store_kv_kept at the compaction; after it, every row:
 * sk_store_kv_changes), keyed as etcd keys them
 * (main and sub revision, 't' for a tombstone) with the mvccpb.KeyValue it
 * marshals; bucket "lease" with each lease as a leasepb.Lease under its id;
 * bucket "meta" with the compaction (scheduledCompactRev and
 * finishedCompactRev) and a consistent index. Membership, auth and alarm
 * buckets are left out: a restore writes the new cluster's members itself.
 *
 * The file is built in an unlinked temporary file first (core/bbolt.h's
 * writer, a page at a time), then sent: the stream's queue is bounded, so
 * the worker waits for the client to drain it rather than holding the file
 * in memory twice. The rows come from two statements, the kept rows and
 * the later ones; a compaction between them could remove rows the file's
 * compaction says are there, so the compaction is read again after them,
 * and the file is built again if it moved. Leases are read after the rows.
 */
#include "etcd/snapshot.h"
#include "core/bbolt.h"
#include "core/check.h"
#include "core/log.h"
#include "etcd/kv.pb-c.h"
#include "etcd/lease.pb-c.h"
#include "etcd/rpc.pb-c.h"
#include "etcd/service.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* etcd's page size on amd64, and the chunk its Snapshot sends. */
#define PAGE_SIZE 4096
#define CHUNK_BYTES (32 * 1024)
#define SHA256_BYTES 32
/* How long a chunk waits for the client between tries when the queue is full. */
#define DRAIN_WAIT_NS 2000000L

typedef struct snap {
    const sk_etcd_service *svc;
    sk_etcd_stream *st;
    int started;
} snap;

static void *snap_open(const sk_etcd_service *svc, sk_etcd_stream *st)
{
    snap *s = calloc(1, sizeof *s);
    SK_CHECK_ALLOC(s);
    s->svc = svc;
    s->st = st;
    return s;
}

static sk_err file_sink(void *arg, uint64_t off, const void *data, size_t len)
{
    int fd = *(int *)arg;
    const char *p = data;
    while (len) {
        ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return errno == ENOSPC ? SK_ERR_NO_SPACE : SK_ERR_INTERNAL;
        p += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
    return SK_OK;
}

static int put_row(void *arg, const sk_kv_row *row)
{
    sk_bbolt_writer *w = arg;
    unsigned char key[SK_ETCD_BOLT_KEY_MAX];
    size_t key_len = sk_etcd_bolt_key(row, key), len;
    uint8_t *value = sk_etcd_bolt_value(row, &len);
    sk_err err = sk_bbolt_writer_put(w, key, key_len, value, len);
    free(value);
    return err != SK_OK;
}

static int put_change(void *arg, const sk_kv_row *row, const sk_kv *prev)
{
    (void)prev;
    return put_row(arg, row);
}

typedef struct leases {
    sk_lease *v;
    size_t n, cap;
} leases;

static int collect_lease(void *arg, const sk_lease *l)
{
    leases *ls = arg;
    if (ls->n == ls->cap) {
        ls->cap = ls->cap ? ls->cap * 2 : 64;
        ls->v = realloc(ls->v, ls->cap * sizeof *ls->v);
        SK_CHECK_ALLOC(ls->v);
    }
    ls->v[ls->n++] = *l;
    return 0;
}

static int by_id(const void *a, const void *b)
{
    int64_t x = ((const sk_lease *)a)->id, y = ((const sk_lease *)b)->id;
    return (x > y) - (x < y);
}

static sk_err put_leases(sk_store *store, sk_bbolt_writer *w)
{
    leases ls = {0};
    sk_err err = sk_store_leases(store, INT64_MAX, 0, collect_lease, &ls);
    if (err == SK_OK && ls.n) /* qsort of no array is undefined */
        qsort(ls.v, ls.n, sizeof *ls.v, by_id);
    for (size_t i = 0; err == SK_OK && i < ls.n; i++) {
        unsigned char key[8], value[32];
        sk_etcd_put_be64(key, (uint64_t)ls.v[i].id);
        Leasepb__Lease m = LEASEPB__LEASE__INIT;
        m.id = ls.v[i].id;
        m.ttl = ls.v[i].ttl;
        SK_CHECK(leasepb__lease__get_packed_size(&m) <= sizeof value);
        size_t len = leasepb__lease__pack(&m, value);
        err = sk_bbolt_writer_put(w, key, sizeof key, value, len);
    }
    free(ls.v);
    return err;
}

/* etcd's revToBytes of a main revision: 8 bytes big-endian, '_', 8 of sub 0. */
static sk_err put_meta_rev(sk_bbolt_writer *w, const char *name, int64_t rev)
{
    unsigned char v[17] = {0};
    sk_etcd_put_be64(v, (uint64_t)rev);
    v[8] = '_';
    return sk_bbolt_writer_put(w, name, strlen(name), v, sizeof v);
}

/* Writes the snapshot file of the store at rev, compacted at compact, into
 * fd; *size_out its length. */
static sk_err build_at(const sk_etcd_service *svc, int64_t rev, int64_t compact, int fd,
                       uint64_t *size_out)
{
    sk_bbolt_writer *w = sk_bbolt_writer_new(PAGE_SIZE, file_sink, &fd);
    sk_err err = sk_bbolt_writer_bucket(w, "key", 3);
    if (err == SK_OK && compact > 0)
        err = sk_store_kv_kept(svc->store, compact, compact, put_row, w);
    if (err == SK_OK)
        err = sk_store_kv_changes(svc->store, compact, rev, put_change, w);
    if (err == SK_OK)
        err = sk_bbolt_writer_bucket(w, "lease", 5);
    if (err == SK_OK)
        err = put_leases(svc->store, w);
    if (err == SK_OK)
        err = sk_bbolt_writer_bucket(w, "meta", 4);
    unsigned char index[8];
    sk_etcd_put_be64(index, (uint64_t)rev);
    if (err == SK_OK)
        err = sk_bbolt_writer_put(w, "consistent_index", 16, index, sizeof index);
    if (err == SK_OK && compact > 0)
        err = put_meta_rev(w, "finishedCompactRev", compact);
    if (err == SK_OK && compact > 0)
        err = put_meta_rev(w, "scheduledCompactRev", compact);
    /* the transaction id: any past bbolt's first two */
    if (err == SK_OK)
        err = sk_bbolt_writer_finish(w, 2 + (uint64_t)rev, size_out);
    sk_bbolt_writer_free(w);
    return err;
}

/* The snapshot at the current revision, built again (a few times at most)
 * while a compaction moves under it. */
static sk_err build(const sk_etcd_service *svc, int fd, uint64_t *size_out)
{
    sk_err err = SK_OK;
    for (int attempt = 0; attempt < 3; attempt++) {
        int64_t rev = 0, compact = 0, compact_after = 0, ignored;
        err = sk_store_revisions(svc->store, &rev, &compact);
        if (err == SK_OK && ftruncate(fd, 0) != 0)
            err = SK_ERR_INTERNAL;
        if (err == SK_OK)
            err = build_at(svc, rev, compact, fd, size_out);
        if (err == SK_OK)
            err = sk_store_revisions(svc->store, &ignored, &compact_after);
        if (err != SK_OK || compact_after == compact)
            return err;
        err = SK_ERR_CONFLICT;
    }
    return err;
}

/* Sends one response, waiting while the client drains a full queue. */
static sk_err send_chunk(sk_etcd_stream *st, uint64_t remaining, const uint8_t *blob, size_t len)
{
    Etcdserverpb__SnapshotResponse m = ETCDSERVERPB__SNAPSHOT_RESPONSE__INIT;
    m.remaining_bytes = remaining;
    m.blob.data = (uint8_t *)blob;
    m.blob.len = len;
    uint8_t buf[CHUNK_BYTES + 32];
    SK_CHECK(etcdserverpb__snapshot_response__get_packed_size(&m) <= sizeof buf);
    size_t n = etcdserverpb__snapshot_response__pack(&m, buf);
    sk_err err;
    while ((err = sk_etcd_stream_send(st, SK_ETCD_SEND_DATA, buf, n)) == SK_ERR_TOO_MANY_REQUESTS)
        nanosleep(&(struct timespec){0, DRAIN_WAIT_NS}, NULL);
    return err;
}

/* Streams the file's bytes in chunks, then its SHA-256. */
static sk_err send_file(sk_etcd_stream *st, int fd, uint64_t size)
{
    gnutls_hash_hd_t sha;
    SK_CHECK(gnutls_hash_init(&sha, GNUTLS_DIG_SHA256) == 0);
    uint8_t chunk[CHUNK_BYTES];
    sk_err err = SK_OK;
    for (uint64_t sent = 0; err == SK_OK && sent < size;) {
        size_t want = size - sent < CHUNK_BYTES ? (size_t)(size - sent) : CHUNK_BYTES;
        ssize_t n = pread(fd, chunk, want, (off_t)sent);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            err = SK_ERR_INTERNAL;
            break;
        }
        sent += (uint64_t)n;
        gnutls_hash(sha, chunk, (size_t)n);
        err = send_chunk(st, size - sent, chunk, (size_t)n);
    }
    uint8_t digest[SHA256_BYTES];
    gnutls_hash_deinit(sha, digest);
    if (err == SK_OK)
        err = send_chunk(st, 0, digest, sizeof digest);
    return err;
}

static void snap_message(void *state, const uint8_t *msg, size_t len)
{
    snap *s = state;
    if (s->started) /* a server-streaming call takes one request */
        return;
    s->started = 1;
    if (!etcdserverpb__snapshot_request__unpack(NULL, len, msg)) {
        sk_etcd_stream_end(s->st, SK_GRPC_INTERNAL, "grpc: error unmarshalling request");
        return;
    }
    FILE *tmp = tmpfile();
    uint64_t size = 0;
    sk_err err = tmp ? build(s->svc, fileno(tmp), &size) : SK_ERR_INTERNAL;
    if (err != SK_OK) {
        sk_log_warn("etcd: snapshot failed: %s", sk_err_name(err));
        sk_etcd_stream_end(s->st, sk_err_grpc_code(err), "etcdserver: snapshot failed");
    } else {
        sk_log_info("etcd: sending a snapshot of %llu bytes", (unsigned long long)size);
        err = send_file(s->st, fileno(tmp), size);
        /* UNAVAILABLE: the client went away; nothing to answer */
        if (err != SK_ERR_UNAVAILABLE)
            sk_etcd_stream_end(s->st, err == SK_OK ? SK_GRPC_OK : sk_err_grpc_code(err),
                               err == SK_OK ? NULL : "etcdserver: snapshot failed");
    }
    if (tmp)
        fclose(tmp);
}

static void snap_close(void *state)
{
    free(state);
}

const sk_etcd_stream_ops sk_etcd_snapshot_ops = {
    .open = snap_open,
    .on_message = snap_message,
    .on_close = snap_close,
};
