/*
 * client.h - a small etcd v3 client: one HTTP/2 connection (cleartext or
 * TLS) to an etcd endpoint, and one gRPC call at a time over it, blocking.
 *
 * It exists for `sqlkube import --from-etcd` (cmd/import.c), which reads a
 * live etcd: a Maintenance.Snapshot stream, a Watch stream and a few unary
 * calls, one after the other. A server's face needs none of this; a
 * command-line tool that waits on its one source is what the blocking shape
 * fits.
 */
#ifndef SK_ETCD_CLIENT_H
#define SK_ETCD_CLIENT_H

#include "core/err.h"

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sk_etcd_client sk_etcd_client;

/* etcdctl's TLS flags: each NULL when not given. cacert: the CA that signed
 * the server's certificate (the system's roots when NULL); cert and key: a
 * client certificate, both or neither. */
typedef struct sk_etcd_client_tls {
    const char *cacert, *cert, *key;
} sk_etcd_client_tls;

/* Connects to the first of endpoints (etcdctl's comma-separated list of
 * http://HOST:PORT, https://HOST:PORT or HOST:PORT, the last https when a
 * TLS flag is given) that answers, with the HTTP/2 preface exchanged. On
 * failure *errmsg is new and names every endpoint's reason. */
sk_err sk_etcd_client_connect(const char *endpoints, const sk_etcd_client_tls *tls,
                              sk_etcd_client **out, char **errmsg);
/* NULL-safe. */
void sk_etcd_client_free(sk_etcd_client *c);
/* The endpoint connected to (borrowed, lives as long as c). */
const char *sk_etcd_client_endpoint(const sk_etcd_client *c);

/*
 * One call on path ("/etcdserverpb.KV/Range"): req is sent as the request
 * stream's only message (the request side then ends: etcd keeps a Watch
 * running when its client stops sending). Each response message goes to
 * on_message (bytes borrowed for the call): 0 goes on, anything else ends
 * the call there (the stream is reset) with SK_OK. While nothing arrives,
 * on_idle (may be NULL) runs about every idle_ms: nonzero ends the call
 * likewise. The call otherwise ends when the server ends it: SK_OK for
 * grpc-status 0; else SK_ERR_UNAVAILABLE (the connection failed, or
 * Unavailable), or SK_ERR_INTERNAL, with *errmsg new ("etcd answered CODE:
 * MESSAGE"). An on_message failure is the callback's to report: it returns
 * nonzero and keeps its own error.
 */
typedef int (*sk_etcd_client_msg_fn)(void *arg, const uint8_t *msg, size_t len);
typedef int (*sk_etcd_client_idle_fn)(void *arg);
sk_err sk_etcd_client_call(sk_etcd_client *c, const char *path, const ProtobufCMessage *req,
                           sk_etcd_client_msg_fn on_message, sk_etcd_client_idle_fn on_idle,
                           int idle_ms, void *arg, char **errmsg);

/* A unary call: *resp is the answer unpacked as desc (new: free with
 * protobuf_c_message_free_unpacked). Errors as sk_etcd_client_call's; no
 * answer, or one that does not parse, is SK_ERR_INTERNAL. */
sk_err sk_etcd_client_unary(sk_etcd_client *c, const char *path, const ProtobufCMessage *req,
                            const ProtobufCMessageDescriptor *desc, ProtobufCMessage **resp,
                            char **errmsg);

#endif
