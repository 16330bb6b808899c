/*
 * client.c - see client.h. A blocking socket, GnuTLS records over it when
 * the endpoint is https, and an nghttp2 session in client mode.
 *
 * One call at a time: the call's state lives in the client (the stream id,
 * its reassembly buffer, grpc-status and grpc-message from the trailers),
 * so nghttp2's callbacks need no lookup. A call's request goes out as one
 * DATA run with END_STREAM; its answers are reassembled with the server's
 * own framing code (grpc.h) and handed over one message at a time.
 *
 * Reads wait in poll() with the idle period as timeout, so a quiet Watch
 * still gives the caller its idle callback (a signal to stop, a cut-over)
 * without a second thread. GnuTLS may hold decrypted bytes poll cannot see:
 * gnutls_record_check_pending is asked first.
 *
 * Flow control: the connection and each stream get a 16 MiB window, so a
 * snapshot streams without a WINDOW_UPDATE round trip per 64 KiB; nghttp2
 * gives the window back as the bytes are consumed.
 */
#include "etcd/client.h"

#include "core/buf.h"
#include "core/check.h"
#include "etcd/grpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
    CONNECT_TIMEOUT_MS = 10000,
    WINDOW = 16 << 20,
    MAX_MESSAGE = 512 << 20, /* a source is trusted; this only bounds a broken one */
    IO_CHUNK = 64 << 10,
};

struct sk_etcd_client {
    int fd;
    gnutls_session_t tls; /* NULL: cleartext */
    gnutls_certificate_credentials_t cred;
    nghttp2_session *h2;
    char *endpoint, *authority;
    int https;
    int broken; /* the connection failed: every later call fails at once */
    char *io_error;
    /* the call in flight */
    int32_t stream;
    int closed, stopped;
    sk_buf in, req;
    size_t req_off;
    int status; /* grpc-status; -1 until the trailers came */
    char *message;
    uint32_t h2_error;
    sk_etcd_client_msg_fn on_message;
    void *arg;
};

static void set_io_error(sk_etcd_client *c, const char *what, const char *why)
{
    if (!c->io_error)
        SK_CHECK(asprintf(&c->io_error, "%s: %s: %s", c->endpoint, what, why) >= 0);
    c->broken = 1;
}

