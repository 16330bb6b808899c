/*
 * streamer.c - watch bodies sent from threads of their own (see streamer.h).
 *
 * A stream belongs to one thread (round robin at add). Three things reach
 * it there: its socket's epoll events (the client went away: end it; the
 * socket can take bytes again: send), its place on the thread's ready
 * queue (its source woke it, or its turn ran out), and the stall sweep.
 *
 * Locks: a thread's mutex guards only its ready queue and the `queued`,
 * `finished` and `stopping` marks, so a wake from the hub never waits for
 * a send. Everything else in a stream (pending bytes, the epoll mask, the
 * list of streams) is touched by its thread alone.
 *
 * Ending: the thread takes the stream out of epoll and, under the mutex,
 * out of the ready queue and marks it finished (wakes after that do
 * nothing), then calls ended() with a copy of the source: the owner may
 * free the stream before ended() even returns.
 *
 * Sending: a woken stream reads its source into the thread's scratch
 * block and sends from there; only what the socket would not take is
 * copied into the stream (so 1,000 idle watchers hold no buffers). On TLS
 * a record GnuTLS could not push stays in the session and is retried with
 * the same bytes, as gnutls_record_send asks.
 */
#include "http/streamer.h"
#include "core/check.h"
#include "core/util.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

/* A turn reads at most TURN_BLOCKS blocks of BLOCK bytes, then the stream
 * goes to the back of the queue. */
#define BLOCK (64 * 1024)
#define TURN_BLOCKS 4
/* Room before a block's payload for its chunk size line ("ffff\r\n"). */
#define CHUNK_HEAD 8
#define SWEEP_MS 1000
#define MAX_EVENTS 64
#define MAX_THREADS 16

typedef struct worker worker;

struct sk_stream {
    worker *w;
    sk_stream *rprev, *rnext; /* the ready queue (w->mu) */
    sk_stream *prev, *next;   /* the thread's streams */
    int queued, finished;     /* w->mu */
    int linked;               /* in the thread's streams and epoll set */
    int fd;
    gnutls_session_t tls;
    int chunked, stall_timeout_s;
    sk_stream_source src;
    char *pending; /* bytes the socket did not take yet */
    size_t pending_len, pending_off;
    int body_done;  /* the source ended; only pending bytes are left */
    int want_out;   /* EPOLLOUT is in the epoll mask */
    int64_t blocked_since_ms;
};

struct worker {
    pthread_t thread;
    int ep, efd;
    pthread_mutex_t mu;
    sk_stream *ready_head, *ready_tail;
    size_t n_ready;
    int stopping;
    sk_stream *streams;
    sk_stream **batch; /* the queue taken whole, for one round */
    size_t batch_cap;
    char *scratch;
};

struct sk_streamer {
    worker workers[MAX_THREADS];
    unsigned n_workers;
    unsigned next; /* round robin (atomic) */
    int stopped;   /* the threads are joined (sk_streamer_stop's caller only) */
};

/* ---- the ready queue (w->mu held) -------------------------------------------- */

static void ready_push(worker *w, sk_stream *s)
{
    s->queued = 1;
    s->rnext = NULL;
    s->rprev = w->ready_tail;
    if (w->ready_tail)
        w->ready_tail->rnext = s;
    else
        w->ready_head = s;
    w->ready_tail = s;
    w->n_ready++;
}

static void ready_unlink(worker *w, sk_stream *s)
{
    if (s->rprev)
        s->rprev->rnext = s->rnext;
    else
        w->ready_head = s->rnext;
    if (s->rnext)
        s->rnext->rprev = s->rprev;
    else
        w->ready_tail = s->rprev;
    s->rprev = s->rnext = NULL;
    s->queued = 0;
    w->n_ready--;
}

static void signal_worker(worker *w)
{
    uint64_t one = 1;
    ssize_t n;
    do
        n = write(w->efd, &one, sizeof one);
    while (n < 0 && errno == EINTR);
}

/* Queues s unless it is queued or over; 1 if the thread must be told. */
static int enqueue_locked(worker *w, sk_stream *s)
{
    if (s->queued || s->finished)
        return 0;
    int was_empty = w->ready_head == NULL;
    ready_push(w, s);
    return was_empty;
}

/* ---- ending ---------------------------------------------------------------------- */

