/*
 * server.h - the etcd face's transport: gRPC over cleartext HTTP/2 (h2c
 * with prior knowledge, as etcdctl and grpc-go speak it on http:// URLs),
 * served with libnghttp2 beside the REST API.
 *
 * Threads. One I/O thread owns every socket and nghttp2 session; it never
 * touches the database. A complete request becomes a job for a small pool of
 * worker threads, which run it (service.h, blocking on the store) and hand
 * the reply back through a queue and an eventfd; the I/O thread then submits
 * it on its stream, if the stream is still open. So a slow commit delays its
 * own call only: pings (HTTP/2 keepalive, answered by nghttp2) and the
 * connection's other streams keep flowing.
 *
 * TLS. With a certificate and key, every connection is TLS (GnuTLS, 1.2 or
 * later, ALPN "h2", no renegotiation) driven by the same non-blocking loop:
 * the handshake first, bounded in time, then HTTP/2 over the records. With a
 * trusted CA too, clients must present a certificate it signed (etcd's
 * --client-cert-auth with --trusted-ca-file).
 *
 * Streaming calls (Watch; see stream.h) are served on the same thread and
 * pool: their messages go to a worker as they arrive, and their responses
 * are queued (bounded per call) for the I/O thread to send as the client's
 * flow control allows, so one slow reader never holds up the others.
 */
#ifndef SK_ETCD_SERVER_H
#define SK_ETCD_SERVER_H

#include "cache/cache.h"
#include "store/store.h"

#include <stddef.h>

typedef struct sk_etcd_server_config {
    const char *listen; /* "HOST:PORT" (an http:// prefix is accepted) */
    sk_store *store;    /* borrowed; outlives the server */
    int workers;        /* threads running calls; 0: a default */
    sk_cache *cache;    /* borrowed; its feed says when revisions commit (Watch) */
    /* How often a watch with progress_notify gets a progress response when
     * idle; 0: etcd's default, 10 minutes. */
    int watch_progress_ms;
    /* PEM files, borrowed; NULL cert_file: cleartext. trusted_ca_file:
     * client certificates are required and verified against it. */
    const char *cert_file, *key_file, *trusted_ca_file;
    /* This instance's name in MemberList (borrowed; NULL: the host name). */
    const char *name;
    /* etcd's --max-request-bytes: the largest write request taken; a gRPC
     * message may be 512 KiB more (reads). 0: etcd's default, 1.5 MiB. */
    size_t max_request_bytes;
} sk_etcd_server_config;

typedef struct sk_etcd_server sk_etcd_server;

/* Binds and starts serving. On failure NULL and *errmsg (new) says why. */
sk_etcd_server *sk_etcd_server_start(const sk_etcd_server_config *cfg, char **errmsg);
/* Stops accepting, closes every connection, waits for running calls. NULL-safe. */
void sk_etcd_server_stop(sk_etcd_server *srv);

#endif