static ssize_t on_send(nghttp2_session *h2, const uint8_t *data, size_t len, int flags, void *user)
{
    (void)h2;
    (void)flags;
    sk_etcd_client *c = user;
    if (c->tls) {
        ssize_t n;
        do
            n = gnutls_record_send(c->tls, data, len);
        while (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED);
        if (n < 0) {
            set_io_error(c, "send", gnutls_strerror((int)n));
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
        return n;
    }
    ssize_t n;
    do
        n = send(c->fd, data, len, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        set_io_error(c, "send", strerror(errno));
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    return n;
}

static int on_header(nghttp2_session *h2, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user)
{
    (void)h2;
    (void)flags;
    sk_etcd_client *c = user;
    if (frame->hd.stream_id != c->stream)
        return 0;
    if (namelen == 11 && memcmp(name, "grpc-status", 11) == 0) {
        char num[16] = "";
        memcpy(num, value, valuelen < sizeof num - 1 ? valuelen : sizeof num - 1);
        c->status = atoi(num);
    } else if (namelen == 12 && memcmp(name, "grpc-message", 12) == 0) {
        free(c->message);
        c->message = strndup((const char *)value, valuelen);
        SK_CHECK_ALLOC(c->message);
    }
    return 0;
}

static void deliver_one(void *arg, const uint8_t *msg, size_t len)
{
    sk_etcd_client *c = arg;
    if (!c->stopped && c->on_message(c->arg, msg, len) != 0)
        c->stopped = 1;
}

static int on_data(nghttp2_session *h2, uint8_t flags, int32_t stream, const uint8_t *data,
                   size_t len, void *user)
{
    (void)h2;
    (void)flags;
    sk_etcd_client *c = user;
    if (stream != c->stream || c->stopped)
        return 0;
    sk_buf_append(&c->in, data, len);
    size_t too_large = 0;
    sk_grpc_frame f = sk_grpc_take(&c->in, MAX_MESSAGE, deliver_one, c, &too_large);
    if (f == SK_GRPC_FRAME_TOO_LARGE || f == SK_GRPC_FRAME_COMPRESSED) {
        set_io_error(c, "answer",
                     f == SK_GRPC_FRAME_COMPRESSED ? "a compressed message (none was offered)"
                                                   : "a message beyond 512 MiB");
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

static int on_stream_close(nghttp2_session *h2, int32_t stream, uint32_t error, void *user)
{
    (void)h2;
    sk_etcd_client *c = user;
    if (stream == c->stream) {
        c->closed = 1;
        c->h2_error = error;
    }
    return 0;
}

static ssize_t read_request(nghttp2_session *h2, int32_t stream, uint8_t *buf, size_t len,
                            uint32_t *flags, nghttp2_data_source *src, void *user)
{
    (void)h2;
    (void)stream;
    (void)src;
    sk_etcd_client *c = user;
    size_t n = c->req.len - c->req_off;
    if (n > len)
        n = len;
    memcpy(buf, c->req.data + c->req_off, n);
    c->req_off += n;
    if (c->req_off == c->req.len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* Sends what nghttp2 holds, then waits up to timeout_ms for bytes and feeds
 * them in. 0: progress or a quiet timeout; -1: the connection failed. */
static int pump(sk_etcd_client *c, int timeout_ms)
{
    if (nghttp2_session_send(c->h2) != 0) {
        set_io_error(c, "send", "HTTP/2 session failed");
        return -1;
    }
    if (!(c->tls && gnutls_record_check_pending(c->tls) > 0)) {
        struct pollfd p = {c->fd, POLLIN, 0};
        int r = poll(&p, 1, timeout_ms);
        if (r < 0 && errno != EINTR) {
            set_io_error(c, "poll", strerror(errno));
            return -1;
        }
        if (r <= 0)
            return 0;
    }
    uint8_t buf[IO_CHUNK];
    ssize_t n;
    if (c->tls) {
        do
            n = gnutls_record_recv(c->tls, buf, sizeof buf);
        while (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED);
        if (n < 0) {
            set_io_error(c, "receive", gnutls_strerror((int)n));
            return -1;
        }
    } else {
        do
            n = recv(c->fd, buf, sizeof buf, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
            set_io_error(c, "receive", strerror(errno));
            return -1;
        }
    }
    if (n == 0) {
        set_io_error(c, "receive", "the server closed the connection");
        return -1;
    }
    if (nghttp2_session_mem_recv(c->h2, buf, (size_t)n) < 0) {
        set_io_error(c, "receive", "not an HTTP/2 answer");
        return -1;
    }
    return c->broken ? -1 : 0;
}

/* Splits one endpoint into host and port; sets *https from its scheme. */
static int parse_endpoint(const char *ep, int tls_flags, char **host, char **port, int *https)
{
    *https = tls_flags;
    if (strncmp(ep, "http://", 7) == 0) {
        ep += 7;
        *https = 0;
    } else if (strncmp(ep, "https://", 8) == 0) {
        ep += 8;
        *https = 1;
    }
    const char *end = ep + strcspn(ep, "/");
    const char *colon = NULL;
    if (*ep == '[') { /* [v6]:port */
        const char *rb = memchr(ep, ']', (size_t)(end - ep));
        if (!rb || rb + 1 >= end || rb[1] != ':')
            return -1;
        *host = strndup(ep + 1, (size_t)(rb - ep - 1));
        colon = rb + 1;
    } else {
        for (const char *p = ep; p < end; p++)
            if (*p == ':')
                colon = p;
        if (!colon)
            return -1;
        *host = strndup(ep, (size_t)(colon - ep));
    }
    *port = strndup(colon + 1, (size_t)(end - colon - 1));
    SK_CHECK_ALLOC(*host);
    SK_CHECK_ALLOC(*port);
    return **host && **port ? 0 : -1;
}

static int tcp_connect(const char *host, const char *port, char **why)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    int fd = -1, rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        *why = strdup(gai_strerror(rc));
        return -1;
    }
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        struct timeval tv = {CONNECT_TIMEOUT_MS / 1000, 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            free(*why);
            *why = strdup(strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

static int tls_start(sk_etcd_client *c, const char *host, const sk_etcd_client_tls *tls, char **why)
{
    int rc;
    SK_CHECK(gnutls_certificate_allocate_credentials(&c->cred) == GNUTLS_E_SUCCESS);
    rc = tls->cacert
             ? gnutls_certificate_set_x509_trust_file(c->cred, tls->cacert, GNUTLS_X509_FMT_PEM)
             : gnutls_certificate_set_x509_system_trust(c->cred);
    if (rc < 0 || (tls->cacert && rc == 0)) {
        SK_CHECK(asprintf(why, "%s: no CA certificate loaded (%s)",
                          tls->cacert ? tls->cacert : "the system's roots",
                          rc < 0 ? gnutls_strerror(rc) : "no certificate in the file") >= 0);
        return -1;
    }
    if (tls->cert && (rc = gnutls_certificate_set_x509_key_file(c->cred, tls->cert, tls->key,
                                                                GNUTLS_X509_FMT_PEM)) < 0) {
        SK_CHECK(asprintf(why, "%s, %s: %s", tls->cert, tls->key, gnutls_strerror(rc)) >= 0);
        return -1;
    }
    SK_CHECK(gnutls_init(&c->tls, GNUTLS_CLIENT | GNUTLS_NO_SIGNAL) == GNUTLS_E_SUCCESS);
    SK_CHECK(gnutls_set_default_priority(c->tls) == GNUTLS_E_SUCCESS);
    SK_CHECK(gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, c->cred) == GNUTLS_E_SUCCESS);
    struct in6_addr a6;
    struct in_addr a4;
    int literal = inet_pton(AF_INET, host, &a4) == 1 || inet_pton(AF_INET6, host, &a6) == 1;
    if (!literal) /* SNI names hosts, never addresses (RFC 6066) */
        gnutls_server_name_set(c->tls, GNUTLS_NAME_DNS, host, strlen(host));
    gnutls_session_set_verify_cert(c->tls, host, 0);
    gnutls_datum_t h2 = {(unsigned char *)"h2", 2};
    gnutls_alpn_set_protocols(c->tls, &h2, 1, 0);
    gnutls_transport_set_int(c->tls, c->fd);
    gnutls_handshake_set_timeout(c->tls, CONNECT_TIMEOUT_MS);
    do
        rc = gnutls_handshake(c->tls);
    while (rc < 0 && !gnutls_error_is_fatal(rc));
    if (rc < 0) {
        if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
            gnutls_datum_t out = {NULL, 0};
            unsigned status = gnutls_session_get_verify_cert_status(c->tls);
            gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out, 0);
            SK_CHECK(asprintf(why, "TLS: %s", out.data ? (char *)out.data : "not verified") >= 0);
            gnutls_free(out.data);
        } else {
            SK_CHECK(asprintf(why, "TLS: %s", gnutls_strerror(rc)) >= 0);
        }
        return -1;
    }
    return 0;
}

static void disconnect(sk_etcd_client *c)
{
    if (c->h2)
        nghttp2_session_del(c->h2);
    if (c->tls)
        gnutls_deinit(c->tls);
    if (c->cred)
        gnutls_certificate_free_credentials(c->cred);
    if (c->fd >= 0)
        close(c->fd);
    free(c->endpoint);
    free(c->authority);
    free(c->io_error);
    sk_buf_free(&c->in);
    sk_buf_free(&c->req);
    free(c->message);
    free(c);
}

/* One endpoint: a connected client, or NULL and *why new. */
static sk_etcd_client *connect_one(const char *ep, const sk_etcd_client_tls *tls, char **why)
{
    int tls_flags = tls && (tls->cacert || tls->cert);
    char *host = NULL, *port = NULL;
    sk_etcd_client *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->fd = -1;
    c->endpoint = strdup(ep);
    SK_CHECK_ALLOC(c->endpoint);
    if (parse_endpoint(ep, tls_flags, &host, &port, &c->https) != 0) {
        *why = strdup("not an endpoint (want [http[s]://]HOST:PORT)");
        goto fail;
    }
    SK_CHECK(asprintf(&c->authority, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port) >= 0);
    if ((c->fd = tcp_connect(host, port, why)) < 0)
        goto fail;
    if (c->https && tls_start(c, host, tls ? tls : &(sk_etcd_client_tls){0}, why) != 0)
        goto fail;
    nghttp2_session_callbacks *cb;
    SK_CHECK(nghttp2_session_callbacks_new(&cb) == 0);
    nghttp2_session_callbacks_set_send_callback(cb, on_send);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    SK_CHECK(nghttp2_session_client_new(&c->h2, cb, c) == 0);
    nghttp2_session_callbacks_del(cb);
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, WINDOW},
                                   {NGHTTP2_SETTINGS_ENABLE_PUSH, 0}};
    SK_CHECK(nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, iv, 2) == 0);
    SK_CHECK(nghttp2_session_set_local_window_size(c->h2, NGHTTP2_FLAG_NONE, 0, WINDOW) == 0);
    if (nghttp2_session_send(c->h2) != 0 || c->broken) {
        *why = strdup(c->io_error ? c->io_error : "HTTP/2 preface not sent");
        goto fail;
    }
    free(host);
    free(port);
    return c;
fail:
    free(host);
    free(port);
    disconnect(c);
    return NULL;
}

sk_err sk_etcd_client_connect(const char *endpoints, const sk_etcd_client_tls *tls,
                              sk_etcd_client **out, char **errmsg)
{
    sk_buf whys = SK_BUF_INIT;
    char *list = strdup(endpoints), *save = NULL;
    SK_CHECK_ALLOC(list);
    sk_etcd_client *c = NULL;
    for (char *ep = strtok_r(list, ",", &save); ep && !c; ep = strtok_r(NULL, ",", &save)) {
        char *why = NULL;
        if (!(c = connect_one(ep, tls, &why)))
            sk_buf_printf(&whys, "%s%s: %s", whys.len ? "; " : "", ep, why ? why : "failed");
        free(why);
    }
    free(list);
    if (!c) {
        if (!whys.len)
            sk_buf_puts(&whys, "no endpoint given");
        *errmsg = sk_buf_steal(&whys, NULL);
        return SK_ERR_UNAVAILABLE;
    }
    sk_buf_free(&whys);
    *out = c;
    return SK_OK;
}

void sk_etcd_client_free(sk_etcd_client *c)
{
    if (c)
        disconnect(c);
}

const char *sk_etcd_client_endpoint(const sk_etcd_client *c)
{
    return c->endpoint;
}

sk_err sk_etcd_client_call(sk_etcd_client *c, const char *path, const ProtobufCMessage *req,
                           sk_etcd_client_msg_fn on_message, sk_etcd_client_idle_fn on_idle,
                           int idle_ms, void *arg, char **errmsg)
{
    sk_err err = SK_OK;
    char *why = NULL;
    if (c->broken) {
        err = SK_ERR_UNAVAILABLE;
        goto out;
    }
    size_t len = protobuf_c_message_get_packed_size(req);
    sk_buf_reset(&c->req);
    sk_buf_reset(&c->in);
    sk_buf_reserve(&c->req, SK_GRPC_PREFIX + len);
    sk_grpc_frame_prefix((uint8_t *)c->req.data, (uint32_t)len);
    protobuf_c_message_pack(req, (uint8_t *)c->req.data + SK_GRPC_PREFIX);
    c->req.len = SK_GRPC_PREFIX + len;
    c->req_off = 0;
    c->closed = c->stopped = 0;
    c->status = -1;
    c->h2_error = 0;
    free(c->message);
    c->message = NULL;
    c->on_message = on_message;
    c->arg = arg;
    const char *scheme = c->https ? "https" : "http";
#define HDR(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE}
    nghttp2_nv hdrs[] = {HDR(":method", "POST"),
                         HDR(":scheme", scheme),
                         HDR(":path", path),
                         HDR(":authority", c->authority),
                         HDR("content-type", "application/grpc"),
                         HDR("te", "trailers")};
#undef HDR
    nghttp2_data_provider body = {.read_callback = read_request};
    c->stream =
        nghttp2_submit_request(c->h2, NULL, hdrs, sizeof hdrs / sizeof hdrs[0], &body, NULL);
    SK_CHECK(c->stream > 0);
    while (!c->closed && !c->stopped && !c->broken) {
        int quiet = !nghttp2_session_want_write(c->h2);
        if (pump(c, idle_ms) != 0)
            break;
        if (quiet && !c->closed && !c->stopped && on_idle && on_idle(arg) != 0)
            c->stopped = 1;
    }
    if (c->broken) {
        err = SK_ERR_UNAVAILABLE;
    } else if (c->stopped) {
        if (!c->closed) { /* the answer we no longer want: reset it, keep the connection */
            nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, c->stream, NGHTTP2_CANCEL);
            if (nghttp2_session_send(c->h2) != 0)
                c->broken = 1;
        }
    } else if (c->status != SK_GRPC_OK) {
        err = c->status == SK_GRPC_UNAVAILABLE ? SK_ERR_UNAVAILABLE : SK_ERR_INTERNAL;
        if (c->status < 0)
            SK_CHECK(asprintf(&why, "%s: the call ended without a gRPC status (HTTP/2 error %u)",
                              c->endpoint, c->h2_error) >= 0);
        else
            SK_CHECK(asprintf(&why, "etcd answered %d: %s", c->status,
                              c->message ? c->message : "") >= 0);
    }
out:
    c->stream = 0;
    if (err != SK_OK)
        *errmsg = why ? why : strdup(c->io_error ? c->io_error : "the connection failed earlier");
    return err;
}

