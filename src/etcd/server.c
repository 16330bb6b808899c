/*
 * server.c - see server.h. One I/O thread (poll over the listener, an
 * eventfd and every connection), nghttp2 sessions in server mode, and a
 * worker pool for the calls.
 *
 * A stream's life: HEADERS (its :path and content-type are kept), DATA
 * (appended to its body, refused past the message size limit as soon as the
 * gRPC prefix announces it), END_STREAM: the body must be exactly one gRPC
 * message, which becomes a job with its own copy of the path and bytes: a
 * write is checked on the I/O thread and queued on the store's writer
 * (sk_etcd_call_async), whose commit hands it back, since a thread parked
 * per write cost two hand-offs a put; any other call goes to a worker. The
 * job comes back with the reply; the I/O thread looks the stream
 * up by (connection id, stream id), since the client may have reset it or
 * closed the connection meanwhile, and then answers: on OK, headers, one
 * DATA frame run ending without END_STREAM, then trailers with grpc-status
 * (submitted from the data source at its end, the only order nghttp2
 * allows); on an error, one "trailers-only" HEADERS frame with grpc-status
 * and grpc-message, which is what gRPC servers send when there is no message.
 *
 * Streaming calls (stream.h). A path in the table of streaming methods
 * gets, when its headers arrive, a shared call object (sk_etcd_stream,
 * refcounted: the I/O side's stream, the method until on_close, a queued
 * worker job and a pending wake each hold a reference) and its response
 * headers at once, with a data source that defers while the outbound queue
 * is empty. Each DATA chunk is reassembled into messages (sk_grpc_take) that
 * go to the call's inbound queue; one worker job at a time drains it into
 * on_message, then runs on_close once the I/O side has gone, so a method
 * never sees two of its callbacks at once nor one after on_close. A send
 * (any thread) appends to the outbound queue and puts the call on the wake
 * list (eventfd); the I/O thread then resumes the stream's data source,
 * which copies as much as HTTP/2 flow control lets out, and ends with the
 * trailers once the call is ended and drained. Nothing is freed from inside
 * its own callback: the I/O side only drops its reference.
 *
 * Lock order: a call's mu, then the server's mu.
 *
 * Writes go straight to the non-blocking socket from nghttp2's send
 * callback; when the kernel buffer is full the session keeps the rest and
 * the loop polls for POLLOUT.
 *
 * TLS (server.h). A connection starts in its handshake, which the loop
 * steps on every readiness in the direction GnuTLS last waited for; only
 * then does the session's SETTINGS go out, since nghttp2 writes through the
 * records. A handshake still unfinished at its deadline closes the
 * connection, so a silent peer holds no slot. The send callback hands
 * nghttp2's bytes to gnutls_record_send: on GNUTLS_E_AGAIN the record is
 * already sealed and buffered, and nghttp2 retries with the same bytes,
 * which is how GnuTLS wants the call repeated. Reads drain the records until
 * GNUTLS_E_AGAIN, so nothing decrypted stays buffered where poll cannot see
 * it; the poll timeout is also zero while gnutls_record_check_pending says
 * otherwise. A renegotiation attempt (GNUTLS_E_REHANDSHAKE) closes the
 * connection: HTTP/2 forbids it (RFC 7540 9.2.1).
 */
#include "etcd/server.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/log.h"
#include "etcd/grpc.h"
#include "etcd/keepalive.h"
#include "etcd/service.h"
#include "etcd/snapshot.h"
#include "etcd/stream.h"
#include "etcd/watch.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Workers serve the calls that block on the store (reads, leases, compact)
 * and the streaming calls' turns; writes need none (sk_etcd_call_async).
 * Waiting threads cost a stack each and no CPU. */
#define DEFAULT_WORKERS 64
#define MAX_STREAMS 128
#define HANDSHAKE_MS 10000
/* Bytes a cleartext connection buffers before it must reach the socket. */
#define OUT_CAP (64 * 1024)
/* An HTTP/2 frame's header (RFC 9113, 4.1). */
#define H2_FRAME_HEADER 9
/* TLS 1.2 and 1.3 only; the rest of GnuTLS's defaults. */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* A message queued on a streaming call (outbound ones framed). */
typedef struct qmsg {
    struct qmsg *next;
    size_t len;
    uint8_t data[];
} qmsg;

/* etcd's streaming methods (stream.h). */
static const struct {
    const char *path;
    const sk_etcd_stream_ops *ops;
} stream_routes[] = {
    {"/etcdserverpb.Watch/Watch", &sk_etcd_watch_ops},
    {"/etcdserverpb.Lease/LeaseKeepAlive", &sk_etcd_lease_keepalive_ops},
    {"/etcdserverpb.Maintenance/Snapshot", &sk_etcd_snapshot_ops},
};

struct sk_etcd_stream {
    struct sk_etcd_server *srv;
    uint64_t conn_id;
    int32_t stream_id;
    const sk_etcd_stream_ops *ops;
    void *state; /* the method's */
    pthread_mutex_t mu;
    int refs;
    /* inbound, drained by one worker job at a time */
    qmsg *in, *in_tail;
    size_t in_bytes;
    int scheduled; /* a job is queued or running */
    int gone;      /* the I/O side closed: on_close after the inbound queue */
    int closed;    /* on_close has run */
    /* outbound, drained by the I/O thread */
    qmsg *out, *out_tail;
    size_t out_bytes, out_sent; /* queued bytes; bytes of the head already copied */
    int ended;
    sk_grpc_code code;
    char *message;
    int woken; /* on the server's wake list */
    struct sk_etcd_stream *wake_next;
};

typedef struct job {
    struct sk_etcd_server *srv;
    sk_etcd_stream *call; /* a streaming call's turn (holds a reference), else a unary call: */
    uint64_t conn_id;
    int32_t stream_id;
    char *path;
    sk_buf body;
    sk_arena *arena;
    sk_etcd_reply reply;
    uint8_t prefix[SK_GRPC_PREFIX];
    struct job *next;
} job;

