/*
 * server.c - libmicrohttpd glue (see server.h).
 *
 * Threads: MHD runs a small pool of event-loop threads (epoll); each owns
 * many connections. A request runs on its connection's thread until it must
 * wait for the store's writer; then the connection is suspended (no thread
 * waits) and resumed when the API call wakes it.
 *
 * The suspend/wake race: a write may finish (and wake) before the access
 * handler has suspended the connection. conn_ctx.mu orders the two: wake
 * sets `woken` and resumes only a connection that is actually suspended;
 * the handler suspends only if no wake has happened yet, else it steps the
 * call again at once.
 *
 * Requests: MHD's URI log callback makes each request's conn_ctx with a
 * copy of the raw request target, which target.c parses; MHD is handed an
 * empty query to parse, because its own parser stalls a connection whose
 * parameters overflow the connection's memory pool.
 *
 * Connections: each TCP connection has a conn_sock (MHD's socket context).
 * Until its first request header is complete it is on the `fresh` list,
 * oldest first; once a second the sweeper shuts down (shutdown(2), never
 * close: the descriptor stays MHD's) those older than the header timeout,
 * which MHD's idle timeout alone would not do for a client that sends a
 * byte every few seconds. A conn_sock leaves the list under fresh_mu before
 * MHD closes its descriptor (MHD notifies CLOSED first), so the sweeper
 * never touches a descriptor that may have been reused.
 *
 * TLS: MHD polls TLS connections with poll(2), not epoll. MHD 0.9.75's
 * edge-triggered epoll loop spins on a connection whose TLS handshake is
 * waiting for the rest of a record (GnuTLS reads the socket itself, so MHD
 * never sees the EAGAIN that would clear its "read ready" mark): a client
 * that sends half a ClientHello held a pool thread at full CPU until the
 * header timeout, and every normal handshake burned ~3 ms of server CPU in
 * that loop instead of ~0.8 ms (bench/authz.py). poll(2) is level-triggered;
 * its cost grows with the connections per pool thread, which the
 * connection limits bound.
 *
 * The client certificate is checked when a connection's first request
 * header is complete (the handshake is over by then) and the result is kept
 * in its conn_sock for the connection's later requests; a keep-alive
 * connection outliving its certificate's notAfter stops being authenticated
 * by it, as kube checks validity at every request.
 *
 * Watches: a GET whose response is a watch is not given to MHD. Its
 * connection stays suspended while the streamer (streamer.h) writes the
 * head and body straight to the socket or GnuTLS session, so watch sends
 * never hold an event-loop thread that requests need; the call's wakes go
 * to the streamer. When the stream ends, stream_ended resumes the
 * connection and the access handler answers MHD_NO: MHD closes it without
 * writing (the head said Connection: close). The streamer is stopped
 * before MHD, so no streamed connection is suspended when MHD stops.
 *
 * Lifetime: a conn_ctx (and its API call) is freed only in MHD's
 * request-completed callback, never inside the content reader or a wake.
 */
#include "http/server.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/log.h"
#include "core/ticker.h"
#include "core/utf8.h"
#include "core/util.h"
#include "http/streamer.h"
#include "http/target.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Event-loop threads: one per online CPU, 2 to 4. They rarely block (a
 * request waiting for the writer is suspended), so threads beyond the
 * cores only queue for them: with 1,000 watchers on 2 cores, 2 threads
 * halved the server's run queue wait and the watchers' lag against 4; on a
 * loaded machine they also used a fifth less CPU per delivered event
 * (bench/README.md, fan-out). */
#define POOL_THREADS_MIN 2
#define POOL_THREADS_MAX 4
#define STREAM_BLOCK (64 * 1024)
#define SWEEP_INTERVAL_MS 1000
/* How often a stream MHD sends (a list; a watch only on HEAD or while the
 * server stops) asks the kernel whether its client went away: a poll(2) per
 * 64 KiB block or per watch event was a sixth of the server's CPU when 1,000
 * watchers each got every event; the hub's tick wakes parked watchers about
 * once a second, so a gone client is still noticed within two. */
#define PEER_CHECK_MS 1000
#define MAX_PEER_ORGS 32
#define MAX_DN_VALUE 1024
/* TLS 1.2 and 1.3 only, GnuTLS's default suites otherwise. */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

