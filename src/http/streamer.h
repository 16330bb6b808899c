/*
 * streamer.h - threads of their own that send long-lived response bodies
 * (watches) straight to the client's socket, outside libmicrohttpd's
 * event loops.
 *
 * Why: a watch's bytes sent from MHD's event-loop threads made every
 * request on the same thread wait while that thread resumed and fed its
 * share of 1,000 watchers (issue 16, item 3). The HTTP layer suspends such
 * a connection in MHD for good and hands its descriptor (and its GnuTLS
 * session, on TLS) to a streamer thread, which writes the response head
 * and body itself, then gives the connection back to MHD to close.
 *
 * Each thread has an epoll set of its streams' sockets (for "the client
 * went away" and "writable again") and a queue of streams woken by their
 * source. A woken stream is read and sent until its source has nothing,
 * up to a few blocks a turn, so one fast client cannot hold its thread;
 * what a socket would not take waits in the stream, and a client that
 * takes nothing for the stall timeout is dropped.
 *
 * Lifetime: sk_streamer_add makes a stream the caller owns; the streamer
 * uses it until it calls the source's ended(), once, on its own thread,
 * and never after; the owner then frees it with sk_stream_free.
 */
#ifndef SK_HTTP_STREAMER_H
#define SK_HTTP_STREAMER_H

#include <stddef.h>
#include <sys/types.h>

typedef struct sk_streamer sk_streamer;
typedef struct sk_stream sk_stream;

typedef enum sk_stream_end {
    SK_STREAM_ENDED,       /* the source ended the body; all of it was sent */
    SK_STREAM_CLIENT_GONE, /* the client closed its end, or the socket failed */
    SK_STREAM_STALLED,     /* the client took nothing for the stall timeout */
    SK_STREAM_FAILED,      /* the source failed */
    SK_STREAM_STOPPED,     /* sk_streamer_stop */
} sk_stream_end;

typedef struct sk_stream_source {
    /* Body bytes into buf (at most max): > 0 bytes, 0 the end, -1 a
     * failure, -2 nothing now (the source calls sk_streamer_wake later). */
    ssize_t (*read)(void *arg, char *buf, size_t max);
    /* Called once, on the streamer's thread; the stream is the owner's
     * again (to free) once it returns. */
    void (*ended)(void *arg, sk_stream_end why);
    void *arg;
} sk_stream_source;

typedef struct sk_stream_spec {
    int fd;             /* the connection's socket, non-blocking; borrowed */
    void *tls_session;  /* its gnutls_session_t, or NULL on plain HTTP; borrowed */
    const char *head;   /* the response head, sent first (copied) */
    size_t head_len;
    int chunked;        /* frame the body with HTTP/1.1 chunked encoding */
    int stall_timeout_s;
    sk_stream_source source;
} sk_stream_spec;

/* Starts n_threads threads. */
sk_streamer *sk_streamer_start(unsigned n_threads);
/* Ends every stream (SK_STREAM_STOPPED) and joins the threads; adds are
 * refused from then on (the handle stays valid for them until
 * sk_streamer_free). NULL-safe; a second call does nothing. */
void sk_streamer_stop(sk_streamer *st);
/* Stops (if not yet) and frees. NULL-safe. */
void sk_streamer_free(sk_streamer *st);
/* A new stream, sending at once; NULL once the streamer is stopping. */
sk_stream *sk_streamer_add(sk_streamer *st, const sk_stream_spec *spec);
/* The source has bytes (or its end): any thread, until ended() ran. */
void sk_streamer_wake(sk_stream *s);
/* NULL-safe; only after ended(). */
void sk_stream_free(sk_stream *s);

#endif