typedef struct stream {
    int32_t id;
    sk_buf path;
    int grpc;       /* content-type application/grpc */
    sk_buf body;
    size_t too_large; /* announced message length past the limit, else 0 */
    job *answer;    /* the reply being sent (owned) */
    sk_etcd_stream *call; /* a streaming call (a reference), else NULL */
    size_t sent;    /* bytes of prefix + body handed to nghttp2 (or promised it) */
    /* The answer's bytes copied out so far: all of them, then the piece
     * being copied and how much of it. Behind sent while a DATA frame
     * promised without a copy waits for send_answer_data. */
    size_t taken, piece, piece_taken;
    struct stream *prev, *next; /* the connection's open streams */
} stream;

typedef struct conn {
    uint64_t id;
    int fd;
    gnutls_session_t tls; /* NULL: cleartext */
    int64_t handshake_deadline; /* monotonic ms while the handshake runs, else 0 */
    nghttp2_session *h2;
    /* nghttp2_session_del frees its streams without closing them: the
     * connection keeps its own list so their data goes too. */
    stream *streams;
    /* Cleartext: what nghttp2 sent, from out_off on, for one send() per
     * turn of the loop rather than one per frame (a reply is three). */
    sk_buf out;
    size_t out_off;
    struct sk_etcd_server *srv;
    struct conn *next;
} conn;

struct sk_etcd_server {
    sk_etcd_service svc;
    size_t max_recv; /* the largest gRPC message taken: the request limit + overhead */
    char client_url[320], name[256]; /* svc.self's strings */
    int listen_fd, wake_fd;
    pthread_t io;
    pthread_t *workers;
    int n_workers;
    int stopping;         /* the I/O thread ends; under mu */
    int workers_stopping; /* the workers end once the queue is empty; under mu */
    sk_etcd_stream *wakes; /* calls with new output, for the I/O thread; under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *todo, *todo_tail; /* for workers, under mu */
    job *done;             /* for the I/O thread, under mu */
    int writing;           /* writes the store's writer has (sk_etcd_call_async), under mu */
    conn *conns;           /* the I/O thread's */
    gnutls_certificate_credentials_t cred; /* NULL: cleartext */
    gnutls_priority_t prio;
    int verify_clients;
    uint64_t next_conn_id;
};

static void job_free(job *j)
{
    if (!j)
        return;
    free(j->path);
    sk_buf_free(&j->body);
    sk_arena_free(j->arena);
    free(j);
}

static void qmsgs_free(qmsg *m)
{
    while (m) {
        qmsg *next = m->next;
        free(m);
        m = next;
    }
}