typedef struct conn_sock {
    struct conn_sock *prev, *next;
    int fd;
    int64_t header_deadline_ms;
    int fresh; /* on the fresh list */
    char peer_addr[INET6_ADDRSTRLEN]; /* the client's address as text, or "" */
    int peer_checked, peer_cert;      /* peer_cert: SK_PEER_CERT_* */
    char *peer_cn;
    char *peer_orgs[MAX_PEER_ORGS];
    size_t n_peer_orgs;
    time_t peer_not_after;
} conn_sock;

struct sk_http_server {
    struct MHD_Daemon *daemon;
    sk_api *api;
    int quiesced; /* the listening socket is ours to close, and closed */
    int header_timeout_s, idle_timeout_s;
    pthread_mutex_t fresh_mu;
    conn_sock *fresh_head, *fresh_tail; /* no complete request header yet, oldest first */
    sk_ticker *sweeper;
    sk_streamer *streamer; /* sends watch bodies (streamer.h) */
    char *tls_cert, *tls_key, *tls_trust; /* NULL: plain HTTP */
};

/* The most of a body over the limit read and dropped so that its 413
 * reaches the client; a larger one is answered at once and cut off. */
#define MAX_DISCARDED_BODY (16u * 1024 * 1024)

typedef struct conn_ctx {
    sk_http_server *srv;
    struct MHD_Connection *conn;
    char *raw_target;
    const char *method;  /* MHD's, valid for the request */
    const char *version; /* MHD's, valid for the request */
    int started;        /* the access handler has seen this request's header */
    sk_target target;
    sk_err reject;
    char *reject_msg;
    sk_buf body;
    int too_large;
    uint64_t discarded; /* bytes of a too-large body read and dropped */
    const conn_sock *sock; /* the connection's, for its client certificate */
    sk_api_call *call;
    pthread_mutex_t mu;
    int suspended;
    int woken;
    int64_t peer_checked_ms; /* the stream's last peer_gone check */
    /* A watch body the streamer sends: `streamed` while the streamer owns
     * it (wakes go there), stream_end once it is over (the connection is
     * resumed only to be closed). */
    sk_stream *stream;
    int streamed;
    int stream_end;
    /* The session corked for this request's response (cork_response):
     * on_completed sends it. */
    gnutls_session_t corked;
} conn_ctx;

/* ---- connections ---------------------------------------------------------- */

static void fresh_unlink(sk_http_server *srv, conn_sock *cs)
{
    if (!cs->fresh)
        return;
    if (cs->prev)
        cs->prev->next = cs->next;
    else
        srv->fresh_head = cs->next;
    if (cs->next)
        cs->next->prev = cs->prev;
    else
        srv->fresh_tail = cs->prev;
    cs->prev = cs->next = NULL;
    cs->fresh = 0;
}

/* The peer's address as text into buf, or NULL: once per connection, as
 * inet_ntop cost every request 0.7% of a create's CPU. */
static const char *peer_address(struct MHD_Connection *conn, char *buf, size_t n)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET)
        return inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)n);
    if (sa && sa->sa_family == AF_INET6)
        return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf,
                         (socklen_t)n);
    return NULL;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    sk_http_server *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn_sock *cs = calloc(1, sizeof *cs);
        SK_CHECK_ALLOC(cs);
        cs->fd = ci ? ci->connect_fd : -1;
        if (!peer_address(conn, cs->peer_addr, sizeof cs->peer_addr))
            cs->peer_addr[0] = '\0';
        cs->header_deadline_ms = sk_now_ms() + (int64_t)srv->header_timeout_s * 1000;
        pthread_mutex_lock(&srv->fresh_mu);
        if (cs->fd >= 0) {
            cs->prev = srv->fresh_tail;
            if (srv->fresh_tail)
                srv->fresh_tail->next = cs;
            else
                srv->fresh_head = cs;
            srv->fresh_tail = cs;
            cs->fresh = 1;
        }
        pthread_mutex_unlock(&srv->fresh_mu);
        *socket_context = cs;
        return;
    }
    conn_sock *cs = *socket_context;
    if (!cs)
        return;
    pthread_mutex_lock(&srv->fresh_mu);
    fresh_unlink(srv, cs);
    pthread_mutex_unlock(&srv->fresh_mu);
    free(cs->peer_cn);
    for (size_t i = 0; i < cs->n_peer_orgs; i++)
        free(cs->peer_orgs[i]);
    free(cs);
    *socket_context = NULL;
}

