/*
 * fuzz_etcd.c - libFuzzer target: the etcd face's request path, from the
 * bytes of a gRPC request body to the store, as the transport runs it
 * (etcd/grpc.h framing, then etcd/service.h on a real SQLite store in a
 * temp dir, opened once per process).
 *
 * Byte 0 picks the method (KV Range/Put/DeleteRange/Txn/Compact,
 * Maintenance Status, or a path no unary service serves, Lease Grant/Revoke/
 * TimeToLive/Leases, Cluster MemberList, Maintenance Alarm, HashKV and
 * Defragment); the rest is
 * the body, which must frame as one message, as the server demands. Byte 0 of
 * 0xFF instead makes the rest a streaming call's DATA (Watch): reassembled
 * from chunks of byte 1's size as the transport does, each message decoded
 * as a WatchRequest and a create's range read as the Watch service reads it.
 *
 * Invariants checked: the framing parser's lengths stay inside the input;
 * every call answers; an error carries a message; an OK reply decodes as
 * the method's response message, with a header whose revision is the
 * store's at most; Unimplemented exactly for the unserved path and a request
 * to raise an alarm. Streams:
 * reassembly in chunks takes the same messages as in one piece; a watch
 * range, when accepted, holds its own start key.
 */
#include "core/arena.h"
#include "etcd/grpc.h"
#include "etcd/rpc.pb-c.h"
#include "etcd/service.h"
#include "etcd/watchsel.h"

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
    /* Appended, so the seeds' first bytes keep their methods. */
    "/etcdserverpb.Lease/LeaseGrant", "/etcdserverpb.Lease/LeaseRevoke",
    "/etcdserverpb.Lease/LeaseTimeToLive", "/etcdserverpb.Lease/LeaseLeases",
    "/etcdserverpb.Cluster/MemberList", "/etcdserverpb.Maintenance/Alarm",
    "/etcdserverpb.Maintenance/HashKV", "/etcdserverpb.Maintenance/Defragment",
};
static const ProtobufCMessageDescriptor *const replies[] = {
    &etcdserverpb__range_response__descriptor,      &etcdserverpb__put_response__descriptor,
    &etcdserverpb__delete_range_response__descriptor, &etcdserverpb__txn_response__descriptor,
    &etcdserverpb__compaction_response__descriptor, &etcdserverpb__status_response__descriptor,
    NULL,
    &etcdserverpb__lease_grant_response__descriptor, &etcdserverpb__lease_revoke_response__descriptor,
    &etcdserverpb__lease_time_to_live_response__descriptor,
    &etcdserverpb__lease_leases_response__descriptor,
    &etcdserverpb__member_list_response__descriptor,
    &etcdserverpb__alarm_response__descriptor,
    &etcdserverpb__hash_kvresponse__descriptor,
    &etcdserverpb__defragment_response__descriptor,
};
#define N_PATHS (sizeof paths / sizeof paths[0])

static void *pb_alloc(void *arena, size_t n)
{
    return sk_arena_alloc(arena, n);
}

static void pb_free(void *arena, void *p)
{
}

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

typedef struct taken {
    size_t count, bytes;
} taken;

static void take_one(void *arg, const uint8_t *msg, size_t len)
{
    taken *t = arg;
    t->count++;
    t->bytes += len;
    sk_arena *a = sk_arena_new();
    ProtobufCAllocator pb = {pb_alloc, pb_free, a};
    Etcdserverpb__WatchRequest *r = etcdserverpb__watch_request__unpack(&pb, len, msg);
    if (r && r->request_union_case == ETCDSERVERPB__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST) {
        const Etcdserverpb__WatchCreateRequest *c = r->create_request;
        sk_watch_sel sel;
        static const unsigned char nul[1] = {0};
        if (sk_watch_sel_init(a, c->key.data, c->key.len, c->range_end.data, c->range_end.len, 0,
                              0, &sel) &&
            !sk_watch_sel_wants(&sel, c->key.len ? c->key.data : nul, c->key.len ? c->key.len : 1,
                                0))
            abort();
    }
    sk_arena_free(a);
}

/* A streaming call's DATA, in chunks and whole (see the top). */
static void stream_data(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    size_t chunk = (size_t)data[0] % 16 + 1;
    data++, size--;
    sk_buf whole = SK_BUF_INIT, cut = SK_BUF_INIT;
    taken tw = {0, 0}, tc = {0, 0};
    size_t big = 0;
    sk_buf_append(&whole, data, size);
    sk_grpc_frame fw = sk_grpc_take(&whole, 1 << 16, take_one, &tw, &big);
    sk_grpc_frame fc = SK_GRPC_FRAME_MORE;
    for (size_t off = 0; off < size && fc == SK_GRPC_FRAME_MORE; off += chunk) {
        sk_buf_append(&cut, data + off, size - off < chunk ? size - off : chunk);
        fc = sk_grpc_take(&cut, 1 << 16, take_one, &tc, &big);
    }
    if (fw != fc || tw.count != tc.count || tw.bytes != tc.bytes ||
        (fw == SK_GRPC_FRAME_MORE && whole.len != cut.len) ||
        tw.bytes + tw.count * SK_GRPC_PREFIX + whole.len > size)
        abort();
    sk_buf_free(&whole);
    sk_buf_free(&cut);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] == 0xFF) {
        stream_data(data + 1, size - 1);
        return 0;
    }
    size_t route = data[0] % N_PATHS;
    const uint8_t *msg = NULL;
    size_t mlen = 0, flen = 0;
    sk_grpc_frame f = sk_grpc_frame_parse(data + 1, size - 1, 1 << 16, &msg, &mlen, &flen);
    if (f != SK_GRPC_FRAME_OK)
        return 0;
    if (flen > size - 1 || msg + mlen != data + 1 + flen)
        abort();
    sk_etcd_service svc = {.store = store_once(),
                           .cluster_id = 1,
                           .self = {2, "fuzz", "http://127.0.0.1:2379"},
                           .max_request_bytes = SK_ETCD_MAX_REQUEST_BYTES};
    sk_arena *a = sk_arena_new();
    sk_etcd_reply r;
    sk_etcd_call(&svc, paths[route], msg, mlen, a, &r);
    /* Raising an alarm is the one served call that answers Unimplemented. */
    int raises = 0;
    if (replies[route] == &etcdserverpb__alarm_response__descriptor) {
        Etcdserverpb__AlarmRequest *req = etcdserverpb__alarm_request__unpack(NULL, mlen, msg);
        raises = req && req->action == ETCDSERVERPB__ALARM_REQUEST__ALARM_ACTION__ACTIVATE;
        etcdserverpb__alarm_request__free_unpacked(req, NULL);
    }
    if ((r.code == SK_GRPC_UNIMPLEMENTED) != (replies[route] == NULL || raises))
        abort();
    if (r.code != SK_GRPC_OK && !r.message)
        abort();
    if (r.code == SK_GRPC_OK) {
        ProtobufCMessage *m = protobuf_c_message_unpack(replies[route], NULL, r.body_len,
                                                          sk_etcd_reply_bytes(&r, a));
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