static void finish(worker *w, sk_stream *s, sk_stream_end why)
{
    if (s->linked) {
        epoll_ctl(w->ep, EPOLL_CTL_DEL, s->fd, NULL);
        if (s->prev)
            s->prev->next = s->next;
        else
            w->streams = s->next;
        if (s->next)
            s->next->prev = s->prev;
        s->linked = 0;
    }
    pthread_mutex_lock(&w->mu);
    s->finished = 1;
    if (s->queued)
        ready_unlink(w, s);
    pthread_mutex_unlock(&w->mu);
    free(s->pending);
    s->pending = NULL;
    s->pending_len = s->pending_off = 0;
    sk_stream_source src = s->src;
    src.ended(src.arg, why); /* s may be gone from here on */
}

/* ---- sending ---------------------------------------------------------------------- */

/* Sends what it can of p[0..len): the number of bytes taken (fewer than len:
 * the socket would take no more; on TLS GnuTLS then holds the record that
 * starts at p + the result), or -1 when the connection failed. */
static ssize_t send_some(sk_stream *s, const char *p, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n;
        if (s->tls) {
            n = gnutls_record_send(s->tls, p + done, len - done);
            if (n == GNUTLS_E_INTERRUPTED)
                continue;
            if (n == GNUTLS_E_AGAIN)
                break;
            if (n < 0)
                return -1;
        } else {
            n = send(s->fd, p + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                break;
            if (n < 0)
                return -1;
        }
        done += (size_t)n;
    }
    return (ssize_t)done;
}

static void want_out(worker *w, sk_stream *s, int on)
{
    if (s->want_out == on || !s->linked)
        return;
    struct epoll_event ev = {.events = EPOLLRDHUP | (on ? EPOLLOUT : 0), .data.ptr = s};
    if (epoll_ctl(w->ep, EPOLL_CTL_MOD, s->fd, &ev) == 0)
        s->want_out = on;
}

/* Sends p[0..len) after the pending bytes (none: the caller flushed them);
 * what the socket does not take becomes pending. -1: the connection failed. */
static int send_or_keep(sk_stream *s, const char *p, size_t len)
{
    ssize_t n = send_some(s, p, len);
    if (n < 0)
        return -1;
    if ((size_t)n < len) {
        s->pending = malloc(len - (size_t)n);
        SK_CHECK_ALLOC(s->pending);
        memcpy(s->pending, p + n, len - (size_t)n);
        s->pending_len = len - (size_t)n;
        s->pending_off = 0;
    }
    return 0;
}

/* 1: nothing is pending any more; 0: the socket is full; -1: it failed.
 * Any progress restarts the stall clock: a client that reads slowly but
 * steadily is not stalled. */
static int flush(sk_stream *s)
{
    if (s->pending_off == s->pending_len)
        return 1;
    ssize_t n = send_some(s, s->pending + s->pending_off, s->pending_len - s->pending_off);
    if (n < 0)
        return -1;
    if (n > 0)
        s->blocked_since_ms = 0;
    s->pending_off += (size_t)n;
    if (s->pending_off < s->pending_len)
        return 0;
    free(s->pending);
    s->pending = NULL;
    s->pending_len = s->pending_off = 0;
    return 1;
}

/* Sends pending bytes, then reads and sends until the source has nothing,
 * the socket is full, the body is over or the turn is used up. */
static void pump(worker *w, sk_stream *s)
{
    for (int blocks = 0;; blocks++) {
        int f = flush(s);
        if (f < 0) {
            finish(w, s, SK_STREAM_CLIENT_GONE);
            return;
        }
        if (f == 0) {
            if (!s->blocked_since_ms)
                s->blocked_since_ms = sk_now_ms();
            want_out(w, s, 1);
            return;
        }
        s->blocked_since_ms = 0;
        want_out(w, s, 0);
        if (s->body_done) {
            finish(w, s, SK_STREAM_ENDED);
            return;
        }
        if (blocks == TURN_BLOCKS) {
            pthread_mutex_lock(&w->mu);
            enqueue_locked(w, s);
            pthread_mutex_unlock(&w->mu);
            return;
        }
        char *payload = w->scratch + CHUNK_HEAD;
        ssize_t n = s->src.read(s->src.arg, payload, BLOCK - CHUNK_HEAD - 2);
        if (n == -2)
            return; /* parked: the source wakes us */
        if (n < 0) {
            finish(w, s, SK_STREAM_FAILED);
            return;
        }
        const char *p = payload;
        size_t len = (size_t)n;
        if (n == 0) {
            s->body_done = 1;
            p = "0\r\n\r\n";
            len = s->chunked ? 5 : 0;
        } else if (s->chunked) {
            char size_line[CHUNK_HEAD + 1];
            int hl = snprintf(size_line, sizeof size_line, "%zx\r\n", len);
            SK_CHECK(hl > 0 && hl <= CHUNK_HEAD);
            memcpy(payload - hl, size_line, (size_t)hl);
            memcpy(payload + len, "\r\n", 2);
            p = payload - hl;
            len += (size_t)hl + 2;
        }
        if (len > 0 && send_or_keep(s, p, len) < 0) {
            finish(w, s, SK_STREAM_CLIENT_GONE);
            return;
        }
    }
}