/* One value of attribute oid (index idx) of crt's subject, new; NULL when
 * there is none. *bad is set for a value too long to be a name. */
static char *subject_value(gnutls_x509_crt_t crt, const char *oid, unsigned idx, int *bad)
{
    char value[MAX_DN_VALUE];
    size_t size = sizeof value;
    int r = gnutls_x509_crt_get_dn_by_oid(crt, oid, idx, 0, value, &size);
    if (r == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
        return NULL;
    if (r < 0 || size >= sizeof value || strlen(value) != size) {
        *bad = 1;
        return NULL;
    }
    char *copy = strdup(value);
    SK_CHECK_ALLOC(copy);
    return copy;
}

/* Verifies the client certificate the TLS session carries, if any, against
 * the trusted CA (MHD's credentials hold it) for client authentication,
 * and keeps its subject in cs. */
static void check_peer(sk_http_server *srv, struct MHD_Connection *conn, conn_sock *cs)
{
    cs->peer_checked = 1;
    cs->peer_cert = SK_PEER_CERT_NONE;
    const union MHD_ConnectionInfo *ci =
        srv->tls_cert ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION) : NULL;
    if (!ci || !ci->tls_session)
        return;
    gnutls_session_t session = (gnutls_session_t)ci->tls_session;
    unsigned n = 0;
    const gnutls_datum_t *peers = gnutls_certificate_get_peers(session, &n);
    if (!peers || n == 0)
        return;
    cs->peer_cert = SK_PEER_CERT_INVALID;
    gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
                                     .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT};
    unsigned status = 0;
    if (gnutls_certificate_verify_peers(session, &purpose, 1, &status) < 0 || status != 0)
        return;
    gnutls_x509_crt_t crt;
    if (gnutls_x509_crt_init(&crt) < 0)
        return;
    int bad = 0;
    if (gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER) == 0) {
        cs->peer_not_after = gnutls_x509_crt_get_expiration_time(crt);
        cs->peer_cn = subject_value(crt, GNUTLS_OID_X520_COMMON_NAME, 0, &bad);
        for (unsigned i = 0; !bad; i++) {
            char *org = subject_value(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, i, &bad);
            if (!org)
                break;
            if (cs->n_peer_orgs == MAX_PEER_ORGS) {
                free(org);
                bad = 1;
                break;
            }
            cs->peer_orgs[cs->n_peer_orgs++] = org;
        }
        if (!bad)
            cs->peer_cert = SK_PEER_CERT_VALID;
    }
    gnutls_x509_crt_deinit(crt);
}

/* A request header is complete: the connection is no longer fresh, and from
 * now on it may idle (between keep-alive requests, while a body trickles)
 * for the idle timeout. Returns its conn_sock (NULL if MHD has none). */
static conn_sock *connection_settled(sk_http_server *srv, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    conn_sock *cs = ci ? ci->socket_context : NULL;
    if (cs) {
        pthread_mutex_lock(&srv->fresh_mu);
        fresh_unlink(srv, cs);
        pthread_mutex_unlock(&srv->fresh_mu);
        if (!cs->peer_checked)
            check_peer(srv, conn, cs);
    }
    MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
                              (unsigned int)srv->idle_timeout_s);
    return cs;
}

static int64_t sweep_fresh(void *arg)
{
    sk_http_server *srv = arg;
    int64_t now = sk_now_ms();
    int shut = 0;
    pthread_mutex_lock(&srv->fresh_mu);
    while (srv->fresh_head && srv->fresh_head->header_deadline_ms <= now) {
        conn_sock *cs = srv->fresh_head;
        shutdown(cs->fd, SHUT_RDWR); /* MHD sees the end and closes it */
        fresh_unlink(srv, cs);
        shut++;
    }
    pthread_mutex_unlock(&srv->fresh_mu);
    if (shut)
        sk_log_debug("http: closed %d connections that sent no request header in %d s", shut,
                     srv->header_timeout_s);
    return SWEEP_INTERVAL_MS;
}

/* ---- requests --------------------------------------------------------------- */