static void call_release(sk_etcd_stream *c)
{
    pthread_mutex_lock(&c->mu);
    int last = --c->refs == 0;
    pthread_mutex_unlock(&c->mu);
    if (!last)
        return;
    qmsgs_free(c->in);
    qmsgs_free(c->out);
    free(c->message);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static void enqueue_job(sk_etcd_server *srv, job *j)
{
    pthread_mutex_lock(&srv->mu);
    if (srv->todo_tail)
        srv->todo_tail->next = j;
    else
        srv->todo = j;
    srv->todo_tail = j;
    pthread_cond_signal(&srv->cv);
    pthread_mutex_unlock(&srv->mu);
}

/* Gives the call a worker turn unless it has one. Call's mu held. */
static void call_schedule_locked(sk_etcd_stream *c)
{
    if (c->scheduled || c->closed)
        return;
    c->scheduled = 1;
    c->refs++;
    job *j = calloc(1, sizeof *j);
    SK_CHECK_ALLOC(j);
    j->call = c;
    enqueue_job(c->srv, j);
}

/* The I/O side of a call is gone (stream closed, connection closed). */
static void call_gone(sk_etcd_stream *c)
{
    pthread_mutex_lock(&c->mu);
    c->gone = 1;
    qmsgs_free(c->out);
    c->out = c->out_tail = NULL;
    c->out_bytes = c->out_sent = 0;
    call_schedule_locked(c);
    pthread_mutex_unlock(&c->mu);
    call_release(c);
}

/* A worker's turn: the queued messages, then on_close once the call has
 * gone. */
static void call_run(sk_etcd_stream *c)
{
    pthread_mutex_lock(&c->mu);
    for (;;) {
        qmsg *m = c->in;
        if (m) {
            c->in = m->next;
            if (!c->in)
                c->in_tail = NULL;
            c->in_bytes -= m->len;
            pthread_mutex_unlock(&c->mu);
            c->ops->on_message(c->state, m->data, m->len);
            free(m);
            pthread_mutex_lock(&c->mu);
        } else if (c->gone && !c->closed) {
            c->closed = 1;
            pthread_mutex_unlock(&c->mu);
            c->ops->on_close(c->state);
            pthread_mutex_lock(&c->mu);
            c->refs--; /* the method's reference; more remain (this turn's) */
        } else {
            break;
        }
    }
    c->scheduled = 0;
    pthread_mutex_unlock(&c->mu);
    call_release(c);
}

static void stream_free(stream *st)
{
    sk_buf_free(&st->path);
    sk_buf_free(&st->body);
    job_free(st->answer);
    if (st->call)
        call_gone(st->call);
    free(st);
}

/* ---- the streaming API (stream.h) -------------------------------------------- */

/* Puts the call on the wake list for the I/O thread. Call's mu held. */
static void call_wake_locked(sk_etcd_stream *c)
{
    if (c->woken)
        return;
    c->woken = 1;
    c->refs++;
    sk_etcd_server *srv = c->srv;
    pthread_mutex_lock(&srv->mu);
    c->wake_next = srv->wakes;
    srv->wakes = c;
    pthread_mutex_unlock(&srv->mu);
    uint64_t one = 1;
    if (write(srv->wake_fd, &one, sizeof one) < 0) {
        /* the counter cannot overflow in practice */
    }
}

sk_err sk_etcd_stream_send(sk_etcd_stream *c, sk_etcd_send_kind kind, const uint8_t *msg,
                           size_t len)
{
    return sk_etcd_stream_send_all(c, kind, &msg, &len, 1);
}

sk_err sk_etcd_stream_send_all(sk_etcd_stream *c, sk_etcd_send_kind kind,
                               const uint8_t *const *msgs, const size_t *lens, size_t n)
{
    sk_err err = SK_OK;
    pthread_mutex_lock(&c->mu);
    if (c->gone || c->ended)
        err = SK_ERR_UNAVAILABLE;
    else if (kind == SK_ETCD_SEND_DATA && c->out_bytes >= SK_ETCD_STREAM_QUEUE_BYTES)
        err = SK_ERR_TOO_MANY_REQUESTS;
    for (size_t i = 0; err == SK_OK && i < n; i++) {
        qmsg *m = malloc(sizeof *m + SK_GRPC_PREFIX + lens[i]);
        SK_CHECK_ALLOC(m);
        m->next = NULL;
        m->len = SK_GRPC_PREFIX + lens[i];
        sk_grpc_frame_prefix(m->data, (uint32_t)lens[i]);
        if (lens[i])
            memcpy(m->data + SK_GRPC_PREFIX, msgs[i], lens[i]);
        if (c->out_tail)
            c->out_tail->next = m;
        else
            c->out = m;
        c->out_tail = m;
        c->out_bytes += m->len;
    }
    if (err == SK_OK)
        call_wake_locked(c);
    pthread_mutex_unlock(&c->mu);
    return err;
}

int sk_etcd_stream_writable(sk_etcd_stream *c)
{
    pthread_mutex_lock(&c->mu);
    int ok = !c->gone && !c->ended && c->out_bytes < SK_ETCD_STREAM_QUEUE_BYTES / 2;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

size_t sk_etcd_stream_queued(sk_etcd_stream *c)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->out_bytes;
    pthread_mutex_unlock(&c->mu);
    return n;
}

void sk_etcd_stream_end(sk_etcd_stream *c, sk_grpc_code code, const char *message)
{
    pthread_mutex_lock(&c->mu);
    if (!c->gone && !c->ended) {
        c->ended = 1;
        c->code = code;
        c->message = message ? strdup(message) : NULL;
        call_wake_locked(c);
    }
    pthread_mutex_unlock(&c->mu);
}

/* ---- workers --------------------------------------------------------------- */

/* Hands a finished unary job to the I/O thread. srv's mu held. The eventfd
 * is written only when the list was empty: the I/O thread reads the eventfd
 * before it takes the list, so a job added to a non-empty list is taken with
 * the one that woke it. A commit batch of 32 puts thus costs one wake-up. */
static void job_done_locked(sk_etcd_server *srv, job *j)
{
    if (j->reply.code == SK_GRPC_OK)
        sk_grpc_frame_prefix(j->prefix, (uint32_t)j->reply.body_len);
    int was_empty = !srv->done;
    j->next = srv->done;
    srv->done = j;
    uint64_t one = 1;
    if (was_empty && write(srv->wake_fd, &one, sizeof one) < 0) {
        /* the counter cannot overflow in practice; the next wake reads all */
    }
}

/* sk_etcd_done_fn of a write: on the store's writer thread (or the I/O
 * thread, for a request that failed its checks). */
static void write_done(void *arg)
{
    job *j = arg;
    sk_etcd_server *srv = j->srv;
    pthread_mutex_lock(&srv->mu);
    job_done_locked(srv, j);
    if (--srv->writing == 0 && srv->stopping)
        pthread_cond_broadcast(&srv->cv); /* sk_etcd_server_stop waits for the last */
    pthread_mutex_unlock(&srv->mu);
}

static void *worker_main(void *arg)
{
    sk_etcd_server *srv = arg;
    pthread_mutex_lock(&srv->mu);
    for (;;) {
        while (!srv->todo && !srv->workers_stopping)
            pthread_cond_wait(&srv->cv, &srv->mu);
        job *j = srv->todo;
        if (!j)
            break;
        srv->todo = j->next;
        if (!srv->todo)
            srv->todo_tail = NULL;
        pthread_mutex_unlock(&srv->mu);
        if (j->call) {
            call_run(j->call);
            free(j);
            pthread_mutex_lock(&srv->mu);
            continue;
        }

        sk_etcd_call(&srv->svc, j->path, (const uint8_t *)j->body.data + SK_GRPC_PREFIX,
                     j->body.len - SK_GRPC_PREFIX, j->arena, &j->reply);

        pthread_mutex_lock(&srv->mu);
        job_done_locked(srv, j);
    }
    pthread_mutex_unlock(&srv->mu);
    return NULL;
}

/* ---- replies ----------------------------------------------------------------- */

#define NV(n, v, vlen)                                                                             \
    {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vlen), NGHTTP2_NV_FLAG_NONE}

/* Copies the answer's next n bytes (the gRPC prefix, then its pieces) to dst. */
static void answer_take(stream *st, uint8_t *dst, size_t n)
{
    job *j = st->answer;
    size_t done = 0;
    while (done < n) {
        size_t chunk;
        if (st->taken < SK_GRPC_PREFIX) {
            chunk = SK_GRPC_PREFIX - st->taken;
            if (chunk > n - done)
                chunk = n - done;
            memcpy(dst + done, j->prefix + st->taken, chunk);
        } else {
            SK_CHECK(st->piece < j->reply.npieces);
            const sk_etcd_piece *p = &j->reply.pieces[st->piece];
            chunk = p->len - st->piece_taken;
            if (chunk > n - done)
                chunk = n - done;
            memcpy(dst + done, p->data + st->piece_taken, chunk);
            st->piece_taken += chunk;
            if (st->piece_taken == p->len) {
                st->piece++;
                st->piece_taken = 0;
            }
        }
        done += chunk;
        st->taken += chunk;
    }
}

/* A unary answer's data source. In cleartext its frames are not copied
 * into nghttp2's buffer: send_answer_data copies each straight into the
 * connection's output (a reply of megabytes, an etcd Range page, was
 * copied twice on this thread). GnuTLS seals what nghttp2 hands it, so
 * TLS keeps the copy. */