/* ---- the thread -------------------------------------------------------------------- */

/* A stream's first turn: into the thread's list and epoll set. Each send
 * is a whole event, wanted at once: Nagle's algorithm (MHD leaves the
 * socket as its last response needed it) held every small send behind the
 * client's delayed ACK of the one before, 40 ms. */
static int link_stream(worker *w, sk_stream *s)
{
    int on = 1, off = 0;
    setsockopt(s->fd, IPPROTO_TCP, TCP_CORK, &off, sizeof off);
    setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    struct epoll_event ev = {.events = EPOLLRDHUP, .data.ptr = s};
    if (epoll_ctl(w->ep, EPOLL_CTL_ADD, s->fd, &ev) < 0)
        return -1;
    s->linked = 1;
    s->prev = NULL;
    s->next = w->streams;
    if (w->streams)
        w->streams->prev = s;
    w->streams = s;
    return 0;
}

static void sweep_stalled(worker *w, int64_t now)
{
    sk_stream *next;
    for (sk_stream *s = w->streams; s; s = next) {
        next = s->next;
        if (s->blocked_since_ms && s->stall_timeout_s > 0 &&
            now - s->blocked_since_ms >= (int64_t)s->stall_timeout_s * 1000)
            finish(w, s, SK_STREAM_STALLED);
    }
}

/* Takes the whole ready queue into w->batch under one lock (the hub may be
 * queueing a thousand streams meanwhile): the number taken. A stream taken
 * is no longer queued, so a wake before its turn queues it for the next
 * round. Only its own turn can end a stream of the batch before its turn
 * comes (sockets' events and sweeps run between rounds). *stopping: the
 * streamer stops. */
static size_t take_ready(worker *w, int *stopping)
{
    pthread_mutex_lock(&w->mu);
    if (w->n_ready > w->batch_cap) {
        w->batch_cap = w->n_ready * 2;
        w->batch = realloc(w->batch, w->batch_cap * sizeof *w->batch);
        SK_CHECK_ALLOC(w->batch);
    }
    size_t n = 0;
    for (sk_stream *s = w->ready_head; s; s = s->rnext) {
        s->queued = 0;
        w->batch[n++] = s;
    }
    SK_CHECK(n == w->n_ready);
    w->ready_head = w->ready_tail = NULL;
    w->n_ready = 0;
    *stopping = w->stopping;
    pthread_mutex_unlock(&w->mu);
    return n;
}

static void stop_all(worker *w)
{
    int stopping;
    size_t n = take_ready(w, &stopping);
    for (size_t i = 0; i < n; i++)
        finish(w, w->batch[i], SK_STREAM_STOPPED);
    while (w->streams)
        finish(w, w->streams, SK_STREAM_STOPPED);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    struct epoll_event evs[MAX_EVENTS];
    int64_t next_sweep = sk_now_ms() + SWEEP_MS;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        int busy = w->ready_head != NULL, stopping = w->stopping;
        pthread_mutex_unlock(&w->mu);
        if (stopping)
            break;
        int64_t now = sk_now_ms();
        int timeout = busy ? 0 : (int)(next_sweep > now ? next_sweep - now : 0);
        int n = epoll_wait(w->ep, evs, MAX_EVENTS, timeout);
        for (int i = 0; i < n; i++) {
            sk_stream *s = evs[i].data.ptr;
            if (!s) {
                uint64_t v;
                ssize_t r = read(w->efd, &v, sizeof v);
                (void)r;
            } else if (evs[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                finish(w, s, SK_STREAM_CLIENT_GONE);
            } else if (evs[i].events & EPOLLOUT) {
                pump(w, s);
            }
        }
        /* The streams queued now get a turn each; those woken meanwhile
         * wait for the next round, after the sockets' events. */
        size_t turns = take_ready(w, &stopping);
        for (size_t i = 0; i < turns; i++) {
            sk_stream *s = w->batch[i];
            if (stopping) {
                finish(w, s, SK_STREAM_STOPPED);
                continue;
            }
            if (!s->linked && link_stream(w, s) < 0) {
                finish(w, s, SK_STREAM_CLIENT_GONE);
                continue;
            }
            pump(w, s);
        }
        now = sk_now_ms();
        if (now >= next_sweep) {
            sweep_stalled(w, now);
            next_sweep = now + SWEEP_MS;
        }
    }
    stop_all(w);
    return NULL;
}