/* MHD calls this when a request line has arrived, before it parses the
 * query: the request's context starts here, with the raw target. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    conn_ctx *cc = calloc(1, sizeof *cc);
    SK_CHECK_ALLOC(cc);
    cc->srv = cls;
    cc->conn = conn;
    cc->raw_target = strdup(uri ? uri : "");
    SK_CHECK_ALLOC(cc->raw_target);
    pthread_mutex_init(&cc->mu, NULL);
    /* The target is MHD's own buffer; ending it after '?' leaves MHD an
     * empty query to parse (see the top of this file). */
    char *query = uri ? strchr(uri, '?') : NULL;
    if (query)
        query[1] = '\0';
    return cc;
}

static const char *query_lookup(void *ctx, const char *key)
{
    conn_ctx *cc = ctx;
    return sk_target_query(&cc->target, key);
}

static const char *header_lookup(void *ctx, const char *key)
{
    conn_ctx *cc = ctx;
    return MHD_lookup_connection_value(cc->conn, MHD_HEADER_KIND, key);
}

typedef struct header_visit {
    void (*fn)(void *arg, const char *key, const char *value);
    void *arg;
} header_visit;

static enum MHD_Result visit_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    header_visit *v = cls;
    v->fn(v->arg, key, value ? value : "");
    return MHD_YES;
}

static void each_header(void *ctx, void (*fn)(void *arg, const char *key, const char *value),
                        void *arg)
{
    conn_ctx *cc = ctx;
    header_visit v = {fn, arg};
    MHD_get_connection_values(cc->conn, MHD_HEADER_KIND, visit_header, &v);
}

static enum MHD_Result check_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    int *valid = cls;
    if (!sk_utf8_valid(key, strlen(key)) || (value && !sk_utf8_valid(value, strlen(value)))) {
        *valid = 0;
        return MHD_NO;
    }
    return MHD_YES;
}

static void conn_wake(void *arg)
{
    conn_ctx *cc = arg;
    pthread_mutex_lock(&cc->mu);
    cc->woken = 1;
    if (cc->streamed) {
        sk_streamer_wake(cc->stream);
    } else if (cc->suspended) {
        cc->suspended = 0;
        MHD_resume_connection(cc->conn);
    }
    pthread_mutex_unlock(&cc->mu);
}

/* Non-zero if the peer has closed its end (a watch client that went away
 * while nothing was flowing, a client that gave up on a long request). */