static ssize_t read_answer(nghttp2_session *h2, int32_t stream_id, uint8_t *buf, size_t length,
                           uint32_t *flags, nghttp2_data_source *source, void *user)
{
    conn *c = user;
    stream *st = source->ptr;
    size_t total = SK_GRPC_PREFIX + st->answer->reply.body_len;
    size_t n = total - st->sent < length ? total - st->sent : length;
    if (c->tls)
        answer_take(st, buf, n);
    else
        *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    st->sent += n;
    if (st->sent == total) {
        *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        static const nghttp2_nv trailers[] = {NV("grpc-status", "0", 1)};
        if (nghttp2_submit_trailer(h2, stream_id, trailers, 1) != 0)
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    return (ssize_t)n;
}

/* A trailers-only reply: the status without any message. */
static void answer_error(nghttp2_session *h2, int32_t stream_id, sk_grpc_code code,
                         const char *message)
{
    char status[12];
    int slen = snprintf(status, sizeof status, "%d", (int)code);
    sk_buf msg = SK_BUF_INIT;
    sk_grpc_percent_encode(&msg, message ? message : "");
    nghttp2_nv hdrs[] = {NV(":status", "200", 3), NV("content-type", "application/grpc", 16),
                         NV("grpc-status", status, (size_t)slen),
                         NV("grpc-message", msg.data ? msg.data : "", msg.len)};
    nghttp2_submit_response(h2, stream_id, hdrs, sizeof hdrs / sizeof hdrs[0], NULL);
    sk_buf_free(&msg);
}

/* A streaming call's data source: the queued messages as flow control lets
 * them out, deferred while none is queued, then the trailers once ended. */
static ssize_t read_call(nghttp2_session *h2, int32_t stream_id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *source, void *user)
{
    sk_etcd_stream *c = source->ptr;
    ssize_t ret = 0;
    size_t n = 0;
    pthread_mutex_lock(&c->mu);
    while (n < length && c->out) {
        qmsg *m = c->out;
        size_t chunk = m->len - c->out_sent;
        if (chunk > length - n)
            chunk = length - n;
        memcpy(buf + n, m->data + c->out_sent, chunk);
        n += chunk;
        c->out_sent += chunk;
        if (c->out_sent == m->len) {
            c->out = m->next;
            if (!c->out)
                c->out_tail = NULL;
            c->out_bytes -= m->len;
            c->out_sent = 0;
            free(m);
        }
    }
    ret = (ssize_t)n;
    if (!c->out && c->ended) {
        char status[12];
        int slen = snprintf(status, sizeof status, "%d", (int)c->code);
        sk_buf msg = SK_BUF_INIT;
        sk_grpc_percent_encode(&msg, c->message ? c->message : "");
        nghttp2_nv trailers[] = {NV("grpc-status", status, (size_t)slen),
                                 NV("grpc-message", msg.data ? msg.data : "", msg.len)};
        *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        if (nghttp2_submit_trailer(h2, stream_id, trailers, msg.len ? 2 : 1) != 0)
            ret = NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        sk_buf_free(&msg);
    } else if (n == 0) {
        ret = NGHTTP2_ERR_DEFERRED;
    }
    pthread_mutex_unlock(&c->mu);
    return ret;
}

static void answer(nghttp2_session *h2, stream *st, job *j)
{
    if (j->reply.code != SK_GRPC_OK) {
        answer_error(h2, st->id, j->reply.code, j->reply.message);
        job_free(j);
        return;
    }
    st->answer = j;
    st->sent = st->taken = st->piece = st->piece_taken = 0;
    static const nghttp2_nv hdrs[] = {NV(":status", "200", 3),
                                      NV("content-type", "application/grpc", 16)};
    nghttp2_data_provider provider = {.source.ptr = st, .read_callback = read_answer};
    nghttp2_submit_response(h2, st->id, hdrs, 2, &provider);
}

/* ---- requests ----------------------------------------------------------------- */

static const sk_etcd_stream_ops *stream_method(const char *path)
{
    for (size_t i = 0; i < sizeof stream_routes / sizeof stream_routes[0]; i++)
        if (strcmp(path, stream_routes[i].path) == 0)
            return stream_routes[i].ops;
    return NULL;
}

/* The request headers are in: a streaming method opens its call now and
 * answers with headers at once (its messages follow as they come). */
static void call_open(sk_etcd_server *srv, conn *cn, stream *st)
{
    const sk_etcd_stream_ops *ops = st->grpc && st->path.data ? stream_method(st->path.data) : NULL;
    if (!ops)
        return;
    sk_etcd_stream *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->srv = srv;
    c->conn_id = cn->id;
    c->stream_id = st->id;
    c->ops = ops;
    pthread_mutex_init(&c->mu, NULL);
    c->refs = 2; /* the I/O side's and the method's */
    if (!(c->state = ops->open(&srv->svc, c))) {
        pthread_mutex_destroy(&c->mu);
        free(c);
        answer_error(cn->h2, st->id, SK_GRPC_UNAVAILABLE, "sqlkube: the server is stopping");
        return;
    }
    st->call = c;
    static const nghttp2_nv hdrs[] = {NV(":status", "200", 3),
                                      NV("content-type", "application/grpc", 16)};
    nghttp2_data_provider provider = {.source.ptr = c, .read_callback = read_call};
    nghttp2_submit_response(cn->h2, st->id, hdrs, 2, &provider);
}

static void call_inbound(void *arg, const uint8_t *msg, size_t len)
{
    sk_etcd_stream *c = arg;
    qmsg *m = malloc(sizeof *m + len);
    SK_CHECK_ALLOC(m);
    m->next = NULL;
    m->len = len;
    if (len)
        memcpy(m->data, msg, len);
    pthread_mutex_lock(&c->mu);
    if (c->in_tail)
        c->in_tail->next = m;
    else
        c->in = m;
    c->in_tail = m;
    c->in_bytes += len;
    call_schedule_locked(c);
    pthread_mutex_unlock(&c->mu);
}

/* DATA of a streaming call: every message completed goes to the method; a
 * message the call cannot take ends it with gRPC's status for that. */
static void call_data(stream *st, const uint8_t *data, size_t len)
{
    sk_etcd_stream *c = st->call;
    char msg[96];
    if (st->too_large)
        return;
    sk_buf_append(&st->body, data, len);
    size_t big = 0;
    sk_grpc_frame f = sk_grpc_take(&st->body, c->srv->max_recv, call_inbound, c, &big);
    pthread_mutex_lock(&c->mu);
    size_t pending = c->in_bytes;
    pthread_mutex_unlock(&c->mu);
    if (f == SK_GRPC_FRAME_MORE && pending <= 2 * c->srv->max_recv)
        return;
    st->too_large = 1;
    sk_buf_free(&st->body);
    if (f == SK_GRPC_FRAME_COMPRESSED) {
        sk_etcd_stream_end(c, SK_GRPC_UNIMPLEMENTED,
                           "grpc: compressed message received but no decompressor is installed");
    } else if (f == SK_GRPC_FRAME_TOO_LARGE) {
        snprintf(msg, sizeof msg, "grpc: received message larger than max (%zu vs. %zu)", big,
                 c->srv->max_recv);
        sk_etcd_stream_end(c, SK_GRPC_RESOURCE_EXHAUSTED, msg);
    } else {
        sk_etcd_stream_end(c, SK_GRPC_RESOURCE_EXHAUSTED,
                           "sqlkube: too many request messages waiting on the stream");
    }
}

/* The stream's request is complete: answer a malformed one at once, queue
 * the rest. */
static void request_done(sk_etcd_server *srv, conn *c, stream *st)
{
    char msg[96];
    if (!st->grpc) {
        static const nghttp2_nv hdrs[] = {NV(":status", "415", 3)};
        nghttp2_submit_response(c->h2, st->id, hdrs, 1, NULL);
        return;
    }
    if (st->too_large) {
        snprintf(msg, sizeof msg, "grpc: received message larger than max (%zu vs. %zu)",
                 st->too_large, srv->max_recv);
        answer_error(c->h2, st->id, SK_GRPC_RESOURCE_EXHAUSTED, msg);
        return;
    }
    const uint8_t *m = NULL;
    size_t mlen = 0, flen = 0;
    sk_grpc_frame f = sk_grpc_frame_parse((const uint8_t *)st->body.data, st->body.len,
                                          srv->max_recv, &m, &mlen, &flen);
    if (f == SK_GRPC_FRAME_COMPRESSED) {
        answer_error(c->h2, st->id, SK_GRPC_UNIMPLEMENTED,
                     "grpc: compressed message received but no decompressor is installed");
        return;
    }
    if (f != SK_GRPC_FRAME_OK || flen != st->body.len) {
        answer_error(c->h2, st->id, SK_GRPC_INTERNAL,
                     "grpc: a unary call needs exactly one request message");
        return;
    }
    job *j = calloc(1, sizeof *j);
    SK_CHECK_ALLOC(j);
    j->conn_id = c->id;
    j->stream_id = st->id;
    j->path = sk_buf_steal(&st->path, NULL);
    j->body = st->body;
    st->body = (sk_buf)SK_BUF_INIT;
    j->srv = srv;
    j->arena = sk_arena_new();
    pthread_mutex_lock(&srv->mu);
    srv->writing++;
    pthread_mutex_unlock(&srv->mu);
    if (sk_etcd_call_async(&srv->svc, j->path, m, mlen, j->arena, &j->reply, write_done, j))
        return;
    pthread_mutex_lock(&srv->mu);
    srv->writing--;
    pthread_mutex_unlock(&srv->mu);
    enqueue_job(srv, j);
}

/* ---- nghttp2 callbacks ---------------------------------------------------------- */

/* Sends what c->out holds until the socket is full. 0: the connection failed. */
static int out_flush(conn *c)
{
    while (c->out_off < c->out.len) {
        ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK;
        c->out_off += (size_t)n;
    }
    sk_buf_reset(&c->out);
    c->out_off = 0;
    return 1;
}

/* Whether c->out (cleartext) takes more: 1 yes, flushing it first once it
 * holds OUT_CAP; 0 not until the socket drains; -1 the connection failed. */
static int out_room(conn *c)
{
    if (c->out.len - c->out_off < OUT_CAP)
        return 1;
    if (!out_flush(c))
        return -1;
    return c->out.len - c->out_off < OUT_CAP;
}

static ssize_t on_send(nghttp2_session *h2, const uint8_t *data, size_t length, int flags,
                       void *user)
{
    conn *c = user;
    if (c->tls) {
        ssize_t n = gnutls_record_send(c->tls, data, length);
        if (n >= 0)
            return n;
        return n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED ? NGHTTP2_ERR_WOULDBLOCK
                                                                 : NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    int room = out_room(c);
    if (room <= 0)
        return room < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : NGHTTP2_ERR_WOULDBLOCK;
    sk_buf_append(&c->out, data, length);
    return (ssize_t)length;
}

/* A DATA frame read_answer promised without a copy (cleartext only): its
 * header and the answer's next length bytes, into c->out whole, or nothing
 * yet while c->out is full (nghttp2 then calls again with the same frame). */
static int send_answer_data(nghttp2_session *h2, nghttp2_frame *frame, const uint8_t *framehd,
                            size_t length, nghttp2_data_source *source, void *user)
{
    conn *c = user;
    stream *st = source->ptr;
    SK_CHECK(!c->tls && frame->data.padlen == 0);
    int room = out_room(c);
    if (room <= 0)
        return room < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : NGHTTP2_ERR_WOULDBLOCK;
    sk_buf_append(&c->out, framehd, H2_FRAME_HEADER);
    sk_buf_reserve(&c->out, length);
    answer_take(st, (uint8_t *)c->out.data + c->out.len, length);
    c->out.len += length;
    c->out.data[c->out.len] = '\0';
    return 0;
}

/* Lets the session send what it has (cleartext: into c->out, then to the
 * socket). 0: close. */
static int conn_send(conn *c)
{
    return nghttp2_session_send(c->h2) == 0 && (c->tls || out_flush(c));
}

/* The session or its buffered bytes wait for the socket. */
static int conn_want_write(conn *c)
{
    return nghttp2_session_want_write(c->h2) || c->out_off < c->out.len;
}

static int on_begin_headers(nghttp2_session *h2, const nghttp2_frame *frame, void *user)
{
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    conn *c = user;
    stream *st = calloc(1, sizeof *st);
    SK_CHECK_ALLOC(st);
    st->id = frame->hd.stream_id;
    st->next = c->streams;
    if (c->streams)
        c->streams->prev = st;
    c->streams = st;
    nghttp2_session_set_stream_user_data(h2, st->id, st);
    return 0;
}

static int on_header(nghttp2_session *h2, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user)
{
    stream *st = nghttp2_session_get_stream_user_data(h2, frame->hd.stream_id);
    if (!st || frame->hd.type != NGHTTP2_HEADERS)
        return 0;
    if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
        sk_buf_reset(&st->path);
        sk_buf_append(&st->path, value, valuelen);
    } else if (namelen == 12 && memcmp(name, "content-type", 12) == 0) {
        /* application/grpc, optionally +proto or ;params */
        st->grpc = valuelen >= 16 && memcmp(value, "application/grpc", 16) == 0 &&
                   (valuelen == 16 || value[16] == '+' || value[16] == ';');
    }
    return 0;
}

static int on_data_chunk(nghttp2_session *h2, uint8_t flags, int32_t stream_id,
                         const uint8_t *data, size_t len, void *user)
{
    stream *st = nghttp2_session_get_stream_user_data(h2, stream_id);
    if (st && st->call) {
        call_data(st, data, len);
        return 0;
    }
    if (!st || st->too_large)
        return 0;
    size_t max_recv = ((conn *)user)->srv->max_recv;
    sk_buf_append(&st->body, data, len);
    const uint8_t *m;
    size_t mlen = 0, flen;
    /* A first message too large, or bytes past what one message may take
     * (a unary call has one): stop buffering, answer at the end. */
    if (sk_grpc_frame_parse((const uint8_t *)st->body.data, st->body.len, max_recv, &m, &mlen,
                            &flen) == SK_GRPC_FRAME_TOO_LARGE ||
        st->body.len > SK_GRPC_PREFIX + max_recv) {
        st->too_large = mlen > max_recv ? mlen : st->body.len;
        sk_buf_free(&st->body);
    }
    return 0;
}

static int on_frame_recv(nghttp2_session *h2, const nghttp2_frame *frame, void *user)
{
    conn *c = user;
    stream *st = nghttp2_session_get_stream_user_data(h2, frame->hd.stream_id);
    if (!st)
        return 0;
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
        call_open(c->srv, c, st);
    }
    /* A streaming call's END_STREAM only half-closes it (stream.h). */
    if ((frame->hd.type != NGHTTP2_DATA && frame->hd.type != NGHTTP2_HEADERS) ||
        !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM) || st->call)
        return 0;
    if (!st->answer)
        request_done(c->srv, c, st);
    return 0;
}