/* ---- the handle --------------------------------------------------------------------- */

sk_streamer *sk_streamer_start(unsigned n_threads)
{
    SK_CHECK(n_threads >= 1 && n_threads <= MAX_THREADS);
    sk_streamer *st = calloc(1, sizeof *st);
    SK_CHECK_ALLOC(st);
    for (unsigned i = 0; i < n_threads; i++) {
        worker *w = &st->workers[i];
        pthread_mutex_init(&w->mu, NULL);
        w->ep = epoll_create1(EPOLL_CLOEXEC);
        w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        SK_CHECK(w->ep >= 0 && w->efd >= 0);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
        SK_CHECK(epoll_ctl(w->ep, EPOLL_CTL_ADD, w->efd, &ev) == 0);
        w->scratch = malloc(BLOCK);
        SK_CHECK_ALLOC(w->scratch);
        SK_CHECK(pthread_create(&w->thread, NULL, worker_main, w) == 0);
        pthread_setname_np(w->thread, "sk-streamer");
        st->n_workers++;
    }
    return st;
}

void sk_streamer_stop(sk_streamer *st)
{
    if (!st || st->stopped)
        return;
    for (unsigned i = 0; i < st->n_workers; i++) {
        worker *w = &st->workers[i];
        pthread_mutex_lock(&w->mu);
        w->stopping = 1;
        pthread_mutex_unlock(&w->mu);
        signal_worker(w);
    }
    for (unsigned i = 0; i < st->n_workers; i++)
        pthread_join(st->workers[i].thread, NULL);
    st->stopped = 1;
}

void sk_streamer_free(sk_streamer *st)
{
    if (!st)
        return;
    sk_streamer_stop(st);
    for (unsigned i = 0; i < st->n_workers; i++) {
        worker *w = &st->workers[i];
        close(w->ep);
        close(w->efd);
        free(w->batch);
        free(w->scratch);
        pthread_mutex_destroy(&w->mu);
    }
    free(st);
}

sk_stream *sk_streamer_add(sk_streamer *st, const sk_stream_spec *spec)
{
    unsigned i = __atomic_fetch_add(&st->next, 1, __ATOMIC_RELAXED) % st->n_workers;
    worker *w = &st->workers[i];
    sk_stream *s = calloc(1, sizeof *s);
    SK_CHECK_ALLOC(s);
    s->w = w;
    s->fd = spec->fd;
    s->tls = spec->tls_session;
    s->chunked = spec->chunked;
    s->stall_timeout_s = spec->stall_timeout_s;
    s->src = spec->source;
    if (spec->head_len > 0) {
        s->pending = malloc(spec->head_len);
        SK_CHECK_ALLOC(s->pending);
        memcpy(s->pending, spec->head, spec->head_len);
        s->pending_len = spec->head_len;
    }
    pthread_mutex_lock(&w->mu);
    int stopping = w->stopping, tell = 0;
    if (!stopping)
        tell = enqueue_locked(w, s);
    pthread_mutex_unlock(&w->mu);
    if (stopping) {
        free(s->pending);
        free(s);
        return NULL;
    }
    if (tell)
        signal_worker(w);
    return s;
}

void sk_streamer_wake(sk_stream *s)
{
    worker *w = s->w;
    pthread_mutex_lock(&w->mu);
    int tell = enqueue_locked(w, s);
    pthread_mutex_unlock(&w->mu);
    if (tell)
        signal_worker(w);
}

void sk_stream_free(sk_stream *s)
{
    if (!s)
        return;
    SK_CHECK(s->finished);
    free(s);
}
