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
 * Lifetime: a conn_ctx (and its API call) is freed only in MHD's
 * request-completed callback, never inside the content reader or a wake.
 */
#include "http/server.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define POOL_THREADS 4
#define STREAM_BLOCK (64 * 1024)

struct sk_http_server {
    struct MHD_Daemon *daemon;
    sk_api *api;
    int quiesced; /* the listening socket is ours to close, and closed */
};

typedef struct conn_ctx {
    sk_http_server *srv;
    struct MHD_Connection *conn;
    sk_buf body;
    int too_large;
    sk_api_call *call;
    pthread_mutex_t mu;
    int suspended;
    int woken;
} conn_ctx;

/* A parameter given without a value ("?verbose") is "", not absent. */
static const char *query_lookup(void *ctx, const char *key)
{
    const char *value = NULL;
    size_t len = 0;
    if (MHD_lookup_connection_value_n(ctx, MHD_GET_ARGUMENT_KIND, key, strlen(key), &value, &len) !=
        MHD_YES)
        return NULL;
    return value ? value : "";
}

static const char *header_lookup(void *ctx, const char *key)
{
    return MHD_lookup_connection_value(ctx, MHD_HEADER_KIND, key);
}

static void conn_wake(void *arg)
{
    conn_ctx *cc = arg;
    pthread_mutex_lock(&cc->mu);
    cc->woken = 1;
    if (cc->suspended) {
        cc->suspended = 0;
        MHD_resume_connection(cc->conn);
    }
    pthread_mutex_unlock(&cc->mu);
}

/* Non-zero if the peer has closed its end (a watch client that went away
 * while nothing was flowing). */
static int peer_gone(conn_ctx *cc)
{
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
    if (peer_gone(cc))
        return MHD_CONTENT_READER_END_WITH_ERROR;
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

static enum MHD_Result send_response(conn_ctx *cc)
{
    sk_api_response r;
    sk_api_call_response(cc->call, &r);
    struct MHD_Response *resp;
    if (r.streaming)
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_reader, cc,
                                                 NULL);
    else
        resp = MHD_create_response_from_buffer(r.body_len, (void *)r.body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    if (r.content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type);
    MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    for (size_t i = 0; i < r.n_warnings; i++)
        MHD_add_response_header(resp, "Warning", r.warnings[i]);
    if (r.stall_timeout_s > 0) /* MHD enforces it only while not suspended */
        MHD_set_connection_option(cc->conn, MHD_CONNECTION_OPTION_TIMEOUT,
                                  (unsigned int)r.stall_timeout_s);
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    sk_http_server *srv = cls;
    conn_ctx *cc = *con_cls;
    if (!cc) {
        cc = calloc(1, sizeof *cc);
        SK_CHECK_ALLOC(cc);
        cc->srv = srv;
        cc->conn = conn;
        pthread_mutex_init(&cc->mu, NULL);
        *con_cls = cc;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        if (!cc->too_large && cc->body.len + *upload_data_size > SK_API_MAX_BODY) {
            cc->too_large = 1;
            sk_buf_free(&cc->body);
        }
        if (!cc->too_large)
            sk_buf_append(&cc->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (!cc->call) {
        sk_http_req req = {
            .method = method,
            .path = url,
            .query = query_lookup,
            .header = header_lookup,
            .ctx = conn,
            .body = cc->body.data ? cc->body.data : "",
            .body_len = cc->body.len,
            .body_too_large = cc->too_large,
        };
        cc->call = sk_api_call_start(srv->api, &req, conn_wake, cc);
    }
    return drive(cc);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    conn_ctx *cc = *con_cls;
    if (!cc)
        return;
    /* A call still waiting for the writer cannot be freed under it; MHD only
     * completes suspended connections at daemon stop, after the store has
     * drained every pending write. */
    SK_CHECK(!cc->suspended);
    if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
        sk_api_call_stalled(cc->call);
    sk_api_call_free(cc->call);
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

int sk_http_start(const char *addr, sk_api *api, sk_http_server **out, char **errmsg)
{
    int fd;
    if (bind_listen(addr, &fd, errmsg) < 0)
        return -1;
    sk_http_server *srv = calloc(1, sizeof *srv);
    SK_CHECK_ALLOC(srv);
    srv->api = api;
    srv->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC |
            MHD_USE_ERROR_LOG,
        0, NULL, NULL, on_request, srv, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)POOL_THREADS, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)600, MHD_OPTION_CONNECTION_LIMIT, (unsigned)20000,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    if (!srv->daemon) {
        if (asprintf(errmsg, "cannot start the HTTP server on %s", addr) < 0)
            *errmsg = NULL;
        close(fd);
        free(srv);
        return -1;
    }
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
    MHD_stop_daemon(srv->daemon); /* also closes the listening socket, unless quiesced */
    free(srv);
}