static int on_stream_close(nghttp2_session *h2, int32_t stream_id, uint32_t error_code,
                           void *user)
{
    stream *st = nghttp2_session_get_stream_user_data(h2, stream_id);
    if (st) {
        conn *c = user;
        nghttp2_session_set_stream_user_data(h2, stream_id, NULL);
        if (st->prev)
            st->prev->next = st->next;
        else
            c->streams = st->next;
        if (st->next)
            st->next->prev = st->prev;
        stream_free(st);
    }
    return 0;
}

/* ---- connections ------------------------------------------------------------------ */

static void conn_close(sk_etcd_server *srv, conn *c)
{
    conn **pp = &srv->conns;
    while (*pp != c)
        pp = &(*pp)->next;
    *pp = c->next;
    nghttp2_session_del(c->h2);
    for (stream *st = c->streams, *next; st; st = next) {
        next = st->next;
        stream_free(st);
    }
    if (c->tls)
        gnutls_deinit(c->tls);
    sk_buf_free(&c->out);
    close(c->fd);
    free(c);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A server session for the connection; the handshake is stepped later. */
static void tls_open(sk_etcd_server *srv, conn *c)
{
    SK_CHECK(gnutls_init(&c->tls, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL) ==
             GNUTLS_E_SUCCESS);
    SK_CHECK(gnutls_priority_set(c->tls, srv->prio) == GNUTLS_E_SUCCESS);
    SK_CHECK(gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, srv->cred) ==
             GNUTLS_E_SUCCESS);
    if (srv->verify_clients) {
        gnutls_certificate_server_set_request(c->tls, GNUTLS_CERT_REQUIRE);
        /* the chain is checked against the trusted CA inside the handshake */
        gnutls_session_set_verify_cert(c->tls, NULL, 0);
    }
    /* grpc-go refuses a TLS server that does not confirm h2 by ALPN */
    gnutls_datum_t h2 = {(unsigned char *)"h2", 2};
    SK_CHECK(gnutls_alpn_set_protocols(c->tls, &h2, 1, GNUTLS_ALPN_MANDATORY) ==
             GNUTLS_E_SUCCESS);
    gnutls_transport_set_int(c->tls, c->fd);
    c->handshake_deadline = now_ms() + HANDSHAKE_MS;
}