typedef struct unary {
    const ProtobufCMessageDescriptor *desc;
    ProtobufCMessage *resp;
    int bad;
} unary;

static int take_answer(void *arg, const uint8_t *msg, size_t len)
{
    unary *u = arg;
    if (u->resp) {
        protobuf_c_message_free_unpacked(u->resp, NULL);
        u->resp = NULL;
        u->bad = 1;
        return 1;
    }
    u->resp = protobuf_c_message_unpack(u->desc, NULL, len, msg);
    u->bad = !u->resp;
    return u->bad;
}

sk_err sk_etcd_client_unary(sk_etcd_client *c, const char *path, const ProtobufCMessage *req,
                            const ProtobufCMessageDescriptor *desc, ProtobufCMessage **resp,
                            char **errmsg)
{
    unary u = {desc, NULL, 0};
    sk_err err = sk_etcd_client_call(c, path, req, take_answer, NULL, 1000, &u, errmsg);
    if (err == SK_OK && (u.bad || !u.resp)) {
        SK_CHECK(asprintf(errmsg, "%s: %s answered %s", c->endpoint, path,
                          u.bad ? "something that is not its message" : "nothing") >= 0);
        err = SK_ERR_INTERNAL;
    }
    if (err == SK_OK)
        *resp = u.resp;
    else if (u.resp)
        protobuf_c_message_free_unpacked(u.resp, NULL);
    return err;
}
