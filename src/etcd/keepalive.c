/*
 * keepalive.c - see keepalive.h. Each response is sent as a control message:
 * exactly one per request, so the client's requests bound them (as stream.h
 * asks of control messages) and none is ever refused and dropped.
 */
#include "etcd/keepalive.h"
#include "core/arena.h"
#include "core/check.h"
#include "etcd/service.h"

#include <stdlib.h>

typedef struct keepalive {
    const sk_etcd_service *svc;
    sk_etcd_stream *st;
} keepalive;

static void *keepalive_open(const sk_etcd_service *svc, sk_etcd_stream *st)
{
    keepalive *k = calloc(1, sizeof *k);
    SK_CHECK_ALLOC(k);
    k->svc = svc;
    k->st = st;
    return k;
}

static void keepalive_message(void *state, const uint8_t *msg, size_t len)
{
    keepalive *k = state;
    sk_arena *a = sk_arena_new();
    sk_etcd_reply rep;
    sk_etcd_lease_keepalive(k->svc, msg, len, a, &rep);
    if (rep.code == SK_GRPC_OK)
        sk_etcd_stream_send(k->st, SK_ETCD_SEND_CONTROL, sk_etcd_reply_bytes(&rep, a),
                            rep.body_len);
    else
        sk_etcd_stream_end(k->st, rep.code, rep.message);
    sk_arena_free(a);
}

static void keepalive_close(void *state)
{
    free(state);
}

const sk_etcd_stream_ops sk_etcd_lease_keepalive_ops = {
    .open = keepalive_open,
    .on_message = keepalive_message,
    .on_close = keepalive_close,
};