/* Steps the handshake; once done, HTTP/2 starts. 0: close. */
static int tls_handshake(conn *c)
{
    int rc;
    do
        rc = gnutls_handshake(c->tls);
    while (rc == GNUTLS_E_INTERRUPTED);
    if (rc == GNUTLS_E_AGAIN)
        return 1;
    if (rc != GNUTLS_E_SUCCESS) {
        /* The alert tells the client why (a missing client certificate,
         * say). What the client sent meanwhile (its HTTP/2 preface) is read
         * and dropped first: closing with unread input sends a reset, which
         * may discard the alert before the client reads it. */
        gnutls_alert_send_appropriate(c->tls, rc);
        shutdown(c->fd, SHUT_WR);
        uint8_t drop[4096];
        while (recv(c->fd, drop, sizeof drop, MSG_DONTWAIT) > 0)
            ;
        sk_log_info("etcd: rejected connection: TLS handshake failed: %s", gnutls_strerror(rc));
        return 0;
    }
    c->handshake_deadline = 0;
    return conn_send(c);
}

static void conn_open(sk_etcd_server *srv, int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    conn *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->id = ++srv->next_conn_id;
    c->fd = fd;
    c->srv = srv;
    nghttp2_session_callbacks *cb;
    SK_CHECK(nghttp2_session_callbacks_new(&cb) == 0);
    nghttp2_session_callbacks_set_send_callback(cb, on_send);
    nghttp2_session_callbacks_set_send_data_callback(cb, send_answer_data);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    /* grpc-go sends the dial target as :authority ("http://host:port" for
     * etcdctl's endpoints), which nghttp2's HTTP checks refuse with a stream
     * reset; gRPC needs none of those checks. */
    nghttp2_option *opt;
    SK_CHECK(nghttp2_option_new(&opt) == 0);
    nghttp2_option_set_no_http_messaging(opt, 1);
    SK_CHECK(nghttp2_session_server_new2(&c->h2, cb, c, opt) == 0);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, MAX_STREAMS}};
    nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, iv, 1);
    c->next = srv->conns;
    srv->conns = c;
    if (srv->cred)
        tls_open(srv, c);
    else
        conn_send(c);
}

