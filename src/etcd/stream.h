/*
 * stream.h - bidirectional streaming calls of the etcd face: the shape of a
 * streaming method (sk_etcd_stream_ops) and the handle it holds on its call
 * (sk_etcd_stream) to send responses whenever it has them. Implemented by
 * the transport (server.c); Watch is one such method (watch.h), and any
 * other (LeaseKeepAlive) plugs in the same way: write the three functions,
 * add the path to server.c's table of streaming methods.
 *
 * A call's life, as the method sees it:
 *   open        on the I/O thread when the request headers arrive; must not
 *               block. Returns the method's state for the call (NULL: the
 *               call is refused with UNAVAILABLE).
 *   on_message  each request message, unframed, however the client's DATA
 *               frames cut it; on a worker thread, one at a time per call and
 *               in arrival order; may block on the store.
 *   on_close    once, last, on a worker thread after every on_message: the
 *               call is over (the client reset it or closed the connection,
 *               the server ended it or is stopping). The method frees its
 *               state and must not use the stream handle after returning.
 * A client half-closing its side (END_STREAM) is not a close: responses may
 * still flow, as etcd keeps a watch stream open then.
 *
 * Sending. Any thread may send on the handle from open until on_close
 * returns; a send never blocks: it copies the message into the call's
 * outbound queue and wakes the I/O thread, which writes it as HTTP/2 flow
 * control allows. The queue is bounded (SK_ETCD_STREAM_QUEUE_BYTES): past it
 * a data send is refused, and the method must keep its place and send again
 * later (Watch re-reads the store from the last revision it sent, as etcd
 * serves a slow watcher from its "unsynced" set) rather than buffer. Control
 * messages (one per request, such as a watch's created or canceled reply)
 * bypass the bound: they are bounded by the requests the client sends.
 * The response headers go out when the call opens; sk_etcd_stream_end sends
 * the trailers after the queued messages.
 */
#ifndef SK_ETCD_STREAM_H
#define SK_ETCD_STREAM_H

#include "core/err.h"
#include "etcd/grpc.h"

#include <stddef.h>
#include <stdint.h>

/* A call's outbound queue holds at most about this many bytes. */
#define SK_ETCD_STREAM_QUEUE_BYTES (4u << 20)

typedef struct sk_etcd_stream sk_etcd_stream;
struct sk_etcd_service;

typedef struct sk_etcd_stream_ops {
    void *(*open)(const struct sk_etcd_service *svc, sk_etcd_stream *st);
    void (*on_message)(void *state, const uint8_t *msg, size_t len);
    void (*on_close)(void *state);
} sk_etcd_stream_ops;

typedef enum { SK_ETCD_SEND_DATA, SK_ETCD_SEND_CONTROL } sk_etcd_send_kind;

/* Queues one response message (unframed; copied). SK_OK; SK_ERR_TOO_MANY_REQUESTS
 * if a DATA send finds the queue full (nothing queued); SK_ERR_UNAVAILABLE if
 * the call is over or ended. */
sk_err sk_etcd_stream_send(sk_etcd_stream *st, sk_etcd_send_kind kind, const uint8_t *msg,
                           size_t len);
/* Queues n responses (msgs and lens borrowed, copied) all or none, in order,
 * with sk_etcd_stream_send's answers: the parts of one answer (a watch
 * response cut into fragments) never leave half-sent. */
sk_err sk_etcd_stream_send_all(sk_etcd_stream *st, sk_etcd_send_kind kind,
                               const uint8_t *const *msgs, const size_t *lens, size_t n);
/* Whether a data send would be taken now (the queue is under half its
 * bound, so a caller resuming after a refusal does not thrash at the edge). */
int sk_etcd_stream_writable(sk_etcd_stream *st);
/* Bytes of the call's outbound queue (responses and control messages not
 * yet wholly handed to the connection): how far the client, or the
 * connection's flow control, is behind what was sent to it. */
size_t sk_etcd_stream_queued(sk_etcd_stream *st);
/* Ends the call after the queued messages, with this status (message
 * copied; NULL: none). Later sends fail; on_close follows. */
void sk_etcd_stream_end(sk_etcd_stream *st, sk_grpc_code code, const char *message);

#endif
