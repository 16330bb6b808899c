/*
 * fuzz_etcd.c - libFuzzer target: the etcd face's request path, from the
 * bytes of a gRPC request body to the store, as the transport runs it
 * (etcd/grpc.h framing, then etcd/service.h on a real SQLite store in a
 * temp dir, opened once per process).
 *
 * Byte 0 picks the method (KV Range/Put/DeleteRange/Txn/Compact,
 * Maintenance Status, or a path no service serves); the rest is the body,
 * which must frame as one message, as the server demands.
 *
 * Invariants checked: the framing parser's lengths stay inside the input;
 * every call answers; an error carries a message; an OK reply decodes as
 * the method's response message, with a header whose revision is the
 * store's at most; Unimplemented exactly for the unserved path.
 */
#include "core/arena.h"
#include "etcd/grpc.h"
#include "etcd/rpc.pb-c.h"
#include "etcd/service.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const paths[] = {
    "/etcdserverpb.KV/Range",       "/etcdserverpb.KV/Put",
    "/etcdserverpb.KV/DeleteRange", "/etcdserverpb.KV/Txn",
    "/etcdserverpb.KV/Compact",     "/etcdserverpb.Maintenance/Status",
    "/etcdserverpb.Watch/Watch",
};
static const ProtobufCMessageDescriptor *const replies[] = {
    &etcdserverpb__range_response__descriptor,      &etcdserverpb__put_response__descriptor,
    &etcdserverpb__delete_range_response__descriptor, &etcdserverpb__txn_response__descriptor,
    &etcdserverpb__compaction_response__descriptor, &etcdserverpb__status_response__descriptor,
    NULL,
};
#define N_PATHS (sizeof paths / sizeof paths[0])

static sk_store *store;
static char dir[] = "/tmp/sk-fuzz-etcd.XXXXXX";

/* The store's files go with the process. */
static void remove_store(void)
{
    static const char *const files[] = {"store.db", "store.db-wal", "store.db-shm"};
    char path[sizeof dir + 16];
    sk_store_close(store);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

static sk_store *store_once(void)
{
    if (!store) {
        char url[64];
        if (!mkdtemp(dir))
            abort();
        snprintf(url, sizeof url, "sqlite:%s/store.db", dir);
        char *msg = NULL;
        if (sk_store_open(url, &store, &msg) != SK_OK) {
            fprintf(stderr, "fuzz_etcd: cannot open %s: %s\n", url, msg ? msg : "");
            abort();
        }
        atexit(remove_store);
    }
    return store;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t route = data[0] % N_PATHS;
    const uint8_t *msg = NULL;
    size_t mlen = 0, flen = 0;
    sk_grpc_frame f = sk_grpc_frame_parse(data + 1, size - 1, 1 << 16, &msg, &mlen, &flen);
    if (f != SK_GRPC_FRAME_OK)
        return 0;
    if (flen > size - 1 || msg + mlen != data + 1 + flen)
        abort();
    sk_etcd_service svc = {store_once(), 1, 2, SK_ETCD_MAX_REQUEST_BYTES, NULL};
    sk_arena *a = sk_arena_new();
    sk_etcd_reply r;
    sk_etcd_call(&svc, paths[route], msg, mlen, a, &r);
    if ((r.code == SK_GRPC_UNIMPLEMENTED) != (replies[route] == NULL))
        abort();
    if (r.code != SK_GRPC_OK && !r.message)
        abort();
    if (r.code == SK_GRPC_OK) {
        ProtobufCMessage *m = protobuf_c_message_unpack(replies[route], NULL, r.body_len, r.body);
        if (!m)
            abort();
        /* Every response message has its header as field 1. */
        Etcdserverpb__ResponseHeader *h = *(Etcdserverpb__ResponseHeader **)(m + 1);
        int64_t rev = 0, compact = 0;
        if (!h || sk_store_revisions(svc.store, &rev, &compact) != SK_OK || h->revision > rev)
            abort();
        protobuf_c_message_free_unpacked(m, NULL);
    }
    sk_arena_free(a);
    return 0;
}