/* Reads what the socket has and lets the session act on it. 0: close. */
static int conn_read(conn *c)
{
    uint8_t buf[16384];
    if (c->handshake_deadline)
        return tls_handshake(c);
    while (c->tls) {
        ssize_t n = gnutls_record_recv(c->tls, buf, sizeof buf);
        if (n == GNUTLS_E_AGAIN)
            return 1;
        if (n == GNUTLS_E_INTERRUPTED)
            continue;
        if (n <= 0 || nghttp2_session_mem_recv(c->h2, buf, (size_t)n) < 0)
            return 0; /* closed, an error, or a renegotiation */
    }
    for (;;) {
        ssize_t n = recv(c->fd, buf, sizeof buf, 0);
        if (n == 0)
            return 0;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        if (nghttp2_session_mem_recv(c->h2, buf, (size_t)n) < 0)
            return 0;
        if ((size_t)n < sizeof buf)
            return 1;
    }
}

static conn *conn_find(sk_etcd_server *srv, uint64_t id)
{
    for (conn *c = srv->conns; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

/* Hands finished jobs to their streams (or drops those whose stream went). */
static void deliver(sk_etcd_server *srv)
{
    uint64_t count;
    if (read(srv->wake_fd, &count, sizeof count) < 0) {
        /* nothing to read: a spurious wake */
    }
    pthread_mutex_lock(&srv->mu);
    job *j = srv->done;
    srv->done = NULL;
    sk_etcd_stream *w = srv->wakes;
    srv->wakes = NULL;
    pthread_mutex_unlock(&srv->mu);
    while (w) {
        sk_etcd_stream *next = w->wake_next;
        pthread_mutex_lock(&w->mu);
        w->woken = 0;
        pthread_mutex_unlock(&w->mu);
        conn *c = conn_find(srv, w->conn_id);
        stream *st = c ? nghttp2_session_get_stream_user_data(c->h2, w->stream_id) : NULL;
        if (st && st->call == w)
            nghttp2_session_resume_data(c->h2, w->stream_id);
        call_release(w);
        w = next;
    }
    while (j) {
        job *next = j->next;
        conn *c = conn_find(srv, j->conn_id);
        stream *st = c ? nghttp2_session_get_stream_user_data(c->h2, j->stream_id) : NULL;
        if (st && !st->answer)
            answer(c->h2, st, j);
        else
            job_free(j);
        j = next;
    }
}

static void *io_main(void *arg)
{
    sk_etcd_server *srv = arg;
    struct pollfd *pfd = NULL;
    conn **who = NULL;
    size_t cap = 0;
    for (;;) {
        pthread_mutex_lock(&srv->mu);
        int stop = srv->stopping;
        pthread_mutex_unlock(&srv->mu);
        if (stop)
            break;
        size_t n = 2;
        for (conn *c = srv->conns; c; c = c->next)
            n++;
        if (n > cap) {
            cap = 2 * n;
            pfd = realloc(pfd, cap * sizeof *pfd);
            who = realloc(who, cap * sizeof *who);
            SK_CHECK(pfd && who);
        }
        pfd[0] = (struct pollfd){srv->listen_fd, POLLIN, 0};
        pfd[1] = (struct pollfd){srv->wake_fd, POLLIN, 0};
        size_t i = 2;
        int64_t now = now_ms(), timeout = -1;
        for (conn *c = srv->conns; c; c = c->next, i++) {
            who[i] = c;
            pfd[i] = (struct pollfd){c->fd, POLLIN, 0};
            if (c->handshake_deadline) {
                int64_t left = c->handshake_deadline > now ? c->handshake_deadline - now : 0;
                if (timeout < 0 || left < timeout)
                    timeout = left;
                if (gnutls_record_get_direction(c->tls) == 1)
                    pfd[i].events |= POLLOUT;
                continue;
            }
            if (conn_want_write(c))
                pfd[i].events |= POLLOUT;
            if (c->tls && gnutls_record_check_pending(c->tls) > 0)
                timeout = 0;
        }
        if (poll(pfd, n, (int)timeout) < 0)
            continue;
        now = now_ms();
        if (pfd[1].revents & POLLIN)
            deliver(srv);
        for (i = 2; i < n; i++) {
            conn *c = who[i];
            int ok = 1;
            if ((pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) ||
                (c->handshake_deadline && (pfd[i].revents & POLLOUT)) ||
                (c->tls && gnutls_record_check_pending(c->tls) > 0))
                ok = conn_read(c);
            if (ok && c->handshake_deadline) {
                if (c->handshake_deadline <= now)
                    conn_close(srv, c);
                continue;
            }
            if (ok && !conn_send(c))
                ok = 0;
            if (!ok || (!nghttp2_session_want_read(c->h2) && !conn_want_write(c)))
                conn_close(srv, c);
        }
        /* Replies delivered above were only submitted: send them too. */
        for (conn *c = srv->conns, *next; c; c = next) {
            next = c->next;
            if (!c->handshake_deadline && conn_want_write(c) && !conn_send(c))
                conn_close(srv, c);
        }
        if (pfd[0].revents & POLLIN) {
            int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd >= 0)
                conn_open(srv, fd);
        }
    }
    while (srv->conns)
        conn_close(srv, srv->conns);
    free(pfd);
    free(who);
    return NULL;
}

/* ---- start / stop ---------------------------------------------------------------------- */

static int listen_on(const char *addr, char **errmsg)
{
    if (strncmp(addr, "http://", 7) == 0)
        addr += 7;
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || !colon[1]) {
        if (asprintf(errmsg, "invalid --etcd-listen %s: want HOST:PORT", addr) < 0)
            *errmsg = NULL;
        return -1;
    }
    char host[256];
    snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
                    *res = NULL;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0) {
        if (asprintf(errmsg, "invalid --etcd-listen %s: %s", addr, gai_strerror(rc)) < 0)
            *errmsg = NULL;
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 128) < 0) {
        if (asprintf(errmsg, "cannot listen on %s for the etcd API: %s", addr, strerror(errno)) < 0)
            *errmsg = NULL;
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

/* Loads the certificate, key and trusted CA into srv. 0, or -1 and *errmsg. */
static int tls_load(sk_etcd_server *srv, const sk_etcd_server_config *cfg, char **errmsg)
{
    SK_CHECK(gnutls_certificate_allocate_credentials(&srv->cred) == GNUTLS_E_SUCCESS);
    SK_CHECK(gnutls_priority_init(&srv->prio, TLS_PRIORITIES, NULL) == GNUTLS_E_SUCCESS);
    int rc = gnutls_certificate_set_x509_key_file(srv->cred, cfg->cert_file, cfg->key_file,
                                                  GNUTLS_X509_FMT_PEM);
    if (rc < 0) {
        if (asprintf(errmsg, "cannot load --etcd-cert-file %s with --etcd-key-file %s: %s",
                     cfg->cert_file, cfg->key_file, gnutls_strerror(rc)) < 0)
            *errmsg = NULL;
        return -1;
    }
    if (cfg->trusted_ca_file) {
        rc = gnutls_certificate_set_x509_trust_file(srv->cred, cfg->trusted_ca_file,
                                                    GNUTLS_X509_FMT_PEM);
        if (rc <= 0) {
            if (asprintf(errmsg, "cannot load --etcd-trusted-ca-file %s: %s",
                         cfg->trusted_ca_file,
                         rc < 0 ? gnutls_strerror(rc) : "no PEM certificate in it") < 0)
                *errmsg = NULL;
            return -1;
        }
        srv->verify_clients = 1;
    }
    return 0;
}

static void tls_free(sk_etcd_server *srv)
{
    if (!srv->cred)
        return;
    gnutls_certificate_free_credentials(srv->cred);
    gnutls_priority_deinit(srv->prio);
}

sk_etcd_server *sk_etcd_server_start(const sk_etcd_server_config *cfg, char **errmsg)
{
    sk_etcd_server *srv = calloc(1, sizeof *srv);
    SK_CHECK_ALLOC(srv);
    int fd = -1;
    if (cfg->cert_file && tls_load(srv, cfg, errmsg) < 0)
        goto fail;
    if ((fd = listen_on(cfg->listen, errmsg)) < 0)
        goto fail;
    srv->svc = (sk_etcd_service){.store = cfg->store,
                                 .cluster_id = sk_etcd_id_of("sqlkube"),
                                 .max_request_bytes = cfg->max_request_bytes
                                                          ? cfg->max_request_bytes
                                                          : SK_ETCD_MAX_REQUEST_BYTES};
    srv->max_recv = srv->svc.max_request_bytes + SK_ETCD_GRPC_OVERHEAD_BYTES;
    sk_etcd_client_url(cfg->listen, cfg->cert_file != NULL, srv->client_url,
                       sizeof srv->client_url);
    if (cfg->name)
        snprintf(srv->name, sizeof srv->name, "%s", cfg->name);
    else if (gethostname(srv->name, sizeof srv->name - 1) != 0 || !*srv->name)
        snprintf(srv->name, sizeof srv->name, "localhost");
    srv->svc.self = (sk_etcd_member){sk_etcd_id_of(srv->client_url), srv->name, srv->client_url};
    srv->svc.watches = sk_etcd_watches_start(&srv->svc, cfg->cache, cfg->watch_progress_ms);
    srv->listen_fd = fd;
    srv->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    SK_CHECK(srv->wake_fd >= 0);
    pthread_mutex_init(&srv->mu, NULL);
    pthread_cond_init(&srv->cv, NULL);
    srv->n_workers = cfg->workers > 0 ? cfg->workers : DEFAULT_WORKERS;
    srv->workers = calloc((size_t)srv->n_workers, sizeof *srv->workers);
    SK_CHECK_ALLOC(srv->workers);
    for (int i = 0; i < srv->n_workers; i++) {
        SK_CHECK(pthread_create(&srv->workers[i], NULL, worker_main, srv) == 0);
        pthread_setname_np(srv->workers[i], "sk-etcd-worker");
    }
    SK_CHECK(pthread_create(&srv->io, NULL, io_main, srv) == 0);
    pthread_setname_np(srv->io, "sk-etcd-io");
    return srv;
fail:
    tls_free(srv);
    free(srv);
    return NULL;
}

void sk_etcd_server_stop(sk_etcd_server *srv)
{
    if (!srv)
        return;
    pthread_mutex_lock(&srv->mu);
    srv->stopping = 1;
    pthread_mutex_unlock(&srv->mu);
    uint64_t one = 1;
    if (write(srv->wake_fd, &one, sizeof one) < 0) {
        /* the I/O thread also polls stopping after every wake */
    }
    pthread_join(srv->io, NULL);
    /* The I/O thread closed every connection, which queued the streaming
     * calls' on_close: the workers run them before they end. */
    pthread_mutex_lock(&srv->mu);
    srv->workers_stopping = 1;
    pthread_cond_broadcast(&srv->cv);
    pthread_mutex_unlock(&srv->mu);
    for (int i = 0; i < srv->n_workers; i++)
        pthread_join(srv->workers[i], NULL);
    /* Writes still at the store's writer come back to srv. */
    pthread_mutex_lock(&srv->mu);
    while (srv->writing)
        pthread_cond_wait(&srv->cv, &srv->mu);
    pthread_mutex_unlock(&srv->mu);
    sk_etcd_watches_stop(srv->svc.watches);
    for (sk_etcd_stream *w = srv->wakes, *next; w; w = next) {
        next = w->wake_next;
        call_release(w);
    }
    for (job *j = srv->todo, *next; j; j = next) {
        next = j->next;
        job_free(j);
    }
    for (job *j = srv->done, *next; j; j = next) {
        next = j->next;
        job_free(j);
    }
    close(srv->listen_fd);
    close(srv->wake_fd);
    pthread_mutex_destroy(&srv->mu);
    pthread_cond_destroy(&srv->cv);
    free(srv->workers);
    tls_free(srv);
    free(srv);
}