static int peer_gone(void *ctx)
{
    conn_ctx *cc = ctx;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(cc->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return 0;
    struct pollfd p = {.fd = ci->connect_fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    conn_ctx *cc = cls;
    pthread_mutex_lock(&cc->mu);
    cc->woken = 0;
    pthread_mutex_unlock(&cc->mu);
    int64_t now = sk_now_ms();
    if (now - cc->peer_checked_ms >= PEER_CHECK_MS) {
        cc->peer_checked_ms = now;
        if (peer_gone(cc))
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    ssize_t n = sk_api_call_read(cc->call, buf, max);
    if (n == -2) {
        /* Nothing to send: suspend until the call's wake (commit or tick),
         * unless that wake already came. MHD calls us again after resume. */
        pthread_mutex_lock(&cc->mu);
        if (!cc->woken) {
            cc->suspended = 1;
            MHD_suspend_connection(cc->conn);
        }
        pthread_mutex_unlock(&cc->mu);
        return 0;
    }
    if (n == 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (n < 0)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    return n;
}

/* ---- watches, sent by the streamer --------------------------------------------- */

/* A header value safe to write as is: MHD refuses CR and LF too. */
static int header_value_ok(const char *v)
{
    for (; *v; v++)
        if ((unsigned char)*v < 0x20 && *v != '\t')
            return 0;
    return 1;
}

static void head_field(sk_buf *b, const char *name, const char *value)
{
    if (value && header_value_ok(value))
        sk_buf_printf(b, "%s: %s\r\n", name, value);
}

/* The response head MHD would have written for r, ending the connection
 * after the body: the streamer cannot hand a connection back for reuse. */
static void stream_head(const sk_api_response *r, int chunked, sk_buf *b)
{
    const char *reason = MHD_get_reason_phrase_for((unsigned)r->status);
    char date[64];
    time_t now = time(NULL);
    struct tm tm;
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&now, &tm));
    sk_buf_printf(b, "HTTP/1.1 %d %s\r\n", r->status, reason && *reason ? reason : "Unknown");
    head_field(b, "Date", date);
    head_field(b, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
    head_field(b, "Cache-Control", "no-cache, private");
    for (size_t i = 0; i < r->n_warnings; i++)
        head_field(b, "Warning", r->warnings[i]);
    char retry[16];
    snprintf(retry, sizeof retry, "%d", r->retry_after_s);
    head_field(b, "Retry-After", r->retry_after_s > 0 ? retry : NULL);
    head_field(b, "Audit-Id", r->audit_id);
    if (chunked)
        head_field(b, "Transfer-Encoding", "chunked");
    head_field(b, "Connection", "close");
    sk_buf_puts(b, "\r\n");
}

static ssize_t stream_read(void *arg, char *buf, size_t max)
{
    conn_ctx *cc = arg;
    return sk_api_call_read(cc->call, buf, max);
}

/* On the streamer's thread: the body is over; MHD gets the connection back
 * and closes it (on_request answers MHD_NO). */
static void stream_ended(void *arg, sk_stream_end why)
{
    conn_ctx *cc = arg;
    struct MHD_Connection *conn = cc->conn;
    pthread_mutex_lock(&cc->mu); /* after stream_watch's suspend */
    cc->streamed = 0;
    cc->stream_end = (int)why;
    cc->suspended = 0;
    pthread_mutex_unlock(&cc->mu);
    /* Last: once resumed, MHD's thread may close the connection and free cc
     * at once (on_request answers without taking cc->mu). */
    MHD_resume_connection(conn);
}

/* Hands a watch's connection to the streamer: 1 if it took it (the
 * connection stays suspended in MHD until the stream ends), 0 to send the
 * body through MHD (a HEAD request, or a streamer already stopping). */
static int stream_watch(conn_ctx *cc, const sk_api_response *r)
{
    sk_http_server *srv = cc->srv;
    if (strcmp(cc->method, MHD_HTTP_METHOD_GET) != 0)
        return 0;
    const union MHD_ConnectionInfo *fd_info =
        MHD_get_connection_info(cc->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *tls_info =
        srv->tls_cert ? MHD_get_connection_info(cc->conn, MHD_CONNECTION_INFO_GNUTLS_SESSION)
                      : NULL;
    if (!fd_info || (srv->tls_cert && (!tls_info || !tls_info->tls_session)))
        return 0;
    int chunked = strcmp(cc->version, MHD_HTTP_VERSION_1_1) == 0;
    sk_buf head = {0};
    stream_head(r, chunked, &head);
    sk_stream_spec spec = {
        .fd = fd_info->connect_fd,
        .tls_session = tls_info ? tls_info->tls_session : NULL,
        .head = head.data,
        .head_len = head.len,
        .chunked = chunked,
        .stall_timeout_s = r->stall_timeout_s,
        .source = {stream_read, stream_ended, cc},
    };
    /* Under cc->mu: the stream may end (and resume) only after the suspend. */
    pthread_mutex_lock(&cc->mu);
    cc->stream = sk_streamer_add(srv->streamer, &spec);
    int taken = cc->stream != NULL;
    if (taken) {
        cc->streamed = 1;
        cc->suspended = 1;
        MHD_suspend_connection(cc->conn);
    }
    pthread_mutex_unlock(&cc->mu);
    sk_buf_free(&head);
    return taken;
}

/* Corks the connection's TLS session when the whole response is small
 * and the socket's send queue is empty. MHD 0.9.75 hands a TLS session the
 * header and the body in two calls, which GnuTLS seals as two records and
 * sends with two sendmsg(2): a second pass through the loopback's stack and
 * a second wake-up of the client, per request (bench/README.md, "One TLS
 * record per response"). Corked, both calls only buffer and on_completed
 * sends them as one record. MHD notifies completion before it reuses or
 * shuts down the session (connection.c: connection_reset and
 * MHD_connection_close_ call notify_completed first), so nothing MHD sends
 * can overtake the corked bytes. The empty queue and the size bound make
 * the uncork's one send fit the socket buffer. */
#define CORK_MAX (8 * 1024)
static void cork_response(conn_ctx *cc, size_t body_len)
{
    if (!cc->srv->tls_cert || body_len > CORK_MAX - 1024)
        return;
    const union MHD_ConnectionInfo *fd_info =
        MHD_get_connection_info(cc->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *tls_info =
        MHD_get_connection_info(cc->conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    int queued = 0;
    if (!fd_info || !tls_info || !tls_info->tls_session ||
        ioctl(fd_info->connect_fd, SIOCOUTQ, &queued) != 0 || queued != 0)
        return;
    cc->corked = (gnutls_session_t)tls_info->tls_session;
    gnutls_record_cork(cc->corked);
}

/* Sends what cork_response held back, in one record. A send the socket
 * refuses (a client that stopped reading) leaves the session corked, and
 * MHD would then only add to it: the connection is shut down instead. */
static void uncork_response(conn_ctx *cc)
{
    if (!cc->corked)
        return;
    const union MHD_ConnectionInfo *fd_info =
        MHD_get_connection_info(cc->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (fd_info) {
        int fd = fd_info->connect_fd, on = 1;
        if (gnutls_record_uncork(cc->corked, 0) < 0 || gnutls_record_check_corked(cc->corked) > 0)
            shutdown(fd, SHUT_RDWR);
        else
            /* MHD pushed (TCP_NODELAY) after its last send, which only
             * reached the cork: the socket may still hold TCP_CORK, and
             * Linux pushes what is queued when TCP_NODELAY is set. */
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    }
    cc->corked = NULL;
}

static enum MHD_Result send_response(conn_ctx *cc)
{
    sk_api_response r;
    sk_api_call_response(cc->call, &r);
    if (r.watch && stream_watch(cc, &r))
        return MHD_YES;
    struct MHD_Response *resp;
    if (r.streaming)
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_reader, cc,
                                                 NULL);
    else
        /* Not copied: the body lives in the call, which on_completed frees
         * only after MHD is done sending it (or closed the connection). */
        resp = MHD_create_response_from_buffer(r.body_len, (void *)r.body, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    if (r.content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type);
    MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    for (size_t i = 0; i < r.n_warnings; i++)
        MHD_add_response_header(resp, "Warning", r.warnings[i]);
    char retry[16];
    snprintf(retry, sizeof retry, "%d", r.retry_after_s);
    if (r.retry_after_s > 0)
        MHD_add_response_header(resp, "Retry-After", retry);
    if (r.audit_id)
        MHD_add_response_header(resp, "Audit-Id", r.audit_id);
    if (r.stall_timeout_s > 0) /* MHD enforces it only while not suspended */
        MHD_set_connection_option(cc->conn, MHD_CONNECTION_OPTION_TIMEOUT,
                                  (unsigned int)r.stall_timeout_s);
    if (!r.streaming)
        cork_response(cc, r.body_len);
    enum MHD_Result ret = MHD_queue_response(cc->conn, (unsigned)r.status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* Steps the call until it has a response or is suspended waiting. */
static enum MHD_Result drive(conn_ctx *cc)
{
    for (;;) {
        pthread_mutex_lock(&cc->mu);
        cc->woken = 0;
        pthread_mutex_unlock(&cc->mu);
        if (sk_api_call_step(cc->call))
            return send_response(cc);
        pthread_mutex_lock(&cc->mu);
        if (!cc->woken) {
            cc->suspended = 1;
            MHD_suspend_connection(cc->conn);
            pthread_mutex_unlock(&cc->mu);
            return MHD_YES;
        }
        pthread_mutex_unlock(&cc->mu);
    }
}

/* First sight of a request's header: parse the target, check what the API
 * will read, and refuse a body declared over the limit before reading it. */
static void settle_request(conn_ctx *cc)
{
    char *msg = NULL;
    sk_err err = sk_target_parse(cc->raw_target, strlen(cc->raw_target), &cc->target, &msg);
    int headers_valid = 1;
    if (err == SK_OK) {
        MHD_get_connection_values(cc->conn, MHD_HEADER_KIND, check_header, &headers_valid);
        if (!headers_valid) {
            err = SK_ERR_BAD_REQUEST;
            msg = strdup("a request header is not valid UTF-8");
            SK_CHECK_ALLOC(msg);
        }
    }
    cc->reject = err;
    cc->reject_msg = msg;
    const char *length = MHD_lookup_connection_value(cc->conn, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (length) {
        char *end;
        errno = 0;
        unsigned long long declared = strtoull(length, &end, 10);
        cc->too_large = errno == ERANGE || declared > SK_API_MAX_BODY;
        cc->discarded = cc->too_large && declared > MAX_DISCARDED_BODY ? UINT64_MAX : 0;
    }
}

/* The connection's certificate state for a request starting now. */
static int peer_cert_now(const conn_sock *cs)
{
    if (!cs)
        return SK_PEER_CERT_NONE;
    if (cs->peer_cert == SK_PEER_CERT_VALID && time(NULL) > cs->peer_not_after)
        return SK_PEER_CERT_INVALID;
    return cs->peer_cert;
}

static void start_call(conn_ctx *cc)
{
    sk_http_req req = {
        .method = cc->method,
        .segs = (const char *const *)cc->target.segs,
        .n_segs = cc->target.n_segs,
        .query = query_lookup,
        .header = header_lookup,
        .each_header = each_header,
        .client_gone = peer_gone,
        .ctx = cc,
        .target = cc->raw_target,
        .peer_addr = cc->sock && cc->sock->peer_addr[0] ? cc->sock->peer_addr : NULL,
        .body = cc->body.data ? cc->body.data : "",
        .body_len = cc->body.len,
        .body_too_large = cc->too_large,
        .reject = cc->reject,
        .reject_msg = cc->reject_msg,
        .peer_cert = peer_cert_now(cc->sock),
        .peer_cn = cc->sock ? cc->sock->peer_cn : NULL,
        .peer_orgs = cc->sock ? (const char *const *)cc->sock->peer_orgs : NULL,
        .n_peer_orgs = cc->sock ? cc->sock->n_peer_orgs : 0,
    };
    cc->call = sk_api_call_start(cc->srv->api, &req, conn_wake, cc);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    conn_ctx *cc = *con_cls;
    SK_CHECK(cc != NULL); /* made by on_uri */
    /* The streamer sent the whole response: MHD closes the connection without
     * writing (and logs it, at debug level, as the application's error). */
    if (cc->stream)
        return MHD_NO;
    if (!cc->started) {
        cc->started = 1;
        cc->method = method;
        cc->version = version;
        cc->sock = connection_settled(cc->srv, conn);
        settle_request(cc);
        if (cc->reject == SK_OK && cc->discarded == 0)
            return MHD_YES; /* the body, if any, comes next */
        /* Answer now, leaving the body unread: MHD then closes the connection. */
    }
    if (*upload_data_size > 0) {
        if (cc->too_large || cc->body.len + *upload_data_size > SK_API_MAX_BODY) {
            /* Read and drop the rest, up to a bound, before answering 413:
             * closing with unread input sends a reset, which over TLS loses
             * the answer before the client reads it. */
            cc->too_large = 1;
            sk_buf_free(&cc->body);
            if (cc->discarded > MAX_DISCARDED_BODY ||
                *upload_data_size > MAX_DISCARDED_BODY - cc->discarded)
                return MHD_NO;
            cc->discarded += *upload_data_size;
            *upload_data_size = 0;
            return MHD_YES;
        }
        sk_buf_append(&cc->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (!cc->call)
        start_call(cc);
    return drive(cc);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    conn_ctx *cc = *con_cls;
    if (!cc)
        return;
    uncork_response(cc);
    /* A call still waiting for the writer cannot be freed under it; MHD only
     * completes suspended connections at daemon stop, after the store has
     * drained every pending write. */
    SK_CHECK(!cc->suspended);
    if ((toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED || cc->stream_end == SK_STREAM_STALLED) &&
        cc->call)
        sk_api_call_stalled(cc->call);
    sk_stream_free(cc->stream);
    sk_api_call_free(cc->call);
    sk_target_clear(&cc->target);
    free(cc->raw_target);
    free(cc->reject_msg);
    sk_buf_free(&cc->body);
    pthread_mutex_destroy(&cc->mu);
    free(cc);
    *con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    sk_log_debug("http: %s", line);
}

/* Binds addr ourselves so a port in use or a bad address gives one clear line. */
static int bind_listen(const char *addr, int *fd_out, char **errmsg)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || (size_t)(colon - addr) >= sizeof host || !colon[1]) {
        if (asprintf(errmsg, "invalid --listen address %s: want HOST:PORT", addr) < 0)
            *errmsg = NULL;
        return -1;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (*end || port < 0 || port > 65535 || inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        if (asprintf(errmsg, "invalid --listen address %s: want IPv4 HOST:PORT", addr) < 0)
            *errmsg = NULL;
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 1024) < 0) {
        if (asprintf(errmsg, "cannot listen on %s: %s", addr, strerror(errno)) < 0)
            *errmsg = NULL;
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *fd_out = fd;
    return 0;
}

static void free_tls(sk_http_server *srv)
{
    if (srv->tls_key)
        explicit_bzero(srv->tls_key, strlen(srv->tls_key));
    free(srv->tls_cert);
    free(srv->tls_key);
    free(srv->tls_trust);
}

static unsigned pool_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < POOL_THREADS_MIN ? POOL_THREADS_MIN
           : n > POOL_THREADS_MAX ? POOL_THREADS_MAX
                                  : (unsigned)n;
}

int sk_http_start(const sk_http_config *cfg, sk_api *api, sk_http_server **out, char **errmsg)
{
    int fd;
    if (bind_listen(cfg->listen, &fd, errmsg) < 0)
        return -1;
    sk_http_server *srv = calloc(1, sizeof *srv);
    SK_CHECK_ALLOC(srv);
    srv->api = api;
    srv->header_timeout_s = cfg->header_timeout_s > 0 ? cfg->header_timeout_s : 10;
    srv->idle_timeout_s = cfg->idle_timeout_s > 0 ? cfg->idle_timeout_s : 90;
    pthread_mutex_init(&srv->fresh_mu, NULL);
    if (cfg->tls_cert_pem) {
        srv->tls_cert = strdup(cfg->tls_cert_pem);
        srv->tls_key = strdup(cfg->tls_key_pem);
        srv->tls_trust = strdup(cfg->tls_trust_pem);
        SK_CHECK(srv->tls_cert && srv->tls_key && srv->tls_trust);
    }
    /* Before MHD: the listening socket's backlog may hold a watch already. */
    srv->streamer = sk_streamer_start(pool_threads());
    /* A fresh connection may idle for the header timeout (MHD's default
     * timeout); connection_settled gives it the idle timeout afterwards.
     * TLS is polled with poll(2) (see the top of this file). */
    srv->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | (srv->tls_cert ? MHD_USE_POLL : MHD_USE_EPOLL) |
            MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC | MHD_USE_ERROR_LOG |
            (srv->tls_cert ? MHD_USE_TLS : 0),
        0, NULL, NULL, on_request, srv, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE,
        pool_threads(), MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION,
        on_connection, srv, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)srv->header_timeout_s,
        MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        cfg->max_connections_per_ip, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        /* Options MHD reads only with MHD_USE_TLS; the list ends early without TLS. */
        srv->tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, srv->tls_cert,
        MHD_OPTION_HTTPS_MEM_KEY, srv->tls_key, MHD_OPTION_HTTPS_MEM_TRUST, srv->tls_trust,
        MHD_OPTION_HTTPS_PRIORITIES, TLS_PRIORITIES, MHD_OPTION_END);
    if (!srv->daemon) {
        if (asprintf(errmsg, "cannot start the HTTP server on %s", cfg->listen) < 0)
            *errmsg = NULL;
        close(fd);
        sk_streamer_free(srv->streamer);
        pthread_mutex_destroy(&srv->fresh_mu);
        free_tls(srv);
        free(srv);
        return -1;
    }
    srv->sweeper = sk_ticker_start(SWEEP_INTERVAL_MS, sweep_fresh, srv);
    *out = srv;
    return 0;
}

void sk_http_quiesce(sk_http_server *srv)
{
    if (!srv || srv->quiesced)
        return;
    MHD_socket fd = MHD_quiesce_daemon(srv->daemon);
    srv->quiesced = 1;
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
}

void sk_http_stop(sk_http_server *srv)
{
    if (!srv)
        return;
    sk_ticker_stop(srv->sweeper);
    /* Every watch connection back in MHD (resumed) before MHD stops; a watch
     * asked for meanwhile is sent by MHD (the stopped streamer refuses it),
     * so the streamer is freed only once MHD's threads are gone. */
    sk_streamer_stop(srv->streamer);
    MHD_stop_daemon(srv->daemon);
    sk_streamer_free(srv->streamer); /* also closes the listening socket, unless quiesced */
    pthread_mutex_destroy(&srv->fresh_mu);
    free_tls(srv);
    free(srv);
}
